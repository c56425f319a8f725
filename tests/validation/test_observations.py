"""Deck observations by protocol: metrics on synthetic traces, the suite wiring, one end to end."""

import math
import time

import numpy as np
import pytest

from qcnmodel.validation import obs_metrics as M
from qcnmodel.validation import observations as O
from qcnmodel.validation import suite
from qcnmodel.validation.observations_eval import evaluate

DT = 1e-3
T = np.arange(1, 401) * DT  # bin end times, 0.4 s
A, B = 0.05, 0.25  # hotspot


def test_steady_mask_is_second_half_of_the_hotspot():
    m = M.steady_mask(T, A, B)
    assert T[m][0] == pytest.approx(0.151) and T[m][-1] == pytest.approx(0.25)
    assert m.sum() == 100


def test_oscillation_mean_and_jitter_on_a_square_wave():
    q = np.where((np.arange(len(T)) // 5) % 2 == 0, 10e3, 30e3)  # 10 ms period, 20 KB p-p
    assert M.steady_mean(T, q, A, B) == pytest.approx(20e3)
    assert M.oscillation_std(T, q, A, B) == pytest.approx(10e3)
    flat = np.full_like(T, 20e3)
    assert M.oscillation_std(T, flat, A, B) == 0.0
    assert M.jitter(T, flat, A, B) == 0.0
    # the jitter sees only the jumps: 2 changes of 20 KB per 10 bins
    assert M.jitter(T, q, A, B) == pytest.approx(np.std(np.diff(q[M.steady_mask(T, A, B)])))
    assert M.jitter(T, q, A, B) > 0


def test_reaction_time_first_bin_below_twice_the_service_rate():
    svc = 1e9
    arr = np.full_like(T, 8.5e9)
    arr[T > A + 0.012] = 1.5e9  # the RLs cut 12 ms after the start
    assert M.reaction_time(T, arr, A, B, svc) == pytest.approx(0.013)
    assert M.reaction_time(T, np.full_like(T, 8.5e9), A, B, svc) is None
    # before the hotspot nothing counts
    early = np.full_like(T, 8.5e9)
    early[T <= A] = 0.0
    assert M.reaction_time(T, early, A, B, svc) is None


def test_underrun_needs_an_empty_queue_and_an_idle_port():
    svc = 10e9
    q = np.full_like(T, 50e3)
    thr = np.full_like(T, svc)
    assert M.underrun_fraction(T, q, thr, A, B, svc) == 0.0
    m = (T > 0.1) & (T <= 0.12)  # 20 bins empty and idle
    q[m], thr[m] = 0.0, 0.5 * svc
    n = ((T > A + M.UNDERRUN_SETTLE) & (T <= B)).sum()
    assert M.underrun_fraction(T, q, thr, A, B, svc) == pytest.approx(20 / n)
    thr[m] = svc  # empty but fully busy (a frame at a time): no underrun
    assert M.underrun_fraction(T, q, thr, A, B, svc) == 0.0


def test_flow_fluctuation_cv_of_10ms_means():
    steady = np.full((3, len(T)), 1e9)
    assert M.flow_fluctuation(T, steady, A, B) == pytest.approx(0.0)
    alt = steady.copy()
    blk = (np.arange(len(T)) // 10) % 2 == 0
    alt[0, blk] = 0.5e9
    alt[0, ~blk] = 1.5e9  # 10 ms blocks alternate: CV 0.5 for flow 0, 0 for the others
    assert M.flow_fluctuation(T, alt, A, B) == pytest.approx(0.5 / 3, rel=0.05)


def test_aggregate_settle_time_and_fair_share_jain():
    agg = np.full_like(T, 80e9)
    agg[(T > A) & (T <= A + 0.03)] = 40e9  # a 30 ms dip
    st = M.aggregate_settle_time(T, agg, A, B)
    assert 0.03 < st <= 0.04
    assert M.fair_share_jain([2.5, 2.5, 5.0], [2.5, 2.5, 5.0]) == pytest.approx(1.0)
    assert M.fair_share_jain([5.0, 0.0], [2.5, 2.5]) == pytest.approx(0.5)


def _trace(label, seed=1, q=None, arr=None, svc=1e9, **summary):
    n = len(T)
    return O.Trace(label, "qcn", seed, T, np.full(n, 20e3) if q is None else q,
                   np.full(n, svc), np.full(n, 8e9) if arr is None else arr,
                   np.full(n, 77e9), np.zeros(n), np.full((2, n), 1e9), svc, (A, B),
                   dict(summary))  # fmt: skip


def test_seed_average_and_missing_groups():
    from qcnmodel.validation.observations_eval import _v

    traces = {("x", 1): _trace("x", 1, recovery_time_s=0.1),
              ("x", 2): _trace("x", 2, recovery_time_s=0.2)}  # fmt: skip
    assert _v(traces, "x", O.recovery) == pytest.approx(0.15)
    traces[("x", 2)].summary["recovery_time_s"] = None
    assert _v(traces, "x", O.recovery) is None
    with pytest.raises(KeyError):
        _v(traces, "y", O.recovery)
    assert evaluate(traces) == []  # no group complete: no rows


def test_every_group_has_runs_and_an_evaluator():
    from qcnmodel.validation.observations_eval import GROUP_EVALUATORS

    assert set(O.RUNS) == set(GROUP_EVALUATORS) == {"S1", "S3", "S4", "S9", "S10", "S11"}
    labels = [s.label for g in O.RUNS.values() for s in g]
    assert len(labels) == len(set(labels))


def test_quick_validation_has_no_protocol_observations(monkeypatch):
    monkeypatch.setattr(suite, "plan", lambda quick: [])

    def boom(**kw):
        raise AssertionError("must not run in --quick")

    monkeypatch.setattr(O, "run_observations", boom)
    res = suite.run_validation(quick=True, decks_too=False)
    assert res.protocol_observations == []
    assert res.to_json()["protocol_observations"] == []
    fake = {"traces": {("x", 1): _trace("x")}, "wall_s": 0.0, "groups": []}
    monkeypatch.setattr(O, "run_observations", lambda **kw: fake)
    res = suite.run_validation(quick=True, decks_too=False, protocol_observations=True)
    assert res.protocol_observations == []  # no complete group in the fake traces


def test_observations_flag_is_registered():
    import argparse

    from qcnmodel.cli import validate

    p = argparse.ArgumentParser()
    validate.register(p.add_subparsers())
    args = p.parse_args(["validate", "--quick", "--observations"])
    assert args.observations and args.quick


@pytest.mark.slow
def test_s1_end_to_end():
    """The S1 group (og-hotspot, qcn/ecm/qcn-sonar, 2 seeds, + drift runs): about 10 s."""
    t0 = time.perf_counter()
    got = O.run_observations(groups=["S1"])
    rows = evaluate(got["traces"])
    assert [r.oid for r in rows] == [f"S1.{i}" for i in range(1, 9)]
    for r in rows:
        assert r.verdict in (O.YES, O.NO, O.PART, O.NA)
        assert r.measured and r.metric and r.runs
    # the row's numbers come from the traces: recompute the ECM oscillation
    ecm = [tr for (lab, _), tr in got["traces"].items() if lab == "S1 ecm"]
    sd = np.mean([O.osc(tr) for tr in ecm])
    assert f"ECM {sd / 1e3:.1f} KB" in rows[1].measured
    assert math.isfinite(sd)
    assert time.perf_counter() - t0 < 120


def test_one_run_end_to_end():
    """One og-hotspot run (ECM, 0.3 s): a Trace and its metrics from a real SimResult."""
    spec = O.RunSpec("e2e", "og-hotspot", "ecm", (("hotspot_start", 0.05),
                                                  ("hotspot_stop", 0.2)), 0.3)  # fmt: skip
    tr = O.trace_of(O._simulate(spec, 1), "e2e", O._service(spec))
    assert tr.service == 1e9 and tr.window == pytest.approx((0.05, 0.2))
    assert tr.flow_thr.shape[0] == 9  # the flows to n1
    rt = O.react(tr)
    assert rt is not None and 0 < rt < 0.15
    assert O.qmean(tr) > 0 and O.osc(tr) >= 0
    assert 0.0 <= O.under(tr) <= 1.0
    assert O.drops(tr) <= tr.summary["frames_dropped"]


def _deck_run(label: str, verdict: str | None):
    from qcnmodel.validation.decks import DeckRun

    z = np.zeros(1)
    osc = {} if verdict is None else {"verdict": verdict, "mean": 1e5}
    return DeckRun("000", label, z, z, z, z, {"hot_queue_max_bytes": 2e5}, osc)


def _lag_claim(sweep) -> str:
    from qcnmodel.validation.decks import observations

    (row,) = [o for o in observations([], [], sweep) if "sampling lag" in o["observation"]]
    return row["reproduced"]


def test_the_sampling_lag_claim_needs_a_run_above_the_lag():
    """Deck 000: 'whenever delay exceeds sampling lag the loop becomes unstable' (lag 1.2 ms
    at the 1 Gb/s port; loop = 2 x RTT). Runs all below the lag test nothing; a run without a
    verdict (its window too short) is no evidence either way."""
    below = [_deck_run(f"S1 W=2 rtt={r}us", "stable") for r in (2, 50, 500)]
    assert _lag_claim(below).startswith("not tested")
    above = [_deck_run("S1 W=2 rtt=1000us", "underflow")]
    assert _lag_claim(below + above) == "yes"
    assert _lag_claim(below + [_deck_run("S1 W=2 rtt=1000us", None)]).startswith("not tested")
    assert _lag_claim(below + [_deck_run("S1 W=2 rtt=1000us", "stable")]).startswith("no:")
