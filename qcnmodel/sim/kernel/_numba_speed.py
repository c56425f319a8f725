"""Faster compilation of the event loop: three repeated costs of numba's front end, removed
without changing what it compiles (private helper).

A first compilation of the loop (about 40 s per protocol family) was mostly numba's front end,
repeating work:

* **Inlining copies a scope per block.** numba inlines a function (``inline="always"``) by
  copying its IR block by block, each block with ``copy.deepcopy`` and a fresh memo. Every
  variable refers to the function's scope, which holds every variable, so each block's copy
  copies the whole scope again: B x V variable copies for B blocks and V variables instead of
  V, twice per inlined call. The loop inlines functions that are large after their own
  inlining (the host service: 73 blocks, 1068 variables); this was about a quarter of a
  profiled compilation. :func:`install` copies the blocks of one inlining with one shared memo: the
  scope is copied once and shared by the copies, as in the original IR.
* **An inlined overload is typed again at every pass over the constraints.** The protocol
  family's hooks (:mod:`.dispatch`) are ``overload(..., inline="always")``: numba runs the
  untyped passes and the type inference of the hook's body each time the call is resolved
  (in every round of the caller's type inference), although the result depends only on the
  argument types. :func:`install` keeps the first result per
  argument types and compilation options, for the overloads of this package only.
* **Comparing compilation options is slow.** Every lookup in numba's cache of overload
  implementations hashes and compares the current ``Flags``, building a dict of all ~40
  options through their properties each time (tens of thousands of lookups per compilation,
  most for indexing). :func:`install` reads the stored values directly, with the same
  results (equality of all option values, and a hash of the option names, as numba's).

The compiled code is the same: the assembly of the event loop (and of its initial and final
steps) is identical with and without these changes, but for the numbers numba gives labels
and symbols. Each is installed only if numba has the internals it relies on (checked in
:func:`install`), otherwise numba's own code runs.
"""

from __future__ import annotations

import copy


class _SharedMemoCopy:
    """Stand-in for the :mod:`copy` module during one inlining: ``deepcopy`` of a block without
    a memo uses the inlining's shared memo; everything else is :mod:`copy`'s."""

    def __init__(self, block_type):
        self._block_type = block_type
        self._memo: dict = {}

    def deepcopy(self, x, memo=None):
        if memo is None and isinstance(x, self._block_type):
            memo = self._memo
        return copy.deepcopy(x, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def _install_shared_memo() -> None:
    """Wrap ``InlineWorker.inline_ir``: its block copies share one memo."""
    from numba.core import inline_closurecall as ic
    from numba.core import ir

    orig = ic.InlineWorker.inline_ir
    if getattr(orig, "_qcnmodel", False) or getattr(ic, "copy", None) is not copy:
        return

    def inline_ir(self, *args, **kwargs):
        saved = ic.copy
        ic.copy = _SharedMemoCopy(ir.Block)  # a fresh memo per inlining (calls may nest)
        try:
            return orig(self, *args, **kwargs)
        finally:
            ic.copy = saved

    inline_ir._qcnmodel = True
    inline_ir.__wrapped__ = orig
    ic.InlineWorker.inline_ir = inline_ir


def _install_overload_memo() -> None:
    """Wrap the typing of always-inlined overloads: one typing per argument types and flags,
    for the overloads defined in this package."""
    from numba.core import targetconfig
    from numba.core.typing import templates

    cls = templates._OverloadFunctionTemplate
    orig = cls.generic
    if getattr(orig, "_qcnmodel", False):
        return
    memo: dict = {}

    def generic(self, args, kws):
        func = self._overload_func
        if not (self._inline.is_always_inline
                and getattr(func, "__module__", "").startswith("qcnmodel.")):  # fmt: skip
            return orig(self, args, kws)
        key = (type(self), self.context, tuple(args), tuple(kws.items()),
               targetconfig.ConfigStack.top_or_none())  # fmt: skip
        sig = memo.get(key)
        if sig is None:
            sig = orig(self, args, kws)
            if sig is not None:
                memo[key] = sig
        return sig

    generic._qcnmodel = True
    generic.__wrapped__ = orig
    cls.generic = generic


def _install_fast_flags() -> None:
    """Compare and hash ``TargetConfig`` objects (numba's ``Flags``) from their stored
    values, as numba does, without building the values through properties."""
    from numba.core import targetconfig

    cls = targetconfig.TargetConfig
    if getattr(cls.values, "_qcnmodel", False):
        return

    def values(self):
        """Returns a dict of all the values"""
        v = self._values
        return {k: (v[k] if k in v else o.default) for k, o in self.options.items()}

    def __eq__(self, other):
        if self is other:
            return True
        if isinstance(other, cls):
            return values(self) == values(other)
        return NotImplemented

    def __hash__(self):
        return hash(tuple(sorted(self.options)))  # numba's: the sorted keys of values()

    values._qcnmodel = True
    cls.values, cls.__eq__, cls.__hash__ = values, __eq__, __hash__


def install() -> None:
    """Install the three changes (idempotent); each is skipped if numba lacks its internals."""
    for step in (_install_shared_memo, _install_overload_memo, _install_fast_flags):
        try:
            step()
        except (ImportError, AttributeError):  # pragma: no cover - other numba versions
            pass
