"""Benchmark of parallel sweeps: ``qcnmodel sweep --jobs 2`` against ``--jobs 1``.

Targets (on an idle 2-core machine):

* an 8-point sweep of 1 s og-hotspot runs (seeds 0-7): ``--jobs 2`` at least 1.8x faster
  than ``--jobs 1``;
* the same with short points (50 ms runs): at least 1.5x.

Both worker counts are measured in the same run, in alternation, ``--repeat`` times each;
medians are reported, each speed-up against its target with ``met`` / ``NOT met``. Each case
is measured two ways:

``command``
    Each sweep is a fresh ``qcnmodel sweep`` process, as a user runs it (the compiled cache
    is warmed once before timing). This includes the command's fixed cost, which one or two
    workers pay alike: start-up (imports, loading the compiled kernel), assembling and
    saving the Dataset, and exit. That cost ``F`` is measured too (the same command with
    one 1 ms point) with the speed-up when only the points run in parallel,
    ``T1 / (F + (T1 - F) / 2)`` (a parallel sweep imports xarray while its workers run,
    which can beat it a little).
``sweep``
    :func:`qcnmodel.studies.sweep.sweep` called in this (warm) process: the points, the
    fork of the workers and the hand-out of the chunks, without the command's fixed cost.
``dask``
    The same :func:`~qcnmodel.studies.sweep.sweep` call on a dask.distributed
    ``LocalCluster`` of 2 worker processes (``scheduler=``; the same chunked tasks, several
    points each), against ``--jobs 1`` in this process. The cluster is started, and each
    worker has loaded the compiled simulator, before the timing (a cluster is started once
    and used for many sweeps); the wall time includes the hand-out of the chunks and the
    transfer of the results.

Other programs on the machine take cores from the workers, so wall-clock speed-ups fall
short on a busy machine. The load average is printed with each case, and so is a CPU-time
speed-up that load changes little: the serial CPU time over the busiest process's CPU time
(for the command, the parent's own plus half its workers'; the parent runs no point). It
shows the balance of the work and the CPU cost of parallelism, but not a process waiting
idle for its next chunk: that shows in the wall-clock figures only. The total CPU time of
the two runs shows the cost of parallelism itself.

Run: ``python benchmarks/sweep.py [--repeat 3] [--points 8] [--cases 1s,50ms]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: (simulated time per point, case name, speed-up target)
CASES = {"1s": ("1 s og-hotspot points", 1.8), "50ms": ("short points (50 ms)", 1.5)}

#: the parent's own CPU time, printed by the wrapper of ``_command``
_WRAPPER = (
    "import resource, sys\n"
    "from qcnmodel.cli import exit_now, main\n"
    "cpu_file = sys.argv[1]\n"
    "sys.argv = ['qcnmodel', *sys.argv[2:]]\n"
    "rc = main()  # as the console script calls it: with its start-up probes installed\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "open(cpu_file, 'w').write(str(r.ru_utime + r.ru_stime))\n"
    "exit_now(rc)  # as the console script ends\n"
)


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _command(duration: str, points: int, jobs: int, workdir: Path) -> dict:
    """One ``qcnmodel sweep`` process: wall time, total CPU time (its workers included) and
    its workers' CPU time."""
    stamp = time.monotonic_ns()
    out, cpu_file = workdir / f"bench-{stamp}.nc", workdir / f"cpu-{stamp}.txt"
    argv = [sys.executable, "-c", _WRAPPER, str(cpu_file), "sweep", "--scenario",
            "og-hotspot", "--grid", f"seed=0..{points - 1}:{points}", "--duration", duration,
            "--jobs", str(jobs), "--out", str(out), "--quiet"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    c0, t0 = _cpu_children(), time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=workdir)
    wall, cpu = time.perf_counter() - t0, _cpu_children() - c0
    workers = float(cpu_file.read_text())
    out.unlink(missing_ok=True)
    return {"wall": wall, "cpu": cpu, "workers_cpu": workers}


def timed_point(**kw) -> dict:
    """:func:`~qcnmodel.studies.points.simulation_point` with the CPU time it took and the
    process that ran it."""
    from qcnmodel.studies.points import simulation_point

    c0 = time.process_time()
    out = simulation_point(**kw)
    return {**out, "_cpu_s": time.process_time() - c0, "_pid": os.getpid()}


def _in_process(duration: float, points: int, jobs: int) -> dict:
    """One :func:`sweep` call in this process: wall time and the CPU critical path."""
    from qcnmodel.studies.sweep import sweep

    fixed = {"scenario": "og-hotspot", "protocol": "qcn", "preset": None,
             "duration": duration, "sets": {}}  # fmt: skip
    c0, k0, t0 = time.process_time(), _cpu_children(), time.perf_counter()
    ds = sweep(timed_point, {"seed": list(range(points))}, fixed=fixed, n_jobs=jobs)
    wall = time.perf_counter() - t0
    parent = time.process_time() - c0
    children = _cpu_children() - k0  # the workers, reaped when the sweep ended
    per: dict[int, float] = {}
    for pid, cpu in zip(ds["_pid"].values.astype(int), ds["_cpu_s"].values):
        per[pid] = per.get(pid, 0.0) + float(cpu)
    workers = [v for k, v in per.items() if k != os.getpid()]
    # a worker's CPU time outside its points (start, hand-outs), shared evenly
    extra = max(0.0, children - sum(workers)) / max(1, len(workers))
    # the processes run side by side: the busiest one sets the pace
    path = max([parent] + [w + extra for w in workers])
    return {"wall": wall, "cpu": parent + children, "path": path}


def _on_dask(duration: float, points: int, client) -> dict:
    """One :func:`sweep` call on the dask cluster of ``client``: wall time."""
    from qcnmodel.studies.sweep import sweep

    fixed = {"scenario": "og-hotspot", "protocol": "qcn", "preset": None,
             "duration": duration, "sets": {}}  # fmt: skip
    t0 = time.perf_counter()
    sweep(timed_point, {"seed": list(range(points))}, fixed=fixed, scheduler=client)
    return {"wall": time.perf_counter() - t0}


def _cluster():
    """A LocalCluster of 2 single-threaded worker processes and its client, warmed (each
    worker has run a 1 ms point, so the compiled simulator is loaded), or (None, None)
    without dask.distributed."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - distributed is a dependency
        return None, None
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)  # fmt: skip
    client = Client(cluster)
    _on_dask(1e-3, 4, client)
    return cluster, client


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _verdict(speedup: float, target: float) -> str:
    return f"{speedup:.3f}x (target {target:.1f}x: {'met' if speedup >= target else 'NOT met'})"


def bench_case(duration: str, points: int, repeat: int, work: Path, verbose: bool) -> dict:
    """Measure one case both ways; print and return the figures."""
    from qcnmodel.units import parse_time

    name, target = CASES[duration]
    load_before = _load()
    cmd = {1: [], 2: []}
    fix = []
    sw = {1: [], 2: []}
    for _ in range(repeat):
        for jobs in (1, 2):
            cmd[jobs].append(_command(duration, points, jobs, work))
        fix.append(_command("1ms", 1, 1, work))
        for jobs in (1, 2):
            sw[jobs].append(_in_process(parse_time(duration), points, jobs))

    def med(rows, key):
        return statistics.median(r[key] for r in rows)

    row = {"case": name, "target": target, "points": points, "repeat": repeat}
    t1, t2, f = med(cmd[1], "wall"), med(cmd[2], "wall"), med(fix, "wall")
    row["command"] = {
        "serial_s": t1,
        "parallel_s": t2,
        "speedup": statistics.median(a["wall"] / b["wall"] for a, b in zip(cmd[1], cmd[2])),
        "fixed_s": f,
        "bound": t1 / (f + max(0.0, t1 - f) / 2),
        "cpu_serial_s": med(cmd[1], "cpu"),
        "cpu_parallel_s": med(cmd[2], "cpu"),
        "cpu_speedup": statistics.median(
            a["cpu"] / (b["cpu"] - b["workers_cpu"] / 2) for a, b in zip(cmd[1], cmd[2])
        ),
    }
    row["sweep"] = {
        "serial_s": med(sw[1], "wall"),
        "parallel_s": med(sw[2], "wall"),
        "speedup": statistics.median(a["wall"] / b["wall"] for a, b in zip(sw[1], sw[2])),
        "cpu_serial_s": med(sw[1], "cpu"),
        "cpu_parallel_s": med(sw[2], "cpu"),
        "cpu_speedup": statistics.median(a["cpu"] / b["path"] for a, b in zip(sw[1], sw[2])),
    }
    row["met"] = row["command"]["speedup"] >= target
    row["load"] = (load_before, _load())
    if verbose:
        c, s = row["command"], row["sweep"]
        print(f"{points}-point sweep, {name} (median of {repeat}; {load_before} -> "
              f"{row['load'][1]})")  # fmt: skip
        print(f"  command: --jobs 1 {c['serial_s']:.2f} s, --jobs 2 {c['parallel_s']:.2f} s, "
              f"speed-up {_verdict(c['speedup'], target)}")  # fmt: skip
        print(f"           fixed cost (start-up, save, exit) {c['fixed_s']:.2f} s: with only "
              f"the points in parallel {c['bound']:.2f}x; CPU {c['cpu_serial_s']:.2f} s vs "
              f"{c['cpu_parallel_s']:.2f} s, CPU-time speed-up "
              f"{_verdict(c['cpu_speedup'], target)}")  # fmt: skip
        print(f"  sweep:   --jobs 1 {s['serial_s']:.2f} s, --jobs 2 {s['parallel_s']:.2f} s, "
              f"speed-up {_verdict(s['speedup'], target)}")  # fmt: skip
        print(f"           CPU {s['cpu_serial_s']:.2f} s vs {s['cpu_parallel_s']:.2f} s, "
              f"CPU-time speed-up {_verdict(s['cpu_speedup'], target)}", flush=True)  # fmt: skip

    return row


def bench_dask(row: dict, duration: str, points: int, repeat: int, client,
               verbose: bool) -> None:  # fmt: skip
    """Time the case on the dask cluster of ``client`` against the serial in-process sweep
    of ``row`` (median); adds ``row["dask"]``."""
    from qcnmodel.units import parse_time

    dk = [_on_dask(parse_time(duration), points, client)["wall"] for _ in range(repeat)]
    serial = row["sweep"]["serial_s"]
    row["dask"] = {"parallel_s": statistics.median(dk), "speedup": serial / statistics.median(dk)}
    if verbose:
        d = row["dask"]
        print(f"{row['case']}, dask: LocalCluster of 2 worker processes {d['parallel_s']:.2f} s "
              f"against --jobs 1 in this process {serial:.2f} s (median of {repeat}), speed-up "
              f"{_verdict(d['speedup'], row['target'])} ({_load()})", flush=True)  # fmt: skip


def bench_sweep(repeat: int = 1, points: int = 8, cases=("1s", "50ms"),
                verbose: bool = True) -> list[dict]:  # fmt: skip
    """Time each case with ``--jobs 1`` and ``--jobs 2``; print and return the speed-ups.

    Returns
    -------
    list of dict
        Per case: ``case``, ``target``, ``met`` (the command's wall-clock speed-up meets the
        target), ``load`` and, under ``command`` and ``sweep``, the medians ``serial_s``,
        ``parallel_s``, ``speedup``, ``cpu_serial_s``, ``cpu_parallel_s``, ``cpu_speedup``
        (and for the command ``fixed_s`` and ``bound``); under ``dask``, ``parallel_s`` and
        ``speedup`` (against the serial ``sweep``).
    """
    from qcnmodel.studies.points import _warm_simulator

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _command("1ms", 1, 1, work)  # compile or load the kernel cache once
        _warm_simulator()  # and load it in this process, for the in-process sweeps,
        for jobs in (1, 2):  # whose first call also imports what assembling a Dataset needs
            _in_process(1e-3, 2, jobs)
        rows = [bench_case(d, points, repeat, work, verbose) for d in cases]
    # the cluster only now: its idle processes would take CPU from the timings above
    cluster, client = _cluster()
    try:
        for row, d in zip(rows, cases):
            if client is not None:
                bench_dask(row, d, points, repeat, client, verbose)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    if verbose:
        print(f"cores {len(os.sched_getaffinity(0))} (the targets assume an idle 2-core "
              "machine; a CPU-time speed-up is what a free core per process gives)")  # fmt: skip
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per case (median reported)")
    ap.add_argument("--points", type=int, default=8, help="points per sweep (default 8)")
    ap.add_argument("--cases", default="1s,50ms", help="point durations: 1s, 50ms or both")
    a = ap.parse_args()
    chosen = [c.strip() for c in a.cases.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in CASES]
    if unknown or a.repeat < 1 or a.points < 2:
        ap.error(f"--cases: choose from {', '.join(CASES)}; --repeat >= 1; --points >= 2")
    bench_sweep(repeat=a.repeat, points=a.points, cases=chosen)
