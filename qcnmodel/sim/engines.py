"""Run one prepared simulation on an engine: the compiled kernel or the pure-Python oracle.

Both engines take the same inputs (a compiled network, the QCN parameters, the run's
:class:`~qcnmodel.sim.protocols.registry.ProtocolConfig`, seed, end time, trace bins,
measurement window and traced flows) and give the same :class:`RunOutput`: the global
counters, the bytes each flow delivered in the measurement window, and the trace tables of
:mod:`qcnmodel.sim.traces`. For the same inputs the two outputs are identical bit for bit;
the kernel is fast, the oracle readable (and slow, for tests and comparisons).

The kernel runs in segments of simulated time so that a long run needs bounded memory: its
trace tables hold a window of bins (about :data:`WINDOW_BYTES`), and at the end of each
segment the finished bins are copied out and the window moves on (the kernel state carries
over, so the run is the same, bit for bit, as one long run). What is kept: the hot port's
rows at full resolution (the summary metrics need them), and, when traces are wanted, every
trace at full resolution if that fits ``config.defaults["sim.max_trace_bytes"]`` (counting
the dataset built from them, :data:`DATASET_FACTOR`), else merged over ``factor`` bins
(:class:`TracePlan`; one line on stderr says so, and the dataset's attributes record it).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from qcnmodel.sim.kernel.heap import (
    S_BLOCKED,
    S_CNM,
    S_DELIV,
    S_DROP,
    S_EVENTS,
    S_FREE_N,
    S_OFFERED,
    S_PAUSE,
    S_SENT,
    S_TAIL,
)
from qcnmodel.sim.kernel.state import (
    C_TB0,
    F_VN,
    F_WBYTES,
    TG_ROWS,
    TQ_MAX,
    TQ_ROWS,
    TR_ROWS,
    build_state,
)

__all__ = ["ENGINES", "RunOutput", "TracePlan", "check_trace_memory", "plan_traces", "run",
           "trace_bytes"]  # fmt: skip

ENGINES = ("kernel", "oracle", "auto")


@dataclass
class RunOutput:
    """What an engine returns (see the module docstring)."""

    counters: dict  #: events, frames_* (offered ... in_network), pause_frames, cnms (int)
    window_bytes: np.ndarray  #: [n_flows] bytes delivered within the measurement window
    TQ: np.ndarray  #: per-port queue traces
    TG: np.ndarray  #: global cumulative counters per bin
    TFB: np.ndarray  #: traced flows' delivered bytes per bin
    TRP: np.ndarray  #: traced RL state per bin
    wall_s: float  #: wall time of the run (compilation excluded)
    compile_s: float = 0.0  #: numba compilation / cache load before the run (kernel)
    HQ: np.ndarray | None = None  #: the hot port's TQ rows at full resolution (or None)
    factor: int = 1  #: bins merged into one in TQ, TG, TFB, TRP (1: full resolution)
    engine: str = "kernel"  #: the engine that ran ("auto" resolved)


def run(
    engine: str, net, params, *, progress: bool = False, label: str = "", keep: bool = True,
    segment_bins: int | None = None, **kw,
) -> RunOutput:  # fmt: skip
    """Run on ``engine`` (``"kernel"`` or ``"oracle"``).

    Parameters
    ----------
    engine : {"kernel", "oracle", "auto"}
        ``"auto"``: the kernel, except for a short run while the family's kernel is not
        compiled yet (:func:`choose_engine`): the oracle then, whose results are the same bit
        for bit, saves the compilation.
    net : CompiledNetwork
    params : QCNParams
        The network-consistent QCN parameters (``cp_latency`` is read for every protocol).
    progress : bool
        Kernel only: a tqdm progress bar on stderr, named ``label``.
    keep : bool
        Kernel only: keep the traces (else only the hot port's rows, ``RunOutput.HQ``; the
        other tables are empty).
    segment_bins : int, optional
        Kernel only: bins per segment (default: what fits :data:`WINDOW_BYTES`).
    **kw
        ``proto``, ``qcn``, ``seed``, ``end_ns``, ``bin_ns``, ``measure_ns``,
        ``traced_flows``: as :func:`qcnmodel.sim.kernel.state.build_state`.

    Raises
    ------
    ValueError
        Unknown engine, or traces above ``config.defaults["sim.max_trace_bytes"]``
        (:func:`check_trace_memory` for the oracle, :func:`plan_traces` for the kernel).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    if engine == "auto":
        engine = choose_engine(net, params, kw)
    if engine == "kernel":
        plan = plan_traces(net, len(kw["traced_flows"]), kw["end_ns"], kw["bin_ns"],
                           keep=keep, segment_bins=segment_bins)  # fmt: skip
        return _run_kernel(net, params, progress, label, kw, plan)
    check_trace_memory(net, len(kw["traced_flows"]), kw["end_ns"], kw["bin_ns"])
    return _run_oracle(net, params, kw)


#: the oracle's time per event on the 2-core reference machine, idle to loaded (measured);
#: ``engine="auto"`` judges by the loaded end, :data:`ORACLE_S_PER_EVENT`
ORACLE_S_PER_EVENT_RANGE = (15e-6, 35e-6)
#: the oracle's time per event, loaded, and the longest oracle run ``engine="auto"`` chooses
#: on a cold cache: about half the kernel's fastest first compilation (13 s idle for plain
#: QCN, 17 s for the QCN variants; two to three times that loaded)
ORACLE_S_PER_EVENT = ORACLE_S_PER_EVENT_RANGE[1]
ORACLE_MAX_S = 10.0


def estimate_events(net, end_ns: int, bin_ns: int) -> float:
    """An upper estimate of a run's events: 6 per offered frame (a frame makes about 3 on
    one switch hop: 3.1 measured on ``og-hotspot``) and one per trace bin."""
    frames = float(np.sum(net.offered_bps)) * end_ns / 1e9 / (8.0 * net.frame_size)
    return 6.0 * frames + -(-end_ns // bin_ns)


def run_family(params, kw: dict) -> str:
    """The kernel family (:func:`qcnmodel.sim.kernel.dispatch.kernel_family`) of a run of
    ``params`` with the run's keyword arguments ``kw`` (``qcn``, ``proto``)."""
    from qcnmodel.sim.kernel.dispatch import kernel_family
    from qcnmodel.sim.kernel.state import protocol_config

    return kernel_family(protocol_config(params, kw.get("qcn", True), kw.get("proto")))


#: families whose kernel a run of this process has already spared (the next one compiles: a
#: series of short runs, e.g. a sweep, pays one compilation, not many oracle runs)
_SPARED: set = set()


def choose_engine(net, params, kw: dict) -> str:
    """``"oracle"`` for a run estimated (:func:`estimate_events`) to take at most
    :data:`ORACLE_MAX_S` on the oracle while the family's kernel is neither compiled in this
    process nor in numba's cache, once per process and family (one line on stderr says so);
    else ``"kernel"``."""
    from qcnmodel.sim.kernel.loop import _WARM

    family = run_family(params, kw)
    if family in _WARM or family in _SPARED or kernel_is_cached(family):
        return "kernel"
    est = estimate_events(net, kw["end_ns"], kw["bin_ns"])
    if est * ORACLE_S_PER_EVENT > ORACLE_MAX_S:
        return "kernel"
    try:
        check_trace_memory(net, len(kw["traced_flows"]), kw["end_ns"], kw["bin_ns"])
    except ValueError:
        return "kernel"
    print(
        f"qcnmodel: the {family} simulator kernel is not compiled yet; this short run (about "
        f"{est:.2g} events) runs on the pure-Python twin instead, whose results are the same "
        f"bit for bit (a longer run compiles the kernel once, {COMPILE_ESTIMATE})",
        file=sys.stderr,
        flush=True,
    )
    _SPARED.add(family)
    return "oracle"


#: bytes of trace tables a kernel run holds for its current segment (the segment length in
#: bins follows; the tables of a shorter run are smaller)
WINDOW_BYTES = 8 * 2**20


#: bytes held per byte of kept trace table once the dataset is built from the tables and
#: written (tracemalloc peak of ``simulate`` and ``to_netcdf`` on og-hotspot: 3.5 and 3.7)
DATASET_FACTOR = 4

#: float rows per bin that the hot port's metrics work with beside its ``TQ_ROWS`` trace rows
#: (the recovery time's arrival rate, bin end times and their temporaries,
#: :func:`qcnmodel.sim.api.hot_arrivals`; peak RSS of og-hotspot with 5 and 10 ns bins over
#: 50 ms: 70-80 bytes per bin in all, 40 of them the trace rows)
HOT_WORK_ROWS = 5


@dataclass(frozen=True)
class TracePlan:
    """How a kernel run keeps its traces (module docstring)."""

    n_bins: int  #: bins of the run
    factor: int  #: bins merged into one in the kept traces (1: full resolution)
    segment: int  #: bins per segment (a multiple of ``factor``)
    margin: int  #: extra window columns for deliveries binned ahead of the segment end
    keep: bool  #: whether the traces are kept (else the hot port's rows only)
    hot: int  #: the hot port (-1: none)
    need: int  #: bytes held: window + hot rows + kept traces (x DATASET_FACTOR)


def _hot_port(net) -> int:
    return int(net.hs_monitor[0]) if len(net.hs_monitor) else -1


def delivery_margin(net, bin_ns: int) -> int:
    """Bins after a segment's end into which a delivery computed in the segment can fall.

    A frame is binned at its arrival time, known when its last hop starts: at most one
    frame time at the slowest rate (links or hotspots), the longest propagation delay and
    the longest processing latency (+2 ns of rounding) after the segment's end.
    """
    rates = [float(np.min(net.port_rate))]
    if len(net.hs_rate):
        rates.append(float(np.min(net.hs_rate)))
    lag = net.frame_size * 8e9 / min(rates) + 2
    lag += float(np.max(net.port_prop_ns)) + float(np.max(net.node_latency_ns, initial=0))
    return int(lag // bin_ns) + 2


def plan_traces(net, n_traced: int, end_ns: int, bin_ns: int, *, keep: bool = True,
                segment_bins: int | None = None) -> TracePlan:  # fmt: skip
    """Choose the segment length and the merge factor of a kernel run's traces.

    Everything counts against ``config.defaults["sim.max_trace_bytes"]``: the hot port's
    rows, one segment's window and the kept traces times :data:`DATASET_FACTOR` (the dataset
    built from them); the factor is the smallest that fits.

    Raises ValueError naming ``bin_width`` (``--bin``) and ``duration`` when even the hot
    port's rows at full resolution and one segment's window exceed
    ``config.defaults["sim.max_trace_bytes"]``.
    """
    from qcnmodel import config

    limit = int(config.defaults["sim.max_trace_bytes"])
    n_bins = max(1, -(-int(end_ns) // int(bin_ns)))
    hot = _hot_port(net)
    per_bin = trace_bytes(net.n_ports, n_traced, 1)
    hot_bytes = 8 * (TQ_ROWS + HOT_WORK_ROWS) * n_bins if hot >= 0 else 0
    margin = delivery_margin(net, bin_ns)
    seg = int(segment_bins) if segment_bins else max(1, WINDOW_BYTES // per_bin)
    seg = min(seg, n_bins)
    window = per_bin * (seg + margin)
    gib = 2.0**30
    if hot_bytes + window > limit:
        max_bins = max(1, (limit - window) // (8 * (TQ_ROWS + HOT_WORK_ROWS)))
        raise ValueError(
            f"bin_width/duration: {n_bins} trace bins need {(hot_bytes + window) / gib:.2f} GiB "
            f"(the hot port's queue and counters at every bin, which the summary metrics "
            f"read and work on, and one segment's window), above the limit of "
            f"{limit / gib:.2f} GiB "
            f'(qcnmodel.config.defaults["sim.max_trace_bytes"]); at most {max_bins} bins: use '
            f"a bin width (--bin) >= {end_ns / max_bins / 1e9:.3g} s or a duration "
            f"(--duration) <= {max_bins * bin_ns / 1e9:.3g} s"
        )
    factor = 1
    if keep:
        fit = max(1, (limit - hot_bytes - window) // (per_bin * DATASET_FACTOR))
        factor = -(-n_bins // fit)
        seg = factor * max(1, seg // factor)
        window = per_bin * (seg + margin)
    kept = DATASET_FACTOR * trace_bytes(net.n_ports, n_traced, -(-n_bins // factor)) if keep else 0
    return TracePlan(n_bins, factor, seg, margin, keep, hot, window + hot_bytes + kept)


class _Collector:
    """Copies the finished bins out of a kernel run's trace window (:class:`TracePlan`)."""

    def __init__(self, plan: TracePlan, st):
        self.plan, self.b0 = plan, 0
        n, k = plan.n_bins, plan.factor
        nc = -(-n // k) if plan.keep else 0
        self.HQ = np.zeros((TQ_ROWS, n), np.int64) if plan.hot >= 0 else None
        self.TQ = np.zeros(st.TQ.shape[:-1] + (nc,), np.int64)
        self.TG = np.zeros(st.TG.shape[:-1] + (nc,), np.int64)
        self.TFB = np.zeros(st.TFB.shape[:-1] + (nc,), np.int64)
        self.TRP = np.zeros(st.TRP.shape[:-1] + (nc,))

    def flush(self, st, nb: int) -> None:
        """Copy bins ``b0 .. b0 + nb - 1`` (window columns ``0 .. nb - 1``) out."""
        b0, k = self.b0, self.plan.factor
        if self.HQ is not None:
            self.HQ[:, b0 : b0 + nb] = st.TQ[:, self.plan.hot, :nb]
        if not self.plan.keep:
            return
        firsts = np.arange(0, nb, k)
        lasts = np.minimum(firsts + k, nb) - 1
        c = slice(b0 // k, b0 // k + len(firsts))
        # cumulative counters and end-of-bin values: the last bin; peaks: the maximum;
        # delivered bytes (per bin): the sum
        self.TQ[..., c] = st.TQ[..., lasts]
        self.TQ[TQ_MAX, :, c] = np.maximum.reduceat(st.TQ[TQ_MAX, :, :nb], firsts, axis=-1)
        self.TG[:, c] = st.TG[:, lasts]
        self.TFB[:, c] = np.add.reduceat(st.TFB[:, :nb], firsts, axis=-1)
        self.TRP[..., c] = st.TRP[..., lasts]

    def on_stop(self, st, until: int) -> None:
        """End of a segment: copy its bins out and move the window on by one segment."""
        seg = self.plan.segment
        self.flush(st, seg)
        ahead = st.TFB[:, seg:].copy()  # deliveries already binned after the segment
        for a in (st.TQ, st.TG, st.TFB, st.TRP):
            a[...] = 0
        st.TFB[:, : ahead.shape[1]] = ahead
        self.b0 += seg
        st.C[C_TB0] = self.b0


def trace_bytes(n_ports: int, n_traced: int, n_bins: int) -> int:
    """Bytes of the trace tables one run allocates up front (8 bytes per entry): per port
    ``TQ_ROWS`` rows, ``TG_ROWS`` global rows, and per traced flow one delivered-bytes row and
    ``TR_ROWS`` rate-limiter rows, all over ``n_bins`` bins."""
    per_bin = TQ_ROWS * n_ports + TG_ROWS + (1 + TR_ROWS) * max(n_traced, 1)
    return 8 * per_bin * n_bins


def check_trace_memory(net, n_traced: int, end_ns: int, bin_ns: int) -> int:
    """Refuse a run whose traces exceed ``config.defaults["sim.max_trace_bytes"]``.

    Returns the estimate (bytes). Raises ValueError naming ``bin_width`` and ``duration``,
    with the smallest bin width allowed at this duration and the longest duration allowed
    at this bin width (the bins are ``ceil(duration / bin_width)``).
    """
    from qcnmodel import config

    limit = int(config.defaults["sim.max_trace_bytes"])
    n_bins = max(1, -(-int(end_ns) // int(bin_ns)))
    need = trace_bytes(net.n_ports, n_traced, n_bins)
    if need <= limit:
        return need
    max_bins = max(1, limit // trace_bytes(net.n_ports, n_traced, 1))
    gib = 2.0**30
    raise ValueError(
        f"bin_width/duration: {n_bins} trace bins of {net.n_ports} ports and {n_traced} "
        f"traced flows need {need / gib:.2f} GiB, above the limit of {limit / gib:.2f} GiB "
        f'(qcnmodel.config.defaults["sim.max_trace_bytes"]); at most {max_bins} bins: use '
        f"a bin width >= {end_ns / max_bins / 1e9:.3g} s or a duration <= "
        f"{max_bins * bin_ns / 1e9:.3g} s"
    )


def _counters(events, offered, blocked, sent, delivered, dropped, pause, cnms, in_network):
    c = dict(
        events=events,
        frames_offered=offered,
        frames_blocked=blocked,
        frames_sent=sent,
        frames_delivered=delivered,
        frames_dropped=dropped,
        pause_frames=pause,
        cnms=cnms,
    )
    c = {k: int(v) for k, v in c.items()}  # fmt: skip
    c["frames_in_flight"] = c["frames_sent"] - c["frames_delivered"] - c["frames_dropped"]
    c["frames_in_network"] = int(in_network)  # counted independently (VOQs, queues, links)
    return c


#: first compilation of one family's kernel on the 2-core reference machine, for the notice
COMPILE_ESTIMATE = "15-50 s"  # 13-17 s idle on a fast machine; 21.6 idle, 40-46 busy on a slow one


def kernel_is_cached(family: str) -> bool:
    """True if numba's cache holds a fresh event loop of ``family`` (or if that cannot be
    told)."""
    try:
        import numba

        from qcnmodel.sim.kernel import dispatch, loop

        want = numba.typeof(dispatch.marker(family))
        index = loop.run_until._cache._cache_file._load_index()
        return any(key[0] and key[0][0] == want for key in index)
    except Exception:  # another numba version, or a damaged index (repaired on load)
        return True


def warm_kernel(family: str) -> float:
    """:func:`qcnmodel.sim.kernel.loop.warm_up` (compile or load ``family``'s event loop),
    without numba's ``NumbaIRAssumptionWarning``: an internal pedantic check of numba's that
    fires while it compiles the loop's inlined heap helpers, asks the reader to report it to
    numba and changes nothing in the compiled code (the kernel equals its Python oracle, bit
    for bit, in the tests). Other warnings pass."""
    import warnings

    from numba.core.errors import NumbaIRAssumptionWarning

    from qcnmodel.sim.kernel.loop import warm_up

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
        return warm_up(family)


def _run_kernel(net, params, progress: bool, label: str, kw: dict, plan: TracePlan) -> RunOutput:
    from qcnmodel import config
    from qcnmodel.sim.kernel.loop import _WARM, run_compiled

    family = run_family(params, kw)
    if family not in _WARM and not kernel_is_cached(family):
        print(
            f"qcnmodel: compiling the {family} simulator kernel (once, {COMPILE_ESTIMATE} on "
            f"2 cores; later runs load it from the cache)",
            file=sys.stderr,
            flush=True,
        )
    if plan.factor > 1:
        bw = kw["bin_ns"] / 1e9
        print(
            f"qcnmodel: {plan.n_bins} trace bins of {bw:g} s exceed the trace memory limit "
            f'(qcnmodel.config.defaults["sim.max_trace_bytes"]); traces are kept at a bin '
            f"width of {plan.factor * bw:g} s ({plan.factor} bins merged; the metrics use "
            f"every bin); set the bin width (--bin) to choose",
            file=sys.stderr,
            flush=True,
        )
    compile_s = warm_kernel(family)  # numba compilation / cache load, reported separately
    t0 = time.perf_counter()
    st = build_state(net, params, trace_bins=min(plan.segment + plan.margin, plan.n_bins), **kw)
    col = _Collector(plan, st)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=100, desc=f"simulate {label}", unit="%", file=sys.stderr)

    def cb(frac):
        if bar is not None:
            bar.n = int(round(frac * 100))
            bar.refresh()

    chunks = int(config.defaults["sim.progress_chunks"]) if progress else 1
    seg_ns = plan.segment * int(kw["bin_ns"])  # segment ends (the last one: the run's end)
    stops = [j * seg_ns for j in range(1, (plan.n_bins - 1) // plan.segment + 1)]
    run_compiled(st, n_chunks=chunks, callback=cb, stops=stops, on_stop=col.on_stop)
    col.flush(st, plan.n_bins - col.b0)
    if bar is not None:
        bar.close()
    S = st.S
    in_net = int(st.FI[F_VN].sum()) + st.FR.shape[1] - int(S[S_FREE_N]) + int(S[S_TAIL])
    cnt = _counters(S[S_EVENTS], S[S_OFFERED], S[S_BLOCKED], S[S_SENT], S[S_DELIV], S[S_DROP],
                    S[S_PAUSE], S[S_CNM], in_net)  # fmt: skip
    wall = time.perf_counter() - t0
    return RunOutput(cnt, st.FI[F_WBYTES], col.TQ, col.TG, col.TFB, col.TRP, wall, compile_s,
                     col.HQ, plan.factor)  # fmt: skip


def _run_oracle(net, params, kw: dict) -> RunOutput:
    from qcnmodel.sim.oracle import Oracle

    t0 = time.perf_counter()
    o = Oracle(net, params, **kw).run()
    c = o.c
    cnt = _counters(c["events"], c["offered"], c["blocked"], c["sent"], c["deliv"], c["drop"],
                    c["pause"], c["cnm"], o.in_network())  # fmt: skip
    wbytes = np.array([f.wbytes for f in o.flows])
    hot = _hot_port(net)
    HQ = o.TQ[:, hot].copy() if hot >= 0 else None
    return RunOutput(cnt, wbytes, o.TQ, o.TG, o.TFB, o.TRP, time.perf_counter() - t0, 0.0, HQ,
                     engine="oracle")  # fmt: skip
