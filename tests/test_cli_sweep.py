"""`qcnmodel sweep`: analytical and simulator grids, resume, errors."""

import numpy as np
import pytest
import xarray as xr

from qcnmodel.cli import main


def test_analytical_sweep_matches_margins(tmp_path):
    out = tmp_path / "qcn.nc"
    assert (
        main(
            [
                "sweep",
                "--model",
                "qcn",
                "--grid",
                "rtt=10us..1ms:5:log",
                "--grid",
                "n_flows=1,10",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    ds = xr.open_dataset(out, engine="h5netcdf")
    assert ds["phase_margin_deg"].dims == ("rtt", "n_flows")
    # Same numbers as one direct model evaluation (identical arithmetic).
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.params import QCNParams

    m = QCNFluidModel(QCNParams(), rtt=float(ds.rtt[2]), n_flows=10).loop().margins()
    assert float(ds["phase_margin_deg"].isel(rtt=2).sel(n_flows=10)) == pytest.approx(
        m.phase_margin_deg, rel=1e-12
    )
    # PM falls with RTT at fixed N (the delay only removes phase).
    assert np.all(np.diff(ds["phase_margin_deg"].sel(n_flows=10).values) < 0)
    assert ds.attrs["qcnmodel_version"]
    ds.close()
    # The checkpoint (kept on interruption, to resume) is deleted once the result is saved.
    assert [p.name for p in tmp_path.iterdir()] == ["qcn.nc"]


def test_finished_sweep_removes_its_checkpoint_an_interrupted_one_keeps_it(tmp_path, monkeypatch):
    import qcnmodel.studies.sweep as sw

    out = tmp_path / "m.nc"
    args = ["sweep", "--model", "qcn", "--grid", "rtt=10us,100us,1ms", "--out", str(out),
            "--quiet"]  # fmt: skip
    real = sw.save_dataset

    def interrupted(ds, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(sw, "save_dataset", interrupted)  # every point done, then Ctrl-C
    assert main(args) == 130
    log = tmp_path / "m.nc.partial" / "points.jsonl"
    assert log.read_text().count("\n") == 3  # kept: a rerun resumes from it
    monkeypatch.setattr(sw, "save_dataset", real)
    assert main(args) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["m.nc"]


def test_explicit_checkpoint_with_other_files_keeps_the_directory(tmp_path):
    cp = tmp_path / "cp"
    cp.mkdir()
    (cp / "notes.txt").write_text("mine")
    args = ["sweep", "--model", "qcn", "--grid", "rtt=10us,1ms", "--out",
            str(tmp_path / "m.nc"), "--checkpoint", str(cp), "--quiet"]  # fmt: skip
    assert main(args) == 0
    assert sorted(p.name for p in cp.iterdir()) == ["notes.txt"]


def test_simulator_sweep(tmp_path):
    out = tmp_path / "og.nc"
    assert (
        main(
            [
                "sweep",
                "--scenario",
                "og-hotspot",
                "--grid",
                "seed=0,1",
                "--set",
                "n_nodes=4",
                "--set",
                "hotspot_start=0",
                "--duration",
                "20ms",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    ds = xr.open_dataset(out, engine="h5netcdf")
    assert ds["frames_sent"].dims == ("seed",) and np.all(ds["frames_sent"] > 0)
    assert ds.attrs["seeds"] == "[0, 1]"
    # Different seeds give different runs.
    assert ds["frames_sent"].values[0] != ds["frames_sent"].values[1]
    ds.close()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--model", "qcn", "--grid", "rtt=-1us,2us"], "rtt"),
        (["--scenario", "og-hotspt", "--grid", "rtt=5us"], "og-hotspot"),
        (["--model", "qcn", "--grid", "qeqq=1,2"], "qeqq"),
        (["--model", "qcn", "--grid", "rtt=1us", "--out", "x.csv"], "out"),
    ],
)
def test_errors(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *argv, "--quiet"]) == 2
    assert needle in capsys.readouterr().err


def test_analytical_sweep_critical_rtt_subtracts_the_sampling_lag(tmp_path):
    # regression: the sweep reported the critical loop delay (rtt + Ts/2), not the RTT
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models.qcn import QCNFluidModel

    out = tmp_path / "lag.nc"
    argv = ["sweep", "--model", "qcn", "--variant", "paper", "--grid", "rtt=100us",
            "--grid", "n_flows=10", "--set", "model.sampling_lag=true", "--out", str(out),
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    ds = xr.open_dataset(out, engine="h5netcdf")
    model = QCNFluidModel(rtt=100e-6, n_flows=10, fidelity="paper", sampling_lag=True)
    search = critical_rtt(lambda r: model.replace(rtt=r).loop(), rtt_min=1e-6, rtt_max=1e-2)
    assert float(ds["critical_rtt_s"].squeeze()) == pytest.approx(search, rel=1e-8)
    assert ds.attrs["model_variant"] == "paper+sampling_lag=True"
    ds.close()


def test_the_command_line_skips_the_final_collection_and_tests_do_not():
    """The process's own command line (``main()``) freezes the collector's objects at exit;
    a call with ``argv`` (as tests make, in their own process) leaves the collector alone."""
    import subprocess
    import sys

    code = ("import atexit, gc, sys\n"
            "from qcnmodel.cli import main\n"
            "sys.argv = ['qcnmodel']\n"
            "mode = {mode!r}\n"
            "main() if mode == 'argv-none' else main([])\n"
            "atexit._run_exitfuncs()\n"
            "print(gc.get_freeze_count() > 0)\n")  # fmt: skip
    for mode, frozen in (("argv-none", "True"), ("argv-given", "False")):
        out = subprocess.run([sys.executable, "-c", code.format(mode=mode)], text=True,
                             capture_output=True, check=True).stdout  # fmt: skip
        assert out.strip().splitlines()[-1] == frozen, mode


def test_boolean_and_choice_fields_can_be_swept(tmp_path, capsys):
    # a switch and a choice of the protocol are grid axes like any number; the rounding
    # quantiser gives a different loop than the floor (the values are not parsed as numbers)
    out = tmp_path / "q.nc"
    grid = ["--grid", "quantiser=floor63,round63", "--grid", "hai=true,off"]
    assert main(["sweep", "--model", "qcn", *grid, "--out", str(out), "--quiet"]) == 0
    with xr.open_dataset(out) as ds:
        assert list(ds.quantiser.values) == ["floor63", "round63"]
        assert list(ds.hai.values) == [True, False]
        pm = ds.phase_margin_deg.sel(hai=True).values
        assert np.all(np.isfinite(pm)) and pm[0] != pm[1]


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("hai=maybe", "hai: expected a boolean"),
        ("quantiser=bogus", "quantiser: unknown value 'bogus' (allowed: floor63, round63"),
    ],
)
def test_bad_boolean_or_choice_grid_values_exit_2(spec, needle, capsys, tmp_path):
    argv = ["sweep", "--model", "qcn", "--grid", spec, "--out", str(tmp_path / "x.nc")]
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_protocol_fields_take_units_in_a_grid():
    # DCQCN's and the protocols' own fields were read as plain numbers: '1KB' was refused
    from qcnmodel.studies.points import value_parser

    assert [value_parser("kmin")(v, "kmin") for v in ("1KB", "2000")] == [1000.0, 2000.0]
    assert value_parser("cnp_interval")("50us", "cnp_interval") == pytest.approx(50e-6)
    assert value_parser("nc_interval")("100us", "nc_interval") == pytest.approx(100e-6)
    assert value_parser("proto.qeq")("100KB", "proto.qeq") == 100e3
    with pytest.raises(ValueError, match="nc_interval: cannot parse 'fast' as a number"):
        value_parser("nc_interval")("fast", "nc_interval")


def test_a_model_sweep_says_how_each_point_was_judged():
    # an overloaded point had critical_rtt NaN, valid True and nothing saying why
    from qcnmodel.studies.points import analysis_point

    over = analysis_point("qcn", "802.1qau", {}, rtt=1e-4, n_flows=2000)
    assert over["boundary_method"] == "overload" and over["overloaded"] > 1
    assert over["stable"] is False and np.isnan(over["critical_rtt_s"])
    fop = analysis_point("fopdt", "802.1qau", {}, rtt=1e-4, n_flows=10)
    assert fop["boundary_method"] == "linearisation" and np.isnan(fop["overloaded"])


def test_a_bad_seed_in_a_grid_names_the_range():
    from qcnmodel.studies.points import value_parser

    with pytest.raises(ValueError, match=r"seed: expected a whole number >= 0, got '-1'"):
        value_parser("seed")("-1", "seed")


def test_a_scenario_grid_value_names_the_scenarios_range():
    # n_nodes=2..4:5 made 2.5, refused as "expected a whole number" without [2, 1000]
    from qcnmodel.studies.points import value_parser

    parse = value_parser("n_nodes", "og-hotspot")
    assert parse("3", "n_nodes") == 3
    with pytest.raises(ValueError, match=r"n_nodes: must be a whole number in 2\.\.1000"):
        parse(2.5, "n_nodes")
    assert value_parser("link_rate", "og-hotspot")("1Gbps", "link_rate") == 1e9
