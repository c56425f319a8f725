"""DCQCN fluid model: the coalescing notification point as a CNP process.

The rule (SIGCOMM 2015 NIC, the simulator's default): a marked packet sends a CNP at once
unless one left in the last interval tau; a mark inside that interval is remembered and sent
when the interval ends. The expected values come from a direct Monte Carlo of that rule on a
Bernoulli mark stream (a few lines here, independent of the model's equations), from the
rule's limits, or from the definitions; none is produced by the code under test.
"""

import math

import numpy as np
import pytest

from qcnmodel.models import _dcqcn_eqs as eq
from qcnmodel.models.dcqcn import DCQCNFluidModel, DCQCNParams

P = DCQCNParams()


def _rule_cnp_rate(p_mark: float, tau_pkts: int, n_pkts: int, seed: int = 0):
    """CNPs per packet of the coalescing rule on i.i.d. marks (probability ``p_mark`` per
    packet, ``tau_pkts`` packets per interval), and the standard error of that rate."""
    rng = np.random.default_rng(seed)
    marks = rng.random(n_pkts) < p_mark
    last, pending, cnps = -(10**12), False, []
    for k in range(n_pkts):
        if pending and k >= last + tau_pkts:  # the remembered mark leaves at the interval's end
            last, pending = last + tau_pkts, False
            cnps.append(last)
        if marks[k]:
            if k >= last + tau_pkts:
                last = k
                cnps.append(k)
            else:
                pending = True
    gaps = np.diff(cnps)
    rate = 1.0 / gaps.mean()
    return rate, rate * gaps.std() / gaps.mean() / math.sqrt(len(gaps))


def _rhs_out(model, x, xd):
    p = model.param_vector()
    p[eq.P_DELTA] = 1e-7
    out = np.zeros_like(x)
    eq.DCQCN_RHS_NP.jit(0.0, x, xd, p, out)
    return p, out


def _stationary_inputs(model, p_mark, cnp_rate, rc):
    """State and delayed states of a stationary mark stream: y falls by rc log(1 - p) per
    second, Z rises by ``cnp_rate`` per second; the queue sits where the ramp marks ``p_mark``."""
    pr = model.params
    q = (pr.kmin + p_mark / pr.pmax * (pr.kmax - pr.kmin)) / pr.packet_size
    tau, d, delta = pr.cnp_interval, model.loop_delay, 1e-7
    dy = rc * math.log1p(-p_mark)
    t_of = [d, d + pr.fr_th * pr.rate_timer, d + tau, tau, tau + delta]
    x = np.array([q, 0.1, rc, rc, 0.0, 0.0])
    xd = np.array([[q, 0.1, rc, rc, -dy * s, -cnp_rate * s] for s in t_of])
    return x, xd


@pytest.mark.parametrize(("n", "p_mark"), [(10, 0.002), (2, 0.01)])
def test_the_rules_cnp_rate_is_a_fixed_point_of_the_renewal_equation(n, p_mark):
    m = DCQCNFluidModel(P, rtt=50e-6, n_flows=n, notification="coalesce")
    rc = P.line_rate / 8.0 / P.packet_size / n  # packets/s
    tau_pkts = round(P.cnp_interval * rc)
    per_pkt, se = _rule_cnp_rate(p_mark, tau_pkts, 2_000_000)
    c = per_pkt * rc
    x, xd = _stationary_inputs(m, p_mark, c, rc)
    _, out = _rhs_out(m, x, xd)
    # the expected rate from the rule itself; 4 standard errors of the Monte Carlo
    assert out[5] == pytest.approx(c, abs=4 * se * rc + 1e-9 * c)
    if n == 2:  # about one mark per interval: the windowed rule's rate is clearly lower
        windowed = -math.expm1(P.cnp_interval * rc * math.log1p(-p_mark)) / P.cnp_interval
        assert c - windowed > 8 * se * rc


def test_the_first_cnp_after_a_quiet_spell_comes_without_lag():
    m = DCQCNFluidModel(P, rtt=50e-6, n_flows=10, notification="coalesce")
    rc = P.line_rate / 8.0 / P.packet_size / 10
    p_mark = 0.005
    x, xd = _stationary_inputs(m, p_mark, 0.0, rc)
    xd[2:, 4] = xd[0, 4]  # no mark in the window before: marks start now
    _, out = _rhs_out(m, x, xd)
    assert out[5] == pytest.approx(rc * p_mark, rel=1e-12)  # the rate of marked packets


def test_dense_marks_give_one_cnp_per_interval():
    m = DCQCNFluidModel(P, rtt=50e-6, n_flows=10, notification="coalesce")
    rc = P.line_rate / 8.0 / P.packet_size / 10
    x, xd = _stationary_inputs(m, 0.0099, 1.0 / P.cnp_interval, rc)
    xd[2, 4] = xd[0, 4] + 1e3  # certainly a mark in the last interval
    _, out = _rhs_out(m, x, xd)
    assert out[5] == pytest.approx(1.0 / P.cnp_interval, rel=1e-6)


def test_trajectories_and_their_step():
    m = DCQCNFluidModel(P, rtt=50e-6, n_flows=20, notification="coalesce", stage_memory=True)
    assert m.default_dt() == pytest.approx(8.0 * P.packet_size / P.line_rate)
    ds = m.simulate(5e-3, x0={"q": 0.0}, record_dt=1e-5)
    assert np.all(np.isfinite(ds.q.values)) and ds.q.values.max() > P.kmin
    assert ds.attrs["notification"] == "coalesce"
    assert DCQCNFluidModel(P).default_dt() == pytest.approx(5e-6)


def test_bad_combinations_name_the_field():
    with pytest.raises(ValueError, match="notification"):
        DCQCNFluidModel(P, notification="sometimes")
    with pytest.raises(ValueError, match="cnp_lag"):
        DCQCNFluidModel(P, notification="coalesce", cnp_lag="half-interval")
    m = DCQCNFluidModel(P, notification="coalesce")
    with pytest.raises(ValueError, match="coalescing"):
        m.simulate(1e-3, method="jitcdde")
