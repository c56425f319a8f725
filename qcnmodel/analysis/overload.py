"""The largest flow count a loop model holds: where its operating point ceases to exist.

A congestion-control loop holds N flows when its feedback can bring each one to the fair
share C/N: the model then has an operating point (a fixed point that the loop is
linearised about). Past some N it has none: even the strongest feedback the protocol can
send leaves the flows above C/N (in QCN: full-scale Fb on every sample against the reaction
points' timer- and byte-counter-driven increases and their rate floor), and the congested
port's queue grows until frames are dropped or paused. :func:`held_flows` finds that N by
bisection.

Like the rest of this layer it is protocol-free: a model is anything with
``replace(n_flows=...)`` and either ``fixed_point()`` or ``loop().margins()``, which raise a
``ValueError`` where no operating point exists.
"""

from __future__ import annotations

__all__ = ["has_operating_point", "held_flows"]


def has_operating_point(model) -> bool:
    """True when ``model`` has an operating point (its ``fixed_point()``, else its loop's
    margins, is computed without a ``ValueError``)."""
    try:
        fixed_point = getattr(model, "fixed_point", None)
        if callable(fixed_point):
            fixed_point()
        else:
            model.loop().margins()
    except ValueError:
        return False
    return True


def _whole(name: str, value) -> int:
    """``value`` as a whole number >= 1, else a ``ValueError`` naming ``name``."""
    try:
        ok = not isinstance(value, bool) and int(value) == value and value >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name}: need a whole number >= 1, got {value!r}")
    return int(value)


def held_flows(model, n_max: int, n_min: int = 1) -> int:
    """The largest flow count in ``1 .. n_max`` at which ``model`` has an operating point.

    Parameters
    ----------
    model : loop model
        Any flow count; ``model.replace(n_flows=N)`` gives the model at N.
    n_max : int
        Upper end of the search (e.g. for QCN the floor's count C / MinRate, from which
        the flows at their rate floor alone fill the port).
    n_min : int, optional
        A flow count already known to be held (default 1, which is then tested): the
        bisection starts there, which saves the fixed points below it.

    Returns
    -------
    int
        ``n_max`` when the model holds it, 0 when it holds not even one flow; else the N
        below which it holds and from which (N + 1) it does not, found by bisection, which
        assumes that a model that holds N flows holds fewer.
    """
    from qcnmodel.analysis._args import require

    require(model, "model", ("replace", "n_flows"), "a loop model (with replace(n_flows=...))")
    n_max = _whole("n_max", n_max)
    n_min = _whole("n_min", n_min)
    if n_min > n_max:
        raise ValueError(f"n_min: need at most n_max = {n_max}, got {n_min}")

    def holds(n: int) -> bool:
        return has_operating_point(model.replace(n_flows=n))

    if holds(n_max):
        return n_max
    if n_min == 1 and not holds(1):
        return 0
    lo, hi = n_min, n_max  # lo holds, hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    return lo
