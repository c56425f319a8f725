"""xarray's dask probes answered without importing dask.array / distributed (qcnmodel._dask_probes).

Each check runs in a fresh interpreter, since what matters is which modules a process loads.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(code: str, *args: str, cwd=None) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                       text=True, cwd=cwd, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_write_netcdf_loads_no_distributed_and_writes_the_data(tmp_path):
    out = _run(
        """
        import sys
        import numpy as np, xarray as xr
        from qcnmodel._netcdf import write_netcdf
        ds = xr.Dataset({"a": ("t", np.arange(5.0))}, coords={"t": np.arange(5)})
        write_netcdf(ds, sys.argv[1], engine="h5netcdf")
        back = xr.load_dataset(sys.argv[1], engine="h5netcdf")
        assert back.identical(ds), back
        print("distributed" in sys.modules, "dask.distributed" in sys.modules)
        """,
        str(tmp_path / "a.nc"),
    )
    assert out.split() == ["False", "False"]


def test_write_netcdf_keeps_the_probe_where_distributed_is_loaded(tmp_path):
    pytest.importorskip("distributed")
    out = _run(
        """
        import sys
        import distributed  # a client could exist: the probe must see the real module
        import numpy as np, xarray as xr
        from qcnmodel._netcdf import write_netcdf
        ds = xr.Dataset({"a": ("t", np.arange(3.0))})
        write_netcdf(ds, sys.argv[1], engine="h5netcdf")
        print(sys.modules["dask.distributed"] is not None)
        print(xr.load_dataset(sys.argv[1], engine="h5netcdf").identical(ds))
        """,
        str(tmp_path / "b.nc"),
    )
    assert out.split() == ["True", "True"]


def test_deferred_dask_array_check_is_exact_before_and_after_dask_array_loads():
    pytest.importorskip("dask.array")
    out = _run(
        """
        import sys
        from qcnmodel._dask_probes import defer_dask_array_check, DaskArrayOnceLoaded
        defer_dask_array_check()  # before xarray is imported: installed when it is
        import numpy as np, xarray as xr
        ds = xr.Dataset({"a": ("t", np.arange(4.0))})
        print(float(ds.a.mean()), "dask.array" in sys.modules)
        print(isinstance(np.zeros(1), DaskArrayOnceLoaded))
        import dask.array as da
        lazy = xr.DataArray(da.arange(4.0, chunks=2), dims="t")
        print(lazy.chunks is not None, isinstance(lazy.data, DaskArrayOnceLoaded))
        print(float(lazy.sum().compute()), isinstance(np.zeros(1), DaskArrayOnceLoaded))
        """
    )
    assert out.split() == ["1.5", "False", "False", "True", "True", "6.0", "False"]


@pytest.mark.parametrize("command", [
    ["sweep", "--scenario", "og-hotspot", "--grid", "seed=0,1", "--duration", "2ms", "--out",
     "s.nc", "--quiet"],
    ["simulate", "--scenario", "og-hotspot", "--duration", "2ms", "--out", "s.nc"],
])  # fmt: skip
def test_a_command_writing_netcdf_loads_neither_dask_array_nor_distributed(tmp_path, command):
    """`qcnmodel sweep/simulate --out x.nc` of short runs: processes that build, save and
    report Datasets without any dask object (before: both were imported, 1-2 s)."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "qcnmodel", *command],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    loaded = {ln.rsplit("|", 1)[-1].strip() for ln in r.stderr.splitlines()
              if ln.startswith("import time:")}  # fmt: skip
    assert "xarray" in loaded and (tmp_path / "s.nc").exists()
    # a refused import is logged too (the probe's own attempt): look for their submodules
    assert not [m for m in loaded if m.startswith(("dask.array.", "distributed."))]
