"""Stability maps of loop models over two parameters, as xarray Datasets.

A model is anything following the ``LoopModel`` protocol of
``docs/architecture.md``: ``.loop() -> DelayedLoop`` and ``.replace(**changes)``.
Maps over the RTT use :func:`qcnmodel.margins.margins_over_delay` (one loop per
row) whenever the model's rational part does not depend on the RTT and its
delay is ``rtt + constant``; this is checked, not assumed, and the map falls
back to one loop per grid point otherwise.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np
import xarray as xr

from qcnmodel.margins import critical_rtt, margins_over_delay

__all__ = ["stability_map", "critical_rtt_curve", "rtt_offset"]

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


def rtt_offset(model, rtt_a: float = 1e-6, rtt_b: float = 1e-3) -> float | None:
    """Constant ``d`` such that ``loop().delay == rtt + d`` with an RTT-free rational part.

    Parameters
    ----------
    model : LoopModel
    rtt_a, rtt_b : float
        Two RTTs (s) at which the loop is compared.

    Returns
    -------
    float or None
        The offset, or ``None`` when the rational part or the delay law
        depends on the RTT in another way (then no fast path).
    """
    la = model.replace(rtt=rtt_a).loop()
    lb = model.replace(rtt=rtt_b).loop()
    same = (
        la.num.shape == lb.num.shape
        and la.den.shape == lb.den.shape
        and np.allclose(la.num, lb.num, rtol=1e-12, atol=0)
        and np.allclose(la.den, lb.den, rtol=1e-12, atol=0)
    )
    da, db = la.delay - rtt_a, lb.delay - rtt_b
    if same and np.isclose(da, db, rtol=1e-9, atol=1e-15):
        return float(da)
    return None


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
        try:
            loop = model.replace(rtt=float(xs[0])).loop()
        except ValueError:
            return _empty_row(xs.size)
        m = margins_over_delay(loop, xs + offset)
        out = {v: np.asarray(getattr(m, v)) for v in _VARS}
        out["valid"] = np.ones(xs.size, bool)
        return out
    out = _empty_row(xs.size)
    for j, xv in enumerate(xs.tolist()):
        try:
            loop = model.replace(**{x: xv}).loop()
        except ValueError:
            continue
        m = margins_over_delay(loop, np.array([loop.delay])).at(0)
        for v in _VARS:
            out[v][j] = getattr(m, v)
        out["valid"][j] = True
    return out


def _first_offset(model, y: str, ys: np.ndarray) -> float | None:
    """rtt_offset at the first y value where the model has a loop."""
    for yv in ys.tolist():
        try:
            return rtt_offset(model.replace(**{y: yv}))
        except ValueError:
            continue
    return None


def stability_map(
    model,
    x: str = "rtt",
    x_values=None,
    y: str = "n_flows",
    y_values=None,
    progress: bool = False,
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
        Grid values (SI units).  Defaults: rtt 1 us .. 1 ms (100 log-spaced),
        n_flows 1..100.
    progress : bool
        Print one line per row to stderr.

    Returns
    -------
    xarray.Dataset
        Variables ``phase_margin_deg``, ``gain_margin_db``, ``delay_margin_s``,
        ``crossover_rad_s``, ``stable`` and ``valid`` (False where the model
        raised ``ValueError``, e.g. no equilibrium; values NaN there) over dims
        ``(y, x)`` named after the parameters; with ``x == "rtt"`` also
        ``critical_rtt`` over ``y``.
        ``attrs`` hold the model name, its parameters and the package version.

    Notes
    -----
    ``stable`` comes from the delay-sweep argument principle of
    :func:`~qcnmodel.margins.margins_over_delay` (exact delay), not from PM > 0.
    """
    if x == y:
        raise ValueError(f"x and y must differ (both {x!r})")
    xs = np.asarray(np.logspace(-6, -3, 100) if x_values is None else x_values, float)
    ys = np.asarray(np.arange(1, 101) if y_values is None else y_values)
    if xs.ndim != 1 or ys.ndim != 1 or xs.size == 0 or ys.size == 0:
        raise ValueError("x_values and y_values must be non-empty 1-D arrays")
    if y == "n_flows":
        ys = ys.astype(int)
    offset = _first_offset(model, y, ys) if x == "rtt" else None
    names = (*_VARS, "valid")
    data = {v: np.empty((ys.size, xs.size), dtype=bool if v in _BOOL else float) for v in names}
    for i, yv in enumerate(ys.tolist()):
        row = _margins_row(model.replace(**{y: yv}), x, xs, offset)
        for v in names:
            data[v][i] = row[v]
        if progress:
            print(f"stability_map: {y}={yv} ({i + 1}/{ys.size})", file=sys.stderr)
    ds = xr.Dataset(
        {v: ((y, x), data[v], {"units": _UNITS[v]}) for v in names},
        coords={y: (y, ys, {"units": _UNITS.get(y, "")}), x: (x, xs, {"units": _UNITS.get(x, "")})},
        attrs=_model_attrs(model) | {"x": x, "y": y, "fast_path": int(offset is not None)},
    )
    if x == "rtt":
        crit = ds["delay_margin_s"] + ds[x]  # PM is linear in the delay on the fast path
        ds["critical_rtt"] = (y, crit.isel({x: 0}).values, {"units": "s"})
        if offset is None:  # generic: solve per row
            ds["critical_rtt"] = critical_rtt_curve(model, y, ys)
    return ds


def critical_rtt_curve(model, y: str, y_values, **kw) -> xr.DataArray:
    """Critical RTT (largest RTT with a positive phase margin) as a function of ``y``.

    Parameters
    ----------
    model : LoopModel
    y : str
        Parameter swept (``n_flows``, ``w``, ``ps`` ...).
    y_values : array_like
    **kw
        Passed to :func:`qcnmodel.margins.critical_rtt` on the generic path.

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
            m = model.replace(**{y: yv})
            off = rtt_offset(m)
            out[i] = critical_rtt(m.loop()) - off if off is not None else critical_rtt(m, **kw)
        except ValueError:  # no loop at this operating point
            out[i] = np.nan
    return xr.DataArray(
        out,
        dims=(y,),
        coords={y: ys},
        name="critical_rtt",
        attrs={"units": "s"} | _model_attrs(model),
    )
