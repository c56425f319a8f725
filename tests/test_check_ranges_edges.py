"""The operating ranges of ``check`` and ``report``: a parameter file's ``[ranges]`` table and
the command-line values that replace it are refused for the same things, each message naming
the field as the user wrote it (the file's ``pm_threshold``, the flag ``pm-threshold``)."""

from __future__ import annotations

import re

import pytest

from qcnmodel.cli import main
from qcnmodel.cli.check import parse_ranges

#: the name of each field's flag, as the command line's messages give it
FLAG_OF = {"rtt": "rtt", "flows": "flows", "pm_threshold": "pm-threshold", "capacity": "rate"}
#: the argument of parse_ranges that carries each field from the command line
_ARG = {"rtt": 0, "flows": 1, "pm_threshold": 2, "capacity": 6}

BAD = [
    ("rtt", "-5us..1ms"),
    ("rtt", "0us..1ms"),
    ("rtt", "nan"),
    ("rtt", "1ms..2us"),
    ("rtt", "5"),
    ("rtt", "5Ms"),
    ("rtt", "2us..3s"),
    ("rtt", "2us..1ms:1"),
    ("rtt", ""),
    ("flows", "0..10"),
    ("flows", "10..1"),
    ("flows", "1..1e9"),
    ("flows", "1.5"),
    ("flows", "10us"),
    ("flows", ""),
    ("pm_threshold", "-5"),
    ("pm_threshold", "90"),
    ("pm_threshold", "nan"),
    ("pm_threshold", "50%"),
    ("pm_threshold", "30..40"),
    ("pm_threshold", ""),
    ("capacity", "0Gbps"),
    ("capacity", "5"),
    ("capacity", "5GBps"),
    ("capacity", "1Gbps..2Gbps"),
    ("capacity", ""),
]


def _from_file(key, value, tmp_path):
    text = f'[ranges]\n{key} = "{value}"\n'
    with pytest.raises(ValueError) as info:
        parse_ranges(None, None, None, {key: value}, tmp_path / "p.toml", text)
    return str(info.value)


def _from_cli(key, value):
    args = [None] * 7
    args[_ARG[key]] = value
    with pytest.raises(ValueError) as info:
        parse_ranges(*args[:3], rate_text=args[6])
    return str(info.value)


@pytest.mark.parametrize(("key", "value"), BAD)
def test_file_and_command_line_refuse_the_same_values_naming_their_own_field(key, value, tmp_path):
    in_file = _from_file(key, value, tmp_path)
    on_cli = _from_cli(key, value)
    prefix = f"{tmp_path / 'p.toml'}, line 2: {key}: "
    assert in_file.startswith(prefix), in_file
    assert on_cli.startswith(f"{FLAG_OF[key]}: "), on_cli
    # the same reason either way: only the name of the field differs
    reason = in_file[len(prefix) :]
    assert on_cli[len(FLAG_OF[key]) + 2 :] == reason.replace(f"{key}: ", f"{FLAG_OF[key]}: ")


@pytest.mark.parametrize(
    ("key", "value", "flag", "flag_value"),
    [
        ("flows", "0..10", "flows", "5"),
        ("rtt", "-1us..1ms", "rtt", "100us"),
        ("pm_threshold", "95", "pm_threshold", "30"),
        ("capacity", "5GBps", "capacity", "5Gbps"),
    ],
)
def test_a_bad_file_value_is_refused_even_where_the_command_line_replaces_it(
    key, value, flag, flag_value, tmp_path
):
    # the command line's value was taken and the file's never read: `check f.toml` refused
    # the file, `check f.toml --flows 5` judged it
    args = [None] * 7
    args[_ARG[flag]] = flag_value
    text = f'[ranges]\n{key} = "{value}"\n'
    with pytest.raises(ValueError, match=rf"p\.toml, line 2: {key}: "):
        parse_ranges(*args[:3], {key: value}, tmp_path / "p.toml", text, rate_text=args[6])


def test_the_command_line_still_replaces_a_good_file_value(tmp_path):
    text = '[ranges]\nflows = "1..100:7"\npm_threshold = 45\n'
    table = {"flows": "1..100:7", "pm_threshold": 45}
    r = parse_ranges(None, "5..10", "20", table, tmp_path / "p.toml", text)
    assert r.flows == (5, 10) and r.pm_threshold == 20.0
    assert r.n_flows != 7  # the file's point count goes with the file's range


@pytest.mark.parametrize(
    ("value", "kind"), [(True, "boolean"), (["2us", "1ms"], "list"), ({"lo": "2us"}, "table")]
)
@pytest.mark.parametrize("key", ["rtt", "flows", "pm_threshold", "capacity"])
def test_a_toml_value_of_another_type_is_named_as_such(key, value, kind, tmp_path):
    # a table was "a point count ':n' follows a range", a boolean "cannot parse 'True'"
    text = f"[ranges]\n{key} = 1\n"
    with pytest.raises(ValueError) as info:
        parse_ranges(None, None, None, {key: value}, tmp_path / "p.toml", text)
    msg = str(info.value)
    assert re.search(rf"line 2: {key}: expected .*; got a {kind}", msg), msg


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("--flows", "flow count"),
        ("--rtt", "loop delay"),
        ("--pm-threshold", "phase margin"),
        ("--rate", "rate"),
    ],  # fmt: skip
)
def test_an_empty_value_asks_for_the_field_s_own_kind_of_value(flag, words, capsys):
    # --flows '' was refused with the examples of a fraction: 0.5, '1/128', '2^-7', '1%'
    assert main(["check", "--preset", "802.1qau", "--quiet", flag, ""]) == 2
    err = capsys.readouterr().err
    assert f"{flag[2:]}: empty value; give" in err and words in err, err
    assert "1/128" not in err and "Traceback" not in err, err


@pytest.mark.parametrize(("flag", "example"), [("--w", "2 or 1/2"), ("--ps", "0.01 or 1%")])
def test_margins_w_and_ps_empty_are_refused_as_empty(flag, example, capsys):
    assert main(["margins", "--quiet", flag, ""]) == 2
    err = capsys.readouterr().err
    assert f"{flag[2:]}: empty value; give a number, e.g. {example}" in err, err


def test_a_flow_count_that_is_no_number_names_the_count_s_range(capsys):
    assert main(["margins", "--quiet", "--flows", "10us"]) == 2
    err = capsys.readouterr().err
    assert "flows: expected a whole number in [1, " in err and "1/128" not in err, err


def test_a_bad_file_under_a_command_line_value_exits_2(tmp_path, capsys):
    path = tmp_path / "f.toml"
    path.write_text('[ranges]\nflows = "0..10"\n')
    argv = ["check", str(path), "--flows", "5", "--rtt", "100us", "--quiet", "--no-recommend"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "line 2: flows: expected a whole number in [1, " in err, err
