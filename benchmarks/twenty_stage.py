"""Benchmark: the ``twenty-stage`` scenario (performance target: 1 s simulated in <= 15 s wall).

20 switches in a chain, 57 flows at 100% of 10 Gb/s (IBM Zurich's 20-stage hotspot, seed 000),
QCN on, preset
802.1qau. Prints the first-call time (numba compilation or cache load, excluded), then the
wall time of the run, its events and frames, and the simulated/wall-time ratio.

Usage: ``python benchmarks/twenty_stage.py [--duration 1] [--rtt 2us] [--protocol qcn]
[--seed 0]``. Figures only; no assertions. The target assumes an otherwise idle core.
"""

from __future__ import annotations

import argparse
import sys
import time

TARGET_S = 15.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=1.0, help="simulated seconds")
    ap.add_argument("--rtt", default="2us", help="per-hop RTT (deck: 2us or 20us)")
    ap.add_argument("--protocol", default="qcn", choices=("qcn", "none"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    from qcnmodel.sim import simulate
    from qcnmodel.sim.scenarios.catalogue import CATALOGUE

    sc = CATALOGUE["twenty-stage"]
    spec = sc.build({"rtt": a.rtt})
    simulate(spec, params=sc.preset, duration=1e-3, trace=False)
    print(f"first call (import + numba compile or cache load): {time.perf_counter() - t0:.2f} s")
    sys.stdout.flush()

    cpu0 = time.process_time()
    r = simulate(spec, protocol=a.protocol, params=sc.preset, duration=a.duration, seed=a.seed,
                 trace=False)  # fmt: skip
    cpu = time.process_time() - cpu0
    c = r.counters
    s = r.summary()
    ok = r.wall_s <= TARGET_S * a.duration
    print(
        f"twenty-stage ({a.protocol}, per-hop RTT {a.rtt}), {a.duration:g} s simulated: "
        f"wall {r.wall_s:.2f} s (process CPU {cpu:.2f} s), simulated/wall = "
        f"{a.duration / r.wall_s:.3f} (1/{r.wall_s / a.duration:.1f}), "
        f"{c['events']:,} events ({c['events'] / r.wall_s / 1e6:.2f} M/s), "
        f"frames offered {c['frames_offered']:,}, sent {c['frames_sent']:,}, "
        f"dropped {c['frames_dropped']:,}, CNMs {c['cnms']:,}; "
        f"hot port {s.get('hot_port')} utilisation {s.get('hot_port_utilisation') or 0:.3f}; "
        f"target <= {TARGET_S:g} s per simulated s: {'met' if ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
