"""Keeping numba's start-up from loading SciPy's linear algebra (private helper).

When numba first compiles or loads a compiled function from its cache, it imports its array
library, :mod:`numba.np.arraymath`. That module asks at import whether a BLAS is available, by
importing ``scipy.linalg.cython_blas`` (``numba.np.arraymath._check_blas``). The import loads
all of ``scipy.linalg`` and SciPy's array-API layer with it: 0.2-0.3 s of a 2-core machine, in
a ``qcnmodel simulate`` whose kernels use no linear algebra and never load SciPy otherwise.

SciPy is a dependency of the package, so the answer is known: ``scipy.linalg.cython_blas`` is
importable. :func:`defer_blas_probe` lets numba's array library be imported with a stand-in
module under that name, for the duration of that one import only, so that its check succeeds
as it would with the real module. numba's check of the LAPACK integer width, which reads
``scipy.__config__``, still runs. numba imports the real module again (``ensure_blas``) when
it compiles a function that calls BLAS, after the stand-in is gone. Like
:func:`qcnmodel._dask_probes.defer_dask_array_check`, it is installed by the command line
(:func:`qcnmodel.cli.main`) only; library users' processes are left as they are.
"""

from __future__ import annotations

import importlib.abc
import sys
import types

__all__ = ["defer_blas_probe"]

_ARRAYMATH = "numba.np.arraymath"
_BLAS = "scipy.linalg.cython_blas"


class _BlasStandIn(importlib.abc.MetaPathFinder):
    """Puts a stand-in ``scipy.linalg.cython_blas`` in place while numba's array library is
    imported, and removes it right after (one-shot)."""

    def find_spec(self, name, path, target=None):
        if name != _ARRAYMATH:
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or _BLAS in sys.modules:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            stand_in = types.ModuleType(_BLAS, "Stand-in while numba's array library loads.")
            sys.modules[_BLAS] = stand_in
            try:
                run(module)
            finally:
                if sys.modules.get(_BLAS) is stand_in:
                    del sys.modules[_BLAS]

        spec.loader.exec_module = exec_module
        return spec


def defer_blas_probe() -> None:
    """Let numba's array library load without importing ``scipy.linalg`` (idempotent; nothing
    to do once that library or SciPy's BLAS module is loaded, or without SciPy)."""
    import importlib.util

    if _ARRAYMATH in sys.modules or _BLAS in sys.modules:
        return
    if importlib.util.find_spec("scipy") is None:
        return  # numba's own check then fails as it would (no BLAS)
    if not any(isinstance(f, _BlasStandIn) for f in sys.meta_path):
        sys.meta_path.insert(0, _BlasStandIn())
