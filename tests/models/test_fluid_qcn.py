"""QCN fluid model: fixed point, linearisation, integrators, linear vs nonlinear prediction."""

import math

import numpy as np
import pytest

from qcnmodel.analysis.linearize import finite_difference_jacobian
from qcnmodel.models import _qcn_eqs as eq
from qcnmodel.models.qcn_averaged import QCNAveragedModel
from qcnmodel.params import QCNParams

# A short byte counter (15 KB) puts the equilibrium well inside the congested region
# (u* ~ 17 on the 0..63 scale, |Fb*| ~ 36 KB), so small perturbations stay on one side of
# the Fb = 0 switching surface; at the 802.1Qau defaults |Fb*| is only ~1.4 B (see
# test_default_equilibrium_hugs_switching_surface).
SHORT_BC = QCNParams(bc_limit=15000)

VARIANTS = [
    {},
    {"quantise": "smooth"},
    {"sampling": "table"},
    {"timer": True, "hai": True, "halving": True},
    {"min_rate": True, "quantise": "floor"},
]


def _compiled_rhs(model):
    p = model.param_vector()
    if p[eq.P_QUANT] == eq.QUANT_FLOOR:
        # the floor model is linearised (and has its equilibrium) as its dither average
        p[eq.P_QUANT] = eq.QUANT_SMOOTH

    def f(x, xd):
        out = np.empty(3)
        eq.QCN_RHS.jit(0.0, np.ascontiguousarray(x), np.ascontiguousarray(xd[None, :]), p, out)
        return out

    return f


FP_CASES = [(QCNParams(), kw) for kw in VARIANTS] + [
    (SHORT_BC, kw) for kw in VARIANTS if kw.get("sampling") != "table"
]


@pytest.mark.parametrize("params, kw", FP_CASES)
def test_fixed_point_zeroes_rhs(params, kw):
    m = QCNAveragedModel(params=params, n_flows=10, rtt=100e-6, **kw)
    fp = m.fixed_point()
    x = m._x_star
    f = _compiled_rhs(m)(x, x)
    # scale: C for dq/dt, R_C* C for the rate equations (their natural magnitude);
    # 1e-9 relative is far above double round-off (~1e-15) and far below any real imbalance
    c = m.param_vector()[eq.P_C]
    assert abs(f[0]) <= 1e-9 * c
    assert np.all(np.abs(f[1:]) <= 1e-9 * x[1] * c)
    assert fp["residual"] < 1e-9
    # N R_C* = C exactly, target above current, queue above the set point (Fb* < 0)
    assert fp["rate_current"] * 10 == pytest.approx(params.line_rate, rel=1e-12)
    assert fp["rate_target"] > fp["rate_current"]
    assert fp["q"] > params.qeq and fp["fb"] < 0


def test_table_sampling_without_consistent_equilibrium():
    # with a 15 KB byte counter, p = 1% puts u* in table segment 2 (p = 3%), where u* falls
    # back to segment 0: the equilibrium would sit on a table discontinuity
    with pytest.raises(ValueError, match="table"):
        QCNAveragedModel(params=SHORT_BC, sampling="table").fixed_point()


@pytest.mark.parametrize("kw", VARIANTS)
def test_linearisation_matches_finite_differences(kw):
    params = QCNParams() if kw.get("sampling") == "table" else SHORT_BC
    m = QCNAveragedModel(params=params, n_flows=10, rtt=100e-6, **kw)
    lin = m.linearise()
    x = m._x_star
    f = _compiled_rhs(m)
    a0 = finite_difference_jacobian(lambda z: f(z, x), x, rel_step=1e-7)
    a1 = finite_difference_jacobian(lambda z: f(x, z), x, rel_step=1e-7)
    # central differences with h = 1e-7 |x|: truncation ~h^2 f''' and round-off ~eps f / h
    # give ~1e-7 relative error; 1e-5 of each matrix's norm leaves margin
    np.testing.assert_allclose(lin.a0, a0, atol=1e-5 * np.abs(a0).max())
    np.testing.assert_allclose(lin.a1, a1, atol=1e-5 * np.abs(a1).max())
    # the loop-channel split reproduces A1
    np.testing.assert_allclose(
        np.outer(lin.b, lin.c) + lin.a1_direct, lin.a1, atol=1e-12 * np.abs(a1).max()
    )


def test_base_model_loop_is_exact_rank_one():
    lin = QCNAveragedModel(n_flows=10, rtt=100e-6).linearise()
    assert lin.rank_a1() == 1
    num, den, neglected = lin.open_loop()
    # the direct delayed-rate path multiplies terms that vanish at the equilibrium: it is zero
    # up to the fixed point's round-off (residual ~1e-16)
    assert neglected < 1e-12
    # 1 + L(s) = det(sI - A0 - A1 e^{-s tau}) / det(sI - A0) at arbitrary complex points
    s = np.array([3.0 + 1000j, -200 + 5000j, 10 + 50j])
    lhs = 1 + np.polyval(num, s) / np.polyval(den, s) * np.exp(-s * lin.delay)
    rhs = lin.characteristic(s) / np.polyval(den, s)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9)


def test_symbolic_loop_matches_numeric():
    m = QCNAveragedModel(n_flows=10, rtt=100e-6)
    num_s, den_s = m.symbolic_loop()
    f, x, xd, syms, _ = m.rhs_symbolic()
    subs = dict(zip(x, m._x_star)) | dict(zip(syms, m.symbolic_param_values()))
    num = [float(c.subs(subs)) for c in num_s.all_coeffs()]
    den = [float(c.subs(subs)) for c in den_s.all_coeffs()]
    loop = m.loop()
    np.testing.assert_allclose(np.trim_zeros(num, "f"), loop.num, rtol=1e-9)
    np.testing.assert_allclose(den[:-1], loop.den[:-1], rtol=1e-9)


@pytest.mark.parametrize("p", [1e-4, 0.01, 0.08, 0.5])
@pytest.mark.parametrize("length", [1.0, 100.0, 1e4])
def test_cycle_rate_matches_direct_formula(p, length):
    # p / ((1-p)^(-L) - 1) in 50-digit arithmetic (no overflow, no cancellation); the float
    # form loses at most a few ulps times L |log1p(-p)| (< 1e4 here), hence 1e-10 relative
    mp = pytest.importorskip("mpmath")
    with mp.workdps(50):
        direct = float(mp.mpf(p) / ((1 - mp.mpf(p)) ** (-mp.mpf(length)) - 1))
    assert eq.cycle_rate(p, length) == pytest.approx(direct, rel=1e-10)


def test_default_equilibrium_hugs_switching_surface():
    # a finding, pinned: with B = 100 frames and p = 1% the AI drive (1-p)^(F B) = 0.0066 is
    # so weak that the equilibrium sits ~1.4 B above Qeq: u* ~ 0.0007 on the 0..63 scale
    fp = QCNAveragedModel(n_flows=10, rtt=100e-6).fixed_point()
    assert 0 < -fp["fb"] < 10
    assert fp["u"] < 0.005


def test_compiled_matches_reference():
    m = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=100e-6)
    fp = m.fixed_point()
    x0 = {"q": 1.5 * fp["q"]}
    kw = dict(duration=0.05, x0=x0, record_dt=1e-4)
    ref = m.simulate(method="reference", rtol=1e-10, **kw)
    fix = m.simulate(**kw)
    swing = np.ptp(ref.q.values)
    # default dt = 10 us. The rhs is non-smooth (Fb = 0 switching, q = 0 boundary), which
    # limits both schemes to low order at the switching instants; measured differences are
    # ~1e-5 of the queue swing and ~1e-6 relative in the rates; bounds are 10x that
    assert np.max(np.abs(fix.q.values - ref.q.values)) < 2e-4 * swing
    for v in ("rate_current", "rate_target"):
        assert np.max(np.abs(fix[v].values - ref[v].values)) < 2e-5 * fp["rate_current"]


def _zero_crossing_freq(t, y):
    up = np.where((y[:-1] < 0) & (y[1:] >= 0))[0]
    # linear interpolation of the crossing instants
    tc = t[up] - y[up] * (t[up + 1] - t[up]) / (y[up + 1] - y[up])
    return 2 * np.pi * (len(tc) - 1) / (tc[-1] - tc[0])


def test_positive_phase_margin_converges():
    m = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=200e-6)
    assert m.loop().margins().phase_margin_deg > 30  # measured 42.5 deg
    fp = m.fixed_point()
    ds = m.simulate(0.2, x0={"q": fp["q"] + 1000.0}, record_dt=1e-5)
    late = ds.q.values[ds.time.values > 0.15] - fp["q"]
    # the slowest root decays at ~40 1/s... we only require a 100x reduction of 1000 B
    assert np.max(np.abs(late)) < 10.0


def test_negative_phase_margin_oscillates_at_predicted_frequency():
    m = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=1.2e-3)
    margins = m.loop().margins()
    assert margins.phase_margin_deg < -10 and not margins.stable  # measured -17.4 deg
    lin = m.linearise()
    root = lin.root_near(1j * margins.crossover_rad_s)
    assert root.real > 0
    fp = m.fixed_point()
    ds = m.simulate(0.3, x0={"q": fp["q"] + 1.0}, record_dt=1e-5)
    t, dq = ds.time.values, ds.q.values - fp["q"]
    # growth phase: while |dq| < 2 KB the trajectory is a small perturbation
    end = np.argmax(np.abs(dq) > 2000.0)
    assert end > 0
    sl = slice(end // 3, end)
    w_grow = _zero_crossing_freq(t[sl], dq[sl])
    # linear theory: the perturbation oscillates at Im(rightmost root); zero crossings of a
    # sampled (10 us) growing sinusoid are exact to ~1e-4; 2% allows for the initial transient
    assert w_grow == pytest.approx(root.imag, rel=0.02)
    # and it persists: a limit cycle with a large swing
    late = ds.q.values[t > 0.2]
    assert np.ptp(late) > 50e3


def test_marginal_limit_cycle_near_phase_crossover():
    # just past the stability boundary (PM ~ -2.4 deg) the persistent oscillation (a limit
    # cycle) runs near the phase-crossover frequency (describing-function reasoning: the
    # saturations act as a gain reduction). Measured: 907 vs 950 rad/s (-4.5%). The cycle is
    # far from sinusoidal (q is clipped at 0, swing ~130 KB), so 10% is the tolerance; further
    # from the boundary the limit cycle leaves the phase crossover (PM -17 deg: see above).
    m = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=0.95e-3)
    margins = m.loop().margins()
    assert -5 < margins.phase_margin_deg < 0
    fp = m.fixed_point()
    ds = m.simulate(0.6, x0={"q": fp["q"] + 100.0}, record_dt=1e-5)
    t = ds.time.values
    sel = t > 0.45
    q = ds.q.values[sel]
    assert np.ptp(q) > 50e3
    w = _zero_crossing_freq(t[sel], q - q.mean())
    assert w == pytest.approx(margins.phase_crossover_rad_s, rel=0.10)


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"rtt": -1e-6}, "rtt"),
        ({"rtt": 0.0}, "rtt"),
        ({"ps": 1.5}, "ps"),
        ({"ps": 0.0}, "ps"),
        ({"n_flows": 0}, "n_flows"),
        ({"n_flows": 2.5}, "n_flows"),
        ({"capacity": -1.0}, "capacity"),
        ({"sampling": "random"}, "sampling"),
        ({"quantise": "round"}, "quantise"),
        ({"hai": True}, "hai"),
    ],
)
def test_bad_parameters_raise(kw, field):
    with pytest.raises(ValueError, match=field):
        QCNAveragedModel(**kw)


def test_replace_and_units():
    m = QCNAveragedModel(rtt="100us", capacity="5Gbps")
    assert m.rtt == pytest.approx(100e-6) and m.capacity == pytest.approx(5e9)
    m2 = m.replace(n_flows=20, w=4.0)
    assert m2.n_flows == 20 and m2.params.w == 4.0 and m2.rtt == m.rtt
    assert m.replace(params=QCNParams(sample_base=75000)).p_sample == pytest.approx(0.02)


def test_saturated_equilibrium_is_reported():
    # Gd u* reaches min_dec: no interior equilibrium
    with pytest.raises(ValueError, match="equilibrium"):
        QCNAveragedModel(params=QCNParams(bc_limit=1500, r_ai=500e6), n_flows=100).fixed_point()


def test_jitcdde_on_symbolic_rhs_matches_compiled():
    pytest.importorskip("jitcdde")
    m = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=200e-6)
    fp = m.fixed_point()
    kw = dict(duration=0.05, x0={"q": fp["q"] + 1000.0}, record_dt=1e-4)
    jit = m.simulate(method="jitcdde", rtol=1e-9, **kw)
    fix = m.simulate(**kw)
    ok = np.isfinite(jit.q.values)
    assert ok.sum() > 490  # only the samples before jitcdde's first steps are missing
    # independent equations (SymPy twin) and integrator: measured 9e-4 B on a 1000 B
    # perturbation and 3e-9 relative in the rates; bounds 10x
    assert np.max(np.abs(jit.q.values[ok] - fix.q.values[ok])) < 1e-2
    rc = fp["rate_current"]
    assert np.max(np.abs(jit.rate_current.values[ok] - fix.rate_current.values[ok])) < 3e-8 * rc
    # leaving the congested branch is refused
    with pytest.raises(ValueError, match="branch"):
        m.simulate(0.02, x0={"q": 0.0}, method="jitcdde")


def test_hotspot_moves_to_the_new_equilibrium_and_back():
    m = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=100e-6)
    before = m.fixed_point()
    during = m.replace(capacity=5e9).fixed_point()
    ds = m.simulate(0.6, hotspot=(0.1, 0.4, "5Gbps"), record_dt=1e-4)

    def at(t):
        return ds.sel(time=t, method="nearest")

    # PM ~ 48 deg, dominant root -417 +- 735j: 0.25 s after each switch the transient is
    # measured below 1e-9 relative; 1e-6 leaves margin
    for t, fp in ((0.09, before), (0.39, during), (0.59, before)):
        assert float(at(t).q) == pytest.approx(fp["q"], rel=1e-6)
        assert float(at(t).rate_current) == pytest.approx(fp["rate_current"], rel=1e-6)


def test_defaults_unstable_rtt_oscillates_near_phase_crossover():
    # 802.1Qau defaults, N = 10, rtt = 500 us: PM ~ -27 deg. The persistent oscillation runs
    # at 164 rad/s against a phase crossover of 172 rad/s (-4.7%); 10% tolerance as in the
    # marginal test (a large, clipped, non-sinusoidal cycle)
    m = QCNAveragedModel(n_flows=10, rtt=500e-6)
    margins = m.loop().margins()
    assert margins.phase_margin_deg < -10
    fp = m.fixed_point()
    ds = m.simulate(0.5, x0={"q": fp["q"] + 1000.0}, record_dt=1e-5)
    t = ds.time.values
    sel = t > 0.3
    q = ds.q.values[sel]
    assert np.ptp(q) > 2e3
    w = _zero_crossing_freq(t[sel], q - q.mean())
    assert w == pytest.approx(margins.phase_crossover_rad_s, rel=0.10)


@pytest.mark.parametrize("n, r_ai", [(2, 100e6), (3, 100e6), (5, 50e6), (12, 20e6), (20, 10e6)])
def test_table_sampling_finds_the_equilibrium_on_a_higher_entry(n, r_ai):
    """With the sampling table, the 1 % entry's candidate can saturate the cut (u = 69 at
    N = 2, R_AI = 100 Mb/s, BC = 15 KB) while the 2 % entry holds a consistent interior
    equilibrium (u = 9.3, on entry 1); that candidate must not end the search. The
    equilibrium found zeroes the model's own right-hand side and lies on its entry."""
    from qcnmodel.models.qcn import QCNFluidModel

    m = QCNFluidModel(QCNParams(r_ai=r_ai, bc_limit=15000), rtt=100e-6, n_flows=n,
                      fidelity="paper", sampling="table")  # fmt: skip
    fp = m.fixed_point()
    assert fp["residual"] < 1e-12
    assert fp["ps"] == pytest.approx(1500 / 75000)  # entry 1: 2 %
    assert int(math.floor(fp["u"] + 0.5) * 8 / 64) == 1  # the feedback is on entry 1
    assert fp["q"] > m.params.qeq
