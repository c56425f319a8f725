"""Fair allocations of a simulated network, computed from its topology.

The routing matrix comes from the compiled network (:func:`qcnmodel.sim.network.compile_network`,
so the routes are exactly the ones the simulator uses): one row per directed port (egress
queue) crossed by at least one flow, one column per flow, 1 where the flow's path crosses the
port. The solvers are those of :mod:`qcnmodel.fairness` (progressive filling for max-min,
the convex dual for proportional fairness).

Modelling choices:

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

The matrix is kept sparse (``scipy.sparse``): uniform traffic on N nodes has N(N-1) flows, so
max-min fairness uses :func:`max_min_fair_sparse`, the progressive filling of
:func:`qcnmodel.fairness.max_min_fair` with sparse products (O(nonzeros) per step);
proportional fairness uses the dense solver of :mod:`qcnmodel.fairness`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from qcnmodel import fairness
from qcnmodel.sim.network import CompiledNetwork, ConstantFlow, NetworkSpec, compile_network

__all__ = [
    "RoutingMatrix",
    "fair_shares",
    "fair_summary",
    "fairness_error",
    "max_min_fair_sparse",
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


def max_min_fair_sparse(A, capacity, demand) -> np.ndarray:
    """Max-min fair rates by progressive filling on a sparse routing matrix.

    Same algorithm and tolerances as :func:`qcnmodel.fairness.max_min_fair` (all unfrozen
    flows grow together until a link saturates or a flow reaches its demand).

    Parameters
    ----------
    A : scipy.sparse array, shape (n_links, n_flows)
        1 where flow j crosses link l.
    capacity : array_like, shape (n_links,)
        Link capacities (bit/s), positive.
    demand : array_like, shape (n_flows,)
        Flow demands (bit/s), positive (``inf`` = unlimited).

    Returns
    -------
    numpy.ndarray
        The max-min fair rate of each flow (bit/s).
    """
    A = sparse.csr_array(A, dtype=float)
    At = A.T.tocsr()
    c = np.asarray(capacity, dtype=float)
    d = np.asarray(demand, dtype=float)
    n_links, n_flows = A.shape
    if np.any(c <= 0) or np.any(d <= 0):
        raise ValueError("capacity, demand: must be positive (bit/s)")
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
        if not np.isfinite(inc):
            raise ValueError("routing: some flows cross no link and have no finite demand")
        x[active] += inc
        residual -= inc * n_active
        saturated = (residual <= tol) & (n_active > 0)
        frozen |= (At @ saturated.astype(float) > 0) | (x >= d - tol)
    return x


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
            x[on] = max_min_fair_sparse(A, rm.capacity, rm.demand[on])
        else:
            x[on] = fairness.proportional_fair(A.toarray(), rm.capacity, rm.demand[on])
    return {name: float(v) for name, v in zip(rm.flow_names, x)}


def fairness_error(measured: dict[str, float], fair: dict[str, float]) -> float | None:
    """Largest relative error ``max |measured - fair| / fair`` over the flows of ``fair``.

    A flow missing from ``measured`` counts as 0 bit/s. None when ``fair`` is empty.
    """
    if not fair:
        return None
    names = list(fair)
    m = [float(measured.get(n, 0.0)) for n in names]
    return fairness.fairness_error(m, [fair[n] for n in names])


def fair_summary(
    network: NetworkSpec | CompiledNetwork, flow_throughput_bps: dict[str, float]
) -> dict:
    """The two summary entries ``fair_share_bps`` (max-min) and ``fairness_error``."""
    shares = fair_shares(network, "max-min")
    return {
        "fair_share_bps": shares,
        "fairness_error": fairness_error(flow_throughput_bps, shares),
    }
