"""Unit strings at the edges: ``"500us"``, ``"10Gbps"``, ``"150KB"``, ``"1/128"``.

Inside qcnmodel every quantity is SI: seconds, bit/s and bytes. These parsers turn the strings
users type (CLI, TOML files, notebooks) into those units and refuse anything they do not
understand with an :class:`InputError` (a :class:`ValueError`) that names the field.

Units are case-sensitive where case changes their meaning, and a spelling that could be read
two ways is refused with the spelling it probably means, never guessed:

* times: ``s``, ``sec``, ``ms``, ``us`` (``µs``), ``ns``, ``ps``, ``min``, as written
  (``"5Ms"`` would be megaseconds: it is refused, "did you mean 'ms'?");
* sizes, in bytes: ``B``, ``byte(s)``, ``octet(s)`` with the SI prefixes k (or K), M, G, T,
  1 KB = 1000 B (the seeds' "150 KB" is the MIB's 150000 octets), or the binary ones Ki, Mi,
  Gi, Ti (1 KiB = 1024 B). A lower-case ``b`` is bits in networking (``"33kb"``,
  ``"1.5Mb"``, ``"26kbit"``): a size in bits is refused, as are ``"mB"`` (milli) and
  ``"kiB"``;
* rates, in bits per second: ``bps``, ``b/s``, ``bit/s`` (also ``bits/s``, ``bit``, ``b``)
  with the prefixes k, M, G, T in either case (``"10mbps"``, the seeds' "3 mbps", is
  10 Mb/s: a link rate in millibits per second is never meant); an upper-case ``B`` is
  bytes (``"10GB/s"``, ``"10GBps"``), refused.

A percentage (``"1%"``) is a fraction, 0.01, where a number is expected; angles (a phase
margin) are degrees, where a percentage is refused.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal
from fractions import Fraction

from qcnmodel._errors import did_you_mean

__all__ = [
    "InputError",
    "ScaleOverflow",
    "parse_number",
    "parse_rate",
    "parse_size",
    "parse_time",
    "split_range",
]

#: a decimal literal, or nan/inf (read so that the message says "not a finite number")
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf(?:inity)?))"

#: the time units, spelled as they must be (case-sensitive: "Ms" would be megaseconds)
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
#: the prefixes of a size, as they must be written (k and K both: "KB" is common usage)
_SIZE_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
                "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}  # fmt: skip
#: the word a size may end with (any case) besides ``B``
_BYTE_WORDS = ("byte", "bytes", "octet", "octets")
#: an example of each kind of value, for a message that asks for one
_EXAMPLE = {"time": "'500us'", "rate": "'10Gbps'", "size": "'150KB'"}
_SIZE_ALLOWED = "B, kB or KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB; bytes, octets"


class InputError(ValueError):
    """A value that qcnmodel refuses at its edges: the message names the field, quotes the
    value and says what is allowed (a unit, a range). It is a :class:`ValueError`, so
    ``except ValueError`` catches it."""


def _label(field: str | None) -> str:
    return f"{field}: " if field else ""


def _shown(raw) -> str:
    """``raw`` as a message quotes it: ``repr``, with a whole number of more than 16 digits
    written in three significant figures (``10**400`` as ``1.000e+400``, not 401 digits)."""
    if isinstance(raw, numbers.Integral) and not isinstance(raw, bool) and abs(raw) >= 10**16:
        return format(Decimal(int(raw)), ".3e")
    return repr(raw)


def _finite(x: float, field: str | None, raw) -> float:
    if not math.isfinite(x):
        raise InputError(f"{_label(field)}value {_shown(raw)} is not a finite number")
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
        raise InputError(f"{_label(field)}value {_shown(raw)} is too small: it rounds to 0")
    return x


def _text_float(text: str, field: str | None, raw) -> float:
    """A decimal literal (``"1.5e-3"``) as a finite float, refused when it overflows or when
    its non-zero digits round to 0 (``"1e-400"``)."""
    x = _finite(float(text), field, raw)
    mantissa = re.split("[eE]", text, maxsplit=1)[0]
    if x == 0.0 and any(c.isdigit() and int(c) != 0 for c in mantissa):
        raise InputError(f"{_label(field)}value {_shown(raw)} is too small: it rounds to 0")
    return x


class ScaleOverflow(InputError):
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
        raise InputError(f"{_label(field)}expected a {kind}, got a boolean {value!r}")
    if isinstance(value, numbers.Real):
        return _as_float(value, field, value), ""
    if not isinstance(value, str):
        raise InputError(f"{_label(field)}expected a {kind} (number or string), got {value!r}")
    if not value.strip():
        raise InputError(f"{_label(field)}empty value; give a {kind}, e.g. {_EXAMPLE[kind]}")
    # the number, then the rest as the unit (one pass: a regex with a lazy unit and trailing
    # blanks took quadratic time on long inputs, 16 s for 50 000 characters)
    m = re.match(r"\s*" + _NUM, value)
    unit = value[m.end() :].strip() if m else ""
    if not m or (unit and (unit[0].isdigit() or unit[0].isspace())):
        raise InputError(f"{_label(field)}cannot parse {value!r} as a {kind}")
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
    InputError
        If the string is not a number followed by one of s, sec, ms, us, µs, ns, ps, min,
        spelled in that case (``"5Ms"`` is refused with "did you mean 'ms'?").
    """
    x, unit = _split(value, field, "time")
    if unit == "":
        return x
    factor = _TIME_UNITS.get(unit)
    if factor is None:
        raise InputError(f"{_label(field)}{_unknown('time', unit, value, _TIME_UNITS)} "
                         f"(allowed: {', '.join(_TIME_UNITS)})")  # fmt: skip
    return _scale(x, factor, field, value)


def _unknown(kind: str, unit: str, value, allowed) -> str:
    """``unknown <kind> unit 'u' in 'v'``, with the spelling meant when ``unit`` differs from
    an allowed one only in case (units are case-sensitive), or the closest one."""
    hint = did_you_mean(unit, allowed)
    if hint and any(a.lower() == unit.lower() for a in allowed):
        hint = "; units are case-sensitive" + hint
    return f"unknown {kind} unit {unit!r} in {value!r}{hint}"


def parse_rate(value, field: str | None = None) -> float:
    """Parse a data rate into bit/s.

    Parameters
    ----------
    value : float, int or str
        A number (bit/s) or a string such as ``"10Gbps"``, ``"10 Gb/s"``, ``"40Gbit/s"``,
        ``"5 Mbps"``: ``bps``, ``b/s``, ``bit/s`` (or ``bits/s``, ``bit``, ``b``) after a
        prefix k, M, G or T, in either case (``"3 mbps"`` is 3 Mb/s).
    field : str, optional
        Name used in error messages.

    Returns
    -------
    float
        Bits per second.

    Raises
    ------
    InputError
        For another unit; a rate in bytes (an upper-case ``B``: ``"10GB/s"``) is refused
        with the rate in bits it is.
    """
    x, unit = _split(value, field, "rate")
    if unit == "":
        return x
    m = re.fullmatch(r"([kKmMgGtT]?)\s*(?:bps|b/s|bit/s|bits/s|bit|b)", unit)
    if m:
        return _scale(x, _RATE_PREFIX[m.group(1).lower()], field, value)
    if unit.isupper() and re.fullmatch(r"[KMGT]?\s*(?:BPS|B/S|BIT/S)", unit):  # shouted
        prefix = unit[0].replace("K", "k") if unit[0] in "KMGT" else ""
        raise InputError(f"{_label(field)}unknown rate unit {unit!r} in {value!r}; units are "
                         f"case-sensitive (a 'B' is a byte): write '{x:g}{prefix}bps' for bits "
                         f"per second, '{x * 8:g}{prefix}bps' for {x:g} {prefix}B/s")  # fmt: skip
    m = re.fullmatch(r"([kKmMgGtT]?)\s*(?:B|[bB]ytes?)(?:ps|/s)", unit)
    if m:
        prefix = m.group(1).upper().replace("K", "k")
        raise InputError(f"{_label(field)}{value!r} is a rate in bytes; give it in bits per "
                         f"second, e.g. '{x * 8:g}{prefix}bps' for {x:g} {prefix}B/s")  # fmt: skip
    raise InputError(
        f"{_label(field)}unknown rate unit {unit!r} in {value!r} "
        "(allowed: bps, b/s, bit/s with prefix k, M, G, T; e.g. '10Gbps')"
    )


def _size_factor(unit: str) -> float | None:
    """The bytes of one ``unit`` (a prefix of :data:`_SIZE_PREFIX`, then ``B`` or a byte
    word), None for any other spelling."""
    for prefix in sorted(_SIZE_PREFIX, key=len, reverse=True):
        if unit.startswith(prefix):
            rest = unit[len(prefix) :].strip()
            if rest == "B" or rest.lower() in _BYTE_WORDS:
                return _SIZE_PREFIX[prefix]
    return None


def _size_refusal(unit: str, value, x: float) -> str:
    """Why ``unit`` is no size unit: a size in bits (a lower-case ``b``: ``kb``, ``Mb``,
    ``kbit``), a prefix in the wrong case (``mB``, ``kiB``), or unknown."""
    bits = re.fullmatch(r"([A-Za-z]*?)\s*(?:b|[bB]its?)", unit)
    if bits:
        given = bits.group(1)
        lead = (
            given
            if given in _SIZE_PREFIX
            else next((p for p in _SIZE_PREFIX if p.lower() == given.lower()), None)
        )
        if lead is not None:
            why = " (a lower-case 'b' is a bit)" if unit.endswith("b") else ""
            return (f"{value!r} is in bits{why}; a size is in bytes: write e.g. "
                    f"'{x:g}{lead}B' ({x / 8:g} {lead}B if bits were meant)")  # fmt: skip
    spellings = [p + w for p in _SIZE_PREFIX for w in ("B", *_BYTE_WORDS)]
    return _unknown("size", unit, value, spellings)


def parse_size(value, field: str | None = None) -> float:
    """Parse a size into bytes (1 KB = 1000 B, 1 KiB = 1024 B).

    Parameters
    ----------
    value : float, int or str
        A number (bytes) or a string such as ``"150KB"``, ``"1.5 MB"``, ``"1500B"``,
        ``"64 KiB"``, ``"9000 bytes"``: ``B`` or ``byte(s)``/``octet(s)`` after a prefix k
        (or K), M, G, T or Ki, Mi, Gi, Ti, the prefix in that case.
    field : str, optional
        Name used in error messages.

    Returns
    -------
    float
        Bytes.

    Raises
    ------
    InputError
        For another unit. A size in bits (a lower-case ``b``, as ``"33kb"`` or ``"1.5Mb"``
        are written for kilobits and megabits) is refused with the spelling in bytes, never
        read as bytes (8 times too large) nor guessed.
    """
    x, unit = _split(value, field, "size")
    if unit == "":
        return x
    factor = _size_factor(unit)
    if factor is None:
        raise InputError(f"{_label(field)}{_size_refusal(unit, value, x)} "
                         f"(allowed: {_SIZE_ALLOWED})")  # fmt: skip
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
        raise InputError(f"{_label(field)}expected a number, got a boolean {value!r}")
    if isinstance(value, numbers.Real):
        return _as_float(value, field, value)
    if not isinstance(value, str):
        raise InputError(f"{_label(field)}expected a number, got {value!r}")
    s = value.strip()
    if not s:
        raise InputError(f"{_label(field)}empty value; give a number, e.g. 0.5 or '1/128'")
    try:
        if s.endswith("%"):
            pct = _text_float(s[:-1], field, value)
            if pct != 0.0 and pct / 100.0 == 0.0:
                raise InputError(f"{_label(field)}value {value!r} is too small: it rounds to 0")
            return pct / 100.0
        m = re.fullmatch(r"2\s*\^\s*([-+]?\d{1,5})", s)
        if m:
            return _as_float(Fraction(2) ** int(m.group(1)), field, value)
        if "/" in s:
            return _as_float(Fraction(s.replace(" ", "")), field, value)
        return _text_float(s, field, value)
    except InputError:
        raise
    except (ValueError, ZeroDivisionError):
        raise InputError(
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
        raise InputError(f"{_label(field)}'{text}' has three dots in a row; write a range as "
                         "lo..hi (two dots), e.g. 2us..1ms")  # fmt: skip
    lo, hi = text.split("..", 1)
    return lo.strip(), hi.strip()
