"""A compiled network: the flat arrays (integer ns, bit/s, bytes) that both the compiled kernel
and the pure-Python oracle consume, built by :func:`qcnmodel.sim.network.compile_network`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qcnmodel.sim.network.spec import NetworkSpec

__all__ = ["GEN_CBR", "GEN_UNIFORM", "CompiledNetwork"]

GEN_UNIFORM = 0  #: Bernoulli-per-slot arrivals, uniform destination per frame
GEN_CBR = 1  #: constant-rate flow (optionally exponential on/off)


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
    route: np.ndarray  # [n_nodes, n_hosts] egress port towards host
    flow_src: np.ndarray  # [n_flows] host
    flow_dst: np.ndarray  # [n_flows] host
    flow_of: np.ndarray  # [n_hosts, n_hosts] flow index or -1
    flow_voq_limit: np.ndarray  # [n_flows] frames
    flow_names: list[str]
    gen_host: np.ndarray
    gen_kind: np.ndarray
    gen_flow: np.ndarray  # CBR flow or -1
    gen_dst_start: np.ndarray
    gen_dst_count: np.ndarray
    dst_list: np.ndarray  # hosts, CSR for uniform generators
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
            p = int(self.route[node, dst])
            out.append(p)
            node = int(self.port_dst[p])
        return out
