"""The trajectory verdict of a stochastic fluid model: runs from idle, one per seed, each
classified by the oscillation detector, and their majority.

A model whose trajectories draw the protocol's randomness (the +-15 % cycle jitter of
IEEE 802.1Qau, the flow a sample lands on, the sampled queue's frame noise) gives a different
run per seed, as the packet simulator does. Near a stability boundary a run's verdict is a
coin whose odds of "unstable" grow with the RTT, so one run decides nothing: the verdict is
the majority of an odd number of seeds (:func:`verdict_seeds`), and :func:`seed_verdicts`
gives the runs one by one for a caller that wants their odds.

The run (length, settling time, record step, seeds) is
``config.defaults["models.verdict_run"]``; the detector is
:func:`qcnmodel.analysis.timeseries.oscillation`, the one the validation applies to model and
packet traces alike.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from qcnmodel import config

__all__ = [
    "MAX_VERDICT_SEEDS",
    "agreed",
    "bin_means",
    "count_unstable",
    "decided",
    "greedy_sources",
    "majority_unstable",
    "odds_unstable",
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


def seed_verdicts(model, seeds: int | None = None) -> Iterator[str]:
    """The detector's class (``"stable"``, ``"oscillating"``, ``"underflow"`` ...) of the runs
    of ``model`` with seeds 0, 1, ... ``seeds - 1``, lazily.

    Each run starts from idle rate limiters (greedy sources, :func:`greedy_sources`), lasts
    ``models.verdict_run["duration"]`` and is judged after ``["settle"]`` on the queue's bin
    means (the simulator's trace is binned). ``model`` needs ``simulate(duration,
    start="idle", offered=..., record_dt=..., seed=..., source_buffer=...)`` returning a
    dataset with ``q`` (bytes), ``params.qeq``, ``params.line_rate`` and ``n_flows``.
    """
    from qcnmodel.analysis.timeseries import EMPTY_BYTES, oscillation

    run = config.defaults["models.verdict_run"]
    n = verdict_seeds(seeds)
    dt = run["record_dt"]
    skip = int(round(run["settle"] / dt))
    offered, buffer = greedy_sources(model)
    for seed in range(n):
        ds = model.simulate(run["duration"], start="idle", offered=offered, record_dt=dt,
                            seed=seed, source_buffer=buffer)  # fmt: skip
        yield oscillation(
            bin_means(ds)[skip:],
            dt,
            model.params.qeq,
            empty=float(getattr(model.params, "frame_size", EMPTY_BYTES)),
        )["verdict"]


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
