"""Traces of a kernel (or oracle) run as an :class:`xarray.Dataset`, with export helpers.

The kernel records, at the end of every bin of width ``bin_width``: each port's queue
(instantaneous, time integral, maximum since the previous bin), cumulative transmitted bytes
and drops, the global cumulative counters, and the traced rate limiters' CR, TR, byte-counter
stage, timer stage and activity; the traced flows' delivered bytes are binned at their arrival
time. :func:`build_dataset` turns these into rates and per-bin quantities:

============================ ============ ==============================================
variable                      dims         meaning
============================ ============ ==============================================
``hot_queue``                 time         hot port queue at the bin end (bytes)
``hot_queue_mean`` / ``_max`` time         time average / maximum over the bin
``queue`` (+``_mean``/``_max``) port, time every port's output queue (bytes)
``port_throughput``           port, time   bits sent per second over the bin
``hot_port_throughput``       time         same, for the hot port
``port_arrivals``             port, time   bits per second offered to the port's queue
                                           (enqueued + dropped; exact: sent + queue change)
``hot_port_arrivals``         time         same, for the hot port
``port_drops``, ``drops``     (port,) time frames dropped during the bin
``pause_frames``, ``cnms``    time         PAUSE frames / CNMs sent during the bin
``delivered_throughput``      time         all delivered bits per second
``flow_throughput``           flow, time   traced flows' delivered bit/s
``cr``, ``tr``                flow, time   RL rates at the bin end (C when inactive)
``bc_stage``, ``t_stage``     flow, time   RL stages at the bin end
``rl_active``                 flow, time   1 while the RL exists
``alpha`` (DCQCN only)        flow, time   DCQCN's congestion estimate alpha at the bin end
============================ ============ ==============================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from qcnmodel.sim.kernel.state import (
    TG_CNM,
    TG_DBYTES,
    TG_DROP,
    TG_PAUSE,
    TQ_AREA,
    TQ_DROPS,
    TQ_MAX,
    TQ_Q,
    TQ_TXB,
    TR_ACTIVE,
    TR_BC,
    TR_CR,
    TR_TR,
    TR_TS,
    TR_X,
)

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["build_dataset", "decimate", "port_arrival_bytes", "to_csv", "window"]


def _diff(cum: np.ndarray) -> np.ndarray:
    """Per-bin increments of a cumulative series along the last axis."""
    out = np.diff(cum, axis=-1, prepend=0)
    return out


def port_arrival_bytes(TQ, port, frame_size) -> np.ndarray:
    """Bytes offered to a port's output queue per bin: sent + queue growth + dropped.

    Exact, because the queue counts enqueued bytes until their transmission starts and the
    transmitted bytes are counted at that start; drops are frames of ``frame_size`` bytes.
    """
    sent = _diff(TQ[TQ_TXB, port].astype(float))
    dq = np.diff(TQ[TQ_Q, port].astype(float), prepend=0.0)
    return sent + dq + _diff(TQ[TQ_DROPS, port].astype(float)) * frame_size


def build_dataset(
    TQ, TG, TFB, TRP, *, net, traced_flows, bin_ns, end_ns, hot_port, attrs, extra=None
):  # fmt: skip
    """Assemble the dataset (see the module table) from the raw trace arrays.

    ``extra``: name of the protocol-specific RL trace (row ``TR_X``; DCQCN: ``"alpha"``),
    added as a (flow, time) variable; None adds nothing.
    """
    nbins = TG.shape[1]
    edges = np.minimum((np.arange(nbins) + 1) * bin_ns, end_ns)
    starts = np.arange(nbins) * bin_ns
    width_s = (edges - starts) / 1e9
    t = edges / 1e9
    ports = [net.port_name(p) for p in range(net.n_ports)]
    flows = [net.flow_names[f] for f in traced_flows]
    area = TQ[TQ_AREA].astype(float)
    qmean = _diff(area) / (width_s * 1e9)
    thr = _diff(TQ[TQ_TXB].astype(float)) * 8.0 / width_s
    ntr = len(traced_flows)
    import xarray as xr  # imported here: a run does not pay for it before its first event

    ds = xr.Dataset(
        {
            "queue": (("port", "time"), TQ[TQ_Q]),
            "queue_mean": (("port", "time"), qmean),
            "queue_max": (("port", "time"), TQ[TQ_MAX]),
            "port_throughput": (("port", "time"), thr),
            "port_arrivals": (
                ("port", "time"),
                np.stack([port_arrival_bytes(TQ, p, net.frame_size) for p in range(net.n_ports)])
                * 8.0
                / width_s,
            ),
            "port_drops": (("port", "time"), _diff(TQ[TQ_DROPS])),
            "drops": ("time", _diff(TG[TG_DROP])),
            "pause_frames": ("time", _diff(TG[TG_PAUSE])),
            "cnms": ("time", _diff(TG[TG_CNM])),
            "delivered_throughput": ("time", _diff(TG[TG_DBYTES].astype(float)) * 8.0 / width_s),
            "flow_throughput": (("flow", "time"), TFB[:ntr].astype(float) * 8.0 / width_s),
            "cr": (("flow", "time"), TRP[TR_CR, :ntr]),
            "tr": (("flow", "time"), TRP[TR_TR, :ntr]),
            "bc_stage": (("flow", "time"), TRP[TR_BC, :ntr]),
            "t_stage": (("flow", "time"), TRP[TR_TS, :ntr]),
            "rl_active": (("flow", "time"), TRP[TR_ACTIVE, :ntr]),
        },
        coords={"time": t, "port": ports, "flow": flows},
        attrs=dict(attrs),
    )
    if extra is not None:
        ds[extra] = (("flow", "time"), TRP[TR_X, :ntr])
    if hot_port >= 0:
        for v in ("queue", "queue_mean", "queue_max"):
            ds["hot_" + v] = ds[v].isel(port=hot_port)
        ds["hot_port_throughput"] = ds["port_throughput"].isel(port=hot_port)
        ds["hot_port_arrivals"] = ds["port_arrivals"].isel(port=hot_port)
        ds.attrs["hot_port"] = ports[hot_port]
    units = {"queue": "bytes", "throughput": "bit/s", "cr": "bit/s", "tr": "bit/s"}
    for name in ds.data_vars:
        for key, unit in units.items():
            if key in name:
                ds[name].attrs["units"] = unit
    ds["time"].attrs.update(units="s", long_name="bin end time")
    return ds


def window(ds: xr.Dataset, t0: float | None = None, t1: float | None = None) -> xr.Dataset:
    """Keep the bins whose end time lies in [t0, t1]."""
    return ds.sel(time=slice(t0, t1))


def decimate(ds: xr.Dataset, k: int) -> xr.Dataset:
    """Merge every ``k`` bins: maxima by max, counts by sum, end-of-bin values by last,
    everything else (rates, means) by mean. Bins left over at the end (when ``k`` does not
    divide their number) make a last, shorter group.

    The attributes say so, in the words of the memory limit's merge: ``bin_width_s`` the
    merged bin, ``bin_width_requested_s`` the bin asked for (kept when an earlier merge set
    it), ``bins_merged`` the requested bins in one merged bin (both merges together),
    ``decimation`` ``k``, and ``last_bin_width_s`` the last group's width (shorter than
    ``bin_width_s`` when bins were left over; its counts are of fewer bins)."""
    if k <= 1:
        return ds
    n = ds.sizes["time"]
    last = np.minimum(np.arange(k - 1, n + k - 1, k), n - 1)  # each group's last bin
    c = ds.coarsen(time=k, boundary="pad")  # padded with NaN, which the reductions skip
    out = c.mean()
    for name in ds.data_vars:
        if "time" not in ds[name].dims:
            continue
        if name.endswith("_max") or name in ("drops", "port_drops", "pause_frames", "cnms"):
            one = ds[name].coarsen(time=k, boundary="pad")  # this variable only
            red = one.max() if name.endswith("_max") else one.sum()
            out[name] = red.astype(ds[name].dtype) if ds[name].dtype.kind in "iu" else red
        elif name in ("queue", "hot_queue", "cr", "tr", "bc_stage", "t_stage", "rl_active",
                      "alpha"):  # fmt: skip
            # on the merged bins' time labels first: assigned with its own, xarray would
            # align them with the means' labels, which differ, and leave NaN everywhere
            out[name] = ds[name].isel(time=last).assign_coords(time=out["time"].values)
    out["time"] = ds["time"].values[last]
    out.attrs = dict(ds.attrs)
    if "bin_width_s" in ds.attrs:
        width = float(ds.attrs["bin_width_s"])
        out.attrs.setdefault("bin_width_requested_s", width)
        out.attrs["bins_merged"] = int(ds.attrs.get("bins_merged", 1)) * int(k)
        out.attrs["bin_width_s"] = width * k
        out.attrs["last_bin_width_s"] = width * (n - (len(last) - 1) * k)
    out.attrs["decimation"] = int(k)
    return out


def to_csv(ds: xr.Dataset, path) -> None:
    """Write the time series as one wide CSV table (one column per variable and port/flow)."""
    cols = {"time_s": ds["time"].values}
    for name, da in ds.data_vars.items():
        if da.dims == ("time",):
            cols[name] = da.values
        elif len(da.dims) == 2 and da.dims[1] == "time":
            dim = da.dims[0]
            for label, row in zip(ds[dim].values, da.values):
                cols[f"{name}[{label}]"] = row
    import pandas as pd

    pd.DataFrame(cols).to_csv(path, index=False)
