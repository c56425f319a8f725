"""One QCN flow is judged by its trajectories: boundary_method, trajectory_unstable and what
margins, summary and stability maps make of it."""

import math

import numpy as np
import pytest

import qcnmodel as qm
from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.models.summary import summary


def _one(rtt=300e-6, **kw):
    return qm.QCNFluidModel(n_flows=1, rtt=rtt, capacity=5e9, **kw)


def test_which_points_are_judged_by_trajectories():
    assert _one().boundary_method == "trajectories"
    # more flows into a congested port: the trajectories as well (the mean field's
    # linearisation misses the packets' boundary at few and at tens of flows)
    assert qm.QCNFluidModel(n_flows=2, capacity=5e9).boundary_method == "trajectories"
    assert qm.QCNFluidModel(n_flows=100).boundary_method == "trajectories"
    # one flow that cannot load the port (CP at the line rate): no loop, linearisation exact
    assert qm.QCNFluidModel(n_flows=1).boundary_method == "linearisation"
    assert np.isinf(critical_rtt(qm.QCNFluidModel(n_flows=1)))
    # the published equations keep their linearisation
    assert not hasattr(qm.QCNFluidModel(n_flows=1, capacity=5e9, fidelity="paper"),
                       "boundary_method")  # fmt: skip


def test_past_the_flow_limit_the_linearised_loop_judges(monkeypatch):
    from qcnmodel import config

    cap = config.defaults["analysis.trajectory_max_flows"]
    assert qm.QCNFluidModel(n_flows=cap).boundary_method == "trajectories"
    assert qm.QCNFluidModel(n_flows=cap + 1).boundary_method == "linearisation"
    monkeypatch.setitem(config.defaults, "analysis.trajectory_max_flows", 10)
    m = qm.QCNFluidModel(n_flows=11, rtt=100e-6)
    assert m.boundary_method == "linearisation"
    assert critical_rtt(m) == critical_rtt(m, method="linearisation")


@pytest.fixture(scope="module")
def crit():
    return critical_rtt(_one())


def test_critical_rtt_is_where_the_trajectories_turn(crit):
    # where the odds of an unstable run pass one half: one flow's turn is sharp (its odds
    # over 27 runs go from under to over one half within a ladder rung of 1.5)
    odds = qm.unstable_fraction(_one(), [0.85 * crit, 1.2 * crit], seeds=27).values
    assert odds[0] < 0.5 < odds[1]
    # below the mean field's, which is too stable for one flow (566 us here)
    lin = qm.QCNFluidModel(n_flows=1, rtt=300e-6, capacity=5e9).engine.loop()
    from qcnmodel.analysis.margins import critical_delay

    assert crit < critical_delay(lin)


def test_trajectory_verdict_is_reproducible():
    m = _one(rtt=500e-6)
    assert m.trajectory_unstable() == m.trajectory_unstable()
    for bad in (0, 10**9, 2.5, True):  # 10**9 runs would never end: refused, with the range
        with pytest.raises(ValueError, match=r"seeds: must be a whole number in \[1, "):
            m.trajectory_unstable(seeds=bad)


def test_summary_and_map_follow_the_trajectories(crit):
    below, above = summary(_one(rtt=0.8 * crit), fixed_point=False), summary(
        _one(rtt=1.25 * crit), fixed_point=False)  # fmt: skip
    assert below["boundary_method"] == above["boundary_method"] == "trajectories"
    assert below["critical_rtt_s"] == pytest.approx(crit)
    assert below["stable"] and not above["stable"]
    rtts = np.array([0.5, 0.8, 1.25, 2.0]) * crit
    ds = qm.stability_map(_one(), x_values=rtts, y_values=[1, 10])
    assert ds.stable.values[0].tolist() == [True, True, False, False]
    assert float(ds.critical_rtt.sel(n_flows=1)) == pytest.approx(crit)
    # the ten-flow row: its own trajectories' critical RTT, and stable below it
    ten = critical_rtt(qm.QCNFluidModel(n_flows=10, capacity=5e9))
    assert float(ds.critical_rtt.sel(n_flows=10)) == ten
    assert ds.stable.values[1].tolist() == (rtts < ten).tolist()
    # where trajectories judge, every row has a band start, NaN without a band (the variable
    # was there only when some row had a band)
    assert np.isnan(ds.stable_from_rtt.values).all()
    # the linearisation stays available by name: the phase margin decides there
    lin = qm.stability_map(_one(), x_values=rtts, y_values=[1, 10], method="linearisation")
    assert lin.stable.values.tolist() == (lin.phase_margin_deg.values > 0).tolist()
    assert float(lin.critical_rtt.sel(n_flows=10)) == pytest.approx(critical_rtt(
        qm.QCNFluidModel(n_flows=10, capacity=5e9), method="linearisation"))  # fmt: skip
    with pytest.raises(ValueError, match="method"):
        qm.stability_map(_one(), x_values=rtts, y_values=[1], method="exact")


def test_a_map_over_another_parameter_judges_each_one_flow_point(crit):
    # over W at two RTTs: each point's verdict is rtt < its own trajectories' critical RTT
    ds = qm.stability_map(_one(), x="w", x_values=[2.0], y="rtt",
                          y_values=[0.8 * crit, 1.25 * crit])  # fmt: skip
    assert ds.stable.values[:, 0].tolist() == [True, False]


def test_the_trajectories_boundary_at_any_flow_count():
    m = qm.QCNFluidModel(n_flows=3, capacity=5e9)
    crit = qm.trajectory_critical_rtt(m)
    assert critical_rtt(m) == crit  # the one home answers with it
    # the packets' odds pass one half at 476-519 us here (the validation's scan); the
    # linearisation's 868 us is far out
    assert 0.9 * 476e-6 <= crit <= 1.1 * 519e-6
    odds = qm.unstable_fraction(m, [0.8 * crit, 1.25 * crit], seeds=27).values
    assert odds[0] < 0.5 < odds[1]


def test_the_limit_cycle_of_one_flow_comes_from_its_trajectories():
    past = qm.limit_cycle(_one(rtt=500e-6))
    assert past.method == "trajectory" and past.exists and past.period_s > 0
    assert not qm.limit_cycle(_one(rtt=200e-6)).exists  # below the boundary (335 us)
    # the describing functions of the mean field stay available by name, and are the
    # default where the linearisation judges
    assert qm.limit_cycle(_one(rtt=500e-6), method="harmonic-balance").method == (
        "harmonic-balance")  # fmt: skip
    assert qm.limit_cycle(qm.QCNFluidModel(n_flows=10, capacity=5e9)).method == "trajectory"
    # an open loop (one flow at the port's rate) is judged by its linearisation (exact)
    assert qm.limit_cycle(qm.QCNFluidModel(n_flows=1)).method == "harmonic-balance"


def test_the_limit_cycle_of_one_flow_has_the_packets_period():
    # the packets at 5 Gb/s, 500 us (the validation's period row): the mean full cycle over
    # 0.3-3 s is 5.73-6.22 ms over seeds 0-2 (median 5.97 ms); its tolerance caps at 25 %.
    # Over 0.3-0.6 s it had spanned 5.6-49 ms, and the autocorrelation peak of one run picks
    # multiples of the cycle (51 ms from a 0.6 s run)
    lc = qm.limit_cycle(_one(rtt=500e-6))
    assert abs(lc.period_s - 5.97e-3) <= 0.25 * 5.97e-3


def test_amplitudes_belong_to_the_harmonic_balance():
    lc = qm.limit_cycle(_one(rtt=500e-6), amplitudes=[1e3, 1e4, 3e4])
    assert lc.method == "harmonic-balance"  # given amplitudes choose the describing functions
    with pytest.raises(ValueError, match="amplitudes: only method='harmonic-balance'"):
        qm.limit_cycle(_one(rtt=500e-6), amplitudes=[1e3, 1e4], method="trajectory")


def test_the_verdict_is_the_majority_of_its_seeds():
    # ten flows at 500 us: some seeds oscillate, some do not; the early-stopping vote must give
    # what all the seeds' majority gives
    from qcnmodel.analysis.timeseries import oscillation

    m = qm.QCNFluidModel(n_flows=10, rtt=500e-6, capacity=5e9)
    run = qm.config.defaults["models.verdict_run"]
    dt = run["record_dt"]
    votes = []
    for seed in range(run["seeds"]):
        q = m.simulate(run["duration"], start="idle", record_dt=dt, seed=seed).q.values
        qb = 0.5 * (q[1:] + q[:-1])
        votes.append(oscillation(qb[int(round(run["settle"] / dt)):], dt, m.params.qeq)[
            "verdict"] != "stable")  # fmt: skip
    assert 0 < sum(votes) < len(votes)
    assert m.trajectory_unstable() == (2 * sum(votes) > len(votes))


def test_the_sampled_queue_draws_frame_noise_by_default():
    m = qm.QCNFluidModel(n_flows=10, rtt=200e-6, capacity=5e9)
    base = m.simulate(0.05, start="idle", seed=2, record_dt=1e-3)
    on = m.simulate(0.05, start="idle", seed=2, record_dt=1e-3, frame_noise=True)
    off = m.simulate(0.05, start="idle", seed=2, record_dt=1e-3, frame_noise=False)
    np.testing.assert_array_equal(base.q.values, on.q.values)
    assert not np.array_equal(base.q.values, off.q.values)


def test_a_map_row_whose_trajectories_fail_is_marked_invalid(monkeypatch):
    import qcnmodel.analysis.stability as st

    real = st.trajectory_boundary

    def failing(model, *a, **kw):
        if model.n_flows == 10:
            raise ValueError("the model's trajectories failed at RTT 225 us (stalled)")
        return real(model, *a, **kw)

    monkeypatch.setattr(st, "trajectory_boundary", failing)
    ds = qm.stability_map(_one(), x_values=[1e-4, 2e-4], y_values=[1, 10])
    assert ds.valid.sel(n_flows=1).all() and not ds.valid.sel(n_flows=10).any()
    assert not ds.stable.sel(n_flows=10).any() and np.isnan(float(ds.critical_rtt.sel(n_flows=10)))


def test_a_map_row_that_cycles_at_small_rtts_keeps_its_stable_band():
    # 802.1Qau defaults at 10 Gb/s, N = 43: the packet simulator's queue cycles with the
    # timers in step at 20-100 us (2 of 3 seeds, 0.6 s runs), is stable at 200-450 us (0-1 of
    # 3) and cycles again at 600 us (3 of 3). The row has no critical RTT from 20 us; the map
    # marks the band where the model's runs are stable, and its end as the critical RTT.
    rtts = np.array([20e-6, 50e-6, 300e-6, 450e-6, 800e-6])
    ds = qm.stability_map(qm.QCNFluidModel(), x_values=rtts, y_values=[43])
    assert ds.stable.values[0].tolist() == [False, False, True, True, False]
    lo, hi = float(ds.stable_from_rtt[0]), float(ds.critical_rtt[0])
    assert 50e-6 < lo <= 300e-6 and 450e-6 < hi < 800e-6


def test_the_harmonic_balance_reports_no_cycle_at_a_rising_gain():
    """Loeb's criterion: a cycle is where the loop gain at the -180 deg crossing falls through 1
    as the amplitude grows; a gain rising through 1 is a threshold amplitude. At 802.1Qau, N =
    10, 100 us (stable: PM 17 deg, trajectories' critical RTT 251.5 us) the gain rises from 0.21
    to 1.6 over the scan, and a 1.7 ms, 51 KB "cycle" was reported there."""
    lc = qm.limit_cycle(qm.QCNFluidModel(n_flows=10, rtt=100e-6), method="harmonic-balance")
    assert lc.gains[0] < 1 < lc.gains[-1]  # through 1 upwards only (no falling crossing)
    assert not lc.exists and math.isnan(lc.period_s)
