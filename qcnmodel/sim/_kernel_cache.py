"""numba on-disk cache keyed on the kernel *and its dependencies* (private helper).

numba invalidates a cached function when its own source file changes, but the event loop in
``kernel.py`` inlines functions from ``kernel_heap.py``, ``kernel_traffic.py``,
``kernel_proto.py``, the rule modules and ``rng.py`` and reads constants from
``kernel_state.py``: an edit there would otherwise leave a stale compiled kernel in the cache.
:func:`install` registers cache locators (numba's own in-tree and user-wide locators) whose
source stamp is a hash of all these files, for the functions defined in ``kernel.py`` only. It
relies on numba's cache-locator hook (``CacheImpl._locator_classes``); if that hook is missing,
numba's default caching is used.
"""

from __future__ import annotations

import hashlib
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_DEPS = ("kernel.py", "kernel_heap.py", "kernel_state.py", "kernel_traffic.py", "rules.py",
         "rng.py", "kernel_proto.py", "rules_variants.py", "rules_ecm.py", "rules_dcqcn.py",
         "probes.py")  # fmt: skip
_STAMP: list[bytes] = []


def deps_stamp() -> bytes:
    """SHA-256 of the kernel's source files (computed once per process)."""
    if not _STAMP:
        h = hashlib.sha256()
        for name in _DEPS:
            with open(os.path.join(_HERE, name), "rb") as f:
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
    for pos, base in enumerate(base_classes):
        name = "Kernel" + base.__name__
        if any(c.__name__ == name for c in impl._locator_classes):
            continue

        def from_function(cls, py_func, py_file, _base=base):
            if os.path.abspath(py_file) != os.path.join(_HERE, "kernel.py"):
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
