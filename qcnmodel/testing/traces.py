"""``assert_trace_close``: a model trajectory against a simulated trace of the same quantity.

A trace is any of: a :class:`~qcnmodel.sim.SimResult` or its dataset, a model trajectory
(the ``xarray.Dataset`` of a model's ``simulate()``), a
:class:`qcnmodel.validation.traces.Trace`, or a pair ``(t, values)`` of arrays. The named
quantities are looked up as:

=============== ============================================== ===============================
quantity        simulator dataset                              model trajectory
=============== ============================================== ===============================
``queue``       ``hot_queue_mean`` (CP queue, bin mean, B)     ``q`` (B)
``rate``        ``flow_throughput`` mean over flows (bit/s)    ``rate_sent`` else
                                                               ``rate_current`` (bit/s)
``throughput``  ``hot_port_throughput`` (bit/s)                ``throughput``
=============== ============================================== ===============================

Any other name is taken as a variable of both datasets (averaged over its non-time axis).

The comparison runs on the simulator's bins. The first trace is averaged over each of them:
a trajectory of point samples (a model's dataset, a pair) as the exact mean of its
piecewise-linear interpolant, so that a binned packet trace and a finely sampled trajectory
compare alike; a binned trace (a ``SimResult``, its dataset, a validation ``Trace``: each
value the mean over the bin that ends at its time) as the exact mean of its piecewise-constant
bins, which leaves it unchanged on the same bins, so a run compared with itself differs by 0.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from qcnmodel.testing import report
from qcnmodel.testing.report import fmt
from qcnmodel.units import parse_time

__all__ = ["QUANTITIES", "as_series", "assert_trace_close", "bin_edges"]

#: quantity -> candidate variable names, in order (module table)
QUANTITIES = {
    "queue": ("hot_queue_mean", "q", "hot_queue"),
    "rate": ("flow_throughput", "rate_sent", "rate_current"),
    "throughput": ("hot_port_throughput", "throughput"),
}
METRICS = ("mean", "rms", "max")


def as_series(trace, quantity: str) -> tuple[np.ndarray, np.ndarray]:
    """``(t, values)`` of ``quantity`` in ``trace`` (module docstring).

    Raises
    ------
    ValueError
        The trace has no such quantity (naming what it has).
    """
    if isinstance(trace, tuple) and len(trace) == 2:
        t, y = (np.asarray(a, dtype=float) for a in trace)
        if t.shape != y.shape or t.ndim != 1:
            raise ValueError(f"trace: (t, values) must be two 1-D arrays of one length, got "
                             f"shapes {t.shape} and {y.shape}")  # fmt: skip
        return t, y
    if hasattr(trace, "q") and hasattr(trace, "thr") and hasattr(trace, "t"):  # validation Trace
        y = {"queue": trace.q, "throughput": trace.thr,
             "rate": np.asarray(trace.flow_thr).mean(axis=0)}.get(quantity)  # fmt: skip
        if y is None:
            raise ValueError(f"quantity: unknown {quantity!r} for a Trace (queue, rate, "
                             "throughput)")  # fmt: skip
        return np.asarray(trace.t, float), np.asarray(y, float)
    ds = getattr(trace, "dataset", trace)
    if ds is None or not hasattr(ds, "data_vars"):
        raise ValueError(
            "trace: expected a SimResult, a dataset, a validation Trace or (t, values); got "
            f"{type(trace).__name__}"
            + (" without a dataset (run with trace=True)" if ds is None else "")  # fmt: skip
        )
    for name in QUANTITIES.get(quantity, (quantity,)):
        if name in ds.data_vars:
            da = ds[name]
            other = [d for d in da.dims if d != "time"]
            if other:
                da = da.mean(dim=other)
            return np.asarray(ds["time"].values, float), np.asarray(da.values, float)
    raise ValueError(
        f"quantity: {quantity!r} not found in the trace (looked for "
        f"{', '.join(QUANTITIES.get(quantity, (quantity,)))}; it has "
        f"{', '.join(sorted(map(str, ds.data_vars)))})"
    )


def bin_edges(trace, t: np.ndarray) -> np.ndarray | None:
    """The ``len(t) + 1`` bin edges of a binned trace, None for point samples.

    A ``SimResult``, its dataset (attribute ``bin_width_s``) and a validation ``Trace``
    (``dt``) hold bin means with ``t`` the bins' ends; the first bin starts one bin width
    before ``t[0]``, each other where the previous one ends.
    """
    if isinstance(trace, tuple):
        return None
    if hasattr(trace, "q") and hasattr(trace, "thr") and hasattr(trace, "dt"):
        width = float(trace.dt)
    else:
        ds = getattr(trace, "dataset", trace)
        width = getattr(ds, "attrs", {}).get("bin_width_s")
        if width is None:
            return None
        width = float(width)
    return np.concatenate([[t[0] - width], t])


def _step_means(edges_model, y_model, edges) -> np.ndarray:
    """Mean over each [edges[k], edges[k+1]] of the piecewise-constant function that is
    y_model[i] on [edges_model[i], edges_model[i+1]]; y_model itself on the same edges."""
    if len(edges_model) == len(edges) and np.array_equal(edges_model, edges):
        return np.asarray(y_model, dtype=float)
    cum = np.concatenate([[0.0], np.cumsum(y_model * np.diff(edges_model))])
    area = np.interp(edges, edges_model, cum)  # exact: the integral of a step is linear
    return np.diff(area) / np.diff(edges)


def _bin_means(t_model, y_model, edges) -> np.ndarray:
    """Mean of the piecewise-linear (t_model, y_model) over each [edges[k], edges[k+1]]."""
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (y_model[1:] + y_model[:-1])
                                           * np.diff(t_model))])  # fmt: skip
    area = np.interp(edges, t_model, cum)
    return np.diff(area) / np.diff(edges)


def _tol(value, field: str) -> float:
    """A relative (``0.1``, ``"10%"``) or absolute allowance: a finite number >= 0."""
    v = math.nan
    if isinstance(value, str):
        text = value.strip()
        pct = text.endswith("%")
        try:
            v = float(text[:-1] if pct else text) / (100 if pct else 1)
        except ValueError:
            pass
    elif isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        v = float(value)
    if not (v >= 0 and math.isfinite(v)):
        raise ValueError(f"{field}: must be a finite number >= 0 (or 'N%'), got {value!r}")
    return v


def assert_trace_close(model_trace, sim_trace, quantity="queue", tolerance=0.1, *,
                       metric="mean", settle=0.0, until=None, atol=0.0):  # fmt: skip
    """Assert that a model's trace of ``quantity`` is close to the simulated one.

    Parameters
    ----------
    model_trace, sim_trace
        The two traces (module docstring); the comparison runs on the simulator's bins.
        ``model_trace`` is averaged over each: a trajectory of point samples through its
        piecewise-linear interpolant, a binned trace (a ``SimResult``, its dataset, a
        validation ``Trace``) bin by bin, unchanged on the same bins.
    quantity : str
        ``"queue"``, ``"rate"``, ``"throughput"`` or a variable name of both traces.
    tolerance : float or str
        Allowed error relative to the simulated time mean of ``|quantity|`` (``0.1`` or
        ``"10%"``).
    metric : {"mean", "rms", "max"}
        ``"mean"``: difference of the time means (equilibrium level); ``"rms"``: root mean
        square of the bin-by-bin difference (shape; packet noise counts); ``"max"``: the
        largest bin-by-bin difference.
    settle, until : float or str, optional
        Compare the bins that start at or after ``settle`` and end by ``until`` (s).
    atol : float
        Absolute allowance added to the relative one (units of the quantity).

    Raises
    ------
    AssertionError
        The error exceeds ``tolerance * |sim mean| + atol``; the message gives both means,
        the error, the allowance and the path of a figure of the two traces.
    """
    if metric not in METRICS:
        raise ValueError(f"metric: must be one of {', '.join(METRICS)}, got {metric!r}")
    tol, atol = _tol(tolerance, "tolerance"), _tol(atol, "atol")
    tm, ym = as_series(model_trace, quantity)
    ts, ys = as_series(sim_trace, quantity)
    if len(ts) < 2 or len(tm) < 2:
        raise ValueError("trace: each trace needs at least two samples")
    edges = bin_edges(sim_trace, ts)
    if edges is None:  # a pair (t, values): bins ending at t, the first as wide as the second
        edges = np.concatenate([[ts[0] - (ts[1] - ts[0])], ts])
    model_edges = bin_edges(model_trace, tm)
    start = tm[0] if model_edges is None else model_edges[0]  # the model covers [start, tm[-1]]
    t0 = parse_time(settle, "settle")
    t1 = math.inf if until is None else parse_time(until, "until")
    sel = (edges[:-1] >= t0 - 1e-12) & (ts <= t1 + 1e-12) & (edges[:-1] >= start - 1e-12)
    sel &= ts <= tm[-1] + 1e-12
    if sel.sum() < 1:
        raise ValueError(
            f"settle: no simulator bin in [{t0:g}, {min(t1, tm[-1]):g}] s is covered by the "
            f"model trace ({tm[0]:g}..{tm[-1]:g} s)"
        )
    if model_edges is None:
        mb = _bin_means(tm, ym, edges)[sel]
    else:
        mb = _step_means(model_edges, ym, edges)[sel]
    sb = ys[sel]
    ms, mm = float(np.mean(sb)), float(np.mean(mb))
    diff = mb - sb
    err = {"mean": abs(mm - ms), "rms": float(np.sqrt(np.mean(diff**2))),
           "max": float(np.max(np.abs(diff)))}[metric]  # fmt: skip
    scale = float(np.mean(np.abs(sb)))
    allowed = tol * scale + atol
    ok = bool(err <= allowed)
    fig = None
    if report.figures_wanted(ok):
        fig = _figure(tm, ym, ts, ys, edges[:-1][sel][0], ts[sel][-1], quantity, err, allowed,
                      metric)  # fmt: skip
    rel = err / scale if scale > 0 else math.inf
    plus = f" + {fmt(atol)}" if atol else ""
    msg = (f"{quantity} ({metric}): error {fmt(err)} = {fmt(100 * rel)} % of the simulated mean "
           f"{fmt(scale)}, allowed {fmt(allowed)} ({fmt(100 * tol)} %{plus}); model mean "
           f"{fmt(mm)}, simulated mean {fmt(ms)} over {int(sel.sum())} bins "
           f"{fmt(edges[:-1][sel][0])}..{fmt(ts[sel][-1])} s"
           + (f"\nfigure: {fig}" if fig else ""))  # fmt: skip
    numbers = {"model mean": mm, "simulated mean": ms, f"error ({metric})": err,
               "relative error": rel, "allowed": allowed, "bins": int(sel.sum())}  # fmt: skip
    report.add("assert_trace_close", f"{quantity}, {metric} within {fmt(100 * tol)} %", ok,
               numbers, msg, [fig] if fig else [])  # fmt: skip
    if not ok:
        raise AssertionError("assert_trace_close: " + msg)


def _figure(tm, ym, ts, ys, a, b, quantity, err, allowed, metric) -> str:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(ts, ys, lw=0.8, label="simulator")
    ax.plot(tm, ym, lw=0.8, label="model")
    ax.axvspan(a, b, color="grey", alpha=0.1, label="compared")
    ax.set(xlabel="time (s)", ylabel=quantity,
           title=f"{metric} error {fmt(err)} (allowed {fmt(allowed)})")  # fmt: skip
    ax.legend(fontsize=8)
    fig.tight_layout()
    return report.save_figure(fig, f"assert_trace_close-{quantity}")
