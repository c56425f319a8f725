"""Confirm a check's verdict with packets (``qcnmodel check --confirm``).

The analytical verdict of :func:`qcnmodel.studies.check.check_params` is put to the packet
simulator at the worst-case points of the checked ranges (:func:`confirm_points`):

* the *worst N*: the flow count of the grid with the smallest positive, finite critical RTT
  (the binding constraint of the headline). At that N the simulator runs at 0.8 x and
  1.25 x the model's critical RTT, where the model predicts stable and unstable: the two
  points test the predicted boundary from both sides;
* the worst point of the ranges (the N and RTT with the smallest phase margin), when it is
  not one of those two;
* when no N has such a critical RTT (the model is stable at every N up to the end of its
  search, or has no positive phase margin at any RTT), or the boundary is too long for the
  run, the worst point and, when that is predicted unstable, the point with the largest
  phase margin; the rows' ``role`` says why.

**Points judged by the model's trajectories.** Where the model judges a point by its
nonlinear trajectories (:attr:`boundary_method` ``"trajectories"``), its verdict is a
statement about odds: most of its runs from idle (``config.defaults["models.verdict_run"]``:
9 seeds, 0.6 s, judged after 0.3 s) oscillate or do not. One packet run cannot confirm odds
(at N = 28, RTT = 2 us, 10 Gb/s, 4 of 6 packet runs of 2 s oscillate: one run contradicts
the majority a third of the time). There the packets run as often as the model (seeds
``seed`` .. ``seed + 8``) and their majority is compared with the model's, as the
validation compares odds (:func:`runs_at`); the automatic run length is the model's own run
(its analysed second half is the model's window), and a shorter run given by the user is
inconclusive there. Where the packets' majority and the model's verdict differ, the
model's own runs at the point are counted too: unless the two counts differ significantly
(Fisher's exact test at :data:`ODDS_ALPHA`), the odds lie near one half on both sides and
the point is inconclusive, not a contradiction.

A point is simulated only when the analysed second half of the run holds at least
:data:`MIN_RTTS` of its RTTs; the others are listed as not simulated, with the run length
they would need.

The points run in parallel (:func:`confirm_verdict`, ``jobs``) with the sweep's workers
(:mod:`qcnmodel.studies.sweep`: forked from this process once the simulator is compiled, so
no worker compiles it again); each run's seed is fixed by its point (``seed``, and ``seed +
j`` for the j-th run of a point judged by the trajectories), so the results are those of a
sequential run, bit for bit.

Each point runs on the single bottleneck of the validation suite
(:func:`qcnmodel.validation.network.bottleneck_for`: N greedy sources, one switch whose
egress port to the sink is the congestion point, link delays set so that the CP -> RP -> CP
loop delay equals the RTT), at the parameter set's line rate, frame size and CP latency; a
point whose RTT is below that network's shortest loop delay (one frame's serialisation plus
the CP latency) is listed as not simulated. The hot queue over the second half of the run is
classified by the oscillation detector (:func:`qcnmodel.analysis.timeseries.oscillation`:
*stable*, *oscillating*, *underflow* or *idle*; :func:`classify` adds *drifting* for a queue
that trends by more than Qeq across the window); a point agrees when the packets are stable
exactly where the model predicts stability. A queue still drifting (the start-up backlog
still draining) or idle (a queue sitting at empty) shows no regime and confirms neither
prediction: such a point is *inconclusive*, with the reason, except where the model calls
the port overloaded and a climbing queue is its prediction (:mod:`.confirm_judge`). The
congestion point serves at the check's port rate (``capacity``), at most the sources' line
rate (:func:`check_rate`).

**Run length.** Near the boundary the loop's slowest mode decays (or grows) slowly: its
time constant follows from the model itself (:func:`mode_time_constant`, the first-order
shift of the closed-loop pole from the gain crossover), and the packets can only tell
stable from unstable once the start-up transient has died out. By default every run is long
enough for the first half to hold :data:`SETTLE_TAUS` time constants of the slowest point
(at least :data:`DEFAULT_DURATION`, at most 10 s); a point whose time constant the run
cannot hold (a run length given by the user, or the 10 s cap) is reported as
*inconclusive*, not as agreement or disagreement. A confirmation is a smoke test of the
verdict, not a validation: ``qcnmodel validate`` does the full comparison.
"""

from __future__ import annotations

import sys

import numpy as np

from qcnmodel.analysis.boundary import WINDOW_RTTS
from qcnmodel.params import QCNParams
from qcnmodel.studies.confirm_judge import (  # noqa: F401 (the judgement's names, here too)
    MAX_DURATION,
    ODDS_ALPHA,
    OPEN_VERDICTS,
    OVERLOAD,
    _agrees,
    _majority,
    _odds_test,
    extrapolated,
    judge,
    model_word,
    no_regime,
    outcome,
    tally,
)

__all__ = [
    "DEFAULT_DURATION",
    "check_duration",
    "check_rate",
    "classify",
    "confirm_jobs",
    "confirm_points",
    "confirm_verdict",
    "drop_traces",
    "mode_time_constant",
    "no_regime",
    "outcome",
    "runs_at",
    "trajectory_run",
    "worst_n",
]

#: default packet run length (s); the second half is analysed
DEFAULT_DURATION = 0.4
#: trace bin (s) for the oscillation detector
BIN = 50e-6
#: the predicted boundary is tested at these multiples of the critical RTT (stable, unstable)
FACTORS = (0.8, 1.25)
#: the boundary points need the analysed half of the run to hold at least this many RTTs
#: (the rule the model's trajectory verdicts follow too)
MIN_RTTS = WINDOW_RTTS
#: the settling half of a run must hold this many time constants of the point's slowest
#: mode (e^-3 = 5 %: a start-up swing of 20 Qeq is then within the detector's Qeq/4 band
#: after ~4.4 time constants; 3 is the least that lets the detector see the mode's sign)
SETTLE_TAUS = 3.0


def worst_n(critical_rtt_s: dict) -> tuple[int, float] | None:
    """``(N, critical RTT)`` with the smallest positive, finite critical RTT, or None."""
    finite = {int(n): float(c) for n, c in critical_rtt_s.items() if np.isfinite(c) and c > 0}
    if not finite:
        return None
    n = min(finite, key=lambda k: (finite[k], k))
    return n, finite[n]


def confirm_points(result, ranges, model, duration: float = DEFAULT_DURATION,
                   memo: dict | None = None) -> list[dict]:  # fmt: skip
    """The (N, RTT) points to simulate, with ``model``'s prediction at each (see module).

    Parameters
    ----------
    result : CheckResult
        The analytical check (its ``worst_point`` and ``critical_rtt_s`` are used).
    ranges : CheckRanges
        Its ranges.
    model : loop model
        The checked model (``replace(n_flows=, rtt=)`` is used).
    duration : float
        The packet run length (s): a boundary whose 1.25 x critical RTT does not fit
        :data:`MIN_RTTS` times into the analysed half is not simulated.
    memo : dict, optional
        The model's predictions by (N, RTT), reused across calls.

    Returns
    -------
    list of dict
        ``n_flows``, ``rtt_s``, ``role``, the model's ``stable`` and ``phase_margin_deg``
        there, and ``skip``: None, or why the point is not simulated (its RTT does not fit
        :data:`MIN_RTTS` times into the analysed half of the run).
    """
    wp = result.worst_point
    n_w, rtt_w = int(wp["n_flows"]), float(wp["rtt_s"])
    points = []
    found = worst_n(result.critical_rtt_s)
    why = None
    if found is None:
        why = "the model has no finite critical RTT at any N of the ranges"
    elif FACTORS[-1] * found[1] * MIN_RTTS > duration / 2:
        why = (f"the critical RTT {found[1] * 1e6:.4g} us at N = {found[0]} is too long for a "
               f"{duration:g} s run")  # fmt: skip
    else:
        n, crit = found
        for f in FACTORS:
            points.append((n, f * crit, f"{f:g} x critical RTT at the worst N = {n} "
                                        f"({crit * 1e6:.4g} us)"))  # fmt: skip
    if not any(n == n_w and np.isclose(r, rtt_w, rtol=1e-9, atol=0) for n, r, _ in points):
        points.append((n_w, rtt_w, "worst point of the ranges"
                       + (f" (fallback: {why})" if why else "")))  # fmt: skip
    crit = result.critical_rtt_s  # the check's, reused where the trajectories judge
    bands = getattr(result, "stable_bands", {})  # and its bands (N whose runs cycle below)
    out = [{"n_flows": n, "rtt_s": float(rtt), "role": role,
            **_predict(model, n, rtt, memo, crit.get(int(n)), bands.get(int(n)))}
           for n, rtt, role in points]  # fmt: skip
    if why is not None and not out[-1]["stable"]:
        best = _largest_margin(model, ranges, crit)
        if best is not None:
            n, rtt = best
            out.append({"n_flows": n, "rtt_s": rtt,
                        "role": f"largest phase margin in the ranges (fallback: {why})",
                        **_predict(model, n, rtt, memo, crit.get(int(n)),
                                   bands.get(int(n)))})  # fmt: skip
    shortest = _shortest_loop(model)
    for pt in out:  # a run must hold MIN_RTTS round trips in its analysed half
        need = 2 * MIN_RTTS * pt["rtt_s"]
        too_long = f"RTT too long for a {duration:g} s run (needs at least {need:.3g} s)"
        pt["skip"] = None if need <= duration else too_long
        if pt["rtt_s"] < shortest:
            pt["skip"] = (f"RTT below the packet network's shortest loop delay, "
                          f"{shortest * 1e6:.3g} us (one frame's serialisation at the line "
                          "rate plus the CP latency)")  # fmt: skip
    return out


def _shortest_loop(model) -> float:
    """The shortest loop delay (s) of the packet runs for ``model``'s parameter set (0 for a
    model without QCN parameters)."""
    from qcnmodel.validation.network import min_loop_delay

    p = getattr(model, "params", None)
    if not isinstance(p, QCNParams):
        return 0.0
    return min_loop_delay(p.line_rate, p.frame_size, cp_latency=p.cp_latency)


def _largest_margin(model, ranges, critical=None) -> tuple[int, float] | None:
    """The grid point with the largest phase margin among the stable ones, or None
    (``critical``: N -> the check's critical RTT, for the flow counts judged by the model's
    trajectories)."""
    from qcnmodel.studies.verdict import scan

    best = None
    for n, (pm, st) in scan(model, ranges, critical=critical).items():
        key = np.where(st & np.isfinite(pm), pm, -np.inf)
        k = int(np.argmax(key))
        if np.isfinite(key[k]) and (best is None or key[k] > best[0]):
            best = (key[k], n, float(ranges.rtt_grid()[k]))
    return None if best is None else (best[1], best[2])


def _predict(model, n: int, rtt: float, memo: dict | None = None,
             critical: float | None = None, band=None) -> dict:  # fmt: skip
    """The model's verdict, phase margin and mode time constant at (N, RTT); ``critical`` and
    ``band`` are N's critical RTT and stable band when already known (the trajectories')."""
    key, memo = (int(n), float(rtt)), {} if memo is None else memo
    if key in memo:
        return memo[key]
    from qcnmodel.analysis.boundary import boundary_method, judged_by_trajectories, judged_stable
    from qcnmodel.models._base import NoStandingQueue, Overloaded

    point = model.replace(n_flows=int(n), rtt=float(rtt))
    try:
        loop = point.loop()
        mg = loop.margins()
    except NoStandingQueue:  # no linearised loop: the trajectories from idle judge
        if not judged_by_trajectories(point):
            raise
        out = {"stable": bool(judged_stable(point, [float(rtt)], [False], critical, band)[0]),
               "phase_margin_deg": float("nan"), "judged_by": "trajectories",
               "time_constant_s": float("nan")}  # fmt: skip
        memo[key] = _searched_from(point, out)
        return out
    except Overloaded:  # no operating point: the packets' queue must climb
        from qcnmodel.validation.overload import DURATION

        # long enough to drain the start's backlog where the port is held after all: the
        # automatic run length is then the validation's (3 s)
        out = {"stable": False, "phase_margin_deg": float("nan"), "judged_by": OVERLOAD,
               "time_constant_s": DURATION / (2 * SETTLE_TAUS)}  # fmt: skip
        memo[key] = out
        return out
    stable = bool(judged_stable(point, [float(rtt)], [mg.stable], critical, band)[0])
    out = {"stable": stable, "phase_margin_deg": float(mg.phase_margin_deg),
           "judged_by": boundary_method(point),
           "time_constant_s": mode_time_constant(loop, mg)}  # fmt: skip
    memo[key] = _searched_from(point, out)
    return out


def _searched_from(point, out: dict) -> dict:
    """``out`` with ``searched_from_s``, the smallest RTT the model's trajectories are run
    at, where they judge the point (:func:`qcnmodel.analysis.boundary.search_interval`)."""
    if out["judged_by"] == "trajectories":
        from qcnmodel.analysis.boundary import search_interval

        out["searched_from_s"] = float(search_interval(point)[0])
        out["verdict_run_s"] = getattr(point, "verdict_run", None)
    return out


def mode_time_constant(loop, margins=None) -> float:
    """Time constant (s) of the closed-loop mode at the gain crossover: 1 / |Re s*|.

    At the crossover w_c, L(jw_c) = exp(j(-pi + PM)). The closed-loop pole near jw_c solves
    L(s) = -1; to first order in the phase margin PM (rad),
    s* = jw_c + PM / (a + jb) with a = d ln|L|/dw and b = d arg L/dw at w_c, so
    Re s* = PM a / (a^2 + b^2): the mode decays (PM > 0, a < 0) or grows (PM < 0) with
    time constant (a^2 + b^2) / (|PM| |a|). ``inf`` without a crossover or at PM = 0; the
    first-order estimate is accurate for small |PM|, which is where it matters (the
    packets need long runs only near the boundary).
    """
    mg = loop.margins() if margins is None else margins
    wc = float(mg.crossover_rad_s)
    pm = np.deg2rad(float(mg.phase_margin_deg))
    if not (np.isfinite(wc) and wc > 0 and np.isfinite(pm)):
        return float("inf")
    w = wc * np.array([1.0 - 1e-4, 1.0 + 1e-4])
    resp = loop.frequency_response(w)
    # python-control 0.10.1 renamed ``fresp`` to ``frdata`` (the old name warns)
    h = np.asarray(resp.frdata if hasattr(resp, "frdata") else resp.fresp)
    h = h.reshape(-1)
    ln = np.log(h)
    a = float(np.diff(ln.real)[0] / np.diff(w)[0])
    b = float(np.diff(np.unwrap(ln.imag))[0] / np.diff(w)[0])
    den = abs(pm * a)
    return float((a * a + b * b) / den) if den > 0 else float("inf")


def trajectory_run(point: dict | None = None) -> tuple[float, float]:
    """(duration, settle) of the model's verdict runs, s: at ``point`` its own
    (``verdict_run_s``: stretched where the loop is slow), else ``models.verdict_run``."""
    from qcnmodel import config

    if point is not None and point.get("verdict_run_s") is not None:
        return tuple(float(x) for x in point["verdict_run_s"])
    run = config.defaults["models.verdict_run"]
    return float(run["duration"]), float(run["settle"])


def _by_trajectories(point: dict) -> bool:
    return point.get("judged_by") == "trajectories"


def runs_at(point: dict) -> int:
    """Packet runs at a confirmation point: as many as the model's verdict takes the
    majority of where its trajectories judge the point (module docstring), else one."""
    if _by_trajectories(point):
        from qcnmodel.models._verdict_run import verdict_seeds

        return verdict_seeds()
    return 1


def auto_duration(points) -> float:
    """Run length (s) whose first half holds :data:`SETTLE_TAUS` time constants of every
    point judged by a linearisation, and the model's own run where its trajectories judge:
    at least :data:`DEFAULT_DURATION`, at most :data:`MAX_DURATION`."""
    need = 0.0
    for p in points:
        if _by_trajectories(p):
            run, settle = trajectory_run(p)
            need = max(need, run, 2.0 * settle)
        else:
            need = max(need, 2.0 * SETTLE_TAUS * p["time_constant_s"])
    return float(min(MAX_DURATION, max(DEFAULT_DURATION, need)))


def conclusive(point: dict, duration: float) -> bool:
    """Whether a run of ``duration`` s can decide ``point``: its analysed second half holds
    :data:`SETTLE_TAUS` time constants of the point's mode, or, where the model's
    trajectories judge, starts no earlier than the model's own runs are judged."""
    if _by_trajectories(point):
        return duration / 2 >= trajectory_run(point)[1] * (1 - 1e-12)
    return duration / 2 >= SETTLE_TAUS * point["time_constant_s"]


def _short_reason(point: dict, duration: float) -> str:
    """Why a run of ``duration`` s cannot decide ``point`` (:func:`conclusive` is False)."""
    if _by_trajectories(point):
        run, settle = trajectory_run(point)
        return (f"the analysed half starts at {duration / 2:.3g} s, before the model judges "
                f"its own runs ({settle:g} s into {run:g} s)")  # fmt: skip
    return (f"the analysed half, {duration / 2:.3g} s, holds fewer than {SETTLE_TAUS:g} time "
            f"constants ({point['time_constant_s']:.3g} s) of the point's mode")  # fmt: skip


def simulate_point(params: QCNParams, duration: float, seed: int, n_flows: int,
                   rtt_s: float, capacity: float | None = None) -> dict:  # fmt: skip
    """One confirmation run: the detector's verdict and numbers, and the hot-queue trace
    (the congestion point serving at ``capacity`` bit/s, default the line rate).

    A top-level function so that the sweep's workers can run it (its ``warm_up`` loads the
    compiled simulator before they are forked)."""
    from qcnmodel.sim import simulate
    from qcnmodel.validation.network import bottleneck_for

    spec = bottleneck_for(params, int(n_flows), float(rtt_s), capacity)
    ds = simulate(spec, params=params, duration=duration, bin_width=BIN, seed=seed).dataset
    q = ds.hot_queue_mean.where(ds.time > duration / 2, drop=True).values
    return {**classify(q, BIN, params.qeq, params.frame_size), "time_s": ds.time.values,
            "queue_bytes": ds.hot_queue_mean.values}  # fmt: skip


def classify(q, dt: float, qeq: float, frame_size: float | None = None) -> dict:
    """The packets' verdict on the analysed hot queue ``q`` (bytes, bins of ``dt`` s).

    The oscillation detector (:func:`qcnmodel.analysis.timeseries.oscillation`) answers
    *stable*, *oscillating* or *underflow*. It looks for a periodic swing, so a queue that
    climbs (or drains) steadily through the window also reads *stable*; such a queue has
    reached no equilibrium. So a *stable* answer becomes *drifting* when the least-squares
    trend moves the queue by more than the set point ``qeq`` across the window (the
    equilibrium queue is Qeq, IEEE 802.1Qau-2010's CpQueueSizeSetPoint; a queue that moves
    by more than Qeq itself in the analysed window is not held there). ``drift`` (bytes) is
    that trend. A bin below one frame of ``frame_size`` bytes (default the detector's
    :data:`~qcnmodel.analysis.timeseries.EMPTY_BYTES`) counts as empty.
    """
    from qcnmodel.analysis.timeseries import EMPTY_BYTES, oscillation

    q = np.asarray(q, float)
    osc = oscillation(q, dt, qeq, empty=EMPTY_BYTES if frame_size is None else frame_size)
    drift = 0.0
    if q.size >= 2:
        t = np.arange(q.size) * dt
        drift = float(np.polyfit(t, q, 1)[0] * (t[-1] - t[0]))
    verdict = osc["verdict"]
    if verdict == "stable" and abs(drift) > qeq:
        verdict = "drifting"
    return {
        "verdict": verdict,
        "mean": osc["mean"],
        "std": osc["std"],
        "underflow": osc["underflow"],
        "acf_peak": osc["acf_peak"],
        "drift": drift,
    }


def _warm_simulator(**_) -> None:
    from qcnmodel.sim.engines import warm_kernel

    warm_kernel("qcn")


simulate_point.warm_up = _warm_simulator


def confirm_jobs(jobs, n_points: int) -> int:
    """Worker processes for ``n_points`` runs: ``None`` the cores actually free
    (:func:`qcnmodel.studies.sweep.free_cores`), ``-1`` the same, else a whole number >= 1;
    never more than the points."""
    from qcnmodel.studies.sweep import free_cores

    if jobs is None or (isinstance(jobs, (int, np.integer)) and not isinstance(jobs, bool)
                        and int(jobs) == -1):  # fmt: skip
        jobs = free_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs: expected a whole number >= 1 or -1, got {jobs!r}")
    return max(1, min(int(jobs), int(n_points)))


def confirm_verdict(
    params: QCNParams,
    result,
    ranges,
    model,
    duration: float | None = None,
    seed: int = 0,
    progress: bool = False,
    jobs: int | None = None,
) -> dict:
    """Simulate the confirmation points, in parallel, and compare with the model.

    Parameters
    ----------
    params : QCNParams
        The checked parameter set.
    result : CheckResult
        The analytical check.
    ranges : CheckRanges
        Its ranges.
    model : loop model
        The checked model (any operating point; ``replace(n_flows=, rtt=)`` is used).
    duration : float, optional
        Packet run length per point, s (default :data:`DEFAULT_DURATION`); in (0, 10].
    seed : int
        Simulator seed (the same at every point).
    progress : bool
        A tqdm bar on stderr, and one line there while the simulator compiles.
    jobs : int, optional
        Processes (this one included): default the cores actually free, ``-1`` the same,
        at most the number of runs. The rows do not depend on it.

    Returns
    -------
    dict
        ``agree``, ``outcome``, ``points_agree``, ``points_inconclusive`` (the overall
        answer, :func:`tally`), ``duration_s``, ``seed``, ``jobs`` and ``rows`` (per point:
        ``n_flows``, ``rtt_s``, ``role``, ``predicted_stable``, ``phase_margin_deg``, the
        detector's ``verdict``, ``mean``, ``std``, ``underflow``, ``acf_peak``, ``agree``
        (the packets' majority matches the prediction), ``conclusive``, ``outcome``,
        ``runs``, ``runs_unstable`` and ``runs_open`` (the packet runs at the point, how
        many were unstable and how many showed no regime; the verdict is their majority),
        ``shown_seed`` (the run whose numbers and trace ``time_s``, ``queue_bytes`` are
        given: the first on the majority's side), ``open_reason`` (why an inconclusive
        point decides nothing; ``agree`` is None where the packets show no regime) and
        ``note`` (the model's verdict there is extrapolated)); ``capacity_bps`` and
        ``line_rate_bps``: the congestion point's rate and the sources' line rate;
        ``skipped``: the points whose RTT is too long for the run (``n_flows``, ``rtt_s``,
        ``role``, ``predicted_stable``, ``reason``). ValueError (naming ``confirm``) when
        every point is too long, and (naming ``capacity``) for a port faster than the line
        rate (:func:`check_rate`).
    """
    from tqdm.auto import tqdm

    from qcnmodel.studies.sweep import _Call, _execute

    capacity = check_rate(params, getattr(model, "capacity", None))
    memo: dict = {}
    if duration is None:  # long enough for the slowest point's mode (see module)
        first = confirm_points(result, ranges, model, MAX_DURATION, memo)
        duration = auto_duration([p for p in first if p["skip"] is None] or first)
    duration = check_duration(duration)
    every = confirm_points(result, ranges, model, duration, memo)
    points = [p for p in every if p["skip"] is None]
    skipped = [{"n_flows": p["n_flows"], "rtt_s": p["rtt_s"], "role": p["role"],
                "predicted_stable": p["stable"], "reason": p["skip"]}
               for p in every if p["skip"] is not None]  # fmt: skip
    if not points:
        need = 2 * MIN_RTTS * min(p["rtt_s"] for p in every)
        raise ValueError(f"confirm: every point's RTT is too long for a {duration:g} s run "
                         f"(the analysed second half must hold {MIN_RTTS} RTTs); give at "
                         f"least {need:.3g} s (at most 10 s)")  # fmt: skip
    todo = [((i, j), {"n_flows": p["n_flows"], "rtt_s": p["rtt_s"], "seed": int(seed) + j})
            for i, p in enumerate(points) for j in range(runs_at(p))]  # fmt: skip
    n_jobs = confirm_jobs(jobs, len(todo))
    _announce_compile(progress)  # compiled here, once, before any worker is forked
    call = _Call(simulate_point, {"params": params, "duration": duration,
                                  "capacity": capacity})  # fmt: skip
    runs: dict[tuple, dict] = {}
    with tqdm(total=len(todo), desc="confirm", unit="run", disable=not progress,
              file=sys.stderr, leave=False) as bar:  # fmt: skip
        for key, out in _execute(call, todo, n_jobs, None):
            runs[key] = {**out, "seed": int(seed) + key[1]}
            bar.update(1)
    rows, longest = [], duration >= MAX_DURATION * (1 - 1e-12)  # no longer run allowed
    for i, pt in enumerate(points):
        run = _majority([runs[(i, j)] for j in range(runs_at(pt))])
        row = {
            "n_flows": pt["n_flows"],
            "rtt_s": pt["rtt_s"],
            "role": pt["role"],
            "predicted_stable": pt["stable"],
            "judged_by": pt["judged_by"],
            "phase_margin_deg": pt["phase_margin_deg"],
            "time_constant_s": pt["time_constant_s"],
            **run,
            **judge(pt, run, params.qeq, conclusive(pt, duration), longest),
        }
        if (row["conclusive"] and not row["agree"] and _by_trajectories(pt)
                and hasattr(model, "trajectory_verdicts")):  # fmt: skip
            row.update(_odds_test(model, pt, run, bool(row.get("packets_climb"))))
        if not row["conclusive"] and "open_reason" not in row:
            row["open_reason"] = _short_reason(pt, duration)
        note = extrapolated(pt)
        if note and note not in row.get("open_reason", ""):
            row["note"] = note
        rows.append(row)  # fmt: skip
    return {**tally(rows), "duration_s": duration, "seed": int(seed), "jobs": n_jobs,
            "capacity_bps": capacity, "line_rate_bps": float(params.line_rate),
            "rows": rows, "skipped": skipped}  # fmt: skip


def check_rate(params: QCNParams, capacity: float | None, field: str = "capacity") -> float:
    """The congestion point's rate (bit/s) of the packet runs: ``capacity``, default the
    parameter set's line rate. The simulator's port serves at most the line rate of its
    link, the sources' (:func:`qcnmodel.validation.network.bottleneck_for`), so a faster
    port is refused: ValueError naming ``field`` and the allowed range."""
    line = float(params.line_rate)
    if capacity is None:
        return line
    cap = float(capacity)
    if not 0 < cap <= line * (1 + 1e-12):
        raise ValueError(f"{field}: the packet confirmation's congestion point serves at most "
                         f"the sources' line rate; give a port rate in (0, {line / 1e9:g}] "
                         f"Gb/s to confirm with packets (--confirm), got {cap / 1e9:g} "
                         "Gb/s")  # fmt: skip
    return cap


def check_duration(duration) -> float:
    """The packet run length (s), in (0, 10] (ValueError naming ``confirm`` otherwise)."""
    d = float(duration)
    if not (0 < d <= 10):
        raise ValueError(f"confirm: run length must be in (0, 10] s, got {duration!r} s")
    return d


def _announce_compile(progress: bool) -> None:
    """Compile the simulator up front, saying so on stderr (tens of seconds, once)."""
    from qcnmodel.sim.engines import warm_kernel
    from qcnmodel.studies.compiling import announce_compile

    announce_compile("sim", progress)
    warm_kernel("qcn")


def drop_traces(confirmation: dict) -> dict:
    """The confirmation without the queue traces (for JSON)."""
    rows = [{k: v for k, v in r.items() if k not in ("time_s", "queue_bytes")}
            for r in confirmation["rows"]]  # fmt: skip
    return {**confirmation, "rows": rows}
