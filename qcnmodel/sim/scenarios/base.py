"""Named, parameterised scenarios of the seed decks: the classes, the shared conventions, the first
scenarios.

Each scenario is a builder function with keyword parameters returning a
:class:`~qcnmodel.sim.network.NetworkSpec`; its :class:`Scenario` describes every parameter (kind,
default, range) so that ``--set key=value`` overrides can be parsed and checked with errors
that name the parameter. Conventions shared by all builders:

* ``rtt`` is the per-link round trip (propagation) time: each link's one-way delay is
  ``rtt / 2``, so an RP<->CP loop over one switch has a propagation RTT of ``2 * rtt``
  (the decks' "RP<->CP RTT = 2 x link RTT").
* ``switch_latency`` is the switch processing latency (seeds 003/004: 1 us); used everywhere
  (the IBM and Stanford decks do not give one).
* ``pause_rtt`` (for the PAUSE watermarks ``high = M - pause_rtt * bw``) defaults to the
  per-link ``rtt`` plus the switch latency plus two frame times: everything that can still
  arrive after XOFF (the wire in both directions, the frame being sent, the frame being
  processed), so that PAUSE-enabled runs are lossless.
* The hot node's "service rate" is the rate of the switch egress port towards it
  (:class:`~qcnmodel.sim.network.Hotspot`); that port is the congestion point reported as the
  "hot queue".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from qcnmodel._errors import did_you_mean
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
)
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

__all__ = ["BASE_SCENARIOS", "Scenario", "ScenarioParam"]

INF = math.inf


#: the units a scenario parameter's value is written in, largest first: (factor, unit)
_UNITS = {
    "time": ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")),
    "rate": ((1e12, "Tbps"), (1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps"), (1.0, "bps")),
    "size": ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")),
}


def quantity_text(value: float, kind: str) -> str:
    """``value`` (s, bit/s or bytes by ``kind``: time, rate, size) in the largest unit in
    which it is at least 1 (``5e-06`` time as ``5 us``, ``1.5e6`` size as ``1.5 MB``; 0 in
    the base unit, infinity as ``inf``); other kinds as plain numbers (``%g``). The text
    parses back to ``value`` (:mod:`qcnmodel.units`) to six significant figures."""
    if kind not in _UNITS:
        return f"{value:g}"
    if math.isinf(value):
        return "inf"
    units = _UNITS[kind]
    factor, unit = next(((f, u) for f, u in units if abs(value) >= f), units[-1])
    if value == 0:
        factor, unit = next((f, u) for f, u in units if f == 1.0)
    return f"{value / factor:.6g} {unit}"


@dataclass(frozen=True)
class ScenarioParam:
    """One scenario parameter: ``kind`` in time|rate|size|number|int|bool; range [lo, hi]."""

    name: str
    default: object
    kind: str
    lo: float = 0.0
    hi: float = INF
    doc: str = ""
    choices: tuple[str, ...] = ()

    def value_text(self, value) -> str:
        """``value`` (SI) with the unit of its kind, as ``--set`` reads it back: ``5 us``,
        ``10 Gbps``, ``150 KB``; numbers plainly, ``inf`` as such."""
        if self.kind in ("bool", "choice") or not isinstance(value, (int, float)):
            return str(value).lower() if isinstance(value, bool) else str(value)
        return quantity_text(value, self.kind)

    def range_text(self) -> str:
        """The allowed range with units, ``lo..hi`` (``0 s..1 s``, ``1 Mbps..1 Tbps``,
        ``2..1000``); the choices of a choice, ``true|false`` for a switch."""
        if self.kind == "choice":
            return " | ".join(self.choices)
        if self.kind == "bool":
            return "true | false"
        return f"{self.value_text(self.lo)}..{self.value_text(self.hi)}"

    def parse(self, value):
        """Parse ``value`` (unit strings accepted) and check the range; ValueError names it."""
        n = self.name
        if self.kind == "choice":
            if str(value) not in self.choices:
                raise ValueError(f"{n}: {value!r} is not one of {', '.join(self.choices)}")
            return str(value)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            s = str(value).strip().lower()
            if s in ("1", "true", "yes", "on"):
                return True
            if s in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{n}: expected a boolean (true/false), got {value!r}")
        if isinstance(value, str) and value.strip().lower() in ("inf", "none", "unlimited"):
            v = INF
        else:
            parser = {"time": parse_time, "rate": parse_rate, "size": parse_size}
            v = parser.get(self.kind, parse_number)(value, n)
        if self.kind == "int":
            if v != int(v):
                raise ValueError(f"{n}: must be a whole number in {self.range_text()}, got "
                                 f"{value!r}")  # fmt: skip
            v = int(v)
        if not self.lo <= v <= self.hi:
            raise ValueError(f"{n}: {value!r} is outside the allowed range "
                             f"{self.range_text()}{self._doc_note()}")  # fmt: skip
        return v

    def _doc_note(self) -> str:
        """The parameter's description, when it explains a special value (``0 = none``)."""
        return f"; {self.doc}" if "=" in self.doc or ":" in self.doc else ""


@dataclass(frozen=True)
class Scenario:
    """A named scenario: builder, one-line summary, default preset and duration."""

    name: str
    summary: str
    builder: Callable[..., NetworkSpec]
    params: tuple[ScenarioParam, ...]
    preset: str
    duration: float

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def build(self, overrides: dict | None = None) -> NetworkSpec:
        """Build the spec with ``overrides`` (unknown key -> ValueError listing the allowed)."""
        allowed = {p.name: p for p in self.params}
        kw = self.defaults()
        for key, value in (overrides or {}).items():
            if key not in allowed:
                raise ValueError(
                    f"{key}: unknown parameter of scenario {self.name!r}"
                    f"{did_you_mean(key, allowed)} (allowed: {', '.join(sorted(allowed))})"
                )
            kw[key] = allowed[key].parse(value)
        return dataclasses.replace(self.builder(**kw), name=self.name)


def _common(rtt=5e-6, memory=150e3, pause=False, duration_hot=(0.1, 1.0)):
    return (
        ScenarioParam("link_rate", 10e9, "rate", 1e6, 1e12, "link rate (bit/s)"),
        ScenarioParam("rtt", rtt, "time", 0.0, 1.0, "per-link round-trip propagation time"),
        ScenarioParam("switch_latency", 1e-6, "time", 0.0, 1e-2, "switch processing latency"),
        ScenarioParam("switch_memory", memory, "size", 1500, INF, "memory M per input port"),
        ScenarioParam("oq_limit", 0.0, "size", 0.0, INF, "output-queue limit (0 = none)"),
        ScenarioParam("adapter_ib", 1.5e6, "size", 1500, INF, "adapter input buffer"),
        ScenarioParam("pause", pause, "bool", doc="802.3x PAUSE at switch inputs"),
        ScenarioParam(
            "pause_rtt",
            -1.0,
            "time",
            -1.0,
            1.0,
            "watermark RTT (-1: rtt + switch latency + 2 frames)",
        ),
        ScenarioParam("frame_size", 1500, "int", 64, 9216, "frame size (bytes)"),
        ScenarioParam("hotspot_start", duration_hot[0], "time", 0.0, 1e4, "hotspot start"),
        ScenarioParam("hotspot_stop", duration_hot[1], "time", 0.0, INF, "hotspot end"),
    )


def _infra(kw, name, hosts, switches, links, traffic, hotspots, fair=()):
    rate, L = kw["link_rate"], kw["frame_size"]
    prtt = kw["pause_rtt"]
    if prtt < 0 and prtt != -1.0:  # -1 is the default's marker, not a time
        raise ValueError(f"pause_rtt: {prtt!r} s is outside the allowed range [0, 1] s "
                         "(or -1: the link RTT + switch latency + 2 frames)")  # fmt: skip
    if prtt < 0:  # bytes that can still arrive after XOFF: link RTT, switch latency, 2 frames
        prtt = kw["rtt"] + kw["switch_latency"] + 2 * L * 8 / rate
    return NetworkSpec(
        name=name,
        hosts=tuple(Host(h) for h in hosts),
        switches=tuple(Switch(s, kw["switch_latency"]) for s in switches),
        links=tuple(links),
        traffic=tuple(traffic),
        hotspots=tuple(hotspots),
        buffers=Buffers(
            kw["switch_memory"], kw["oq_limit"], kw["adapter_ib"], kw.get("adapter_ob", 1.5e6)
        ),
        pause=PauseConfig(bool(kw["pause"]), prtt),
        frame_size=L,
        fair_flows=tuple(fair),
    )


def og_hotspot(n_nodes, load, service_rate, **kw) -> NetworkSpec:
    """IBM output-generated (OG) hotspot (seed 000): N nodes on one switch, uniform load.

    Node n1 is drained at ``service_rate`` (10% of 10 Gb/s) between ``hotspot_start`` and
    ``hotspot_stop`` (``hot_mode=port``: the switch port to n1 drains at that rate;
    ``hot_mode=adapter``: n1's adapter output buffer ``adapter_ob`` drains at that rate and
    PAUSEs the switch port, our reading of the deck's adapter). Timing is not given in the
    deck; the default 0.1 .. 1.0 s is seed 000's RTT-study hotspot, in a
    1.5 s run (the deck's plots span 0 .. 1.5 s). M = 150 KB/port, PAUSE off, RTT 5 us
    (variants: ``pause=true switch_memory=1.5MB``, ``rtt=500us``). Default preset 802.1qau.
    """
    d = kw["rtt"] / 2
    hosts = [f"n{i + 1}" for i in range(n_nodes)]
    links = [Link(h, "sw", kw["link_rate"], d) for h in hosts]
    traffic = [UniformTraffic(h, load * kw["link_rate"]) for h in hosts]
    hs = [Hotspot("n1", service_rate, kw["hotspot_start"], kw["hotspot_stop"], kw["hot_mode"])]
    return _infra(kw, "og-hotspot", hosts, ["sw"], links, traffic, hs)


def ig_hotspot(victim_rate, culprit_rate, core_rate, n_sources, **kw) -> NetworkSpec:
    """IBM input-generated (IG) hotspot (seed 000), with 4 or many culprits.

    Culprits on edge switches e1..e4 send to n6 (on edge switch e6, with n7) at
    ``culprit_rate``; the victim n1 (on e1) sends to n7 at ``victim_rate``. Edge switches hang
    off one core switch. With ``n_sources`` = 4 the culprits are n2 (e1), n3, n4, n5
    (e2..e4), as in the deck; with more, sources c1..cN are spread round robin over e1..e4.
    The culprits are on between ``hotspot_start`` and ``hotspot_stop`` (0.1 .. 1.0 s, seed 000's
    RTT study), the victim always. Core links run at ``core_rate`` (default 4x the edge rate):
    the deck's fair allocation (4 x 2.5 + 5 = 15 Gb/s through core -> e6) needs more than
    10 Gb/s there; the figure is garbled, so this is our choice. The hot queue is e6 -> n6.
    Flows are strictly periodic (random initial phase): without congestion control, drop-tail
    partitions can then lock some culprits out for the whole run (a phase effect).
    """
    d = kw["rtt"] / 2
    rate = kw["link_rate"]
    edges = ["e1", "e2", "e3", "e4", "e6"]
    switches = ["core", *edges]
    links = [Link(e, "core", core_rate, d) for e in edges]
    culprits = (
        ["n2", "n3", "n4", "n5"] if n_sources == 4 else [f"c{i + 1}" for i in range(n_sources)]
    )
    hosts = ["n1", *culprits, "n6", "n7"]
    links.append(Link("n1", "e1", rate, d))
    for i, c in enumerate(culprits):
        links.append(Link(c, "e1" if (n_sources == 4 and i == 0) else edges[i % 4], rate, d))
    links += [Link("n6", "e6", rate, d), Link("n7", "e6", rate, d)]
    t0, t1 = kw["hotspot_start"], kw["hotspot_stop"]
    traffic = [ConstantFlow("n1", "n7", victim_rate)]
    traffic += [ConstantFlow(c, "n6", culprit_rate, t0, t1) for c in culprits]
    hs = [Hotspot("n6", rate, t0, t1)]
    fair = [(c, "n6") for c in culprits]
    name = "ig-hotspot" if n_sources == 4 else "ig-hotspot-100"
    return _infra(kw, name, hosts, switches, links, traffic, hs, fair)


def parking_lot(flow_rate, **kw) -> NetworkSpec:
    """Parking lot (seed 000): switches A - L1 - B - L2 - C.

    Hot flows n1..n4 (on A) -> n9 (on C) cross L1 and L2; cold flows n5 (A) -> n7 (B) cross
    L1, n6 (B) -> n8 (C) cross L2; all at ``flow_rate`` (10 Gb/s). Max-min fair share 2 Gb/s
    per flow (Jain fairness over all six flows); the monitored "hot" port is L1 (A -> B).
    PAUSE off, M = 150 KB, adapter buffers 1.5 MB, no OQ limit, per-hop RTT 10 us (or 100 us).
    """
    d, r = kw["rtt"] / 2, kw["link_rate"]
    hosts = [f"n{i}" for i in range(1, 10)]
    at = {"n1": "A", "n2": "A", "n3": "A", "n4": "A", "n5": "A", "n6": "B", "n7": "B"}
    at.update(n8="C", n9="C")
    links = [Link(h, at[h], r, d) for h in hosts] + [Link("A", "B", r, d), Link("B", "C", r, d)]
    pairs = [("n1", "n9"), ("n2", "n9"), ("n3", "n9"), ("n4", "n9"), ("n5", "n7"), ("n6", "n8")]
    traffic = [ConstantFlow(s, t, flow_rate) for s, t in pairs]
    hs = [Hotspot("B", r, 0.0, INF)]
    return _infra(kw, "parking-lot", hosts, ["A", "B", "C"], links, traffic, hs, pairs)


def netfpga(n_sources, service_rate, **kw) -> NetworkSpec:
    """NetFPGA testbed at 1 Gb/s (seed 001): ``n_sources`` RPs -> one sink ``rx``.

    Each source s1..sN sends a constant-rate flow of ``link_rate / n_sources`` (the deck gives
    no per-source rate: total offered load = line rate, our choice) through one switch; the
    port to ``rx`` serves at ``service_rate`` (0.2 Gb/s) from 0.5 s to 4.0 s (~3.5 s hotspot).
    RTT 100 us (deck: 100 .. 1000 us). Memory 1.5 MB per input (not given). Preset netfpga-1g.
    """
    d, r = kw["rtt"] / 2, kw["link_rate"]
    srcs = [f"s{i + 1}" for i in range(n_sources)]
    links = [Link(h, "sw", r, d) for h in [*srcs, "rx"]]
    traffic = [ConstantFlow(s, "rx", r / n_sources) for s in srcs]
    hs = [Hotspot("rx", service_rate, kw["hotspot_start"], kw["hotspot_stop"], kw["hot_mode"])]
    return _infra(kw, "netfpga-1g", [*srcs, "rx"], ["sw"], links, traffic, hs)


def _p(name, default, kind, lo=0.0, hi=INF, doc=""):
    return ScenarioParam(name, default, kind, lo, hi, doc)


_HOT = (
    ScenarioParam(
        "hot_mode",
        "port",
        "choice",
        doc="hot node model: port | adapter",
        choices=("port", "adapter"),
    ),  # fmt: skip
    _p("adapter_ob", 1.5e6, "size", 3000, INF, "hot adapter output buffer (hot_mode=adapter)"),
)


def _replace(params, **new):
    out = []
    for p in params:
        out.append(
            ScenarioParam(p.name, new.pop(p.name), p.kind, p.lo, p.hi, p.doc)
            if p.name in new
            else p
        )
    assert not new, new
    return tuple(out)


_OG = (
    _p("n_nodes", 10, "int", 2, 1000, "number of nodes"),
    _p("load", 0.85, "number", 1e-6, 1.0, "offered load per node (fraction of link rate)"),
    _p("service_rate", 1e9, "rate", 1e3, 1e12, "hot node service rate"),
) + _HOT
_IG = (
    _p("victim_rate", 5e9, "rate", 1e3, 1e12, "victim flow rate"),
    _p("culprit_rate", 5e9, "rate", 1e3, 1e12, "rate of each culprit flow"),
    _p("core_rate", 40e9, "rate", 1e6, 1e13, "core link rate"),
    _p("n_sources", 4, "int", 1, 10000, "number of culprit sources"),
)

#: The scenarios of this module (the registry is :data:`qcnmodel.sim.scenarios.SCENARIOS`).
BASE_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "og-hotspot",
            "S1 IBM output-generated hotspot: 10 nodes, uniform 85% load, n1 served at 10%",
            og_hotspot, _OG + _common(), "802.1qau", 1.5,
        ),
        Scenario(
            "stanford-baseline-1",
            "S2 Stanford baseline #1: OG hotspot, 10 nodes at 85%, hot node 1 Gb/s (2/1/0.5)",
            og_hotspot, _OG + _replace(_common(memory=240e3), hotspot_stop=0.6),
            "stanford-baseline", 1.0,
        ),
        Scenario(
            "teak-og-hotspot",
            "S3 Teak test 1: 10 nodes, Bernoulli 8.5 Gb/s, hot node 1 Gb/s from 0.1 to 0.5 s",
            og_hotspot,
            _OG + _replace(_common(rtt=1e-6, memory=200e3, pause=True, duration_hot=(0.1, 0.5)),
                           adapter_ib=100 * 1500 * 9),
            "teak-003", 1.0,
        ),
        Scenario(
            "teak-scenario-3",
            "S4 Teak scenario 3: 16 nodes at 5 Gb/s, hot node 1 Gb/s from 0.2 to 0.5 s, 2 s run",
            og_hotspot,
            _replace(_OG, n_nodes=16, load=0.5)
            + _replace(_common(rtt=1e-6, memory=2.1e6, duration_hot=(0.2, 0.5)), adapter_ib=7.5e6),
            "teak-2007", 2.0,
        ),
        Scenario(
            "ig-hotspot",
            "S9 IBM input-generated hotspot: 4 culprits x 5 Gb/s -> n6, victim n1 -> n7 5 Gb/s",
            ig_hotspot, _IG + _common(), "802.1qau", 1.0,
        ),
        Scenario(
            "ig-hotspot-100",
            "S10 IG hotspot with 100 culprit sources (20 Gb/s total), OQ limit 1.5 MB",
            ig_hotspot,
            _replace(_IG, n_sources=100, culprit_rate=0.2e9) + _replace(_common(), oq_limit=1.5e6),
            "802.1qau", 1.0,
        ),
        Scenario(
            "parking-lot",
            "S12 parking lot: 4 hot flows over L1+L2, 2 cold flows over one link each, 10 Gb/s",
            parking_lot,
            (_p("flow_rate", 10e9, "rate", 1e3, 1e12, "rate of every flow"),)
            + _replace(_common(rtt=10e-6), hotspot_start=0.0, hotspot_stop=INF),
            "802.1qau", 0.5,
        ),
        Scenario(
            "netfpga-1g",
            "S13 NetFPGA 1 Gb/s testbed: 1..8 sources -> one sink served at 0.2 Gb/s for 3.5 s",
            netfpga,
            (
                _p("n_sources", 1, "int", 1, 64, "number of sources (RPs)"),
                _p("service_rate", 0.2e9, "rate", 1e3, 1e12, "hot node service rate"),
            )
            + _HOT
            + _replace(_common(rtt=100e-6, memory=1.5e6, duration_hot=(0.5, 4.0)), link_rate=1e9),
            "netfpga-1g", 5.0,
        ),
    )
}  # fmt: skip
