"""How long simulator work may take, said before it starts: one run or a sweep of runs.

A run's events are bounded above by :func:`qcnmodel.sim.engines.estimate_events` (6 per
offered frame and one per trace bin); its wall time is that many events times a cost per
event, a range from an idle to a loaded machine (:data:`S_PER_EVENT`,
:data:`EVENTS_PER_ESTIMATE`, and :data:`LARGE_NETWORK_FACTOR` for networks of many flows,
whose state no longer fits the caches). The estimate reads the network's description only
(the offered load of its traffic, its frame size and flows): compiling a network of a
thousand nodes takes seconds, and a sweep's points are many.

Above :data:`ANNOUNCE_ABOVE_S` (the upper end of the range) one line on stderr says the
events, the range and the workers it is divided by; compilation of the kernel (said by the
simulator itself) is not counted.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

__all__ = ["ANNOUNCE_ABOVE_S", "announce", "duration_text", "point_events", "range_text",
           "run_events", "spec_load", "sweep_events", "wall_range", "workers_at_once"]  # fmt: skip

#: seconds of wall time per simulated event of the compiled kernel on the 2-core reference
#: machine: 48-60 ns idle (``benchmarks/simulator.py``, ``benchmarks/scale_profile.py``:
#: og-hotspot at 10 and 100 nodes), two to three times that loaded; measured here with the
#: load average near 10 on 2 cores: 111-145 ns on og-hotspot (10 and 100 nodes), the parking
#: lot, ig-hotspot-100, teak-scenario-3 and twenty-stage (0.1-0.3 s runs)
S_PER_EVENT = (48e-9, 180e-9)

#: the events runs make, as a fraction of :func:`qcnmodel.sim.engines.estimate_events` (an
#: upper estimate): 0.51-0.53 on og-hotspot (10 to 1000 nodes), 0.38 on the parking lot,
#: 0.61 on ig-hotspot-100, 0.57 on teak-scenario-3, 0.34-0.42 on the twenty-stage scenarios
EVENTS_PER_ESTIMATE = (0.34, 0.61)

#: networks of more flows than this cost more per event (their flow state leaves the caches):
#: measured on one loaded machine, og-hotspot at 300 and 1000 nodes (89,700 and 999,000 flows)
#: took 485-722 ns per event against 111-145 ns at 10 and 100 nodes (90 and 9,900 flows)
LARGE_NETWORK_FLOWS = 30_000
#: the factor on :data:`S_PER_EVENT` beyond :data:`LARGE_NETWORK_FLOWS` (485/120 to 722/120)
LARGE_NETWORK_FACTOR = (4.0, 6.0)


#: simulator work whose wall time may exceed this (s, the upper end of the range) is said
ANNOUNCE_ABOVE_S = 30.0


class _Load:
    """What :func:`qcnmodel.sim.engines.estimate_events` reads of a compiled network."""

    def __init__(self, offered_bps: float, frame_size: int):
        self.offered_bps = np.array([offered_bps])
        self.frame_size = frame_size


def spec_load(spec) -> tuple[float, int]:
    """``(offered bit/s, flows)`` of a network description, without compiling it: the sum of
    its traffic's mean rates (an on/off flow's rate times its duty cycle), as the compiled
    network's ``offered_bps`` sums them, and its source-destination pairs (a uniform source
    has one per destination: every other host by default)."""
    from qcnmodel.sim.network import UniformTraffic
    from qcnmodel.sim.network.spec import duty_cycle
    from qcnmodel.units import parse_rate, parse_time

    def num(value, parse) -> float:
        return parse(value, "traffic") if isinstance(value, str) else float(value)

    n_hosts = len(spec.hosts)
    offered, flows = 0.0, 0
    for g in spec.traffic:
        rate = num(g.rate, parse_rate)
        if isinstance(g, UniformTraffic):
            offered += rate
            flows += len(g.destinations) if g.destinations else n_hosts - 1
            continue
        on, off = num(g.on_mean, parse_time), num(g.off_mean, parse_time)
        offered += rate * duty_cycle(on, off)
        flows += 1
    return offered, flows


def point_events(scenario, protocol: str = "qcn", duration=None, overrides=None,
                 bin_width=None) -> tuple[float, int]:  # fmt: skip
    """``(events, flows)`` of one run of :func:`qcnmodel.sim.simulate` (same arguments):
    the upper estimate :func:`qcnmodel.sim.engines.estimate_events` of its network, duration
    and bin width, and its flows. Raises the ValueError :func:`~qcnmodel.sim.simulate` would
    for a bad scenario parameter, duration or bin width."""
    from qcnmodel.sim import engines
    from qcnmodel.sim.api import _check_run, _resolve_network
    from qcnmodel.sim.protocols.registry import protocol_name

    spec, sc, _, _ = _resolve_network(scenario, protocol_name(protocol), overrides)
    dur, bw, _ = _check_run(duration, bin_width, 0, sc)
    offered, flows = spec_load(spec)
    end_ns, bin_ns = int(round(dur * 1e9)), max(1, int(round(bw * 1e9)))
    return float(engines.estimate_events(_Load(offered, spec.frame_size), end_ns, bin_ns)), flows


def run_events(fixed: dict, point: dict) -> tuple[float, int]:
    """:func:`point_events` of one point of a simulator sweep
    (:func:`qcnmodel.studies.points.simulation_point`'s ``fixed`` and swept arguments)."""
    merged = {**fixed.get("sets", {}), **point}
    merged.pop("seed", None)
    return point_events(fixed["scenario"], fixed.get("protocol", "qcn"), fixed.get("duration"),
                        merged)  # fmt: skip


#: at most this many points of a sweep are estimated one by one (evenly spread over the grid;
#: the rest in proportion)
SAMPLE_POINTS = 64


def sweep_events(fixed: dict, grid: dict) -> tuple[float, tuple[float, float], int, int]:
    """``(events, (low, high), points, largest flows)`` of a simulator sweep over ``grid``:
    the sums over its points of :func:`run_events` and of each run's :func:`wall_range` (one
    worker), estimated on at most :data:`SAMPLE_POINTS` points spread evenly over the grid
    (in the order of its points) and scaled to all of them."""
    names = list(grid)
    shape = [len(grid[n]) for n in names]
    total = math.prod(shape)
    picks = np.unique(np.linspace(0, total - 1, min(total, SAMPLE_POINTS)).round().astype(int))
    events, lo, hi, flows = 0.0, 0.0, 0.0, 0
    for flat in picks.tolist():
        at = {n: grid[n][i] for n, i in zip(names, np.unravel_index(flat, shape))}
        e, f = run_events(fixed, at)
        low, high = wall_range(e, f)
        events, lo, hi, flows = events + e, lo + low, hi + high, max(flows, f)
    scale = total / len(picks)
    return events * scale, (lo * scale, hi * scale), total, flows


def wall_range(events: float, flows: int, engine: str = "kernel") -> tuple[float, float]:
    """``(low, high)`` seconds of wall time of one run of ``events`` (an upper estimate,
    :func:`qcnmodel.sim.engines.estimate_events`) and ``flows``: the events runs make of it
    (:data:`EVENTS_PER_ESTIMATE`) times the cost per event of ``engine``
    (:data:`S_PER_EVENT`, by :data:`LARGE_NETWORK_FACTOR` beyond
    :data:`LARGE_NETWORK_FLOWS` flows; :func:`_oracle_cost`)."""
    cost = _oracle_cost() if engine == "oracle" else S_PER_EVENT
    big = LARGE_NETWORK_FACTOR if engine != "oracle" and flows > LARGE_NETWORK_FLOWS else (1, 1)
    lo = events * EVENTS_PER_ESTIMATE[0] * cost[0] * big[0]
    hi = events * EVENTS_PER_ESTIMATE[1] * cost[1] * big[1]
    return lo, hi


def _oracle_cost() -> tuple[float, float]:
    """The pure-Python oracle's seconds per event, idle to loaded
    (:data:`qcnmodel.sim.engines.ORACLE_S_PER_EVENT_RANGE`)."""
    from qcnmodel.sim.engines import ORACLE_S_PER_EVENT_RANGE

    return ORACLE_S_PER_EVENT_RANGE


def duration_text(seconds: float) -> str:
    """``seconds`` in the largest of s, min, h and days that reads well."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def range_text(lo: float, hi: float) -> str:
    """``lo`` to ``hi`` seconds as text, the unit said once when both read in one
    (``"11.6-77.8 min"``, ``"46 s-1.2 h"``)."""
    a, b = duration_text(lo), duration_text(hi)
    unit_a, unit_b = a.split(" ", 1)[1], b.split(" ", 1)[1]
    return f"{a.split(' ', 1)[0]}-{b}" if unit_a == unit_b else f"{a}-{b}"


def workers_at_once(n_jobs: int, points: int) -> int:
    """The runs of a sweep that go on at once: ``n_jobs`` workers, no more than its points
    and than the machine's cores."""
    return max(1, min(int(n_jobs), int(points), os.cpu_count() or 1))


def announce(command: str, what: str, events: float, seconds: tuple[float, float],
             flows: int, workers: int = 1, engine: str = "kernel", hint: str = ""
             ) -> str | None:  # fmt: skip
    """One line on stderr, before simulator work starts, when its wall time ``seconds``
    (:func:`wall_range`, on one worker) over ``workers`` may exceed
    :data:`ANNOUNCE_ABOVE_S`: the range, the ``events`` and the cost per event it comes
    from, and the workers it is divided by. Returns the line (None when none is due)."""
    lo, hi = (t / max(1, workers) for t in seconds)
    if hi <= ANNOUNCE_ABOVE_S:
        return None
    cost = _oracle_cost() if engine == "oracle" else S_PER_EVENT
    each = (f"{cost[0] * 1e9:.0f}-{cost[1] * 1e9:.0f} ns each" if engine != "oracle" else
            f"{cost[0] * 1e6:.0f}-{cost[1] * 1e6:.0f} us each on the oracle")  # fmt: skip
    if flows > LARGE_NETWORK_FLOWS and engine != "oracle":
        each += (f" (x{LARGE_NETWORK_FACTOR[0]:g}-{LARGE_NETWORK_FACTOR[1]:g} with more than "
                 f"{LARGE_NETWORK_FLOWS:,} flows: {flows:,})")  # fmt: skip
    plural = "s" if workers > 1 else ""
    line = (f"qcnmodel {command}: {what} may take {range_text(lo, hi)} on {workers} "
            f"worker{plural}: at most {events:.3g} events (runs make "
            f"{EVENTS_PER_ESTIMATE[0]:g}-{EVENTS_PER_ESTIMATE[1]:g} of that) at {each}, "
            f"idle to loaded{'; ' + hint if hint else ''}")  # fmt: skip
    print(line, file=sys.stderr, flush=True)
    return line
