"""Compile a :class:`NetworkSpec` into a :class:`CompiledNetwork`, one concept per step.

Nodes (names, switch latencies), ports (each direction of a link), routes (shortest path),
buffers and PAUSE (partitions, output-queue limits, watermarks; the adapter output buffer of
``mode="adapter"`` hotspots), traffic (flows, generators, VOQ limits), hotspots, and the
flows reported for fairness. The semantics are those of :mod:`qcnmodel.sim.network`; every
step validates its part and raises :class:`ValueError` naming the offending element.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qcnmodel.sim.network.compiled import (
    GEN_CBR,
    GEN_UNIFORM,
    CompiledNetwork,
    FlowIndex,
    Routing,
)
from qcnmodel.sim.network.spec import (
    ConstantFlow,
    Link,
    NetworkSpec,
    Switch,
    UniformTraffic,
    duty_cycle,
)

__all__ = ["compile_network"]

NS = 1e9
_BIG = np.iinfo(np.int64).max // 4  #: "unlimited" (bytes or ns)
#: largest finite time (s) of a spec: delays, latencies, starts, stops, on/off means. Times
#: are integer ns in an int64; 1e6 s (1e15 ns) leaves room for sums over any path.
MAX_TIME_S = 1e6


def _ns(seconds: float) -> int:
    if math.isinf(seconds):
        return _BIG
    return int(round(seconds * NS))


def _num(value, what: str) -> float:
    """``value`` as a float; ValueError naming ``what`` if it is not a number or is NaN."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {value!r} is not a number") from None
    if math.isnan(v):
        raise ValueError(f"{what}: NaN is not allowed")
    return v


def _time(value, what: str, inf_ok: bool = False) -> float:
    """A time in [0, MAX_TIME_S] s (or ``inf`` when ``inf_ok``); ValueError names ``what``."""
    v = _num(value, what)
    if inf_ok and v == math.inf:
        return v
    if not 0.0 <= v <= MAX_TIME_S:
        hi = f"{MAX_TIME_S:g}] s" + (" or inf" if inf_ok else "")
        raise ValueError(f"{what}: {value!r} s is outside the allowed range [0, {hi}")
    return v


def max_rate(frame_size: int) -> float:
    """Fastest rate (bit/s) whose frame time is at least 1 ns (integer-ns time)."""
    return frame_size * 8.0 * NS


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


@dataclass
class _Nodes:
    """Hosts first, then switches: names, index, host index per node, latency (ns)."""

    names: list[str]
    idx: dict[str, int]
    n_hosts: int
    node_host: np.ndarray
    latency: np.ndarray

    def node(self, name: str, what: str) -> int:
        if name not in self.idx:
            known = ", ".join(self.names[:20]) + (", ..." if len(self.names) > 20 else "")
            raise ValueError(f"{what}: unknown node {name!r} (known: {known})")
        return self.idx[name]


#: bytes per switch pair at the peak of :func:`_routes` (the float64 BFS distances, their
#: int32 copy, the int32 next-hop table, the masks of one switch's tie break) and per flow
#: or uniform destination (flow arrays, the index dict, names and the kernel's per-flow
#: state): the estimate of :func:`_check_table_bytes`
SW_PAIR_BYTES = 20
FLOW_BYTES = 512


def _flow_bound(spec: NetworkSpec, n_hosts: int) -> int:
    """Upper bound on the flows and uniform destinations of ``spec`` (before building them)."""
    n = 0
    for g in spec.traffic:
        if isinstance(g, UniformTraffic):
            n += len(g.destinations) if g.destinations else n_hosts - 1
        else:
            n += 1
    return n


def _check_table_bytes(spec: NetworkSpec, n_hosts: int, n_switches: int) -> None:
    """Refuse before allocating when the routing and flow tables (``SW_PAIR_BYTES`` per
    switch pair, ``FLOW_BYTES`` per flow or uniform destination) exceed the configured
    bytes (``config.defaults["sim.max_table_bytes"]``). Hosts cost O(1) each."""
    from qcnmodel import config

    n_flows = _flow_bound(spec, n_hosts)
    need = SW_PAIR_BYTES * n_switches * n_switches + FLOW_BYTES * n_flows
    limit = int(config.defaults["sim.max_table_bytes"])
    if need > limit:
        sw_room = max(limit - FLOW_BYTES * n_flows, 0) // SW_PAIR_BYTES
        flow_room = max(limit - SW_PAIR_BYTES * n_switches * n_switches, 0) // FLOW_BYTES
        raise ValueError(
            f"network: {n_hosts} hosts, {n_switches} switches and {n_flows} flows need "
            f"{_size(need)} of routing and flow tables, above the limit of {_size(limit)} "
            f"(config.defaults['sim.max_table_bytes']; with these flows about "
            f"{math.isqrt(sw_room)} switches fit, with these switches {flow_room} flows)"
        )


def _size(n: int) -> str:
    """``n`` bytes in MiB (or KiB, B for small numbers)."""
    if n >= 2**20:
        return f"{n / 2**20:,.1f} MiB"
    return f"{n / 2**10:,.1f} KiB" if n >= 2**10 else f"{n} B"


def _nodes(spec: NetworkSpec) -> _Nodes:
    names = [h.name for h in spec.hosts] + [s.name for s in spec.switches]
    if len(set(names)) != len(names):
        raise ValueError("network: node names must be unique")
    n_hosts = len(spec.hosts)
    if n_hosts < 2:
        raise ValueError("network: at least two hosts are needed")
    latency = np.zeros(len(names), np.int64)
    for k, s in enumerate(spec.switches):
        latency[n_hosts + k] = _ns(_time(s.latency, f"switch {s.name}: latency"))
    _check_table_bytes(spec, n_hosts, len(spec.switches))
    node_host = np.full(len(names), -1, np.int64)
    node_host[:n_hosts] = np.arange(n_hosts)
    return _Nodes(names, {n: i for i, n in enumerate(names)}, n_hosts, node_host, latency)


@dataclass
class _Ports:
    """Each direction of a link: owner (src), peer (dst), rate, propagation delay."""

    src: np.ndarray
    dst: np.ndarray
    rate: list[float]
    prop: list[int]
    adj: list[list[int]]  #: ports owned by each node
    host_port: np.ndarray  #: each host's one port

    @property
    def n(self) -> int:
        return len(self.src)


def _ports(spec: NetworkSpec, nodes: _Nodes) -> _Ports:
    src, dst, rate, prop = [], [], [], []
    L = spec.frame_size
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or not 64 <= L <= 9216:
        raise ValueError(f"frame_size: {L!r} is not an integer in the allowed range [64, 9216] B")
    top = max_rate(int(L))
    for ln in spec.links:
        a, b = nodes.node(ln.a, "link"), nodes.node(ln.b, "link")
        r = _num(ln.rate, f"link {ln.a}-{ln.b}: rate")
        if not 0 < r <= top:
            raise ValueError(
                f"link {ln.a}-{ln.b}: rate {ln.rate!r} bit/s is outside the allowed range "
                f"(0, {top:g}] (a {spec.frame_size} B frame must take at least 1 ns)"
            )
        delay = _ns(_time(ln.delay, f"link {ln.a}-{ln.b}: delay"))
        for u, v in ((a, b), (b, a)):
            src.append(u)
            dst.append(v)
            rate.append(r)
            prop.append(delay)
    adj: list[list[int]] = [[] for _ in nodes.names]
    for p, u in enumerate(src):
        adj[u].append(p)
    host_port = np.zeros(nodes.n_hosts, np.int64)
    for h in range(nodes.n_hosts):
        if len(adj[h]) != 1:
            name = nodes.names[h]
            raise ValueError(f"host {name}: must have exactly one link, has {len(adj[h])}")
        host_port[h] = adj[h][0]
    return _Ports(np.array(src, np.int64), np.array(dst, np.int64), rate, prop, adj, host_port)


def _switch_distances(src: np.ndarray, dst: np.ndarray, n_sw: int) -> np.ndarray:
    """Hop counts between switches (``src``/``dst``: switch positions of the switch-to-switch
    ports), int32, ``_UNREACHED`` where there is no path: a BFS from every switch (scipy)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    g = csr_matrix((np.ones(len(src)), (src, dst)), shape=(n_sw, n_sw))
    dist = shortest_path(g, method="D", directed=True, unweighted=True)
    out = np.full((n_sw, n_sw), _UNREACHED, np.int32)
    ok = np.isfinite(dist)
    out[ok] = dist[ok]
    return out


#: distance of an unreachable switch: below -1, so ``dist[k] == dist[i] - 1`` never holds
#: for an unreachable ``k`` or ``i``
_UNREACHED = -9


def _routes(nodes: _Nodes, ports: _Ports) -> Routing:
    """Routing tables: shortest path in hops, hosts do not forward, ties to the lowest port
    index (see :class:`~qcnmodel.sim.network.compiled.Routing` for the layout).

    A host has exactly one link, so a path to host ``d`` is a path to the node ``d`` hangs
    from, then that link. Switch-to-switch hop counts come from one BFS per switch; switch
    ``i``'s next hop towards switch ``j`` is its lowest-index port to a neighbour one hop
    closer. The cost is O(switches x switch ports) time and O(switches^2) memory; hosts add
    O(1) each.
    """
    n_nodes, n_hosts = len(nodes.names), nodes.n_hosts
    n_sw = n_nodes - n_hosts  # nodes are the hosts, then the switches
    node_sw = np.full(n_nodes, -1, np.int64)
    node_sw[n_hosts:] = np.arange(n_sw)
    psrc, pdst = ports.src, ports.dst
    inner = (psrc >= n_hosts) & (pdst >= n_hosts)  # switch-to-switch ports, increasing index
    pid = np.flatnonzero(inner)
    a, b = psrc[pid] - n_hosts, pdst[pid] - n_hosts
    nxt = np.full((n_sw, n_sw), -1, np.int32)
    if len(pid):
        dist = _switch_distances(a, b, n_sw)
        order = np.argsort(a, kind="stable")  # by owner, then port index
        a, b, pid = a[order], b[order], pid[order]
        cut = np.searchsorted(a, np.arange(n_sw + 1))
        for i in range(n_sw):
            lo, hi = cut[i], cut[i + 1]
            if lo == hi:
                continue
            closer = dist[b[lo:hi]] == (dist[i] - 1)[None, :]  # [neighbour port, target]
            first = closer.argmax(axis=0)
            has = closer[first, np.arange(n_sw)] & (dist[i] > 0)
            nxt[i] = np.where(has, pid[lo:hi][first], -1)
    hp = ports.host_port
    up = pdst[hp]  # the node each host hangs from
    host_up = np.where(up >= n_hosts, up - n_hosts, -1).astype(np.int64)
    return Routing(nxt, node_sw, host_up, hp)


def _buffers(spec: NetworkSpec, nodes: _Nodes, ports: _Ports, ob_nodes: set[str]):
    """(partition limit, OQ limit, XOFF, XON, is-CP) per port; the adapter OB of hot nodes."""
    b, pz = spec.buffers, spec.pause
    n = ports.n
    part, oq = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    xoff, xon = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    for name in ("switch_memory", "adapter_ib", "adapter_ob"):
        if not _num(getattr(b, name), name) > 0:
            v = getattr(b, name)
            raise ValueError(f"{name}: {v!r} B is outside the allowed range (0, inf]")
    if not _num(b.oq_limit, "oq_limit") >= 0:
        raise ValueError(f"oq_limit: {b.oq_limit!r} B is outside the allowed range [0, inf]")
    L = spec.frame_size  # a switch that cannot hold one frame drops every frame
    if b.switch_memory < L:
        raise ValueError(f"switch_memory: {b.switch_memory!r} B is less than one {L} B frame "
                         f"(allowed: [{L}, inf])")  # fmt: skip
    if 0 < b.oq_limit < L:
        raise ValueError(f"oq_limit: {b.oq_limit!r} B is less than one {L} B frame (allowed: "
                         f"0 = none, or [{L}, inf])")  # fmt: skip
    if pz.rtt is not None:
        _time(pz.rtt, "pause_rtt")
    hf, hy = _num(pz.headroom_factor, "headroom_factor"), _num(pz.hysteresis, "hysteresis")
    if not (0 <= hf < math.inf and 0 <= hy < math.inf):
        raise ValueError(
            f"pause: headroom_factor {pz.headroom_factor!r} and hysteresis {pz.hysteresis!r} B "
            "must be finite and >= 0"
        )
    if hf < 1:  # PAUSE would drop frames
        from qcnmodel.sim.network.spec import headroom_refusal

        raise ValueError(headroom_refusal(pz.headroom_factor))

    def headroom(p: int) -> float:
        """Bytes that can still arrive on port ``p`` after its XOFF (module docstring)."""
        rate = ports.rate[p]
        rtt = pz.rtt
        if rtt is None:  # the wire both ways, the receiver's latency, two frames in flight
            rtt = 2 * ports.prop[p] / NS + nodes.latency[ports.dst[p]] / NS
            rtt += 2 * spec.frame_size * 8.0 / rate
        return rtt * rate / 8.0 * hf

    for p in range(n):
        if nodes.node_host[ports.dst[p]] < 0:  # arrives at a switch
            part[p] = _BIG if math.isinf(b.switch_memory) else int(b.switch_memory)
            if pz.enabled:
                hi = b.switch_memory - headroom(p)
                if math.isinf(b.switch_memory):
                    hi = _BIG
                if hi <= spec.frame_size:
                    raise ValueError(
                        f"pause: high watermark M - headroom = {hi:.0f} B leaves less than one "
                        f"frame (switch_memory {b.switch_memory:.0f} B too small for a "
                        f"headroom of {headroom(p):.0f} B on {nodes.names[ports.src[p]]}->"
                        f"{nodes.names[ports.dst[p]]})"
                    )
                xoff[p] = int(hi)
                xon[p] = max(0, int(hi - pz.hysteresis))
        if nodes.node_host[ports.src[p]] < 0 and b.oq_limit > 0 and not math.isinf(b.oq_limit):
            oq[p] = int(b.oq_limit)
    port_cp = np.ones(n, np.int64)
    for p in range(n):
        if nodes.names[ports.src[p]] in ob_nodes:  # the adapter's OB: no CP, no OQ limit
            port_cp[p] = 0
            oq[p] = -1
        if nodes.names[ports.dst[p]] in ob_nodes:
            if nodes.node_host[ports.src[p]] >= 0:  # the hot node's own traffic: not buffered
                part[p] = _BIG
                xoff[p] = xon[p] = -1
            else:  # frames from the switch fill the OB; PAUSE upstream
                part[p] = _BIG if math.isinf(b.adapter_ob) else int(b.adapter_ob)
                hi = b.adapter_ob - headroom(p)
                if hi <= spec.frame_size:
                    raise ValueError(
                        f"adapter_ob: OB {b.adapter_ob:.0f} B leaves no room above the PAUSE "
                        f"headroom of {headroom(p):.0f} B"
                    )
                xoff[p] = _BIG if math.isinf(hi) else int(hi)
                xon[p] = max(0, int(hi - pz.hysteresis))
    return part, oq, xoff, xon, port_cp


@dataclass
class _Traffic:
    """Flows (one per source-destination pair with traffic) and generators."""

    flow_of: dict[tuple[int, int], int]
    fsrc: list[int]
    fdst: list[int]
    offered: list[float]
    gens: list[dict]
    dst_list: list[int]
    dst_flow: list[int]  #: the flow of each dst_list entry


def _traffic(spec: NetworkSpec, nodes: _Nodes, ports: _Ports, routing: Routing) -> _Traffic:
    n_hosts = nodes.n_hosts
    t = _Traffic({}, [], [], [], [], [], [])

    def flow(s: int, d: int) -> int:
        f = t.flow_of.get((s, d))
        if f is None:
            if not routing.reaches(s, d):
                raise ValueError(f"traffic: {nodes.names[d]} is unreachable from {nodes.names[s]}")
            f = t.flow_of[s, d] = len(t.fsrc)
            t.fsrc.append(s)
            t.fdst.append(d)
            t.offered.append(0.0)
        return f

    L = int(spec.frame_size)
    for g in spec.traffic:
        s = nodes.node(g.source, "traffic")
        if s >= n_hosts:
            raise ValueError(f"traffic: source {g.source!r} is not a host")
        link_rate = ports.rate[ports.host_port[s]]
        what = f"traffic {g.source}" + (f"->{g.dest}" if isinstance(g, ConstantFlow) else "")
        rate = _num(g.rate, f"{what}: rate")
        if not 0 <= rate <= link_rate * (1 + 1e-12):
            raise ValueError(
                f"{what}: rate {g.rate!r} bit/s is outside the allowed range [0, {link_rate:g}] "
                f"(at most the source's link rate; 0 = no frames)"
            )
        start = _time(g.start, f"{what}: start")
        stop = _time(g.stop, f"{what}: stop", inf_ok=True)
        if stop <= start:
            raise ValueError(f"{what}: stop ({g.stop!r} s) must be after start ({g.start!r} s)")
        rec = dict(host=s, start=_ns(start), stop=_ns(stop), on=0.0, off=0.0, flow=-1)
        if isinstance(g, UniformTraffic):
            ds = (
                [nodes.node(d, "traffic") for d in g.destinations]
                if g.destinations
                else [h for h in range(n_hosts) if h != s]
            )
            rec.update(kind=GEN_UNIFORM, prob=min(1.0, rate / link_rate))
            rec.update(gap=L * 8.0 * NS / link_rate, dst_start=len(t.dst_list), dst_count=len(ds))
            for d in ds:
                if d >= n_hosts or d == s:
                    raise ValueError(f"traffic {g.source}: bad destination {nodes.names[d]!r}")
                f = flow(s, d)
                t.offered[f] += rate / len(ds)
                t.dst_list.append(d)
                t.dst_flow.append(f)
        else:
            d = nodes.node(g.dest, "traffic")
            if d >= n_hosts or d == s:
                raise ValueError(f"traffic {g.source}: bad destination {g.dest!r}")
            f = flow(s, d)
            on = _time(g.on_mean, f"{what}: on_mean")
            off = _time(g.off_mean, f"{what}: off_mean")
            if (on > 0 or off > 0) and not (on > 0 and off > 0):
                raise ValueError(f"{what}: on_mean and off_mean must both be > 0 (or both 0)")
            t.offered[f] += rate * duty_cycle(on, off)
            rec.update(kind=GEN_CBR, prob=1.0, gap=L * 8.0 * NS / rate if rate > 0 else 0.0)
            rec.update(flow=f, dst_start=0, dst_count=0, on=on * NS, off=off * NS)
        if rate == 0:
            continue  # the flow exists (with zero throughput); no generator
        t.gens.append(rec)
    if not t.fsrc:
        raise ValueError("traffic: the scenario has no traffic")
    t.gens.sort(key=lambda r: r["host"])  # stable: keeps declaration order within a host
    return t


def _voq_limits(spec: NetworkSpec, n_hosts: int, fsrc: list[int], names) -> np.ndarray:
    """Frames per VOQ: the adapter input buffer shared by the host's VOQs (one per flow).

    Raises ValueError when a VOQ's share is below one frame (nothing could be queued)."""
    voq_per_host = np.bincount(np.array(fsrc), minlength=n_hosts)
    voq_lim = np.zeros(len(fsrc), np.int64)
    L = int(spec.frame_size)
    for f in range(len(fsrc)):
        n_voq = int(voq_per_host[fsrc[f]])
        share = spec.buffers.adapter_ib / n_voq
        if share < L:
            raise ValueError(
                f"adapter_ib: {spec.buffers.adapter_ib:g} B gives each of the {n_voq} VOQs of "
                f"{names[fsrc[f]]} {share:.0f} B, less than one {L} B frame (allowed: "
                f">= {n_voq * L} B)"
            )
        voq_lim[f] = _BIG if math.isinf(share) else int(share // L)
    return voq_lim


def _hotspots(spec: NetworkSpec, nodes: _Nodes, ports: _Ports, ob_nodes: set[str]):
    """(port whose rate changes, port reported as the hot queue, rate, start ns, stop ns)."""
    hs_port, hs_mon, hs_rate, hs_a, hs_b = [], [], [], [], []
    src, dst, host = ports.src, ports.dst, nodes.node_host
    for hs in spec.hotspots:
        n = nodes.node(hs.node, "hotspot")
        into = [p for p in range(ports.n) if dst[p] == n and host[src[p]] < 0]
        if not into:
            raise ValueError(f"hotspot: no switch port leads to {hs.node!r}")
        if nodes.names[src[min(into)]] in ob_nodes:
            ob = src[min(into)]
            hs_mon.append(min(p for p in range(ports.n) if dst[p] == ob and host[src[p]] < 0))
        else:
            hs_mon.append(min(into))
        port = min(into)
        top = ports.rate[port]
        rate = _num(hs.rate, "service_rate")
        if not 0 < rate <= top * (1 + 1e-12):
            # a port never sends above its line rate: the service rate is a share of it
            raise ValueError(
                f"service_rate: hotspot rate {hs.rate!r} bit/s at {hs.node} is outside the "
                f"allowed range (0, {top:g}] (the rate of its link)"
            )
        start = _time(hs.start, "hotspot_start")
        stop = _time(hs.stop, "hotspot_stop", inf_ok=True)
        if stop <= start:
            raise ValueError(
                f"hotspot_stop: {hs.stop!r} s must be after hotspot_start ({hs.start!r} s)"
            )
        for j in range(len(hs_port)):  # one rate at a time: windows on a port must not meet
            if hs_port[j] == port and hs_a[j] < _ns(stop) and _ns(start) < hs_b[j]:
                other = spec.hotspots[j]
                raise ValueError(
                    f"hotspot: entries {j + 1} and {len(hs_port) + 1} both drain the port "
                    f"towards {hs.node!r}, over overlapping intervals [{other.start:g}, "
                    f"{other.stop:g}) and [{hs.start:g}, {hs.stop:g}) s; a port has one "
                    "service rate at a time: give intervals that do not overlap"
                )
        hs_port.append(port)
        hs_rate.append(rate)
        hs_a.append(_ns(start))
        hs_b.append(_ns(stop))
    return hs_port, hs_mon, hs_rate, hs_a, hs_b


def _fair_flows(spec: NetworkSpec, nodes: _Nodes, cn: CompiledNetwork) -> np.ndarray:
    """The spec's fair flows, else the flows crossing a hotspot port, else every flow."""
    if spec.fair_flows:
        ff = []
        for s, d in spec.fair_flows:
            f = cn.flow_of[nodes.node(s, "fair_flows"), nodes.node(d, "fair_flows")]
            if f < 0:
                raise ValueError(f"fair_flows: no traffic from {s} to {d}")
            ff.append(f)
        return np.array(ff, np.int64)
    if len(cn.hot_flows):
        return cn.hot_flows.copy()
    return np.arange(cn.n_flows, dtype=np.int64)


def _check_measure(measure) -> None:
    """``measure`` is None or ``(start, stop)`` with finite times, start < stop."""
    if measure is None:
        return
    try:
        a, b = measure
    except (TypeError, ValueError):
        raise ValueError(f"measure: {measure!r} is not a (start, stop) pair") from None
    a, b = _time(a, "measure start"), _time(b, "measure stop")
    if b <= a:
        raise ValueError(f"measure: stop {b:g} s must be after start {a:g} s")


def compile_network(spec: NetworkSpec) -> CompiledNetwork:
    """Validate ``spec`` and flatten it (see :mod:`qcnmodel.sim.network` for the semantics).

    Raises
    ------
    ValueError
        Naming the offending element (unknown node, duplicate name, host with several links,
        unreachable destination, bad rate...).
    """
    spec_in = spec
    _check_measure(spec.measure)
    spec, ob_nodes = _expand_adapter_hotspots(spec)
    nodes = _nodes(spec)
    ports = _ports(spec, nodes)
    routing = _routes(nodes, ports)
    part, oq, xoff, xon, port_cp = _buffers(spec, nodes, ports, ob_nodes)
    t = _traffic(spec, nodes, ports, routing)
    gens = t.gens
    hg_start = np.zeros(nodes.n_hosts, np.int64)
    hg_count = np.zeros(nodes.n_hosts, np.int64)
    for k in range(len(gens) - 1, -1, -1):
        hg_start[gens[k]["host"]] = k
        hg_count[gens[k]["host"]] += 1
    hs_port, hs_mon, hs_rate, hs_a, hs_b = _hotspots(spec, nodes, ports, ob_nodes)
    names = nodes.names

    def col(key, dtype):
        return np.array([g[key] for g in gens], dtype)

    cn = CompiledNetwork(
        spec=spec_in, node_names=names, n_hosts=nodes.n_hosts, node_latency_ns=nodes.latency,
        node_host=nodes.node_host, port_src=ports.src, port_dst=ports.dst,
        port_rate=np.array(ports.rate, np.float64), port_prop_ns=np.array(ports.prop, np.int64),
        port_part_limit=part, port_oq_limit=oq, port_xoff=xoff, port_xon=xon,
        host_node=np.arange(nodes.n_hosts, dtype=np.int64), host_port=ports.host_port,
        routing=routing, flow_src=np.array(t.fsrc, np.int64),
        flow_dst=np.array(t.fdst, np.int64), flow_of=FlowIndex(t.flow_of),
        flow_voq_limit=_voq_limits(spec, nodes.n_hosts, t.fsrc, names),
        flow_names=[f"{names[s]}->{names[d]}" for s, d in zip(t.fsrc, t.fdst)],
        gen_host=col("host", np.int64), gen_kind=col("kind", np.int64),
        gen_flow=col("flow", np.int64), gen_dst_start=col("dst_start", np.int64),
        gen_dst_count=col("dst_count", np.int64), dst_list=np.array(t.dst_list + [0], np.int64),
        dst_flow=np.array(t.dst_flow + [0], np.int64),
        gen_prob=col("prob", np.float64), gen_gap_ns=col("gap", np.float64),
        gen_start_ns=col("start", np.int64), gen_stop_ns=col("stop", np.int64),
        gen_on_ns=col("on", np.float64), gen_off_ns=col("off", np.float64),
        host_gen_start=hg_start, host_gen_count=hg_count,
        hs_port=np.array(hs_port, np.int64), hs_monitor=np.array(hs_mon, np.int64),
        port_cp=port_cp, hs_rate=np.array(hs_rate, np.float64),
        hs_start_ns=np.array(hs_a, np.int64), hs_stop_ns=np.array(hs_b, np.int64),
        frame_size=int(spec.frame_size), hot_flows=np.zeros(0, np.int64),
        fair_flows=np.zeros(0, np.int64), offered_bps=np.array(t.offered, np.float64),
    )  # fmt: skip
    hot_ports = set(hs_port) | set(hs_mon)
    cn.hot_flows = np.array(
        [f for f in range(cn.n_flows) if hot_ports & set(cn.path_ports(f))], np.int64
    )
    cn.fair_flows = _fair_flows(spec, nodes, cn)
    return cn
