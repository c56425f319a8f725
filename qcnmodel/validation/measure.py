"""Measurements shared by model and simulator traces (same code on both sides of a pair).

All functions take plain arrays on a uniform time grid (bin width ``dt`` in s) so that a
fluid-model trajectory and a binned simulator trace are measured identically.

* :func:`batch_means` -- mean and its standard error from K contiguous batches (the usual
  estimate of simulation noise from one autocorrelated run).
* :func:`oscillation` -- sustained-oscillation detector: autocorrelation of the queue and
  mean-crossings; period from the first ACF peak and from the crossings.
* :func:`recovery_time` -- time after the hotspot end until the 10 ms mean throughput
  reaches 90 % of the target (the simulator's own definition, :mod:`qcnmodel.sim.metrics`).
* :func:`scan_boundary` -- the RTT at which runs start to oscillate: scan, then bisection.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

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

#: Classification thresholds, fixed before any comparison was run (not tuned):
#: a *sustained* oscillation repeats (half of the queue variance recurs one period later,
#: ACF >= 0.5) and is large (queue std >= Qeq/4, well above the +-1 quantisation step noise
#: Fbmax/63 = Qeq(2w+1)/63 = Qeq/12.6 at w = 2); an *underflow* regime empties the queue for
#: at least 1 % of the time (throughput is lost).
ACF_MIN = 0.5
AMPLITUDE_MIN = 0.25
UNDERFLOW_MIN = 0.01
#: a bin counts as empty below one frame (1500 B): the binned mean of a queue that touches 0
EMPTY_BYTES = 1500.0


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


def _acf(x: np.ndarray) -> np.ndarray:
    x = x - x.mean()
    n = len(x)
    f = np.fft.rfft(x, 2 * n)
    r = np.fft.irfft(f * np.conj(f))[:n]
    return r / r[0] if r[0] > 0 else np.zeros(n)


def oscillation(q, dt: float, qeq: float, max_period: float | None = None) -> dict:
    """Classify a queue trace as stable or sustained-oscillating and measure its period.

    Parameters
    ----------
    q : array
        Queue (bytes) on a uniform grid of step ``dt`` (s), settling already removed.
    qeq : float
        Set point (bytes): the amplitude threshold is ``AMPLITUDE_MIN * qeq``.
    max_period : float, optional
        Longest period searched (default: a third of the trace).

    Returns
    -------
    dict
        ``mean``, ``std`` (bytes), ``underflow`` (fraction of bins below one frame),
        ``acf_peak`` (first ACF maximum after its first zero crossing), ``period_acf`` (s,
        lag of that peak), ``period_zc`` (s, twice the mean spacing of mean-crossings of the
        queue smoothed over a tenth of ``period_acf``), ``period_spread`` (s, std of the
        full-cycle lengths between alternate crossings), ``verdict`` ("stable",
        "oscillating" or "underflow").
    """
    q = np.asarray(q, dtype=float)
    out = dict(mean=float(q.mean()), std=float(q.std()),
               underflow=float(np.mean(q < EMPTY_BYTES)), acf_peak=0.0,
               period_acf=math.nan, period_zc=math.nan, period_spread=math.nan)  # fmt: skip
    a = _acf(q)
    lmax = len(q) // 3 if max_period is None else min(len(q) // 2, int(max_period / dt))
    neg = np.nonzero(a[:lmax] < 0)[0]
    if len(neg) and out["std"] > 0:
        z = neg[0]
        pk = z + int(np.argmax(a[z:lmax])) if lmax > z else z
        out["acf_peak"] = float(a[pk])
        out["period_acf"] = pk * dt
        w = max(1, int(round(0.1 * pk)))
        s = np.convolve(q - q.mean(), np.ones(w) / w, mode="valid")
        cross = np.nonzero(np.diff(np.sign(s)) != 0)[0]
        if len(cross) >= 3:
            full = (cross[2:] - cross[:-2]) * dt
            out["period_zc"] = float(np.mean(full))
            out["period_spread"] = float(np.std(full))
    if out["underflow"] >= UNDERFLOW_MIN:
        out["verdict"] = "underflow"
    elif out["acf_peak"] >= ACF_MIN and out["std"] >= AMPLITUDE_MIN * qeq:
        out["verdict"] = "oscillating"
    else:
        out["verdict"] = "stable"
    return out


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
