"""The sweep engine: grid assembly, joblib and dask execution, checkpoint/resume."""

import json

import numpy as np
import pytest

from qcnmodel.studies.sweep import parse_grid_spec, save_dataset, sweep
from qcnmodel.units import parse_time


def poly(a, b, scale=1.0):
    return {"y": scale * (a * 10 + b), "pos": a * b > 0}


CALLS = []


def counting(a, b):
    CALLS.append((a, b))
    return {"y": a + b}


def test_grid_assembly_and_attrs():
    ds = sweep(poly, {"a": [1, 2, 3], "b": [-1, 1]}, fixed={"scale": 2.0}, attrs={"seeds": [0, 1]})
    assert ds["y"].dims == ("a", "b")
    np.testing.assert_array_equal(ds["y"].values, 2.0 * (np.array([[1], [2], [3]]) * 10 + [-1, 1]))
    assert ds["pos"].dtype == bool and ds["pos"].values.tolist() == [[False, True]] * 3
    assert json.loads(ds.attrs["fixed"]) == {"scale": 2.0}
    assert ds.attrs["seeds"] == "[0, 1]" and "qcnmodel_version" in ds.attrs


def test_joblib_matches_serial():
    grid = {"a": [1, 2, 3, 4], "b": [0.5, 1.5]}
    serial = sweep(poly, grid)
    par = sweep(poly, grid, n_jobs=2)
    np.testing.assert_array_equal(serial["y"].values, par["y"].values)


def test_resume_skips_finished_points(tmp_path):
    grid = {"a": [1, 2, 3], "b": [10, 20]}
    ck = tmp_path / "ck"
    CALLS.clear()
    first = sweep(counting, grid, checkpoint=ck)
    assert len(CALLS) == 6
    # Simulate an interruption: keep only the first two finished points (and a torn last line).
    lines = (ck / "points.jsonl").read_text().splitlines()
    (ck / "points.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:10])
    CALLS.clear()
    again = sweep(counting, grid, checkpoint=ck)
    assert len(CALLS) == 4
    np.testing.assert_array_equal(first["y"].values, again["y"].values)
    with pytest.raises(ValueError, match="different sweep"):
        sweep(counting, {"a": [1], "b": [10]}, checkpoint=ck)


def non_finite(a):
    return {"y": [np.inf, -np.inf, np.nan, 1.0][a]}


def test_checkpoint_is_standard_json_and_restores_non_finite_numbers(tmp_path):
    ck = tmp_path / "ck"
    first = sweep(non_finite, {"a": [0, 1, 2, 3]}, checkpoint=ck)
    text = (ck / "points.jsonl").read_text()
    assert "Infinity" not in text and "NaN" not in text  # the one JSON cleaner wrote it
    again = sweep(non_finite, {"a": [0, 1, 2, 3]}, checkpoint=ck)  # every point restored
    for ds in (first, again):
        assert ds["y"].dtype == float
        np.testing.assert_array_equal(ds["y"].values, [np.inf, -np.inf, np.nan, 1.0])


def test_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        ds = sweep(poly, {"a": [1, 2], "b": [3]}, scheduler=cluster.scheduler_address)
    np.testing.assert_array_equal(ds["y"].values, [[13.0], [23.0]])


def test_save_netcdf_and_zarr(tmp_path):
    import xarray as xr

    ds = sweep(poly, {"a": [1, 2], "b": [3]})
    for name in ("s.nc", "s.zarr"):
        path = save_dataset(ds, tmp_path / name)
        back = xr.open_dataset(path, engine="h5netcdf" if name.endswith(".nc") else "zarr")
        np.testing.assert_array_equal(back["y"].values, ds["y"].values)
        back.close()
    with pytest.raises(ValueError, match="out"):
        save_dataset(ds, tmp_path / "s.csv")


def test_parse_grid_spec():
    name, vals = parse_grid_spec("rtt=2us..1ms:3:log", parse_time)
    assert name == "rtt"
    np.testing.assert_allclose(vals, [2e-6, np.sqrt(2e-6 * 1e-3), 1e-3])
    assert parse_grid_spec("n_flows=1,10,100") == ("n_flows", [1.0, 10.0, 100.0])
    with pytest.raises(ValueError, match="rtt"):
        parse_grid_spec("rtt=0..1ms:3:log", parse_time)
    with pytest.raises(ValueError, match="grid"):
        sweep(poly, {"a": []})


def where(a, pause=0.0):
    """A point that says which process (and dask worker, if any) ran it, and whether that
    process had the parent's warm state (a module only the parent loaded)."""
    import os
    import sys
    import time

    start = time.monotonic()  # one clock for all processes (CLOCK_MONOTONIC)
    time.sleep(pause)
    end = time.monotonic()
    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):
        worker = ""
    warm = "_sweep_warm" in sys.modules
    return {"pid": os.getpid(), "worker": worker, "y": a * 2, "warm": warm, "start": start,
            "end": end}  # fmt: skip


def _warm_parent(**fixed):
    import sys
    import types

    sys.modules["_sweep_warm"] = types.ModuleType("_sweep_warm")


where.warm_up = _warm_parent


def test_chunk_size_follows_the_config(monkeypatch):
    from qcnmodel import config
    from qcnmodel.studies.sweep import chunk_size

    # about four tasks per worker by default
    assert chunk_size(8, 2) == 1 and chunk_size(80, 2) == 10 and chunk_size(3, 4) == 1
    monkeypatch.setitem(config.defaults, "studies.sweep_chunk", 5)
    assert chunk_size(80, 2) == 5


def test_local_chunks_run_whole_on_one_process_and_workers_start_warm(monkeypatch):
    import os
    import sys

    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "studies.sweep_chunk", 2)
    monkeypatch.delitem(sys.modules, "_sweep_warm", raising=False)
    grid = {"a": list(range(8))}
    ds = sweep(where, grid, fixed={"pause": 0.3}, n_jobs=2)
    np.testing.assert_array_equal(ds["y"].values, np.arange(8) * 2)
    pids = ds["pid"].values.astype(int)
    for k in range(0, 8, 2):  # a chunk of two points never splits across processes
        assert pids[k] == pids[k + 1]
    # the parent warmed up once, before the workers were forked: every point saw it warm
    # (no worker imported or warmed up by itself)
    assert ds["warm"].values.all()
    # two workers ran the points; the parent only handed them out (a point running in the
    # parent would hold up the hand-out of the next chunk to a worker)
    assert len(set(pids)) <= 2 and os.getpid() not in set(pids)
    # and the workers ran at the same time: the first chunk of each overlaps the other's
    starts, ends = ds["start"].values, ds["end"].values
    assert pids[0] != pids[2] and max(starts[0], starts[2]) < min(ends[0], ends[2])
    sys.modules.pop("_sweep_warm", None)


def test_one_chunk_runs_in_this_process(monkeypatch):
    import os

    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "studies.sweep_chunk", 10)  # 10 >= the 4 points
    ds = sweep(where, {"a": list(range(4))}, n_jobs=2)
    assert set(ds["pid"].values.astype(int)) == {os.getpid()}  # no worker forked for it
    np.testing.assert_array_equal(ds["y"].values, np.arange(4) * 2)


def test_jobs_minus_one_is_the_free_cores(monkeypatch):
    import os

    from qcnmodel.studies import sweep as mod

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(os, "getloadavg", lambda: (2.2, 0, 0))
    assert mod.free_cores() == 3  # 4 cores, 2 busy besides this process
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 0, 0))
    assert mod.free_cores() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0, 0))
    assert mod.free_cores() == 4


def test_dask_two_workers_run_chunks(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "studies.sweep_chunk", 3)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        ds = sweep(where, {"a": list(range(6))}, scheduler=cluster.scheduler_address)
    np.testing.assert_array_equal(ds["y"].values, np.arange(6) * 2)
    w = ds["worker"].values.tolist()
    assert all(w) and w[0] == w[1] == w[2] and w[3] == w[4] == w[5]  # one chunk, one worker


def test_importing_the_sweep_module_does_not_import_xarray():
    """xarray (about 0.4 s to import, more with the array libraries it loads) is imported
    when a Dataset is assembled; a parallel sweep does it while its workers run."""
    import subprocess
    import sys

    code = "import sys, qcnmodel.studies.sweep; print('xarray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                         check=True).stdout  # fmt: skip
    assert out.strip() == "False"


def test_prepare_runs_once_while_the_workers_run():
    import time

    from qcnmodel.studies.sweep import _Call, _execute

    called = []
    todo = [(i, {"a": i}) for i in range(4)]
    out = list(_execute(_Call(where, {"pause": 0.3}), todo, 2, None,
                        lambda: called.append(time.monotonic())))  # fmt: skip
    assert sorted(i for i, _ in out) == [0, 1, 2, 3]
    # called once, before any point ended: it overlapped the points (each sleeps 0.3 s)
    assert len(called) == 1 and called[0] < min(r["end"] for _, r in out)


def test_the_dataset_writer_is_loaded_once_per_process(monkeypatch):
    """The preparation writes a dummy netCDF file to load the writer; a later sweep in the
    same process skips it (it ran while its workers used the cores)."""
    from qcnmodel.studies import sweep as sweep_mod

    writes = []
    monkeypatch.setattr(sweep_mod, "_PREPARED", [])
    monkeypatch.setattr(sweep_mod, "write_netcdf", lambda *a, **k: writes.append(a[1]))
    for _ in range(3):
        sweep_mod._prepare_assembly()
    assert len(writes) == 1 and writes[0].name == "warm.nc"


@pytest.mark.parametrize("protocol", ["none", "dcqcn"])
def test_simulation_sweep_refuses_a_qcn_parameter_its_protocol_does_not_read(protocol):
    """A grid or a fixed setting of a QCN parameter under a protocol without them would run
    every point the same: refused before any point runs, naming the parameter."""
    from qcnmodel.studies.points import check_simulation_point

    with pytest.raises(ValueError, match=f"^qeq: a QCN parameter, which protocol '{protocol}'"):
        check_simulation_point("og-hotspot", protocol, None, 1e-3, {"n_nodes": 2}, qeq=20_000)
    # the rate, frame size and CP latency are read by every protocol's run
    check_simulation_point("og-hotspot", protocol, None, 1e-3, {"n_nodes": 2}, cp_latency=2e-6)
    check_simulation_point("og-hotspot", "qcn", None, 1e-3, {"n_nodes": 2}, qeq=20_000)


FAIL = {"at": 3}


def fails_at_three(a, b):
    if a == FAIL["at"]:
        raise ValueError("qeq: no loop here")
    return {"y": a + b}


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_failing_point_is_named_and_its_fresh_checkpoint_removed(tmp_path, n_jobs):
    # the point's error names the point; the checkpoint this run made is removed, since the
    # same grid fails there again and a corrected grid could not use it (it once blocked the
    # corrected command: "holds a different sweep")
    ck = tmp_path / "ck"
    grid = {"a": [1, 2, 3], "b": [10]}
    with pytest.raises(ValueError, match=r"^point a=3, b=10: qeq: no loop here$"):
        sweep(fails_at_three, grid, checkpoint=ck, n_jobs=n_jobs)
    assert not ck.exists()
    ds = sweep(fails_at_three, {"a": [1, 2], "b": [10]}, checkpoint=ck)
    assert ds["y"].values.tolist() == [[11], [12]]


def test_a_resumed_checkpoint_is_kept_when_a_point_fails(tmp_path, monkeypatch):
    ck = tmp_path / "ck"
    grid = {"a": [1, 2, 3], "b": [10]}
    monkeypatch.setitem(FAIL, "at", None)
    sweep(fails_at_three, grid, checkpoint=ck)  # an earlier run, interrupted after 2 points:
    lines = (ck / "points.jsonl").read_text().splitlines()
    (ck / "points.jsonl").write_text("\n".join(lines[:2]) + "\n")
    monkeypatch.setitem(FAIL, "at", 3)
    with pytest.raises(ValueError, match="point a=3"):
        sweep(fails_at_three, grid, checkpoint=ck)
    assert len((ck / "points.jsonl").read_text().splitlines()) == 2  # its points: kept


def test_an_unreachable_scheduler_is_named_and_leaves_no_checkpoint(tmp_path, monkeypatch):
    # dask's "Timed out trying to connect ..." named no flag, and left an empty checkpoint
    import distributed

    class Refusing:
        def __init__(self, address):
            raise OSError(f"Timed out trying to connect to {address} after 30 s")

    monkeypatch.setattr(distributed, "Client", Refusing)
    ck = tmp_path / "ck"
    with pytest.raises(ValueError, match=r"^scheduler: cannot reach the dask scheduler"):
        sweep(poly, {"a": [1, 2], "b": [3]}, scheduler="tcp://127.0.0.1:1", checkpoint=ck)
    assert not ck.exists()
