"""Metrics of a simulation: fairness, utilisation, queue statistics, recovery time.

Definitions (used by :meth:`qcnmodel.sim.api.SimResult.summary`):

* **Jain fairness** of rates x_1..x_n: (sum x)^2 / (n sum x^2), in (0, 1]; 1 = equal shares.
  Applied to the per-flow throughputs, over the measurement window, of the scenario's
  ``fair_flows`` (by default the flows that cross a hotspot port). 1.0 for a single flow,
  None without flows or when every rate is 0.
* **Utilisation** of a port over a window: bytes transmitted * 8 / (window * capacity), the
  capacity averaged over the window: the hotspot's drain rate while it is active, the link rate
  otherwise (so a window before the hotspot starts is measured against the link rate).
* **Mean / peak queue**: time average (exact integral of the queue-length step function) and
  maximum of the hot port's output queue over the window.
* **Recovery time** (OG hotspots; the Teak and NetFPGA decks' "recovery time"): the time from
  the end of the hotspot until the traffic *arriving* at the hot port (bytes enqueued or dropped
  there, i.e. what the sources' rate limiters let through), averaged over a hold window
  (``config.defaults["sim.recovery_hold"]``, 10 ms), first reaches ``(1 - tol)``
  (``["sim.recovery_tol"]``: 90%) of its target
  ``min(port capacity, offered load towards the port after the hotspot)``. Arrivals rather
  than departures, so that a backlog draining at line rate does not count as recovered
  sources; without congestion control the sources are never throttled and it is ~0. The hold window
  starts at a bin boundary, so the resolution is the trace bin width. None when the hotspot
  does not end within the run, when the target is 0 (e.g. an IG hotspot whose culprits stop),
  or when the throughput never recovers before the end of the run.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["jain_fairness", "mean_capacity", "queue_stats", "recovery_time", "utilisation"]


def jain_fairness(rates) -> float | None:
    """Jain's index (sum x)^2 / (n sum x^2); None for no flows or all-zero rates."""
    x = np.asarray(list(rates), dtype=float)
    if x.size == 0:
        return None
    s2 = float(np.sum(x * x))
    if s2 <= 0.0:
        return None
    return float(np.sum(x) ** 2 / (x.size * s2))


def utilisation(bytes_sent: float, window_s: float, capacity_bps: float) -> float | None:
    """Bytes sent * 8 / (window * capacity); None for an empty window."""
    if window_s <= 0 or capacity_bps <= 0:
        return None
    return float(bytes_sent) * 8.0 / (window_s * capacity_bps)


def mean_capacity(link_bps: float, hot_bps: float, start_s: float, stop_s: float, a_s: float,
                  b_s: float) -> float:  # fmt: skip
    """Time average over [a_s, b_s] of a port's capacity: ``min(hot_bps, link_bps)`` while a
    hotspot is active in [start_s, stop_s), ``link_bps`` otherwise; ``link_bps`` for an empty
    window."""
    span = b_s - a_s
    if span <= 0:
        return link_bps
    active = max(0.0, min(b_s, stop_s) - max(a_s, start_s))
    hot = min(hot_bps, link_bps)
    return (hot * active + link_bps * (span - active)) / span


def queue_stats(area_end, area_start, qmax_bins, window_s) -> tuple[float, float]:
    """Mean (from the queue integrals in byte*ns at the window ends) and peak queue (bytes)."""
    mean = (float(area_end) - float(area_start)) / (window_s * 1e9) if window_s > 0 else 0.0
    peak = float(np.max(qmax_bins)) if len(qmax_bins) else 0.0
    return mean, peak


def recovery_time(
    time_end_s,
    throughput_bps,
    bin_s: float,
    stop_s: float,
    target_bps: float,
    tol: float | None = None,
    hold_s: float | None = None,
) -> float | None:
    """Recovery time after the hotspot end (module docstring), from a binned throughput.

    Parameters
    ----------
    time_end_s : array
        Bin end times (s).
    throughput_bps : array
        Hot-port arrival rate per bin (bit/s).
    bin_s : float
        Bin width (s).
    stop_s : float
        Hotspot end (s).
    target_bps : float
        Throughput that counts as recovered (before the ``tol`` margin).
    tol, hold_s : float, optional
        Margin and hold window (default ``config.defaults["sim.recovery_tol"]`` and
        ``["sim.recovery_hold"]``).
    """
    from qcnmodel import config

    tol = config.defaults["sim.recovery_tol"] if tol is None else tol
    hold_s = config.defaults["sim.recovery_hold"] if hold_s is None else hold_s
    if not math.isfinite(stop_s) or target_bps <= 0:
        return None
    t_end = np.asarray(time_end_s, dtype=float)
    thr = np.asarray(throughput_bps, dtype=float)
    first = int(np.searchsorted(t_end - bin_s, stop_s - 1e-12))
    hold = max(1, int(round(hold_s / bin_s)))
    level = (1.0 - tol) * target_bps
    i = _first_window_at(thr[first:], hold, level)
    return None if i is None else max(0.0, float(t_end[first + i] - bin_s - stop_s))


def _first_window_at(x, hold: int, level: float, chunk: int = 1 << 20) -> int | None:
    """Index of the first window ``x[i : i + hold]`` whose mean is ``>= level``, or None.

    Candidates come from running sums (linear time, memory bounded by ``chunk``), each
    confirmed with ``np.mean`` of the window itself, the definition, so that the rounding of
    the running sums never decides.
    """
    n = len(x) - hold + 1
    if n <= 0:
        return None
    slack = 1e-9 * max(abs(level), 1.0) * hold
    start = 0
    while start < n:
        stop = min(n, start + chunk)
        c = np.concatenate(([0.0], np.cumsum(x[start : stop + hold - 1])))
        sums = c[hold:] - c[: len(c) - hold]
        for j in np.flatnonzero(sums >= level * hold - slack - 1e-9 * np.abs(c[hold:])):
            if float(np.mean(x[start + j : start + j + hold])) >= level:
                return start + int(j)
        start = stop
    return None
