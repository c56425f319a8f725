"""FOPDT model: symbolic vs numeric, closed forms, validation, step responses."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.models.fopdt import FOPDTModel, S
from qcnmodel.params import QCNParams

S_POINTS = [1j * 100.0, 1j * 2000.0, 500.0 + 3000.0j, 1j * 2.0e4, 50.0 - 800.0j]


def _port(n):
    """The model's arguments for N flows into a 10 Gb/s port: one flow at the 10 Gb/s line
    rate cannot congest it (an open loop), so N = 1 is a 40 Gb/s source into that port,
    whose loop is the same (the loop does not depend on the line rate, only on C and N)."""
    if n == 1:
        return {"params": QCNParams(line_rate=40e9), "capacity": 10e9}
    return {}


@pytest.mark.parametrize("lag", ["first-order", "zoh", "none"])
@pytest.mark.parametrize(("n", "rtt"), [(1, 1e-5), (10, 1e-4), (64, 5e-4)])
def test_symbolic_equals_numeric(lag, n, rtt):
    model = FOPDTModel(**{"params": QCNParams(), **_port(n)}, rtt=rtt, n_flows=n, lag=lag)
    expr = model.symbolic().subs(model.values())
    loop = model.loop()
    for s0 in S_POINTS:
        sym = complex(sp.N(expr.subs(S, s0), 30))
        # 30-digit SymPy evaluation vs float64 polyval of coefficients of size
        # up to ~1e10 at |s| <= 2e4: cancellation-free sums, error ~1e-15 per
        # operation times a few dozen operations; 1e-10 leaves ample margin
        assert loop(s0) == pytest.approx(sym, rel=1e-10)


@pytest.mark.parametrize("lag", ["none", "zoh"])
@pytest.mark.parametrize(("n", "rtt"), [(1, 2e-5), (10, 1e-4), (100, 3e-4)])
def test_closed_form_matches_numeric_margins(lag, n, rtt):
    model = FOPDTModel(rtt=rtt, n_flows=n, lag=lag, **_port(n))
    cf = model.closed_form_values()
    m = model.loop().margins()
    # both are exact (closed form vs brentq on |L| = 1 with xtol 1e-14 w)
    assert m.crossover_rad_s == pytest.approx(cf["crossover"], rel=1e-10)
    assert math.radians(m.phase_margin_deg) == pytest.approx(cf["phase_margin"], rel=1e-9)
    assert m.delay_margin_s == pytest.approx(cf["delay_margin"], rel=1e-9)
    assert m.critical_delay_s - model.loop().delay + rtt == pytest.approx(
        cf["critical_rtt"], rel=1e-9
    )


def test_cubic_crossover_equation_first_order_lag():
    model = FOPDTModel(rtt=1e-4, n_flows=10)
    eq, u = model.crossover_equation()
    poly = sp.Poly(eq.lhs.subs(model.reduced_values()), u)
    assert poly.degree() == 3  # the lag makes |L| = 1 a cubic in w^2
    roots = [complex(r) for r in poly.nroots()]
    positive = [r.real for r in roots if abs(r.imag) < 1e-9 * abs(r) and r.real > 0]
    assert len(positive) == 1
    wc = model.loop().margins().crossover_rad_s
    assert math.sqrt(positive[0]) == pytest.approx(wc, rel=1e-9)  # nroots: 15 digits


def test_gain_formula_and_fixed_point():
    p = QCNParams()
    model = FOPDTModel(p, rtt=1e-4, n_flows=10)
    g = model.gains()
    c_bytes = p.line_rate / 8
    ts = p.frame_size / (p.ps * c_bytes)
    k = p.ps * p.gd * c_bytes**2 * p.fb_full_scale / (10 * p.frame_size * p.fb_max)
    assert g["Ts"] == pytest.approx(ts, rel=1e-14)
    assert g["K"] == pytest.approx(k, rel=1e-12)  # module docstring's K
    # pole a = (p R*/L_f)/(2((1-p)^-B - 1)) with B = 100 frames
    a = (p.ps * c_bytes / 10 / p.frame_size) / (2 * ((1 - p.ps) ** -100 - 1))
    assert g["a"] == pytest.approx(a, rel=1e-12)
    fp = model.fixed_point()
    assert fp["q"] == p.qeq
    assert fp["rate"] == pytest.approx(p.line_rate / 10)
    assert fp["sampling_interval"] == pytest.approx(120e-6)  # qcn-algorithm.md 1.6


def test_zoh_vs_first_order_lag():
    """Both lags share K, a, T_d.  The first-order lag costs atan(w Ts) of phase and
    also lowers |L|; the ZOH costs w Ts/2 at unchanged gain.  At the QCN crossover
    (w Ts ~ 0.25) they differ by a few degrees."""
    fo = FOPDTModel(rtt=1e-4, n_flows=10, lag="first-order").loop().margins()
    zoh = FOPDTModel(rtt=1e-4, n_flows=10, lag="zoh").loop().margins()
    none = FOPDTModel(rtt=1e-4, n_flows=10, lag="none").loop().margins()
    assert none.phase_margin_deg > zoh.phase_margin_deg
    assert none.phase_margin_deg > fo.phase_margin_deg
    assert abs(fo.phase_margin_deg - zoh.phase_margin_deg) < 10.0
    # same crossover for zoh and none (|e^{-jwTs/2}| = 1)
    assert zoh.crossover_rad_s == pytest.approx(none.crossover_rad_s, rel=1e-12)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"rtt": -1e-6}, "rtt"),
        ({"ps": 0.0}, "ps"),
        ({"ps": 1.5}, "ps"),
        ({"n_flows": 0}, "n_flows"),
        ({"n_flows": 2.5}, "n_flows"),
        ({"capacity": -1.0}, "capacity"),
        ({"lag": "second-order"}, "lag"),
    ],
)
def test_bad_params_raise(kw, field):
    with pytest.raises(ValueError, match=field):
        FOPDTModel(**kw)


def test_unit_strings_and_replace():
    m = FOPDTModel(rtt="50us", capacity="1Gbps", n_flows=3)
    assert m.rtt == pytest.approx(50e-6)
    assert m.capacity == pytest.approx(1e9)
    m2 = m.replace(w=8.0, n_flows=np.int64(7))
    assert m2.params.w == 8.0 and m2.n_flows == 7 and isinstance(m2.n_flows, int)


def test_pade_order_does_not_matter():
    loop = FOPDTModel(rtt=1.5e-4, n_flows=10).loop()
    r6 = loop.step_response(pade_order=6)
    r10 = loop.step_response(pade_order=10)
    r20 = loop.step_response(pade_order=20)
    peak = np.max(np.abs(r10.output))
    assert 1.0 < peak < 3.0  # an underdamped, stable closed loop (PM ~ 1.4 deg)
    # measured: |r6 - r10| = 2.3e-4, |r20 - r10| = 6e-5 (Pade error near the
    # dead time decays with the order; the plant's relative degree 2 smooths it)
    assert np.max(np.abs(r6.output - r10.output)) < 1e-3 * peak
    assert np.max(np.abs(r20.output - r10.output)) < 2e-4 * peak


def test_step_response_against_exact_dde_solution():
    """K e^{-s tau}/s in unity feedback: y(t) = sum_k (-1)^(k+1) K^k (t-k tau)_+^k / k!."""
    k, tau = 2.0, 0.3
    t = np.linspace(0, 8, 2001)
    exact = sum(
        (-1) ** (j + 1) * k**j * np.clip(t - j * tau, 0, None) ** j / math.factorial(j)
        for j in range(1, 60)
    )
    r = DelayedLoop([k], [1.0, 0.0], tau).step_response(T=t, pade_order=16)
    # the exact response has a corner at t = tau that a rational approximant
    # smears; measured max error 6.2e-3 at order 16 (1.0e-2 at order 10)
    assert np.max(np.abs(r.output - exact)) < 1e-2
    # and a delay-free loop matches python-control to integration precision
    r0 = DelayedLoop([k], [1.0, 0.0]).step_response(T=t)
    assert np.max(np.abs(r0.output - (1 - np.exp(-k * t)))) < 1e-9


def test_simulate_dataset():
    model = FOPDTModel(rtt=2e-5, n_flows=10)  # PM 16.7 deg
    ds = model.simulate(duration="50ms")
    assert ds["y"].dims == ("time",)
    assert ds["time"].values[-1] == pytest.approx(50e-3)
    # with an integrator in the loop a stable closed loop settles at y = 1; the
    # oscillation at ~2 krad/s with PM 16.7 deg decays by ~1e-6 over 50 ms
    # (measured |y - 1| = 5e-7 over the last 5 ms), so 1e-4 is safe
    assert np.max(np.abs(ds["y"].values[-300:] - 1.0)) < 1e-4


@pytest.mark.parametrize(
    ("n", "lag", "wc", "pm", "crit_us"),
    [
        (1, "first-order", 7602, -7.1, 84),
        (1, "zoh", 9972, -10.5, 82),
        (10, "first-order", 2060, 7.3, 162),
        (10, "zoh", 2094, 14.0, 217),
        (10, "none", 2094, 21.2, 277),
        (100, "first-order", 630, 2.9, 179),
    ],
)
def test_docstring_table(n, lag, wc, pm, crit_us):
    """Pins the module docstring's table (rounded there to the digits shown)."""
    model = FOPDTModel(rtt=1e-4, n_flows=n, lag=lag, **_port(n))
    m = model.loop().margins()
    assert m.crossover_rad_s == pytest.approx(wc, abs=0.5)
    assert m.phase_margin_deg == pytest.approx(pm, abs=0.05)
    crit = m.critical_delay_s - (model.loop().delay - model.rtt)
    assert crit * 1e6 == pytest.approx(crit_us, abs=0.5)


@pytest.mark.parametrize("n", [1, 10, 100])
def test_no_lag_fopdt_close_to_fluid_linearisation(n):
    """The FOPDT derivation in the no-lag limit against the fluid model's symbolic
    linearisation (byte-counter increase only, fixed p: the same physics up to
    the fluid model's extra TR state).  Measured agreement of the critical
    delay: 2 % (N = 1), 2.5 % (N = 10), 0.7 % (N = 100); 5 % allowed."""
    fluid_qcn = pytest.importorskip("qcnmodel.models.qcn_averaged")
    fluid = fluid_qcn.QCNAveragedModel(n_flows=n, rtt=1e-4, **_port(n)).loop().margins()
    fopdt = FOPDTModel(n_flows=n, rtt=1e-4, lag="none", **_port(n)).loop().margins()
    assert fopdt.critical_delay_s == pytest.approx(fluid.critical_delay_s, rel=0.05)
    assert fopdt.crossover_rad_s == pytest.approx(fluid.crossover_rad_s, rel=0.1)
