"""Unit-string parsing at the edges (qcnmodel.units)."""

import math

import pytest

from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500us", 500e-6),
        ("15 ms", 15e-3),
        ("1s", 1.0),
        ("100ns", 100e-9),
        ("2µs", 2e-6),
        (0.25, 0.25),
    ],
)
def test_parse_time(text, seconds):
    assert math.isclose(parse_time(text), seconds, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Gbps", 10e9),
        ("10 Gb/s", 10e9),
        ("40Gbit/s", 40e9),
        ("5 Mbps", 5e6),
        ("3 mbps", 3e6),
        (1e9, 1e9),
    ],
)
def test_parse_rate(text, bps):
    # "3 mbps" is seed 004's spelling of 3 Mb/s (qcn-algorithm.md §3.4), never millibits.
    assert math.isclose(parse_rate(text), bps, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [("150KB", 150000), ("33 KB", 33000), ("1.5MB", 1.5e6), ("1500B", 1500), ("1KiB", 1024)],
)
def test_parse_size(text, nbytes):
    # 1 KB = 1000 B per qcn-algorithm.md "Conventions".
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    ("text", "x"), [("1/128", 1 / 128), ("2^-7", 1 / 128), ("1%", 0.01), ("0.5", 0.5)]
)
def test_parse_number(text, x):
    assert parse_number(text) == x


@pytest.mark.parametrize(
    ("func", "text"),
    [
        (parse_time, "5 parsecs"),
        (parse_rate, "10 GHz"),
        (parse_size, "3 furlongs"),
        (parse_number, "abc"),
        (parse_time, "inf s"),
        (parse_number, "1/0"),
        (parse_time, True),
    ],
)
def test_bad_strings_name_the_field(func, text):
    with pytest.raises(ValueError, match="myfield"):
        func(text, "myfield")


def test_decimal_scaling_is_exact():
    # "100us" must be the double nearest 1e-4, not 100 * 1e-6 = 9.999999999999999e-05.
    assert parse_time("100us") == 1e-4
    assert parse_time("15ms") == 0.015
    assert parse_rate("0.5Mbps") == 5e5


def test_numpy_scalars_are_numbers():
    import numpy as np

    assert parse_number(np.int64(3), "n") == 3.0
    assert parse_time(np.float64(1e-3), "rtt") == 1e-3


def test_a_huge_whole_number_is_quoted_in_three_figures():
    # QCNParams(line_rate=10**400) printed all 401 digits in its message
    from qcnmodel.params import QCNParams

    with pytest.raises(ValueError) as info:
        QCNParams(line_rate=10**400)
    assert "line_rate" in str(info.value) and "1.000e+400" in str(info.value)
    assert len(str(info.value)) < 200
    with pytest.raises(ValueError, match=r"-1\.000e\+400"):
        parse_time(-(10**400), "t")
