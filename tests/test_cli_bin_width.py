"""An explicit ``--bin`` is kept as given or refused (naming ``bin`` and the smallest width
whose traces fit), never merged silently; the default bin is still merged to fit."""

from __future__ import annotations

import re

import pytest

from qcnmodel import config
from qcnmodel.cli import main

#: a trace memory limit small enough for a 20 ms run to exceed it at a 200 ns bin
LIMIT = 40 << 20


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setitem(config.defaults, "sim.max_trace_bytes", LIMIT)


def _simulate(tmp_path, *extra):
    return ["simulate", "--scenario", "og-hotspot", "--duration", "20ms", "--engine", "kernel",
            "--quiet", "--out", str(tmp_path / "t.nc"), *extra]  # fmt: skip


def test_an_explicit_bin_that_does_not_fit_is_refused_with_the_smallest_that_does(
    tmp_path, capsys, small_limit
):
    import xarray as xr

    assert main(_simulate(tmp_path, "--bin", "200ns")) == 2
    err = capsys.readouterr().err
    assert "bin: 2e-07 s over 0.02 s is 100000 trace bins" in err, err
    assert "merged" not in err.split("error:", 1)[0]  # refused, not merged with a note
    smallest = float(re.search(r"use --bin >= ([0-9.e+-]+) s", err).group(1))
    assert not (tmp_path / "t.nc").exists()
    below = f"{round(smallest * 1e9) - 1}ns"
    assert main(_simulate(tmp_path, "--bin", below)) == 2  # the bound is the smallest
    capsys.readouterr()
    at = f"{round(smallest * 1e9)}ns"
    assert main(_simulate(tmp_path, "--bin", at)) == 0
    assert "bins merged" not in capsys.readouterr().err
    with xr.open_dataset(tmp_path / "t.nc") as ds:
        assert ds.attrs["bin_width_s"] == pytest.approx(smallest)
        assert "bins_merged" not in ds.attrs


def test_compare_refuses_an_explicit_bin_likewise(tmp_path, capsys, small_limit):
    argv = ["compare", "--scenario", "og-hotspot", "--protocols", "qcn,none", "--duration",
            "20ms", "--bin", "200ns", "--out", str(tmp_path / "c"), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    assert "use --bin >= " in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_the_default_bin_is_left_to_the_simulator_to_merge():
    """Without --bin the simulator's own plan (merging the default bin to fit) is used
    unchanged; with it, the refusing plan is in force only within the block."""
    from qcnmodel.cli.simulate import explicit_bin_width
    from qcnmodel.sim import engines

    original = engines.plan_traces
    with explicit_bin_width(False):
        assert engines.plan_traces is original
    with pytest.raises(RuntimeError), explicit_bin_width(True):
        assert engines.plan_traces is not original
        raise RuntimeError
    assert engines.plan_traces is original
