"""Single-bottleneck network for matched pairs: N sources -> one switch -> one sink.

The switch egress port towards the sink ``rx`` is the congestion point (CP); it serves at
``capacity`` (a :class:`~qcnmodel.sim.network.Hotspot` on ``rx``, whole run or a window).

**RTT -> link delays.** The fluid models' tau is the CP -> RP -> CP loop delay. In the
simulator (docs/simulator.md, ``cnm_path=fixed``) a CNM reaches the RP after ``cp_latency`` +
the propagation and switch latencies of the hops the sampled frame crossed before the CP,
i.e. ``d + L_sw`` (source link delay d, switch latency L_sw); the RP's next frame reaches the
CP after its serialisation ``8 F / R_line`` + ``d + L_sw`` (store and forward). Hence

    tau = 2 (d + L_sw) + 8 F / R_line + cp_latency

and the builder sets ``d = (tau - 8 F / R_line - 2 L_sw - cp_latency) / 2`` (error if < 0).
Not in tau: the rate limiter's frame spacing (a cut acts on the frame after the one already
scheduled: on average half a gap ``8 F / (2 R)`` later, 1.2 us per flow at 10 Gb/s / 1 flow,
12 us at 10 flows sharing 10 Gb/s... reported with the boundary checks) and the queueing delay
(not in the loop: the CP samples frames on arrival). The sink link carries no CNMs.

**Sources.** ``demand="greedy"``: each source offers ``min(R_line, 2 C / N)``, i.e. it is never
short of frames while its rate stays below twice the fair share (the fluid model's sources
are greedy; an uncapped 10 Gb/s offer per source makes the adapter refuse millions of frames
and costs simulation time for nothing). ``demand="constant"``: each source offers
``R_line / N`` (the netfpga-1g deck's reading), used for recovery after a hotspot.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel import config
from qcnmodel.sim.network import (
    Buffers,
    ConstantFlow,
    Host,
    Hotspot,
    Link,
    NetworkSpec,
    Switch,
)

__all__ = [
    "bottleneck_for",
    "bottleneck_spec",
    "link_delay_for_rtt",
    "min_loop_delay",
    "source_rate",
]


def min_loop_delay(line_rate: float, frame_size: float = 1500, switch_latency: float = 0.0,
                   cp_latency: float = 0.0) -> float:  # fmt: skip
    """The shortest loop delay (s) of a bottleneck (zero link delays): one frame's
    serialisation at the line rate, the switch latencies and the CP latency."""
    return 8.0 * frame_size / line_rate + 2.0 * switch_latency + cp_latency


def link_delay_for_rtt(
    rtt: float,
    line_rate: float,
    frame_size: int = 1500,
    switch_latency: float = 0.0,
    cp_latency: float = 0.0,
) -> float:
    """One-way source link delay d (s) giving the loop delay ``rtt`` (module docstring)."""
    shortest = min_loop_delay(line_rate, frame_size, switch_latency, cp_latency)
    d = (rtt - shortest) / 2.0
    if d < 0:
        raise ValueError(
            f"rtt: {rtt:g} s is below the minimum loop delay {shortest:g} s "
            "(serialisation + switch latencies + CP latency)"
        )
    return d


#: each source's adapter buffer (B; one flow per source, so one VOQ): what a rate limiter
#: holds back waits there, and the model's sources hold the same (``source_buffer``); one
#: home with the models' trajectory verdict, ``config.defaults["models.verdict_run"]``
SOURCE_BUFFER = float(config.defaults["models.verdict_run"]["source_buffer"])
#: a greedy source offers this many fair shares C/N (at most the line rate): the same home
GREEDY_SHARE = float(config.defaults["models.verdict_run"]["offered_share"])


def source_rate(n: int, capacity: float, line_rate: float, demand: str) -> float:
    """Offered rate per source (bit/s) for ``demand`` in {"greedy", "constant"}."""
    if demand == "greedy":
        return min(line_rate, GREEDY_SHARE * capacity / n)
    if demand == "constant":
        return line_rate / n
    raise ValueError(f"demand: must be 'greedy' or 'constant', got {demand!r}")


def bottleneck_spec(
    n: int,
    rtt: float,
    capacity: float,
    line_rate: float = 10e9,
    demand: str = "greedy",
    hotspot: tuple[float, float] = (0.0, math.inf),
    frame_size: int = 1500,
    switch_latency: float = 0.0,
    cp_latency: float = 0.0,
    memory: float = math.inf,
) -> NetworkSpec:
    """N sources ``s1..sN`` -> switch ``sw`` -> sink ``rx``; the port ``sw->rx`` is the CP.

    Parameters
    ----------
    n : int
        Number of sources (one flow each, towards ``rx``).
    rtt : float, str or sequence of them
        Loop delay CP -> RP -> CP, s (unit strings accepted; mapped to link delays as in the
        module docstring); a sequence gives each source its own RTT (flow classes).
    capacity : float or str
        CP service rate during ``hotspot`` (bit/s, unit strings accepted); ``line_rate``
        outside it.
    line_rate : float or str
        Rate of every link (bit/s, unit strings accepted): the RP line rate.
    demand : {"greedy", "constant"}
        Offered rate per source (module docstring).
    hotspot : (float, float)
        Interval [start, stop) in which the CP serves at ``capacity``.
    memory : float
        Switch memory per input port (default unlimited: no drops, as in the fluid model).
    """
    from qcnmodel.units import parse_rate, parse_time

    if isinstance(n, bool) or not float(n).is_integer() or not n >= 1:
        raise ValueError(f"n: the number of sources must be a whole number >= 1, got {n!r}")
    n = int(n)
    capacity, line_rate = parse_rate(capacity, "capacity"), parse_rate(line_rate, "line_rate")
    single = np.ndim(rtt) == 0 or isinstance(rtt, str)
    rtts = [parse_time(rtt, "rtt")] * n if single else [parse_time(r, "rtt") for r in rtt]
    if len(rtts) != n:
        raise ValueError(f"rtt: expected one RTT or {n} (one per source), got {len(rtts)}")
    ds = [link_delay_for_rtt(r, line_rate, frame_size, switch_latency, cp_latency) for r in rtts]
    srcs = [f"s{i + 1}" for i in range(n)]
    links = [Link(h, "sw", line_rate, d) for h, d in zip(srcs, ds)]
    # the sink link's delay does not enter the loop (no CNMs cross it)
    links.append(Link("rx", "sw", line_rate, min(ds)))
    rate = source_rate(n, capacity, line_rate, demand)
    traffic = [ConstantFlow(s, "rx", rate) for s in srcs]
    hs = [Hotspot("rx", capacity, hotspot[0], hotspot[1])]
    return NetworkSpec(
        name=f"bottleneck-n{n}",
        hosts=tuple(Host(h) for h in [*srcs, "rx"]),
        switches=(Switch("sw", switch_latency),),
        links=tuple(links),
        traffic=tuple(traffic),
        hotspots=tuple(hs),
        buffers=Buffers(switch_memory=memory, adapter_ib=SOURCE_BUFFER),
        frame_size=frame_size,
    )


def bottleneck_for(params, n: int, rtt, capacity: float | None = None, **kw) -> NetworkSpec:
    """:func:`bottleneck_spec` for the QCN parameter set ``params``: its line rate, frame
    size and CP latency, so that the packets run what a model of ``params`` describes (the
    simulator takes the line rate and the frame size from the network, and the loop delay
    ``rtt`` includes the CP latency). ``capacity`` defaults to the line rate; ``kw`` go to
    :func:`bottleneck_spec` (``demand``, ``hotspot``, ``memory``, ...)."""
    cap = float(params.line_rate) if capacity is None else float(capacity)
    return bottleneck_spec(int(n), rtt, cap, line_rate=float(params.line_rate),
                           frame_size=int(params.frame_size),
                           cp_latency=float(params.cp_latency), **kw)  # fmt: skip
