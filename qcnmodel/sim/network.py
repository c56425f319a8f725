"""Network description (:class:`NetworkSpec`) and its compilation to flat arrays.

A :class:`NetworkSpec` is a plain, frozen description of hosts (adapters), switches, full-duplex
links, traffic generators, hotspots, buffers and PAUSE (scenarios.md, "Common models"). It is
general (multi-switch, multi-hop) so that a topology file loader can build one.
:func:`compile_network` turns it into the flat numpy arrays that both the compiled kernel
(:mod:`qcnmodel.sim.kernel`) and the pure-Python oracle (:mod:`qcnmodel.sim.oracle`) consume.

Modelling choices (all documented here, referenced by the scenario docstrings):

* Time is integer nanoseconds inside the simulator; rates are bit/s, sizes bytes.
* Every link is full duplex; each direction is a *port* (an egress queue at its tail node) with
  a rate and a propagation delay. A host has exactly one link (its adapter port).
* Routing is shortest path (BFS hop count); ties go to the lowest port index.
* Switch memory (seed 000, qcn-algorithm.md §5): every input port owns a partition of
  ``switch_memory`` bytes; a frame occupies the partition of the port it arrived on from
  enqueue until its transmission ends. A frame is dropped when its input partition would
  overflow or when the output queue would exceed ``oq_limit`` (0 = no limit).
* PAUSE (802.3x, §5): per switch input, XOFF upstream when the partition reaches
  ``high = M - pause_rtt * link_rate * headroom_factor``, XON when it falls to
  ``low = high - pause_hysteresis``. XON/XOFF only (no timed expiry; equivalent to the
  default "refreshed while above low"); refreshes are not counted. PAUSE frames take the
  link's propagation delay; a frame in transmission completes.
* Adapter (§5, "our reading"): one virtual output queue (VOQ) per destination, i.e. per flow,
  holding at most ``adapter_ib / n_voq`` bytes (the input buffer partitioned per VOQ, drop
  when full: counted as ``frames_blocked``, not as network drops); VOQs are served round
  robin among those whose rate limiter allows a frame (§2.4).
* Hotspot (scenarios.md, "Service rate x%"): the switch egress port towards the hot node is
  drained at the hotspot rate between ``start`` and ``stop``; that port is the congestion point.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Buffers",
    "CompiledNetwork",
    "ConstantFlow",
    "Host",
    "Hotspot",
    "Link",
    "NetworkSpec",
    "PauseConfig",
    "Switch",
    "UniformTraffic",
    "compile_network",
]

GEN_UNIFORM = 0  #: Bernoulli-per-slot arrivals, uniform destination per frame
GEN_CBR = 1  #: constant-rate flow (optionally exponential on/off)
NS = 1e9


@dataclass(frozen=True)
class Host:
    """An end node with a QCN adapter (reaction points, VOQs)."""

    name: str


@dataclass(frozen=True)
class Switch:
    """A switch; ``latency`` is its processing latency in seconds (seeds 003/004: 1 us)."""

    name: str
    latency: float = 1e-6


@dataclass(frozen=True)
class Link:
    """Full-duplex link between nodes ``a`` and ``b`` (rate bit/s, propagation delay s)."""

    a: str
    b: str
    rate: float = 10e9
    delay: float = 0.5e-6


@dataclass(frozen=True)
class UniformTraffic:
    """Bernoulli arrivals per slot at ``source``, destination uniform per frame.

    A slot is one frame time at the source's link rate; a frame arrives in each slot with
    probability ``rate / link_rate`` (seeds 003/004 "Bernoulli"; scenarios.md "uniform
    destination distribution"). ``destinations`` defaults to every other host.
    """

    source: str
    rate: float
    destinations: tuple[str, ...] | None = None
    start: float = 0.0
    stop: float = math.inf


@dataclass(frozen=True)
class ConstantFlow:
    """Constant-rate flow ``source -> dest`` at ``rate`` bit/s.

    With ``on_mean`` and ``off_mean`` > 0 the flow is an exponential on/off source
    (scenarios.md S5): it sends at ``rate`` during on periods and nothing during off periods.
    """

    source: str
    dest: str
    rate: float
    start: float = 0.0
    stop: float = math.inf
    on_mean: float = 0.0
    off_mean: float = 0.0


@dataclass(frozen=True)
class Hotspot:
    """Hot node ``node`` served at ``rate`` bit/s in [start, stop).

    ``mode="port"`` (default): the switch egress port towards ``node`` drains at ``rate``
    (scenarios.md: "the hot node drains its egress port at x%"); that port is the CP.
    ``mode="adapter"`` (qcn-algorithm.md §5, "our reading of IB and OB"): the node's adapter
    output buffer OB (``Buffers.adapter_ob``) drains at ``rate`` and PAUSEs the switch port
    when it crosses ``high = OB - pause_rtt * bw`` (XON at ``high - hysteresis``), whatever
    ``PauseConfig.enabled`` says for the switches; the switch port towards the node, backed
    up by PAUSE, is then the CP. Modelled as a zero-latency pseudo-switch ``<node>.ob``
    without CP between the switch and the node.
    """

    node: str
    rate: float
    start: float = 0.0
    stop: float = math.inf
    mode: str = "port"


@dataclass(frozen=True)
class Buffers:
    """Buffer sizes in bytes (``math.inf`` = unlimited; ``oq_limit`` 0 = no OQ limit)."""

    switch_memory: float = 150e3
    oq_limit: float = 0.0
    adapter_ib: float = 1.5e6
    adapter_ob: float = 1.5e6


@dataclass(frozen=True)
class PauseConfig:
    """802.3x PAUSE at switch inputs with watermarks from qcn-algorithm.md §5."""

    enabled: bool = False
    rtt: float = 0.0
    headroom_factor: float = 1.0
    hysteresis: float = 10e3


@dataclass(frozen=True)
class NetworkSpec:
    """Complete description of one simulated network (see module docstring)."""

    name: str
    hosts: tuple[Host, ...]
    switches: tuple[Switch, ...]
    links: tuple[Link, ...]
    traffic: tuple[UniformTraffic | ConstantFlow, ...] = ()
    hotspots: tuple[Hotspot, ...] = ()
    buffers: Buffers = field(default_factory=Buffers)
    pause: PauseConfig = field(default_factory=PauseConfig)
    frame_size: int = 1500
    #: flows (src, dst) whose Jain fairness is reported; empty = flows crossing a hotspot
    #: port, or every flow without hotspots
    fair_flows: tuple[tuple[str, str], ...] = ()
    #: measurement window (s) for per-flow throughput; None = hotspot interval or whole run
    measure: tuple[float, float] | None = None


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


def _expand_adapter_hotspots(spec: NetworkSpec) -> tuple[NetworkSpec, set[str]]:
    """Insert a pseudo-switch ``<node>.ob`` in front of every ``mode="adapter"`` hot node."""
    obs = set()
    for hs in spec.hotspots:
        if hs.mode not in ("port", "adapter"):
            raise ValueError(f"hot_mode: {hs.mode!r} is not one of port, adapter")
        if hs.mode == "adapter":
            obs.add(hs.node)
    if not obs:
        return spec, set()
    links, switches = [], list(spec.switches)
    for ln in spec.links:
        for n in (ln.a, ln.b):
            if n in obs:
                other = ln.b if n == ln.a else ln.a
                links.append(Link(other, n + ".ob", ln.rate, ln.delay))
                links.append(Link(n + ".ob", n, ln.rate, 0.0))
                break
        else:
            links.append(ln)
    switches += [Switch(n + ".ob", 0.0) for n in sorted(obs)]
    new = NetworkSpec(spec.name, spec.hosts, tuple(switches), tuple(links), spec.traffic,
                      spec.hotspots, spec.buffers, spec.pause, spec.frame_size,
                      spec.fair_flows, spec.measure)  # fmt: skip
    return new, {n + ".ob" for n in obs}


def _ns(seconds: float) -> int:
    if math.isinf(seconds):
        return np.iinfo(np.int64).max // 4
    return int(round(seconds * NS))


def compile_network(spec: NetworkSpec) -> CompiledNetwork:
    """Validate ``spec`` and flatten it (see module docstring for the semantics).

    Raises
    ------
    ValueError
        Naming the offending element (unknown node, duplicate name, host with several links,
        unreachable destination, bad rate...).
    """
    spec_in = spec
    spec, ob_nodes = _expand_adapter_hotspots(spec)
    names = [h.name for h in spec.hosts] + [s.name for s in spec.switches]
    if len(set(names)) != len(names):
        raise ValueError("network: node names must be unique")
    idx = {n: i for i, n in enumerate(names)}
    n_hosts = len(spec.hosts)
    n_nodes = len(names)
    if n_hosts < 2:
        raise ValueError("network: at least two hosts are needed")
    latency = np.zeros(n_nodes, np.int64)
    for k, s in enumerate(spec.switches):
        if s.latency < 0:
            raise ValueError(f"switch {s.name}: latency must be >= 0")
        latency[n_hosts + k] = _ns(s.latency)
    node_host = np.full(n_nodes, -1, np.int64)
    node_host[:n_hosts] = np.arange(n_hosts)

    def node(name: str, what: str) -> int:
        if name not in idx:
            raise ValueError(f"{what}: unknown node {name!r} (known: {', '.join(names)})")
        return idx[name]

    src, dst, rate, prop = [], [], [], []
    for ln in spec.links:
        a, b = node(ln.a, "link"), node(ln.b, "link")
        if not (ln.rate > 0 and math.isfinite(ln.rate)):
            raise ValueError(f"link {ln.a}-{ln.b}: rate must be a positive number of bit/s")
        if ln.delay < 0:
            raise ValueError(f"link {ln.a}-{ln.b}: delay must be >= 0")
        for u, v in ((a, b), (b, a)):
            src.append(u)
            dst.append(v)
            rate.append(float(ln.rate))
            prop.append(_ns(ln.delay))
    n_ports = len(src)
    port_src = np.array(src, np.int64)
    port_dst = np.array(dst, np.int64)
    adj: list[list[int]] = [[] for _ in range(n_nodes)]
    for p in range(n_ports):
        adj[port_src[p]].append(p)
    host_port = np.zeros(n_hosts, np.int64)
    for h in range(n_hosts):
        if len(adj[h]) != 1:
            raise ValueError(f"host {names[h]}: must have exactly one link, has {len(adj[h])}")
        host_port[h] = adj[h][0]
    # BFS from each destination host; ties -> lowest port index
    route = np.full((n_nodes, n_hosts), -1, np.int64)
    for d in range(n_hosts):
        dist = np.full(n_nodes, -1)
        dist[d] = 0
        dq = deque([d])
        while dq:
            u = dq.popleft()
            if node_host[u] >= 0 and u != d:
                continue  # hosts do not forward
            for p in adj[u]:
                v = port_dst[p]
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    dq.append(v)
        for u in range(n_nodes):
            if u == d or dist[u] < 0:
                continue
            for p in sorted(adj[u]):
                if dist[port_dst[p]] == dist[u] - 1:
                    route[u, d] = p
                    break
    # buffers and PAUSE
    b, pz = spec.buffers, spec.pause
    part = np.full(n_ports, -1, np.int64)
    oq = np.full(n_ports, -1, np.int64)
    xoff = np.full(n_ports, -1, np.int64)
    xon = np.full(n_ports, -1, np.int64)
    big = np.iinfo(np.int64).max // 4
    if not b.switch_memory > 0:
        raise ValueError("switch_memory: must be > 0 bytes")
    for p in range(n_ports):
        if node_host[port_dst[p]] < 0:  # arrives at a switch
            part[p] = big if math.isinf(b.switch_memory) else int(b.switch_memory)
            if pz.enabled:
                hi = b.switch_memory - pz.rtt * rate[p] / 8.0 * pz.headroom_factor
                if math.isinf(b.switch_memory):
                    hi = big
                if hi <= spec.frame_size:
                    raise ValueError(
                        f"pause: high watermark M - rtt*bw = {hi:.0f} B is not positive "
                        f"(switch_memory {b.switch_memory:.0f} B too small for pause_rtt "
                        f"{pz.rtt:g} s)"
                    )
                xoff[p] = int(hi)
                xon[p] = max(0, int(hi - pz.hysteresis))
        if node_host[port_src[p]] < 0 and b.oq_limit > 0 and not math.isinf(b.oq_limit):
            oq[p] = int(b.oq_limit)
    port_cp = np.ones(n_ports, np.int64)
    for p in range(n_ports):
        if names[port_src[p]] in ob_nodes:  # the adapter's OB: no CP, no OQ limit
            port_cp[p] = 0
            oq[p] = -1
        if names[port_dst[p]] in ob_nodes:
            if node_host[port_src[p]] >= 0:  # the hot node's own traffic: not buffered
                part[p] = big
                xoff[p] = xon[p] = -1
            else:  # frames from the switch fill the OB; PAUSE upstream (§5)
                part[p] = big if math.isinf(b.adapter_ob) else int(b.adapter_ob)
                hi = b.adapter_ob - pz.rtt * rate[p] / 8.0 * pz.headroom_factor
                if hi <= spec.frame_size:
                    raise ValueError(
                        f"adapter_ob: OB {b.adapter_ob:.0f} B leaves no room above the PAUSE "
                        f"headroom for pause_rtt {pz.rtt:g} s"
                    )
                xoff[p] = big if math.isinf(hi) else int(hi)
                xon[p] = max(0, int(hi - pz.hysteresis))
    # flows and generators
    flow_of = np.full((n_hosts, n_hosts), -1, np.int64)
    fsrc: list[int] = []
    fdst: list[int] = []
    offered: list[float] = []

    def flow(s: int, d: int) -> int:
        if flow_of[s, d] < 0:
            if route[s, d] < 0:
                raise ValueError(f"traffic: {names[d]} is unreachable from {names[s]}")
            flow_of[s, d] = len(fsrc)
            fsrc.append(s)
            fdst.append(d)
            offered.append(0.0)
        return int(flow_of[s, d])

    L = int(spec.frame_size)
    if not 64 <= L <= 9216:
        raise ValueError(f"frame_size: {L} B is outside the allowed range [64, 9216]")
    gens: list[dict] = []
    dst_list: list[int] = []
    for g in spec.traffic:
        s = node(g.source, "traffic")
        if s >= n_hosts:
            raise ValueError(f"traffic: source {g.source!r} is not a host")
        link_rate = rate[host_port[s]]
        if not g.rate > 0:
            raise ValueError(f"traffic {g.source}: rate must be > 0 bit/s")
        if g.stop <= g.start:
            raise ValueError(f"traffic {g.source}: stop must be after start")
        rec = dict(host=s, start=_ns(g.start), stop=_ns(g.stop), on=0.0, off=0.0, flow=-1)
        if isinstance(g, UniformTraffic):
            if g.rate > link_rate * (1 + 1e-12):
                raise ValueError(
                    f"load: traffic rate {g.rate:g} bit/s at {g.source} exceeds its link rate "
                    f"{link_rate:g} bit/s (allowed: (0, 1] of the link)"
                )
            ds = (
                [node(d, "traffic") for d in g.destinations]
                if g.destinations
                else [h for h in range(n_hosts) if h != s]
            )
            rec.update(kind=GEN_UNIFORM, prob=min(1.0, g.rate / link_rate))
            rec.update(gap=L * 8.0 * NS / link_rate, dst_start=len(dst_list), dst_count=len(ds))
            for d in ds:
                if d >= n_hosts or d == s:
                    raise ValueError(f"traffic {g.source}: bad destination {names[d]!r}")
                offered[flow(s, d)] += g.rate / len(ds)
                dst_list.append(d)
        else:
            d = node(g.dest, "traffic")
            if d >= n_hosts or d == s:
                raise ValueError(f"traffic {g.source}: bad destination {g.dest!r}")
            f = flow(s, d)
            duty = 1.0
            if g.on_mean > 0 or g.off_mean > 0:
                if not (g.on_mean > 0 and g.off_mean > 0):
                    raise ValueError(f"traffic {g.source}: on_mean and off_mean must both be > 0")
                duty = g.on_mean / (g.on_mean + g.off_mean)
            offered[f] += min(g.rate, link_rate) * duty
            rec.update(kind=GEN_CBR, prob=1.0, gap=L * 8.0 * NS / g.rate, flow=f)
            rec.update(dst_start=0, dst_count=0, on=g.on_mean * NS, off=g.off_mean * NS)
        gens.append(rec)
    if not fsrc:
        raise ValueError("traffic: the scenario has no traffic")
    gens.sort(key=lambda r: r["host"])  # stable: keeps declaration order within a host
    hg_start = np.zeros(n_hosts, np.int64)
    hg_count = np.zeros(n_hosts, np.int64)
    for k in range(len(gens) - 1, -1, -1):
        hg_start[gens[k]["host"]] = k
        hg_count[gens[k]["host"]] += 1
    n_flows = len(fsrc)
    voq_per_host = np.bincount(np.array(fsrc), minlength=n_hosts)
    voq_lim = np.zeros(n_flows, np.int64)
    for f in range(n_flows):
        share = b.adapter_ib / voq_per_host[fsrc[f]]
        voq_lim[f] = big if math.isinf(share) else max(1, int(share // L))
    # hotspots
    hs_port, hs_mon, hs_rate, hs_a, hs_b = [], [], [], [], []
    for hs in spec.hotspots:
        n = node(hs.node, "hotspot")
        into = [p for p in range(n_ports) if port_dst[p] == n and node_host[port_src[p]] < 0]
        if not into:
            raise ValueError(f"hotspot: no switch port leads to {hs.node!r}")
        if names[port_src[min(into)]] in ob_nodes:
            ob = port_src[min(into)]
            hs_mon.append(
                min(p for p in range(n_ports) if port_dst[p] == ob and node_host[port_src[p]] < 0)
            )
        else:
            hs_mon.append(min(into))
        if not hs.rate > 0:
            raise ValueError("service_rate: hotspot service rate must be > 0 bit/s")
        if hs.stop <= hs.start:
            raise ValueError("hotspot_stop: must be after hotspot_start")
        hs_port.append(min(into))
        hs_rate.append(float(hs.rate))
        hs_a.append(_ns(hs.start))
        hs_b.append(_ns(hs.stop))
    flow_names = [f"{names[fsrc[f]]}->{names[fdst[f]]}" for f in range(n_flows)]
    cn = CompiledNetwork(
        spec=spec_in,
        node_names=names,
        n_hosts=n_hosts,
        node_latency_ns=latency,
        node_host=node_host,
        port_src=port_src,
        port_dst=port_dst,
        port_rate=np.array(rate, np.float64),
        port_prop_ns=np.array(prop, np.int64),
        port_part_limit=part,
        port_oq_limit=oq,
        port_xoff=xoff,
        port_xon=xon,
        host_node=np.arange(n_hosts, dtype=np.int64),
        host_port=host_port,
        route=route,
        flow_src=np.array(fsrc, np.int64),
        flow_dst=np.array(fdst, np.int64),
        flow_of=flow_of,
        flow_voq_limit=voq_lim,
        flow_names=flow_names,
        gen_host=np.array([g["host"] for g in gens], np.int64),
        gen_kind=np.array([g["kind"] for g in gens], np.int64),
        gen_flow=np.array([g["flow"] for g in gens], np.int64),
        gen_dst_start=np.array([g["dst_start"] for g in gens], np.int64),
        gen_dst_count=np.array([g["dst_count"] for g in gens], np.int64),
        dst_list=np.array(dst_list + [0], np.int64),
        gen_prob=np.array([g["prob"] for g in gens], np.float64),
        gen_gap_ns=np.array([g["gap"] for g in gens], np.float64),
        gen_start_ns=np.array([g["start"] for g in gens], np.int64),
        gen_stop_ns=np.array([g["stop"] for g in gens], np.int64),
        gen_on_ns=np.array([g["on"] for g in gens], np.float64),
        gen_off_ns=np.array([g["off"] for g in gens], np.float64),
        host_gen_start=hg_start,
        host_gen_count=hg_count,
        hs_port=np.array(hs_port, np.int64),
        hs_monitor=np.array(hs_mon, np.int64),
        port_cp=port_cp,
        hs_rate=np.array(hs_rate, np.float64),
        hs_start_ns=np.array(hs_a, np.int64),
        hs_stop_ns=np.array(hs_b, np.int64),
        frame_size=L,
        hot_flows=np.zeros(0, np.int64),
        fair_flows=np.zeros(0, np.int64),
        offered_bps=np.array(offered, np.float64),
    )
    hot_ports = set(hs_port) | set(hs_mon)
    cn.hot_flows = np.array(
        [f for f in range(n_flows) if hot_ports & set(cn.path_ports(f))], np.int64
    )
    if spec.fair_flows:
        ff = []
        for s, d in spec.fair_flows:
            f = flow_of[node(s, "fair_flows"), node(d, "fair_flows")]
            if f < 0:
                raise ValueError(f"fair_flows: no traffic from {s} to {d}")
            ff.append(f)
        cn.fair_flows = np.array(ff, np.int64)
    elif len(cn.hot_flows):
        cn.fair_flows = cn.hot_flows.copy()
    else:
        cn.fair_flows = np.arange(n_flows, dtype=np.int64)
    return cn
