"""numba on-disk cache keyed on the kernel *and its dependencies* (private helper).

numba invalidates a cached function when its own source file changes, but the compiled
functions of the simulator inline or call functions of other files: the event loop inlines
the heap, the traffic generators, the family adapters and the protocol rules, the rules call
one another and :mod:`qcnmodel.sim.rng`, and all read constants of :mod:`.state`. An edit
there would otherwise leave a stale compiled function in the cache. :func:`install`
registers cache locators (numba's own in-tree and user-wide locators) whose source stamp is a
hash of all these files, for the functions defined in them; the packages :mod:`.kernel` and
:mod:`qcnmodel.sim.protocols` call it before any of their modules defines a compiled
function. It relies on numba's cache-locator hook (``CacheImpl._locator_classes``); if that
hook is missing, numba's default caching is used.
"""

from __future__ import annotations

import glob
import hashlib
import os

_SIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STAMP: list[bytes] = []


def deps() -> list[str]:
    """The source files of the compiled simulator: every module of :mod:`qcnmodel.sim.kernel`
    (its adapters are plain Python compiled into the loop) and of
    :mod:`qcnmodel.sim.protocols` (the layouts' constants are compiled in), and
    :mod:`qcnmodel.sim.rng` (sorted absolute paths)."""
    files = glob.glob(os.path.join(_SIM, "kernel", "**", "*.py"), recursive=True)
    files += glob.glob(os.path.join(_SIM, "protocols", "*.py"))
    files.append(os.path.join(_SIM, "rng.py"))
    return sorted(os.path.abspath(f) for f in files)


def deps_stamp() -> bytes:
    """SHA-256 of the compiled simulator's source files (computed once per process)."""
    if not _STAMP:
        h = hashlib.sha256()
        for path in deps():
            h.update(os.path.relpath(path, _SIM).encode())
            with open(path, "rb") as f:
                h.update(f.read())
        _STAMP.append(h.digest())
    return _STAMP[0]


def install() -> None:
    """Put the dependency-aware locators first in numba's locator list (idempotent)."""
    try:
        from numba.core import caching

        base_classes = (caching.InTreeCacheLocator, caching.UserWideCacheLocator)
        impl = caching.CacheImpl
    except (ImportError, AttributeError):  # pragma: no cover - other numba versions
        return
    ours = set(deps())
    for pos, base in enumerate(base_classes):
        name = "Kernel" + base.__name__
        if any(c.__name__ == name for c in impl._locator_classes):
            continue

        def from_function(cls, py_func, py_file, _base=base):
            if os.path.abspath(py_file) not in ours:
                return None
            return _base.from_function.__func__(cls, py_func, py_file)

        cls = type(
            name,
            (base,),
            {
                "get_source_stamp": lambda self: deps_stamp(),
                "from_function": classmethod(from_function),
                "__module__": __name__,
            },
        )
        impl._locator_classes.insert(pos, cls)
