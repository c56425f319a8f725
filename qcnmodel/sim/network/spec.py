"""A network description: hosts (adapters), switches, full-duplex links, traffic generators,
hotspots, buffers and PAUSE, as plain frozen dataclasses (see :mod:`qcnmodel.sim.network` for
the modelling choices)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Buffers",
    "ConstantFlow",
    "Host",
    "Hotspot",
    "Link",
    "NetworkSpec",
    "PauseConfig",
    "Switch",
    "UniformTraffic",
    "duty_cycle",
]


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
    probability ``rate / link_rate`` (seeds 003/004 "Bernoulli"; the decks' "uniform
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
    (Stanford baseline #5, seed 002): it sends at ``rate`` during on periods and nothing during
    off periods.
    """

    source: str
    dest: str
    rate: float
    start: float = 0.0
    stop: float = math.inf
    on_mean: float = 0.0
    off_mean: float = 0.0


def duty_cycle(on: float, off: float) -> float:
    """The fraction of time a :class:`ConstantFlow` with mean on and off periods ``on`` and
    ``off`` (s) sends, its mean rate over ``rate``: ``on / (on + off)`` for an on/off source,
    1 for a constant one (both 0)."""
    return on / (on + off) if on > 0 and off > 0 else 1.0


@dataclass(frozen=True)
class Hotspot:
    """Hot node ``node`` served at ``rate`` bit/s in [start, stop).

    ``mode="port"`` (default): the switch egress port towards ``node`` drains at ``rate``
    (the decks: "the hot node drains its egress port at x%"); that port is the CP.
    ``mode="adapter"`` (our reading of seed 000's adapter IB and OB): the node's adapter
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


#: the largest finite buffer (bytes): the simulator counts bytes in int64 and keeps larger
#: numbers for "unlimited" (:data:`qcnmodel.sim.network.compile._BIG`)
MAX_FINITE_BUFFER = float(np.iinfo(np.int64).max // 4)


@dataclass(frozen=True)
class Buffers:
    """Buffer sizes in bytes (``math.inf`` = unlimited; ``oq_limit`` 0 = no OQ limit).

    A finite size above :data:`MAX_FINITE_BUFFER` (about 2.3e18 B) is refused: it does not
    fit the simulator's byte counters (give ``inf`` for an unlimited buffer). The lower
    bounds are checked when the network is compiled.
    """

    switch_memory: float = 150e3
    oq_limit: float = 0.0
    adapter_ib: float = 1.5e6
    adapter_ob: float = 1.5e6

    def __post_init__(self) -> None:
        for name in ("switch_memory", "oq_limit", "adapter_ib", "adapter_ob"):
            v = getattr(self, name)
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                if math.isfinite(v) and v > MAX_FINITE_BUFFER:
                    raise ValueError(
                        f"{name}: {v!r} B is above the largest finite buffer, "
                        f"{MAX_FINITE_BUFFER:.3g} B (give inf for an unlimited buffer)"
                    )


def headroom_refusal(value) -> str:
    """The message refusing a PAUSE ``headroom_factor`` below 1: the headroom reserved above
    XOFF would be less than what can still arrive once PAUSE is sent, and PAUSE would drop
    frames (a smaller headroom on purpose is a smaller ``rtt``)."""
    return (f"headroom_factor: {value!r} is outside the allowed range [1, inf): below 1 the "
            "headroom reserved above XOFF is less than what can still arrive after a PAUSE, "
            "and PAUSE drops frames (for a smaller headroom on purpose, give a smaller pause "
            "rtt)")  # fmt: skip


@dataclass(frozen=True)
class PauseConfig:
    """IEEE 802.3x PAUSE at switch inputs, with seed 000's watermarks (module docstring).

    ``rtt`` (s) sets the headroom ``rtt * link_rate * headroom_factor`` reserved above XOFF;
    ``headroom_factor`` (at least 1) scales it, or the derived one.
    ``None`` (default) derives it per input port so that PAUSE is lossless: twice the link's
    propagation delay, the receiving switch's latency and two maximum frame times (the
    headroom of IEEE 802.1Q-2014 Annex N for 802.1Qbb: the cable both ways, the frame being
    sent when PAUSE arrives, the frame being processed).
    """

    enabled: bool = False
    rtt: float | None = None
    headroom_factor: float = 1.0
    hysteresis: float = 10e3

    def __post_init__(self) -> None:
        """``enabled`` must be a bool (``True``/``False``; numpy bools are converted): NaN, 2
        or ``"yes"`` are refused rather than read as true."""
        if isinstance(self.enabled, np.bool_):
            object.__setattr__(self, "enabled", bool(self.enabled))
        if not isinstance(self.enabled, bool):
            raise ValueError(
                f"pause enabled: expected True or False, got {self.enabled!r} "
                f"({type(self.enabled).__name__})"
            )


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
