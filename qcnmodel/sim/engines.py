"""Run one prepared simulation on an engine: the compiled kernel or the pure-Python oracle.

Both engines take the same inputs (a compiled network, the QCN parameters, the run's
:class:`~qcnmodel.sim.protocols.registry.ProtocolConfig`, seed, end time, trace bins,
measurement window and traced flows) and give the same :class:`RunOutput`: the global
counters, the bytes each flow delivered in the measurement window, and the trace tables of
:mod:`qcnmodel.sim.traces`. For the same inputs the two outputs are identical bit for bit;
the kernel is fast, the oracle readable (and slow, for tests and comparisons).
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
from qcnmodel.sim.kernel.state import F_VN, F_WBYTES, TG_ROWS, TQ_ROWS, TR_ROWS, build_state

__all__ = ["ENGINES", "RunOutput", "check_trace_memory", "run", "trace_bytes"]

ENGINES = ("kernel", "oracle")


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


def run(engine: str, net, params, *, progress: bool = False, label: str = "", **kw) -> RunOutput:
    """Run on ``engine`` (``"kernel"`` or ``"oracle"``).

    Parameters
    ----------
    engine : {"kernel", "oracle"}
    net : CompiledNetwork
    params : QCNParams
        The network-consistent QCN parameters (``cp_latency`` is read for every protocol).
    progress : bool
        Kernel only: a tqdm progress bar on stderr, named ``label``.
    **kw
        ``proto``, ``qcn``, ``seed``, ``end_ns``, ``bin_ns``, ``measure_ns``,
        ``traced_flows``: as :func:`qcnmodel.sim.kernel.state.build_state`.

    Raises
    ------
    ValueError
        Unknown engine, or traces above ``config.defaults["sim.max_trace_bytes"]``
        (:func:`check_trace_memory`).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    check_trace_memory(net, len(kw["traced_flows"]), kw["end_ns"], kw["bin_ns"])
    if engine == "kernel":
        return _run_kernel(net, params, progress, label, kw)
    if engine == "oracle":
        return _run_oracle(net, params, kw)
    raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")


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
COMPILE_ESTIMATE = "1 min"  # 49-78 s measured per family under load


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


def _run_kernel(net, params, progress: bool, label: str, kw: dict) -> RunOutput:
    from qcnmodel import config
    from qcnmodel.sim.kernel.loop import _WARM, run_compiled, warm_up
    from qcnmodel.sim.kernel.state import protocol_config

    family = protocol_config(params, kw.get("qcn", True), kw.get("proto")).protocol.family
    if family not in _WARM and not kernel_is_cached(family):
        print(
            f"qcnmodel: compiling the {family} simulator kernel (once, ~{COMPILE_ESTIMATE} on "
            f"2 cores; later runs load it from the cache)",
            file=sys.stderr,
            flush=True,
        )
    compile_s = warm_up(family)  # numba compilation / cache load, reported separately
    t0 = time.perf_counter()
    st = build_state(net, params, **kw)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=100, desc=f"simulate {label}", unit="%", file=sys.stderr)

    def cb(frac):
        if bar is not None:
            bar.n = int(round(frac * 100))
            bar.refresh()

    chunks = int(config.defaults["sim.progress_chunks"]) if progress else 1
    run_compiled(st, n_chunks=chunks, callback=cb)
    if bar is not None:
        bar.close()
    S = st.S
    in_net = int(st.FI[F_VN].sum()) + st.FR.shape[1] - int(S[S_FREE_N]) + int(S[S_TAIL])
    cnt = _counters(S[S_EVENTS], S[S_OFFERED], S[S_BLOCKED], S[S_SENT], S[S_DELIV], S[S_DROP],
                    S[S_PAUSE], S[S_CNM], in_net)  # fmt: skip
    wall = time.perf_counter() - t0
    return RunOutput(cnt, st.FI[F_WBYTES], st.TQ, st.TG, st.TFB, st.TRP, wall, compile_s)


def _run_oracle(net, params, kw: dict) -> RunOutput:
    from qcnmodel.sim.oracle import Oracle

    t0 = time.perf_counter()
    o = Oracle(net, params, **kw).run()
    c = o.c
    cnt = _counters(c["events"], c["offered"], c["blocked"], c["sent"], c["deliv"], c["drop"],
                    c["pause"], c["cnm"], o.in_network())  # fmt: skip
    wbytes = np.array([f.wbytes for f in o.flows])
    return RunOutput(cnt, wbytes, o.TQ, o.TG, o.TFB, o.TRP, time.perf_counter() - t0)
