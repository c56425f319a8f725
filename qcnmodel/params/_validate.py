"""The one field validator of the parameter classes.

Every parameter class of :mod:`qcnmodel.params` is a frozen dataclass that declares its
numeric fields in a table ``name -> (parser, low, high, low_open, high_open, unit,
description)`` and calls :func:`validate` in ``__post_init__``: each value is parsed with its
unit parser (unit strings accepted), checked against its range (NaN is never in range) and
written back; booleans accept ``true/false/on/off/yes/no/1/0``; choice fields must be one of
their allowed strings. A bad value raises :class:`ValueError` whose message starts with the
field name and states the allowed range. Nothing is clamped.

:class:`Replaceable` gives the classes ``replace(**changes)`` with the same rules, rejecting
an unknown field name with the closest valid one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping

import numpy as np

from qcnmodel._errors import unknown_name

__all__ = [
    "MAX_RATE",
    "MAX_SIZE",
    "MAX_TIME",
    "Replaceable",
    "changed_fields",
    "check_choice",
    "check_field_names",
    "field_unit",
    "parse_bool",
    "range_text",
    "time_fields",
    "validate",
]

#: the largest rate (bit/s: 10 Tb/s, the command line's ``cli.max_rate``), size (B: 1 TB)
#: and time (s: the command line's ``cli.max_time``) a parameter takes: beyond, the models'
#: arithmetic overflows (a line rate of 1e300 bit/s gave "Numerical result out of range")
MAX_RATE, MAX_SIZE, MAX_TIME = 1e13, 1e12, 1e4

#: class -> names of its fields parsed as times (seconds), recorded by :func:`validate`
_TIME_FIELDS: dict[type, set[str]] = {}


def time_fields(obj) -> tuple[str, ...]:
    """The fields of parameter object ``obj`` that hold times in seconds (those
    :func:`validate` parses with :func:`qcnmodel.units.parse_time`), sorted."""
    return tuple(sorted(_TIME_FIELDS.get(type(obj), ())))


_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


def _numeric_table(params) -> dict:
    """The ``_NUMERIC`` table (field -> parser, bounds, unit, description) of the module that
    defines ``params``' class; empty for a class without one."""
    import sys

    return getattr(sys.modules.get(type(params).__module__), "_NUMERIC", {})


def field_unit(params, name: str) -> str:
    """The unit of numeric field ``name`` of ``params`` ("" when it has none or is unknown)."""
    spec = _numeric_table(params).get(name)
    return spec[-2] if spec and len(spec) >= 2 and isinstance(spec[-2], str) else ""


def changed_fields(params, limit: int | None = None) -> dict[str, str]:
    """``name -> "name = value unit"`` for each numeric field of ``params`` that differs
    from its class's defaults, the first ``limit`` of them: the parameters to name when a
    model has no answer."""
    try:
        ref = type(params)()
    except (TypeError, ValueError):
        return {}
    out = {}
    for name in _numeric_table(params):
        value, default = getattr(params, name, None), getattr(ref, name, None)
        if value is None or value == default:
            continue
        unit = field_unit(params, name)
        shown = f"{value:g}" if isinstance(value, (int, float)) else str(value)
        out[name] = f"{name} = {shown}" + (f" {unit}" if unit else "")
        if limit is not None and len(out) >= limit:
            break
    return out


def parse_bool(value, field: str) -> bool:
    """``value`` as a bool: bools, 0/1 and the strings true/false, on/off, yes/no, 1/0."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE:
        return True
    if isinstance(value, str) and value.strip().lower() in _FALSE:
        return False
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{field}: expected a boolean (true/false, on/off), got {value!r}")


def range_text(lo, hi, lo_open, hi_open, unit) -> str:
    """An interval as text, e.g. ``"(0, inf) bit/s"`` or ``"[64, 9216] B"``."""
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    hi_s = "inf" if hi == np.inf else f"{hi:g}"
    return f"{left}{lo:g}, {hi_s}{right}" + (f" {unit}" if unit else "")


def check_field_names(names: Iterable, valid: Iterable, where: str = "QCNParams") -> None:
    """Raise ValueError for the first name not in ``valid``, suggesting the closest one.

    Parameters
    ----------
    names : iterable of str
        The names to check (e.g. the keys of a dict of changes).
    valid : iterable of str
        The allowed names.
    where : str
        What the names belong to, for the message (default ``"QCNParams"``).

    Raises
    ------
    ValueError
        ``"WHERE: unknown field 'NAME'"``, with the closest valid name when one is close
        and the list of allowed names.
    """
    valid = set(valid)
    for name in names:
        if name not in valid:
            raise unknown_name(where, "field", name, valid)


def check_choice(field: str, value, allowed: Iterable) -> None:
    """Raise ValueError unless ``value`` is one of ``allowed`` (listed in their order)."""
    allowed = tuple(allowed)
    # compared only as a string: an array would make ``in`` ambiguous, a number match nothing
    if not isinstance(value, str) or value not in allowed:
        raise unknown_name(field, "value", value, allowed, sort=False)


def validate(
    obj,
    numeric: Mapping,
    bools: Iterable = (),
    choices: Mapping | None = None,
    integers: Iterable = (),
    optional: Iterable = (),
) -> None:
    """Parse and range-check the fields of the frozen dataclass ``obj`` in place.

    Parameters
    ----------
    obj : dataclass instance
        Written with ``object.__setattr__`` (frozen dataclasses).
    numeric : mapping
        ``name -> (parser, low, high, low_open, high_open, unit, description)``.
    bools : iterable of str
        Boolean fields (:func:`parse_bool`).
    choices : mapping, optional
        ``name -> allowed strings``.
    integers : iterable of str
        Numeric fields that must hold whole numbers (stored as int).
    optional : iterable of str
        Numeric fields that may be None (left as None).
    """
    from qcnmodel.units import parse_time

    integers, optional = set(integers), set(optional)
    times = _TIME_FIELDS.setdefault(type(obj), set())
    for name, (parser, lo, hi, lo_open, hi_open, unit, desc) in numeric.items():
        if parser is parse_time:
            times.add(name)
        raw = getattr(obj, name)
        if raw is None and name in optional:
            continue
        try:
            value = parser(raw, name)
        except ValueError as exc:  # unreadable: say what the field accepts as well
            raise ValueError(f"{exc}; {desc} must be in "
                             f"{range_text(lo, hi, lo_open, hi_open, unit)}") from None  # fmt: skip
        if name in integers:
            if not math.isfinite(value) or value != int(value):
                raise ValueError(f"{name}: {desc} must be an integer, got {raw!r}")
            value = int(value)
        bad_lo = value <= lo if lo_open else value < lo
        bad_hi = value >= hi if hi_open else value > hi
        if bad_lo or bad_hi or (isinstance(value, float) and math.isnan(value)):
            raise ValueError(
                f"{name}: {desc} = {raw!r} is outside the allowed range "
                f"{range_text(lo, hi, lo_open, hi_open, unit)}"
            )
        object.__setattr__(obj, name, value)
    for name in bools:
        object.__setattr__(obj, name, parse_bool(getattr(obj, name), name))
    for name, allowed in (choices or {}).items():
        check_choice(name, getattr(obj, name), allowed)


class Replaceable:
    """Mixin: ``replace(**changes)`` for a frozen parameter dataclass.

    Unit strings are accepted (the class's ``__post_init__`` parses them); an unknown field
    name raises ValueError with the closest valid name. A class may map old field names to
    current ones in ``_ALIASES`` (``{old: new}``); they are accepted here too.
    """

    _ALIASES: dict = {}

    def replace(self, **changes):
        """Copy with fields changed (unit strings accepted; unknown names rejected).

        Parameters
        ----------
        **changes
            Field names (or the class's old names, ``_ALIASES``) and their new values, in SI
            units or as unit strings.

        Returns
        -------
        object
            A new, validated instance of the same class; ``self`` is unchanged (frozen).

        Raises
        ------
        ValueError
            For an unknown field name (with the closest valid one) or an out-of-range value.
        """
        changes = {self._ALIASES.get(k, k): v for k, v in changes.items()}
        valid = {f.name for f in dataclasses.fields(self)}
        check_field_names(changes, valid | set(self._ALIASES), type(self).__name__)
        return dataclasses.replace(self, **changes)
