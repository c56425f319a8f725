"""Unit parsers at their edges: every input is a float or a ValueError naming the field.

Regression tests of a hardening pass (huge integers raised OverflowError, values whose digits
round to 0 became 0 silently, "nan"/"1e400" as plain numbers were "cannot parse") and a
property: whatever is passed, :mod:`qcnmodel.units` answers with a finite float or a
:class:`ValueError` whose message starts with the field name.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

PARSERS = (parse_time, parse_rate, parse_size, parse_number)


@pytest.mark.parametrize("parse", PARSERS)
@pytest.mark.parametrize(
    "value",
    [10**400, -(10**400), "1e400", "-1e400", "nan", "inf", "-Infinity"],
    ids=["int+", "int-", "1e400", "-1e400", "nan", "inf", "-Infinity"],
)
def test_values_beyond_a_float_are_refused_naming_the_field(parse, value):
    with pytest.raises(ValueError, match=r"^fld: value .* is not a finite number"):
        parse(value, "fld")


@pytest.mark.parametrize(
    ("parse", "value"),
    [
        (parse_time, "1e-400 s"),
        (parse_time, "1e-320 ps"),  # a subnormal number of seconds, times 1e-12
        (parse_rate, "1e-400Gbps"),
        (parse_size, "1e-330 KB"),
        (parse_number, "1e-400"),
        (parse_number, "2^-99999"),
        (parse_number, "1e-323%"),
        (parse_number, Fraction(1, 10**400)),
    ],
)
def test_non_zero_values_that_round_to_zero_are_refused(parse, value):
    with pytest.raises(ValueError, match=r"^fld: value .* is too small: it rounds to 0"):
        parse(value, "fld")


@pytest.mark.parametrize(
    ("parse", "value"), [(parse_time, "1e308 min"), (parse_rate, "1e300 Tbps")]
)
def test_a_unit_that_scales_beyond_a_float_is_refused(parse, value):
    with pytest.raises(ValueError, match=r"^fld: value .* is too large: beyond the float range"):
        parse(value, "fld")


@pytest.mark.parametrize(
    ("parse", "value", "expected"),
    [
        (parse_time, "0s", 0.0),
        (parse_time, "-0 us", 0.0),
        (parse_number, "0%", 0.0),
        (parse_number, "0/5", 0.0),
        (parse_number, "2^-1074", 5e-324),  # the smallest float: representable, kept
        (parse_number, "2^1023", 2.0**1023),
        (parse_number, 10**300, 1e300),
    ],
)
def test_zero_and_extreme_but_representable_values_are_kept(parse, value, expected):
    assert parse(value, "fld") == expected


@pytest.mark.parametrize("value", ["1/0", "abc", "1e", "2^x", "1//2"])
def test_unparsable_numbers_say_so(value):
    with pytest.raises(ValueError, match=r"^fld: cannot parse"):
        parse_number(value, "fld")


_texts = st.one_of(
    st.text(max_size=20),
    st.builds(
        lambda n, u: f"{n}{u}",
        st.one_of(st.floats().map(repr), st.integers(-(10**400), 10**400).map(str)),
        st.sampled_from(
            ["", "s", " ms", "us", "Gbps", "KB", "KiB", "%", "/3", "/0", "e-999", " parsecs", "^7"]
        ),
    ),
    st.from_regex(r"\s*[-+]?[0-9.]{0,6}([eE][-+]?[0-9]{1,5})?\s*[a-zA-Zµ/%^]{0,6}", fullmatch=True),
)
_values = st.one_of(
    _texts,
    st.floats(),
    st.integers(-(10**400), 10**400),
    st.fractions(),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(value=_values, parse=st.sampled_from(PARSERS))
def test_parsers_answer_a_finite_float_or_a_value_error_naming_the_field(value, parse):
    try:
        x = parse(value, "fld")
    except ValueError as exc:
        assert str(exc).startswith("fld: "), str(exc)
    else:
        assert isinstance(x, float) and math.isfinite(x)


@pytest.mark.parametrize("parse", PARSERS)
def test_long_inputs_are_answered_in_linear_time(parse):
    # "1x" + 50 000 blanks + "y" took 16 s through a regex with a lazy unit group
    import time

    t0 = time.perf_counter()
    for text in ("1x" + " " * 200_000 + "y", "1" + " " * 200_000 + "s" + " " * 200_000):
        try:
            parse(text, "fld")
        except ValueError as exc:
            assert str(exc).startswith("fld: ")
    # generous bound for a loaded 2-core machine; the quadratic version needed minutes
    assert time.perf_counter() - t0 < 2.0
