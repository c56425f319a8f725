"""Keeping xarray from loading dask where no dask object can exist (private helper).

xarray asks two questions of dask that load much of it, whether or not dask is used:

* is this array a dask array? Every new Variable asks ``isinstance(data, dask.array.Array)``,
  which imports ``dask.array`` (and with it parts of pandas and scipy): 0.5-1.5 s on a 2-core
  machine, in a process that only ever holds numpy arrays;
* before writing a netCDF file, is the active scheduler a ``dask.distributed`` client? That
  imports all of ``distributed``: 0.3-1 s.

Neither answer can be yes in a process that has not loaded ``dask.array`` (or
``distributed``): no such array (or client) exists there. So both answers can be given
without the import, and stay exact:

* :func:`defer_dask_array_check` gives xarray's check a class that is a dask array's type
  once ``dask.array`` is loaded (by anyone) and matches nothing before. The command line
  installs it (:func:`qcnmodel.cli.main`) when xarray is first imported; library users'
  processes are left as they are;
* :func:`without_distributed_probe` hides ``dask.distributed`` from imports while nothing of
  ``distributed`` is loaded (:func:`qcnmodel._netcdf.write_netcdf` writes inside it).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import sys

__all__ = ["defer_dask_array_check", "without_distributed_probe"]

_DISTRIBUTED = ("distributed", "dask.distributed")
_PYCOMPAT = "xarray.namedarray.pycompat"


@contextlib.contextmanager
def without_distributed_probe():
    """Hide ``dask.distributed`` from imports while no part of ``distributed`` is loaded."""
    if any(name in sys.modules for name in _DISTRIBUTED):
        yield
        return
    for name in _DISTRIBUTED:
        sys.modules[name] = None  # an import of it raises ImportError (as if not installed)
    try:
        yield
    finally:
        for name in _DISTRIBUTED:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


class _WhenLoaded(type):
    """Metaclass: instance and subclass checks against ``dask.array.Array`` once loaded."""

    def __instancecheck__(cls, obj) -> bool:
        da = sys.modules.get("dask.array")
        return da is not None and isinstance(obj, da.Array)

    def __subclasscheck__(cls, sub) -> bool:
        da = sys.modules.get("dask.array")
        return da is not None and issubclass(sub, da.Array)


class DaskArrayOnceLoaded(metaclass=_WhenLoaded):
    """Stands for ``dask.array.Array`` in type checks, without importing it."""


class _DaskEntry:
    """xarray's record of the ``dask`` duck-array module, filled in only when read."""

    type = (DaskArrayOnceLoaded,)
    available = True

    @property
    def module(self):
        import dask

        return dask

    @property
    def version(self):
        from packaging.version import Version

        return Version(self.module.__version__)


def _install(pycompat) -> None:
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    if isinstance(cache, dict) and "dask" not in cache:
        cache["dask"] = _DaskEntry()


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs :func:`_install` right after xarray's duck-array module is first imported."""

    def find_spec(self, name, path, target=None):
        if name != _PYCOMPAT:
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _install(module)

        spec.loader.exec_module = exec_module
        return spec


def defer_dask_array_check() -> None:
    """Answer xarray's "is it a dask array?" without importing ``dask.array`` until it is
    loaded: at once if xarray is imported, else when it is (idempotent)."""
    import importlib.util

    if importlib.util.find_spec("dask") is None:
        return  # xarray then finds no dask either, and imports nothing
    if _PYCOMPAT in sys.modules:
        _install(sys.modules[_PYCOMPAT])
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
