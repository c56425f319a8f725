"""Parameter sweeps: parallel (joblib or dask.distributed), resumable, as xarray Datasets.

A sweep evaluates a *point function* ``func(**point) -> dict[str, float]`` on the Cartesian
product of a grid ``{name: values}`` and assembles the scalar results into an
:class:`xarray.Dataset` whose dimensions are the grid's names, in order.

* Parallel: joblib processes on one machine (``n_jobs``), or a dask.distributed cluster when
  ``scheduler`` is given (an address such as ``"tcp://10.0.0.5:8786"`` or a ``Client``).
* Resumable: with ``checkpoint=DIR`` every finished point is appended to ``DIR/points.jsonl``
  as soon as it arrives; a rerun with the same grid skips the points already there, so an
  interrupted sweep continues where it stopped. The grid and function are recorded in
  ``DIR/sweep.json`` and a rerun with a different grid is refused.
* Attributes: the grid, the fixed keyword arguments, the package version and (for simulator
  sweeps) the seeds are stored in ``Dataset.attrs`` (JSON strings for nested values).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from qcnmodel._errors import unknown_name
from qcnmodel._io import to_jsonable

__all__ = ["sweep", "save_dataset", "parse_grid_spec"]


def _points(grid: dict[str, Sequence]) -> list[dict[str, Any]]:
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def _key(point: dict[str, Any]) -> str:
    return json.dumps({k: _plain(v) for k, v in point.items()}, sort_keys=True)


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


class _Call:
    """Picklable wrapper binding fixed keyword arguments to a point function."""

    def __init__(self, func: Callable[..., dict], fixed: dict[str, Any]):
        self.func = func
        self.fixed = fixed

    def __call__(self, index_point):
        index, point = index_point
        out = self.func(**self.fixed, **point)
        if not isinstance(out, dict):
            raise TypeError(f"sweep point function must return a dict, got {type(out).__name__}")
        return index, {k: _plain(v) for k, v in out.items()}


def sweep(
    func: Callable[..., dict],
    grid: dict[str, Sequence],
    *,
    fixed: dict[str, Any] | None = None,
    n_jobs: int = 1,
    scheduler: Any = None,
    checkpoint: str | Path | None = None,
    progress: bool = False,
    attrs: dict[str, Any] | None = None,
) -> xr.Dataset:
    """Evaluate ``func`` over a grid and return the results as a Dataset.

    Parameters
    ----------
    func : callable
        A top-level (picklable) function ``func(**fixed, **point) -> dict`` of scalar results.
    grid : dict of str to sequence
        The swept parameters; the Dataset's dimensions, in this order.
    fixed : dict, optional
        Keyword arguments passed to every call (recorded in the attributes).
    n_jobs : int
        joblib worker processes (1 = in-process, -1 = all cores). Ignored with ``scheduler``.
    scheduler : str or distributed.Client, optional
        A dask.distributed scheduler address or client; the points run on that cluster.
    checkpoint : str or Path, optional
        Directory where finished points are recorded; makes the sweep resumable.
    progress : bool
        Show a tqdm progress bar on stderr.
    attrs : dict, optional
        Extra attributes for the Dataset (e.g. seeds).

    Returns
    -------
    xarray.Dataset
        One variable per result key, dimensions = grid names.
    """
    from qcnmodel import __version__

    if not grid:
        raise ValueError("grid: at least one swept parameter is needed")
    for name, values in grid.items():
        if len(values) == 0:
            raise ValueError(f"grid: parameter {name!r} has no values")
    fixed = dict(fixed or {})
    points = _points(grid)
    results: dict[int, dict[str, Any]] = {}
    log = None
    if checkpoint is not None:
        results, log = _open_checkpoint(Path(checkpoint), func, grid, fixed, points)
    todo = [(i, p) for i, p in enumerate(points) if i not in results]
    call = _Call(func, fixed)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(points), initial=len(points) - len(todo), desc="sweep", unit="pt")
    try:
        for index, out in _execute(call, todo, n_jobs, scheduler):
            results[index] = out
            if log is not None:
                record = {"i": index, "key": _key(points[index]), "out": to_jsonable(out)}
                log.write(json.dumps(record) + "\n")
                log.flush()
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if log is not None:
            log.close()
    ds = _assemble(grid, points, results)
    ds.attrs.update(
        {
            "qcnmodel_version": __version__,
            "function": f"{func.__module__}.{func.__qualname__}",
            "grid": json.dumps({k: [_plain(v) for v in vals] for k, vals in grid.items()}),
            "fixed": json.dumps({k: _plain(v) for k, v in fixed.items()}, default=str),
        }
    )
    for k, v in (attrs or {}).items():
        ds.attrs[k] = v if isinstance(v, (str, int, float)) else json.dumps(v, default=str)
    return ds


def _execute(call, todo, n_jobs, scheduler):
    if not todo:
        return
    if scheduler is not None:
        from distributed import Client, as_completed

        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        try:
            futures = client.map(call, todo, pure=False)
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            if client is not scheduler:
                client.close()
    elif n_jobs == 1:
        for item in todo:
            yield call(item)
    else:
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        yield from parallel(delayed(call)(item) for item in todo)


def _open_checkpoint(directory: Path, func, grid, fixed, points):
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "function": f"{func.__module__}.{func.__qualname__}",
        "grid": {k: [_plain(v) for v in vals] for k, vals in grid.items()},
        "fixed": {k: _plain(v) for k, v in fixed.items()},
    }
    meta_path = directory / "sweep.json"
    meta_text = json.dumps(meta, sort_keys=True, default=str)
    if meta_path.exists():
        if meta_path.read_text() != meta_text:
            raise ValueError(
                f"checkpoint: {directory} holds a different sweep (grid, fixed arguments or "
                "function differ); use another directory or delete it"
            )
    else:
        meta_path.write_text(meta_text)
    results: dict[int, dict[str, Any]] = {}
    log_path = directory / "points.jsonl"
    if log_path.exists():
        for line in log_path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:  # a line cut by the interruption
                continue
            i = rec["i"]
            if 0 <= i < len(points) and rec["key"] == _key(points[i]):
                results[i] = rec["out"]
    return results, open(log_path, "a")


def _assemble(grid, points, results) -> xr.Dataset:
    names = list(grid)
    shape = tuple(len(grid[n]) for n in names)
    keys: list[str] = []
    for out in results.values():
        for k in out:
            if k not in keys:
                keys.append(k)
    data = {}
    for k in keys:
        # a number written to the checkpoint as "inf" / "-inf" / None is still a number
        sample = next(
            (out[k] for out in results.values() if out.get(k) not in (None, "inf", "-inf")),
            math.nan,
        )
        if isinstance(sample, (bool, np.bool_)):
            arr = np.zeros(len(points), dtype=bool)
        elif isinstance(sample, (int, float, np.number)) or sample is None:
            arr = np.full(len(points), np.nan)
        else:
            arr = np.full(len(points), "", dtype=object)
        for i, out in results.items():
            v = out.get(k)
            if v is None:
                continue
            if isinstance(v, str) and v in ("inf", "-inf") and arr.dtype != object:
                v = math.inf if v == "inf" else -math.inf
            arr[i] = v
        data[k] = (names, arr.reshape(shape))
    coords = {n: np.asarray([_plain(v) for v in grid[n]]) for n in names}
    return xr.Dataset(data, coords=coords)


def save_dataset(ds: xr.Dataset, path: str | Path) -> Path:
    """Save to netCDF (``.nc``) or zarr (``.zarr``), chosen by the suffix."""
    path = Path(path)
    if path.suffix == ".zarr":
        ds.to_zarr(path, mode="w")
    elif path.suffix in (".nc", ".netcdf", ".h5"):
        ds.to_netcdf(path, engine="h5netcdf")
    else:
        raise unknown_name("out", "file type", path.suffix, (".nc", ".zarr"), sort=False)
    return path


def parse_grid_spec(
    spec: str, parser: Callable[[Any, str], float] | None = None
) -> tuple[str, list]:
    """Parse ``name=v1,v2,...`` or ``name=lo..hi:n[:log]`` into ``(name, values)``.

    Examples: ``rtt=2us..1ms:20:log``, ``n_flows=1,10,100``, ``w=2,8,32``.
    ``parser(value, field)`` converts each endpoint or item (unit strings allowed).
    """
    if "=" not in spec:
        raise ValueError(f"--grid: expected name=values, got {spec!r}")
    name, rhs = (s.strip() for s in spec.split("=", 1))
    conv = parser or (lambda v, f: float(v))
    if ".." in rhs:
        body, *opts = rhs.split(":")
        lo_s, hi_s = body.split("..", 1)
        lo, hi = conv(lo_s, name), conv(hi_s, name)
        n = int(opts[0]) if opts else 10
        if n < 1:
            raise ValueError(f"--grid {name}: the number of points must be >= 1")
        scale = opts[1] if len(opts) > 1 else "lin"
        if scale == "log":
            if lo <= 0 or hi <= 0:
                raise ValueError(f"--grid {name}: a log range needs positive endpoints")
            values = np.geomspace(lo, hi, n).tolist()
        elif scale == "lin":
            values = np.linspace(lo, hi, n).tolist()
        else:
            raise ValueError(f"--grid {name}: scale must be 'lin' or 'log', got {scale!r}")
    else:
        values = [conv(v.strip(), name) for v in rhs.split(",") if v.strip()]
    if not values:
        raise ValueError(f"--grid {name}: no values")
    return name, values
