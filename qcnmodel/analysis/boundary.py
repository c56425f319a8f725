"""The stability boundary in RTT of a model judged by its trajectories, not by a linearisation.

Some operating points have no linearisation that predicts the loop: one QCN flow sits in the
quantiser's dead zone (most CNMs carry qFb = 0 and hold its rate) and takes discrete cuts at
the sampling instants. A model can then declare ``boundary_method = "trajectories"`` and a
predicate ``trajectory_unstable()`` (its own nonlinear trajectories classified by the
oscillation detector of :mod:`.timeseries`); :func:`trajectory_critical_rtt` finds the RTT at
which that predicate turns, and :func:`qcnmodel.analysis.margins.critical_rtt` answers with it
for such models.

Like the rest of this layer it knows no protocol: a model is anything with ``rtt``,
``.replace(rtt=...)`` and ``.trajectory_unstable()``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["boundary_method", "first_unstable_rtt", "judged_by_trajectories", "judged_stable",
           "trajectory_critical_rtt"]  # fmt: skip


def boundary_method(model) -> str:
    """How ``model``'s stability boundary is found: its ``boundary_method``, else
    ``"linearisation"``."""
    return getattr(model, "boundary_method", "linearisation")


def judged_by_trajectories(model) -> bool:
    """Whether ``model`` declares ``boundary_method = "trajectories"``."""
    return boundary_method(model) == "trajectories"


def judged_stable(model, rtts, linear_stable, critical: float | None = None) -> np.ndarray:
    """Stability of ``model`` at the RTTs ``rtts``: the linearisation's (``linear_stable``),
    or, for a model judged by its trajectories, ``rtt < critical`` with ``critical`` its
    trajectories' critical RTT (computed when not given)."""
    if not judged_by_trajectories(model):
        return np.asarray(linear_stable, bool)
    crit = trajectory_critical_rtt(model) if critical is None else critical
    return np.asarray(rtts, float) < crit


def first_unstable_rtt(unstable, rtt_min: float, rtt_max: float, rel_tol: float = 0.005,
                       ladder: float = 1.5) -> float:  # fmt: skip
    """Smallest RTT at which ``unstable(rtt)`` holds, on a geometric ladder then bisection.

    Parameters
    ----------
    unstable : callable
        ``unstable(rtt) -> bool``; assumed to turn once, from False to True, as the RTT grows
        (the first turn is returned).
    rtt_min, rtt_max : float
        Search interval (s), ``0 < rtt_min < rtt_max < inf``.
    rel_tol : float
        Relative width of the final bracket; the answer is its geometric midpoint.
    ladder : float
        Ratio of consecutive RTTs of the ladder (> 1).

    Returns
    -------
    float
        The boundary (s); ``inf`` if stable up to ``rtt_max``; ``nan`` if already unstable at
        ``rtt_min`` (like :func:`~qcnmodel.analysis.margins.critical_rtt`).
    """
    if not (0 < rtt_min < rtt_max < math.inf):
        raise ValueError(f"rtt_min, rtt_max: need 0 < rtt_min < rtt_max < inf s, got "
                         f"{rtt_min!r}, {rtt_max!r}")  # fmt: skip
    if not (0 < rel_tol < 1) or not (ladder > 1):
        raise ValueError(f"rel_tol in (0, 1) and ladder > 1 needed, got {rel_tol!r}, {ladder!r}")
    if unstable(rtt_min):
        return math.nan
    lo = rtt_min
    while True:
        hi = min(lo * ladder, rtt_max)
        if unstable(hi):
            break
        if hi >= rtt_max:
            return math.inf
        lo = hi
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if unstable(mid):
            hi = mid
        else:
            lo = mid
    return math.sqrt(lo * hi)


def trajectory_critical_rtt(model, rtt_min: float | None = None, rtt_max: float | None = None,
                            rel_tol: float = 0.005) -> float:  # fmt: skip
    """Critical RTT (s) of ``model`` from its own trajectories: the smallest RTT at which
    ``model.replace(rtt=rtt).trajectory_unstable()`` holds (:func:`first_unstable_rtt`).

    The search interval defaults to ``config.defaults["analysis.trajectory_rtt_search"]``
    (trajectories cost time per RTT, so the interval is the physically relevant one, not the
    linear search's). Returns ``inf`` when stable up to ``rtt_max`` and ``nan`` when already
    unstable at ``rtt_min``.
    """
    from qcnmodel import config

    lo, hi = config.defaults["analysis.trajectory_rtt_search"]
    lo, hi = lo if rtt_min is None else rtt_min, hi if rtt_max is None else rtt_max
    return first_unstable_rtt(lambda r: bool(model.replace(rtt=r).trajectory_unstable()),
                              float(lo), float(hi), rel_tol)  # fmt: skip
