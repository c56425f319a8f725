"""numba's BLAS check at start-up answered without importing scipy.linalg
(qcnmodel._numba_probes).

Each check runs in a fresh interpreter, since what matters is which modules a process loads.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_numba_loads_its_array_library_without_scipy_linalg_and_knows_blas():
    out = _run(
        """
        import sys
        from qcnmodel._numba_probes import defer_blas_probe
        defer_blas_probe()
        import numba.np.arraymath as am
        print("scipy.linalg" in sys.modules, "scipy.linalg.cython_blas" in sys.modules,
              am._HAVE_BLAS)
        """
    )
    assert out == ["False", "False", "True"]


def test_blas_functions_compile_after_the_stand_in_is_gone():
    # np.dot in a compiled function needs the real scipy.linalg.cython_blas (numba's
    # ensure_blas at compile time): the stand-in must not be what it finds
    out = _run(
        """
        import sys
        import numpy as np
        from qcnmodel._numba_probes import defer_blas_probe
        defer_blas_probe()
        import numba
        @numba.njit
        def f(a, b):
            return np.dot(a, b)
        a = np.arange(6.0).reshape(2, 3)
        print(np.array_equal(f(a, a.T), a @ a.T), hasattr(sys.modules[
              "scipy.linalg.cython_blas"], "__pyx_capi__"))
        """
    )
    assert out == ["True", "True"]


def test_the_command_line_reaches_the_event_loop_without_scipy_linalg():
    out = _run(
        """
        import contextlib, io, sys
        import qcnmodel.sim.kernel.loop as loop
        seen = []
        run = loop.run_compiled
        def spy(*a, **k):
            seen.append("scipy.linalg" in sys.modules)
            return run(*a, **k)
        loop.run_compiled = spy
        from qcnmodel import cli
        sys.argv = ["qcnmodel", "simulate", "--scenario", "og-hotspot", "--duration", "1ms",
                    "--bin", "1ms", "--json", "--engine", "kernel"]
        with contextlib.redirect_stdout(io.StringIO()):
            rc = cli.main()
        print(rc, seen[-1], "scipy.linalg.cython_blas" in sys.modules)
        """
    )
    assert out == ["0", "False", "False"]
