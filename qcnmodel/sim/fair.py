"""Fair rate allocations: max-min and proportional fairness, and those of a simulated network.

Two levels, one solver each:

* From a routing matrix (links x flows, 1 where the flow crosses the link), link capacities
  and flow demands (the flows' offered rates): :func:`max_min_fair` and
  :func:`proportional_fair`. The decks quote fair allocations for their scenarios (parking
  lot, dual hotspots, IG hotspot); here they are computed, not typed in.

  - **Max-min fairness** by progressive filling (water-filling): all unfrozen flows grow at the
    same rate until a link saturates or a flow reaches its demand; flows through a saturated
    link (or at their demand) freeze. The result is the unique max-min fair allocation
    (Bertsekas & Gallager, *Data Networks*, §6.5.2). The matrix may be dense or
    ``scipy.sparse``: the filling uses sparse products (O(nonzeros) per step), so uniform
    traffic on N nodes (N(N-1) flows) stays cheap.
  - **Proportional fairness** maximises ``sum(log x_i)`` subject to ``A x <= c`` and
    ``0 < x <= demand`` (Kelly, Maulloo & Tan 1998). It is solved through its dual: link
    prices ``lam >= 0`` minimise ``D(lam) = sum_i max_{x_i <= d_i} (log x_i - x_i (A^T lam)_i)
    + c^T lam``, whose primal is ``x_i = min(d_i, 1 / (A^T lam)_i)``; SciPy's L-BFGS-B
    minimises the smooth convex dual (in scaled units) with bounds ``lam >= 0``. BCN/ECM is
    reported to converge to this allocation (Jiang, Jain & Ravindran, INFOCOM 2007).

* From a network (:func:`routing_matrix`, :func:`fair_shares`, :func:`fair_summary`): the
  routing matrix comes from the compiled network (:func:`qcnmodel.sim.network.compile_network`,
  so the routes are exactly the ones the simulator uses): one row per directed port (egress
  queue) crossed by at least one flow, one column per flow.

Modelling choices of the network level:

* **Capacity** of a port = its link rate, except the port drained by a hotspot
  (:class:`~qcnmodel.sim.network.Hotspot`, "service rate x%"): its capacity is
  ``min(link rate, hotspot rate)``. By default every hotspot of the spec is applied (the
  allocation *during* the hotspot, which is also the simulator's default measurement window);
  ``at=t`` applies only the hotspots active at time ``t`` (``start <= t < stop``), and flows
  none of whose generators is on at ``t`` get a fair rate of 0 (and no demand).
* **Demand** of a flow = its mean offered rate while its generator is on
  (``CompiledNetwork.offered_bps``: the flow's rate, ``rate / n_destinations`` for uniform
  traffic, ``rate * on / (on + off)`` for exponential on/off sources), capped by the link rate.
  Without ``at``, start/stop times of the generators are not taken into account.
* Adapter ports (a host's own link) are links like any other: several flows from one host
  share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qcnmodel.sim.network import CompiledNetwork, ConstantFlow, NetworkSpec, compile_network

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "RoutingMatrix",
    "fair_shares",
    "fair_summary",
    "fairness_error",
    "max_min_fair",
    "max_min_fair_sparse",
    "proportional_fair",
    "routing_matrix",
]

KINDS = ("max-min", "proportional")


@dataclass(frozen=True)
class RoutingMatrix:
    """Links x flows routing matrix with capacities (bit/s) and demands (bit/s)."""

    matrix: sparse.csr_array  #: [n_links, n_flows] 0/1
    capacity: np.ndarray  #: [n_links] bit/s
    demand: np.ndarray  #: [n_flows] bit/s
    link_names: list[str]  #: ``"owner->peer"`` port names
    flow_names: list[str]  #: ``"src->dst"`` flow names

    def congested_links(self) -> list[str]:
        """Ports whose total demand exceeds their capacity (the congestion points)."""
        load = self.matrix @ self.demand
        return [n for n, x, c in zip(self.link_names, load, self.capacity) if x > c * (1 + 1e-12)]


def _compiled(network: NetworkSpec | CompiledNetwork) -> CompiledNetwork:
    if isinstance(network, CompiledNetwork):
        return network
    if isinstance(network, NetworkSpec):
        return compile_network(network)
    raise TypeError(f"network: expected a NetworkSpec or CompiledNetwork, got {type(network)}")


def routing_matrix(
    network: NetworkSpec | CompiledNetwork, at: float | None = None
) -> RoutingMatrix:
    """The links x flows routing matrix of ``network`` (see the module docstring).

    Parameters
    ----------
    network : NetworkSpec or CompiledNetwork
    at : float, optional
        Apply only the hotspots active at this time (s); default: every hotspot.

    Returns
    -------
    RoutingMatrix
    """
    net = _compiled(network)
    cap = net.port_rate.astype(float).copy()
    for k in range(len(net.hs_port)):
        a, b = net.hs_start_ns[k] / 1e9, net.hs_stop_ns[k] / 1e9
        if at is None or a <= at < b:
            p = int(net.hs_port[k])
            cap[p] = min(cap[p], float(net.hs_rate[k]))
    paths = [net.path_ports(f) for f in range(net.n_flows)]
    used = sorted({p for path in paths for p in path})
    row = {p: i for i, p in enumerate(used)}
    rows = [row[p] for path in paths for p in path]
    cols = [f for f, path in enumerate(paths) for _ in path]
    from scipy import sparse  # imported when needed (start-up time of a run)

    A = sparse.csr_array(
        (np.ones(len(rows)), (rows, cols)), shape=(len(used), net.n_flows), dtype=float
    )
    demand = np.minimum(net.offered_bps, net.port_rate[net.host_port[net.flow_src]])
    if at is not None:
        demand = np.where(_active_flows(net, at), demand, 0.0)
    return RoutingMatrix(
        matrix=A,
        capacity=cap[used],
        demand=np.asarray(demand, dtype=float),
        link_names=[net.port_name(p) for p in used],
        flow_names=list(net.flow_names),
    )


def _check(routing, capacity, demand):
    """Validated (sparse routing matrix, capacities, demands); unlimited demand = inf."""
    from scipy import sparse  # imported when needed (start-up time of a run)

    A = sparse.csr_array(routing, dtype=float)
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
    if np.any((A.data != 0) & (A.data != 1)):
        raise ValueError("routing: entries must be 0 or 1")
    unconstrained = (np.asarray(A.sum(axis=0)).reshape(-1) == 0) & ~np.isfinite(d)
    if np.any(unconstrained):
        raise ValueError(
            f"routing: flows {np.flatnonzero(unconstrained).tolist()} cross no link and have "
            "no finite demand, so their fair rate is unbounded"
        )
    return A, c, d


def max_min_fair(routing, capacity, demand=None) -> np.ndarray:
    """Max-min fair rates by progressive filling (module docstring).

    Parameters
    ----------
    routing : array_like or scipy.sparse array, shape (n_links, n_flows)
        1 where flow j crosses link l.
    capacity : array_like, shape (n_links,)
        Link capacities (bit/s), positive.
    demand : array_like, shape (n_flows,), optional
        Offered rate of each flow (bit/s), positive; default (or ``inf``) unlimited.

    Returns
    -------
    numpy.ndarray
        The max-min fair rate of each flow (bit/s).
    """
    A, c, d = _check(routing, capacity, demand)
    At = A.T.tocsr()
    n_links, n_flows = A.shape
    x = np.zeros(n_flows)
    frozen = np.zeros(n_flows, dtype=bool)
    residual = c.copy()
    tol = 1e-12 * max(1.0, float(c.max(initial=0.0)))
    for _ in range(n_links + n_flows + 1):
        active = ~frozen
        if not active.any():
            break
        n_active = A @ active.astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            link_inc = np.where(n_active > 0, residual / n_active, np.inf)
        inc = min(link_inc.min(initial=np.inf), (d[active] - x[active]).min(initial=np.inf))
        x[active] += inc
        residual -= inc * n_active
        saturated = (residual <= tol) & (n_active > 0)
        frozen |= (At @ saturated.astype(float) > 0) | (x >= d - tol)
    return x


#: Former name of :func:`max_min_fair` (which now takes sparse matrices itself).
max_min_fair_sparse = max_min_fair


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
    A = A.toarray()
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
    from scipy import optimize

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


def fairness_error(measured, fair) -> float | None:
    """Largest relative error ``max |measured - fair| / fair`` of measured rates.

    Two forms, the same units on both sides:

    * dicts ``flow name -> bit/s``: over the flows of ``fair``; a flow missing from
      ``measured`` counts as 0 bit/s; None when ``fair`` is empty;
    * arrays in the same flow order (shapes must match); 0.0 when empty.
    """
    if isinstance(fair, dict):
        if not fair:
            return None
        names = list(fair)
        measured = [float(measured.get(n, 0.0)) for n in names]
        fair = [fair[n] for n in names]
    m = np.asarray(measured, dtype=float)
    f = np.asarray(fair, dtype=float)
    if m.shape != f.shape:
        raise ValueError(f"measured: shape {m.shape} does not match fair shape {f.shape}")
    return float(np.max(np.abs(m - f) / f)) if f.size else 0.0


def _active_flows(net: CompiledNetwork, t: float) -> np.ndarray:
    """Flows with at least one generator on at time ``t``."""
    idx = {n: i for i, n in enumerate(net.node_names)}
    hosts = net.node_names[: net.n_hosts]
    on = np.zeros(net.n_flows, dtype=bool)
    for g in net.spec.traffic:
        if not g.start <= t < g.stop:
            continue
        dests = [g.dest] if isinstance(g, ConstantFlow) else (
            g.destinations or [h for h in hosts if h != g.source])  # fmt: skip
        for d in dests:
            on[net.flow_of[idx[g.source], idx[d]]] = True
    return on


def fair_shares(
    network: NetworkSpec | CompiledNetwork, kind: str = "max-min", at: float | None = None
) -> dict[str, float]:
    """Fair rate of every flow of ``network``.

    Parameters
    ----------
    network : NetworkSpec or CompiledNetwork
    kind : {"max-min", "proportional"}
        Max-min fairness (progressive filling) or proportional fairness (max sum log x).
    at : float, optional
        Time at which the hotspots are evaluated (default: all hotspots applied).

    Returns
    -------
    dict
        Flow name (``"src->dst"``) -> fair rate in bit/s, in the network's flow order.

    Raises
    ------
    ValueError
        For an unknown ``kind``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    rm = routing_matrix(network, at=at)
    x = np.zeros(len(rm.flow_names))
    on = rm.demand > 0
    if on.any():
        A = rm.matrix[:, np.flatnonzero(on)]
        if kind == "max-min":
            x[on] = max_min_fair(A, rm.capacity, rm.demand[on])
        else:
            x[on] = proportional_fair(A, rm.capacity, rm.demand[on])
    return {name: float(v) for name, v in zip(rm.flow_names, x)}


def fair_summary(
    network: NetworkSpec | CompiledNetwork, flow_throughput_bps: dict[str, float]
) -> dict:
    """The two summary entries ``fair_share_bps`` (max-min) and ``fairness_error``."""
    shares = fair_shares(network, "max-min")
    return {
        "fair_share_bps": shares,
        "fairness_error": fairness_error(flow_throughput_bps, shares),
    }
