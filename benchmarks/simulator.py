"""Benchmark of the packet-level simulator (its performance targets).

Prints, for ``og-hotspot`` (n nodes on one switch, uniform traffic at 85% of 10 Gb/s, hot node
served at 1 Gb/s, QCN on):

1. the first-call time (numba compilation, or loading the on-disk cache), excluded from 2-4;
2. 1 s of simulated time with 10 nodes: wall time, events, events/s, frames;
3. the compiled kernel versus the pure-Python oracle on the same (shorter) run: wall-time
   ratio, with a check that both produced the same counters;
4. the cost for 10, 50 and 100 nodes: frames, events, wall time, ns per frame (the cost
   should be linear in the number of simulated frames).

Usage: ``python benchmarks/simulator.py [--duration 1] [--oracle-duration 0.02]
[--nodes 10,50,100] [--scaling-duration 0.2] [--seed 0]``. Figures only; no assertions.
"""

from __future__ import annotations

import argparse
import sys
import time


def run(n, duration, seed, engine="kernel", start=0.1):
    from qcnmodel.sim import simulate

    over = {"n_nodes": n, "load": 0.85, "hotspot_start": min(start, duration / 2)}
    return simulate(
        "og-hotspot", protocol="qcn", duration=duration, seed=seed, overrides=over,
        engine=engine, trace=False,
    )  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--oracle-duration", type=float, default=0.02)
    ap.add_argument("--nodes", default="10,50,100")
    ap.add_argument("--scaling-duration", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    import qcnmodel.sim  # noqa: F401

    r = run(3, 1e-3, a.seed)
    first = time.perf_counter() - t0
    print(f"first call (import + numba compile or cache load): {first:.2f} s")

    cpu0 = time.process_time()
    r = run(10, a.duration, a.seed)
    cpu = time.process_time() - cpu0
    c = r.counters
    frames = c["frames_delivered"] + c["frames_dropped"]
    print(
        f"og-hotspot, 10 nodes, 85% load, QCN, {a.duration:g} s simulated: wall {r.wall_s:.2f} s "
        f"(process CPU {cpu:.2f} s, incl. result assembly), "
        f"{c['events']:,} events, {c['events'] / r.wall_s / 1e6:.2f} M events/s, "
        f"{frames:,} frames ({r.wall_s / max(frames, 1) * 1e9:.0f} ns/frame), "
        f"target <= 3 s: {'met' if r.wall_s <= 3.0 else 'NOT met'}"
    )
    sys.stdout.flush()

    k = run(10, a.oracle_duration, a.seed, start=a.oracle_duration / 4)
    o = run(10, a.oracle_duration, a.seed, engine="oracle", start=a.oracle_duration / 4)
    same = k.counters == o.counters
    print(
        f"kernel vs pure-Python oracle, same run ({a.oracle_duration:g} s, "
        f"{k.counters['events']:,} events): kernel {k.wall_s:.3f} s, oracle {o.wall_s:.2f} s, "
        f"ratio {o.wall_s / k.wall_s:.0f}x (target >= 20x); identical counters: {same}"
    )
    sys.stdout.flush()

    print(f"scaling ({a.scaling_duration:g} s simulated each):")
    print(
        f"{'nodes':>6} {'frames':>12} {'events':>12} {'wall s':>8} {'ns/frame':>9} {'ev/frame':>9}"
    )
    for n in (int(x) for x in a.nodes.split(",")):
        r = run(n, a.scaling_duration, a.seed)
        c = r.counters
        frames = c["frames_delivered"] + c["frames_dropped"]
        print(
            f"{n:>6} {frames:>12,} {c['events']:>12,} {r.wall_s:>8.2f} "
            f"{r.wall_s / frames * 1e9:>9.0f} {c['events'] / frames:>9.2f}"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
