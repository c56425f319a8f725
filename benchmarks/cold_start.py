"""Cold start of the packet simulator: the first ``qcnmodel simulate`` on a fresh install.

Runs ``qcnmodel simulate --scenario og-hotspot --duration 1ms`` three times in subprocesses,
all with one fresh, empty ``NUMBA_CACHE_DIR`` (nothing compiled, as after ``pip install``):

1. cold: compiles the kernel (the notice line on stderr says so) and runs;
2. warm: loads the kernel from the cache;
3. warm again, measuring the time from the process start to the first event (the start of
   the compiled event loop).

Targets: cold <= 20 s, time to first event with a warm cache <= 0.5 s. Each figure is printed
with its target and whether it is met. Usage: ``python benchmarks/cold_start.py``.
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


def _run(cache: str, probe: bool = False) -> tuple[float, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    env["T0"] = repr(time.time())
    cmd = [sys.executable, "-c", PROBE, *ARGS] if probe else [sys.executable, "-m", "qcnmodel",
                                                              *ARGS]  # fmt: skip
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, r.stderr


def _verdict(value: float, target: float) -> str:
    return f"{value:7.2f} s  target <= {target:g} s  ratio {value / target:5.2f}  " + (
        "met" if value <= target else "NOT met"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="qcnmodel-numba-") as cache:
        cold, err = _run(cache)
        notice = [ln for ln in err.splitlines() if "compiling" in ln]
        warm, _ = _run(cache)
        _, err = _run(cache, probe=True)
    first = float(next(ln.split()[1] for ln in err.splitlines() if ln.startswith("FIRST_EVENT")))
    print("cold start of `qcnmodel " + " ".join(ARGS) + "` (fresh NUMBA_CACHE_DIR)")
    print(f"  first run (compiles)        {_verdict(cold, COLD_TARGET_S)}")
    print(f"  second run (cached)         {warm:7.2f} s  (ratio to the first {warm / cold:.3f})")
    print(f"  start to first event, warm  {_verdict(first, FIRST_EVENT_TARGET_S)}")
    print(f"  notice on the first run: {notice[0] if notice else '(none)'}")


if __name__ == "__main__":
    main()
