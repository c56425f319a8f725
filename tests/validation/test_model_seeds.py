"""A stochastic model's prediction is estimated over seeds: its majority verdict and its median
quantities (the packet-fidelity model's trajectories draw the protocol's jitter, the sampled
flow and the sampled queue's frame phases)."""

import numpy as np

from qcnmodel import config
from qcnmodel.analysis.timeseries import oscillation
from qcnmodel.validation import pairs as P
from qcnmodel.validation.measure import recovery_time
from qcnmodel.validation.traces import model_seeds, model_trace


def test_the_stochastic_model_is_estimated_over_its_verdict_seeds():
    k = config.defaults["models.verdict_run"]["seeds"]
    assert k % 2 == 1  # a majority always exists
    assert model_seeds("packet", P.Case(10)) == tuple(range(k))
    assert model_seeds("paper", P.Case(10)) == (0,)  # deterministic: one trajectory


def test_the_oscillation_class_is_the_majority_of_the_seeds():
    # N = 10 at 500 us lies on the model's boundary: its seeds disagree among themselves
    case = P.Case(10, 500e-6)
    (got, *_) = P.check_oscillation(case, ["packet"])
    verdicts = []
    for seed in model_seeds("packet", case):
        tr = model_trace("packet", case, 0.6, seed=seed)
        verdicts.append(oscillation(tr.q[int(0.3 / tr.dt) :], tr.dt, case.params.qeq)["verdict"])
    unstable = sum(v != "stable" for v in verdicts)
    assert 0 < unstable < len(verdicts), verdicts  # a case where the rule matters
    assert (got.model != "stable") == (2 * unstable > len(verdicts))
    assert f"{unstable} of {len(verdicts)} model seeds unstable" in got.note
    assert P.model_unstable("packet", case) == (got.model != "stable")


def test_the_recovery_time_is_the_median_seed():
    case = P.Case(8, 20e-6, 1e9, 10e9)
    hs = (0.1, 0.6)
    (row,) = [r for r in P.check_recovery(case, hs, 1.0, ["packet"])]
    times = []
    for seed in model_seeds("packet", case):
        tr = model_trace("packet", case, 1.0, 1e-3, "constant", hs, seed=seed)
        times.append(recovery_time(tr.t, tr.thr, tr.dt, hs[1], case.line))
    assert all(t is not None for t in times)
    assert len(set(times)) > 1  # the seeds spread, so the median is a choice
    assert row.model == sorted(times)[len(times) // 2]
    assert "median of" in row.note


def test_the_period_row_states_the_spread_of_the_model_seeds():
    # one flow past its boundary: every seed cycles, their cycle lengths spread
    case = P.Case(1, 500e-6)
    (_, row) = P.check_oscillation(case, ["packet"])
    periods = []
    for seed in model_seeds("packet", case):  # the period over the runs continued
        tr = model_trace("packet", case, P.PERIOD_DURATION, P.PERIOD_BIN, seed=seed)
        periods.append(oscillation(tr.q[round(0.3 / tr.dt) :], tr.dt, case.params.qeq)["period_zc"])
    assert row.model == float(np.median(periods))
    lo, hi = min(periods) * 1e3, max(periods) * 1e3
    assert f"median of {len(periods)} seeds, {lo:.2f}-{hi:.2f} ms" in row.note


def test_the_simulated_side_is_pooled_over_its_seeds_the_same_way():
    from qcnmodel.validation.traces import sim_trace

    case = P.Case(1, 500e-6)
    cls, period = P.check_oscillation(case, ["packet"], seeds=(0, 1, 2))
    sims = [sim_trace(case, 0.6, s) for s in (0, 1, 2)]
    res = [oscillation(t.q[int(0.3 / t.dt) :], t.dt, case.params.qeq) for t in sims]
    unstable = sum(o["verdict"] != "stable" for o in res)
    assert f"{unstable} of 3 simulated seeds unstable" in cls.note
    assert (cls.simulated != "stable") == (2 * unstable > 3)
    longer = [sim_trace(case, P.PERIOD_DURATION, s, P.PERIOD_BIN) for s in (0, 1, 2)]
    res = [oscillation(t.q[round(0.3 / t.dt) :], t.dt, case.params.qeq) for t in longer]
    pool = [o for o in res if o["verdict"] != "stable"]  # every seed cycles
    assert len(pool) == 3
    assert period.simulated == float(np.median([o["period_zc"] for o in pool]))
    assert "3 simulated seeds" in period.parameters


def test_the_seed_count_is_bounded(monkeypatch):
    import pytest

    run = {**config.defaults["models.verdict_run"], "seeds": 10**9}
    monkeypatch.setitem(config.defaults, "models.verdict_run", run)
    with pytest.raises(ValueError, match=r"seeds: must be a whole number in \[1, "):
        model_seeds("packet", P.Case(10))  # no billion-entry tuple


def test_the_surfaces_run_the_validated_trajectories():
    """The runs that margins, check and the maps count (``trajectory_odds``) are the ones the
    validation compares with the packets: the same greedy sources (2 C / N offered from idle,
    the adapter's buffer), seeds, length and detector, so their odds are equal run for run.
    Both sides are computed here, neither from the other."""
    from qcnmodel.validation.network import SOURCE_BUFFER, source_rate
    from qcnmodel.validation.traces import model_of

    case = P.Case(20, 476e-6, 5e9)
    assert source_rate(20, 5e9, 10e9, "greedy") == 0.5e9 and SOURCE_BUFFER == 1.5e6
    surfaces = model_of("packet", case).trajectory_odds(9, None)
    assert surfaces == P._odds(P._model_traces("packet", case, P.DURATION, 9), case, P.SETTLE)
