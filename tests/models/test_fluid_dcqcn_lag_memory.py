"""DCQCN fluid model options: the CNP window lag and the timer's stage memory.

Expected values come from the definitions (exact identities, limits) or from physics that
the code does not encode (the fixed point is unchanged by the memory); none is produced by the
code under test.
"""

import math

import numpy as np
import pytest

from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.models import _dcqcn_eqs as eq
from qcnmodel.models import build_model
from qcnmodel.models.dcqcn import DCQCNFluidModel, DCQCNParams

P = DCQCNParams()


def test_cnp_lag_is_added_to_the_loop_delay():
    a = DCQCNFluidModel(P, rtt=40e-6, n_flows=4, cnp_lag=25e-6)
    b = DCQCNFluidModel(P, rtt=65e-6, n_flows=4)
    assert a.loop_delay == pytest.approx(65e-6) and a.extra_delay == 25e-6
    assert a.loop().delay == pytest.approx(65e-6, rel=1e-15)
    ma, mb = a.loop().margins(), b.loop().margins()
    assert ma.phase_margin_deg == pytest.approx(mb.phase_margin_deg, rel=1e-12)
    qa = a.simulate(2e-3, x0={"q": 30e3}, record_dt=1e-5).q.values
    qb = b.simulate(2e-3, x0={"q": 30e3}, record_dt=1e-5).q.values
    assert np.array_equal(qa, qb)


def test_cnp_lag_keeps_the_rational_part_free_of_the_rtt():
    # the contract that lets critical_rtt subtract extra_delay: the loop delay is the RTT
    # plus the lag, and the critical RTT so found is a search's over the RTT itself
    m = DCQCNFluidModel(P, n_flows=10, cnp_lag="25us")
    assert m.loop().delay == pytest.approx(m.rtt + 25e-6, rel=1e-12)
    search = critical_rtt(lambda r: m.replace(rtt=r).loop(), 1e-6, 1e-2)
    assert critical_rtt(m) == pytest.approx(search, rel=1e-8)
    assert critical_rtt(m) == pytest.approx(m.loop().critical_delay() - 25e-6, rel=1e-12)


def test_options_through_the_registry():
    m = build_model("dcqcn", n_flows=4, cnp_lag="25us", stage_memory="true")
    assert (m.cnp_lag, m.stage_memory) == (25e-6, True)
    # the registry's default is the validated configuration; "exact" is the paper's equations
    default = build_model("dcqcn")
    assert default.cnp_lag == "half-interval" and default.stage_memory
    assert default.cnp_lag_s == pytest.approx(P.cnp_interval / 2, rel=1e-15)
    assert default.loop().delay == pytest.approx(default.rtt + P.cnp_interval / 2, rel=1e-15)
    exact = build_model("dcqcn", variant="exact")
    assert exact.cnp_lag == 0.0 and not exact.stage_memory
    assert DCQCNFluidModel(P, cnp_lag="Half-Interval").cnp_lag == "half-interval"


@pytest.mark.parametrize("bad", [-1e-6, "abc", math.inf])
def test_bad_cnp_lag(bad):
    with pytest.raises(ValueError, match="cnp_lag"):
        DCQCNFluidModel(P, cnp_lag=bad)


def test_bad_stage_memory_flag():
    with pytest.raises(ValueError, match="stage_memory"):
        DCQCNFluidModel(P, stage_memory="yes")


def _rhs(memory, window_log):
    """Right-hand side at the fixed point (N=4) with the stage window's log P(no mark)."""
    m = DCQCNFluidModel(P, rtt=50e-6, n_flows=4)
    x = m._x_star
    p = m.param_vector()
    if not memory:
        out = np.empty(4)
        eq.DCQCN_RHS.jit(0.0, x, np.array([x]), p, out)
        return out, m
    xm = np.concatenate([x, [0.0]])
    xd = np.array([np.concatenate([x, [window_log]]), np.concatenate([x, [0.0]])])
    out = np.empty(5)
    eq.DCQCN_RHS_MEM.jit(0.0, xm, xd, p, out)
    return out, m


def test_stage_memory_factor_equals_the_stationary_one_at_the_fixed_point():
    base, m = _rhs(False, 0.0)
    pv = m.param_vector()
    q, _, _, rc = m._x_star
    pm = (q - pv[eq.P_KMIN]) / (pv[eq.P_KMAX] - pv[eq.P_KMIN]) * pv[eq.P_PMAX]
    # stationary: the packets of F T at rate R_C, each unmarked with probability 1 - p
    window = pv[eq.P_F] * pv[eq.P_T] * rc * math.log1p(-pm)
    mem, _ = _rhs(True, window)
    assert np.allclose(mem[:4], base, rtol=1e-9, atol=1e-9 * abs(base).max())
    # y' = R_C log(1 - p(q)): the log-probability that a packet is not marked, per second
    assert mem[4] == pytest.approx(rc * math.log1p(-pm), rel=1e-12)
    # no mark in the window: the full AI term, R_AI R_C d (d the timer-event rate)
    fresh, _ = _rhs(True, 0.0)
    d = eq.cycle(pm, math.log1p(-pm), pv[eq.P_T] * rc)
    b = eq.cycle(pm, math.log1p(-pm), pv[eq.P_B])
    c = math.exp(pv[eq.P_F] * pv[eq.P_B] * math.log1p(-pm)) * b
    a = -math.expm1(pv[eq.P_TAU] * rc * math.log1p(-pm))
    expect = -(m._x_star[2] - rc) / pv[eq.P_TAU] * a + pv[eq.P_RAI] * rc * (c + d)
    assert fresh[2] == pytest.approx(expect, rel=1e-12)


def test_stage_memory_keeps_the_fixed_point():
    m = DCQCNFluidModel(P, rtt=25e-6, n_flows=2, stage_memory=True)
    ds = m.simulate(0.4, record_dt=1e-3)
    # from the fixed point with an empty history the memory starts at "no mark" (a push
    # upwards) and settles back: measured 4e-12 after 0.4 s
    assert float(ds.q[-1]) == pytest.approx(m.fixed_point()["q"], rel=1e-6)
    assert ds.attrs["stage_memory"] == 1


def test_stage_memory_compiled_matches_reference():
    # the second delay (loop delay + F T) through both integrators, on the marking ramp
    m = DCQCNFluidModel(P, rtt=25e-6, n_flows=4, cnp_lag=25e-6, stage_memory=True)
    x0 = {"q": 30e3}
    a = m.simulate(3e-3, x0=x0, record_dt=1e-5).q.values
    b = m.simulate(3e-3, x0=x0, record_dt=1e-5, method="reference", rtol=1e-10).q.values
    # RK4 at dt = 5 us on a smooth rhs: measured 6e-10 of the queue; 1e-7 leaves margin
    assert np.max(np.abs(a - b)) < 1e-7 * np.max(np.abs(b))


def test_jitcdde_refuses_the_stage_memory():
    m = DCQCNFluidModel(P, n_flows=4, stage_memory=True)
    with pytest.raises(ValueError, match="stage memory"):
        m.simulate(1e-3, method="jitcdde")
