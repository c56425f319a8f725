"""`--params FILE` (a QCN parameter TOML) for simulate, compare and sweep, as check and margins."""

import json
from pathlib import Path

import pytest
import xarray as xr

from qcnmodel.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SHORT = ["--duration", "20ms", "--set", "n_nodes=4", "--set", "hotspot_start=5ms"]
VOLATILE = {"wall_s", "events_per_s", "compile_s"}


def _summary(argv, capsys):
    assert main(argv) == 0
    return {k: v for k, v in json.loads(capsys.readouterr().out).items() if k not in VOLATILE}


def _qeq_file(tmp_path, qeq):
    path = tmp_path / "p.toml"
    path.write_text(f'preset = "stanford-baseline"\n[qcn]\nqeq = "{qeq}"\n')
    return str(path)


def test_simulate_params_file_equals_its_preset_and_reaches_the_run(tmp_path, capsys):
    base = ["simulate", "--scenario", "og-hotspot", *SHORT, "--json", "--no-progress"]
    by_file = _summary([*base, "--params", str(EXAMPLES / "stanford-baseline.toml")], capsys)
    by_name = _summary([*base, "--preset", "stanford-baseline"], capsys)
    assert by_file == by_name
    other = _summary([*base, "--params", _qeq_file(tmp_path, "100KB")], capsys)
    assert other["hot_queue_mean_bytes"] != by_name["hot_queue_mean_bytes"]


def test_compare_params_file(tmp_path, capsys):
    argv = ["compare", "--scenario", "og-hotspot", "--protocols", "qcn", *SHORT,
            "--out", str(tmp_path / "cmp"), "--json"]  # fmt: skip
    by_file = _summary([*argv, "--params", str(EXAMPLES / "netfpga-1g.toml")], capsys)
    by_name = _summary([*argv, "--preset", "netfpga-1g"], capsys)
    assert by_file["rows"] == by_name["rows"]


def test_sweep_params_file_analytical_and_simulator(tmp_path):
    def run(*extra, out):
        argv = ["sweep", *extra, "--out", str(tmp_path / out), "--quiet"]
        assert main(argv) == 0
        return xr.load_dataset(tmp_path / out, engine="h5netcdf")

    grid = ["--model", "qcn", "--grid", "rtt=50us,500us", "--grid", "n_flows=1,10"]
    by_file = run(*grid, "--params", str(EXAMPLES / "netfpga-1g.toml"), out="a.nc")
    by_name = run(*grid, "--preset", "netfpga-1g", out="b.nc")
    default = run(*grid, out="c.nc")
    xr.testing.assert_equal(by_file["phase_margin_deg"], by_name["phase_margin_deg"])
    assert not by_file["phase_margin_deg"].equals(default["phase_margin_deg"])
    sim = ["--scenario", "og-hotspot", "--grid", "seed=0", "--set", "n_nodes=4",
           "--set", "hotspot_start=0", "--duration", "20ms"]  # fmt: skip
    s_file = run(*sim, "--params", _qeq_file(tmp_path, "33KB"), out="d.nc")
    s_name = run(*sim, "--preset", "stanford-baseline", out="e.nc")
    xr.testing.assert_equal(s_file["hot_queue_mean_bytes"], s_name["hot_queue_mean_bytes"])


def test_preset_and_params_file_are_exclusive(capsys):
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        main(["simulate", "--scenario", "og-hotspot", "--preset", "802.1qau", "--params", "x"])
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["simulate", "--scenario", "og-hotspot", "--params", "missing.toml"], "missing.toml"),
        (["sweep", "--model", "dcqcn", "--grid", "rtt=50us", "--params", "EX"], "params"),
        (["compare", "--scenario", "og-hotspot", "--protocols", "qcn", "--params", "BAD"],
         "qeqq"),
    ],
)  # fmt: skip
def test_params_file_errors_exit_2(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text("[qcn]\nqeqq = 1\n")
    names = {"EX": str(EXAMPLES / "802.1qau.toml"), "BAD": str(tmp_path / "bad.toml")}
    assert main([names.get(a, a) for a in argv]) == 2
    assert needle in capsys.readouterr().err
