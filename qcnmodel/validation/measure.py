"""Measurements shared by model and simulator traces (same code on both sides of a pair).

All functions take plain arrays on a uniform time grid (bin width ``dt`` in s) so that a
fluid-model trajectory and a binned simulator trace are measured identically.

* :func:`batch_means` -- mean and its standard error from K contiguous batches (the usual
  estimate of simulation noise from one autocorrelated run).
* :func:`oscillation` -- the sustained-oscillation detector (its home is
  :mod:`qcnmodel.analysis.timeseries`): autocorrelation of the queue and
  mean-crossings; period from the first ACF peak and from the crossings.
* :func:`recovery_time` -- time after the hotspot end until the 10 ms mean throughput
  reaches 90 % of the target (the simulator's own definition, :mod:`qcnmodel.sim.metrics`).
* :func:`scan_boundary` -- the RTT at which runs start to oscillate: scan, then bisection.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from qcnmodel.analysis.timeseries import (  # noqa: F401  (the detector's home)
    ACF_MIN,
    AMPLITUDE_MIN,
    EMPTY_BYTES,
    UNDERFLOW_MIN,
    oscillation,
)
from qcnmodel.sim import metrics as sim_metrics

__all__ = [
    "ACF_MIN",
    "AMPLITUDE_MIN",
    "UNDERFLOW_MIN",
    "batch_means",
    "oscillation",
    "recovery_time",
    "scan_boundary",
]


def batch_means(x, k: int = 10) -> tuple[float, float]:
    """Mean of ``x`` and its standard error from ``k`` contiguous batches.

    The batch means of an autocorrelated series are nearly independent when each batch is
    much longer than the correlation time; their spread / sqrt(k) estimates the error of the
    overall mean.
    """
    x = np.asarray(x, dtype=float)
    n = len(x) // k
    if n < 1:
        return float(np.mean(x)), math.nan
    b = x[: n * k].reshape(k, n).mean(axis=1)
    return float(np.mean(x)), float(np.std(b, ddof=1) / math.sqrt(k))


def recovery_time(t_end, throughput, dt: float, stop: float, target: float) -> float | None:
    """Recovery time (s) after ``stop``: first 10 ms mean of ``throughput`` >= 0.9 target.

    The simulator's definition (:func:`qcnmodel.sim.metrics.recovery_time`), applied to any
    binned throughput (bin end times ``t_end``, bin width ``dt``).
    """
    return sim_metrics.recovery_time(t_end, throughput, dt, stop, target)


def scan_boundary(
    unstable: Callable[[float], bool],
    grid,
    bisect_steps: int = 2,
) -> tuple[float, float, list[tuple[float, bool]]]:
    """Smallest RTT at which ``unstable(rtt)`` holds: scan ``grid`` upwards, then bisect.

    Returns
    -------
    (lo, hi, points)
        The bracket: ``lo`` the last stable RTT (0 if the first point is unstable), ``hi`` the
        first unstable one (inf if none); the bracket is narrowed by geometric bisection.
        ``points`` lists every (rtt, unstable) evaluated.
    """
    pts = []
    lo, hi = 0.0, math.inf
    for r in grid:
        u = bool(unstable(float(r)))
        pts.append((float(r), u))
        if u:
            hi = float(r)
            break
        lo = float(r)
    if lo > 0 and math.isfinite(hi):
        for _ in range(bisect_steps):
            mid = math.sqrt(lo * hi)
            u = bool(unstable(mid))
            pts.append((mid, u))
            if u:
                hi = mid
            else:
                lo = mid
    return lo, hi, pts
