"""Checks of the arguments of the public analysis functions: a wrong type is a TypeError and a
value out of its range a ValueError, each naming the argument (never an AttributeError from
deep inside, nor a value ignored on one of the code paths)."""

from __future__ import annotations

import math
import numbers

__all__ = ["check_search", "delays", "require", "time_or_none"]


def require(obj, name: str, attrs: tuple[str, ...], what: str, any_of: tuple[str, ...] = ()
            ) -> None:  # fmt: skip
    """Raise a TypeError naming ``name`` when ``obj`` lacks one of ``attrs``, or has none of
    ``any_of`` (``what``: the kind of object expected, said in the message)."""
    if not all(hasattr(obj, a) for a in attrs) or (
        any_of and not any(hasattr(obj, a) for a in any_of)
    ):
        raise TypeError(f"{name}: expected {what}, got {type(obj).__name__}")


def _number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)


def check_search(rtt_min=None, rtt_max=None, **tolerances) -> None:
    """Check a critical-RTT search's bounds (s) and ``tolerances`` (e.g. ``xtol``): each one
    given a finite number > 0, and ``rtt_min < rtt_max`` when both are given."""
    lo = 0.0 if rtt_min is None else _number(rtt_min, "rtt_min")
    hi = math.inf if rtt_max is None else _number(rtt_max, "rtt_max")
    ok = (rtt_min is None or 0 < lo < math.inf) and (rtt_max is None or 0 < hi < math.inf)
    if not (ok and lo < hi):
        raise ValueError(f"rtt_min, rtt_max: need 0 < rtt_min < rtt_max < inf s, got "
                         f"{rtt_min!r}, {rtt_max!r}")  # fmt: skip
    for name, value in tolerances.items():
        if not 0 < _number(value, name) < math.inf:
            raise ValueError(f"{name}: need a finite number > 0, got {value!r}")


def delays(taus, name: str = "taus"):
    """Loop delays (s) as a float array of the shape of ``taus``: numbers (s) or unit strings
    (``"50us"``); a ValueError naming ``name`` when there is none, or one is not a finite
    time >= 0."""
    import numpy as np

    from qcnmodel.units import parse_time

    try:
        arr = np.asarray(parse_time(taus, name) if isinstance(taus, str) else taus, float)
    except (TypeError, ValueError):  # unit strings among them (or no numbers at all)
        items = np.asarray(taus, dtype=object)
        flat = [parse_time(x, name) if isinstance(x, str) else x for x in items.reshape(-1)]
        try:
            arr = np.asarray(flat, float).reshape(items.shape)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected delays (s, or strings such as '50us'), got "
                             f"{taus!r}") from None  # fmt: skip
    if arr.size == 0:
        raise ValueError(f"{name}: at least one delay is needed, got none")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name}: delays must be finite and >= 0 s, got {taus!r}")
    return arr


def time_or_none(value, name: str):
    """``value`` (s) with a unit string (``"50us"``) parsed; None and numbers as given (the
    callers check their range)."""
    if isinstance(value, str):
        from qcnmodel.units import parse_time

        return parse_time(value, name)
    return value
