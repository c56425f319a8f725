"""Margins of delayed loops against closed-form answers and python-control."""

from __future__ import annotations

import control
import numpy as np
import pytest
from scipy.optimize import brentq

from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.analysis.margins import Margins, critical_rtt, margins_over_delay, nyquist_count

# Crossovers are roots found by brentq with xtol 1e-14*w and Newton to machine
# precision on exact expressions, so results agree with closed forms to ~1e-12
# relative; RTOL leaves two orders of magnitude for the arctan/log evaluations.
RTOL = 1e-10


def lag_loop(k, t, tau):
    """K exp(-s tau)/(1 + s T)."""
    return DelayedLoop([k], [t, 1.0], tau)


def integrator_loop(k, tau):
    """K exp(-s tau)/s."""
    return DelayedLoop([k], [1.0, 0.0], tau)


@pytest.mark.parametrize(("k", "t", "tau"), [(3.0, 1.0, 0.2), (10.0, 0.5, 0.01), (1.5, 2.0, 1.0)])
def test_first_order_lag_plus_delay(k, t, tau):
    m = lag_loop(k, t, tau).margins()
    wc = np.sqrt(k**2 - 1) / t
    pm = 180 - np.degrees(np.arctan(wc * t)) - np.degrees(wc * tau)
    wpc = brentq(lambda w: np.arctan(w * t) + w * tau - np.pi, 1e-9, np.pi / tau, xtol=1e-15)
    gm = np.sqrt(1 + (wpc * t) ** 2) / k
    assert m.crossover_rad_s == pytest.approx(wc, rel=RTOL)
    assert m.phase_margin_deg == pytest.approx(pm, rel=RTOL)
    assert m.phase_crossover_rad_s == pytest.approx(wpc, rel=RTOL)
    assert m.gain_margin == pytest.approx(gm, rel=RTOL)
    assert m.gain_margin_db == pytest.approx(20 * np.log10(gm), rel=RTOL)
    dm = np.radians(pm) / wc
    assert m.delay_margin_s == pytest.approx(dm, rel=RTOL)
    assert m.critical_delay_s == pytest.approx(tau + dm, rel=RTOL)
    assert m.stable == (pm > 0)


@pytest.mark.parametrize(("k", "tau"), [(2.0, 0.3), (2.0, 0.7), (2.0, 0.9), (50.0, 0.02)])
def test_integrator_plus_delay(k, tau):
    m = integrator_loop(k, tau).margins()
    assert m.crossover_rad_s == pytest.approx(k, rel=RTOL)
    assert m.phase_margin_deg == pytest.approx(90 - np.degrees(k * tau), rel=RTOL)
    assert m.delay_margin_s == pytest.approx(np.pi / (2 * k) - tau, rel=RTOL)
    assert m.critical_delay_s == pytest.approx(np.pi / (2 * k), rel=RTOL)
    # phase crossover: w*tau = pi/2, |L| = k/w  ->  GM = pi/(2 k tau)
    assert m.phase_crossover_rad_s == pytest.approx(np.pi / (2 * tau), rel=RTOL)
    assert m.gain_margin == pytest.approx(np.pi / (2 * k * tau), rel=RTOL)
    assert m.stable == (k * tau < np.pi / 2)


def test_critical_rtt_of_loop_is_critical_delay():
    loop = integrator_loop(4.0, 0.1)
    assert critical_rtt(loop) == pytest.approx(np.pi / 8, rel=RTOL)
    # factory whose gain depends on the RTT: K(rtt) = 4 (1 + rtt); PM = 0 where
    # 4 (1 + rtt) rtt = pi/2, i.e. rtt = (-1 + sqrt(1 + pi/2))/2
    crit = critical_rtt(lambda r: integrator_loop(4.0 * (1 + r), r), rtt_min=1e-6, rtt_max=10)
    # brentq xtol 1e-12 s, rtol 1e-10
    assert crit == pytest.approx((-1 + np.sqrt(1 + np.pi / 2)) / 2, rel=1e-9)


DELAY_FREE = [
    DelayedLoop([4.0], [1.0, 3.0, 3.0, 1.0]),  # 4/(s+1)^3: GM 2, stable
    DelayedLoop([20.0], [1.0, 3.0, 3.0, 1.0]),  # 20/(s+1)^3: unstable
    DelayedLoop([2.0, 1.0], [1.0, 2.0, 0.5, 0.0]),  # lead with integrator
    DelayedLoop([1.0, 3.0], [1.0, 4.0, 8.0, 5.0, 0.0]),  # 3 poles + integrator
]


@pytest.mark.parametrize("loop", DELAY_FREE, ids=range(len(DELAY_FREE)))
def test_agrees_with_python_control(loop):
    gm, pm, _, wpc, wgc, _ = control.stability_margins(loop.rational())
    m = loop.margins()
    # python-control solves polynomial equations for rational systems (roots to
    # ~1e-10 relative for these low orders); ours root-finds on the exact values
    tol = 1e-8
    assert m.phase_margin_deg == pytest.approx(pm, rel=tol, abs=1e-9)
    assert m.crossover_rad_s == pytest.approx(wgc, rel=tol)
    if np.isfinite(gm):
        assert m.gain_margin == pytest.approx(gm, rel=tol)
        assert m.phase_crossover_rad_s == pytest.approx(wpc, rel=tol)
    else:
        assert np.isinf(m.gain_margin)
    closed_poles = control.feedback(loop.rational(), 1).poles()
    assert m.stable == bool(np.all(closed_poles.real < 0))


@pytest.mark.parametrize(
    "loop",
    [integrator_loop(2.0, tau) for tau in (0.1, 0.5, 0.77, 0.8, 2.0, 4.0, 5.0)]
    + [lag_loop(3.0, 1.0, tau) for tau in (0.05, 0.6, 0.7, 3.0)]
    + [DelayedLoop([2.0, 1.0], [1.0, 2.0, 0.5, 0.0], tau) for tau in (0.1, 0.3, 1.0)],
    ids=lambda lp: f"{lp.num.tolist()}/{lp.den.tolist()}@{lp.delay}",
)
def test_nyquist_count_matches_margins(loop):
    """Encirclement count vs margins and the delay-sweep root count."""
    c = nyquist_count(loop)
    m = loop.margins()
    sweep = margins_over_delay(loop, [loop.delay])
    # for these single-crossover, open-loop-stable loops: stable iff PM > 0
    assert c.stable == (m.phase_margin_deg > 0)
    assert bool(sweep.stable[0]) == c.stable
    assert c.open_loop_rhp_poles == 0
    # each 360 deg of phase lost at the crossover adds one pair of RHP roots
    pm = m.phase_margin_deg
    expected_z = 0 if pm > 0 else 2 * int(np.floor(-pm / 360) + 1)
    assert c.closed_loop_rhp_poles == expected_z


def test_nyquist_open_loop_unstable():
    """L = 2/(s - 1): one RHP open-loop pole, closed loop s + 1 stable (N = -1)."""
    c = nyquist_count(DelayedLoop([2.0], [1.0, -1.0]))
    assert (c.encirclements_cw, c.open_loop_rhp_poles, c.closed_loop_rhp_poles) == (-1, 1, 0)
    # classic result: 1 + 2 e^{-s tau}/(s - 1) is stable iff tau < atan(wc)/wc, wc = sqrt(3)
    # (|G(j wc)| = 1; arg G = atan(w) - pi, so the delay-free PM is atan(wc) = 60 deg)
    wc = np.sqrt(3.0)
    tau_c = np.arctan(wc) / wc
    for tau, stable in ((0.9 * tau_c, True), (1.1 * tau_c, False)):
        loop = DelayedLoop([2.0], [1.0, -1.0], tau)
        assert nyquist_count(loop).stable == stable
        assert bool(margins_over_delay(loop, [tau]).stable[0]) == stable
    assert DelayedLoop([2.0], [1.0, -1.0]).margins().critical_delay_s == pytest.approx(
        tau_c, rel=RTOL
    )


def test_margins_over_delay_equals_pointwise():
    loop = DelayedLoop([2.0, 1.0], [1.0, 2.0, 0.5, 0.0])
    taus = np.concatenate([[0.0], np.logspace(-3, 1, 40)])
    vec = margins_over_delay(loop, taus)
    for i, tau in enumerate(taus):
        m = loop.with_delay(tau).margins()
        for f in ("phase_margin_deg", "crossover_rad_s", "delay_margin_s", "critical_delay_s"):
            assert getattr(vec, f)[i] == pytest.approx(getattr(m, f), rel=1e-12)
        # phase crossovers: same Newton iteration, but the pointwise grid is
        # built for one tau (different brackets): agree to the root precision
        assert vec.gain_margin[i] == pytest.approx(m.gain_margin, rel=RTOL)
        assert vec.phase_crossover_rad_s[i] == pytest.approx(
            m.phase_crossover_rad_s, rel=RTOL, nan_ok=True
        )
        assert bool(vec.stable[i]) == m.stable  # sweep root count vs Nyquist count


def test_margins_scalar_access_and_validation():
    vec = margins_over_delay(integrator_loop(1.0, 0.0), [0.1, 0.2])
    assert isinstance(vec.at(1), Margins)
    assert vec.at(1).phase_margin_deg == pytest.approx(90 - np.degrees(0.2), rel=RTOL)
    with pytest.raises(ValueError, match="taus"):
        margins_over_delay(integrator_loop(1.0, 0.0), [-1.0])
    with pytest.raises(ValueError, match="delay"):
        DelayedLoop([1.0], [1.0, 1.0], -0.1)
    with pytest.raises(ValueError, match="proper"):
        DelayedLoop([1.0, 0.0, 0.0], [1.0, 1.0])


def test_no_crossover():
    m = DelayedLoop([0.5], [1.0, 1.0], 0.3).margins()  # |L| < 1 everywhere
    assert np.isnan(m.crossover_rad_s)
    assert np.isinf(m.phase_margin_deg) and np.isinf(m.delay_margin_s)
    assert m.stable


@pytest.mark.parametrize(
    ("num", "den"),
    [
        ([100.0], [1.0, 0.2, 100.0, 0.0]),  # integrator + resonance: 3 crossovers
        ([100.0, 0.0, 400.0], [1.0, 0.1, 100.0, 0.0]),  # |G| -> 100 at high w: long spiral
        ([2.0, 1.0], [1.0, -0.5, 2.0, 0.0]),  # two open-loop RHP poles
    ],
)
def test_delay_sweep_root_count_equals_nyquist(num, den):
    """The vectorised stability (delay-sweep count) against the Nyquist count on
    loops with several crossovers, stability windows and unstable open loops."""
    loop = DelayedLoop(num, den)
    taus = np.linspace(0.0, 3.0, 61)
    sweep = margins_over_delay(loop, taus).stable
    count = np.array([nyquist_count(loop.with_delay(t)).stable for t in taus])
    np.testing.assert_array_equal(sweep, count)


def test_critical_delay_uses_destabilising_crossover():
    """100(s^2 + 4)/(s(s^2 + 0.1 s + 100)): |G| crosses 1 three times; the one at
    w = 2.5 rises through 1 (extra delay moves roots *out* of the RHP there), so
    the delay margin comes from the high-frequency crossover near 101 rad/s."""
    loop = DelayedLoop([100.0, 0.0, 400.0], [1.0, 0.1, 100.0, 0.0])
    m = loop.margins()
    assert m.stable and m.phase_margin_deg > 0
    assert m.crossover_rad_s > 100
    # the Nyquist count flips right at the critical delay (1 % either side)
    assert nyquist_count(loop.with_delay(0.99 * m.critical_delay_s)).stable
    assert not nyquist_count(loop.with_delay(1.01 * m.critical_delay_s)).stable


@pytest.mark.parametrize("tau", [0.0, 0.05, 2.0])
def test_frequency_response_is_exact_and_dense(tau):
    loop = DelayedLoop([2.0, 1.0], [1.0, 2.0, 0.5, 0.0], tau)
    frd = loop.frequency_response()
    w = np.asarray(frd.omega)
    vals = np.asarray(frd.frdata).reshape(-1)
    np.testing.assert_array_equal(vals, loop(1j * w))  # exact values, no interpolation
    m = loop.margins()
    assert w[0] < m.crossover_rad_s / 10 and w[-1] > m.crossover_rad_s * 10
    # dense enough that python-control's own phase unwrapping follows the delay:
    # consecutive points turn by less than pi/4
    assert np.max(np.abs(np.angle(vals[1:] / vals[:-1]))) < np.pi / 4
    gm, pm, _, _, wgc, _ = control.stability_margins(frd)
    # python-control on our FRD: crossover by brentq on interpolated data
    assert wgc == pytest.approx(m.crossover_rad_s, rel=1e-4)
    assert ((pm - m.phase_margin_deg + 180) % 360 - 180) == pytest.approx(0.0, abs=0.05)


def test_lazy_top_level_exports():
    import qcnmodel

    assert qcnmodel.DelayedLoop is DelayedLoop
    assert qcnmodel.margins_over_delay is margins_over_delay
    from qcnmodel.models.fopdt import FOPDTModel

    assert qcnmodel.FOPDTModel is FOPDTModel


def test_random_loops_sweep_vs_nyquist():
    """Seeded random strictly proper loops (some open-loop unstable, some with an
    integrator): the two exact stability tests must agree at every delay."""
    rng = np.random.default_rng(1)
    for _ in range(15):
        nd = rng.integers(1, 5)
        nn = rng.integers(0, nd)
        poles = -np.abs(rng.lognormal(0, 1.5, nd)) * rng.choice([1, 1, 1, -1], nd)
        den = np.real(np.poly(poles))
        if rng.random() < 0.4:
            den = np.append(den, 0.0)
        num = np.real(np.poly(-np.abs(rng.lognormal(0, 1.5, nn)))) * rng.lognormal(0, 2)
        loop = DelayedLoop(num, den)
        taus = np.linspace(0, 5 / np.abs(poles).max(), 10)
        sweep = margins_over_delay(loop, taus).stable
        count = np.array([nyquist_count(loop.with_delay(t)).stable for t in taus])
        np.testing.assert_array_equal(sweep, count, err_msg=f"{num} / {den}")
