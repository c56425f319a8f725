"""The phase-margin threshold is an angle in degrees: a percentage is refused, not read as a
fraction (``50%`` would otherwise be half a degree)."""

from __future__ import annotations

import pytest

from qcnmodel.cli import main
from qcnmodel.cli.check import parse_ranges


@pytest.mark.parametrize("text", ["50%", "50 %", "0.5%", "50%deg"])
def test_a_percentage_is_refused_naming_the_flag_and_the_unit(text, capsys):
    argv = ["check", "--preset", "802.1qau", "--flows", "10", "--rtt", "100us", "--no-recommend",
            "--pm-threshold", text, "--json"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "pm-threshold" in err and "degrees" in err and "%" in err
    with pytest.raises(ValueError, match=r"^pm-threshold: .*in degrees, not a percentage"):
        parse_ranges(None, None, text)


def test_a_percentage_in_the_ranges_table_is_refused_with_its_line(tmp_path):
    text = '[ranges]\nrtt = "100us"\npm_threshold = "50%"\n'
    with pytest.raises(ValueError, match=r"p\.toml, line 3: pm_threshold: .*not a percentage"):
        parse_ranges(None, None, None, {"rtt": "100us", "pm_threshold": "50%"},
                     tmp_path / "p.toml", text)  # fmt: skip


@pytest.mark.parametrize(("text", "deg"), [("30", 30.0), (30, 30.0), ("30deg", 30.0),
                                            ("45 degrees", 45.0), ("12.5°", 12.5),
                                            ("0", 0.0)])  # fmt: skip
def test_degrees_plain_or_with_a_degree_unit(text, deg):
    assert parse_ranges(None, None, text).pm_threshold == deg


@pytest.mark.parametrize("text", ["30rad", "abc", "90", "-1deg"])
def test_other_values_name_the_flag_and_the_range(text):
    with pytest.raises(ValueError, match=r"pm-threshold: .*\[0, 90\)"):
        parse_ranges(None, None, text)


def test_the_help_says_degrees_and_offers_no_percentage(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "phase margin in degrees for 'stable', in [0, 90): 30 or 30deg" in out
