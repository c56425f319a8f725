"""Cold start of the packet simulator: the first ``qcnmodel simulate`` on a fresh install.

Runs ``qcnmodel simulate --scenario og-hotspot --duration 1ms`` in subprocesses, all with
one fresh, empty ``NUMBA_CACHE_DIR`` (nothing compiled, as after ``pip install``):

1. cold, default engine (``auto``): a run this short takes the pure-Python twin instead of
   compiling (same results; the notice line on stderr says so);
2. cold, ``--engine kernel``: compiles the kernel (the notice line says so) and runs: what a
   longer first run pays;
3. warm: loads the kernel from the cache;
4. warm again, five times, measuring the time from the process start to the first event
   (the median is judged), with Python's bytecode cache warm as well, as after ``pip
   install`` (which compiles the modules' bytecode); where the environment sets
   ``PYTHONDONTWRITEBYTECODE`` the bytecode goes to a temporary ``PYTHONPYCACHEPREFIX``, and
   the times without it (every module compiled from source at each start) are printed too.
   The simulator first runs its event loop on a tiny network (numba loads the compiled loop
   from the cache there), then the run itself: its first event is the start of that second
   call.
   The time to the first call (before numba has loaded anything) is printed too, with how
   long loading took.

Targets: a first run <= 20 s, time to first event with a warm cache <= 0.5 s. Each figure is
printed with its target and whether it is met. Usage: ``python benchmarks/cold_start.py``
(``benchmarks/compile_profile.py`` lists what compiles and for how long).

``--families`` times the first compiling run of each kernel family (the protocol families, the
QCN variants with probes or SONAR apart), each with its own fresh cache, against the same
20 s target: the first ``simulate`` of any protocol.

``--report`` measures ``qcnmodel report`` instead (target <= 20 s as well), four times with
one fresh cache: the first report (``--confirm auto``, the default: the model's cohort kernel
compiles, a few seconds; the packet confirmation and the nonlinear trajectories are left out
because their kernels are not compiled, which the notice line says), the second report (the
same: nothing has compiled the simulator yet), ``--confirm yes`` (compiles the simulator and
the trajectory kernels once: what the full report costs the first time; no target), and the
default report once more (everything compiled: the full report, with its packet
confirmation, as before). Each line gives the load average before the run and the CPU
seconds of the report and its forks (the machine may be shared; the report's parallel parts
use the cores actually free).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD_TARGET_S = 20.0
FIRST_EVENT_TARGET_S = 0.5
ARGS = ["simulate", "--scenario", "og-hotspot", "--duration", "1ms", "--bin", "1ms", "--json"]

#: run the CLI, printing the time from ``T0`` (the parent's clock before the launch) to each
#: call of the event loop (the first loads the compiled loop on a tiny network; the last is
#: the run itself, whose first event follows at once)
PROBE = """
import os, sys, time
import qcnmodel.sim.kernel.loop as loop
_run = loop.run_compiled
def run_compiled(*a, **k):
    print(f"LOOP_CALL {time.time() - float(os.environ['T0']):.4f}", file=sys.stderr)
    return _run(*a, **k)
loop.run_compiled = run_compiled
from qcnmodel.cli import main
sys.argv = ["qcnmodel", *sys.argv[1:]]
sys.exit(main())  # as the console script calls it: with its start-up probes installed
"""


def _run(cache: str, probe: bool = False, extra: tuple = (), pyc: str | None = None
         ) -> tuple[float, str]:  # fmt: skip
    """Wall time and stderr of one command; ``pyc``: a bytecode cache directory
    (``PYTHONPYCACHEPREFIX``, written even where the environment sets
    ``PYTHONDONTWRITEBYTECODE``), else the environment's own setting."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    if pyc is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pyc
    env["T0"] = repr(time.time())
    args = [*ARGS, *extra]
    cmd = [sys.executable, "-c", PROBE, *args] if probe else [sys.executable, "-m", "qcnmodel",
                                                              *args]  # fmt: skip
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, r.stderr


#: warm start-up measurements per setting (the median is judged)
PROBES = 5


def _first_event(cache: str, pyc: str | None) -> tuple[float, float]:
    """Seconds from the process start to the first call of the event loop (the tiny
    network that loads the compiled loop) and to the run's own call (its first event)."""
    _, err = _run(cache, probe=True, extra=("--engine", "kernel"), pyc=pyc)
    calls = [float(ln.split()[1]) for ln in err.splitlines() if ln.startswith("LOOP_CALL")]
    return calls[0], calls[-1]


def _verdict(value: float, target: float) -> str:
    return f"{value:7.2f} s  target <= {target:g} s  ratio {value / target:5.2f}  " + (
        "met" if value <= target else "NOT met"
    )


def _report(cache: str, out: str, *extra: str) -> tuple[float, str, float, float]:
    """Wall time, stderr, load average before, CPU seconds (the report and its forks)."""
    import resource

    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    load = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "qcnmodel", "report", "--quiet", "--out", out,
                        *extra], env=env, capture_output=True, text=True, check=True)  # fmt: skip
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime
    return wall, r.stderr, load, cpu


def _parts(out: str) -> str:
    md = (Path(out) / "report.md").read_text()
    left = [what for what, mark in (("packet confirmation", "Not run: the packet simulator"),
                                    ("nonlinear trajectories", "Not drawn: the nonlinear"))
            if mark in md]  # fmt: skip
    return "left out: " + ", ".join(left) if left else "full report"


def main_report() -> None:
    runs = [("first report (auto)", ()), ("second report (auto)", ()),
            ("--confirm yes (compiles)", ("--confirm", "yes")),
            ("report, all compiled", ())]  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory(prefix="qcnmodel-numba-") as cache:
        with tempfile.TemporaryDirectory(prefix="qcnmodel-report-") as out:
            for name, extra in runs:
                wall, err, load, cpu = _report(cache, out, *extra)
                rows.append((name, extra, wall, err, load, cpu, _parts(out)))
    print("cold start of `qcnmodel report --quiet` (one fresh NUMBA_CACHE_DIR, four runs)")
    for name, extra, wall, _, load, cpu, parts in rows:
        time_s = (f"{wall:7.2f} s  (no target: once per installation)" if extra
                  else _verdict(wall, COLD_TARGET_S))  # fmt: skip
        print(f"  {name:26s} {time_s}  (load {load:.2f}, CPU {cpu:.1f} s; {parts})")
    for name, _, _, err, *_ in rows[:1] + rows[2:3]:
        for ln in err.splitlines():
            if ln.startswith("qcnmodel:"):
                print(f"  stderr of the {name}: {ln}")


def main_families() -> None:
    """The first compiling ``simulate`` of each kernel family, each with its own fresh cache
    (a protocol of another family compiles its own kernel, so each pays this once)."""
    from qcnmodel.sim.kernel.dispatch import WARM_PROTOCOLS

    print("first `qcnmodel simulate --engine kernel` per kernel family (fresh cache each)")
    for family, protocol in WARM_PROTOCOLS.items():
        with tempfile.TemporaryDirectory(prefix="qcnmodel-numba-") as cache:
            load = os.getloadavg()[0]
            cold, _ = _run(cache, extra=("--engine", "kernel", "--protocol", protocol))
        print(f"  {family:13s} ({protocol:9s}) {_verdict(cold, COLD_TARGET_S)}  (load {load:.2f})")


def main() -> None:
    if sys.argv[1:] == ["--report"]:
        return main_report()
    if sys.argv[1:] == ["--families"]:
        return main_families()
    kernel = ("--engine", "kernel")
    with tempfile.TemporaryDirectory(prefix="qcnmodel-numba-") as cache:
        auto, err_a = _run(cache)
        cold, err = _run(cache, extra=kernel)
        warm, _ = _run(cache, extra=kernel)
        as_is = [_first_event(cache, None) for _ in range(PROBES)]
        with tempfile.TemporaryDirectory(prefix="qcnmodel-pyc-") as pyc:
            _run(cache, extra=kernel, pyc=pyc)  # writes the bytecode cache
            cached = [_first_event(cache, pyc) for _ in range(PROBES)]
    notice_a = [ln for ln in err_a.splitlines() if ln.startswith("qcnmodel:")]
    notice = [ln for ln in err.splitlines() if "compiling" in ln]
    entered, first = sorted(cached, key=lambda c: c[1])[PROBES // 2]
    bytecode = os.environ.get("PYTHONDONTWRITEBYTECODE")
    print("cold start of `qcnmodel " + " ".join(ARGS) + "` (fresh NUMBA_CACHE_DIR)")
    print(f"  first run, auto (oracle)    {_verdict(auto, COLD_TARGET_S)}")
    print(f"  first run, kernel compiles  {_verdict(cold, COLD_TARGET_S)}")
    print(f"  second run (cached)         {warm:7.2f} s  (ratio to the compiling run "
          f"{warm / cold:.3f})")  # fmt: skip
    print(
        f"  start to first event, warm  {_verdict(first, FIRST_EVENT_TARGET_S)}  (median of "
        f"{PROBES}; numba's cache and Python's bytecode cache warm, as after `pip install`)"
    )
    print(f"    of which: to the first call of the event loop {entered:.2f} s (imports, "
          f"network), loading the compiled loop {first - entered:.2f} s")  # fmt: skip
    print(f"    all {PROBES}: " + ", ".join(f"{c[1]:.2f}" for c in cached) + " s")
    if bytecode:
        print(
            f"    without a bytecode cache (this environment sets PYTHONDONTWRITEBYTECODE="
            f"{bytecode}: every module compiled from source at each start): "
            + ", ".join(f"{c[1]:.2f}" for c in as_is)
            + " s"
        )
    print(f"  notice on the auto run: {notice_a[0] if notice_a else '(none)'}")
    print(f"  notice on the compiling run: {notice[0] if notice else '(none)'}")


if __name__ == "__main__":
    main()
