"""The packet-fidelity QCN model: renewal tables, CP map, equilibrium, linearisation, the
nonlinear trajectory, and the QCNFluidModel front."""

import math

import numpy as np
import pytest

from qcnmodel.models import _qcn_cp as cp
from qcnmodel.models._renewal import renewal_table
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.models.qcn_packet import QCNPacketModel
from qcnmodel.params import QCNParams

P = QCNParams()


def test_renewal_table_is_a_distribution_with_the_renewal_rate():
    t = renewal_table(15e-3, 5, 0.15)
    x = np.arange(t.n) * t.h
    assert t.phi[0] == 1.0 and t.p0[0] == 1.0
    # no expiry before (1 - J) T, all by (1 + J) T
    assert t.p0[np.searchsorted(x, 0.84 * 15e-3)] == pytest.approx(1.0)
    assert t.p0[np.searchsorted(x, 1.16 * 15e-3)] == pytest.approx(0.0, abs=1e-9)
    # E[K(x)] = integral of the expiry density: 5 full cycles then half cycles
    i = np.searchsorted(x, 0.2)
    expected = 5 + (0.2 - 5 * 15e-3) / 7.5e-3
    assert np.sum(t.nu[:i]) * t.h == pytest.approx(expected, abs=0.6)
    # late, the expiry rate is the halved cycle's
    assert np.mean(t.nu[-200:]) == pytest.approx(1 / 7.5e-3, rel=0.02)


def test_cp_map_is_the_expectation_over_the_sampled_queue_noise():
    # Monte Carlo of the CP's decision at a sample: Fb + Gaussian noise, CNM iff < 0, qFb
    # by the floor quantiser, the table entry of qFb; compare with cp_signals
    m = QCNPacketModel(P, n_flows=10, capacity=5e9)
    k = m.param_vector()
    rng = np.random.default_rng(1)
    for fb in (-3.0, 0.5, 4.0):  # frames
        q = k[cp.K_QEQ] - k[cp.K_ENQ] - fb
        kap, cut, fb_back = cp.cp_signals(q, k[cp.K_C] / k[cp.K_N], k[cp.K_C], k, q)
        assert fb_back == pytest.approx(fb)
        v = -fb + k[cp.K_SIGMA] * rng.standard_normal(400_000)
        qfb = np.minimum(np.floor(k[cp.K_FS] * np.minimum(np.maximum(v, 0), k[cp.K_FBMAX])
                                  / k[cp.K_FBMAX]), k[cp.K_FS])  # fmt: skip
        p = k[cp.K_TAB0 + np.minimum((qfb * 8 // (k[cp.K_FS] + 1)).astype(int), 7)]
        cnm = (v > 0) * p
        assert kap == pytest.approx(cnm.mean(), rel=0.01)
        assert cut == pytest.approx((cnm * np.minimum(P.gd * qfb, P.min_dec)).mean() / kap,
                                    rel=0.02)  # fmt: skip


@pytest.mark.parametrize("n, cap", [(1, 5e9), (10, 5e9), (100, 10e9)])
def test_equilibrium_is_self_consistent_at_the_fair_share(n, cap):
    m = QCNPacketModel(P, n_flows=n, capacity=cap)
    fp = m.fixed_point()
    assert fp["rate_current"] == pytest.approx(cap / n, rel=1e-6)
    assert fp["birth_rate_current"] < fp["birth_target"]  # a CNM cuts below the kept target
    assert 0 < fp["q"] < 3 * P.qeq and 0 < fp["cut"] < P.min_dec
    fb, st = m._equilibrium
    assert max(abs(x) for x in st.birth_residual()) < 1e-6


def test_linearisation_agrees_with_the_nonlinear_model_around_the_equilibrium():
    # the loop is the exact linearisation of the population model (the cohorts): started at
    # its equilibrium with a small kick, its trajectory decays below the critical RTT and
    # grows above it
    base = QCNPacketModel(P, n_flows=10, capacity=5e9)
    crit = base.loop().critical_delay()
    assert 200e-6 < crit < 1e-3

    def amplitude(rtt):
        ds = base.replace(rtt=rtt).simulate(0.4, x0={"q": base.fixed_point()["q"] + 1500.0},
                                            record_dt=50e-6, method="cohorts")  # fmt: skip
        q = ds.q.values
        return np.ptp(q[-1000:]), np.ptp(q[: len(q) // 4])

    late, early = amplitude(0.8 * crit)
    assert late < 0.5 * early
    late, early = amplitude(1.25 * crit)
    assert late > early


def test_loop_does_not_depend_on_the_rtt_beyond_its_delay():
    a = QCNPacketModel(P, rtt=50e-6, n_flows=10, capacity=5e9)
    b = a.replace(rtt=400e-6)
    s = 1j * np.array([100.0, 1000.0, 5000.0])
    assert np.allclose(a.transfer(s), b.transfer(s), rtol=1e-9)
    assert a.loop().critical_delay() == pytest.approx(b.loop().critical_delay(), rel=1e-9)


def test_idle_start_trajectory_respects_the_bounds():
    m = QCNPacketModel(P, rtt=100e-6, n_flows=10, capacity=5e9)
    ds = m.simulate(0.2, start="idle", offered=1e9, record_dt=1e-4)
    assert np.all(ds.q.values >= 0)
    assert np.all(ds.rate_sent.values <= 1e9 * (1 + 1e-12))
    assert np.all(ds.rate_current.values <= P.line_rate * (1 + 1e-12))
    assert np.all(ds.rate_current.values >= P.min_rate * (1 - 1e-12))
    # it settles at the fair share
    assert ds.rate_sent.values[-200:].mean() == pytest.approx(5e8, rel=0.02)


def test_bad_arguments_name_the_field():
    m = QCNPacketModel(P, n_flows=10)
    with pytest.raises(ValueError, match="start"):
        m.simulate(0.01, start="warm")
    with pytest.raises(ValueError, match="x0: unknown key 'qq'"):
        m.simulate(0.01, x0={"qq": 1})
    with pytest.raises(ValueError, match="duration"):
        m.simulate(-1)
    with pytest.raises(ValueError, match="quantiser"):
        QCNPacketModel(P.replace(quantiser="msb6"))


def test_front_names_the_fidelity_and_refuses_paper_switches_at_packet_fidelity():
    from qcnmodel.models import identify

    m = QCNFluidModel(P, rtt="100us", n_flows=10)
    assert m.fidelity == "packet" and type(m.engine).__name__ == "QCNPacketModel"
    assert identify(m) == ("qcn", "packet")
    paper = m.replace(fidelity="paper")
    assert identify(paper) == ("qcn", "paper")
    assert type(paper.engine).__name__ == "QCNAveragedModel"
    with pytest.raises(ValueError, match="sampling_lag: a switch of the cycle-averaged"):
        QCNFluidModel(P, sampling_lag=True)
    with pytest.raises(ValueError, match="fidelity"):
        QCNFluidModel(P, fidelity="exact")
    # the paper model's switches still work there, and the front hands attributes on
    lag = QCNFluidModel(P, fidelity="paper", reset="cnm", sampling_lag=True)
    assert lag.sampling_lag_s > 0 and lag.extra_delay == lag.sampling_lag_s
    assert math.isfinite(m.loop().critical_delay())


def test_timer_synchronised_cycle_at_many_flows():
    # many slow flows: the timer's cycles outlast the gaps between CNMs, the cut flows recover
    # together one timer period later; the loop is unstable at every RTT and the model's own
    # cycle has a period of about one timer period (a prediction of the renewal structure)
    from qcnmodel.models.limit_cycle import limit_cycle

    m = QCNFluidModel(P, rtt="20us", n_flows=100, capacity=5e9)
    assert not m.loop().margins().stable
    lc = limit_cycle(m, method="trajectory", duration=0.4)
    assert lc.exists and P.timer < lc.period_s < 1.5 * P.timer


def test_no_standing_queue_is_refused_not_a_negative_queue():
    """With a large w at a line-rate port the mean field balances only below an empty queue
    (Fb's frame noise alone cuts the flows below C/N); the packets' queue sits near empty
    there (N = 10, 10 Gb/s, W = 64: 4.7 KB mean, empty 5 % of the time). The model refuses
    instead of returning a negative queue, and its trajectories from idle still run."""
    import pytest

    from qcnmodel.models._base import NoStandingQueue
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.params import QCNParams

    assert issubclass(NoStandingQueue, ValueError)  # every caller's "no answer" path
    ok = QCNFluidModel(QCNParams(w=32.0), n_flows=10)
    assert ok.fixed_point()["q"] > 0
    m = QCNFluidModel(QCNParams(w=64.0), n_flows=10)
    for call in (m.fixed_point, lambda: m.loop().margins(), lambda: m.simulate(0.01)):
        with pytest.raises(NoStandingQueue, match="no equilibrium with a standing queue.*w = 64"):
            call()
    q = m.simulate(0.05, start="idle", seed=0).q.values
    assert q.min() >= 0 and q.size > 1


def test_a_port_the_feedback_cannot_hold_is_named_overloaded():
    # 802.1Qau defaults at 10 Gb/s: the feedback holds 1100 flows at C/N (its mean past
    # -Fbmax: the noisy samples saturate gradually) but not 1200, where even full-scale
    # feedback on every sample leaves them at 1.07 x C/N: no equilibrium, and the error says
    # why (the packets: a queue held at N = 1000, growing by about 5 % of C at N = 1200)
    from qcnmodel.models.qcn import QCNFluidModel

    assert QCNFluidModel(n_flows=1100).fixed_point()["q"] > 0
    with pytest.raises(
        ValueError,
        match=r"even full-scale feedback .* at 1\.07\d* x the fair "
        r"share C/N, so the port stays overloaded at N = 1200",
    ):
        QCNFluidModel(n_flows=1200).fixed_point()


def test_the_fixed_point_near_overload_is_found():
    # near full-scale feedback a cohort that escapes every CNM reaches the line rate and its
    # path past survival e^-40 is not finite; that tail counts for nothing (it once made the
    # solver fail at N = 939-1100 and call the port overloaded where it is not)
    from qcnmodel.models.qcn import QCNFluidModel

    rates = [QCNFluidModel(n_flows=n).fixed_point()["rate_current"] for n in (939, 1000, 1050)]
    assert rates == pytest.approx([10e9 / 939, 10e9 / 1000, 10e9 / 1050], rel=1e-9)


def test_a_balance_without_cnms_is_not_the_equilibrium():
    # w = 0.5 at a fixed Ps = 1: the solver once stopped where Fb's samples are never negative
    # (CNM probability 1e-16, no cut): there the rates only rise, so it is no stationary state
    # (its residual vanished only because the age grid is finite), and its linearisation
    # said "G is not finite" or "stable across the search". A flow at C/N = 1 Gb/s gains at
    # least r_ai = 5 Mb/s per active-increase cycle, so holding it there takes cuts every few
    # cycles: well over one CNM per second and flow.
    p = QCNParams(w=0.5, sampling="fixed", ps_fixed=1.0)
    fp = QCNFluidModel(p, n_flows=10, rtt="50us").fixed_point()
    assert fp["cnm_rate"] > 1.0 and fp["cut"] > 0
    assert 0 < fp["q"] < p.qeq
    assert fp["rate_current"] == pytest.approx(1e9, rel=1e-9)


def test_a_frequent_sampling_balances_below_qeq():
    # fixed Ps = 0.3: the noisy Fb of frequent samples cuts the flows with the queue several
    # frames below qeq; the search now also starts there (at N = 5 it once found only the
    # CNM-free balance and called the queue negative). The queue falls as N (the noise) grows.
    p = QCNParams(sampling="fixed", ps_fixed=0.3)
    q = [QCNFluidModel(p, n_flows=n).fixed_point()["q"] for n in (2, 5, 10)]
    assert p.qeq > q[0] > q[1] > q[2] > 0


def test_a_cohort_at_the_line_rate_follows_a_fine_grid():
    # 9000-B frames: a cohort that escapes its CNMs reaches the line rate (139 k frames/s),
    # where its byte counter expires every few frames; the age grid's steps, sized at C/N,
    # are then far past the explicit midpoint rule's stability limit for the increase gap's
    # decay, and the path once overflowed to NaN (the search answered "best residual inf").
    # That decay is now taken exactly over such a step: the path on the model's grid must
    # match the same path on a grid 64 times finer (where the explicit rule is stable) to
    # the coarse grid's own midpoint error, a few per cent, and the population's mean rate
    # to 1 %.
    from qcnmodel.models import _qcn_stationary as st
    from qcnmodel.models._qcn_cohort import cohort_path

    p = QCNParams(frame_size=9000, w=8.0, qeq=5000.0, sampling="fixed", ps_fixed=0.01,
                  gd=1 / 64)  # fmt: skip
    m = QCNPacketModel(p, rtt=50e-6, n_flows=100)
    k = m.param_vector()
    tt, tb = m.tables
    target = k[cp.K_C] / k[cp.K_N]
    kappa, _ = st._signals(k, 0.0, target)
    ages = st.age_grid(tt, tb, target, kappa / 3.0)
    fine_ages = np.concatenate(
        [np.linspace(ages[i], ages[i + 1], 64, endpoint=False) for i in range(len(ages) - 1)]
        + [ages[-1:]]
    )
    for kap in (kappa, kappa / 100):
        coarse = cohort_path(target, 0.5 * target, kap, math.inf, k, tt, tb, ages)
        fine = cohort_path(target, 0.5 * target, kap, math.inf, k, tt, tb, fine_ages)[:, ::64]
        assert np.isfinite(coarse).all() and coarse[0].max() == k[cp.K_RLINE]
        seen = coarse[5] > -40  # ages the population still holds
        assert np.allclose(coarse[:, seen], fine[:, seen], rtol=0.05, atol=0)
        rates = []
        for path in (coarse, fine):
            surv = np.exp(path[5])
            rates.append(st._trap(ages, surv * path[1]) / st._trap(ages, surv))
        assert rates[0] == pytest.approx(rates[1], rel=0.01)


def test_past_the_frame_budget_the_linearised_loop_judges(monkeypatch):
    # a verdict's runs realise every frame at the port: 9 x 0.6 s at 10 Gb/s is 4.5e6 frames
    # (seconds), at 1 Tb/s 4.5e8 (minutes and a GB: `margins` took 231 s); past
    # analysis.trajectory_max_frames the linearised loop judges, as past the flow limit
    from qcnmodel import config

    assert QCNFluidModel(QCNParams(), n_flows=10).boundary_method == "trajectories"
    assert QCNFluidModel(QCNParams(line_rate=1e12), n_flows=10).boundary_method == "linearisation"
    monkeypatch.setitem(config.defaults, "analysis.trajectory_max_frames", 4e6)
    assert QCNFluidModel(QCNParams(), n_flows=10).boundary_method == "linearisation"


def test_a_failed_equilibrium_search_does_not_claim_there_is_none(monkeypatch):
    # a root finder that never converges (it returns its start): the message gives the
    # residual and says it is the search's result
    import scipy.optimize

    class Stuck:
        def __init__(self, x0):
            self.x = np.asarray(x0, float)

    monkeypatch.setattr(scipy.optimize, "root", lambda fun, x0, **kw: Stuck(x0))
    m = QCNFluidModel(QCNParams.preset("802.1qau"), rtt="100us", n_flows=10)
    with pytest.raises(ValueError, match="not a proof") as err:
        m.loop().margins()
    assert "residual" in str(err.value)


def test_small_cycle_jitters_give_margins_that_follow_the_jitter():
    # the stationary profile changes over a cycle's jitter window; an age grid that did not
    # resolve it gave phase margins of 18, -52 and 20 deg at jitter 0.003, 0.005 and 0.01
    # (N = 10, 100 us), and no equilibrium at 0. On a grid ten times finer everywhere the
    # margins at 0.003 .. 0.05 lie within 16.55 .. 16.70 deg: the jitter's window matters
    # little once resolved, so neighbouring jitters must agree to a fraction of a degree
    from qcnmodel.models._qcn_stationary import grid_steps

    assert grid_steps(0.15) == (150, 0.01) and grid_steps(0.5) == (150, 0.01)  # as before
    pm = {}
    for j in (0.003, 0.005, 0.01, 0.05):
        p = QCNParams.preset("802.1qau").replace(jitter=j)
        mg = QCNFluidModel(p, rtt="100us", n_flows=10).loop().margins()
        assert mg.stable
        pm[j] = mg.phase_margin_deg
    assert max(pm.values()) - min(pm.values()) < 0.5, pm
    # deterministic cycles: the grid of jitter 0.001 finds their equilibrium
    p = QCNParams.preset("802.1qau").replace(jitter=0.0)
    assert np.isfinite(QCNFluidModel(p, rtt="100us", n_flows=10).loop().margins().phase_margin_deg)
