"""Unit spellings that could be read two ways, and the public type of the parsers' errors.

SI prefixes are case-sensitive (``Ms`` would be megaseconds, ``mB`` millibytes) and in
networking a lower-case ``b`` is a bit (``33kb``, ``1.5Mb``): such spellings are refused
with the one meant, never read 1000 or 8 times off. The documented spellings keep working.
"""

from __future__ import annotations

import pytest

import qcnmodel as qm
from qcnmodel.units import parse_rate, parse_size, parse_time


@pytest.mark.parametrize(
    ("text", "meant"),
    [("5Ms", "ms"), ("5MS", "ms"), ("5S", "s"), ("5 US", "us"), ("2 Min", "min"), ("1NS", "ns")],
)
def test_a_time_unit_in_another_case_is_refused_with_the_unit_meant(text, meant):
    with pytest.raises(ValueError) as info:
        parse_time(text, "rtt")
    msg = str(info.value)
    assert msg.startswith("rtt: ") and "case-sensitive" in msg, msg
    assert f"did you mean {meant!r}?" in msg and "allowed: s, sec, ms, us" in msg, msg


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5ms", 5e-3), ("5 us", 5e-6), ("5µs", 5e-6), ("5ns", 5e-9), ("2min", 120.0), ("1sec", 1.0)],
)
def test_the_time_units_as_written_are_read(text, seconds):
    assert parse_time(text, "t") == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("1500B", 1500),
        ("1500 bytes", 1500),
        ("1 byte", 1),
        ("9000 octets", 9000),
        ("33kB", 33_000),
        ("33KB", 33_000),
        ("37.5kB", 37_500),  # seed 004's Qeq
        ("2 kBytes", 2000),
        ("1.5MB", 1.5e6),
        ("2.4 MB", 2.4e6),
        ("1GB", 1e9),
        ("1TB", 1e12),
        ("1KiB", 1024),
        ("1MiB", 1024**2),
        ("1GiB", 1024**3),
        ("1TiB", 1024**4),
    ],
)
def test_the_documented_size_spellings_are_read(text, nbytes):
    assert parse_size(text, "qeq") == nbytes


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("33kb", "'33kB'"),
        ("1.5Mb", "'1.5MB'"),
        ("26Kb", "'26KB'"),
        ("1500b", "'1500B'"),
        ("3 Gb", "'3GB'"),
        ("26kbit", "'26kB'"),
        ("1 mib", "'1MiB'"),
    ],
)
def test_a_size_in_bits_is_refused_not_read_as_bytes(text, hint):
    # these were read as bytes: "33kb" gave 33000, 8 times the 4125 bytes of 33 kilobits
    with pytest.raises(ValueError) as info:
        parse_size(text, "qeq")
    msg = str(info.value)
    assert msg.startswith("qeq: ") and "is in bits" in msg and hint in msg, msg
    assert "TB" in msg and "TiB" in msg, msg  # the allowed units, the new ones too


@pytest.mark.parametrize(
    ("text", "meant"), [("1mB", "MB"), ("1kiB", "KiB"), ("3 mbytes", "Mbytes")]
)
def test_a_size_prefix_in_another_case_is_refused(text, meant):
    # "mB" is millibytes, not megabytes: the old parser lower-cased it into MB
    with pytest.raises(ValueError, match=rf"^fld: .*case-sensitive; did you mean '{meant}'\?"):
        parse_size(text, "fld")


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Gbps", 10e9),
        ("10mbps", 10e6),
        ("3 mbps", 3e6),
        ("10 Kbps", 1e4),
        ("40Gbit/s", 40e9),
        ("10Gb", 10e9),
        ("1 Tb/s", 1e12),
    ],  # fmt: skip
)
def test_rates_keep_their_prefix_in_either_case(text, bps):
    # "10mbps" is 10 Mb/s as in common usage (a link rate in millibits is never meant)
    assert parse_rate(text, "rate") == bps


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("10GB/s", "'80Gbps'"),
        ("10MBps", "'80Mbps'"),
        ("10 kbytes/s", "'80kbps'"),
        ("10 GBPS", "'10Gbps'"),
    ],  # fmt: skip
)
def test_a_rate_in_bytes_is_refused_with_the_rate_in_bits(text, hint):
    with pytest.raises(ValueError) as info:
        parse_rate(text, "rate")
    assert str(info.value).startswith("rate: ") and hint in str(info.value), str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: qm.parse_time("inf", "rtt"),
        lambda: qm.parse_time("1e-400s", "rtt"),
        lambda: qm.parse_number("1e-323%", "x"),
        lambda: qm.parse_rate("1e300Tbps", "rate"),
        lambda: qm.parse_size("3 furlongs", "qeq"),
        lambda: qm.parse_time("5Ms", "rtt"),
    ],
)
def test_the_parsers_raise_a_public_value_error(call):
    # a private class (units._Refused) showed in the type users saw from qm.parse_time
    with pytest.raises(ValueError) as info:
        call()
    kind = type(info.value)
    assert not kind.__name__.startswith("_"), kind
    from qcnmodel.units import InputError

    assert issubclass(kind, qm.InputError) and qm.InputError is InputError
    assert qm.InputError.__module__ == "qcnmodel.units"


def test_a_model_refuses_a_bad_rtt_with_the_public_type():
    p = qm.QCNParams.preset("802.1qau")
    with pytest.raises(qm.InputError, match=r"^rtt: value 'inf' is not a finite number"):
        qm.QCNFluidModel(p, rtt="inf", n_flows=10)


@pytest.mark.parametrize(
    ("parse", "example"),
    [
        (parse_time, "'500us'"),
        (parse_rate, "'10Gbps'"),
        (parse_size, "'150KB'"),
        (qm.parse_number, "0.5"),
    ],  # fmt: skip
)
@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_value_is_said_to_be_empty(parse, example, text):
    # it was "cannot parse '' as a number (examples: ...)"
    with pytest.raises(ValueError, match=rf"^fld: empty value; give a .*e\.g\. {example}"):
        parse(text, "fld")
