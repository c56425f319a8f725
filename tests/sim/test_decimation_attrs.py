"""Decimated traces (``simulate(decimation=k)``, ``--decimate k``) say what bin they hold:
``bin_width_s`` the merged bin, ``bin_width_requested_s`` the bin asked for, ``bins_merged``
and ``decimation``, and ``last_bin_width_s`` the last, possibly shorter group (the words of
the memory limit's merge, docs/simulator.md)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from qcnmodel.cli import main
from qcnmodel.sim import simulate
from qcnmodel.sim.traces import decimate


def test_the_attributes_of_decimated_traces_name_the_merged_bin(tmp_path):
    # 7 bins of 1 ms, merged by 3: groups of 3, 3 and 1 bins
    path = tmp_path / "d.nc"
    argv = ["simulate", "--scenario", "og-hotspot", "--duration", "7ms", "--bin", "1ms",
            "--set", "n_nodes=3", "--engine", "oracle", "--decimate", "3", "--out", str(path),
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    with xr.open_dataset(path) as ds:
        a = dict(ds.attrs)
        t = ds["time"].values
    assert a["bin_width_s"] == pytest.approx(3e-3, rel=1e-12)  # rounding of 3 x 1 ms
    assert a["bin_width_requested_s"] == pytest.approx(1e-3, rel=1e-12)
    assert (int(a["bins_merged"]), int(a["decimation"])) == (3, 3)
    assert a["last_bin_width_s"] == pytest.approx(1e-3, rel=1e-12)
    np.testing.assert_allclose(t, [3e-3, 6e-3, 7e-3], rtol=1e-12)


def test_a_whole_number_of_groups_has_a_full_last_bin():
    r = simulate("og-hotspot", duration="6ms", bin_width="1ms", decimation=2,
                 overrides={"n_nodes": 3}, engine="oracle")  # fmt: skip
    a = r.dataset.attrs
    assert a["bin_width_s"] == a["last_bin_width_s"] == pytest.approx(2e-3, rel=1e-12)
    assert (a["bins_merged"], a["decimation"]) == (2, 2)
    undecimated = simulate("og-hotspot", duration="6ms", bin_width="1ms",
                           overrides={"n_nodes": 3}, engine="oracle").dataset  # fmt: skip
    for key in ("bin_width_requested_s", "bins_merged", "decimation", "last_bin_width_s"):
        assert key not in undecimated.attrs


def test_decimation_after_the_memory_limits_merge_counts_both():
    # traces already merged by 4 (1 ms asked, 4 ms kept), then decimated by 2: 8 ms bins of
    # 8 requested bins; 5 kept bins leave a last group of one 4 ms bin
    ds = xr.Dataset({"drops": ("time", np.arange(5))}, coords={"time": 4e-3 * np.arange(1, 6)},
                    attrs={"bin_width_s": 4e-3, "bin_width_requested_s": 1e-3,
                           "bins_merged": 4})  # fmt: skip
    out = decimate(ds, 2)
    assert out.attrs["bin_width_s"] == pytest.approx(8e-3, rel=1e-12)
    assert out.attrs["bin_width_requested_s"] == 1e-3
    assert (out.attrs["bins_merged"], out.attrs["decimation"]) == (8, 2)
    assert out.attrs["last_bin_width_s"] == pytest.approx(4e-3, rel=1e-12)
    assert out["drops"].values.tolist() == [0 + 1, 2 + 3, 4]  # counts: sums of the groups
