"""The one netCDF writer of the package: atomic, and without xarray's dask-scheduler probe.

Before it writes, :meth:`xarray.Dataset.to_netcdf` asks which dask scheduler is active (so
that it can pick a suitable file lock), and to know whether that scheduler is a
``dask.distributed`` client it imports ``dask.distributed`` whenever dask is installed. That
import loads all of ``distributed`` (its comms, its config, tornado): 0.3-1 s on a 2-core
machine, in every process that writes a file, although no client can exist in a process that
never imported ``distributed``. :func:`write_netcdf` therefore writes inside
:func:`qcnmodel._dask_probes.without_distributed_probe`, which hides ``dask.distributed`` from
that probe only while ``distributed`` is not loaded: the probe then finds no client, which is
the truth; where ``distributed`` is loaded (a sweep on a dask cluster), it runs as usual.
"""

from __future__ import annotations

from qcnmodel._dask_probes import without_distributed_probe

__all__ = ["write_netcdf"]


def write_netcdf(ds, path, *, engine: str | None = None, atomic: bool = True) -> None:
    """Write the Dataset ``ds`` to the netCDF file ``path``.

    Parameters
    ----------
    ds : xarray.Dataset
        What to write.
    path : str or Path
        The file; with ``atomic`` the data go to a temporary file beside it, renamed over it
        once complete (:func:`qcnmodel._io.atomic_path`), so a reader never sees half a file.
    engine : str, optional
        xarray's netCDF engine (``"h5netcdf"``, ``"netcdf4"``, ``"scipy"``); its default
        when None.
    atomic : bool, default True
        False writes ``path`` directly (for a path that is itself a temporary).
    """
    from qcnmodel._io import atomic_path

    with without_distributed_probe():
        if not atomic:
            ds.to_netcdf(path, engine=engine)
            return
        with atomic_path(path) as tmp:
            ds.to_netcdf(tmp, engine=engine)
