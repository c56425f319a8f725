"""A compiled network: the flat arrays (integer ns, bit/s, bytes) that both the compiled kernel
and the pure-Python oracle consume, built by :func:`qcnmodel.sim.network.compile_network`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qcnmodel.sim.network.spec import NetworkSpec

__all__ = ["GEN_CBR", "GEN_UNIFORM", "CompiledNetwork", "FlowIndex", "Routing"]

GEN_UNIFORM = 0  #: Bernoulli-per-slot arrivals, uniform destination per frame
GEN_CBR = 1  #: constant-rate flow (optionally exponential on/off)


@dataclass
class Routing:
    """Compact routing tables: O(switches^2 + nodes) integers instead of nodes x hosts.

    A host has exactly one link, so the way to host ``d`` from a switch is the way to the
    switch ``d`` hangs from (``host_up[d]``), then ``d``'s link; hosts do not forward and send
    everything on their one port. ``sw_route[i, j]`` is switch ``i``'s port towards switch
    ``j`` (switch positions: ``node_sw``), -1 when ``j`` is unreachable or ``i == j``.
    """

    sw_route: np.ndarray  # [n_switches, n_switches] int32 port, -1 none
    node_sw: np.ndarray  # [n_nodes] switch position or -1 (host)
    host_up: np.ndarray  # [n_hosts] position of the switch the host hangs from, -1: a host
    host_port: np.ndarray  # [n_hosts] the host's one port (``port ^ 1``: the way back)

    def next_port(self, node: int, dst: int) -> int:
        """Egress port of ``node`` towards host ``dst``; -1 if ``dst`` is unreachable."""
        n_hosts = len(self.host_up)
        if node < n_hosts:  # a host: its one port, if that leads to dst
            if node == dst or not self.reaches(node, dst):
                return -1
            return int(self.host_port[node])
        s, u = int(self.node_sw[node]), int(self.host_up[dst])
        if u < 0:  # dst hangs from a host: only that host reaches it
            return -1
        if u == s:
            return int(self.host_port[dst]) ^ 1
        return int(self.sw_route[s, u])

    def reaches(self, src: int, dst: int) -> bool:
        """Whether host ``src`` has a path to host ``dst`` (``src != dst``)."""
        hp = self.host_port
        if src == dst:
            return False
        if int(hp[dst]) ^ 1 == int(hp[src]):  # two hosts joined by one link
            return True
        a, b = int(self.host_up[src]), int(self.host_up[dst])
        return a >= 0 and b >= 0 and (a == b or self.sw_route[a, b] >= 0)

    def table(self) -> np.ndarray:
        """The dense ``[n_nodes, n_hosts]`` table of :meth:`next_port` (small networks and
        tests only: nodes x hosts int64)."""
        n_hosts, n_nodes = len(self.host_up), len(self.node_sw)
        out = np.full((n_nodes, n_hosts), -1, np.int64)
        for node in range(n_nodes):
            for d in range(n_hosts):
                out[node, d] = self.next_port(node, d)
        return out


class FlowIndex:
    """Flow index of a (source host, destination host) pair: ``index[s, d]``, -1 if none
    (a dict, not a hosts x hosts table)."""

    def __init__(self, pairs: dict[tuple[int, int], int]) -> None:
        self._pairs = pairs

    def __getitem__(self, sd) -> int:
        s, d = sd
        return self._pairs.get((int(s), int(d)), -1)

    def __len__(self) -> int:
        return len(self._pairs)


@dataclass
class CompiledNetwork:
    """Flat arrays of a :class:`NetworkSpec` (all times in integer ns)."""

    spec: NetworkSpec
    node_names: list[str]
    n_hosts: int
    node_latency_ns: np.ndarray  # [n_nodes] int64 (0 for hosts)
    node_host: np.ndarray  # [n_nodes] host index or -1
    port_src: np.ndarray  # [n_ports] owner node
    port_dst: np.ndarray  # [n_ports] peer node
    port_rate: np.ndarray  # [n_ports] float64 bit/s
    port_prop_ns: np.ndarray  # [n_ports] int64
    port_part_limit: np.ndarray  # [n_ports] bytes of the partition at port_dst (switch) or -1
    port_oq_limit: np.ndarray  # [n_ports] bytes or -1 (none)
    port_xoff: np.ndarray  # [n_ports] high watermark or -1 (no PAUSE)
    port_xon: np.ndarray  # [n_ports] low watermark
    port_cp: np.ndarray  # [n_ports] 1 if the port's queue is a congestion point
    host_node: np.ndarray  # [n_hosts]
    host_port: np.ndarray  # [n_hosts]
    routing: Routing
    flow_src: np.ndarray  # [n_flows] host
    flow_dst: np.ndarray  # [n_flows] host
    flow_of: FlowIndex  # flow_of[s, d]: flow index or -1
    flow_voq_limit: np.ndarray  # [n_flows] frames
    flow_names: list[str]
    gen_host: np.ndarray
    gen_kind: np.ndarray
    gen_flow: np.ndarray  # CBR flow or -1
    gen_dst_start: np.ndarray
    gen_dst_count: np.ndarray
    dst_list: np.ndarray  # hosts, CSR for uniform generators
    dst_flow: np.ndarray  # the flow of each dst_list entry (source: the generator's host)
    gen_prob: np.ndarray  # float64
    gen_gap_ns: np.ndarray  # float64 slot (uniform) or gap (CBR)
    gen_start_ns: np.ndarray
    gen_stop_ns: np.ndarray
    gen_on_ns: np.ndarray  # float64 mean on (0 = always on)
    gen_off_ns: np.ndarray
    host_gen_start: np.ndarray
    host_gen_count: np.ndarray
    hs_port: np.ndarray  # port whose rate changes
    hs_monitor: np.ndarray  # port reported as the hot queue (the CP)
    hs_rate: np.ndarray
    hs_start_ns: np.ndarray
    hs_stop_ns: np.ndarray
    frame_size: int
    hot_flows: np.ndarray  # flows whose path crosses a hotspot port
    fair_flows: np.ndarray
    offered_bps: np.ndarray  # [n_flows] mean offered rate

    def flow_route(self) -> tuple[np.ndarray, np.ndarray]:
        """Per flow: the position of the switch its destination hangs from (-1: a host) and
        the port into the destination; what the kernel and the oracle route frames by."""
        r = self.routing
        return r.host_up[self.flow_dst].astype(np.int64), self.host_port[self.flow_dst] ^ 1

    @property
    def n_ports(self) -> int:
        return len(self.port_src)

    @property
    def n_flows(self) -> int:
        return len(self.flow_src)

    def port_name(self, p: int) -> str:
        """Name ``"owner->peer"`` of port ``p``."""
        return f"{self.node_names[self.port_src[p]]}->{self.node_names[self.port_dst[p]]}"

    def path_ports(self, f: int) -> list[int]:
        """Egress ports crossed by flow ``f`` (adapter port first)."""
        node = int(self.host_node[self.flow_src[f]])
        dst = int(self.flow_dst[f])
        out = []
        while self.node_host[node] != dst:
            p = self.routing.next_port(node, dst)
            out.append(p)
            node = int(self.port_dst[p])
        return out
