"""One range vocabulary: ``lo..hi:n[:log]`` means n log-spaced points in check, report and
sweep; a range without a point count is check's and report's own grid, and is refused by
sweep rather than guessed."""

import json

import pytest

from qcnmodel.cli import build_parser, main
from qcnmodel.cli.check import MAX_GRID_POINTS, grid_count
from qcnmodel.cli.report import report_config


def test_check_takes_a_point_count_and_says_what_it_analysed(capsys):
    argv = ["check", "--preset", "802.1qau", "--model", "fopdt", "--no-recommend", "--json"]
    code = main([*argv, "--rtt", "2us..1ms:7:log", "--flows", "1..100:5"])
    assert code in (0, 1)
    d = json.loads(capsys.readouterr().out)
    assert d["rtt_points"] == 7
    # 5 log-spaced counts from 1 to 100, rounded: 1, 3.16, 10, 31.6, 100
    assert d["flow_counts"] == [1, 3, 10, 32, 100]
    assert sorted(map(int, d["critical_rtt_s"])) == [1, 3, 10, 32, 100]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("2us..1ms:40:lin", "logarithmically"),
        ("2us..1ms:0", f"[2, {MAX_GRID_POINTS}], got 0"),
        ("2us..1ms:x", "whole number"),
        ("1ms:5", "follows a range"),
        ("2us..1ms:5:log:3", "logarithmically"),
        (f"2us..1ms:{MAX_GRID_POINTS + 1}", f"got {MAX_GRID_POINTS + 1}"),
    ],
)
def test_a_bad_point_count_names_the_field_and_the_form(value, words, capsys):
    code = main(["check", "--preset", "802.1qau", "--flows", "10", "--rtt", value,
                 "--no-recommend"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "rtt:" in err and words in err


def test_grid_count_leaves_plain_values_alone():
    assert grid_count("2us..1ms", "rtt") == ("2us..1ms", None)
    assert grid_count("100us", "rtt") == ("100us", None)
    assert grid_count(" 2us..1ms:12:LOG ", "rtt") == ("2us..1ms", 12)


def test_the_report_takes_the_point_counts():
    parse = build_parser().parse_args
    cfg = report_config(parse(["report", "--rtt", "2us..1ms:20:log", "--flows", "1..100:4"]))
    assert cfg.n_rtt == 20 and (cfg.rtt_min, cfg.rtt_max) == (2e-6, 1e-3)
    # 4 log-spaced counts from 1 to 100: 1, 4.64, 21.5, 100
    assert cfg.flows == (1, 5, 22, 100)
    with pytest.raises(ValueError, match="at least 2 points"):
        report_config(parse(["report", "--rtt", "2us..1ms:1"]))


@pytest.mark.parametrize("argv", [["--rtt", "20us..500us:1"], ["--flows", "1..20:1"]])
def test_a_one_point_range_is_refused_not_checked_at_its_low_end(argv, capsys, tmp_path):
    """lo..hi:1 computed lo alone and reported the verdict over the whole range: STABLE over
    RTT 20 us .. 500 us (exit 0) at N = 2, whose critical RTT is 241 us."""
    assert main(["check", "--preset", "802.1qau", "--model", "fopdt", *argv]) == 2
    assert "at least 2 points" in capsys.readouterr().err
    f = tmp_path / "p.toml"
    f.write_text(f'[ranges]\n{argv[0][2:]} = "{argv[1]}"\n')
    assert main(["check", str(f), "--model", "fopdt"]) == 2
    assert "at least 2 points" in capsys.readouterr().err


def test_a_file_range_may_carry_a_point_count(tmp_path, capsys):
    f = tmp_path / "p.toml"
    f.write_text('[ranges]\nrtt = "10us..1ms:9"\nflows = "2..20:3"\n')
    assert main(["check", str(f), "--model", "fopdt", "--no-recommend", "--json"]) in (0, 1)
    d = json.loads(capsys.readouterr().out)
    assert d["rtt_points"] == 9 and d["flow_counts"] == [2, 6, 20]


def test_sweep_refuses_a_range_without_its_point_count(capsys):
    code = main(["sweep", "--model", "fopdt", "--flows", "1..20", "--rtt", "100us",
                 "--out", "never.nc"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "needs its number of points" in err and "1..20:10:log" in err


def test_out_holds_the_same_result_as_json_in_text_mode(tmp_path, capsys):
    """--out beside the text output wrote the result without the ranges it covers (rtt_range_s,
    flows_range, rtt_points, flow_counts, capacity_bps): an archived file did not say what
    its verdict was over."""
    args = ["check", "--preset", "802.1qau", "--model", "fopdt", "--rtt", "50us..400us:4",
            "--flows", "2..20:3", "--rate", "5Gbps", "--no-recommend"]  # fmt: skip
    code = main([*args, "--out", str(tmp_path / "text.json")])
    capsys.readouterr()
    assert main([*args, "--json", "--out", str(tmp_path / "json.json")]) == code
    text = json.loads((tmp_path / "text.json").read_text())
    assert text == json.loads((tmp_path / "json.json").read_text())
    assert text["rtt_range_s"] == [50e-6, 400e-6] and text["flow_counts"] == [2, 6, 20]
    assert text["rtt_points"] == 4 and text["capacity_bps"] == 5e9
    assert main(["check", "--preset", "802.1qau", "--flows", "5..1"]) == 2
    assert "flows: need 1 <= lo <= hi" in capsys.readouterr().err
