"""Error messages shared across the package: an unknown name, with the closest valid one.

Every "unknown key / field / scenario / protocol" message of qcnmodel is built here, so
that they all read the same way: ``"<what>: unknown <kind> 'x'; did you mean 'y'?
(allowed: a, b, c)"``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "unknown_name"]


def did_you_mean(name, allowed: Iterable) -> str:
    """``"; did you mean 'y'?"`` for the closest name in ``allowed`` (a name differing only
    in case first: ``'.NC'`` -> ``'.nc'``), or ``""``."""
    names = [str(a) for a in allowed]
    same = [a for a in names if a.lower() == str(name).lower() and a != str(name)]
    close = same or difflib.get_close_matches(str(name), names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown_name(
    field: str, kind: str, name, allowed: Iterable, listed: bool = True, sort: bool = True
) -> ValueError:
    """A ValueError for an unknown ``name``: ``"<field>: unknown <kind> 'name'; did you mean
    ...? (allowed: ...)"``. ``listed=False`` leaves out the list of allowed names."""
    allowed = list(allowed)
    msg = f"{field}: unknown {kind} {name!r}{did_you_mean(name, allowed)}"
    if listed:
        names = sorted(map(str, allowed)) if sort else [str(a) for a in allowed]
        msg += f" (allowed: {', '.join(names)})"
    return ValueError(msg)
