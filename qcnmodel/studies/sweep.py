"""Parameter sweeps: parallel (local processes or dask.distributed), resumable, as Datasets.

A sweep evaluates a *point function* ``func(**point) -> dict[str, float]`` on the Cartesian
product of a grid ``{name: values}`` and assembles the scalar results into an
:class:`xarray.Dataset` whose dimensions are the grid's names, in order.

* Parallel: ``n_jobs`` worker processes forked from this one once it is warm, taking chunks
  of points as they free up, or a dask.distributed cluster (``scheduler``: an address such
  as ``"tcp://10.0.0.5:8786"``, or a ``Client``).
* Resumable: with ``checkpoint=DIR`` every finished point is appended to ``DIR/points.jsonl`` as it
  arrives; a rerun with the same grid skips those points (an interrupted sweep goes on where it
  stopped). ``DIR/sweep.json`` records the grid and function: a different grid is refused.
* Attributes: the grid, the fixed keyword arguments, the package version and (for simulator
  sweeps) the seeds are stored in ``Dataset.attrs`` (JSON strings for nested values).
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qcnmodel._errors import unknown_name
from qcnmodel._io import to_jsonable
from qcnmodel._netcdf import write_netcdf
from qcnmodel.studies._checkpoint import _key, _plain, open_checkpoint, remove_checkpoint
from qcnmodel.units import split_range

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["check_grid_size", "chunk_size", "free_cores", "parse_grid_spec",
           "remove_checkpoint", "save_dataset", "sweep"]  # fmt: skip


def _points(grid: dict[str, Sequence]) -> list[dict[str, Any]]:
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


class PointError(ValueError):
    """A point of a sweep that its function cannot compute (a ValueError naming the point)."""


class _Call:
    """Picklable wrapper binding fixed keyword arguments to a point function; called on a
    chunk (a list of ``(index, point)``), it returns the list of ``(index, result)``."""

    def __init__(self, func: Callable[..., dict], fixed: dict[str, Any]):
        self.func = func
        self.fixed = fixed

    def one(self, index_point):
        index, point = index_point
        try:
            out = self.func(**self.fixed, **point)
        except ValueError as exc:  # name the point: the grid's other points may be fine
            where = ", ".join(f"{k}={_plain(v)!r}" for k, v in point.items())
            raise PointError(f"point {where}: {exc}") from None
        if not isinstance(out, dict):
            raise TypeError(f"sweep point function must return a dict, got {type(out).__name__}")
        return index, {k: _plain(v) for k, v in out.items()}

    def __call__(self, chunk):
        return [self.one(item) for item in chunk]


def _warm(func, fixed: dict) -> None:
    """Load what the points need (the point function's ``warm_up(**fixed)``, e.g. the compiled
    simulator) once, in this process, before the workers are forked from it: they start with
    it loaded instead of importing and loading it again each."""
    warm = getattr(func, "warm_up", None)
    if callable(warm):
        try:
            warm(**fixed)
        except Exception:  # noqa: BLE001 - a warm-up is an optimisation; the points still run
            pass


def _ignore_sigint() -> None:
    """Worker initialiser: Ctrl-C is handled once, by the parent (exit 130, one line)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def usable_cores() -> int:
    """The cores this process may use: its affinity mask (``os.sched_getaffinity``), else
    the machine's cores."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def free_cores() -> int:
    """The cores this process may use that are not busy: :func:`usable_cores` less the
    one-minute load average not due to this process (rounded), at least 1."""
    n = usable_cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover
        load = 0.0
    return max(1, min(n, n - int(math.floor(load + 0.5)) + 1))


def chunk_size(n_points: int, n_workers: int) -> int:
    """Points per task: ``studies.sweep_chunk`` if set, else about four tasks per worker
    (fewer hand-offs than one point per task, and still balanced at the end)."""
    from qcnmodel import config

    fixed = config.defaults.get("studies.sweep_chunk")
    if fixed:
        return max(1, int(fixed))
    return max(1, math.ceil(n_points / (4 * max(1, n_workers))))


def _chunks(todo: list, size: int) -> list[list]:
    return [todo[i : i + size] for i in range(0, len(todo), size)]


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
        Processes (1 = in-process, -1 = the cores actually free): ``n_jobs`` workers forked
        from this process after a warm-up (the point function's ``warm_up(**fixed)``, if
        any), so they start with the compiled code loaded; they take chunks of points as
        they free up, while this process only hands the chunks out. Ignored with
        ``scheduler``.
    scheduler : str or distributed.Client, optional
        A dask.distributed scheduler address or client; the points run on that cluster, in
        chunks as locally.
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
    check_grid_size(grid)
    fixed = dict(fixed or {})
    if n_jobs == -1:
        n_jobs = free_cores()
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs: expected a whole number >= 1 or -1, got {n_jobs!r}")
    points = _points(grid)
    results: dict[int, dict[str, Any]] = {}
    log, created = None, False
    if checkpoint is not None:
        results, log, created = open_checkpoint(Path(checkpoint), func, grid, fixed, points)
    todo = [(i, p) for i, p in enumerate(points) if i not in results]
    call = _Call(func, fixed)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(points), initial=len(points) - len(todo), desc="sweep", unit="pt")
    failed = None
    try:
        for index, out in _execute(call, todo, n_jobs, scheduler, _prepare_assembly):
            results[index] = out
            if log is not None:
                record = {"i": index, "key": _key(points[index]), "out": to_jsonable(out)}
                log.write(json.dumps(record) + "\n")
                log.flush()
            if bar is not None:
                bar.update(1)
    except BaseException as exc:
        failed = exc
        raise
    finally:
        if bar is not None:
            bar.close()
        if created and (isinstance(failed, PointError) or (failed is not None and not results)):
            # a point that fails fails again on resuming (the grid must change, and a changed
            # grid cannot use it), and an empty checkpoint holds nothing: neither is kept
            log.discard()
        elif log is not None:
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


def _execute(call, todo, n_jobs, scheduler, prepare=None):
    """Yield ``(index, result)`` for every point of ``todo``, computed in chunks: in this
    process (``n_jobs == 1``), on a dask.distributed cluster (``scheduler``), or on
    ``n_jobs`` workers forked from this process once it is warm. ``prepare()``, if given, is
    called in this process once the workers (or the cluster) have their chunks: work it
    would do after the points anyway, done while they run."""
    if not todo:
        return
    n_jobs = min(n_jobs, len(todo))  # no process without a point to run
    if scheduler is not None:
        yield from _execute_dask(call, todo, scheduler, prepare)
    elif n_jobs == 1:
        for item in todo:
            yield call.one(item)
    else:
        yield from _execute_local(call, todo, n_jobs, prepare)


#: the largest first message a dask scheduler is believed to send (its handshake: a few
#: hundred bytes); a longer one is a peer that is not a scheduler
MAX_HANDSHAKE_BYTES = 1 << 20


def probe_scheduler(address: str, timeout: float | None = None) -> None:
    """Check that a ``tcp://`` address answers as a dask.distributed scheduler, before dask
    connects to it.

    A scheduler sends its handshake as soon as a connection is accepted: an 8-byte length,
    then that many bytes. dask's client allocates whatever length the peer's first 8 bytes
    spell, so a peer that is not a scheduler (an HTTP server answering ``HTTP/1.1``) made it
    try to allocate exabytes, or gigabytes from other bytes. Here the length is read and
    bounded (:data:`MAX_HANDSHAKE_BYTES`) first, within ``timeout`` seconds (default dask's
    own connect timeout). Other protocols (``tls://``, ``inproc://``, ...) are left to dask.

    Raises
    ------
    ValueError
        Naming ``scheduler`` and the address: it cannot be reached, it sent nothing within
        the timeout, or its first message is not a scheduler's handshake.
    """
    import socket
    import struct
    from urllib.parse import urlsplit

    if not isinstance(address, str) or address.split("://", 1)[0] not in (address, "tcp"):
        return
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if timeout is None:
        import dask
        import distributed  # noqa: F401 - loads its configuration
        from dask.utils import parse_timedelta

        timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s")
    not_dask = f"scheduler: {address!r} did not answer as a dask scheduler"
    try:
        sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
    except OSError as exc:
        raise ValueError(f"scheduler: cannot reach the dask scheduler {address!r} "
                         f"({exc.strerror or exc})") from None  # fmt: skip
    with sock:
        try:
            head = _read_exactly(sock, 8)
            (size,) = struct.unpack("Q", head)  # dask's own framing (native order)
            if not 0 < size <= MAX_HANDSHAKE_BYTES:
                raise ValueError(f"{not_dask} (its first message claims {size} bytes; "
                                 f"a handshake is at most {MAX_HANDSHAKE_BYTES})")  # fmt: skip
            _read_exactly(sock, size)
        except TimeoutError:
            raise ValueError(f"{not_dask} (no handshake within {timeout:g} s)") from None
        except OSError as exc:
            raise ValueError(f"{not_dask} ({exc.strerror or exc})") from None


def _read_exactly(sock, n: int) -> bytes:
    """``n`` bytes from ``sock``; a connection closed before them is an OSError."""
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(min(n - len(data), 1 << 16))
        if not chunk:
            raise OSError(f"the connection closed after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


def _execute_dask(call, todo, scheduler, prepare=None):
    from distributed import Client, as_completed

    if not isinstance(scheduler, Client):
        probe_scheduler(scheduler)
    try:
        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    except (OSError, TimeoutError) as exc:  # dask's own text names no flag
        raise ValueError(
            f"scheduler: cannot reach the dask scheduler {scheduler!r} ({exc})"
        ) from None
    except Exception as exc:  # noqa: BLE001 - a peer's reply dask could not read
        raise ValueError(f"scheduler: {scheduler!r} did not answer as a dask scheduler "
                         f"({type(exc).__name__}: {exc})") from None  # fmt: skip
    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        chunks = _chunks(todo, chunk_size(len(todo), n_workers))
        futures = client.map(call, chunks, pure=False)
        if prepare is not None:
            prepare()  # while the cluster runs the first chunks
        for fut in as_completed(futures):
            yield from fut.result()
    finally:
        if client is not scheduler:
            client.close()


def _executor(call, workers: int):
    """A pool of ``workers`` processes forked from this (warmed) process, so each starts
    with every module and compiled function already loaded; loky where fork is missing."""
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():  # pragma: no cover - not POSIX
        from joblib.externals.loky import get_reusable_executor

        return get_reusable_executor(max_workers=workers, reuse=True), False
    from concurrent.futures import ProcessPoolExecutor

    _warm(call.func, call.fixed)
    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"),
                               initializer=_ignore_sigint)  # fmt: skip
    return pool, True


def _execute_local(call, todo, n_jobs, prepare=None):
    """``n_jobs`` workers forked from this (warmed) process take the chunks as they free up;
    this process only hands them out and collects the results, waiting without using a core
    (after ``prepare()``, if given, which runs while the workers start).

    It does not run chunks itself: the compiled kernel holds the interpreter lock while it
    runs, so the threads that hand chunks to the workers would stall until its own point
    ended, and a worker would sit idle for up to a point's time."""
    from concurrent.futures import as_completed

    chunks = _chunks(todo, chunk_size(len(todo), n_jobs))
    if len(chunks) == 1:  # one task (``studies.sweep_chunk`` >= the points): no worker
        yield from call(chunks[0])
        return
    executor, owned = _executor(call, min(n_jobs, len(chunks)))
    futures = [executor.submit(call, chunk) for chunk in chunks]
    finished = False
    try:
        if prepare is not None:
            prepare()  # while the workers run their first chunks
        for fut in as_completed(futures):
            yield from fut.result()
        finished = True
    finally:
        for fut in futures:
            fut.cancel()
        if owned and finished:
            executor.shutdown(wait=True)
        elif owned:  # interrupted or failed: do not wait for the running points
            from qcnmodel.studies._pool import abandon

            abandon(executor, futures)


#: set once :func:`_prepare_assembly` has loaded what it loads, in this process
_PREPARED: list[bool] = []


def _prepare_assembly() -> None:
    """While the workers run: load what assembling and saving the Dataset load (0.1-0.7 s),
    once per process (a later sweep would write its dummy file for nothing while its workers
    use the cores)."""
    if _PREPARED:
        return
    _PREPARED.append(True)
    import tempfile

    import xarray as xr

    ds = xr.Dataset({"x": ("i", np.zeros(1))})
    try:  # a writer failing here fails on the real save too, and says so there
        with tempfile.TemporaryDirectory(prefix="qcnmodel-") as tmp:
            write_netcdf(ds, Path(tmp) / "warm.nc", engine="h5netcdf", atomic=False)
    except Exception:  # noqa: BLE001
        pass


def _assemble(grid, points, results) -> xr.Dataset:
    import xarray as xr

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
    """Save to netCDF (``.nc``) or zarr (``.zarr``), chosen by the suffix, atomically: the
    data go to a uniquely named temporary beside ``path``, renamed over it when complete."""
    path = Path(path)
    if path.suffix == ".zarr":
        _save_zarr(ds, path)
    elif path.suffix in (".nc", ".netcdf", ".h5"):
        write_netcdf(ds, path, engine="h5netcdf")
    else:
        raise unknown_name("out", "file type", path.suffix, (".nc", ".zarr"), sort=False)
    return path


def _save_zarr(ds: xr.Dataset, path: Path) -> None:
    import shutil
    import tempfile
    import warnings

    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp.zarr", dir=path.parent))
    try:
        with warnings.catch_warnings():  # zarr 3: consolidated metadata is not in its spec yet
            warnings.filterwarnings("ignore", "Consolidated metadata", UserWarning)
            ds.to_zarr(tmp, mode="w")  # (xarray reads such a store back either way)
        old = tmp.with_name(tmp.name + ".old")
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def max_points() -> int:
    """The most grid points a sweep accepts (``studies.max_sweep_points``)."""
    from qcnmodel import config

    return int(config.defaults["studies.max_sweep_points"])


def check_grid_size(grid: dict[str, Sequence]) -> int:
    """The number of points of ``grid`` (the product of its axes' lengths), refused above
    :func:`max_points` from the lengths alone, naming every axis and its length: a check
    to make before any value is checked or any point computed."""
    total = math.prod(len(v) for v in grid.values())
    if total > max_points():
        axes = " x ".join(f"{len(v):,} {k}" for k, v in grid.items())
        raise ValueError(f"grid: {total:,} points ({axes}) is above the limit of "
                         f"{max_points():,} points per sweep "
                         "(qcnmodel.config.defaults['studies.max_sweep_points']); give fewer "
                         "values")  # fmt: skip
    return total


def _too_many(what: str, n) -> ValueError:
    return ValueError(
        f"{what}: {n:,} points is above the limit of {max_points():,} points per sweep "
        "(qcnmodel.config.defaults['studies.max_sweep_points'])"
    )


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
        ends = split_range(body, f"--grid {name}")
        if ends is None:  # the '..' lies after a ':' (e.g. 'w=:..5:3')
            raise ValueError(f"--grid {name}: expected lo..hi:n[:log], got {rhs!r}")
        lo_s, hi_s = ends
        lo, hi = conv(lo_s, name), conv(hi_s, name)
        if not opts or not opts[0].strip():  # check's lo..hi means its own log grid: no guess
            raise ValueError(f"--grid {name}: a range needs its number of points, "
                             f"lo..hi:n[:log] (e.g. {name}={lo_s}..{hi_s}:10:log), "
                             f"got {rhs!r}")  # fmt: skip
        try:
            n = int(opts[0])
        except ValueError:
            raise ValueError(f"--grid {name}: the number of points must be a whole number, "
                             f"got {opts[0]!r}") from None  # fmt: skip
        if n < 1:
            raise ValueError(f"--grid {name}: the number of points must be >= 1")
        if n > max_points():
            raise _too_many(f"--grid {name}", n)
        scale = opts[1] if len(opts) > 1 else "lin"
        try:  # the points are spaced in floats (a whole-number field's own check follows)
            lo, hi = float(lo), float(hi)
        except (OverflowError, TypeError, ValueError):
            raise ValueError(f"--grid {name}: endpoints must be finite numbers, got "
                             f"{lo_s!r}, {hi_s!r}") from None  # fmt: skip
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
    if len(values) > max_points():
        raise _too_many(f"--grid {name}", len(values))
    if ".." in rhs and parser is not None:
        # every generated value passes the field's own check (e.g. a whole number of flows),
        # so a bad grid fails here, not after the first point
        values = [conv(v, name) for v in values]
    return name, values
