"""Stanford's baselines #2, #3, #5-#8 and IBM's 20-stage hotspot (with its Teak variant).

Same conventions as :mod:`qcnmodel.sim.scenarios.base` (per-link ``rtt``, ``switch_latency``,
``pause_rtt``, hotspot = the switch egress port towards the hot node); every builder parameter
is a :class:`~qcnmodel.sim.scenarios.ScenarioParam`, so every one can be overridden with
``--set key=value``. :data:`CATALOGUE` maps the names to :class:`Scenario` entries;
:mod:`qcnmodel.sim.scenarios` assembles them with the base ones into the registry
:data:`~qcnmodel.sim.scenarios.SCENARIOS`.

Choices shared by the Stanford scenarios (seed 002; the deck gives no link delay, no switch
graph for #2/#3/#6 and no hotspot timing):

* Switch memory: the deck's "2.4 MB shared memory partitioned per input", i.e. 2.4 MB divided
  by the number of ports of the scenario's largest switch (the simulator has one partition size
  for all switches). RTT 5 us per link (as ``stanford-baseline-1``). Preset
  ``stanford-baseline``.
* Hotspot timing for #2, #3, #6: 0.1 .. 0.6 s in a 1 s run (as ``stanford-baseline-1``); the
  decks' "80 ms hotspot" variant is ``--set hotspot_stop=180ms``.
* Congestion point (CP) counts quoted by the deck are checked as the number of ports whose total
  offered demand exceeds their capacity (:meth:`qcnmodel.sim.fair.RoutingMatrix.congested_links`),
  except for #2, whose five CPs appear only when PAUSE spreads a saturation tree.
* Scenarios whose congestion comes from over-subscription, not from a slowed node (bursty,
  dual and 20-stage hotspots), still declare a :class:`Hotspot` at full link rate on the port
  they monitor, so that the "hot queue" metrics report that congestion point;
  ``service_rate`` can slow it.
"""

from __future__ import annotations

from qcnmodel.sim.network import ConstantFlow, Hotspot, Link, NetworkSpec, UniformTraffic
from qcnmodel.sim.scenarios.base import (
    INF,
    Scenario,
    ScenarioParam,
    _common,
    _infra,
    _p,
    _replace,
)

__all__ = [
    "CATALOGUE",
    "bursty_hotspot",
    "dual_hotspot_heavy_light",
    "dual_hotspot_light_heavy",
    "stanford_baseline_2",
    "stanford_baseline_3",
    "stanford_baseline_6",
    "twenty_stage",
]

STANFORD_MEMORY = 2.4e6  #: seed 002: shared memory partitioned per input


def _star_links(at: dict[str, str], rate: float, d: float) -> list[Link]:
    return [Link(h, sw, rate, d) for h, sw in at.items()]


def bursty_hotspot(n_sources, n_bursty, load, service_rate, burst_on, burst_off, **kw):
    """Stanford baseline #5 (seed 002): bursty single hotspot.

    Hosts h1..hN (N = ``n_sources``, 4) and the sink h(N+1) (h5) on one switch ``sw``
    ("symmetric topology single HS"); every source sends a constant-rate flow to the sink at
    ``load`` x link rate (the deck's "Load: 100%", read per source: the sink port is
    over-subscribed 2..4 times depending on how many on/off sources are on). The first
    ``n_bursty`` sources (h1, h2) are exponential on/off sources with means ``burst_on`` =
    ``burst_off`` = 20 ms (deck variants 10 and 5 ms). The CP is the port sw -> h5, served at
    ``service_rate`` (the link rate: the deck does not slow the sink) during the hotspot
    interval (default the whole run). Switch memory 2.4 MB / 5 ports.
    """
    d, r = kw["rtt"] / 2, kw["link_rate"]
    srcs = [f"h{i + 1}" for i in range(n_sources)]
    sink = f"h{n_sources + 1}"
    if n_bursty > n_sources:
        raise ValueError(f"n_bursty: {n_bursty} exceeds n_sources ({n_sources})")
    links = _star_links({h: "sw" for h in [*srcs, sink]}, r, d)
    traffic = [
        ConstantFlow(h, sink, load * r, on_mean=burst_on if i < n_bursty else 0.0,
                     off_mean=burst_off if i < n_bursty else 0.0)
        for i, h in enumerate(srcs)
    ]  # fmt: skip
    hs = [Hotspot(sink, service_rate, kw["hotspot_start"], kw["hotspot_stop"])]
    return _infra(kw, "bursty-hotspot", [*srcs, sink], ["sw"], links, traffic, hs)


def _dual(name, at, pairs, flow_rate, service_rate, **kw) -> NetworkSpec:
    d, r = kw["rtt"] / 2, kw["link_rate"]
    links = _star_links(at, r, d) + [Link("s1", "s2", r, d)]
    traffic = [ConstantFlow(s, t, flow_rate) for s, t in pairs]
    hs = [Hotspot("n8", service_rate, kw["hotspot_start"], kw["hotspot_stop"])]
    return _infra(kw, name, list(at), ["s1", "s2"], links, traffic, hs, pairs)


def dual_hotspot_light_heavy(flow_rate, service_rate, **kw) -> NetworkSpec:
    """Stanford baseline #7 (seed 002): multistage dual hotspot, light & heavy.

    Switches s1 - s2, all links 10 Gb/s. Placement (inferred from the deck's fair
    allocation): n1, n2 on s1; n4, n5, n7, n8 on s2. Flows of ``flow_rate`` (9 Gb/s): n1, n4,
    n5, n7 -> n8 and n2 -> n4. CPs: s1 -> s2 (n1->n8 + n2->n4 = 18 Gb/s) and s2 -> n8
    (36 Gb/s); the latter is the monitored hot port. Max-min fair: 2.5 Gb/s per flow to n8,
    7.5 Gb/s for n2 -> n4. Flows run for the whole run; no background traffic.
    """
    at = {"n1": "s1", "n2": "s1", "n4": "s2", "n5": "s2", "n7": "s2", "n8": "s2"}
    pairs = [("n1", "n8"), ("n4", "n8"), ("n5", "n8"), ("n7", "n8"), ("n2", "n4")]
    return _dual("dual-hotspot-light-heavy", at, pairs, flow_rate, service_rate, **kw)


def dual_hotspot_heavy_light(flow_rate, service_rate, **kw) -> NetworkSpec:
    """Stanford baseline #8 (seed 002): multistage dual hotspot, heavy & light.

    Switches s1 - s2, all links 10 Gb/s. Placement (inferred from the deck): n1, n2, n3, n6 on
    s1; n4, n5, n7, n8 on s2. Flows of ``flow_rate`` (9 Gb/s): n1, n4 -> n8; n2 -> n4,
    n3 -> n5, n6 -> n7. CPs: s1 -> s2 (four flows, 36 Gb/s) and s2 -> n8 (18 Gb/s, the
    monitored hot port). Max-min fair: 2.5 Gb/s for every flow crossing s1 -> s2, 7.5 Gb/s
    for n4 -> n8.
    """
    at = {"n1": "s1", "n2": "s1", "n3": "s1", "n6": "s1",
          "n4": "s2", "n5": "s2", "n7": "s2", "n8": "s2"}  # fmt: skip
    pairs = [("n1", "n8"), ("n4", "n8"), ("n2", "n4"), ("n3", "n5"), ("n6", "n7")]
    return _dual("dual-hotspot-heavy-light", at, pairs, flow_rate, service_rate, **kw)


def stanford_baseline_2(low_load, high_load, service_rate, **kw) -> NetworkSpec:
    """Stanford baseline #2 (seed 002): uniform background traffic, one hot node.

    Topology (not in the OCR, our choice): a core switch ``c`` with four edge switches
    e1 (n1, n2, n3), e2 (n4, n5, n6), e3 (n8, n9), e4 (n7, n10), all links 10 Gb/s. Nodes
    n1..n6 send uniformly to all others at ``low_load`` (25%), n7..n10 at ``high_load`` (40%).
    n7 is served at ``service_rate`` (5% = 0.5 Gb/s; "Rx only": it keeps sending). Traffic
    towards n7 (3 Gb/s offered) then crosses e1->c, e2->c, e3->c, c->e4 and e4->n7: only the
    last is over-subscribed, and when PAUSE (``pause=true``) spreads the saturation tree
    upstream the four others become congestion points as well: "5 congestion points total",
    as the deck says. n10 shares e4 with n7, so traffic to n10 is a victim of the tree.
    """
    d, r = kw["rtt"] / 2, kw["link_rate"]
    at = {"n1": "e1", "n2": "e1", "n3": "e1", "n4": "e2", "n5": "e2", "n6": "e2",
          "n7": "e4", "n8": "e3", "n9": "e3", "n10": "e4"}  # fmt: skip
    hosts = [f"n{i}" for i in range(1, 11)]
    links = _star_links({h: at[h] for h in hosts}, r, d)
    links += [Link(e, "c", r, d) for e in ("e1", "e2", "e3", "e4")]
    traffic = [UniformTraffic(h, (low_load if i < 6 else high_load) * r)
               for i, h in enumerate(hosts)]  # fmt: skip
    hs = [Hotspot("n7", service_rate, kw["hotspot_start"], kw["hotspot_stop"])]
    return _infra(kw, "stanford-baseline-2", hosts, ["c", "e1", "e2", "e3", "e4"], links,
                  traffic, hs)  # fmt: skip


def stanford_baseline_3(culprit_rate, victim_rate, service_rate, culprits, **kw) -> NetworkSpec:
    """Stanford baseline #3 (seed 002): OG multi-hop hotspot with selected victims.

    Topology (not in the OCR, our choice): five switches in a chain s1 - s2 - s3 - s4 - s5 with
    s1: n1, n2, n4; s2: n5, n9; s3: n8; s4: n3, n10; s5: n6, n7 (all links 10 Gb/s).
    Culprits n1, n4, n8, n9 -> n7 at ``culprit_rate`` (2 Gb/s), victims n2 -> n9, n5 -> n3,
    n10 -> n6 at ``victim_rate`` (7 Gb/s); n7 is served at ``service_rate`` (20% = 2 Gb/s)
    during the hotspot. Why this graph: a port carrying a victim (7) and at least two culprits
    (2 + 2) is over-subscribed (11 Gb/s), and no two victims may share a port (14 Gb/s would
    forbid the deck's 7 Gb/s fair share). Culprits n1, n4 enter at s1, so every port of the
    chain towards n7 carries >= 2 culprits; the victims cover those ports without overlap:
    n2 -> n9 crosses s1->s2, n5 -> n3 crosses s2->s3 and s3->s4, n10 -> n6 crosses s4->s5.
    Congestion points: those four ports plus s5 -> n7 = five, one at every switch, and every
    flow crosses at least one ("all switches and all flows affected"). Max-min fair: culprits
    0.5 Gb/s (2 Gb/s / 4), victims 7 Gb/s (7 + 4 x 0.5 <= 10).
    Timing (not given): with ``culprits="hotspot"`` (default) the culprit flows send only
    during the hotspot, so that before and after it the victims run alone at 7 Gb/s; with
    ``culprits="always"`` they send throughout, and the four chain ports are over-subscribed
    also outside the hotspot (victim 7 + culprits >= 4 Gb/s), squeezing the victims there.
    """
    d, r = kw["rtt"] / 2, kw["link_rate"]
    at = {"n1": "s1", "n2": "s1", "n4": "s1", "n5": "s2", "n9": "s2", "n8": "s3",
          "n3": "s4", "n10": "s4", "n6": "s5", "n7": "s5"}  # fmt: skip
    hosts = [f"n{i}" for i in range(1, 11)]
    sws = [f"s{i}" for i in range(1, 6)]
    links = _star_links({h: at[h] for h in hosts}, r, d)
    links += [Link(a, b, r, d) for a, b in zip(sws, sws[1:])]
    victims = [("n2", "n9"), ("n5", "n3"), ("n10", "n6")]
    t0, t1 = (kw["hotspot_start"], kw["hotspot_stop"]) if culprits == "hotspot" else (0.0, INF)
    pairs = [("n1", "n7"), ("n4", "n7"), ("n8", "n7"), ("n9", "n7")]
    traffic = [ConstantFlow(s, t, culprit_rate, t0, t1) for s, t in pairs]
    traffic += [ConstantFlow(s, t, victim_rate) for s, t in victims]
    hs = [Hotspot("n7", service_rate, kw["hotspot_start"], kw["hotspot_stop"])]
    return _infra(kw, "stanford-baseline-3", hosts, sws, links, traffic, hs, pairs)


def stanford_baseline_6(culprit_rate, victim_rate, service_rate, **kw) -> NetworkSpec:
    """Stanford baseline #6 (seed 002): a 0.5 Gb/s congested queue, two CPs.

    The deck gives only "PAUSE on/off, congested queue 0.5 Gb/s, two congestion points, 80 ms
    hotspot variant"; topology and flows are our choice, built like #3 with two CPs. Switches
    s1 - s2; s1: n1, n2, n3, n4; s2: n5, n6, n7. Culprits n1, n2 -> n7 at ``culprit_rate``
    (5 Gb/s); victims n3 -> n5, n4 -> n6 at ``victim_rate`` (4.5 Gb/s); n7 served at
    ``service_rate`` (0.5 Gb/s) during the hotspot. CP 1: s2 -> n7 (10 Gb/s offered for
    0.5); CP 2: s1 -> s2 (19 Gb/s offered). Max-min fair: culprits 0.25 Gb/s, victims their
    full 4.5 Gb/s (0.5 + 9 <= 10), so a fair CC protects the victims; with PAUSE, CP 1 backs
    up into s1 -> s2 and blocks them.
    """
    d, r = kw["rtt"] / 2, kw["link_rate"]
    at = {"n1": "s1", "n2": "s1", "n3": "s1", "n4": "s1", "n5": "s2", "n6": "s2", "n7": "s2"}
    links = _star_links(at, r, d) + [Link("s1", "s2", r, d)]
    culprits = [("n1", "n7"), ("n2", "n7")]
    victims = [("n3", "n5"), ("n4", "n6")]
    traffic = [ConstantFlow(s, t, culprit_rate) for s, t in culprits]
    traffic += [ConstantFlow(s, t, victim_rate) for s, t in victims]
    hs = [Hotspot("n7", service_rate, kw["hotspot_start"], kw["hotspot_stop"])]
    return _infra(kw, "stanford-baseline-6", list(at), ["s1", "s2"], links, traffic, hs,
                  culprits + victims)  # fmt: skip


def twenty_stage(n_switches, load, service_rate, bursty, burst_base, burst_step, **kw):
    """IBM's 20-stage hotspot (seed 000) and its Teak variant (seed 003).

    ``n_switches`` = S switches s1..sS in a chain (all links ``link_rate``); switch s(i+1),
    i = 0..S-1, has the three nodes n(3i+1), n(3i+2), n(3i+3) (the deck's numbering, nodes
    n1..n(3S)). For i = 0..S-2: n(3i+1) -> n(3(i+1)+1) (one hop), n(3i+2) -> n(3(S-1)+2)
    (the sink, n59 for S = 20), n(3i+3) -> n(3(i+1)+2) (one hop), each at ``load`` x link
    rate (100%). The sink n(3(S-1)+2) receives S flows (the S-2+1 "position 2" senders plus
    n(3(S-1)) = n57's one-hop flow); every chain link s(i+1) -> s(i+2) carries i + 3 flows.
    Nodes n(3(S-1)+1..3) (n58, n59, n60) send nothing: the deck exempts n59 and n60 from the
    100% load, and its rules give n58 no destination. Every chain link is over-subscribed;
    the port s(S-1) -> s(S) carries the most flows (S + 1: all S - 1 "position 2" senders,
    n(3(S-2)+1) -> n(3(S-1)+1) and n(3(S-2)+3) -> sink) and is the monitored hot port (the
    sink's own port s(S) -> sink cannot congest: everything for it arrives over that one
    link), served at ``service_rate`` (the link rate) during the hotspot interval (default
    the whole run); Jain fairness is over the flows crossing it. IBM: M = 150 KB/port, PAUSE
    off, per-hop RTT 2 us (deck: 2 or 20 us).

    Teak (``twenty-stage-teak``, seed 003): S = 18 and the same three rules (the deck's
    0-based "node i -> i+3, i+1 -> (N-1)*3+1, i+2 -> i+4" mapped to the numbering above).
    With ``bursty`` the first sender of every switch (n(3i+1)) is an on/off source at 100%
    while on, with the deck's "interval 1 + i*0.1 ms" read as exponential on and off periods
    of mean ``burst_base + i * burst_step`` (i = 0..S-2, the stage index: the deck's i is
    ambiguous between node and switch index; deterministic periodic bursts are not a traffic
    model of the simulator). Seed 003 system: switch 200 kB with PAUSE, 1 us switch latency,
    500 ns links (``rtt`` 1 us), RP egress buffer 100 frames; preset ``teak-003``.
    """
    S = n_switches
    d, r = kw["rtt"] / 2, kw["link_rate"]
    sws = [f"s{i + 1}" for i in range(S)]
    hosts = [f"n{k}" for k in range(1, 3 * S + 1)]
    links = [Link(f"n{3 * i + j}", sws[i], r, d) for i in range(S) for j in (1, 2, 3)]
    links += [Link(a, b, r, d) for a, b in zip(sws, sws[1:])]
    sink = f"n{3 * (S - 1) + 2}"
    traffic = []
    for i in range(S - 1):
        per = burst_base + i * burst_step if bursty else 0.0
        traffic.append(ConstantFlow(f"n{3 * i + 1}", f"n{3 * (i + 1) + 1}", load * r,
                                    on_mean=per, off_mean=per))  # fmt: skip
        traffic.append(ConstantFlow(f"n{3 * i + 2}", sink, load * r))
        traffic.append(ConstantFlow(f"n{3 * i + 3}", f"n{3 * (i + 1) + 2}", load * r))
    hs = [Hotspot(sws[-1], service_rate, kw["hotspot_start"], kw["hotspot_stop"])]
    name = "twenty-stage-teak" if bursty else "twenty-stage"
    return _infra(kw, name, hosts, sws, links, traffic, hs)


def _stanford(ports, hot=(0.1, 0.6), **repl):
    base = _common(memory=STANFORD_MEMORY / ports, duration_hot=hot)
    return _replace(base, **repl) if repl else base


_SERVICE = "hot node service rate"
_FULL = dict(hotspot_start=0.0, hotspot_stop=INF)

CATALOGUE: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "bursty-hotspot",
            "S5 Stanford #5: h1..h4 -> h5 at 100%, h1 and h2 exponential on/off (20 ms means)",
            bursty_hotspot,
            (
                _p("n_sources", 4, "int", 1, 1000, "number of sources"),
                _p("n_bursty", 2, "int", 0, 1000, "number of on/off sources (the first ones)"),
                _p("load", 1.0, "number", 1e-6, 1.0, "rate of each source (fraction of link)"),
                _p("service_rate", 10e9, "rate", 1e3, 1e12, "sink port service rate"),
                _p("burst_on", 20e-3, "time", 1e-6, 10.0, "mean on period"),
                _p("burst_off", 20e-3, "time", 1e-6, 10.0, "mean off period"),
            )
            + _stanford(5, **_FULL),
            "stanford-baseline", 1.0,
        ),
        Scenario(
            "dual-hotspot-light-heavy",
            "S6 Stanford #7: n1,n4,n5,n7 -> n8 and n2 -> n4 at 9 Gb/s over s1 - s2 (2 CPs)",
            dual_hotspot_light_heavy,
            (
                _p("flow_rate", 9e9, "rate", 1e3, 1e12, "rate of every flow"),
                _p("service_rate", 10e9, "rate", 1e3, 1e12, "n8 port service rate"),
            )
            + _stanford(5, **_FULL),
            "stanford-baseline", 0.5,
        ),
        Scenario(
            "dual-hotspot-heavy-light",
            "S7 Stanford #8: n1,n4 -> n8; n2->n4, n3->n5, n6->n7 at 9 Gb/s over s1 - s2 (2 CPs)",
            dual_hotspot_heavy_light,
            (
                _p("flow_rate", 9e9, "rate", 1e3, 1e12, "rate of every flow"),
                _p("service_rate", 10e9, "rate", 1e3, 1e12, "n8 port service rate"),
            )
            + _stanford(5, **_FULL),
            "stanford-baseline", 0.5,
        ),
        Scenario(
            "stanford-baseline-2",
            "S8 Stanford #2: uniform 2.5/4 Gb/s background, n7 served at 0.5 Gb/s, core + 4 edges",
            stanford_baseline_2,
            (
                _p("low_load", 0.25, "number", 1e-6, 1.0, "load of nodes 1-6 (fraction)"),
                _p("high_load", 0.40, "number", 1e-6, 1.0, "load of nodes 7-10 (fraction)"),
                _p("service_rate", 0.5e9, "rate", 1e3, 1e12, _SERVICE),
            )
            + _stanford(4),
            "stanford-baseline", 1.0,
        ),
        Scenario(
            "stanford-baseline-3",
            "S8 Stanford #3: 4 culprits x 2 Gb/s -> n7 (2 Gb/s), 3 victims x 7 Gb/s, 5 switches",
            stanford_baseline_3,
            (
                _p("culprit_rate", 2e9, "rate", 1e3, 1e12, "rate of each culprit flow"),
                _p("victim_rate", 7e9, "rate", 1e3, 1e12, "rate of each victim flow"),
                _p("service_rate", 2e9, "rate", 1e3, 1e12, _SERVICE),
                ScenarioParam("culprits", "hotspot", "choice", doc="culprits send: hotspot | "
                              "always", choices=("hotspot", "always")),
            )
            + _stanford(4),
            "stanford-baseline", 1.0,
        ),
        Scenario(
            "stanford-baseline-6",
            "S8 Stanford #6: 2 culprits -> n7 (0.5 Gb/s), 2 victims, s1 - s2 (2 CPs)",
            stanford_baseline_6,
            (
                _p("culprit_rate", 5e9, "rate", 1e3, 1e12, "rate of each culprit flow"),
                _p("victim_rate", 4.5e9, "rate", 1e3, 1e12, "rate of each victim flow"),
                _p("service_rate", 0.5e9, "rate", 1e3, 1e12, _SERVICE),
            )
            + _stanford(5),
            "stanford-baseline", 1.0,
        ),
        Scenario(
            "twenty-stage",
            "S11 IBM 20-stage hotspot: 20 switches in a chain, 3 nodes each, 20 flows to n59",
            twenty_stage,
            (
                _p("n_switches", 20, "int", 2, 200, "number of switches (stages)"),
                _p("load", 1.0, "number", 1e-6, 1.0, "rate of every flow (fraction of link)"),
                _p("service_rate", 10e9, "rate", 1e3, 1e12, "sink port service rate"),
                ScenarioParam("bursty", False, "bool", doc="on/off first senders (Teak)"),
                _p("burst_base", 1e-3, "time", 1e-6, 10.0, "on/off mean of stage 0"),
                _p("burst_step", 0.1e-3, "time", 0.0, 10.0, "on/off mean increment per stage"),
            )
            + _replace(_common(rtt=2e-6), **_FULL),
            "802.1qau", 1.0,
        ),
        Scenario(
            "twenty-stage-teak",
            "S11 Teak 18-stage hotspot: bursty first senders (1 + 0.1 i ms), PAUSE, 200 kB",
            twenty_stage,
            (
                _p("n_switches", 18, "int", 2, 200, "number of switches (stages)"),
                _p("load", 1.0, "number", 1e-6, 1.0, "rate of every flow (fraction of link)"),
                _p("service_rate", 10e9, "rate", 1e3, 1e12, "sink port service rate"),
                ScenarioParam("bursty", True, "bool", doc="on/off first senders (Teak)"),
                _p("burst_base", 1e-3, "time", 1e-6, 10.0, "on/off mean of stage 0"),
                _p("burst_step", 0.1e-3, "time", 0.0, 10.0, "on/off mean increment per stage"),
            )
            + _replace(_common(rtt=1e-6, memory=200e3, pause=True), adapter_ib=150e3, **_FULL),
            "teak-003", 1.0,
        ),
    )
}  # fmt: skip


_MOVED_NAMES = {"NAMED_SWEEPS", "NamedSweep", "run_named_sweep"}


def __getattr__(name: str):
    """The named sweeps moved to :mod:`qcnmodel.studies.named_sweeps` (deprecated access)."""
    if name in _MOVED_NAMES:
        import importlib
        import warnings

        warnings.warn(
            f"{__name__}.{name} moved to qcnmodel.studies.named_sweeps; the old location will "
            "be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("qcnmodel.studies.named_sweeps"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
