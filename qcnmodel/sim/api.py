"""``simulate()``: run a named scenario (or a NetworkSpec) and get a :class:`SimResult`.

Choices documented here:

* The RP line rate C (``QCNParams.line_rate``) is set to the sources' adapter link rate (the
  fastest host link) when they differ, so that ``netfpga-1g`` at 1 Gb/s and a 10 Gb/s preset
  stay consistent; ``frame_size`` follows the network's too (used values: ``SimResult.params``).
* ``protocol="none"`` switches congestion control off: no CP sampling, CNMs or RLs (the baseline
  every deck compares with). :func:`qcnmodel.sim.protocols.registry.split_overrides` routes
  ``overrides``; the protocol's parameter objects are in the dataset's ``protocol_params``.
* The measurement window (per-flow throughput, fairness, mean/peak hot queue, utilisation) is
  the scenario's ``measure``, else the first hotspot's interval (clipped to the run), else the run.
* Counters are always on; trace bins, traced flows and the engine of
  :func:`qcnmodel.sim.engines.run` (the same results bit for bit): :func:`simulate`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from qcnmodel import config
from qcnmodel._io import to_jsonable
from qcnmodel.params import QCNParams
from qcnmodel.sim import engines, metrics
from qcnmodel.sim.fair import fair_summary
from qcnmodel.sim.kernel.state import TQ_AREA, TQ_DROPS, TQ_MAX, TQ_Q, TQ_TXB
from qcnmodel.sim.network import ConstantFlow, NetworkSpec, compile_network
from qcnmodel.sim.protocols.registry import protocol_config, protocol_name, split_overrides
from qcnmodel.sim.scenarios import SCENARIOS, get_scenario
from qcnmodel.sim.traces import build_dataset, decimate, to_csv, window
from qcnmodel.units import parse_time

__all__ = ["SimResult", "list_scenarios", "simulate"]


def list_scenarios() -> dict[str, str]:
    """Scenario names with their one-line summaries."""
    return {name: s.summary for name, s in SCENARIOS.items()}


@dataclass(frozen=True)
class SimResult:
    """Result of :func:`simulate`: traces (``dataset``; None with ``trace=False``, then ``plot`` and
    ``to_*`` raise ValueError), ``counters`` and ``summary()``; frozen (fields are read-only)."""

    dataset: object = field(repr=False)
    counters: dict
    scenario: str
    protocol: str
    params: QCNParams
    duration: float
    seed: int
    wall_s: float
    flow_throughput_bps: dict = field(repr=False)  # every flow's: long (repr: the rest)
    metrics: dict = field(default_factory=dict, repr=False)

    def summary(self) -> dict:
        """The JSON summary of ``qcnmodel simulate --json``: counters, metrics, throughput.

        Returns
        -------
        dict
        """
        c = self.counters
        out = {
            "scenario": self.scenario,
            "protocol": self.protocol,
            "duration_s": self.duration,
            "seed": self.seed,
            "events": c["events"],
            "frames_offered": c["frames_offered"],
            "frames_blocked": c["frames_blocked"],
            "frames_sent": c["frames_sent"],
            "frames_delivered": c["frames_delivered"],
            "frames_dropped": c["frames_dropped"],
            "frames_in_flight": c["frames_in_flight"],
            "wall_s": self.wall_s,
            "events_per_s": c["events"] / self.wall_s if self.wall_s > 0 else None,
            "pause_frames": c["pause_frames"],
            "cnms": c["cnms"],
        }
        out.update(self.metrics)
        out["flow_throughput_bps"] = self.flow_throughput_bps
        return out

    def _traces(self, what: str):
        if self.dataset is None:
            raise ValueError(f"{what}: this run kept no traces (simulate(trace=False)); run "
                             "it with trace=True")  # fmt: skip
        return self.dataset

    def to_netcdf(self, path) -> None:
        """Write the dataset (with the summary as a JSON attribute) to netCDF, atomically.

        Parameters
        ----------
        path : str or Path
            Named ``*.nc``, ``*.nc4``, ``*.netcdf`` or without a suffix (ValueError else).
        """
        from qcnmodel._io import NETCDF_SUFFIXES, check_suffix
        from qcnmodel._netcdf import write_netcdf

        check_suffix(path, NETCDF_SUFFIXES, "path")  # not netCDF under another format's name
        ds = self._traces("to_netcdf").copy()
        ds.attrs["summary"] = json.dumps(to_jsonable(self.summary()))
        write_netcdf(ds, path)

    def to_csv(self, path) -> None:
        """Write the time series as one wide CSV table (a column per variable), atomically.

        Parameters
        ----------
        path : str or Path
        """
        from qcnmodel._io import atomic_path

        ds = self._traces("to_csv")
        with atomic_path(path) as tmp:
            to_csv(ds, tmp)

    def plot(self, **kw):
        """Plot hot queue, hot-port throughput and RL rates (see :mod:`.plots`).

        Parameters
        ----------
        **kw
            ``flows`` (CRs of the first N flows, default 8), ``axes`` (three Axes; default new).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from qcnmodel.sim.plots import plot_result

        self._traces("plot")
        return plot_result(self, **kw)


def _split_overrides(sc, overrides: dict, protocol: str = "qcn") -> tuple[dict, dict, dict]:
    """Route ``--set`` keys (see :mod:`qcnmodel.sim.protocols.registry`)."""
    return split_overrides(sc, overrides, protocol)


def _measure_window(spec: NetworkSpec, dur: float) -> tuple[float, float]:
    if spec.measure is not None:
        return spec.measure
    if spec.hotspots:
        hs = spec.hotspots[0]
        a, b = max(0.0, hs.start), min(dur, hs.stop)
        if b > a:
            return a, b
    return 0.0, dur


def simulate(
    scenario: str | NetworkSpec,
    protocol: str = "qcn",
    params: QCNParams | str | None = None,
    duration=None,
    seed: int = 0,
    overrides: dict | None = None,
    bin_width=None,
    trace=True,
    progress: bool = False,
    engine: str = "auto",
    window_s: tuple[float | None, float | None] | None = None,
    decimation: int = 1,
    max_traced_flows: int | None = None,
) -> SimResult:
    """Run one packet-level simulation.

    Parameters
    ----------
    scenario : str or NetworkSpec
        A name of :data:`qcnmodel.sim.scenarios.SCENARIOS` or a ready spec.
    protocol : str
        A name of :data:`qcnmodel.sim.protocols.PROTOCOLS` (none, qcn, ecm, ecm-q, qcn-h,
        qcn-p, qcn-hp, qcn-sp, qcn-pp, qcn-sonar, qcn-plus, dcqcn).
    params : QCNParams, preset name or None (the scenario's default preset)
    duration : float or str, optional
        Simulated time in [1 ns, 1e4 s] (default: the scenario's duration; for a spec
        ``config.defaults["sim.default_duration"]``, 1 s).
    seed : int
    overrides : dict, optional
        Scenario, QCNParams and/or protocol-class fields (unit strings accepted); a shared name goes
        to the scenario, then to QCNParams (for ECM and DCQCN to the protocol's class first).
    bin_width : float or str, optional
        Trace bin width in [1 ns, duration] (default ``config.defaults["sim.bin_width"]``,
        1 ms, or a tenth of a shorter run, at least 1 ns).
    trace : bool
        Build the xarray dataset (counters and the summary are always computed).
    progress : bool
        Show a progress bar on stderr (tqdm).
    engine : {"auto", "kernel", "oracle"}
        The compiled kernel or the pure-Python oracle (slow; for tests and comparisons); ``"auto"``
        (default) is the kernel, or the oracle (identical results) for a short run while the kernel
        is not compiled yet, saying so on stderr (:func:`qcnmodel.sim.engines.choose_engine`).
    window_s, decimation : optional
        Keep only bins ending in [t0, t1] (at least one); merge every ``decimation`` bins
        (a whole number from 1 to the number of bins kept).
    max_traced_flows : int, optional
        Per-flow traces (throughput, CR, TR, stages) of every flow up to this many flows (default
        ``config.defaults["sim.max_traced_flows"]``, 64), else of the fairness and hotspot flows.

    Returns
    -------
    SimResult
        Traces, counters, metrics, the ``params`` used, per-flow throughput (bit/s), summary().

    Raises
    ------
    ValueError
        Unknown scenario/parameter/protocol, an argument of the wrong type or an out-of-range
        value (names the field), before the run. Every time field of the run's parameter objects
        must be 0 or in [1 ns, 1e9 s]: the simulator's clock counts int64 nanoseconds (a shorter
        period would round to 0 and fire without end).
    """
    for name, flag in (("trace", trace), ("progress", progress)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name}: expected True or False, got {flag!r}")
    protocol = protocol_name(protocol)  # in any case, as the units ("QCN" is qcn)
    spec, sc, q_over, p_over = _resolve_network(scenario, protocol, overrides)
    net = compile_network(spec)
    params = _resolve_params(params, sc, q_over, net, spec)
    dur, bw, seed = _check_run(duration, bin_width, seed, sc)
    end_ns, bin_ns = int(round(dur * 1e9)), max(1, int(round(bw * 1e9)))
    window_s, decimation = _check_trace_options(window_s, decimation, end_ns, bin_ns)
    ma, mb = _measure_window(spec, dur)
    traced = _traced_flows(net, max_traced_flows)
    proto = protocol_config(protocol, p_over, params, q_over)
    if "QCNParams" in proto.params:
        params = proto.params["QCNParams"]  # with the protocol's implied settings
    _check_periods([params, *proto.params.values()])
    out = engines.run(
        engine, net, params, progress=progress, label=spec.name, qcn=protocol != "none",
        proto=proto, seed=seed, end_ns=end_ns, bin_ns=bin_ns,
        measure_ns=(int(round(ma * 1e9)), int(round(mb * 1e9))), traced_flows=traced,
        keep=bool(trace),
    )  # fmt: skip
    mwin = mb - ma
    thr = {net.flow_names[f]: float(out.window_bytes[f]) * 8.0 / mwin if mwin > 0 else 0.0
           for f in range(net.n_flows)}  # fmt: skip
    m = {"measure_window_s": [ma, mb], "compile_s": out.compile_s}
    m["jain_fairness"] = metrics.jain_fairness([thr[net.flow_names[f]] for f in net.fair_flows])
    m.update(fair_summary(net, thr))  # fair_share_bps (max-min), fairness_error
    if spec.hotspots and not _overlaps(spec.hotspots[0], ma, mb):
        # the max-min shares assume the hotspot drains at its rate: no reference here
        m["fairness_error"] = None
        m["metrics_note"] = (f"the hotspot ({spec.hotspots[0].start:g} s to "
                             f"{spec.hotspots[0].stop:g} s) is not active in the measurement "
                             f"window [{ma:g}, {mb:g}] s: no fairness error; utilisation is "
                             "against the link rate")  # fmt: skip
    m.update(_hot_port_metrics(spec, net, out.HQ, (ma, mb), bin_ns, end_ns))
    m.update(_adapter_drain(spec, net, out.window_bytes, (ma, mb)))
    ds = None
    if trace:
        attrs = dict(scenario=spec.name, protocol=protocol, seed=seed, duration_s=dur,
                     bin_width_s=out.factor * bin_ns / 1e9, engine=out.engine,
                     params=json.dumps(to_jsonable(params.to_dict())))  # fmt: skip
        if out.factor > 1:  # merged to fit sim.max_trace_bytes (engines; said on stderr)
            attrs["bin_width_requested_s"] = bin_ns / 1e9
            attrs["bins_merged"] = out.factor
        attrs["protocol_params"] = json.dumps(to_jsonable(
            {k: asdict(v) for k, v in proto.params.items() if k != "QCNParams"}))  # fmt: skip
        hot = int(net.hs_monitor[0]) if len(net.hs_monitor) else -1
        ds = build_dataset(out.TQ, out.TG, out.TFB, out.TRP, net=net, traced_flows=traced,
                           bin_ns=out.factor * bin_ns, end_ns=end_ns, hot_port=hot, attrs=attrs,
                           extra=proto.protocol.fam.trace_extra)  # fmt: skip
        if window_s is not None:
            ds = window(ds, *window_s)
        ds = decimate(ds, int(decimation))
    return SimResult(
        dataset=ds, counters=out.counters, scenario=spec.name, protocol=protocol,
        params=params, duration=dur, seed=seed, wall_s=out.wall_s, flow_throughput_bps=thr,
        metrics=m,
    )  # fmt: skip


def _check_periods(objs) -> None:
    """Every time field of the run's parameter objects on the simulator's nanosecond clock:
    a non-zero time below 1 ns would round to 0 (a timer firing without end at one instant)
    and one above :data:`MAX_PERIOD_S` would overflow the int64 clock."""
    from qcnmodel.params._validate import time_fields

    for obj in objs:
        for key in time_fields(obj):
            value = getattr(obj, key)
            if value is None:
                continue
            if 0 < value < TICK_S or value > MAX_PERIOD_S:
                raise ValueError(
                    f"{key}: {value:g} s is outside the range the simulator's nanosecond clock "
                    f"holds: 0 or [1e-9, {MAX_PERIOD_S:g}] s"
                )


def check_inputs(scenario, protocol="qcn", params=None, duration=None, seed=0, overrides=None):
    """Check a run's inputs as :func:`simulate` does (same arguments), without running it.

    Raises
    ------
    ValueError
        Naming the field, as :func:`simulate` would.
    """
    protocol = protocol_name(protocol)
    spec, sc, q_over, p_over = _resolve_network(scenario, protocol, overrides)
    net = compile_network(spec)
    params = _resolve_params(params, sc, q_over, net, spec)
    _check_run(duration, None, seed, sc)
    proto = protocol_config(protocol, p_over, params, q_over)
    _check_periods([params, *proto.params.values()])


#: the simulator's clock tick (s): no run, trace bin or QCN period is shorter
TICK_S = 1e-9
#: the longest protocol period (s) the simulator's int64 nanosecond clock holds with room
MAX_PERIOD_S = 1e9


def _resolve_network(scenario, protocol: str, overrides: dict | None):
    """(spec, scenario or None, QCNParams settings, protocol settings) of a run."""
    if not isinstance(scenario, (str, NetworkSpec)):
        raise ValueError(f"scenario: expected a scenario name or a NetworkSpec, got {scenario!r}")
    if overrides is not None and not (
        isinstance(overrides, dict) and all(isinstance(k, str) for k in overrides)
    ):
        raise ValueError(f"overrides: expected a dict of parameter names to values, got "
                         f"{overrides!r}")  # fmt: skip
    overrides = dict(overrides or {})
    if isinstance(scenario, str):
        sc = get_scenario(scenario)
        s_over, q_over, p_over = _split_overrides(sc, overrides, protocol)
        return sc.build(s_over), sc, q_over, p_over
    _, q_over, p_over = _split_overrides(None, overrides, protocol)
    return scenario, None, q_over, p_over


def _resolve_params(params, sc, q_over: dict, net, spec: NetworkSpec) -> QCNParams:
    """QCNParams from a preset name or object (default: the scenario's preset), with the ``--set``
    QCN settings, and the line rate and frame size of the network (module docstring)."""
    explicit = params is not None  # a preset name or an object: given as such
    if params is None:
        params = QCNParams.preset(sc.preset) if sc else QCNParams()
    elif isinstance(params, str):
        params = QCNParams.preset(params)
    elif not isinstance(params, QCNParams):
        raise ValueError(f"params: expected QCNParams, a preset name or None, got {params!r}")
    if q_over:
        params = params.replace(**q_over)
    for key, net_value, src in (
        ("line_rate", float(np.max(net.port_rate[net.host_port])), "link_rate"),
        ("frame_size", spec.frame_size, "frame_size"),
    ):
        if key in q_over and float(getattr(params, key)) != float(net_value):
            # the simulator takes both from the network: refuse rather than ignore
            where = f"the scenario parameter {src!r}" if sc else "the network's links/frame size"
            raise ValueError(
                f"{key}: {q_over[key]!r} differs from the network's {net_value:g}; the "
                f"simulator takes {key} from the network, set {where} instead"
            )
    host_rate = float(np.max(net.port_rate[net.host_port]))
    if explicit:  # a parameter set given as such: say what of it the network replaces
        _say_replaced(params, host_rate, spec.frame_size)
    if params.line_rate != host_rate:
        params = params.replace(line_rate=host_rate)
    if params.frame_size != spec.frame_size:
        params = params.replace(frame_size=spec.frame_size)
    return params


_SAID: set = set()


def _say_replaced(params: QCNParams, line_rate: float, frame_size) -> None:
    """One line on stderr (once per process and value) for each of ``line_rate`` and
    ``frame_size`` of a given parameter set that the network replaces."""
    import sys

    for key, mine, net, unit in (("line_rate", params.line_rate, line_rate, "bit/s"),
                                 ("frame_size", params.frame_size, frame_size, "B")):  # fmt: skip
        said = (key, float(mine), float(net))
        if float(mine) != float(net) and said not in _SAID:
            _SAID.add(said)
            print(f"qcnmodel: {key} = {mine:g} {unit} of the given parameter set is not the "
                  f"network's {net:g} {unit}: the simulator takes {key} from the network "
                  "(the values used are in the result's params)", file=sys.stderr)  # fmt: skip


def _check_run(duration, bin_width, seed, sc) -> tuple[float, float, int]:
    """Validated (duration, bin width, seed); ValueError naming the field. Without a bin
    width, the default (``sim.bin_width``) or a tenth of a shorter run (at least 1 ns)."""
    if duration is not None:
        dur = parse_time(duration, "duration")
    else:
        dur = sc.duration if sc else float(config.defaults["sim.default_duration"])
    if not TICK_S <= dur <= 1e4:
        raise ValueError(
            f"duration: {duration!r} is outside the allowed range [1e-9, 1e4] s (the "
            "simulator's clock tick is 1 ns)"
        )
    if bin_width is None:
        default = float(config.defaults["sim.bin_width"])
        bin_width = default if dur >= default else max(TICK_S, dur / 10)
    bw = parse_time(bin_width, "bin_width")
    if not TICK_S <= bw <= dur:
        raise ValueError(
            f"bin_width: {bin_width!r} is outside the allowed range [1e-9 s, the duration "
            f"{dur:g} s]"
        )
    return dur, bw, check_seed(seed)


def _check_trace_options(window_s, decimation, end_ns: int, bin_ns: int):
    """Validated ``window_s`` (times in s, T0 < T1, keeping at least one bin of the run) and
    ``decimation`` (a whole number >= 1, at most the number of bins kept): the traces of a
    run are never empty without an error."""
    n_bins = -(-end_ns // bin_ns)
    first, last = 1, n_bins  # bins k = 1..n_bins end at min(k * bin_ns, end_ns)
    if window_s is not None:
        try:
            t0, t1 = window_s
        except (TypeError, ValueError):
            raise ValueError(f"window: expected (t0, t1), got {window_s!r}") from None
        t0 = None if t0 is None else parse_time(t0, "window")
        t1 = None if t1 is None else parse_time(t1, "window")
        if t0 is not None and t1 is not None and not t0 < t1:
            raise ValueError(f"window: need t0 < t1, got {window_s!r}")
        if t0 is not None:
            first = max(1, -(-int(round(t0 * 1e9)) // bin_ns))
        if t1 is not None and int(round(t1 * 1e9)) < end_ns:
            last = int(round(t1 * 1e9)) // bin_ns
        if last < first:
            raise ValueError(
                f"window: {window_s!r} keeps no trace bin of the run ({end_ns / 1e9:g} s in "
                f"bins of {bin_ns / 1e9:g} s)"
            )
        window_s = (t0, t1)
    k = decimation
    if isinstance(k, str):
        k = k.strip()
    try:
        k_int = int(k)
    except (TypeError, ValueError):
        raise ValueError(f"decimation: expected a whole number >= 1, got {decimation!r}") from None
    if isinstance(k, bool) or k_int != k and str(k_int) != k or k_int < 1:
        raise ValueError(f"decimation: expected a whole number >= 1, got {decimation!r}")
    if k_int > last - first + 1:
        raise ValueError(
            f"decimation: {decimation!r} is more than the {last - first + 1} trace bin(s) kept; "
            f"the allowed range is [1, {last - first + 1}]"
        )
    return window_s, k_int


#: seeds are stored as int64 in the kernel and taken modulo 2**64 by the RNG
MAX_SEED = 2**63 - 1


def check_seed(seed) -> int:
    """``seed`` as an int in [0, 2**63 - 1]; ValueError naming the field otherwise (a float
    or string must hold an integer exactly: 1.5 is refused, not truncated)."""
    v = seed
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            raise ValueError(f"seed: {seed!r} is not an integer") from None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer, float, np.floating)):
        raise ValueError(f"seed: {seed!r} is not an integer")
    if isinstance(v, (float, np.floating)):
        if not (math.isfinite(v) and float(v).is_integer()):
            raise ValueError(f"seed: {seed!r} is not an integer")
        v = int(v)
    v = int(v)
    if not 0 <= v <= MAX_SEED:
        raise ValueError(f"seed: {seed!r} is outside the allowed range [0, {MAX_SEED}]")
    return v


def _traced_flows(net, max_traced_flows: int | None) -> np.ndarray:
    """Every flow up to ``max_traced_flows``, else the fairness and hotspot flows."""
    cap = config.defaults["sim.max_traced_flows"] if max_traced_flows is None else max_traced_flows
    if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < 0:
        raise ValueError(f"max_traced_flows: expected a whole number >= 0, got {cap!r}")
    if net.n_flows <= cap:
        return np.arange(net.n_flows)
    return np.unique(np.concatenate([net.fair_flows, net.hot_flows]))[:cap]


def _overlaps(hs, a: float, b: float) -> bool:
    """Whether hotspot ``hs`` is active during some part of [a, b)."""
    return max(a, hs.start) < min(b, hs.stop)


def _hot_port_metrics(spec, net, HQ, window_s, bin_ns, end_ns) -> dict:
    """Hot-port queue (mean, peak), throughput, utilisation and recovery time (metrics), from
    the hot port's trace rows ``HQ`` (``TQ_*`` rows x every bin)."""
    hot = int(net.hs_monitor[0]) if len(net.hs_monitor) else -1
    if hot < 0:
        return dict(hot_queue_mean_bytes=None, hot_queue_max_bytes=None, recovery_time_s=None)
    nb = HQ.shape[1]
    ma, mb = window_s
    ib0 = int(round(ma * 1e9)) // bin_ns  # bins are aligned with the window when possible
    ib1 = min(nb, -(-int(round(mb * 1e9)) // bin_ns))
    a0 = HQ[TQ_AREA, ib0 - 1] if ib0 > 0 else 0
    a1 = HQ[TQ_AREA, ib1 - 1]
    span = (min(ib1 * bin_ns, end_ns) - ib0 * bin_ns) / 1e9
    mean, peak = metrics.queue_stats(a1, a0, HQ[TQ_MAX, ib0:ib1], span)
    b0 = HQ[TQ_TXB, ib0 - 1] if ib0 > 0 else 0
    m = {"hot_port": net.port_name(hot), "hot_queue_mean_bytes": mean, "hot_queue_max_bytes": peak}
    m["hot_port_throughput_bps"] = float(HQ[TQ_TXB, ib1 - 1] - b0) * 8 / span
    a_ns, b_ns = ib0 * bin_ns, min(ib1 * bin_ns, end_ns)
    capacity, mine = _hot_capacity(net, float(net.port_rate[hot]), a_ns / 1e9, b_ns / 1e9)
    m["hot_port_utilisation"] = metrics.utilisation(HQ[TQ_TXB, ib1 - 1] - b0, span, capacity)
    hs = spec.hotspots[max(mine, key=lambda i: int(net.hs_start_ns[i]))]  # recovery: the last
    target = min(float(net.port_rate[hot]), _offered_after(spec, net, hot, hs.stop))
    if math.isfinite(hs.stop) and target > 0:
        lo = min(nb, max(0, int((hs.stop * 1e9) // bin_ns) - 1))  # bins from the stop on
        t_end, arr = hot_arrivals(HQ, lo, net.frame_size, bin_ns, end_ns)
        m["recovery_time_s"] = metrics.recovery_time(t_end, arr, bin_ns / 1e9, hs.stop, target)
    else:
        m["recovery_time_s"] = None
    return m


def _adapter_drain(spec, net, window_bytes, window_s) -> dict:
    """With an adapter hotspot (``mode="adapter"``) the monitored port is the switch's port
    towards the adapter's output buffer, whose bytes include those parked in that buffer: the
    hot port's throughput and utilisation are then the adapter's drain, the bytes its node
    received in the window (its flows' window bytes) against the hotspot's rate."""
    if not (len(net.hs_monitor) and spec.hotspots[0].mode == "adapter"):
        return {}
    ma, mb = window_s
    if mb <= ma:
        return {}
    node = net.node_host[net.node_names.index(spec.hotspots[0].node)]
    got = float(np.sum(window_bytes[net.flow_dst == node])) * 8.0 / (mb - ma)
    capacity, _ = _hot_capacity(net, float(net.port_rate[net.hs_port[0]]), ma, mb)
    return {"hot_port_throughput_bps": got, "hot_port_utilisation": got / capacity}


def _hot_capacity(net, link: float, a_s: float, b_s: float) -> tuple[float, list[int]]:
    """The mean capacity over [a_s, b_s] of a hot port whose link rate is ``link``: every
    hotspot of the first one's port (their intervals do not overlap) serves its share of the
    window at its rate; and those hotspots' indices."""
    hot = int(net.hs_monitor[0])
    mine = [i for i in range(len(net.hs_monitor)) if net.hs_monitor[i] == hot]
    return link + sum(
        metrics.mean_capacity(link, float(net.hs_rate[i]), net.hs_start_ns[i] / 1e9,
                              net.hs_stop_ns[i] / 1e9, a_s, b_s) - link
        for i in mine
    ), mine  # fmt: skip


def hot_arrivals(HQ, lo: int, frame_size: int, bin_ns: int, end_ns: int):
    """Bin end times (s) and bits per second offered to the hot port (``port_arrival_bytes``)
    over bins ``lo ..`` of its trace rows ``HQ``, with a few arrays of that length (the
    working memory that :data:`qcnmodel.sim.engines.HOT_WORK_ROWS` budgets)."""
    nb = HQ.shape[1]
    prev = HQ[:, lo - 1] if lo > 0 else np.zeros(HQ.shape[0], HQ.dtype)
    arr = np.diff(HQ[TQ_TXB, lo:], prepend=prev[TQ_TXB]).astype(float)  # sent (exact < 2**53)
    arr += np.diff(HQ[TQ_Q, lo:], prepend=prev[TQ_Q])  # queue growth
    arr += np.diff(HQ[TQ_DROPS, lo:], prepend=prev[TQ_DROPS]) * float(frame_size)  # drops
    arr *= 8
    t_end = np.minimum((np.arange(lo, nb) + 1) * bin_ns, end_ns).astype(float)
    arr /= (t_end - np.arange(lo, nb) * bin_ns) / 1e9
    t_end /= 1e9
    return t_end, arr


def _offered_after(spec: NetworkSpec, net, hot: int, t: float) -> float:
    """Mean offered load (bit/s) towards port ``hot`` from generators active at time ``t``."""
    if not math.isfinite(t):
        return 0.0
    flows_through = set(int(f) for f in net.hot_flows)
    total = 0.0
    for g in spec.traffic:
        if not (g.start <= t < g.stop):
            continue
        if isinstance(g, ConstantFlow):
            f = net.flow_of[net.node_names.index(g.source), net.node_names.index(g.dest)]
            if f in flows_through:
                total += (
                    float(net.offered_bps[f])
                    if g.on_mean == 0
                    else g.rate * g.on_mean / (g.on_mean + g.off_mean)
                )
        else:
            s = net.node_names.index(g.source)
            ds = g.destinations or [h for h in net.node_names[: net.n_hosts] if h != g.source]
            for d in ds:
                f = net.flow_of[s, net.node_names.index(d)]
                if f in flows_through:
                    total += g.rate / len(ds)
    return total
