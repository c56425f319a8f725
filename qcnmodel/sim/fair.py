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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qcnmodel import fairness
from qcnmodel.sim.network import CompiledNetwork, ConstantFlow, NetworkSpec, compile_network

__all__ = [
    "RoutingMatrix",
    "fair_shares",
    "fair_summary",
    "fairness_error",
    "routing_matrix",
]

KINDS = ("max-min", "proportional")


@dataclass(frozen=True)
class RoutingMatrix:
    """Links x flows routing matrix with capacities (bit/s) and demands (bit/s)."""

    matrix: np.ndarray  #: [n_links, n_flows] 0/1
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
    A = np.zeros((len(used), net.n_flows))
    for f, path in enumerate(paths):
        for p in path:
            A[row[p], f] = 1.0
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
    solver = fairness.max_min_fair if kind == "max-min" else fairness.proportional_fair
    x = np.zeros(len(rm.flow_names))
    on = rm.demand > 0
    if on.any():
        x[on] = solver(rm.matrix[:, on], rm.capacity, rm.demand[on])
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
