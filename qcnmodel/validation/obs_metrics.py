"""Metrics of the deck observations (:mod:`qcnmodel.validation.observations`) on binned traces.

Every function takes plain arrays on the simulator's trace grid: ``t`` are the bin *end* times
(s, uniform bin width), a bin belongs to the interval ``(a, b]`` when its end time does. The
hotspot interval ``(a, b)`` is the run's measurement window. The definitions were fixed before
any observation run was looked at:

* *steady state* = the second half of the hotspot, ``((a + b) / 2, b]``.
* :func:`steady_mean`, :func:`oscillation_std` -- mean and standard deviation of the hot queue
  (1 ms bin means) over the steady state.
* :func:`jitter` -- standard deviation of the bin-to-bin change of the hot queue over the
  steady state (high-frequency fluctuation, the decks' "jittery").
* :func:`reaction_time` -- time from the hotspot start until the arrival rate at the hot port
  (what the rate limiters let through: enqueued + dropped) first falls below
  ``REACTION_FACTOR`` (2) x the service rate; ``None`` if it never does within the hotspot.
* :func:`underrun_fraction` -- fraction of the bins in ``(a + UNDERRUN_SETTLE, b]`` in which the
  hot queue's bin mean is below one frame (1500 B) *and* the hot port serves less than
  ``UNDERRUN_UTIL`` (95 %) of its service rate: the port runs dry while it could send.
* :func:`flow_fluctuation` -- mean over flows of the coefficient of variation of each flow's
  throughput averaged over ``FLUCT_BINS`` (10) bins, over the steady state.
* :func:`aggregate_settle_time` -- time from the hotspot start until the aggregate delivered
  throughput (10-bin moving mean) first reaches 90 % of its steady-state mean.
* :func:`fair_share_jain` -- Jain's index of the throughputs normalised by their fair shares
  (1 = every flow gets exactly its fair share).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "EMPTY_BYTES",
    "FLUCT_BINS",
    "REACTION_FACTOR",
    "UNDERRUN_SETTLE",
    "UNDERRUN_UTIL",
    "aggregate_settle_time",
    "fair_share_jain",
    "flow_fluctuation",
    "jitter",
    "oscillation_std",
    "reaction_time",
    "steady_mask",
    "steady_mean",
    "underrun_fraction",
]

EMPTY_BYTES = 1500.0  #: a bin counts as empty below one frame
UNDERRUN_UTIL = 0.95  #: ... and as under-utilised below 95 % of the service rate
UNDERRUN_SETTLE = 10e-3  #: start-up excluded from the underrun count (s)
REACTION_FACTOR = 2.0  #: reaction: arrivals at the hot port below 2 x the service rate
FLUCT_BINS = 10  #: per-flow throughput averaged over 10 bins for the fluctuation


def steady_mask(t, a: float, b: float) -> np.ndarray:
    """Bins of the second half of the hotspot ``((a + b) / 2, b]``."""
    t = np.asarray(t, dtype=float)
    return (t > 0.5 * (a + b)) & (t <= b + 1e-12)


def steady_mean(t, q, a: float, b: float) -> float:
    """Mean of ``q`` over the steady state (second half of the hotspot)."""
    m = steady_mask(t, a, b)
    return float(np.mean(np.asarray(q, dtype=float)[m])) if m.any() else math.nan


def oscillation_std(t, q, a: float, b: float) -> float:
    """Standard deviation of ``q`` over the steady state."""
    m = steady_mask(t, a, b)
    return float(np.std(np.asarray(q, dtype=float)[m])) if m.any() else math.nan


def jitter(t, q, a: float, b: float) -> float:
    """Standard deviation of the bin-to-bin change of ``q`` over the steady state."""
    m = steady_mask(t, a, b)
    x = np.asarray(q, dtype=float)[m]
    return float(np.std(np.diff(x))) if len(x) > 2 else math.nan


def reaction_time(t, arrivals, a: float, b: float, service_rate: float,
                  factor: float = REACTION_FACTOR) -> float | None:  # fmt: skip
    """Time from ``a`` until ``arrivals`` (bit/s per bin) first drop below ``factor`` x
    ``service_rate`` within ``(a, b]``; ``None`` if they never do.

    The time is the end of the first such bin minus ``a`` (resolution one bin).
    """
    t = np.asarray(t, dtype=float)
    x = np.asarray(arrivals, dtype=float)
    idx = np.nonzero((t > a) & (t <= b + 1e-12) & (x < factor * service_rate))[0]
    return float(t[idx[0]] - a) if len(idx) else None


def underrun_fraction(t, q, thr, a: float, b: float, service_rate: float,
                      settle: float = UNDERRUN_SETTLE) -> float:  # fmt: skip
    """Fraction of bins in ``(a + settle, b]`` with an empty hot queue (bin mean below
    :data:`EMPTY_BYTES`) and the hot port below :data:`UNDERRUN_UTIL` of ``service_rate``."""
    t = np.asarray(t, dtype=float)
    m = (t > a + settle) & (t <= b + 1e-12)
    if not m.any():
        return math.nan
    q = np.asarray(q, dtype=float)[m]
    x = np.asarray(thr, dtype=float)[m]
    return float(np.mean((q < EMPTY_BYTES) & (x < UNDERRUN_UTIL * service_rate)))


def flow_fluctuation(t, flow_thr, a: float, b: float, k: int = FLUCT_BINS) -> float:
    """Mean over flows of the coefficient of variation of the ``k``-bin mean throughput over
    the steady state (flows with zero mean are skipped); ``flow_thr`` is (flows, time)."""
    m = steady_mask(t, a, b)
    f = np.asarray(flow_thr, dtype=float)[:, m]
    n = f.shape[1] // k
    if n < 2:
        return math.nan
    blocks = f[:, : n * k].reshape(f.shape[0], n, k).mean(axis=2)
    mu = blocks.mean(axis=1)
    ok = mu > 0
    if not ok.any():
        return math.nan
    return float(np.mean(blocks[ok].std(axis=1) / mu[ok]))


def aggregate_settle_time(t, agg, a: float, b: float, k: int = 10) -> float | None:
    """Time from ``a`` until the ``k``-bin moving mean of ``agg`` (ending at a bin) first
    reaches 90 % of its steady-state mean; ``None`` if it does not within ``(a, b]``."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(agg, dtype=float)
    target = 0.9 * steady_mean(t, x, a, b)
    if not math.isfinite(target):
        return None
    sm = np.convolve(x, np.ones(k) / k, mode="full")[: len(x)]  # trailing mean
    idx = np.nonzero((t > a + (k - 1) * _dt(t)) & (t <= b + 1e-12) & (sm >= target))[0]
    return float(t[idx[0]] - a) if len(idx) else None


def fair_share_jain(throughput, fair) -> float:
    """Jain's index of ``throughput / fair`` (flows paired in order)."""
    x = np.asarray(throughput, dtype=float) / np.asarray(fair, dtype=float)
    s2 = float(np.sum(x**2))
    return float(np.sum(x) ** 2 / (len(x) * s2)) if s2 > 0 else math.nan


def _dt(t) -> float:
    t = np.asarray(t, dtype=float)
    return float(t[1] - t[0]) if len(t) > 1 else 0.0
