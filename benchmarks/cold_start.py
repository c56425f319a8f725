"""Cold start of the packet simulator: the first ``qcnmodel simulate`` on a fresh install.

Runs ``qcnmodel simulate --scenario og-hotspot --duration 1ms`` four times in subprocesses,
all with one fresh, empty ``NUMBA_CACHE_DIR`` (nothing compiled, as after ``pip install``):

1. cold, default engine (``auto``): a run this short takes the pure-Python twin instead of
   compiling (same results; the notice line on stderr says so);
2. cold, ``--engine kernel``: compiles the kernel (the notice line says so) and runs: what a
   longer first run pays;
3. warm: loads the kernel from the cache;
4. warm again, measuring the time from the process start to the first event (the start of
   the compiled event loop).

Targets: a first run <= 20 s, time to first event with a warm cache <= 0.5 s. Each figure is
printed with its target and whether it is met. Usage: ``python benchmarks/cold_start.py``
(``benchmarks/compile_profile.py`` lists what compiles and for how long).

``--report`` measures the first ``qcnmodel report`` instead (target <= 20 s as well): cold
(a fresh cache: the fluid model's kernels compile, the simulator in the background while the
model is analysed) and warm (the same cache again), with the notice line and the load
average before each run (the machine may be shared; the report's parallel parts use the
cores actually free).
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

#: run the CLI, printing the time from ``T0`` (the parent's clock before the launch) to the
#: first call of the event loop
PROBE = """
import os, sys, time
import qcnmodel.sim.kernel.loop as loop
_run = loop.run_compiled
def run_compiled(*a, **k):
    print(f"FIRST_EVENT {time.time() - float(os.environ['T0']):.4f}", file=sys.stderr)
    return _run(*a, **k)
loop.run_compiled = run_compiled
from qcnmodel.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(cache: str, probe: bool = False, extra: tuple = ()) -> tuple[float, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    env["T0"] = repr(time.time())
    args = [*ARGS, *extra]
    cmd = [sys.executable, "-c", PROBE, *args] if probe else [sys.executable, "-m", "qcnmodel",
                                                              *args]  # fmt: skip
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, r.stderr


def _verdict(value: float, target: float) -> str:
    return f"{value:7.2f} s  target <= {target:g} s  ratio {value / target:5.2f}  " + (
        "met" if value <= target else "NOT met"
    )


def _report(cache: str, out: str) -> tuple[float, str, float, float]:
    """Wall time, stderr, load average before, CPU seconds (the report and its forks)."""
    import resource

    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    load = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "qcnmodel", "report", "--quiet", "--out", out],
                       env=env, capture_output=True, text=True, check=True)  # fmt: skip
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime
    return wall, r.stderr, load, cpu


def main_report() -> None:
    with tempfile.TemporaryDirectory(prefix="qcnmodel-numba-") as cache:
        with tempfile.TemporaryDirectory(prefix="qcnmodel-report-") as out:
            cold, err, load_c, cpu_c = _report(cache, out)
            warm, _, load_w, cpu_w = _report(cache, out)
    notice = [ln for ln in err.splitlines() if ln.startswith("qcnmodel:")]
    print("cold start of `qcnmodel report --quiet` (fresh NUMBA_CACHE_DIR)")
    print(f"  first report (compiles)  {_verdict(cold, COLD_TARGET_S)}  (load {load_c:.2f}, "
          f"CPU {cpu_c:.1f} s)")  # fmt: skip
    print(f"  second report (cached)   {_verdict(warm, COLD_TARGET_S)}  (load {load_w:.2f}, "
          f"CPU {cpu_w:.1f} s)")  # fmt: skip
    print(f"  notice on the first report: {notice[0] if notice else '(none)'}")


def main() -> None:
    if sys.argv[1:] == ["--report"]:
        return main_report()
    kernel = ("--engine", "kernel")
    with tempfile.TemporaryDirectory(prefix="qcnmodel-numba-") as cache:
        auto, err_a = _run(cache)
        cold, err = _run(cache, extra=kernel)
        warm, _ = _run(cache, extra=kernel)
        _, err_p = _run(cache, probe=True, extra=kernel)
    notice_a = [ln for ln in err_a.splitlines() if ln.startswith("qcnmodel:")]
    notice = [ln for ln in err.splitlines() if "compiling" in ln]
    first = float(next(ln.split()[1] for ln in err_p.splitlines() if ln.startswith("FIRST_EVENT")))
    print("cold start of `qcnmodel " + " ".join(ARGS) + "` (fresh NUMBA_CACHE_DIR)")
    print(f"  first run, auto (oracle)    {_verdict(auto, COLD_TARGET_S)}")
    print(f"  first run, kernel compiles  {_verdict(cold, COLD_TARGET_S)}")
    print(f"  second run (cached)         {warm:7.2f} s  (ratio to the compiling run "
          f"{warm / cold:.3f})")  # fmt: skip
    print(f"  start to first event, warm  {_verdict(first, FIRST_EVENT_TARGET_S)}")
    print(f"  notice on the auto run: {notice_a[0] if notice_a else '(none)'}")
    print(f"  notice on the compiling run: {notice[0] if notice else '(none)'}")


if __name__ == "__main__":
    main()
