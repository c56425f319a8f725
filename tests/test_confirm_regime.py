"""``check --confirm``: a packet queue that shows no regime confirms nothing, the report's
paragraph says what ran, a port faster than the line rate is refused up front, and a verdict
the model's own runs do not back is said so.

The packet runs are replaced by synthetic hot-queue traces (classified by the confirmation's
own :func:`~qcnmodel.studies.confirm.classify`), so each case runs in milliseconds.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from qcnmodel.params import QCNParams
from qcnmodel.studies import confirm

DT = 50e-6  # the confirmation's trace bin
P = QCNParams.preset("802.1qau")


def _trace(kind: str, duration: float = 0.4) -> dict:
    """A packet run's result on a synthetic hot queue of ``duration`` s: ``"draining"`` (a
    start-up backlog falling from 84 to 70 MB through the run, as 500 flows into a 5 Gb/s
    port give in 0.4 s), ``"climbing"`` (an overloaded port: 160 -> 245 MB), ``"idle"`` (an
    uncongested port; its class is given, not detected, so that the case does not depend on
    the detector's version) or ``"swinging"`` (a sustained cycle about Qeq)."""
    t = np.arange(int(round(duration / DT))) * DT
    wiggle = 2e3 * np.sin(2 * np.pi * t / 1.3e-4)
    q = {
        "draining": 84e6 - 14e6 * t / t[-1] + wiggle,
        "climbing": 160e6 + 85e6 * t / t[-1] + wiggle,
        "idle": np.zeros(t.size),
        "swinging": P.qeq * (1 + 0.5 * np.sin(2 * np.pi * t / 2e-3)),
    }[kind]
    out = confirm.classify(q[t > duration / 2], DT, P.qeq, P.frame_size)
    if kind == "idle":
        out["verdict"] = "idle"
    return {**out, "time_s": t, "queue_bytes": q}


def _point(stable: bool, judged_by: str = "linearisation", **kw) -> dict:
    """A confirmation point as :func:`~qcnmodel.studies.confirm.confirm_points` gives it."""
    return {"n_flows": 500, "rtt_s": 100e-6, "role": "worst point of the ranges",
            "stable": stable, "phase_margin_deg": 20.0 if stable else -50.4,
            "judged_by": judged_by, "time_constant_s": 0.02, "skip": None, **kw}  # fmt: skip


def _confirm(monkeypatch, points: list[dict], kinds: list[str], duration: float = 0.4):
    """``confirm_verdict`` on ``points`` with the packet runs replaced by the traces
    ``kinds`` (one per run, in order)."""
    runs = iter(kinds)
    monkeypatch.setattr(confirm, "confirm_points", lambda *a, **k: [dict(p) for p in points])
    monkeypatch.setattr(confirm, "_announce_compile", lambda progress: None)
    monkeypatch.setattr(confirm, "simulate_point", lambda **kw: _trace(next(runs), duration))

    class Model:
        capacity = None

    return confirm.confirm_verdict(P, None, None, Model(), duration=duration, jobs=1)


def test_the_synthetic_traces_are_the_classes_they_stand_for():
    assert _trace("draining")["verdict"] == "drifting"
    assert _trace("draining")["drift"] < -P.qeq
    assert _trace("climbing")["verdict"] == "drifting"
    assert _trace("swinging")["verdict"] == "oscillating"


@pytest.mark.parametrize("stable", [False, True])
@pytest.mark.parametrize(("kind", "why"), [("draining", "start-up backlog is still draining"),
                                           ("idle", "the port is idle")])  # fmt: skip
def test_a_queue_without_a_regime_confirms_neither_prediction(monkeypatch, stable, kind, why):
    # a draining backlog was "unstable" (anything not stable was) and so agreed with an
    # unstable model and contradicted a stable one; an idle port reads the same way
    conf = _confirm(monkeypatch, [_point(stable)], [kind])
    row = conf["rows"][0]
    assert (row["outcome"], conf["outcome"], conf["agree"]) == ("inconclusive",) * 2 + (None,)
    assert row["agree"] is None and why in row["open_reason"]
    assert "no regime" in row["open_reason"] or "confirms neither" in row["open_reason"]
    from qcnmodel.studies.check_text import confirmation_lines

    text = "\n".join(confirmation_lines(conf))
    assert "INCONCLUSIVE (0 of 1 points agree, 1 inconclusive" in text
    assert f"-> inconclusive ({row['open_reason']})" in text


def test_a_sustained_cycle_still_confirms_an_unstable_prediction(monkeypatch):
    # the regime-less classes only: a cycle agrees with "unstable", contradicts "stable"
    assert _confirm(monkeypatch, [_point(False)], ["swinging"])["outcome"] == "agree"
    assert _confirm(monkeypatch, [_point(True)], ["swinging"])["outcome"] == "DISAGREE"


def test_an_overloaded_port_is_still_confirmed_by_a_climbing_queue(monkeypatch):
    # guard (passes before and after the change): where the model has no equilibrium, the
    # prediction is a climbing queue, so "drifting" upwards confirms it; a drain does not
    over = _point(False, judged_by=confirm.OVERLOAD, time_constant_s=0.5)
    assert _confirm(monkeypatch, [over], ["climbing"], 3.0)["outcome"] == "agree"
    assert _confirm(monkeypatch, [over], ["draining"], 3.0)["outcome"] == "DISAGREE"


def test_runs_without_a_regime_count_for_neither_side_of_the_majority():
    from qcnmodel.studies.confirm import _majority

    def r(seed, verdict):
        return {"seed": seed, "verdict": verdict}

    runs = [r(0, "stable"), r(1, "drifting"), *(r(s, "oscillating") for s in (2, 3, 4, 5)),
            *(r(s, "stable") for s in (6, 7, 8))]  # fmt: skip
    m = _majority(runs)  # 4 unstable, 4 stable, 1 draining: no side has 5 of 9
    assert (m["verdict"], m["runs_unstable"], m["runs_open"], m["shown_seed"]) == (
        "drifting", 4, 1, 1)  # fmt: skip
    runs[0] = r(0, "underflow")  # 5 of 9 unstable: a majority
    assert _majority(runs)["verdict"] == "oscillating"
    assert _majority([r(0, "idle")])["verdict"] == "idle"


def test_the_odds_test_says_when_the_models_own_runs_do_not_back_its_verdict():
    # N = 28 at 2 us, 10 Gb/s: the verdict "unstable" comes from the flow count's runs
    # cycling at 20 us, the smallest RTT they are run at; at 2 us itself 4 of 9 of the
    # model's runs and 3 of 9 packet runs are unstable
    from qcnmodel.studies.confirm import _odds_test

    class Model:
        def replace(self, **kw):
            return self

        def trajectory_verdicts(self):
            return ("oscillating",) * 4 + ("stable",) * 5

    pt = {"n_flows": 28, "rtt_s": 2e-6, "stable": False, "judged_by": "trajectories",
          "searched_from_s": 20e-6}  # fmt: skip
    out = _odds_test(Model(), pt, {"runs_unstable": 3, "runs": 9})
    assert out["conclusive"] is False and out["odds_p"] == pytest.approx(1.0)
    why = out["open_reason"]
    assert "the model's own runs at this point do not support its verdict (unstable)" in why
    assert (
        "4 of 9 of them are unstable" in why
        and "(3 of 9 runs unstable" in why
        and "near one half" not in why
    )
    assert "extrapolated" in why and "20 us" in why
    # where the runs do back the verdict (5 of 9 unstable), the odds are near one half
    assert "near one half" in _odds_test(
        type("M5", (Model,), {"trajectory_verdicts": lambda self: ("oscillating",) * 5
                              + ("stable",) * 4})(), pt, {"runs_unstable": 3, "runs": 9}
    )["open_reason"]  # fmt: skip


def test_an_extrapolated_verdict_is_noted_even_where_the_packets_agree(monkeypatch):
    from qcnmodel.studies.check_text import confirmation_lines

    pt = _point(False, judged_by="trajectories", n_flows=28, rtt_s=2e-6,
                searched_from_s=20e-6)  # fmt: skip
    conf = _confirm(monkeypatch, [pt], ["swinging"] * 9, duration=0.6)
    row = conf["rows"][0]
    assert row["outcome"] == "agree" and "extrapolated" in row["note"]
    assert f"    note: {row['note']}" in confirmation_lines(conf)


def test_the_report_paragraph_names_the_points_run_and_the_port_rate(monkeypatch):
    # only the fallback worst point ran (no finite critical RTT), at a 5 Gb/s port; the
    # paragraph said "at the parameter set's line rate ... at 0.8 x and 1.25 x the model's
    # critical RTT for the worst N ... and at the worst point"
    from qcnmodel.studies.confirm_view import describe

    role = ("worst point of the ranges (fallback: the model has no finite critical RTT at any "
            "N of the ranges)")  # fmt: skip
    conf = _confirm(monkeypatch, [_point(False, role=role)], ["swinging"])
    conf = {**conf, "capacity_bps": 5e9,
            "skipped": [{"n_flows": 500, "rtt_s": 0.1, "role": "largest phase margin",
                         "predicted_stable": True,
                         "reason": "RTT too long for a 0.4 s run"}]}  # fmt: skip
    text = describe(conf)
    assert "0.8 x" not in text and "1.25 x" not in text and "line rate ..." not in text
    assert f"at the {role} (N = 500, RTT = 100 us): 1 of 1 point agrees" in text
    assert "congestion point serving at 5 Gb/s, below the sources' line rate of 10 Gb/s" in text
    assert ("Not simulated: the largest phase margin (N = 500, RTT = 1e+05 us), RTT too long "
            "for a 0.4 s run.") in text  # fmt: skip
    assert "at the sources' line rate, 10 Gb/s" in describe({**conf, "capacity_bps": 1e10})


def test_the_confirmation_records_the_port_rate_it_ran_at(monkeypatch):
    conf = _confirm(monkeypatch, [_point(False)], ["swinging"])
    assert (conf["capacity_bps"], conf["line_rate_bps"]) == (P.line_rate, P.line_rate)


def test_a_port_faster_than_the_line_rate_is_refused_before_anything_runs(monkeypatch):
    def ran(*a, **k):
        raise AssertionError("ran")

    monkeypatch.setattr(confirm, "confirm_points", ran)

    class Fast:
        capacity = 15e9

    with pytest.raises(ValueError, match=r"capacity: .* in \(0, 10\] Gb/s .*got 15 Gb/s"):
        confirm.confirm_verdict(P, None, None, Fast(), duration=0.4, jobs=1)


@pytest.mark.parametrize("where", ["flag", "file"])
def test_check_refuses_confirm_at_a_port_above_the_line_rate_before_the_analysis(
    monkeypatch, capsys, tmp_path, where
):
    # the analysis ran for 11 s, then the packet stage failed and all output was lost
    import qcnmodel.studies.check as check_mod
    from qcnmodel.cli import main

    def analysed(*a, **k):
        raise AssertionError("the analysis ran")

    monkeypatch.setattr(check_mod, "check_params", analysed)
    f = tmp_path / "fast.toml"
    f.write_text('preset = "802.1qau"\n[ranges]\ncapacity = "15Gbps"\n')
    argv = ["--preset", "802.1qau", "--rate", "15Gbps"] if where == "flag" else [str(f)]
    argv = ["check", *argv, "--flows", "1..3:3", "--rtt", "1ms", "--no-recommend", "--quiet"]
    assert main([*argv, "--confirm"]) == 2
    err = capsys.readouterr().err
    assert ("rate: " if where == "flag" else "capacity: ") in err
    assert "(0, 10] Gb/s" in err and "--confirm" in err and "got 15 Gb/s" in err
    with pytest.raises(AssertionError, match="the analysis ran"):  # without it: analysed
        main(argv)


def test_a_saved_confirmation_without_its_rate_is_described_without_one():
    from qcnmodel.studies.confirm_view import describe

    row = {"n_flows": 10, "rtt_s": 1e-4, "role": "worst point of the ranges", "runs": 1,
           "conclusive": True, "agree": True}  # fmt: skip
    text = describe({"rows": [row], "duration_s": 0.4, "seed": 0})
    assert "Gb/s" not in text and json.dumps(text)


# a queue that still climbs at the longest run allowed (no longer run can decide)
@pytest.mark.parametrize("stable, word", [(True, "DISAGREE"), (False, "agree")])
def test_a_queue_climbing_at_the_longest_run_is_not_stable(monkeypatch, stable, word):
    # 10 flows into a 0.1 Gb/s port at 30 ms: the packets' queue climbs by megabytes in 8 of
    # 9 runs of 10 s, which was "inconclusive: a longer run can decide" (none is allowed)
    conf = _confirm(monkeypatch, [_point(stable)], ["climbing"], confirm.MAX_DURATION)
    row = conf["rows"][0]
    assert (row["outcome"], conf["outcome"]) == (word, word)
    assert row["conclusive"] and row["packets_climb"]
    assert "the packets do not hold a queue here" in row["note"]
    from qcnmodel.studies.check_text import confirmation_lines

    text = "\n".join(confirmation_lines(conf))
    assert "do not hold a queue" in text and f"-> {word}" in text


def test_a_queue_climbing_in_a_shorter_run_stays_inconclusive(monkeypatch):
    # guard: below the longest run a longer run can still decide
    conf = _confirm(monkeypatch, [_point(True)], ["climbing"], 1.0)
    row = conf["rows"][0]
    assert row["outcome"] == "inconclusive" and "a longer run can decide" in row["open_reason"]


def test_a_drain_at_the_longest_run_says_no_longer_run_is_allowed(monkeypatch):
    conf = _confirm(monkeypatch, [_point(True)], ["draining"], confirm.MAX_DURATION)
    row = conf["rows"][0]
    assert row["outcome"] == "inconclusive"
    assert "no run longer than this one is allowed" in row["open_reason"]


def test_the_majority_counts_the_climbing_runs():
    from qcnmodel.studies.confirm_judge import _majority, climbing

    runs = [{"seed": s, "verdict": "drifting", "drift": 5 * P.qeq} for s in range(8)]
    runs.append({"seed": 8, "verdict": "stable", "drift": 0.0})
    m = _majority(runs)
    assert (m["verdict"], m["runs_climbing"], m["runs_open"]) == ("drifting", 8, 8)
    assert climbing(m, longest=True) and not climbing(m, longest=False)
