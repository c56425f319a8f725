"""Borrowed array views for compiled loops: the same data without reference counting.

numba keeps a reference count on every array it holds and updates it, with an atomic
operation, whenever a compiled function passes an array to a helper, takes a view of it
(``table[row]``), or carries it around a loop in which it may be rebound. In a loop that runs
once per event or per step and flow, those updates can cost more than the arithmetic (most of
the time of the simulator's event loop and of the fluid models' cohort integrator, measured
with ``perf``). A *borrowed* view has no owner: numba skips the update for it. The caller
keeps the real array alive for as long as the view is used (a function that borrows its own
arguments is safe: its caller holds them).
"""

from __future__ import annotations

from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["borrow"]


@intrinsic
def borrow(typingctx, arr):
    """A view of ``arr`` without reference counting (NULL meminfo and parent)."""

    def codegen(context, builder, signature, args):
        src = context.make_array(arr)(context, builder, value=args[0])
        dst = context.make_array(arr)(context, builder)
        for name in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(dst, name, getattr(src, name))
        dst.meminfo = cgutils.get_null_value(dst.meminfo.type)
        dst.parent = cgutils.get_null_value(dst.parent.type)
        return dst._getvalue()

    return arr(arr), codegen
