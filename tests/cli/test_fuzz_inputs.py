"""Regression tests of a fuzzing pass over the command line: each input below used to end in
a traceback, a silent no-op or clamp, work started before the refusal, or a message that did
not name the flag. Each now exits 2 with one line naming the field (and, where there is one,
the allowed range) and no traceback. All run in-process in well under a second: the refusals
come before any model or simulation work.
"""

from __future__ import annotations

import errno
import json
import tempfile
from pathlib import Path

import pytest

from qcnmodel.cli import main

ROOT = Path(__file__).resolve().parents[2]
SIM = ["simulate", "--scenario", "og-hotspot", "--duration", "1ms"]
SWEEP = ["sweep", "--model", "qcn"]


def _err(capsys) -> str:
    """The one error line on stderr. A first compilation's notice ("qcnmodel: compiling ...",
    once per fresh cache) may precede it: whether it shows depends on which tests ran before
    in this process, so it is set aside."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("qcnmodel: compiling ")]
    assert len(lines) == 1, err
    return lines[0] + "\n"


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        # an empty path was taken as "not given" (no output, default preset) or as the cwd
        (["margins", "--out", ""], ["out", "empty"]),
        ([*SIM, "--out", ""], ["out", "empty"]),
        ([*SIM, "--params", ""], ["params", "empty"]),
        (["figures", "--out", "", "--only", "analysis"], ["out", "empty"]),
        (
            ["compare", "--scenario", "og-hotspot", "--protocols", "qcn", "--out", ""],
            ["out", "empty"],
        ),
        (["check", ""], ["PARAMS.toml", "empty"]),
        ([*SWEEP, "--rtt", "1us", "--scheduler", ""], ["scheduler", "empty"]),
        # a value given twice: one of them won silently
        (["margins", "--set", "w=2", "--w", "4"], ["w", "given twice", "--w"]),
        (["margins", "--set", "model.rtt=5us", "--rtt", "10us"], ["rtt", "given twice"]),
        (["margins", "--set", "capacity=1Gbps", "--rate", "10Gbps"], ["capacity", "--rate"]),
        (
            [
                "margins",
                "--model",
                "dcqcn",
                "--set",
                "model.linearisation=paper",
                "--linearisation",
                "exact",
            ],
            ["linearisation", "given twice"],
        ),
        (["margins", "--set", "w=2", "--set", "w=3"], ["--set w", "given twice"]),
        (
            ["compare", "--scenario", "og-hotspot", "--protocols", "qcn,qcn"],
            ["protocols", "'qcn' given twice"],
        ),
        ([*SIM, "--quiet", "--progress"], ["progress", "--quiet"]),
        # values the run would have ignored or rounded away
        ([*SIM, "--protocol", "dcqcn", "--set", "w=4"], ["w", "QCN parameter", "dcqcn"]),
        ([*SIM, "--protocol", "ecm", "--set", "quantiser=msb6"], ["quantiser", "'ecm'"]),
        ([*SIM, "--set", "timer=1ps"], ["timer", "[1e-9, 1e+09] s"]),
        ([*SIM, "--protocol", "qcn-p", "--set", "interval=1ps"], ["interval", "[1e-9"]),
        ([*SIM, "--window", "5ms:10ms", "--out", "x.csv"], ["window", "no trace bin"]),
        ([*SIM, "--decimate", "10", "--out", "x.csv"], ["decimation", "[1, 1]"]),
        # a message naming another field, or none
        (
            ["simulate", "--scenario", "og-hotspot", "--duration", "1ps"],
            ["duration", "[1e-9, 1e4] s"],
        ),
        (
            [
                "compare",
                "--scenario",
                "og-hotspot",
                "--protocols",
                "qcn",
                "--duration",
                "1ps",
                "--out",
                "x.d",
            ],
            ["duration", "[1e-9, 1e4] s"],
        ),
        (["margins", "--flows", "1e400"], ["flows", "not a finite number"]),
        (["check", "--preset", "802.1qau", "--pm-threshold", "nan"], ["pm-threshold", "finite"]),
        (["check", "--preset", "802.1qau", "--rtt", "0us..1ms"], ["rtt", "(0, 1] s"]),
        ([*SWEEP, "--grid", "=1,2"], ["--grid", "empty name"]),
        ([*SWEEP, "--scheduler", "nope", "--rtt", "1us"], ["scheduler", "HOST:PORT"]),
        ([*SWEEP, "--scheduler", "tcp://a:99999", "--rtt", "1us"], ["scheduler", "Port"]),
        # grid values beyond the command line's limits were found after the sweep started
        ([*SWEEP, "--grid", "n_flows=1,10000000"], ["n_flows", "[1, 100000]", "cli.max_flows"]),
        ([*SWEEP, "--grid", "rtt=1us,2s"], ["rtt", "(0, 1] s", "cli.max_rtt"]),
        # a whole-number range beyond int64 reached numpy's linspace as objects (traceback)
        ([*SWEEP, "--grid", "n_flows=1e308..1e308:1"], ["n_flows", "cli.max_flows"]),
        # a point outside the model's domain: scipy's bare root-finder message named nothing
        (
            ["margins", "--model", "dcqcn", "--flows", "100000"],
            ["flows=100000", "dcqcn model: no equilibrium"],
        ),
        # a timer of 1e-320 s overflowed the age grid (OverflowError, nothing named)
        (["margins", "--set", "timer=1e-320"], ["too short to resolve", "timer = 9.99989e-321 s"]),
        (
            ["check", "examples/802.1qau.toml", "--set", "timer=1e-320"],
            ["too short to resolve", "timer = 9.99989e-321 s"],
        ),
        (["margins", "--set", "bc_limit=1e-320"], ["too short to resolve", "bc_limit = "]),
        # the DCQCN model's "math domain error" and a RuntimeWarning line named nothing
        (["margins", "--model", "dcqcn", "--set", "cnp_interval=1e-320"], ["cnp_interval = "]),
        (
            ["margins", "--model", "dcqcn", "--set", "line_rate=1e300"],
            ["line_rate", "(0, 1e+13] bit/s"],
        ),  # fmt: skip
        # fr_th beyond the stages the packet-fidelity model follows (negative dimensions);
        # without --variant, margins answers with the published equations (as check does)
        (
            ["margins", "--set", "fr_th=100", "--variant", "packet"],
            ["fr_th: at most 48", "got 100"],
        ),
        # a report of one RTT: what it needs, and where one RTT is answered
        (["report", "--rtt", "100us..100us"], ["rtt:", "lo < hi", "qcnmodel check --rtt"]),
        # endless input files were read without end (MemoryError)
        (["check", "/dev/zero"], ["PARAMS.toml", "/dev/zero", "device"]),
        ([*SIM[:1], "--topology", "/dev/zero"], ["topology", "is a device"]),
        # grid specs: trailing parts were ignored, a repeated value made two points one label
        ([*SWEEP, "--grid", "rtt=1us..1ms:3:log:extra"], ["--grid rtt", "lo..hi:n[:log]"]),
        ([*SWEEP, "--grid", "rtt=1us,1000ns"], ["--grid rtt", "more than once"]),
        ([*SWEEP, "--grid", "rtt=1us..1us:3"], ["--grid rtt", "more than once"]),
        # a unit taking a finite number beyond the float range: the limit is named
        (["margins", "--rate", "1e300Gbps"], ["rate", "cli.max_rate"]),
        (["margins", "--rtt", "1e308min"], ["rtt", "cli.max_rtt"]),
        # the first hardening pass (units, ranges, grids, seeds, outputs)
        (["margins", "--flows", "inf"], ["flows"]),
        (["margins", "--flows", "nan"], ["flows"]),
        (["margins", "--w", "2^99999"], ["w", "finite"]),
        (["margins", "--params", "examples/"], ["params", "directory"]),
        (["margins", "--rate", "1e300"], ["rate", "unit"]),
        (["margins", "--rtt", "1e20s"], ["rtt", "cli.max_rtt"]),
        (
            ["simulate", "--scenario", "og-hotspot", "--duration", "1e20s"],
            ["duration", "cli.max_time"],
        ),  # fmt: skip
        (["margins", "--rtt", "1e6s"], ["rtt", "cli.max_rtt"]),
        (["margins", "--rtt", "5"], ["rtt", "give a unit, e.g. 5us"]),
        (["margins", "--rtt", "2us..1ms"], ["rtt", "one value"]),
        (["check", "examples/802.1qau.toml", "--rtt", "2..5"], ["rtt", "give a unit"]),
        # no equilibrium (a timer that never fires): the check names the fields set away
        # from the defaults
        (["check", "examples/802.1qau.toml", "--set", "timer=1e308"], ["timer", "(0, 10000] s"]),
        (["simulate", "--scenario", "og-hotspot", "--seed", "99999999999999999999"], ["seed"]),
        (["simulate", "--scenario", "og-hotspot", "--seed", "1.5"], ["seed"]),
        (["simulate", "--scenario", "og-hotspot", "--decimate", "0"], ["decimate", ">= 1"]),
        (["simulate", "--scenario", "og-hotspot", "--decimate", "-1"], ["decimate", ">= 1"]),
        (["simulate", "--scenario", "og-hotspot", "--window", "5ms:1ms"], ["window", "T0 < T1"]),
        (["simulate", "--scenario", "og-hotspot", "--duration", "1"], ["duration", "unit"]),
        (["simulate", "--scenario", "og-hotspot", "--out", "x.parquet"], ["out", ".nc, .csv"]),
        (
            ["sweep", "--model", "qcn", "--grid", "rtt=1us..1ms:100000000"],
            ["rtt", "studies.max_sweep_points", "1,000,000"],
        ),  # fmt: skip
        (["sweep", "--model", "qcn", "--grid", "n_flows=1..10:3"], ["n_flows", "whole number"]),
        (
            ["sweep", "--model", "qcn", "--grid", "rtt=10us", "--duration", "1s"],
            ["duration", "simulator"],
        ),  # fmt: skip
        (
            ["sweep", "--model", "qcn", "--grid", "rtt=10us", "--protocol", "ecm"],
            ["protocol", "simulator"],
        ),  # fmt: skip
        (["sweep", "--model", "qcn", "--grid", "seed=0,1"], ["seed", "simulator"]),
        (["sweep", "--model", "qcn", "--grid", "rtt=10us", "--out", "x.parquet"], ["out"]),
        (["sweep", "--model", "qcn", "--grid", "rtt=10us", "--jobs", "0"], ["jobs"]),
        (["margins", "--jobs", "many"], ["jobs", "whole number"]),
        (["sweep", "--model", "qcn", "--rtt", "5..10us:3"], ["rtt", "give a unit"]),
        # --set and --grid values of the operating point pass their flag's check (a unit,
        # the command line's limits); a bare number, or one beyond them, was accepted
        (["margins", "--set", "rtt=5"], ["rtt", "no unit", "5us"]),
        (["margins", "--set", "rtt=5s"], ["rtt", "(0, 1] s", "cli.max_rtt"]),
        (["margins", "--set", "model.rtt=2s"], ["model.rtt", "(0, 1] s"]),
        (["margins", "--model", "fopdt", "--set", "rtt=1e9s"], ["rtt", "(0, 1] s"]),
        (["margins", "--set", "capacity=5"], ["capacity", "no unit", "5Gbps"]),
        (["margins", "--set", "capacity=1e30Gbps"], ["capacity", "bit/s", "cli.max_rate"]),
        (["margins", "--set", "n_flows=0"], ["n_flows", "[1, 100000]", "cli.max_flows"]),
        ([*SWEEP, "--grid", "rtt=0.0001"], ["--grid rtt", "no unit", "0.0001s or 100us"]),
        ([*SWEEP, "--rtt", "10us", "--grid", "capacity=5,10"], ["--grid capacity", "no unit"]),
        ([*SWEEP, "--rtt", "10us", "--set", "rtt=5us"], ["rtt", "given twice", "--set"]),
        ([*SWEEP, "--rtt", "10us", "--set", "capacity=0Gbps"], ["capacity", "(0, 1e+13]"]),
        (["check", "--preset", "802.1qau", "--confirm", "5"], ["confirm", "no unit", "5s"]),
        # a swept value also fixed by --set: the --set was dropped silently
        ([*SWEEP, "--grid", "w=1,2", "--set", "w=3", "--rtt", "10us"], ["w", "given twice"]),
        # a reversed range and empty list items (dropped silently)
        ([*SWEEP, "--grid", "rtt=1ms..2us:3"], ["--grid rtt", "lo <= hi"]),
        ([*SWEEP, "--grid", "rtt=10us,,20us"], ["--grid rtt", "empty item"]),
        ([*SWEEP, "--grid", "w=1,2,", "--rtt", "10us"], ["--grid w", "empty item"]),
        (
            ["compare", "--scenario", "og-hotspot", "--protocols", "qcn,,ecm"],
            ["protocols", "empty item"],
        ),
        # an empty preset meant the default one
        (["check", "--preset", ""], ["preset", "empty", "802.1qau", "seed004"]),
        (["margins", "--preset", " "], ["preset", "empty"]),
        # messages naming another field or a wrong hint
        (["margins", "--rtt", "0s"], ["rtt:", "(0, 1] s", "cli.max_rtt"]),
        (["margins", "--rate", "1e9"], ["rate", "1e9bps or 1Gbps"]),
    ],
)
def test_bad_input_exits_2_naming_the_field(argv, needles, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = [str(tmp_path / a) if a.startswith("x.") else a for a in argv]
    assert main(argv) == 2
    err = _err(capsys)
    for needle in needles:
        assert needle in err, err


def test_checkpoint_that_is_a_file_is_refused_before_the_sweep(tmp_path, capsys):
    clash = tmp_path / "cp"
    clash.write_text("x")
    argv = [*SWEEP, "--rtt", "1us", "--out", str(tmp_path / "s.nc"), "--checkpoint", str(clash)]
    assert main(argv) == 2
    assert "checkpoint" in _err(capsys)
    assert not (tmp_path / "s.nc").exists()


def test_checkpoint_in_a_missing_folder_is_refused(tmp_path, capsys):
    argv = [*SWEEP, "--rtt", "1us", "--out", str(tmp_path / "s.nc"),
            "--checkpoint", str(tmp_path / "no" / "cp")]  # fmt: skip
    assert main(argv) == 2
    assert "checkpoint: folder" in _err(capsys)
    assert not (tmp_path / "no").exists()  # not created on the way


def test_validate_figures_folder_is_checked_before_the_run(tmp_path, capsys):
    argv = ["validate", "--quick", "--out", str(tmp_path / "v"),
            "--figures", str(tmp_path / "no" / "f")]  # fmt: skip
    assert main(argv) == 2
    assert "figures: folder" in _err(capsys)
    assert not (tmp_path / "no").exists()


def test_an_unwritable_folder_is_found_before_any_work(tmp_path, capsys, monkeypatch):
    # The permission bits pass (as for root, or on a read-only mount): the probe write fails.
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["margins", "--out", str(tmp_path / "m.json")]) == 2
    err = _err(capsys)
    assert "out: cannot write in folder" in err and "Read-only" in err


def test_the_probe_leaves_nothing_behind(tmp_path, capsys):
    assert main(["margins", "--rtt", "100us", "--out", str(tmp_path / "m.json")]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_a_short_run_gets_a_default_bin_from_the_api(capsys):
    # 5 ns: the default bin is a tenth of the run, floored at the 1 ns clock tick
    assert main(["simulate", "--scenario", "og-hotspot", "--duration", "5ns", "--json"]) == 0
    assert '"duration_s": 5e-09' in capsys.readouterr().out


def test_jobs_beyond_four_per_core_are_refused(capsys, monkeypatch):
    # --jobs 999 forked up to 999 workers on a 2-core machine
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert main(["margins", "--rtt", "100us", "--jobs", "9"]) == 2
    assert "jobs: expected a whole number in [1, 8]" in _err(capsys)
    assert main(["margins", "--rtt", "100us", "--jobs", "8"]) == 0


def test_the_same_value_twice_is_accepted(capsys):
    assert main(["margins", "--flows", "10", "--flows", "10", "--rtt", "100us"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv",
    [
        ["margins", "--rtt", "0.1ms", "--rtt", "0.2ms"],
        ["margins", "--rtt", "1ms", "--rtt-range", "2ms"],
        ["margins", "--model", "qcn", "--model", "fopdt"],
        ["simulate", "--scenario", "og-hotspot", "--scenario", "ig-hotspot"],
    ],
)
def test_a_single_value_flag_given_twice_is_a_usage_error(argv, capsys):
    # argparse kept the last value silently; now a usage error (argparse exits 2 itself)
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = _err(capsys)
    assert "given twice" in err and argv[1] in err


@pytest.mark.slow  # a whole fix search (~45 s on a slow 2-core machine)
def test_a_fix_search_from_zero_weight_answers(capsys):
    # W = 0 (no derivative term) is a valid setting; the fix search ranks changes by their
    # relative size, which a current value of 0 does not have
    argv = ["check", str(ROOT / "examples/802.1qau.toml"), "--set", "w=0.0", "--json"]
    assert main(argv) == 1  # unstable; the search ran over every field, w from 0 included
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "unstable" and "w" in out["searched"]
    assert all(f["current"] == 0.0 and f["value"] > 0.0
               for f in out["recommendations"] if f["field"] == "w")  # fmt: skip
    # a recommended change holds a standing queue at every checked N (w = 64, which has
    # none from N = 8, was once recommended here)
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.params import QCNParams

    for f in out["recommendations"]:
        p = QCNParams(w=0.0).replace(**{f["field"]: f["value"]})
        for n in (2, 10, 100):
            assert QCNFluidModel(p, n_flows=n).fixed_point()["q"] > 0


def test_bad_values_in_the_ranges_table_name_the_file_and_line(tmp_path, capsys):
    for body, needles in (
        ("pm_threshold = 500", ["[0, 90)"]),
        ('capacity = "0Gbps"', ["capacity:", "cli.max_rate"]),
        ('capacity = "5"', ["capacity:", "no unit"]),  # was 5 bit/s
    ):
        f = tmp_path / "r.toml"
        f.write_text(f"[qcn]\n\n[ranges]\n{body}\n")
        assert main(["check", str(f), "--no-recommend"]) == 2
        err = _err(capsys)
        assert f"{f}, line 4: " in err and all(n in err for n in needles), err


def test_out_below_a_file_says_it_is_not_a_folder(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    assert main(["margins", "--out", str(tmp_path / "afile" / "m.json")]) == 2
    err = _err(capsys)
    assert "is not a folder" in err and "does not exist" not in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["margins", "--params", "{fifo}"], "params:"),
        (["check", "{fifo}"], "PARAMS.toml:"),
        (["check", "--params", "{fifo}"], "params:"),
        (["simulate", "--topology", "{fifo}"], "topology:"),
    ],
)
def test_a_named_pipe_as_input_file_is_refused(argv, flag, tmp_path, capsys):
    # reading it waited for a writer, without end
    import os

    fifo = tmp_path / "p.toml"
    os.mkfifo(fifo)
    assert main([a.format(fifo=fifo) for a in argv]) == 2
    err = _err(capsys)
    assert flag in err and "named pipe" in err


def test_a_report_into_a_used_folder_removes_its_own_stale_figures(tmp_path, monkeypatch):
    # an earlier --confirm yes left verdict_confirmation.png; a later report without it
    # showed none but left the file beside the ones it drew
    from qcnmodel.cli import report

    figs = tmp_path / "rep" / "figures"
    figs.mkdir(parents=True)
    for name in ("bode.png", "verdict_confirmation.png", "mine.png"):
        (figs / name).write_text("old")

    def fake_write_report(out, cfg, progress, command):
        (figs / "bode.png").write_text("new")
        return {"html": "h", "markdown": "m", "margins": "n", "figures": [str(figs / "bode.png")]}

    monkeypatch.setattr("qcnmodel.studies.report.write_report", fake_write_report)
    monkeypatch.setattr(report, "report_config", lambda args: None)
    assert main(["report", "--out", str(tmp_path / "rep"), "--quiet"]) == 0
    assert sorted(p.name for p in figs.iterdir()) == ["bode.png", "mine.png"]  # foreign kept


def test_the_report_figure_list_names_every_figure_the_report_draws():
    import re

    from qcnmodel.cli.report import REPORT_FIGURES

    src = "".join((ROOT / "qcnmodel/studies" / f).read_text()
                  for f in ("report.py", "report_figures.py", "report_packet.py"))  # fmt: skip
    drawn = set(re.findall(r'figdir / "([^"]+)"', src))
    assert drawn and drawn <= set(REPORT_FIGURES)


def test_a_zarr_sweep_prints_no_zarr_warning(tmp_path, capsys):
    # zarr 3 warned on every consolidated store written (harmless; stderr of a normal run)
    import warnings

    argv = ["sweep", "--model", "fopdt", "--rtt", "10us", "--flows", "1", "--quiet",
            "--out", str(tmp_path / "s.zarr")]  # fmt: skip
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(argv) == 0
    assert not [w for w in seen if "Consolidated metadata" in str(w.message)]
    assert "Consolidated metadata" not in capsys.readouterr().err


@pytest.mark.parametrize(("change", "n"), [("qeq=1e-320", 4), ("w=64", 10)])
def test_a_set_point_the_mean_field_cannot_hold_is_judged_by_the_trajectories(change, n, capsys):
    # a set point below a frame, or W = 64: the mean field balances only below an empty queue
    # (no linearised loop; these once exited 2 as bad input); the model's trajectories from
    # idle still run and answer, and the output says why there are no margins
    assert main(["margins", "--set", change, "--flows", str(n), "--rtt", "50us"]) == 0
    out = capsys.readouterr().out
    assert "no equilibrium with a standing queue" in out
    assert "judged by         the model's trajectories" in out
    argv = ["check", "examples/802.1qau.toml", "--set", change, "--flows", f"{n}..{n}",
            "--rtt", "20us..50us", "--no-recommend", "--json"]  # fmt: skip
    assert main(argv) in (0, 1)
    res = json.loads(capsys.readouterr().out)
    assert res["no_standing_queue"] == [n] and res["judged_by_trajectories"] == [n]
