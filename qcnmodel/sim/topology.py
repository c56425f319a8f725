"""User-defined networks: a TOML topology file -> :class:`~qcnmodel.sim.network.NetworkSpec`.

Run one with ``qcnmodel simulate --topology FILE`` or :func:`simulate_topology`. Format
(top-level keys must come before the first ``[table]``, as TOML requires; every quantity
accepts unit strings, "10Gbps", "500ns", "150KB", or plain SI numbers)::

    name = "two-switch"            # optional (default: the file name)
    preset = "802.1qau"            # optional QCN preset used by `simulate`
    duration = "50ms"              # optional simulated time used by `simulate`
    frame_size = "1500B"           # optional
    nodes = ["h1", "h2", "h3"]     # end nodes (adapters, reaction points)
    switches = ["s1", "s2"]        # or [[switches]] tables with name and latency
    fair_flows = [["h1", "h3"]]    # optional: flows whose Jain fairness is reported
    measure = ["10ms", "50ms"]     # optional measurement window

    [defaults]                     # optional: rate/delay of links, switch latency
    rate = "10Gbps"
    delay = "500ns"
    switch_latency = "1us"

    [[links]]                      # full duplex; rate and delay default to [defaults]
    a = "h1"
    b = "s1"

    [[flows]]                      # constant-rate flow (optionally exponential on/off)
    source = "h1"
    dest = "h3"
    rate = "5Gbps"                 # start, stop, on_mean, off_mean optional

    [[uniform]]                    # Bernoulli arrivals, uniform destination per frame
    source = "h2"
    rate = "8.5Gbps"               # destinations = [...] optional (default: all others)

    [matrix]                       # traffic matrix: rates[i][j] from nodes[i] to nodes[j]
    nodes = ["h1", "h2"]
    rates = [[0, "1Gbps"], ["2Gbps", 0]]

    [[hotspots]]                   # the switch port to `node` drains at `rate` in [start, stop)
    node = "h3"
    rate = "1Gbps"
    start = "10ms"
    stop = "40ms"                  # mode = "port" | "adapter" optional

    [buffers]                      # switch_memory, oq_limit, adapter_ib, adapter_ob
    [pause]                        # enabled, rtt, headroom_factor, hysteresis
                                   # (rtt default: derived from each link, lossless)

Validation errors are :class:`ValueError` naming the file, the entry (``links[2]``) and, where
it can be found, its line: unknown keys, unknown nodes, duplicate names, traffic rates outside
(0, the source's link rate], negative delays, hosts without exactly one link, unreachable or
self destinations, an unknown preset or a duration the simulator does not run.

Routing is the simulator's (:func:`~qcnmodel.sim.network.compile_network`): shortest path in
hops, hosts do not forward, ties go to the lowest port index, i.e. to the link declared first;
:func:`routes` lists the resulting paths.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from qcnmodel._errors import did_you_mean
from qcnmodel.params.qcn import _read_bounded, loads_toml
from qcnmodel.sim.network import (
    Buffers,
    ConstantFlow,
    Host,
    Hotspot,
    Link,
    NetworkSpec,
    PauseConfig,
    Switch,
    UniformTraffic,
    compile_network,
)
from qcnmodel.sim.network.spec import headroom_refusal
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

#: the largest topology file read (bytes): a 1000-node traffic matrix is a few MB
MAX_TOPOLOGY_FILE_BYTES = 64 << 20

__all__ = ["Topology", "load_topology", "parse_topology", "read_topology", "routes",
           "simulate_topology"]  # fmt: skip

_UP = "bit/s (at most the source's link rate)"  # a traffic rate's range, in words
_TOP = {"name", "preset", "duration", "frame_size", "nodes", "switches", "fair_flows",
        "measure", "defaults", "links", "flows", "uniform", "matrix", "hotspots", "buffers",
        "pause"}  # fmt: skip
_KEYS = {
    "defaults": {"rate", "delay", "switch_latency"},
    "switches": {"name", "latency"},
    "links": {"a", "b", "rate", "delay"},
    "flows": {"source", "dest", "rate", "start", "stop", "on_mean", "off_mean"},
    "uniform": {"source", "rate", "destinations", "start", "stop"},
    "matrix": {"nodes", "rates", "start", "stop"},
    "hotspots": {"node", "rate", "start", "stop", "mode"},
    "buffers": {"switch_memory", "oq_limit", "adapter_ib", "adapter_ob"},
    "pause": {"enabled", "rtt", "headroom_factor", "hysteresis"},
}


@dataclass(frozen=True)
class Topology:
    """A loaded topology file: the network and the run settings it carries."""

    spec: NetworkSpec
    preset: str | None = None
    duration: float | None = None
    path: str = "<string>"


class _Ctx:
    """Error messages with the source name and the line of an entry."""

    def __init__(self, text: str, source: str):
        self.lines = text.splitlines()
        self.source = source
        self._heads: dict[str, list[int]] = {}  # one scan per table, not one per entry
        self._anywhere: dict[str, int | None] = {}

    def _header_lines(self, table: str) -> list[int]:
        if table not in self._heads:
            pat = re.compile(rf"^\s*\[\[\s*{re.escape(table)}\s*\]\]")
            self._heads[table] = [i for i, ln in enumerate(self.lines, 1) if pat.match(ln)]
        return self._heads[table]

    def key_line(self, key: str, start: int = 1) -> int | None:
        pat = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=")
        for i in range(start, len(self.lines) + 1):
            ln = self.lines[i - 1]
            if i > start and re.match(r"^\s*\[", ln):
                return None
            if pat.match(ln):
                return i
        return None

    def line_of(self, key: str, line: int | None) -> int | None:
        """Line of ``key`` in the entry starting at ``line`` (else ``line``): looked up only
        for an error message, so that loading stays linear."""
        return (self.key_line(key, line) if line else None) or line

    def table_line(self, table: str) -> int | None:
        pat = re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]")
        for i, ln in enumerate(self.lines, 1):
            if pat.match(ln):
                return i
        return self.key_line_anywhere(table)

    def key_line_anywhere(self, key: str) -> int | None:
        if key not in self._anywhere:
            pat = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=")
            self._anywhere[key] = next((i for i, ln in enumerate(self.lines, 1)
                                        if pat.match(ln)), None)  # fmt: skip
        return self._anywhere[key]

    def entry_line(self, table: str, k: int) -> int | None:
        """Line of entry ``k`` of an array of tables (``[[table]]`` or an inline array)."""
        heads = self._header_lines(table)
        if heads:
            return heads[k] if k < len(heads) else None
        start = self.key_line_anywhere(table)
        if start is None:
            return None
        depth, seen, in_str = 0, -1, False
        for i in range(start, len(self.lines) + 1):
            text = self.lines[i - 1].split("=", 1)[1] if i == start else self.lines[i - 1]
            for ch in text:
                if ch == '"':
                    in_str = not in_str
                elif in_str:
                    continue
                elif ch in "[{":
                    if ch == "{" and depth == 1:
                        seen += 1
                        if seen == k:
                            return i
                    depth += 1
                elif ch in "]}":
                    depth -= 1
                    if depth == 0:
                        return start
        return start

    def where(self, what: str, line: int | None) -> str:
        return f"{self.source}, {what}" + (f" (line {line})" if line else "")

    def error(self, what: str, line: int | None, msg: str) -> ValueError:
        return ValueError(f"{self.where(what, line)}: {msg}")


def _entries(data: dict, table: str, ctx: _Ctx) -> list[tuple[str, int | None, dict]]:
    raw = data.get(table, [])
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise ctx.error(table, ctx.key_line_anywhere(table), "expected an array of tables")
    out = []
    for k, e in enumerate(raw):
        what, line = f"{table}[{k}]", ctx.entry_line(table, k)
        if not isinstance(e, dict):
            raise ctx.error(what, line, f"expected a table, got {e!r}")
        _check_keys(e, _KEYS[table], what, line, ctx)
        out.append((what, line, e))
    return out


def _check_keys(e: dict, allowed: set, what: str, line: int | None, ctx: _Ctx) -> None:
    for key in e:
        if key not in allowed:
            hint = did_you_mean(key, sorted(allowed))
            kl = ctx.key_line(key, line) if line else None
            raise ctx.error(what, kl or line, f"unknown key {key!r}{hint} "
                            f"(allowed: {', '.join(sorted(allowed))})")  # fmt: skip


def _quantity(parser, e, key, what, line, ctx, default=None, positive=False, inf_ok=False,
              upper=None):  # fmt: skip
    """``e[key]`` parsed; ``upper``: ``(limit, words)``, the largest of a positive value."""
    if key not in e:
        if default is None:
            raise ctx.error(what, line, f"missing key {key!r}")
        return default
    v = e[key]
    if inf_ok and isinstance(v, str) and v.strip().lower() in ("inf", "unlimited", "none"):
        return math.inf
    try:
        x = parser(v, key)
    except ValueError as exc:
        raise ctx.error(what, ctx.line_of(key, line), str(exc)) from None
    if (positive or upper) and not (x > 0 and (upper is None or x <= upper[0] * (1 + 1e-12))):
        rng = "> 0" if upper is None else f"in (0, {upper[0]:g}] {upper[1]}"
        raise ctx.error(what, ctx.line_of(key, line), f"{key} must be {rng}, got {v!r}")
    if not (positive or upper) and x < 0:
        raise ctx.error(what, ctx.line_of(key, line), f"{key} must be >= 0, got {v!r}")
    return x


class _Graph:
    """The file's nodes and links, for the checks of the traffic entries."""

    def __init__(self, ctx: _Ctx, known: dict[str, str]) -> None:
        self.ctx = ctx
        self.known = known  #: name -> "node" or "switch"
        self.adj: dict[str, list[str]] = {n: [] for n in known}
        self.rate: dict[str, float] = {}  #: end node -> its link's rate (bit/s)

    def check_node(self, n, key, what, line, host=False):
        """``n`` if it is a declared node (an end node with ``host``), else a ValueError."""
        ctx = self.ctx
        if not isinstance(n, str) or n not in self.known:
            names = list(self.known)
            known = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            raise ctx.error(what, ctx.line_of(key, line), f"unknown node {n!r} in {key!r} "
                            f"(known: {known})")  # fmt: skip
        if host and self.known[n] != "node":
            raise ctx.error(what, ctx.line_of(key, line),
                            f"{key} {n!r} is a switch, not an end node")  # fmt: skip
        return n

    def check_path(self, src, dst, what, line) -> None:
        """ValueError unless ``dst`` is reachable from ``src`` (end nodes do not forward).

        Switches are grouped once into connected components (over switch-to-switch links);
        ``dst`` is reachable when it is a neighbour of ``src`` or both hang from switches of
        one component.
        """
        if dst in self.adj[src] or self._groups(src) & self._groups(dst):
            return
        raise self.ctx.error(what, line, f"flow {src} -> {dst} is disconnected: no path "
                             f"from {src!r} to {dst!r}")  # fmt: skip

    def one_component(self, hosts: list[str]) -> bool:
        """Whether every host hangs from a switch of one component (then every pair is
        connected): checked once, so that uniform traffic to all hosts stays linear."""
        one = getattr(self, "_one", None)
        if one is None:
            labels: set[int] = set()
            one = True
            for h in hosts:
                g = self._groups(h)
                labels |= g
                if not g or len(labels) > 1:
                    one = False
                    break
            self._one = one
        return one

    def _groups(self, n: str) -> set[int]:
        """Components of the switches ``n`` is (or hangs from)."""
        comp = getattr(self, "_comp", None)
        if comp is None:
            comp = {}
            for s0 in self.known:
                if self.known[s0] == "node" or s0 in comp:
                    continue
                comp[s0] = len(comp)
                label, dq = comp[s0], deque([s0])
                while dq:
                    u = dq.popleft()
                    for v in self.adj[u]:
                        if self.known[v] != "node" and v not in comp:
                            comp[v] = label
                            dq.append(v)
            self._comp = comp
        if self.known[n] != "node":
            return {comp[n]}
        return {comp[v] for v in self.adj[n] if v in comp}

    def times(self, e, what, line) -> tuple[float, float]:
        """(start, stop) of an entry; stop after start."""
        a = _quantity(parse_time, e, "start", what, line, self.ctx, 0.0)
        b = _quantity(parse_time, e, "stop", what, line, self.ctx, math.inf, positive=True,
                      inf_ok=True)  # fmt: skip
        if b <= a:
            raise self.ctx.error(what, line, f"stop ({b:g} s) must be after start ({a:g} s)")
        return a, b


def _defaults(data: dict, ctx: _Ctx) -> tuple[float, float, float]:
    """``[defaults]``: link rate, link delay, switch latency."""
    dflt, dl = data.get("defaults", {}), ctx.table_line("defaults")
    _check_keys(dflt, _KEYS["defaults"], "[defaults]", dl, ctx)
    return (
        _quantity(parse_rate, dflt, "rate", "[defaults]", dl, ctx, 10e9, positive=True),
        _quantity(parse_time, dflt, "delay", "[defaults]", dl, ctx, 0.5e-6),
        _quantity(parse_time, dflt, "switch_latency", "[defaults]", dl, ctx, 1e-6),
    )


def _nodes(data: dict, ctx: _Ctx, d_lat: float) -> tuple[list[str], list[Switch], _Graph]:
    """``nodes`` and ``switches`` (names or tables): hosts, switches, their names checked."""
    hosts = data.get("nodes")
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise ctx.error("nodes", ctx.key_line_anywhere("nodes"), "expected a list of node names")
    switches: list[Switch] = []
    raw_sw = data.get("switches", [])
    if not isinstance(raw_sw, list):
        raise ctx.error("switches", ctx.key_line_anywhere("switches"), "expected a list")
    if raw_sw and all(isinstance(s, str) for s in raw_sw):
        switches = [Switch(s, d_lat) for s in raw_sw]
    else:
        for what, line, e in _entries(data, "switches", ctx):
            if "name" not in e:
                raise ctx.error(what, line, "missing key 'name'")
            lat = _quantity(parse_time, e, "latency", what, line, ctx, d_lat)
            switches.append(Switch(str(e["name"]), lat))
    known: dict[str, str] = {}
    for n, kind, key in [(h, "node", "nodes") for h in hosts] + [
        (s.name, "switch", "switches") for s in switches
    ]:
        if n in known:
            raise ctx.error(key, ctx.key_line_anywhere(key) or ctx.table_line(key),
                            f"duplicate name {n!r} (already a {known[n]})")  # fmt: skip
        known[n] = kind
    return hosts, switches, _Graph(ctx, known)


def _links(data: dict, ctx: _Ctx, g: _Graph, hosts: list[str], d_rate, d_delay) -> list[Link]:
    """``[[links]]``; every end node has exactly one."""
    links: list[Link] = []
    link_lines: dict[str, list[int]] = {n: [] for n in g.known}
    for what, line, e in _entries(data, "links", ctx):
        a = g.check_node(e.get("a"), "a", what, line)
        b = g.check_node(e.get("b"), "b", what, line)
        if a == b:
            raise ctx.error(what, line, f"link from {a!r} to itself")
        rate = _quantity(parse_rate, e, "rate", what, line, ctx, d_rate, positive=True)
        delay = _quantity(parse_time, e, "delay", what, line, ctx, d_delay)
        links.append(Link(a, b, rate, delay))
        g.rate[a] = g.rate[b] = rate  # an end node's one link (switches' are not read)
        link_lines[a].append(line or 0)
        link_lines[b].append(line or 0)
    for h in hosts:
        if len(link_lines[h]) != 1:
            at = [x for x in link_lines[h] if x]
            more = f" (links at lines {', '.join(map(str, at))})" if at else ""
            raise ctx.error(f"node {h!r}", ctx.key_line_anywhere("nodes"), "an end node needs "
                            f"exactly one link, has {len(link_lines[h])}{more}")  # fmt: skip
    for ln in links:
        g.adj[ln.a].append(ln.b)
        g.adj[ln.b].append(ln.a)
    return links


def _traffic(data: dict, ctx: _Ctx, g: _Graph, hosts: list[str]) -> list:
    """``[[flows]]``, ``[[uniform]]`` and ``[matrix]``, each path checked."""
    traffic: list = []
    for what, line, e in _entries(data, "flows", ctx):
        s = g.check_node(e.get("source"), "source", what, line, host=True)
        t = g.check_node(e.get("dest"), "dest", what, line, host=True)
        if s == t:
            raise ctx.error(what, line, f"source and dest are both {s!r}")
        rate = _quantity(parse_rate, e, "rate", what, line, ctx, upper=(g.rate[s], _UP))
        a, b = g.times(e, what, line)
        on = _quantity(parse_time, e, "on_mean", what, line, ctx, 0.0)
        off = _quantity(parse_time, e, "off_mean", what, line, ctx, 0.0)
        g.check_path(s, t, what, line)
        traffic.append(ConstantFlow(s, t, rate, a, b, on, off))
    for what, line, e in _entries(data, "uniform", ctx):
        s = g.check_node(e.get("source"), "source", what, line, host=True)
        rate = _quantity(parse_rate, e, "rate", what, line, ctx, upper=(g.rate[s], _UP))
        dests = e.get("destinations")
        if dests is not None:
            if not isinstance(dests, list) or not dests:
                raise ctx.error(what, line, "destinations: expected a non-empty list of nodes")
            dests = tuple(g.check_node(x, "destinations", what, line, host=True) for x in dests)
            if s in dests:
                raise ctx.error(what, ctx.line_of("destinations", line), f"destinations: {s!r} "
                                "is the source (a node does not send to itself)")  # fmt: skip
        if dests is not None or not g.one_component(hosts):  # else: every pair connects
            for t in dests or [h for h in hosts if h != s]:
                g.check_path(s, t, what, line)
        a, b = g.times(e, what, line)
        traffic.append(UniformTraffic(s, rate, dests, a, b))
    if "matrix" in data:
        traffic += _matrix(data["matrix"], ctx, g)
    return traffic


def _hotspots(data: dict, ctx: _Ctx, g: _Graph) -> list[Hotspot]:
    """``[[hotspots]]``."""
    hotspots = []
    for what, line, e in _entries(data, "hotspots", ctx):
        n = g.check_node(e.get("node"), "node", what, line)
        rate = _quantity(parse_rate, e, "rate", what, line, ctx, positive=True)
        a, b = g.times(e, what, line)
        mode = str(e.get("mode", "port"))
        if mode not in ("port", "adapter"):
            raise ctx.error(what, line, f"mode: {mode!r} is not one of port, adapter")
        hotspots.append(Hotspot(n, rate, a, b, mode))
    return hotspots


def _buffers_pause(data: dict, ctx: _Ctx) -> tuple[Buffers, PauseConfig]:
    """``[buffers]`` and ``[pause]``."""
    bd, bl = data.get("buffers", {}), ctx.table_line("buffers")
    _check_keys(bd, _KEYS["buffers"], "[buffers]", bl, ctx)
    buf = Buffers(
        *(_quantity(parse_size, bd, k, "[buffers]", bl, ctx, v, positive=k != "oq_limit",
                    inf_ok=True)
          for k, v in (("switch_memory", 150e3), ("oq_limit", 0.0), ("adapter_ib", 1.5e6),
                       ("adapter_ob", 1.5e6)))
    )  # fmt: skip
    pd, pl = data.get("pause", {}), ctx.table_line("pause")
    _check_keys(pd, _KEYS["pause"], "[pause]", pl, ctx)
    enabled = pd.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ctx.error("[pause]", pl, f"enabled: expected true or false, got {enabled!r}")
    hf = _quantity(parse_number, pd, "headroom_factor", "[pause]", pl, ctx, 1.0)
    if hf < 1:  # PAUSE would drop frames
        raise ctx.error("[pause]", ctx.line_of("headroom_factor", pl), headroom_refusal(hf))
    rtt = _quantity(parse_time, pd, "rtt", "[pause]", pl, ctx) if "rtt" in pd else None
    return buf, PauseConfig(enabled, rtt, hf, _quantity(parse_size, pd, "hysteresis", "[pause]",
                                                        pl, ctx, 10e3))  # fmt: skip


def _run_settings(data: dict, ctx: _Ctx, g: _Graph):
    """Top-level ``frame_size``, ``fair_flows`` and ``measure``."""
    fs = _quantity(parse_size, data, "frame_size", "frame_size",
                   ctx.key_line_anywhere("frame_size"), ctx, 1500.0, positive=True)  # fmt: skip
    if fs != int(fs):
        raise ctx.error("frame_size", ctx.key_line_anywhere("frame_size"), "must be whole bytes")
    fair = []
    for pair in data.get("fair_flows", []):
        fl = ctx.key_line_anywhere("fair_flows")
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ctx.error("fair_flows", fl, f"expected [source, dest] pairs, got {pair!r}")
        fair.append((g.check_node(pair[0], "fair_flows", "fair_flows", fl, host=True),
                     g.check_node(pair[1], "fair_flows", "fair_flows", fl, host=True)))  # fmt: skip
    measure = None
    if "measure" in data:
        ml = ctx.key_line_anywhere("measure")
        m = data["measure"]
        if not (isinstance(m, list) and len(m) == 2):
            raise ctx.error("measure", ml, "expected [start, stop]")
        measure = (parse_time(m[0], "measure"), parse_time(m[1], "measure"))
        if measure[1] <= measure[0]:
            raise ctx.error("measure", ml, "stop must be after start")
    return int(fs), tuple(fair), measure


def parse_topology(text: str, source: str = "<string>") -> Topology:
    """Parse topology TOML ``text`` (see the module docstring); ``source`` names it in errors."""
    ctx = _Ctx(text, source)
    data = loads_toml(text, source)
    _check_keys(data, _TOP, "top level", None, ctx)
    name = str(data.get("name", Path(source).stem if source != "<string>" else "topology"))
    d_rate, d_delay, d_lat = _defaults(data, ctx)
    hosts, switches, g = _nodes(data, ctx, d_lat)
    links = _links(data, ctx, g, hosts, d_rate, d_delay)
    traffic = _traffic(data, ctx, g, hosts)
    hotspots = _hotspots(data, ctx, g)
    buf, pause = _buffers_pause(data, ctx)
    frame_size, fair, measure = _run_settings(data, ctx, g)
    spec = NetworkSpec(name, tuple(Host(h) for h in hosts), tuple(switches), tuple(links),
                       tuple(traffic), tuple(hotspots), buf, pause, frame_size, fair,
                       measure)  # fmt: skip
    try:
        compile_network(spec)  # the simulator's own checks (ranges, PAUSE watermarks...)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    preset, duration = data.get("preset"), None
    if "duration" in data:
        duration = _quantity(parse_time, data, "duration", "duration",
                             ctx.key_line_anywhere("duration"), ctx, positive=True)  # fmt: skip
    from qcnmodel.params import QCNParams
    from qcnmodel.sim.api import _check_run

    for key, check in (("preset", lambda: QCNParams.preset(str(preset))),
                       ("duration", lambda: _check_run(duration, None, 0, None))):  # fmt: skip
        try:  # the run's own checks, said with the file and line
            _ = data.get(key) is None or check()
        except ValueError as exc:
            raise ctx.error(key, ctx.key_line_anywhere(key), str(exc)) from None
    return Topology(spec, None if preset is None else str(preset), duration, source)


def _matrix(m, ctx: _Ctx, g: _Graph) -> list[ConstantFlow]:
    line = ctx.table_line("matrix")
    if not isinstance(m, dict):
        raise ctx.error("[matrix]", line, "expected a table with nodes and rates")
    _check_keys(m, _KEYS["matrix"], "[matrix]", line, ctx)
    nodes = m.get("nodes")
    rates = m.get("rates")
    if not isinstance(nodes, list) or not isinstance(rates, list):
        raise ctx.error("[matrix]", line, "needs 'nodes' (a list) and 'rates' (a list of rows)")
    nodes = [g.check_node(n, "nodes", "[matrix]", line, host=True) for n in nodes]
    if len(rates) != len(nodes):
        raise ctx.error("[matrix]", line, f"rates has {len(rates)} rows for {len(nodes)} nodes")
    a, b = g.times(m, "[matrix]", line)
    out = []
    for i, row in enumerate(rates):
        if not isinstance(row, list) or len(row) != len(nodes):
            raise ctx.error(f"[matrix] rates[{i}]", line, f"expected {len(nodes)} entries")
        for j, v in enumerate(row):
            try:
                r = parse_rate(v, f"rates[{i}][{j}]")
            except ValueError as exc:
                raise ctx.error("[matrix]", line, str(exc)) from None
            if r < 0:
                raise ctx.error("[matrix]", line, f"rates[{i}][{j}] must be >= 0, got {v!r}")
            if r == 0:
                continue
            if i == j:
                raise ctx.error("[matrix]", line, f"rates[{i}][{i}]: a node cannot send to itself")
            g.check_path(nodes[i], nodes[j], f"[matrix] rates[{i}][{j}]", line)
            out.append(ConstantFlow(nodes[i], nodes[j], r, a, b))
    return out


def read_topology(path) -> Topology:
    """Read and validate a topology file (see the module docstring)."""
    p = Path(path)
    try:  # bounded, a BOM dropped
        text = _read_bounded(p, MAX_TOPOLOGY_FILE_BYTES, "topology file", "").decode("utf-8-sig")
    except OSError as exc:
        raise ValueError(f"topology: cannot read {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"topology: {str(path)!r} is not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start}); save the topology file as UTF-8") from None  # fmt: skip
    return parse_topology(text, str(p))


def load_topology(path) -> NetworkSpec:
    """The :class:`NetworkSpec` of a topology file."""
    return read_topology(path).spec


def routes(spec: NetworkSpec) -> dict[str, list[str]]:
    """Path of every flow as node names, source first (the simulator's routing)."""
    net = compile_network(spec)
    out = {}
    for f, name in enumerate(net.flow_names):
        path = [net.node_names[net.flow_src[f]]]
        path += [net.node_names[net.port_dst[p]] for p in net.path_ports(f)]
        out[name] = path
    return out


def simulate_topology(path, duration=None, params=None, **kw):
    """Run :func:`qcnmodel.sim.simulate` on a topology file.

    ``duration`` and ``params`` default to the file's ``duration`` (else 1 s) and ``preset``
    (else ``802.1qau``); other keywords go to ``simulate``.
    """
    from qcnmodel.sim.api import simulate

    topo = read_topology(path)
    dur = duration if duration is not None else topo.duration
    return simulate(topo.spec, params=params or topo.preset, duration=dur, **kw)
