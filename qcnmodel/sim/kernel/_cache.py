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
hook is missing, numba's default caching is used. A user-provided ``NUMBA_CACHE_DIR`` is
honoured (numba's own first locator, with the same stamp).

A damaged cache entry (a truncated or garbage ``.nbi`` index or ``.nbc`` data file) would make
every load raise until the cache is deleted by hand. :func:`install` also wraps numba's
``Cache.load_overload`` for the compiled functions of :mod:`qcnmodel`: a load that raises
deletes that function's index and data files, prints one line on stderr (once per process)
and returns "not cached", so numba compiles the function again and saves a fresh entry.
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys

_SIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PKG = os.path.dirname(_SIM)  #: the qcnmodel package directory
_STAMP: list[bytes] = []
_WARNED: list[bool] = []


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
    """Put the dependency-aware locators first in numba's locator list and guard cache
    loads against damaged entries (idempotent)."""
    try:
        from numba.core import caching

        base_classes = (
            caching.UserProvidedCacheLocator,
            caching.InTreeCacheLocator,
            caching.UserWideCacheLocator,
        )
        impl = caching.CacheImpl
    except (ImportError, AttributeError):  # pragma: no cover - other numba versions
        return
    _guard_loads(caching.Cache)
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


def _is_ours(cache) -> bool:
    """True if ``cache`` (a numba ``Cache``) belongs to a function of the qcnmodel package."""
    code = getattr(getattr(cache, "_py_func", None), "__code__", None)
    path = os.path.abspath(code.co_filename) if code is not None else ""
    return path.startswith(_PKG + os.sep)


def drop_entry(cache) -> list[str]:
    """Delete the index and data files of one numba ``Cache``; returns the paths removed."""
    cf = cache._cache_file
    base = cf._index_name[: -len(".nbi")]
    paths = [cf._index_path] + glob.glob(os.path.join(glob.escape(cf._cache_path), base + ".*.nbc"))
    removed = []
    for path in paths:
        try:
            os.remove(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def _guard_loads(cache_cls) -> None:
    """Wrap ``cache_cls.load_overload``: a damaged entry of ours is deleted and recompiled."""
    orig = cache_cls.load_overload
    if getattr(orig, "_qcnmodel_guard", False):
        return

    def load_overload(self, sig, target_context):
        try:
            return orig(self, sig, target_context)
        except Exception as exc:  # unpickling a truncated / garbage .nbi or .nbc file
            if not _is_ours(self):
                raise
            drop_entry(self)
            if not _WARNED:
                _WARNED.append(True)
                print(
                    f"qcnmodel: damaged numba cache entry in {self._cache_path} "
                    f"({type(exc).__name__}); deleted it and recompiling",
                    file=sys.stderr,
                )
            return None

    load_overload._qcnmodel_guard = True
    cache_cls.load_overload = load_overload
