"""Unit strings at the edges: ``"500us"``, ``"10Gbps"``, ``"150KB"``, ``"1/128"``.

Inside qcnmodel every quantity is SI: seconds, bit/s and bytes. These parsers turn the strings
users type (CLI, TOML files, notebooks) into those units and reject anything they do not
understand with a :class:`ValueError` that names the field.

Conventions: 1 KB = 1000 B (the seeds' "150 KB" is the
MIB's 150000 octets); binary prefixes are accepted only when spelled ``KiB``/``MiB``/``GiB``.
Rates accept ``bps``, ``b/s``, ``bit/s`` with the SI prefixes k, M, G, T (case-insensitive for
the prefix, so the seeds' "3 mbps" is 3 Mb/s, never millibits).

The case of a unit does not change its meaning, so a lower-case ``b`` means what the
quantity is counted in: bytes in a size (``"26Kb"``, ``"26kb"`` and ``"26KB"`` are all
26 000 bytes, ``"1500b"`` is 1500 bytes; a size in bits, ``"26kbit"``, is refused) and bits
in a rate (``"10Gb"`` is 10 Gbit/s; bytes per second, ``"10GB/s"``, are refused).
A percentage (``"1%"``) is a fraction, 0.01, where a number is expected; angles (a phase
margin) are degrees, where a percentage is refused.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal
from fractions import Fraction

__all__ = ["parse_number", "parse_rate", "parse_size", "parse_time", "split_range"]

#: a decimal literal, or nan/inf (read so that the message says "not a finite number")
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf(?:inity)?))"

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


def _shown(raw) -> str:
    """``raw`` as a message quotes it: ``repr``, with a whole number of more than 16 digits
    written in three significant figures (``10**400`` as ``1.000e+400``, not 401 digits)."""
    if isinstance(raw, numbers.Integral) and not isinstance(raw, bool) and abs(raw) >= 10**16:
        return format(Decimal(int(raw)), ".3e")
    return repr(raw)


class _Refused(ValueError):
    """A value that was read but is refused (not finite, or rounds to 0): the message is
    final and is not replaced by "cannot parse"."""


def _finite(x: float, field: str | None, raw) -> float:
    if not math.isfinite(x):
        raise _Refused(f"{_label(field)}value {_shown(raw)} is not a finite number")
    return float(x)


def _as_float(exact, field: str | None, raw) -> float:
    """``exact`` (an int, Fraction, Decimal or float) as a finite float: a value too large for
    a float is refused, and so is a non-zero value that would round to 0 (no silent change)."""
    try:
        x = float(exact)
    except OverflowError:
        x = math.inf
    _finite(x, field, raw)
    if x == 0.0 and exact != 0:
        raise _Refused(f"{_label(field)}value {_shown(raw)} is too small: it rounds to 0")
    return x


def _text_float(text: str, field: str | None, raw) -> float:
    """A decimal literal (``"1.5e-3"``) as a finite float, refused when it overflows or when
    its non-zero digits round to 0 (``"1e-400"``)."""
    x = _finite(float(text), field, raw)
    mantissa = re.split("[eE]", text, maxsplit=1)[0]
    if x == 0.0 and any(c.isdigit() and int(c) != 0 for c in mantissa):
        raise _Refused(f"{_label(field)}value {_shown(raw)} is too small: it rounds to 0")
    return x


class ScaleOverflow(_Refused):
    """A finite number whose unit takes it beyond the float range (``"1e300Gbps"``);
    ``sign`` is +1 or -1, for a caller that reports its own range instead."""

    def __init__(self, message: str, sign: int):
        super().__init__(message)
        self.sign = sign


def _scale(x: float, factor: float, field: str | None = None, raw=None) -> float:
    """``x * factor`` rounded once, so that "100us" is exactly the float nearest 1e-4; a
    product beyond the float range (:class:`ScaleOverflow`), or rounding a non-zero value to
    0, is refused."""
    if factor == 1.0:
        return x
    exact = Decimal(repr(x)) * Decimal(repr(factor))
    if not math.isfinite(float(exact)):
        raise ScaleOverflow(
            f"{_label(field)}value {_shown(raw)} is too large: beyond the float range",
            1 if x > 0 else -1,
        )
    return _as_float(exact, field, raw)


def _split(value, field: str | None, kind: str) -> tuple[float, str]:
    if isinstance(value, bool):
        raise ValueError(f"{_label(field)}expected a {kind}, got a boolean {value!r}")
    if isinstance(value, numbers.Real):
        return _as_float(value, field, value), ""
    if not isinstance(value, str):
        raise ValueError(f"{_label(field)}expected a {kind} (number or string), got {value!r}")
    # the number, then the rest as the unit (one pass: a regex with a lazy unit and trailing
    # blanks took quadratic time on long inputs, 16 s for 50 000 characters)
    m = re.match(r"\s*" + _NUM, value)
    unit = value[m.end() :].strip() if m else ""
    if not m or (unit and (unit[0].isdigit() or unit[0].isspace())):
        raise ValueError(f"{_label(field)}cannot parse {value!r} as a {kind}")
    return _text_float(m.group(1), field, value), unit


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
        factor = _TIME_UNITS[unit.lower() if unit not in ("µs", "μs") else unit]
    except KeyError:
        raise ValueError(
            f"{_label(field)}unknown time unit {unit!r} in {value!r} "
            f"(allowed: {', '.join(_TIME_UNITS)})"
        ) from None
    return _scale(x, factor, field, value)


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
    return _scale(x, _RATE_PREFIX[m.group(1).lower()], field, value)


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
        factor = _SIZE_UNITS[unit.lower()]
    except KeyError:
        raise ValueError(
            f"{_label(field)}unknown size unit {unit!r} in {value!r} "
            "(allowed: B, KB, MB, GB (powers of 1000), KiB, MiB, GiB)"
        ) from None
    return _scale(x, factor, field, value)


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
        return _as_float(value, field, value)
    if not isinstance(value, str):
        raise ValueError(f"{_label(field)}expected a number, got {value!r}")
    s = value.strip()
    try:
        if s.endswith("%"):
            pct = _text_float(s[:-1], field, value)
            if pct != 0.0 and pct / 100.0 == 0.0:
                raise _Refused(f"{_label(field)}value {value!r} is too small: it rounds to 0")
            return pct / 100.0
        m = re.fullmatch(r"2\s*\^\s*([-+]?\d{1,5})", s)
        if m:
            return _as_float(Fraction(2) ** int(m.group(1)), field, value)
        if "/" in s:
            return _as_float(Fraction(s.replace(" ", "")), field, value)
        return _text_float(s, field, value)
    except _Refused:
        raise
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"{_label(field)}cannot parse {value!r} as a number "
            "(examples: 0.5, '1/128', '2^-7', '1%')"
        ) from None


def split_range(value, field: str | None = None) -> tuple[str, str] | None:
    """``("lo", "hi")`` of a range text ``lo..hi`` (stripped), or None for a single value.

    Three dots in a row are refused (a ValueError naming ``field``): ``2us...1ms`` would
    otherwise read as ``2us`` to ``.1ms``, a range the user did not write."""
    text = str(value)
    if ".." not in text:
        return None
    if "..." in text:
        raise ValueError(f"{_label(field)}'{text}' has three dots in a row; write a range as "
                         "lo..hi (two dots), e.g. 2us..1ms")  # fmt: skip
    lo, hi = text.split("..", 1)
    return lo.strip(), hi.strip()
