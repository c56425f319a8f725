"""Unit strings at the edges: ``"500us"``, ``"10Gbps"``, ``"150KB"``, ``"1/128"``.

Inside qcnmodel every quantity is SI: seconds, bit/s and bytes. These parsers turn the strings
users type (CLI, TOML files, notebooks) into those units and reject anything they do not
understand with a :class:`ValueError` that names the field.

Conventions: 1 KB = 1000 B (the seeds' "150 KB" is the
MIB's 150000 octets); binary prefixes are accepted only when spelled ``KiB``/``MiB``/``GiB``.
Rates accept ``bps``, ``b/s``, ``bit/s`` with the SI prefixes k, M, G, T (case-insensitive for
the prefix, so the seeds' "3 mbps" is 3 Mb/s, never millibits).
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal
from fractions import Fraction

__all__ = ["parse_number", "parse_rate", "parse_size", "parse_time"]

_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"

_TIME_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
    "min": 60.0,
}
_RATE_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_SIZE_UNITS = {
    "b": 1.0,
    "byte": 1.0,
    "bytes": 1.0,
    "octets": 1.0,
    "kb": 1e3,
    "kbyte": 1e3,
    "kbytes": 1e3,
    "mb": 1e6,
    "mbyte": 1e6,
    "mbytes": 1e6,
    "gb": 1e9,
    "kib": 1024.0,
    "mib": 1024.0**2,
    "gib": 1024.0**3,
}


def _label(field: str | None) -> str:
    return f"{field}: " if field else ""


def _finite(x: float, field: str | None, raw) -> float:
    if not math.isfinite(x):
        raise ValueError(f"{_label(field)}value {raw!r} is not a finite number")
    return float(x)


def _scale(x: float, factor: float) -> float:
    """``x * factor`` rounded once, so that "100us" is exactly the float nearest 1e-4."""
    if factor == 1.0:
        return x
    return float(Decimal(repr(x)) * Decimal(repr(factor)))


def _split(value, field: str | None, kind: str) -> tuple[float, str]:
    if isinstance(value, bool):
        raise ValueError(f"{_label(field)}expected a {kind}, got a boolean {value!r}")
    if isinstance(value, numbers.Real):
        return _finite(float(value), field, value), ""
    if not isinstance(value, str):
        raise ValueError(f"{_label(field)}expected a {kind} (number or string), got {value!r}")
    m = re.fullmatch(r"\s*" + _NUM + r"\s*([^\d\s].*?)?\s*", value)
    if not m:
        raise ValueError(f"{_label(field)}cannot parse {value!r} as a {kind}")
    return _finite(float(m.group(1)), field, value), (m.group(2) or "").strip()


def parse_time(value, field: str | None = None) -> float:
    """Parse a duration into seconds.

    Parameters
    ----------
    value : float, int or str
        A number (already in seconds) or a string such as ``"500us"``, ``"15 ms"``,
        ``"1s"``, ``"100ns"``.
    field : str, optional
        Name used in error messages.

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    ValueError
        If the string is not a number followed by one of s, ms, us, µs, ns, ps, min.
    """
    x, unit = _split(value, field, "time")
    if unit == "":
        return x
    try:
        return _scale(x, _TIME_UNITS[unit.lower() if unit not in ("µs", "μs") else unit])
    except KeyError:
        raise ValueError(
            f"{_label(field)}unknown time unit {unit!r} in {value!r} "
            f"(allowed: {', '.join(_TIME_UNITS)})"
        ) from None


def parse_rate(value, field: str | None = None) -> float:
    """Parse a data rate into bit/s.

    Parameters
    ----------
    value : float, int or str
        A number (bit/s) or a string such as ``"10Gbps"``, ``"10 Gb/s"``, ``"40Gbit/s"``,
        ``"5 Mbps"``.
    field : str, optional
        Name used in error messages.

    Returns
    -------
    float
        Bits per second.
    """
    x, unit = _split(value, field, "rate")
    if unit == "":
        return x
    m = re.fullmatch(r"([kKmMgGtT]?)\s*(?:bps|b/s|bit/s|bits/s|bit|b)", unit)
    if not m:
        raise ValueError(
            f"{_label(field)}unknown rate unit {unit!r} in {value!r} "
            "(allowed: bps, b/s, bit/s with prefix k, M, G, T; e.g. '10Gbps')"
        )
    return _scale(x, _RATE_PREFIX[m.group(1).lower()])


def parse_size(value, field: str | None = None) -> float:
    """Parse a size into bytes (1 KB = 1000 B, 1 KiB = 1024 B).

    Parameters
    ----------
    value : float, int or str
        A number (bytes) or a string such as ``"150KB"``, ``"1.5 MB"``, ``"1500B"``.
    field : str, optional
        Name used in error messages.

    Returns
    -------
    float
        Bytes.
    """
    x, unit = _split(value, field, "size")
    if unit == "":
        return x
    try:
        return _scale(x, _SIZE_UNITS[unit.lower()])
    except KeyError:
        raise ValueError(
            f"{_label(field)}unknown size unit {unit!r} in {value!r} "
            "(allowed: B, KB, MB, GB (powers of 1000), KiB, MiB, GiB)"
        ) from None


def parse_number(value, field: str | None = None) -> float:
    """Parse a plain number, a fraction (``"1/128"``), a power of two (``"2^-7"``) or a percentage.

    Parameters
    ----------
    value : float, int or str
        ``0.5``, ``"0.5"``, ``"1/128"``, ``"2^-7"``, ``"1%"``.
    field : str, optional
        Name used in error messages.

    Returns
    -------
    float
    """
    if isinstance(value, bool):
        raise ValueError(f"{_label(field)}expected a number, got a boolean {value!r}")
    if isinstance(value, numbers.Real):
        return _finite(float(value), field, value)
    if not isinstance(value, str):
        raise ValueError(f"{_label(field)}expected a number, got {value!r}")
    s = value.strip()
    try:
        if s.endswith("%"):
            return _finite(float(s[:-1]) / 100.0, field, value)
        m = re.fullmatch(r"2\s*\^\s*([-+]?\d+)", s)
        if m:
            return 2.0 ** int(m.group(1))
        if "/" in s:
            return _finite(float(Fraction(s.replace(" ", ""))), field, value)
        return _finite(float(s), field, value)
    except OverflowError:
        raise ValueError(f"{_label(field)}value {value!r} is not a finite number") from None
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"{_label(field)}cannot parse {value!r} as a number "
            "(examples: 0.5, '1/128', '2^-7', '1%')"
        ) from None
