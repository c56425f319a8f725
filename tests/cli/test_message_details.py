"""Messages that state the rule the input broke, and nothing wrong beside it."""

import pytest

import qcnmodel as qm
from qcnmodel.cli import main


def run(argv, capsys):
    code = main(argv)
    return code, capsys.readouterr().err


def test_a_suffix_in_the_wrong_case_is_pointed_to_its_right_case(capsys):
    code, err = run(["simulate", "--scenario", "og-hotspot", "--duration", "1ms",
                     "--out", "never.NC"], capsys)  # fmt: skip
    assert code == 2 and "did you mean '.nc'?" in err


@pytest.mark.parametrize("argv", [
    ["simulate", "--scenario", "og-hotspot", "--duration", "-1ms"],
    ["check", "--preset", "802.1qau", "--flows", "10", "--rtt", "100us", "--no-recommend",
     "--confirm", "-1s"],
])  # fmt: skip
def test_a_negative_time_is_refused_as_negative_not_with_a_wrong_bound(argv, capsys):
    # 0 s is refused for both (their ranges start above 0), so ">= 0 s" would be wrong
    code, err = run(argv, capsys)
    assert code == 2 and "cannot be negative" in err and ">= 0" not in err


def test_check_takes_report_s_yes_and_no_for_confirm(capsys):
    base = ["check", "--preset", "802.1qau", "--model", "fopdt", "--flows", "10", "--rtt",
            "100us", "--no-recommend", "--json"]  # fmt: skip
    code, _ = run([*base, "--confirm", "no"], capsys)
    assert code in (0, 1)
    code, err = run([*base, "--confirm", "maybe"], capsys)
    assert code == 2 and "confirm:" in err


def test_a_rule_between_fields_names_the_value_the_user_gave(capsys):
    # --rate sets DCQCN's capacity (its line rate), below the default min_rate of 10 Mb/s
    code, err = run(["margins", "--model", "dcqcn", "--flows", "1", "--rtt", "10us",
                     "--rate", "1Mbps"], capsys)  # fmt: skip
    assert code == 2 and "min_rate" in err and "capacity = 1e+06" in err


def test_a_linear_range_of_flows_that_is_not_whole_says_where_the_value_came_from(capsys):
    code, err = run(["sweep", "--model", "fopdt", "--flows", "1..20:10", "--rtt", "100us",
                     "--out", "never.nc"], capsys)  # fmt: skip
    assert code == 2 and "whole number >= 1" in err and "spaced linearly" in err


def test_dir_of_the_package_shows_no_internals():
    names = dir(qm)
    assert not [n for n in names if n.startswith("_") and not n.startswith("__")]
    assert "QCNFluidModel" in names and "simulate" in names


@pytest.mark.parametrize("text", ['[qcn]\n"w" = -3\n', "[qcn]\n'w' = -3\n", '"\u0175" = 3\n'])
def test_a_quoted_key_s_error_gives_its_line(text, tmp_path, capsys):
    f = tmp_path / "p.toml"
    f.write_text(text, encoding="utf-8")
    code, err = run(["check", str(f)], capsys)
    line = text.count("\n")  # the key sits on the file's last line
    assert code == 2 and f"line {line}:" in err
