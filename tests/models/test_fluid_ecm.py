"""ECM/BCN fluid model: fixed point, symbolic loop vs closed form, margins, nonlinear checks.

Default parameters: seed 004's ECM set (W 2, Qeq 37.5 kB, Psample 2 %, raw-Fb gains), 10 flows
at 10 Gb/s. Tolerances are commented where used.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from qcnmodel.models.ecm import ECMFluidModel
from qcnmodel.params.protocols import ECMParams

C_PKT = 10e9 / 12000.0  # packets/s of 1500 B


def test_fixed_point_is_exact():
    fp = ECMFluidModel(n_flows=10).fixed_point()
    assert fp["q"] == 37500.0 and fp["fb"] == 0.0
    assert fp["rate"] == pytest.approx(1e9, rel=1e-15)  # C/N through packet units
    assert fp["residual"] < 1e-12


@pytest.mark.parametrize("branch", ["increase", "mean", "decrease"])
@pytest.mark.parametrize("preset", ["seed004", "seed000"])
def test_symbolic_loop_matches_closed_form(branch, preset):
    """L(s) = K (1 + s w/(pC)) / s^2 e^{-s tau}, K = p C sigma (a+ Gi Ru + a- Gd C/N)."""
    p = ECMParams.preset(preset)
    m = ECMFluidModel(params=p, n_flows=4, branch=branch)
    k, t_lead = m.loop_gain()
    sigma = p.fb_full / p.fb_max * 1500.0
    a_pos, a_neg = {"increase": (1, 0), "mean": (0.5, 0.5), "decrease": (0, 1)}[branch]
    k_hand = (
        p.psample
        * C_PKT
        * sigma
        * (a_pos * p.gi_eff * p.r_unit / 12000.0 + a_neg * p.gd_eff * C_PKT / 4)
    )
    assert k == pytest.approx(k_hand, rel=1e-12)
    assert t_lead == pytest.approx(p.w / (p.psample * C_PKT), rel=1e-15)
    loop = m.loop()
    num = np.trim_zeros(np.asarray(loop.num, dtype=float), "f")
    den = np.asarray(loop.den, dtype=float)
    # round-off of the Faddeev-LeVerrier coefficients: relative 1e-9
    np.testing.assert_allclose(num / den[0], [k * t_lead, k], rtol=1e-9)
    np.testing.assert_allclose(den / den[0], [1.0, 0.0, 0.0], atol=1e-9 * abs(k))
    assert m.linearise().rank_a1() == 1  # the loop is exact


def test_seed004_branch_ratio_is_n_over_5():
    """Increase slope 0.1 C / Fbmax vs decrease 0.5 R* / Fbmax: ratio N/5 (docstring)."""
    for n in (2, 5, 20):
        k_inc = ECMFluidModel(n_flows=n, branch="increase").loop_gain()[0]
        k_dec = ECMFluidModel(n_flows=n, branch="decrease").loop_gain()[0]
        assert k_inc / k_dec == pytest.approx(n / 5, rel=1e-12)


@pytest.mark.parametrize("rtt", [20e-6, 100e-6, 300e-6])
def test_margins_match_the_closed_form(rtt):
    """|L(jw)| = 1 at w^2 = (K^2 T^2 + sqrt(K^4 T^4 + 4 K^2)) / 2; PM = atan(w T) - w tau."""
    m = ECMFluidModel(rtt=rtt)
    k, t = m.loop_gain()
    wc = math.sqrt((k**2 * t**2 + math.sqrt(k**4 * t**4 + 4 * k**2)) / 2)
    pm = math.degrees(math.atan(wc * t) - wc * rtt)
    mg = m.loop().margins()
    assert mg.crossover_rad_s == pytest.approx(wc, rel=1e-6)  # root-finding tolerance
    assert mg.phase_margin_deg == pytest.approx(pm, abs=1e-4)
    assert mg.stable == (pm > 0)
    assert mg.critical_delay_s == pytest.approx(math.atan(wc * t) / wc, rel=1e-6)


@pytest.mark.parametrize("capacity", [1e9, 10e9])
@pytest.mark.parametrize("n_flows", [2, 10, 50])
@pytest.mark.parametrize("rtt", [10e-6, 50e-6, 90e-6])
def test_gain_margin_matches_the_closed_form(capacity, n_flows, rtt):
    """The loop is a double integrator with a lead, exactly: den = s^2 (Fb* = 0 at the
    equilibrium). Its phase -pi + atan(w T) - w tau crosses -pi where atan(w T) = w tau (T
    > tau: once, from above); GM = 1/|L| there = w^2 / (K sqrt(1 + w^2 T^2)). A rounding
    residue of Fb* made the double integrator a pole pair at 0 and +1e-13 rad/s, whose phase
    crossed -pi near 1e-5 rad/s: gain margins of 1e-16 at 1 Gb/s."""
    m = ECMFluidModel(rtt=rtt, n_flows=n_flows, capacity=capacity)
    k, t = m.loop_gain()
    loop = m.loop()
    assert list(np.asarray(loop.den, float)[1:]) == [0.0, 0.0]
    if t <= rtt:  # no crossing from above; the closed form below needs T > tau
        pytest.skip("lead time below the delay")
    # atan(w T) - w tau is positive just above 0 and falls below 0 before pi / (2 tau)
    w = brentq(lambda x: math.atan(x * t) - x * rtt, 1e-9 / t, math.pi / (2 * rtt))
    gm = w**2 / (k * math.sqrt(1 + (w * t) ** 2))
    mg = loop.margins()
    assert mg.phase_crossover_rad_s == pytest.approx(w, rel=1e-6)  # root-finding tolerance
    assert mg.gain_margin == pytest.approx(gm, rel=1e-6)


def test_small_perturbation_decays_at_the_describing_function_rate():
    """rtt 60 us (stable): the decay rate of a 5 kB queue step matches the 'mean' branch root.

    The kink makes the small-signal dynamics a mixture of both slopes; the measured rate must
    be within 15 % of the mean-branch root and closer to it than to either pure branch
    (roots: increase ~342/s, mean ~255/s, decrease ~169/s).
    """
    roots = {
        b: ECMFluidModel(rtt=60e-6, branch=b).linearise().root_near(2900j).real
        for b in ("increase", "mean", "decrease")
    }
    m = ECMFluidModel(rtt=60e-6)
    q0 = m.fixed_point()["q"]
    ds = m.simulate(0.05, x0={"q": q0 + 5000.0}, record_dt=1e-5)
    t, dq = ds.time.values, np.abs(ds.q.values - q0)
    a1 = dq[(t > 0.02) & (t < 0.03)].max()
    a2 = dq[(t > 0.04) & (t < 0.05)].max()
    rate = math.log(a1 / a2) / 0.02
    assert rate == pytest.approx(-roots["mean"], rel=0.15)
    assert abs(rate + roots["mean"]) < min(abs(rate + roots[b]) for b in ("increase", "decrease"))


def test_beyond_the_critical_delay_the_queue_oscillates():
    """rtt 250 us > critical (~115 us): a limit cycle near the unstable root's frequency."""
    m = ECMFluidModel(rtt=250e-6)
    assert not m.loop().margins().stable
    root = m.linearise().root_near(2900j)
    assert root.real > 0
    q0 = m.fixed_point()["q"]
    ds = m.simulate(0.1, x0={"q": q0 + 5000.0}, record_dt=1e-5)
    t, dq = ds.time.values, ds.q.values - q0
    late = dq[t > 0.05]
    assert np.abs(late).max() > 20000.0  # grew from 5 kB and did not decay
    crossings = np.count_nonzero(np.diff(np.sign(late)) != 0)
    omega = math.pi * crossings / 0.05
    assert omega == pytest.approx(root.imag, rel=0.2)  # clipping shifts the limit cycle


def test_compiled_and_reference_integrators_agree():
    m = ECMFluidModel(rtt=100e-6)
    q0 = m.fixed_point()["q"]
    kw = dict(x0={"q": q0 + 5000.0}, record_dt=1e-4)
    a = m.simulate(0.01, dt=1e-6, **kw)
    b = m.simulate(0.01, method="reference", **kw)
    # RK4 with Hermite history vs DOP853 (rtol 1e-8); first order near the kink at Fb = 0
    assert np.abs(a.q.values - b.q.values).max() < 1.0  # bytes, of a 5000 B excursion
    assert np.abs(a.rate.values - b.rate.values).max() < 1e3  # bit/s, of 1 Gb/s


def test_ecm_max_forces_maximal_negative_feedback():
    """q >= Qmax while draining fast (Fb > 0): ECM_MAX cuts at the full-scale rate instead."""
    from qcnmodel.models import _ecm_eqs as eq

    out = np.empty(2)
    rates = {}
    for flag in (True, False):
        m = ECMFluidModel(params=ECMParams(ecm_max=flag))
        p = m.param_vector()
        q = p[eq.P_QMAX] + 1.0
        r = 0.2 * p[eq.P_C] / p[eq.P_N]  # N R << C: w-term makes Fb > 0
        eq.ecm_derivatives(0.0, q, r, q, r, p, out)
        rates[flag] = out[1]
        full = -p[eq.P_PS] * r * p[eq.P_GD] * p[eq.P_FBMAX] * p[eq.P_SCALE] * r
    assert rates[False] > 0.0
    assert rates[True] == pytest.approx(full, rel=1e-12)  # Gd sigma Fbmax = 0.5: max cut rate


def test_hotspot_respects_the_rate_floor():
    ds = ECMFluidModel(n_flows=10).simulate(0.05, hotspot=(0.01, 0.03, 5e9))
    assert float(ds.rate.min()) >= 1e6 and float(ds.q.max()) > 150000.0


def test_replace_and_validation():
    m = ECMFluidModel().replace(w=8.0, rtt="200us", n_flows=3)
    assert (m.params.w, m.rtt, m.n_flows) == (8.0, 200e-6, 3)
    for kw, field in [
        (dict(rtt=0.0), "rtt"),
        (dict(n_flows=0), "n_flows"),
        (dict(branch="both"), "branch"),
        (dict(ps=0.0), "ps"),
        (dict(params=object()), "params"),
    ]:
        with pytest.raises(ValueError, match=field):
            ECMFluidModel(**kw)
    with pytest.raises(ValueError, match="equilibrium"):
        ECMFluidModel(n_flows=1, capacity=20e9).fixed_point()


@pytest.mark.parametrize("preset", ["seed004", "seed000"])
@pytest.mark.parametrize("fb_bytes", [-60000.0, 45000.0])
def test_fluid_drift_equals_event_rate_times_rule_step(preset, fb_bytes):
    """Units cross-check with the packet-level rule (rules_ecm_ref): dR/dt = p R_tau x step.

    The rule's step for feedback Fb (bytes) on the gain scale sigma: r += Gi Ru sigma Fb or
    r *= 1 - Gd sigma |Fb|; sampled frames of the flow arrive at p R_tau per second.
    Quantisation is not modelled (the fluid uses the continuous scale): the rule is fed the
    unquantised value. Relative 1e-12: the same products in another order.
    """
    from qcnmodel.models import _ecm_eqs as eq
    from qcnmodel.sim.protocols.ecm_ref import ECMReactionPoint

    prm = ECMParams.preset(preset, ecm_max=False)  # q may exceed seed 004's Qmax here
    m = ECMFluidModel(params=prm, n_flows=10, min_rate=False)
    p = m.param_vector()
    r_pkt = 0.5 * p[eq.P_C] / p[eq.P_N]  # N R = C/2: the w-term is -w/(pC) C/2
    q_pkt = p[eq.P_QEQ] - fb_bytes / 1500.0 - p[eq.P_W] / p[eq.P_PS] * (-0.5)
    out = np.empty(2)
    eq.ecm_derivatives(0.0, q_pkt, r_pkt, q_pkt, r_pkt, p, out)
    rp = ECMReactionPoint(prm)
    rp.active, rp.cpid, rp.cr = True, 1, r_pkt * 12000.0  # an RL tagged by CP 1 at R
    before = rp.cr
    rp.on_fb(fb_bytes * prm.fb_full / prm.fb_max, 1)
    step = rp.cr - before  # bit/s
    assert out[1] * 12000.0 == pytest.approx(m.p_sample * r_pkt * step, rel=1e-12)
