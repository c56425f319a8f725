"""Fair rate allocations computed from a routing matrix: max-min and proportional fairness.

The decks quote fair allocations for their scenarios (scenarios.md S6, S7, S8, S9, S12); here
they are computed, not typed in, from which links each flow crosses, the link capacities and
each flow's demand (its offered rate).

* **Max-min fairness** by progressive filling (water-filling): all unfrozen flows grow at the
  same rate until a link saturates or a flow reaches its demand; flows through a saturated link
  (or at their demand) freeze. The result is the unique max-min fair allocation
  (Bertsekas & Gallager, *Data Networks*, §6.5.2).
* **Proportional fairness** maximises ``sum(log x_i)`` subject to ``A x <= c`` and
  ``0 < x <= demand`` (Kelly, Maulloo & Tan 1998). It is solved through its dual: link prices
  ``lam >= 0`` minimise ``D(lam) = sum_i max_{x_i <= d_i} (log x_i - x_i * (A^T lam)_i) + c^T lam``,
  whose primal is ``x_i = min(d_i, 1 / (A^T lam)_i)``; SciPy's L-BFGS-B minimises the smooth
  convex dual (in scaled units) with bounds ``lam >= 0``. BCN/ECM is reported to converge to
  this allocation (INFOCOM 2007; qcn-algorithm.md §4.1).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

__all__ = ["max_min_fair", "proportional_fair", "fairness_error"]


def _check(routing, capacity, demand):
    A = np.asarray(routing, dtype=float)
    if A.ndim != 2:
        raise ValueError("routing: expected a 2-D (links x flows) 0/1 matrix")
    c = np.asarray(capacity, dtype=float).reshape(-1)
    n_links, n_flows = A.shape
    if c.shape != (n_links,):
        raise ValueError(f"capacity: expected {n_links} link capacities, got {c.shape[0]}")
    if np.any(~np.isfinite(c)) or np.any(c <= 0):
        raise ValueError("capacity: every link capacity must be a positive finite rate (bit/s)")
    if demand is None:
        d = np.full(n_flows, np.inf)
    else:
        d = np.asarray(demand, dtype=float).reshape(-1)
        if d.shape != (n_flows,):
            raise ValueError(f"demand: expected {n_flows} flow demands, got {d.shape[0]}")
        if np.any(d <= 0):
            raise ValueError("demand: every flow demand must be positive (bit/s)")
    if np.any((A != 0) & (A != 1)):
        raise ValueError("routing: entries must be 0 or 1")
    unconstrained = (A.sum(axis=0) == 0) & ~np.isfinite(d)
    if np.any(unconstrained):
        raise ValueError(
            f"routing: flows {np.flatnonzero(unconstrained).tolist()} cross no link and have "
            "no finite demand, so their fair rate is unbounded"
        )
    return A, c, d


def max_min_fair(routing, capacity, demand=None) -> np.ndarray:
    """Max-min fair rates by progressive filling.

    Parameters
    ----------
    routing : array_like, shape (n_links, n_flows)
        1 where flow j crosses link l.
    capacity : array_like, shape (n_links,)
        Link capacities (bit/s).
    demand : array_like, shape (n_flows,), optional
        Offered rate of each flow (bit/s); default unlimited.

    Returns
    -------
    numpy.ndarray
        The max-min fair rate of each flow (bit/s).
    """
    A, c, d = _check(routing, capacity, demand)
    n_links, n_flows = A.shape
    x = np.zeros(n_flows)
    frozen = np.zeros(n_flows, dtype=bool)
    residual = c.copy()
    for _ in range(n_links + n_flows + 1):
        active = ~frozen
        if not active.any():
            break
        n_active = A[:, active].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            link_inc = np.where(n_active > 0, residual / n_active, np.inf)
        flow_inc = d[active] - x[active]
        inc = min(link_inc.min(initial=np.inf), flow_inc.min(initial=np.inf))
        x[active] += inc
        residual -= inc * n_active
        tol = 1e-12 * max(1.0, c.max())
        saturated = (residual <= tol) & (n_active > 0)
        frozen |= (A[saturated].sum(axis=0) > 0) | (x >= d - tol)
    return x


def proportional_fair(routing, capacity, demand=None) -> np.ndarray:
    """Proportionally fair rates: maximise sum(log x) subject to link capacities and demands.

    Parameters
    ----------
    routing, capacity, demand
        As for :func:`max_min_fair`.

    Returns
    -------
    numpy.ndarray
        The proportionally fair rate of each flow (bit/s), to a relative accuracy of about
        1e-6 (the dual solver's gradient tolerance; checked against the KKT conditions).
    """
    A, c, d = _check(routing, capacity, demand)
    scale = c.max()
    cs = c / scale
    ds = d / scale
    used = A.sum(axis=1) > 0

    def primal(lam):
        price = A.T @ lam
        with np.errstate(divide="ignore"):
            return np.minimum(ds, np.where(price > 0, 1.0 / price, np.inf))

    def dual(lam):
        x = primal(lam)
        price = A.T @ lam
        value = np.sum(np.log(x) - x * price) + cs @ lam
        grad = cs - A @ x
        return value, grad

    lam0 = np.where(used, A.sum(axis=1) / cs, 0.0)
    res = optimize.minimize(
        dual,
        lam0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None) if u else (0.0, 0.0) for u in used],
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000},
    )
    x = primal(res.x)
    if not np.all(np.isfinite(x)):
        raise RuntimeError("proportional_fair: the dual solver did not converge")
    return x * scale


def fairness_error(measured, fair) -> float:
    """Largest relative error of measured rates against a fair allocation.

    ``max_i |measured_i - fair_i| / fair_i``; both arrays in the same units.
    """
    m = np.asarray(measured, dtype=float)
    f = np.asarray(fair, dtype=float)
    if m.shape != f.shape:
        raise ValueError(f"measured: shape {m.shape} does not match fair shape {f.shape}")
    return float(np.max(np.abs(m - f) / f)) if f.size else 0.0
