"""The compiled (numba) event kernel: struct-of-arrays state, event heap, traffic, event loop.

Modules: :mod:`.state` (row constants and allocation of every table), :mod:`.heap` (the
event queue), :mod:`.traffic` (lazy traffic generators), :mod:`.dispatch` (the one place that
maps a protocol family to its handlers), :mod:`.loop` (the event loop, :func:`run_compiled`,
:func:`warm_up`), :mod:`._cache` (numba's on-disk cache keyed on all of them) and
:mod:`._numba_speed` (a faster first compilation).

The loop's names are imported lazily, so that importing :mod:`.state` (for its constants)
does not define the compiled loop.
"""

import importlib

from qcnmodel.sim.kernel import _cache, _numba_speed

_cache.install()  # before any kernel module defines a compiled function
_numba_speed.install()  # three repeated costs of numba's front end, removed

__all__ = ["KernelState", "build_state", "run_compiled", "warm_up"]

_LAZY = {
    "KernelState": "qcnmodel.sim.kernel.state",
    "build_state": "qcnmodel.sim.kernel.state",
    "run_compiled": "qcnmodel.sim.kernel.loop",
    "run_until": "qcnmodel.sim.kernel.loop",
    "warm_up": "qcnmodel.sim.kernel.loop",
    "kernel_init": "qcnmodel.sim.kernel.loop",
    "kernel_finish": "qcnmodel.sim.kernel.loop",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'qcnmodel.sim.kernel' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
