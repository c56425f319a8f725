"""The parameters the validation's matched pairs ran: a model is confirmed only there.

The validity domain (:mod:`qcnmodel.validation.domain`) says where, in flows and RTT, the
packets and a model part. This module says which *parameter values* the comparison covered
at all. It reads them off the validation's own plan (:func:`qcnmodel.validation.suite.pair_cases`
for QCN, the DCQCN pairs' parameter set for DCQCN), so the envelope follows the plan when the
plan changes: for each parameter-set field the values the pairs used (a number is covered
between the smallest and the largest of them, a word or switch only as used), and the port
rates (the congestion point's capacity) they ran.

A parameter set outside the envelope is not known to be wrong: the model applies the same
rules there. Its agreement with the packets is simply not measured, and
:func:`untested_note` says so, naming each field and what the pairs covered.
"""

from __future__ import annotations

import dataclasses
import functools
import math

__all__ = ["envelope", "operating_span", "unreached_note", "untested_fields", "untested_note"]

#: the note's finding id
UNTESTED = "untested parameters"
#: the operating-point note's finding id
UNREACHED = "untested operating point"
#: what an untested note says of the model there
_NOT_MEASURED = ("the model applies the same rules there, but its agreement with the packet "
                 "simulator is not measured (`qcnmodel validate`; --confirm puts a verdict "
                 "to packets)")  # fmt: skip


@functools.cache
def envelope(model: str) -> dict[str, tuple]:
    """``field -> ("range", lo, hi)`` for numbers or ``("set", values)`` otherwise, over the
    parameter sets of ``model``'s matched pairs (``"qcn"`` or ``"dcqcn"``), with
    ``"capacity"`` the congestion point's service rates (bit/s). Empty for a model without
    pairs."""
    sets, capacities = _pair_params(model)
    if not sets:
        return {}
    out: dict[str, tuple] = {}
    for f in dataclasses.fields(sets[0]):
        values = [getattr(p, f.name) for p in sets]
        out[f.name] = _span(values)
    out["capacity"] = _span(capacities)
    return out


def _span(values) -> tuple:
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return ("range", float(min(values)), float(max(values)))
    return ("set", tuple(sorted(set(values), key=str)))


def _pair_params(model: str):
    """(parameter sets, capacities) of ``model``'s matched pairs."""
    if model == "qcn":
        from qcnmodel.validation.suite import pair_cases

        cases = [k[0] if isinstance(k, tuple) else k
                 for group in pair_cases(False).values() for k in group]  # fmt: skip
        return [c.params for c in cases], [c.capacity for c in cases]
    if model == "dcqcn":
        from qcnmodel.validation.dcqcn_pairs import OTHER_FIELDS, params_of

        sets = [params_of()] + [params_of(f) for f in OTHER_FIELDS]
        return sets, [p.line_rate for p in sets]
    return [], []


def _covers(span: tuple, value) -> bool:
    if span[0] == "range":
        try:
            v = float(value)
        except (TypeError, ValueError):
            return False
        lo, hi = span[1], span[2]
        return math.isfinite(v) and lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)
    return value in span[1]


def _unit(params, name: str) -> str:
    """The unit of field ``name`` of ``params`` with a leading space; bit/s for the port."""
    from qcnmodel.params._validate import field_unit

    unit = "bit/s" if name == "capacity" else field_unit(params, name)
    return f" {unit}" if unit else ""


def _shown(span: tuple, unit: str = "") -> str:
    if span[0] == "range":
        lo, hi = span[1], span[2]
        return (f"{lo:g}" if lo == hi else f"{lo:g} .. {hi:g}") + unit
    return ", ".join(str(v) for v in span[1])


def untested_fields(model: str, params, capacity: float | None = None) -> list[str]:
    """``"field = value (pairs: covered)"`` for each field of ``params`` (and the port's
    ``capacity``, default the line rate) that ``model``'s matched pairs did not cover."""
    env = envelope(model)
    if not env or params is None:
        return []
    from qcnmodel.params.qcn import QCNParams, ineffective_fields

    out = []
    skip = ineffective_fields(params) if isinstance(params, QCNParams) else frozenset()
    for name, span in env.items():
        if name in skip:
            continue
        if name == "capacity":
            value = getattr(params, "line_rate", None) if capacity is None else capacity
        elif hasattr(params, name):
            value = getattr(params, name)
        else:
            continue
        if value is not None and not _covers(span, value):
            unit = _unit(params, name) if span[0] == "range" else ""
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            shown = f"{value:g}{unit}" if number else str(value)
            out.append(f"{name} = {shown} (pairs: {_shown(span, unit)})")
    return out


def untested_note(model: str, params, capacity: float | None = None):
    """A :class:`~qcnmodel.validation.domain.ValidityNote` naming the fields of ``params``
    outside ``model``'s matched pairs, or None when every field is inside them."""
    from qcnmodel.validation.domain import ValidityNote

    fields = untested_fields(model, params, capacity)
    if not fields:
        return None
    return ValidityNote(
        UNTESTED,
        "the parameter set",
        "the validation's matched pairs never ran " + "; ".join(fields),
        _NOT_MEASURED,
        True,
    )


def operating_span(model: str) -> dict[str, tuple] | None:
    """``{"n_flows": span, "rtt": span}`` (spans as :func:`envelope`'s, ``("range", lo,
    hi)``, RTT in s): the flows and loop delays ``model``'s matched pairs ran, where they
    form one grid (DCQCN: N = 2-64, 25-100 us); None where the pairs' points are scattered
    over the plane (QCN: the validity domain's regions say where they part from the
    packets)."""
    if model != "dcqcn":
        return None
    from qcnmodel.validation.dcqcn_pairs import BOUNDARY_NS, TAUS

    return {"n_flows": _span(BOUNDARY_NS), "rtt": _span(TAUS)}


def unreached_note(model: str, n_range, rtt_range):
    """A :class:`~qcnmodel.validation.domain.ValidityNote` naming the parts of the checked
    ranges (flows, RTT in s; inclusive) outside :func:`operating_span`, or None."""
    from qcnmodel.validation.domain import ValidityNote

    span = operating_span(model)
    if span is None:
        return None
    parts = []
    for name, rng, label, scale, unit in (("n_flows", n_range, "N = ", 1.0, ""),
                                          ("rtt", rtt_range, "RTT ", 1e6, " us")):  # fmt: skip
        _, lo, hi = span[name]
        if not all(_covers(span[name], v) for v in rng):
            checked = _shown(("range", float(rng[0]) * scale, float(rng[1]) * scale), unit)
            pairs = _shown(("range", lo * scale, hi * scale), unit)
            parts.append(f"{label}{checked} (pairs: {pairs})")
    if not parts:
        return None
    effect = "the validation's matched pairs never ran " + "; ".join(parts)
    if model == "dcqcn" and parts[-1].startswith("RTT"):  # the verdict reaches further
        from qcnmodel.validation.dcqcn_critical import LONG_TAUS

        effect += (f"; past them only the critical RTT (the verdict) is compared with packets,"
                   f" on delays up to {max(LONG_TAUS) * 1e6:g} us (at N = 2-6, whose packets "
                   "first cycle beyond 100 us)")  # fmt: skip
    return ValidityNote(UNREACHED, "the operating point", effect, _NOT_MEASURED, True)
