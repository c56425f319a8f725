"""The trajectory verdict of a stochastic fluid model: runs from idle, one per seed, each
classified by the oscillation detector, and their majority.

A model whose trajectories draw the protocol's randomness (the +-15 % cycle jitter of
IEEE 802.1Qau, the flow a sample lands on, the sampled queue's frame noise) gives a different
run per seed, as the packet simulator does. Near a stability boundary a run's verdict is a
coin whose odds of "unstable" grow with the RTT, so one run decides nothing: the verdict is
the majority of an odd number of seeds (:func:`verdict_seeds`), and :func:`seed_verdicts`
gives the runs one by one for a caller that wants their odds.

The run (length, settling time, record step, seeds) is
``config.defaults["models.verdict_run"]``, stretched where the loop is slow
(:func:`run_length`); the detector is :func:`qcnmodel.analysis.timeseries.oscillation`, the
one the validation applies to model and packet traces alike.

**Slow loops.** The loop's time scales grow as the fair rate C/N falls: a flow is sampled
every N frames / (p C) on average (IEEE 802.1Qau's 1 % base sampling: 150 KB x 8 / (C/N),
0.12 s at 10 Mb/s per flow) and its rate limiter recovers in byte-counter or timer cycles
(150 KB at C/N, 15 ms). A run whose analysed part holds few of these cycles cannot see a
cycle of the loop or a queue that never settles. So the run is stretched until its analysed
part holds ``window_cycles`` of the loop's slowest cycle (:func:`loop_cycle`), the settling
time in proportion (the start from idle rate limiters lasts a number of the same cycles),
up to ``max_duration`` (:func:`fits`: past it the trajectories do not judge). And a run whose
queue still trends through its analysed part by more than Qeq has reached no equilibrium
(:func:`trend`): one still draining its start-up backlog is run twice as long (settling
too), up to ``max_duration``; one whose queue climbs, or still drains at that length, is
*drifting*, which is not stable.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from qcnmodel import config

__all__ = [
    "MAX_VERDICT_SEEDS",
    "agreed",
    "fits",
    "loop_cycle",
    "run_length",
    "trend",
    "bin_means",
    "count_unstable",
    "decided",
    "greedy_sources",
    "majority_unstable",
    "odds_unstable",
    "past_limit",
    "seed_verdicts",
    "verdict_seeds",
]

MAX_VERDICT_SEEDS = 1001  #: most runs a trajectory verdict may take


def verdict_seeds(seeds: int | None = None) -> int:
    """Runs a trajectory verdict takes the majority of: ``seeds``, or the
    ``config.defaults["models.verdict_run"]`` seeds; a whole number in [1, 1001]."""
    seeds = config.defaults["models.verdict_run"]["seeds"] if seeds is None else seeds
    if (not isinstance(seeds, (int, np.integer)) or isinstance(seeds, bool)
            or not 1 <= seeds <= MAX_VERDICT_SEEDS):  # fmt: skip
        raise ValueError(f"seeds: must be a whole number in [1, {MAX_VERDICT_SEEDS}] (runs "
                         f"of a trajectory verdict), got {seeds!r}")  # fmt: skip
    return int(seeds)


def loop_cycle(model) -> float:
    """The slowest cycle of ``model``'s loop at its fair rate C/N, s.

    The longer of a flow's mean interval between samples at the base sampling probability
    p, N x frame / (p C) (a flow is cut at most that often), and its rate limiter's recovery
    cycle, which ends at the byte counter's expiry (``bc_limit`` bytes at C/N) or the timer's
    (``timer``), whichever comes first (IEEE 802.1Qau-2010 32.13; at the 802.1Qau defaults
    and 10 Gb/s, N = 10: 1.2 ms; at 0.1 Gb/s, N = 10: 0.12 s). 0 for a model without these
    parameters."""
    p = model.params
    if not all(hasattr(p, k) for k in ("bc_limit", "timer", "frame_size")):
        return 0.0
    fair = float(getattr(model, "capacity_bps", p.line_rate)) / model.n_flows
    sampled = 8.0 * p.frame_size / (float(getattr(model, "p_sample", 1.0)) * fair)
    return max(sampled, min(8.0 * p.bc_limit / fair, float(p.timer)))


def run_length(model) -> tuple[float, float]:
    """``(duration, settle)`` of ``model``'s verdict runs, s: ``models.verdict_run``'s,
    stretched (both by one factor) until the analysed part, duration - settle, holds
    ``window_cycles`` of the loop's slowest cycle (:func:`loop_cycle`; at the 802.1Qau
    defaults from 10 Gb/s down to C/N = 40 Mb/s the shipped run already does)."""
    run = config.defaults["models.verdict_run"]
    duration, settle = float(run["duration"]), float(run["settle"])
    need = float(run["window_cycles"]) * loop_cycle(model)
    stretch = max(1.0, need / (duration - settle)) if duration > settle else 1.0
    return duration * stretch, settle * stretch


def fits(model) -> bool:
    """Whether ``model``'s verdict runs (:func:`run_length`) fit ``models.verdict_run
    ["max_duration"]``: past it its trajectories cannot judge the loop in a run allowed."""
    return run_length(model)[0] <= float(config.defaults["models.verdict_run"]["max_duration"])


def past_limit(model) -> str | None:
    """Which limit of the trajectories ``model`` (at packet fidelity: with ``capacity_bps``
    and its frames' ``_bits``) is past, None within them: ``"flows"`` (past
    ``config.defaults["analysis.trajectory_max_flows"]``: a run follows every flow),
    ``"slow"`` (its verdict run, :func:`run_length`, would exceed ``models.verdict_run
    ["max_duration"]``: :func:`fits`) or ``"frames"`` (past ``["analysis.trajectory_max_frames"]``
    frames at the port over a verdict's runs: a run follows every frame)."""
    d = config.defaults
    if model.n_flows > d["analysis.trajectory_max_flows"]:
        return "flows"
    if not fits(model):
        return "slow"
    frames = d["models.verdict_run"]["seeds"] * run_length(model)[0] * model.capacity_bps
    return "frames" if frames / model._bits > d["analysis.trajectory_max_frames"] else None


def trend(q, dt: float) -> float:
    """How far the least-squares line through ``q`` (bins of ``dt`` s) moves across them."""
    q = np.asarray(q, float)
    if q.size < 2:
        return 0.0
    t = np.arange(q.size) * dt
    return float(np.polyfit(t, q, 1)[0] * (t[-1] - t[0]))


def seed_verdicts(model, seeds: int | None = None) -> Iterator[str]:
    """The detector's class (``"stable"``, ``"oscillating"``, ``"underflow"``,
    ``"drifting"`` ...) of the runs of ``model`` with seeds 0, 1, ... ``seeds - 1``, lazily.

    Each run starts from idle rate limiters (greedy sources, :func:`greedy_sources`), lasts
    :func:`run_length` and is judged after its settling time on the queue's bin means (the
    simulator's trace is binned). A run the detector calls stable whose queue trends by more
    than Qeq across the analysed part (:func:`trend`) is run again twice as long while it
    drains and that fits ``max_duration``, else it is ``"drifting"`` (module docstring).
    ``model`` needs ``simulate(duration, start="idle", offered=..., record_dt=..., seed=...,
    source_buffer=...)`` returning a dataset with ``q`` (bytes).
    """
    from qcnmodel.analysis.timeseries import EMPTY_BYTES, oscillation

    run = config.defaults["models.verdict_run"]
    n = verdict_seeds(seeds)
    dt, cap = run["record_dt"], float(run["max_duration"])
    offered, buffer = greedy_sources(model)
    qeq = float(model.params.qeq)
    empty = float(getattr(model.params, "frame_size", EMPTY_BYTES))
    for seed in range(n):
        duration, settle = run_length(model)
        while True:
            ds = model.simulate(duration, start="idle", offered=offered, record_dt=dt,
                                seed=seed, source_buffer=buffer)  # fmt: skip
            q = bin_means(ds)[int(round(settle / dt)) :]
            verdict = oscillation(q, dt, qeq, empty=empty)["verdict"]
            drift = trend(q, dt) if verdict == "stable" else 0.0
            if drift < -qeq and 2 * duration <= cap * (1 + 1e-12):
                duration, settle = 2 * duration, 2 * settle  # the start-up still drains
                continue
            yield "drifting" if abs(drift) > qeq else verdict
            break


def bin_means(ds) -> np.ndarray:
    """The queue's mean over each record interval of a trajectory ``ds``, as the simulator's
    trace is binned: its ``q_mean`` where the model gives one (a realised port), else the
    trapezoid of ``q`` between the record instants."""
    if "q_mean" in ds:
        return ds["q_mean"].values[1:]
    q = ds["q"].values
    return 0.5 * (q[1:] + q[:-1])


def greedy_sources(model) -> tuple[float, float]:
    """``(offered, source_buffer)`` of the verdict's runs: each source offers
    ``min(line rate, offered_share x C / N)`` (C the port's service rate,
    ``model.capacity_bps`` where the model has one) and holds back up to ``source_buffer``
    bytes (``config.defaults["models.verdict_run"]``; with every flow followed, the cohorts
    hold none): the packet simulator's greedy sources in the matched pairs and in ``check
    --confirm``, from the same start."""
    run = config.defaults["models.verdict_run"]
    line = float(model.params.line_rate)
    cap = float(getattr(model, "capacity_bps", line))
    offered = min(line, float(run["offered_share"]) * cap / model.n_flows)
    agents = getattr(model, "trajectory_method", "agents") == "agents"
    return offered, float(run["source_buffer"]) if agents else 0.0


def count_unstable(flags, enough) -> tuple[int, int]:
    """``(unstable, runs)`` of the runs' flags (True: unstable), taken in order until
    ``enough(unstable, runs)`` holds or the flags end."""
    votes, runs = 0, 0
    for unstable in flags:
        votes += bool(unstable)
        runs += 1
        if enough(votes, runs):
            break
    return votes, runs


def decided(n: int):
    """The stopping rule of a majority of ``n`` runs: once it cannot change."""
    return lambda v, r: 2 * v > n or 2 * (r - v) >= n


def agreed(unanimous: int | None):
    """The stopping rule of the odds: the first ``unanimous`` runs agree (None: never)."""
    return lambda v, r: r == unanimous and v in (0, r)


def _count(model, n: int, enough) -> tuple[int, int]:
    """:func:`count_unstable` of the runs of :func:`seed_verdicts` with seeds 0 .. n - 1."""
    return count_unstable((v != "stable" for v in seed_verdicts(model, n)), enough)


def majority_unstable(model, seeds: int | None = None) -> bool:
    """Whether most of the ``seeds`` runs of :func:`seed_verdicts` oscillate or underflow.
    The runs are taken in seed order until the majority is decided (the same answer as all
    of them)."""
    n = verdict_seeds(seeds)
    votes, _ = _count(model, n, decided(n))
    return 2 * votes > n


def odds_unstable(model, seeds: int | None = None, unanimous: int | None = 5) -> tuple[int, int]:
    """``(unstable, runs)``: how many of the runs of :func:`seed_verdicts` oscillate or
    underflow, and how many were run.

    All ``seeds`` runs are taken unless the first ``unanimous`` agree: far from a boundary
    the odds are near 0 or 1, and five like runs in a row happen by chance one time in 16 at
    even odds (``unanimous=None`` runs them all). Near a boundary every run counts, so the
    odds are those of all ``seeds`` runs."""
    return _count(model, verdict_seeds(seeds), agreed(unanimous))
