"""How a packet confirmation (:mod:`.confirm`) judges one point: the packets' majority over
its runs, whether it agrees with the model's prediction, and when it cannot decide.

**Verdicts that decide nothing.** The packets' classes (:func:`.confirm.classify`) are
*stable*, the unstable ones (*oscillating*, *underflow*), and two that show no regime at
all (:data:`OPEN_VERDICTS`): *drifting*, a queue that still trends through the analysed
window by more than Qeq (a start-up backlog still draining, or a queue still filling), and
*idle*, a port whose queue sits at empty (the detector's class for a queue empty part of
the time with a spread below one frame: an uncongested port, or one held within a frame of
empty). Neither confirms stability nor instability,
so a point whose packets show no regime is *inconclusive*, whatever the model predicts
(:func:`no_regime`), with the reason in its row. The one exception is a point the model
calls overloaded (no equilibrium): there the prediction is that the queue climbs, and a
queue that climbs through the analysed half and never falls below Qeq
(:func:`qcnmodel.validation.overload.climbs`) confirms it. And a queue that still climbs in
most runs at the longest run allowed is no longer a start-up that a longer run could see
end: the packets do not hold a queue there (:func:`climbing`), which is not stable, and the
point is judged so (a stable prediction is then contradicted).

**Odds.** Where the model's trajectories judge a point, its verdict is a majority of runs
from idle, and so is the packets' (:func:`_majority`); a contradiction must differ
significantly from the model's own runs (:func:`_odds_test`). That test compares the
packets with the model's runs, not with the verdict: where the verdict rests on the flow
count's critical RTT or stable band rather than on runs at the point, the runs may not
support it, and the row says so, as it says when the point lies below the RTTs the
trajectories were run at (the verdict there is extrapolated).
"""

from __future__ import annotations

from collections import Counter

__all__ = [
    "ODDS_ALPHA",
    "OPEN_VERDICTS",
    "MAX_DURATION",
    "OVERLOAD",
    "climbing",
    "model_word",
    "no_regime",
    "outcome",
    "tally",
]

#: ``judged_by`` of a point where the model has no equilibrium (the port stays overloaded)
OVERLOAD = "overload"
#: longest packet run (s): the longest ``check --confirm`` accepts and chooses automatically
MAX_DURATION = 10.0
#: significance level at which the packets' count of unstable runs must differ from the
#: model's for a contradiction where its trajectories judge (Fisher's exact test; the
#: conventional 5 %)
ODDS_ALPHA = 0.05
#: the packets' classes that show no regime: a queue still trending through the window
#: (:func:`.confirm.classify`) and an uncongested port (the detector's *idle*)
OPEN_VERDICTS = ("drifting", "idle")


def _majority(runs: list[dict]) -> dict:
    """One row's packet result from its runs (in seed order), with the numbers and trace of
    the first run of the verdict, and ``runs``, ``runs_unstable``, ``runs_open`` and
    ``shown_seed``.

    A side needs more than half of all runs: *stable*, or unstable (then the most frequent
    unstable class). Runs that show no regime (:data:`OPEN_VERDICTS`) count for neither; when
    they leave both sides without a majority, the verdict is their most frequent class (the
    point is then inconclusive, :func:`no_regime`). A tie without such runs is stable (not a
    majority unstable).
    """
    n = len(runs)
    decided = [r["verdict"] for r in runs if r["verdict"] not in OPEN_VERDICTS]
    unstable = Counter(v for v in decided if v != "stable")
    opened = Counter(r["verdict"] for r in runs if r["verdict"] in OPEN_VERDICTS)
    k, o = sum(unstable.values()), sum(opened.values())
    if 2 * k > n:
        verdict = unstable.most_common(1)[0][0]
    elif 2 * (n - k - o) > n or o == 0:
        verdict = "stable"
    else:
        verdict = opened.most_common(1)[0][0]
    shown = next(r for r in runs if r["verdict"] == verdict)
    up = sum(_climbs(r) for r in runs)
    return {**{key: v for key, v in shown.items() if key != "seed"}, "runs": n,
            "runs_unstable": int(k), "runs_open": int(o), "runs_climbing": int(up),
            "shown_seed": int(shown["seed"])}  # fmt: skip


def _climbs(run: dict) -> bool:
    """Whether one packet run's queue climbs through its analysed half (class *drifting*,
    upward)."""
    return run.get("verdict") == "drifting" and float(run.get("drift", 0.0)) > 0


def climbing(run: dict, longest: bool) -> bool:
    """Whether the packets' queue climbs through the analysed half by more than Qeq (class
    *drifting*, upward) in most of the point's runs, ``run`` (:func:`_majority`), and
    ``longest``: no longer run is allowed. The packets then do not hold a queue there."""
    n = int(run.get("runs", 1))
    up = int(run.get("runs_climbing", int(_climbs(run))))
    return bool(longest) and 2 * up > n


def no_regime(pt: dict, run: dict, longest: bool = False) -> str | None:
    """Why the packets' result ``run`` at point ``pt`` decides nothing, or None.

    The packets' majority is a class of :data:`OPEN_VERDICTS` (module docstring), except at
    a point the model calls overloaded (there a climbing queue is the prediction) and where
    most runs' queue climbs at the longest run allowed (``longest``, :func:`climbing`). The
    reason names the class's evidence: the queue's trend, or the share of empty bins.
    """
    verdict = run.get("verdict")
    if pt.get("judged_by") == OVERLOAD or verdict not in OPEN_VERDICTS:
        return None
    if climbing(run, longest):
        return None
    if verdict == "drifting":
        drift = float(run.get("drift", 0.0))
        how = "the start-up backlog is still draining" if drift < 0 else "the queue still fills"
        then = ("no run longer than this one is allowed, so the packets cannot decide here"
                if longest else f"a longer run can decide (at most {MAX_DURATION:g} s: "
                f"--confirm {MAX_DURATION:g}s)")  # fmt: skip
        why = (f"{how} (the queue trends by {drift / 1e3:+.3g} KB across the analysed half, "
               "more than Qeq): no regime is reached, so the run is too short for the "
               f"start-up to end and says nothing about stability; {then}")  # fmt: skip
    else:
        why = (f"the port is idle: its queue is empty in {run.get('underflow', 0.0):.0%} of "
               "the bins and spreads by less than one frame, with no standing queue to hold "
               "or to swing about, so it confirms neither stability nor instability")  # fmt: skip
    n, o = int(run.get("runs", 1)), int(run.get("runs_open", 1))
    if n > 1:
        why = (f"{o} of {n} runs show no regime, so neither stable nor unstable runs are a "
               f"majority; in the run shown {why}")  # fmt: skip
    return why


def _agrees(pt: dict, run: dict, qeq: float) -> bool:
    """The packets' run agrees with the model's point: stable exactly where predicted; at a
    flow count the model calls overloaded, the queue climbs through the analysed half and
    never falls below Qeq (:func:`qcnmodel.validation.overload.climbs`, as in the
    validation's largest-N-held rows). Only meaningful where :func:`no_regime` is None."""
    if pt["judged_by"] == OVERLOAD:
        from qcnmodel.validation.overload import climbs

        return climbs(run["time_s"], run["queue_bytes"], qeq)[0]
    return (run["verdict"] == "stable") == pt["stable"]  # the majority's, with several runs


def judge(pt: dict, run: dict, qeq: float, conclusive: bool, longest: bool = False) -> dict:
    """The row's ``conclusive``, ``agree`` and, when the packets show no regime,
    ``open_reason`` (``agree`` is then None: there is nothing to compare). ``conclusive``:
    whether the run is long enough for the point's mode; ``longest``: whether no longer run
    is allowed. Where most runs' queue climbs at the longest run (:func:`climbing`), the
    packets do not hold a queue: not stable, said in ``note``, with ``packets_climb``."""
    why = no_regime(pt, run, longest)
    if why is not None:
        return {"conclusive": False, "agree": None, "open_reason": why}
    if pt.get("judged_by") != OVERLOAD and climbing(run, longest):
        n, up = int(run.get("runs", 1)), int(run.get("runs_climbing", 1))
        return {"conclusive": True, "agree": not pt["stable"], "packets_climb": True,
                "note": f"the packets do not hold a queue here: it climbs through the analysed "
                        f"half by more than Qeq in {up} of {n} runs (by "
                        f"{float(run.get('drift', 0.0)) / 1e3:+.3g} KB in the run shown) at the "
                        "longest run allowed, which is not stable"}  # fmt: skip
    return {"conclusive": bool(conclusive), "agree": _agrees(pt, run, qeq)}


def extrapolated(pt: dict) -> str | None:
    """A note for a point judged by the model's trajectories that lies below the smallest RTT
    they were run at (``searched_from_s``): the verdict there is extrapolated."""
    lo = pt.get("searched_from_s")
    if pt.get("judged_by") != "trajectories" or lo is None or not pt["rtt_s"] < lo:
        return None
    return (f"the model's verdict here is extrapolated: its trajectories' critical RTT is "
            f"searched from {lo * 1e6:.4g} us, above this RTT")  # fmt: skip


def _odds_test(model, pt: dict, run: dict, climb: bool = False) -> dict:
    """Where the packets' majority contradicts the model's trajectory verdict: the model's
    own runs at the point (``model_runs_unstable`` of ``model_runs``) and Fisher's exact
    test (two-sided) of the two counts, ``odds_p`` (the packets' runs that show no regime
    are left out, but where ``climb`` the runs whose queue climbs count as unstable). Unless
    the counts differ at the :data:`ODDS_ALPHA` level, the point is inconclusive
    (``open_reason`` says why): both sides' odds lie near one half, or the model's own runs
    at the point do not support its verdict (their majority is the packets', and the verdict
    comes from the flow count's critical RTT or band)."""
    from scipy.stats import fisher_exact

    verdicts = model.replace(
        n_flows=int(pt["n_flows"]), rtt=float(pt["rtt_s"])
    ).trajectory_verdicts()
    km, m = sum(v != "stable" for v in verdicts), len(verdicts)
    up = int(run.get("runs_climbing", 0)) if climb else 0
    kp = int(run["runs_unstable"]) + up
    mp = int(run["runs"]) - int(run.get("runs_open", 0)) + up
    p = float(fisher_exact([[kp, mp - kp], [km, m - km]]).pvalue)
    out = {"model_runs_unstable": int(km), "model_runs": int(m), "odds_p": p}
    if p >= ODDS_ALPHA:
        out["conclusive"] = False
        fisher = f"Fisher's exact test, p = {p:.2g}"
        if (2 * km > m) == bool(pt.get("stable")):  # their majority is not the verdict
            word = "stable" if pt.get("stable") else "unstable"
            out["open_reason"] = (
                f"the model's own runs at this point do not support its verdict ({word}): "
                f"{km} of {m} of them are unstable, and the packets side with them ({kp} of "
                f"{mp} runs unstable; {fisher})"
            )
        else:
            out["open_reason"] = (
                f"the odds are near one half on both sides: {kp} of {mp} packet runs and {km} "
                f"of {m} model runs unstable, not different at the {ODDS_ALPHA:g} level "
                f"({fisher})"
            )
        note = extrapolated(pt)
        if note:
            out["open_reason"] += "; " + note
    return out


def model_word(row: dict) -> str:
    """The model's prediction at a confirmation row: stable, unstable or overloaded."""
    if row.get("judged_by") == OVERLOAD:
        return "overloaded"
    return "stable" if row["predicted_stable"] else "unstable"


def outcome(row: dict) -> str:
    """'agree', 'DISAGREE' or 'inconclusive' (the run cannot hold the point's mode, the
    packets show no regime, or the odds cannot tell: ``open_reason``)."""
    if not row.get("conclusive", True):
        return "inconclusive"
    return "agree" if row["agree"] else "DISAGREE"


def tally(rows: list[dict]) -> dict:
    """The overall answer; each row gains its ``outcome``. ``outcome`` (the text's word):
    ``"DISAGREE"``, else ``"agree"`` if a point agrees, else ``"inconclusive"``; ``agree``: True,
    False or None (nothing conclusive); ``points_agree``, ``points_inconclusive``: their rows."""
    for r in rows:
        r["outcome"] = outcome(r)
    words = [r["outcome"] for r in rows]
    word = "DISAGREE" if "DISAGREE" in words else "agree" if "agree" in words else "inconclusive"
    return {"agree": {"DISAGREE": False, "agree": True}.get(word), "outcome": word,
            "points_agree": words.count("agree"),
            "points_inconclusive": words.count("inconclusive")}  # fmt: skip
