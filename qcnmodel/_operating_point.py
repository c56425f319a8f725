"""Shared pieces of the loop models: the operating-point checks and ``replace()`` routing.

Every model (FOPDT, QCN/ECM/DCQCN fluid) is a frozen dataclass with a ``params`` field and
operating-point fields (``rtt``, ``n_flows``, and for some ``capacity`` and ``ps``). These
helpers validate those fields (unit strings accepted, errors naming the field and its range)
and route ``replace(**changes)`` between the model's own fields and ``params.replace``.
"""

from __future__ import annotations

import dataclasses
import math

from qcnmodel.units import parse_number, parse_rate, parse_time

__all__ = ["check_operating_point", "replace_model"]


def check_operating_point(model, capacity: bool = False, ps: bool = False) -> None:
    """Validate and normalise ``model.rtt``, ``model.n_flows`` (and ``capacity``, ``ps``).

    ``rtt`` must be in (0, inf) s, ``n_flows`` a whole number >= 1, ``capacity`` (when not
    None) in (0, inf) bit/s and ``ps`` (when not None) in (0, 1]. Values are parsed with the
    unit parsers and written back on the frozen dataclass.
    """
    rtt = parse_time(model.rtt, "rtt")
    if not (rtt > 0 and math.isfinite(rtt)):
        raise ValueError(f"rtt: must be in (0, inf) s, got {model.rtt!r}")
    object.__setattr__(model, "rtt", rtt)
    n = model.n_flows
    if isinstance(n, bool) or not float(n).is_integer() or n < 1:
        raise ValueError(f"n_flows: must be an integer >= 1, got {n!r}")
    object.__setattr__(model, "n_flows", int(n))
    if capacity and model.capacity is not None:
        cap = parse_rate(model.capacity, "capacity")
        if not (cap > 0 and math.isfinite(cap)):
            raise ValueError(f"capacity: must be in (0, inf) bit/s, got {model.capacity!r}")
        object.__setattr__(model, "capacity", cap)
    if ps and model.ps is not None:
        p = parse_number(model.ps, "ps")
        if not (0 < p <= 1):
            raise ValueError(f"ps: must be in (0, 1], got {model.ps!r}")
        object.__setattr__(model, "ps", float(p))


def replace_model(model, changes: dict):
    """A copy of ``model``: its own fields directly, any other name via ``params.replace``."""
    own = {f.name for f in dataclasses.fields(model)}
    mine = {k: v for k, v in changes.items() if k in own}
    other = {k: v for k, v in changes.items() if k not in own}
    if other:
        mine["params"] = mine.get("params", model.params).replace(**other)
    return dataclasses.replace(model, **mine)
