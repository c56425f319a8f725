"""Where a cold start's time goes: numba compilations of one ``qcnmodel`` command.

Runs ``qcnmodel ARGS`` in this process with a fresh, empty ``NUMBA_CACHE_DIR`` (set before
numba is imported, as after ``pip install``) and records numba's compile events. Prints the
wall time of the command, the total time spent compiling, and each top-level compilation
(a function compiled from Python, its callees included) with its time and signature, the
longest first. Loading a function from the cache is not a compilation and is not listed.

Compilations in processes forked by the command (``qcnmodel report`` compiles the simulator
in a forked process while it analyses the model) are recorded too, marked with their
process; their times overlap the parent's, so the total can exceed the wall time.

Usage: ``python benchmarks/compile_profile.py simulate --scenario og-hotspot --duration 1ms
--engine kernel`` (``--keep-cache DIR`` reuses DIR instead of a fresh one, e.g. to time a warm
start). Without ``--engine kernel`` a run this short on a fresh cache runs on the pure-Python
twin and compiles nothing. With a fresh cache the wall time is also given against the
first-run target, 20 s.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

#: a first ``qcnmodel`` command after installation should finish within this (s)
COLD_TARGET_S = 20.0


def main(argv: list[str]) -> int:
    cache = None
    if argv[:1] == ["--keep-cache"]:
        cache, argv = argv[1], argv[2:]
    tmp = None
    if cache is None:
        tmp = tempfile.TemporaryDirectory(prefix="qcnmodel-numba-")
        cache = tmp.name
    os.environ["NUMBA_CACHE_DIR"] = cache
    os.environ.setdefault("MPLBACKEND", "Agg")
    t0 = time.perf_counter()
    from numba.core import event

    from qcnmodel.cli import main as cli_main

    log = tempfile.NamedTemporaryFile("w+", prefix="qcnmodel-compiles-", suffix=".txt")
    parent = os.getpid()
    stack: list[float] = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append(time.perf_counter())

        def on_end(self, ev):
            start = stack.pop()
            if not stack:  # a top-level compilation: one line, appended (forked processes too)
                d = ev.data.get("dispatcher")
                name = getattr(getattr(d, "py_func", None), "__qualname__", str(d))
                mod = getattr(getattr(d, "py_func", None), "__module__", "")
                who = "" if os.getpid() == parent else f"[forked {os.getpid()}] "
                what = f"{who}{mod}.{name}{ev.data.get('args')}".replace("\t", " ")
                with open(log.name, "a") as f:
                    f.write(f"{time.perf_counter() - start:.4f}\t{what[:160]}\n")

    with event.install_listener("numba:compile", Listener()):
        rc = cli_main(argv)
    wall = time.perf_counter() - t0
    tops = [(float(t), w) for t, w in (ln.rstrip("\n").split("\t", 1) for ln in open(log.name))]
    log.close()
    total = sum(t for t, _ in tops)
    print(f"\n=== qcnmodel {' '.join(argv)}: wall {wall:.2f} s, compiling {total:.2f} s "
          f"({len(tops)} top-level compilations; cache {cache})", file=sys.stderr)  # fmt: skip
    if tmp is not None:  # a fresh cache: the first run after installation
        verdict = "met" if wall <= COLD_TARGET_S else "NOT met"
        print(f"  first run: target <= {COLD_TARGET_S:g} s, ratio {wall / COLD_TARGET_S:.2f}, "
              f"{verdict}", file=sys.stderr)  # fmt: skip
    for t, what in sorted(tops, reverse=True):
        print(f"  {t:7.2f} s  {what}", file=sys.stderr)
    if tmp is not None:
        tmp.cleanup()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
