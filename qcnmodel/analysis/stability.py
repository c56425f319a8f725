"""Stability maps of loop models over two parameters, and critical-RTT curves.

A loop model is anything with ``.loop() -> DelayedLoop``, ``.replace(**changes)`` and an ``rtt``
(the ``LoopModel`` protocol of ``docs/architecture.md``); this module knows no protocol. The
critical RTT of one model is :func:`qcnmodel.analysis.margins.critical_rtt` (re-exported here
with :func:`~qcnmodel.analysis.margins.rtt_offset` and
:func:`~qcnmodel.analysis.margins.extra_delay`). Maps over the RTT use
:func:`qcnmodel.analysis.margins.margins_over_delay` (one loop per row) whenever the model's
rational part does not depend on the RTT and its delay is ``rtt + constant``, the constant
taken row by row (the CP's sampling lag changes with Ps and the capacity); this is checked,
not assumed, and the map falls back to one loop per grid point otherwise.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np
import xarray as xr

from qcnmodel import config
from qcnmodel.analysis._args import delays
from qcnmodel.analysis.boundary import (
    check_method,
    judged_by_trajectories,
    judged_stable,
    stable_band,
    trajectory_boundary,
)
from qcnmodel.analysis.margins import critical_rtt, extra_delay, margins_over_delay, rtt_offset

__all__ = [
    "critical_rtt",
    "check_grid_size",
    "critical_rtt_curve",
    "extra_delay",
    "rtt_offset",
    "stability_map",
    "stable_band",
]

_VARS = (
    "phase_margin_deg",
    "gain_margin_db",
    "delay_margin_s",
    "crossover_rad_s",
    "stable",
)
_BOOL = ("stable", "valid")
_UNITS = {
    "phase_margin_deg": "deg",
    "gain_margin_db": "dB",
    "delay_margin_s": "s",
    "crossover_rad_s": "rad/s",
    "stable": "1",
    "valid": "1",
    "critical_rtt": "s",
    "rtt": "s",
    "n_flows": "1",
    "w": "1",
    "ps": "1",
}


def _model_attrs(model) -> dict[str, Any]:
    """Scalar attributes describing the model (netCDF-safe)."""
    attrs: dict[str, Any] = {"model": getattr(model, "name", type(model).__name__)}
    attrs["model_class"] = type(model).__name__
    try:
        import qcnmodel

        attrs["qcnmodel_version"] = str(getattr(qcnmodel, "__version__", "unknown"))
    except ImportError:  # pragma: no cover - package always importable here
        attrs["qcnmodel_version"] = "unknown"
    if dataclasses.is_dataclass(model):
        for f in dataclasses.fields(model):
            v = getattr(model, f.name)
            if f.name == "params" and hasattr(v, "to_toml"):
                attrs["params_toml"] = v.to_toml()
            elif isinstance(v, (int, float, str, bool, np.number)):
                attrs[f"model_{f.name}"] = v if not isinstance(v, bool) else int(v)
    return attrs


def _empty_row(n: int) -> dict[str, np.ndarray]:
    out = {v: np.full(n, np.nan) for v in _VARS}
    out["stable"] = np.zeros(n, bool)
    out["valid"] = np.zeros(n, bool)
    return out


def _margins_row(model, x: str, xs: np.ndarray, offset: float | None) -> dict[str, np.ndarray]:
    """One row of the map; points where the model raises ValueError (e.g. no
    equilibrium) are NaN, unstable and ``valid = False``."""
    if x == "rtt" and offset is not None:
        try:  # a loop may defer its equilibrium to the first evaluation
            loop = model.replace(rtt=float(xs[0])).loop()
            m = margins_over_delay(loop, xs + offset)
        except ValueError:
            return _empty_row(xs.size)
        out = {v: np.asarray(getattr(m, v)) for v in _VARS}
        out["valid"] = np.ones(xs.size, bool)
        return out
    out = _empty_row(xs.size)
    for j, xv in enumerate(xs.tolist()):
        try:
            loop = model.replace(**{x: xv}).loop()
            m = margins_over_delay(loop, np.array([loop.delay])).at(0)
        except ValueError:
            continue
        for v in _VARS:
            out[v][j] = getattr(m, v)
        out["valid"][j] = True
    return out


def _row_offset(row_model) -> float | None:
    """The loop delay beyond the RTT of one row's model (None where it has no loop, or where
    the RTT enters the rational part of its loop). Each row has its own: the CP's sampling
    lag, for one, changes with Ps and the capacity."""
    try:
        return extra_delay(row_model)
    except ValueError:
        return None


def _cp_latency(model) -> float:
    """The CP latency (s) of ``model``'s parameter set, 0 without one: no RTT is shorter."""
    return float(getattr(getattr(model, "params", None), "cp_latency", 0.0) or 0.0)


def _axis_values(model, name: str, values, field: str) -> np.ndarray:
    """The grid values of the model parameter ``name`` as numbers in SI units: each one
    as the model reads it (``model.replace(**{name: value})``, so unit strings such as
    ``"26KB"`` go through the parameter's own parser and range); RTTs through
    :func:`~qcnmodel.analysis._args.delays`. A value given twice is refused, naming
    ``field``."""
    if name == "rtt":
        vals = delays(values, field)
    else:
        items = np.asarray(values, dtype=object)
        if items.ndim != 1:
            raise ValueError(f"{field}: must be a non-empty 1-D sequence, got {values!r}")
        vals = []
        for v in items.tolist():
            if isinstance(v, str) and hasattr(model, "replace"):
                try:
                    pt = model.replace(**{name: v})
                except ValueError as exc:
                    raise ValueError(f"{field}: {exc}") from None
                v = getattr(pt, name, None)
                v = getattr(getattr(pt, "params", None), name, None) if v is None else v
            vals.append(v)
        try:
            vals = np.asarray(vals, float)
        except (TypeError, ValueError):
            raise ValueError(f"{field}: must be numbers (or unit strings such as '26KB'), "
                             f"got {values!r}") from None  # fmt: skip
    if name == "n_flows" and not np.all(vals == np.round(vals)):
        raise ValueError(f"{field}: n_flows must be whole numbers, got {values!r}")
    uniq, counts = np.unique(vals, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"{field}: {name} = {uniq[counts > 1][0]:g} is given "
                         f"{counts.max()} times; give each value once")  # fmt: skip
    return vals


#: bytes of results one grid point holds: four float margins and the two flags, as the
#: map's arrays (``_VARS`` and ``valid``; the Dataset built from them holds them once more)
BYTES_PER_POINT = 4 * 8 + 2 * 1


def _axis_length(values, default: int) -> int | None:
    """The number of values of a grid axis, without reading them: ``default`` for None, 1
    for one unit string, ``len`` (an array's size) for a sequence; None when it has no
    length (a generator, a scalar: the checks of the values answer it)."""
    if values is None:
        return default
    if isinstance(values, str):
        return 1
    size = getattr(values, "size", None)
    if isinstance(size, (int, np.integer)):
        return int(size)
    try:
        return len(values)
    except TypeError:
        return None


def check_grid_size(x_values, y_values) -> None:
    """Refuse a grid of more than ``config.defaults["analysis.map_max_points"]`` points from
    the lengths of ``x_values`` and ``y_values`` alone (the defaults' lengths where None),
    before any value is read or parsed: reading ten million values takes seconds, and
    computing them far longer. The message names both arguments, their lengths, the size of
    the results they would hold (:data:`BYTES_PER_POINT` per point) and the limit."""
    lo, hi, n = config.defaults["analysis.map_rtt"]
    nx = _axis_length(x_values, int(n))
    ny = _axis_length(y_values, int(config.defaults["analysis.map_max_flows"]))
    limit = int(config.defaults["analysis.map_max_points"])
    if nx is None or ny is None or nx * ny <= limit:
        return
    need = nx * ny * BYTES_PER_POINT
    raise ValueError(f"x_values, y_values: {nx:,} x {ny:,} = {nx * ny:,} grid points (about "
                     f"{need / 2**20:,.0f} MiB of results, one margin computation per point) "
                     f"is above the limit of {limit:,} points "
                     f'(qcnmodel.config.defaults["analysis.map_max_points"]); give fewer '
                     "values")  # fmt: skip


def _check_grid(model, x, xs, y, ys) -> None:
    """Refuse, before any point is computed, a grid the map cannot answer: a name the model
    does not have, values that are not finite numbers (an RTT or a flow count must be
    positive), or more points than ``analysis.map_max_points``."""
    check_grid_size(xs, ys)  # axes given without a length are sized here, once read
    for name, vals in ((x, xs), (y, ys)):
        field = "x_values" if name == x else "y_values"
        try:
            v = np.asarray(vals, float)
        except (TypeError, ValueError):
            raise ValueError(f"{field}: must be numbers, got {vals!r}") from None
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{field}: must be finite numbers, got {vals!r}")
        if name in ("rtt", "n_flows") and np.any(v <= 0):
            raise ValueError(f"{field}: {name} must be > 0, got {vals!r}")
        lat = _cp_latency(model)
        if name == "rtt" and np.any(v < lat):
            raise ValueError(f"{field}: every rtt must be at least the CP latency, which the "
                             f"loop delay contains (cp_latency = {lat:g} s), got "
                             f"{v.min():g} s")  # fmt: skip
        try:
            model.replace(**{name: vals[0].item() if hasattr(vals[0], "item") else vals[0]})
        except (TypeError, ValueError) as exc:
            axis = "x" if name == x else "y"
            own = ", ".join(f.name for f in dataclasses.fields(model) if f.name != "params"
                            ) if dataclasses.is_dataclass(model) else ""  # fmt: skip
            raise ValueError(f"{axis}: {name!r}: {exc}"
                             + (f"; the model's own arguments are {own}" if own else "")
                             ) from None  # fmt: skip


def stability_map(
    model,
    x: str = "rtt",
    x_values=None,
    y: str = "n_flows",
    y_values=None,
    progress: bool = False,
    method: str = "model",
) -> xr.Dataset:
    """Margins over a grid of two model parameters.

    Parameters
    ----------
    model : LoopModel
        Base model; grid points are ``model.replace(**{y: yv, x: xv})``.
    x, y : str
        Parameter names (``rtt``, ``n_flows``, ``w``, ``ps`` or any field the
        model's ``replace`` accepts).
    x_values, y_values : array_like
        Grid values: numbers in SI units or unit strings (``"50us"``, ``"26KB"``), read by
        the model's own parameter parsers; each value once.  Defaults
        (:mod:`qcnmodel.config`): ``analysis.map_rtt``, RTT 1 us .. 1 ms (100 log-spaced;
        from the parameter set's ``cp_latency`` when it is longer: every RTT contains it),
        and ``analysis.map_max_flows``, N = 1 .. 100.
    progress : bool
        Print one line per row to stderr.
    method : {"model", "linearisation"}
        How ``stable`` and ``critical_rtt`` are judged: the model's own boundary method
        (default; for the congested packet-fidelity QCN model and DCQCN's ``packet`` their
        trajectories, one critical RTT per row of an RTT axis, seconds each), or the
        linearised loop throughout.

    Returns
    -------
    xarray.Dataset
        Variables ``phase_margin_deg``, ``gain_margin_db``, ``delay_margin_s``,
        ``crossover_rad_s``, ``stable`` and ``valid`` (False where the model
        raised ``ValueError``, e.g. no equilibrium, and no trajectories judged the point;
        values NaN there) over dims
        ``(y, x)`` named after the parameters; with ``x == "rtt"`` also
        ``critical_rtt`` over ``y``, and where trajectories judge, ``stable_from_rtt`` over
        ``y``: NaN, or for a row whose runs cycle at small RTTs (many flows with their timers
        in step) the start of the band of the row's RTTs where they are stable, which ends at
        that row's ``critical_rtt``.
        ``attrs`` hold the model name, its parameters and the package version.

    Notes
    -----
    ``stable`` comes from the delay-sweep argument principle of
    :func:`~qcnmodel.analysis.margins.margins_over_delay` (exact delay), not from PM > 0.
    """
    if x == y:
        raise ValueError(f"x and y must differ (both {x!r})")
    if not (hasattr(model, "replace") and hasattr(model, "loop")):
        raise ValueError(f"model: must be a loop model (with replace() and loop()), got "
                         f"{type(model).__name__}")  # fmt: skip
    check_grid_size(x_values, y_values)  # from the lengths alone, before a value is read
    lo, hi, n = config.defaults["analysis.map_rtt"]
    lo = max(lo, min(_cp_latency(model), hi))
    if x_values is not None:  # numbers in SI units, or unit strings ("50us", "26KB")
        x_values = _axis_values(model, x, x_values, "x_values")
    if y_values is not None:
        y_values = _axis_values(model, y, y_values, "y_values")
    xs = np.asarray(np.geomspace(lo, hi, n) if x_values is None else x_values, float)
    ys = np.asarray(
        np.arange(1, config.defaults["analysis.map_max_flows"] + 1)
        if y_values is None
        else y_values
    )
    if xs.ndim != 1 or ys.ndim != 1 or xs.size == 0 or ys.size == 0:
        raise ValueError("x_values and y_values must be non-empty 1-D arrays")
    _check_grid(model, x, xs, y, ys)
    if y == "n_flows":
        ys = ys.astype(int)
    names = (*_VARS, "valid")
    data = {v: np.empty((ys.size, xs.size), dtype=bool if v in _BOOL else float) for v in names}
    fast = False
    for i, yv in enumerate(ys.tolist()):
        row_model = model.replace(**{y: yv})
        offset = _row_offset(row_model) if x == "rtt" else None
        fast = fast or offset is not None
        row = _margins_row(row_model, x, xs, offset)
        for v in names:
            data[v][i] = row[v]
        if progress:
            print(f"stability_map: {y}={yv} ({i + 1}/{ys.size})", file=sys.stderr)
    ds = xr.Dataset(
        {v: ((y, x), data[v], {"units": _UNITS[v]}) for v in names},
        coords={y: (y, ys, {"units": _UNITS.get(y, "")}), x: (x, xs, {"units": _UNITS.get(x, "")})},
        attrs=_model_attrs(model) | {"x": x, "y": y, "fast_path": int(fast)},
    )
    if x == "rtt":
        crit = ds["delay_margin_s"] + ds[x]  # PM is linear in the delay on the fast path
        ds["critical_rtt"] = (y, crit.isel({x: 0}).values, {"units": "s"})
        if not fast:  # generic: solve per row
            ds["critical_rtt"] = critical_rtt_curve(model, y, ys, method="linearisation")
    if check_method(method) == "model":
        _judge_by_trajectories(model, ds, x, y)
    return ds


def _judge_by_trajectories(model, ds: xr.Dataset, x: str, y: str) -> None:
    """Where a grid point's model declares ``boundary_method = "trajectories"`` (the
    congested packet-fidelity QCN model), ``stable`` is ``rtt < critical_rtt`` of its
    trajectories (:func:`~qcnmodel.analysis.margins.critical_rtt`, one per row or column of
    an RTT axis; off an RTT axis, the majority verdict of its runs at the point itself), in
    place; the margins stay the linearised loop's. Trajectories that need no fixed point
    (``trajectory_needs_loop = False``, DCQCN's every-flow runs) judge the points without one
    too, which become ``valid`` with NaN margins."""
    xs, ys = ds[x].values.tolist(), ds[y].values.tolist()
    if y == "rtt":  # one critical RTT per column
        x, y, xs, ys, transpose = y, x, ys, xs, True
    else:
        transpose = False
    for i in range(len(ys)):
        for j in range(len(xs)) if x != "rtt" else [0]:
            try:
                pt = model.replace(**{y: ys[i], x: xs[j]})
            except ValueError:
                continue
            row = (slice(None), i) if transpose else (i, slice(None))
            cell = row if x == "rtt" else (i, j)  # a row of an RTT axis, or one point
            if not judged_by_trajectories(pt):
                continue
            if getattr(pt, "trajectory_needs_loop", True):
                if not np.any(ds["valid"].values[cell]):
                    continue  # no equilibrium there: no loop, no trajectories judged
            else:
                ds["valid"].values[cell] = True  # judged, with or without a fixed point
            if x == "rtt" and "stable_from_rtt" not in ds:  # wherever trajectories judge
                ds["stable_from_rtt"] = (y, np.full(len(ys), np.nan), {"units": "s"})
            try:
                if x == "rtt":
                    crit, band = trajectory_boundary(pt)
                    ds["stable"].values[cell] = judged_stable(pt, xs, None, crit, band)
                    if band is not None:
                        crit = band[1]
                        ds["stable_from_rtt"].values[i] = band[0]
                else:
                    crit = None
                    ds["stable"].values[cell] = not pt.trajectory_unstable()
            except (ValueError, RuntimeError):  # the trajectories failed here: no verdict
                crit = np.nan
                ds["valid"].values[cell] = False
                ds["stable"].values[cell] = False
            if crit is not None and "critical_rtt" in ds:
                ds["critical_rtt"].values[i] = crit


def critical_rtt_curve(model, y: str, y_values, **kw) -> xr.DataArray:
    """Critical RTT (largest RTT with a positive phase margin) as a function of ``y``.

    Parameters
    ----------
    model : LoopModel
    y : str
        Parameter swept (``n_flows``, ``w``, ``ps`` ...).
    y_values : array_like
    **kw
        Passed to :func:`critical_rtt` (its search interval and tolerances).

    Returns
    -------
    xarray.DataArray
        ``critical_rtt`` (s) over dim ``y``; ``inf`` where no crossover or no
        loss up to ``rtt_max``; NaN where the model raises ``ValueError``.
    """
    ys = np.asarray(y_values)
    if y == "n_flows":
        ys = ys.astype(int)
    out = np.empty(ys.size)
    for i, yv in enumerate(ys.tolist()):
        try:
            out[i] = critical_rtt(model.replace(**{y: yv}), **kw)
        except ValueError:  # no loop at this operating point
            out[i] = np.nan
    return xr.DataArray(
        out,
        dims=(y,),
        coords={y: ys},
        name="critical_rtt",
        attrs={"units": "s"} | _model_attrs(model),
    )
