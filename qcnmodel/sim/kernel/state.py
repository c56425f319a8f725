"""Struct-of-arrays state of the compiled kernel: row constants and allocation.

Every table is a 2-D int64 (or float64) array ``X[ROW, index]``; the ``*_`` constants name the
rows. :class:`KernelState` builds all tables from a :class:`~qcnmodel.sim.network.CompiledNetwork`
and the QCN parameters, and grows the event heap and the frame pool on demand (the kernel stops
with a status code when either is nearly full; growth keeps the state valid, so a run
continues exactly where it stopped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qcnmodel.sim.kernel.heap import (  # noqa: F401 (X0..X2: the payload rows)
    S_EFREE_N,
    S_FREE_N,
    S_HN,
    S_N,
    X0,
    X1,
    X2,
    X_ROWS,
    grow_heap,
    new_heap,
)
from qcnmodel.sim.network import CompiledNetwork
from qcnmodel.sim.protocols import qcn as rules
from qcnmodel.sim.rng import STREAM_DEST, STREAM_ONOFF, STREAM_TRAFFIC, stream_key_py

INF_NS = np.iinfo(np.int64).max // 4

# event kinds (the protocol events are described in the family adapters, families/*.py)
K_ARRIVE, K_TXDONE, K_WAKE, K_CNM, K_TIMER, K_PAUSE, K_HOT, K_SAMPLE, K_DRIFT = range(9)
K_AUX, K_PROBE, K_REPLY, K_ECHO = 9, 10, 11, 12
EVENT_NAMES = ("arrive", "txdone", "wake", "cnm", "timer", "pause", "hotspot", "sample", "drift",
               "aux", "probe", "reply", "echo")  # fmt: skip
# protocol families (C[C_FAM]) and probe paths (C[C_PROBE])
# (the kernel's families: the protocol families, with the QCN variants that need aux timers,
# probes or SONAR apart from plain QCN: kernel/dispatch.py kernel_family)
FAM_NONE, FAM_QCN, FAM_ECM, FAM_DCQCN, FAM_QCNV = 0, 1, 2, 3, 4
FAMILY_CODES = {"none": FAM_NONE, "qcn": FAM_QCN, "ecm": FAM_ECM, "dcqcn": FAM_DCQCN,
                "qcn-variants": FAM_QCNV}  # fmt: skip
PROBE_OFF, PROBE_CP, PROBE_SUBPATH, PROBE_PATH = 0, 1, 2, 3
PROBE_CODES = {None: PROBE_OFF, "cp": PROBE_CP, "subpath": PROBE_SUBPATH, "path": PROBE_PATH}

# ports (directed links): PI int64 rows
(P_SRC, P_DST, P_PROP, P_HOST, P_BUSY, P_PAUSED, P_PSENT, P_Q, P_QN, P_HEAD, P_TAIL) = range(11)
(P_QAREA, P_QT, P_QMAX, P_TXB, P_DROPS, P_PART, P_PLIM, P_OQLIM, P_XOFF, P_XON) = range(11, 21)
P_TXF = 21
P_CP = 22  # 1 if the port's queue is a congestion point
P_ROWS = 23
#: PF float64 rows: ns per byte (current, base), and the carried remainder (ns) of the
#: serialisation times rounded to whole ns (the next frame's time absorbs it: exact line rate)
PF_NSPB, PF_NSPB_BASE, PF_CARRY = 0, 1, 2
# flows: FI int64 rows
(F_SRC, F_DST, F_LEN, F_VN, F_VLIM, F_RNEXT, F_RPREV, F_NA, F_TROW, F_DBYTES) = range(10)
F_WBYTES, F_DELIV = 10, 11
F_UP, F_BACK = 12, 13  # switch the destination hangs from; the port into the destination
#: the rate limiter's rounding remainder carried to the next spacing (:mod:`.pacing`)
F_RLCARRY = 14
F_ROWS = 15
# hosts: HI int64 rows
H_PORT, H_RR, H_WAKE, H_GS, H_GC = range(5)
H_ROWS = 5
# generators: GI int64 rows, GF float64 rows
(G_HOST, G_KIND, G_FLOW, G_DS, G_DC, G_K, G_BASE, G_NEXT, G_CT, G_CD, G_CO) = range(11)
(G_STOP, G_ONEND, G_START, G_ST, G_SD, G_SO) = range(11, 17)
G_ROWS = 17
GF_PROB, GF_GAP, GF_ON, GF_OFF = range(4)
# nodes: NI rows
N_HOST, N_LAT, N_SW = 0, 1, 2  # N_SW: switch position (route rows/columns) or -1
# frame pool: FR rows (R_AUX: ECM CPID tag, or DCQCN ECN mark)
R_FLOW, R_NEXT, R_BACK, R_INLINK, R_AUX = range(5)
R_ROWS = 5
# hotspots: HS int rows (+ HSF float rate)
HS_PORT, HS_START, HS_STOP = range(3)
# configuration C int64
(C_END, C_BIN, C_NBINS, C_SEED, C_QCN, C_CPLAT, C_MA, C_MB, C_DRIFT) = range(9)
# C_QCN: 1 when a protocol is on (any family); C_FAM: FAM_* (the loop's dispatch.py selects
# the family's adapter by it; the QCN variants' adapter, and it alone, runs the aux timer of
# probes and SONAR); C_SONAR: CP queue tracking; C_FIRSTNEG: probe reply=first_negative;
# C_ECMQ: ECM-Q messages (two codes)
(C_FAM, C_PROBE, C_SONAR, C_FIRSTNEG, C_ECMQ) = range(9, 14)
# C_TB0: the first bin held by the trace tables (a run in segments keeps a window of bins;
# bin b is column b - C[C_TB0])
C_TB0 = 14
C_N = 15
# traces
TQ_Q, TQ_AREA, TQ_MAX, TQ_TXB, TQ_DROPS = range(5)
TQ_ROWS = 5
TG_CNM, TG_PAUSE, TG_DROP, TG_DELIV, TG_SENT, TG_BLOCKED, TG_DBYTES = range(7)
TG_ROWS = 7
TR_CR, TR_TR, TR_BC, TR_TS, TR_ACTIVE, TR_X = range(6)
TR_ROWS = 6  # TR_X: protocol-specific state (DCQCN: alpha)


@dataclass
class KernelState:
    """All arrays of one kernel run (see the row constants of this module)."""

    S: np.ndarray
    C: np.ndarray
    H: np.ndarray
    EP: np.ndarray
    EFREE: np.ndarray
    BK: np.ndarray
    PI: np.ndarray
    PF: np.ndarray
    FI: np.ndarray
    HI: np.ndarray
    GI: np.ndarray
    GF: np.ndarray
    NI: np.ndarray
    route: np.ndarray
    dst_flow: np.ndarray
    dst_list: np.ndarray
    FR: np.ndarray
    FREE: np.ndarray
    HS: np.ndarray
    HSF: np.ndarray
    TQ: np.ndarray
    TG: np.ndarray
    TFB: np.ndarray
    TRP: np.ndarray
    tr_flows: np.ndarray
    cp: np.ndarray
    cpp: np.ndarray
    rp: np.ndarray
    rpp: np.ndarray
    out: np.ndarray
    LOG: np.ndarray
    EPF: np.ndarray
    npst: np.ndarray
    npp: np.ndarray
    WF: np.ndarray
    WI: np.ndarray

    def args(self) -> tuple:
        """Positional arguments of :func:`qcnmodel.sim.kernel.loop.run_until` (but ``until``)."""
        return (
            self.S, self.C, self.H, self.EP, self.EFREE, self.BK, self.PI, self.PF, self.FI,
            self.HI,
            self.GI, self.GF, self.NI, self.route, self.dst_flow, self.dst_list, self.FR, self.FREE,
            self.HS,
            self.HSF, self.TQ, self.TG, self.TFB, self.TRP, self.tr_flows, self.cp, self.cpp,
            self.rp, self.rpp, self.out, self.LOG, self.EPF, self.npst, self.npp, self.WF,
            self.WI,
        )  # fmt: skip

    def grow_heap(self) -> None:
        """Double the event heap capacity."""
        self.H, self.EP, self.EFREE, nf = grow_heap(
            self.H, self.EP, self.EFREE, int(self.S[S_HN]), int(self.S[S_EFREE_N])
        )
        self.S[S_EFREE_N] = nf
        EPF = np.zeros((X_ROWS, self.H.shape[1]))
        EPF[:, : self.EPF.shape[1]] = self.EPF
        self.EPF = EPF

    def grow_pool(self) -> None:
        """Double the frame pool; the new slots join the free stack."""
        cap = self.FR.shape[1]
        FR = np.zeros((R_ROWS, 2 * cap), np.int64)
        FR[:, :cap] = self.FR
        FREE = np.zeros(2 * cap, np.int64)
        n = int(self.S[S_FREE_N])
        FREE[:n] = self.FREE[:n]
        FREE[n : n + cap] = np.arange(2 * cap - 1, cap - 1, -1)
        self.S[S_FREE_N] = n + cap
        self.FR, self.FREE = FR, FREE


def build_state(
    net: CompiledNetwork,
    params,
    *,
    qcn: bool,
    seed: int,
    end_ns: int,
    bin_ns: int,
    measure_ns: tuple[int, int],
    traced_flows: np.ndarray,
    pool: int | None = None,
    heap: int | None = None,
    log_events: int = 0,
    proto=None,
    trace_bins: int | None = None,
) -> KernelState:
    """Allocate and fill the kernel tables for one run (nothing is scheduled yet).

    ``pool`` and ``heap`` are the initial frame-pool and event-heap capacities (default
    ``config.defaults["sim.pool_capacity"]`` and ``["sim.heap_capacity"]``); both grow.

    ``proto`` is a :class:`~qcnmodel.sim.protocols.ProtocolConfig`; without it ``qcn``
    selects plain QCN with ``params`` (True) or no congestion management (False).

    ``trace_bins``: columns of the trace tables (default: every bin of the run). Fewer make a
    window of bins starting at ``C[C_TB0]`` (0); whoever runs the kernel in segments moves
    the window (:func:`qcnmodel.sim.engines.run`).
    """
    from qcnmodel import config
    from qcnmodel.sim.kernel import dispatch

    pool = int(config.defaults["sim.pool_capacity"] if pool is None else pool)
    heap = int(config.defaults["sim.heap_capacity"] if heap is None else heap)
    heap = max(heap, initial_events(net) + HEAP_SLACK)
    proto = protocol_config(params, qcn, proto)
    n_ports, n_flows, n_hosts = net.n_ports, net.n_flows, net.n_hosts
    n_gens = len(net.gen_host)
    nbins = max(1, -(-end_ns // bin_ns))
    tbins = nbins if trace_bins is None else max(1, int(trace_bins))
    S = np.zeros(S_N, np.int64)
    C = np.zeros(C_N, np.int64)
    C[C_END], C[C_BIN], C[C_NBINS], C[C_SEED] = end_ns, bin_ns, nbins, seed
    C[C_QCN] = 1 if proto.protocol.family != "none" else 0
    C[C_CPLAT] = int(round(params.cp_latency * 1e9))
    C[C_MA], C[C_MB] = measure_ns
    dispatch.configure(C, proto)  # C[C_FAM] and the family's entries
    PI = np.zeros((P_ROWS, n_ports), np.int64)
    PI[P_SRC], PI[P_DST], PI[P_PROP] = net.port_src, net.port_dst, net.port_prop_ns
    PI[P_HOST] = net.node_host[net.port_src]
    PI[P_HEAD] = PI[P_TAIL] = -1
    PI[P_PLIM], PI[P_OQLIM] = net.port_part_limit, net.port_oq_limit
    PI[P_XOFF], PI[P_XON] = net.port_xoff, net.port_xon
    PI[P_CP] = net.port_cp
    PF = np.zeros((3, n_ports))
    PF[PF_NSPB] = PF[PF_NSPB_BASE] = 8e9 / net.port_rate
    FI = np.zeros((F_ROWS, n_flows), np.int64)
    FI[F_SRC], FI[F_DST], FI[F_LEN] = net.flow_src, net.flow_dst, net.frame_size
    FI[F_VLIM] = net.flow_voq_limit
    FI[F_UP], FI[F_BACK] = net.flow_route()
    FI[F_RNEXT] = FI[F_RPREV] = FI[F_TROW] = -1
    FI[F_TROW, traced_flows] = np.arange(len(traced_flows))
    HI = np.zeros((H_ROWS, n_hosts), np.int64)
    HI[H_PORT], HI[H_RR], HI[H_WAKE] = net.host_port, -1, -1
    HI[H_GS], HI[H_GC] = net.host_gen_start, net.host_gen_count
    GI = np.zeros((G_ROWS, max(1, n_gens)), np.int64)
    GF = np.zeros((4, max(1, n_gens)))
    if n_gens:
        GI[G_HOST], GI[G_KIND], GI[G_FLOW] = net.gen_host, net.gen_kind, net.gen_flow
        GI[G_DS], GI[G_DC] = net.gen_dst_start, net.gen_dst_count
        GI[G_START], GI[G_STOP] = net.gen_start_ns, net.gen_stop_ns
        GI[G_NEXT] = INF_NS
        for g in range(n_gens):
            GI[G_ST, g] = stream_key_py(STREAM_TRAFFIC, g)
            GI[G_SD, g] = stream_key_py(STREAM_DEST, g)
            GI[G_SO, g] = stream_key_py(STREAM_ONOFF, g)
        GF[GF_PROB], GF[GF_GAP] = net.gen_prob, net.gen_gap_ns
        GF[GF_ON], GF[GF_OFF] = net.gen_on_ns, net.gen_off_ns
    NI = np.stack([net.node_host, net.node_latency_ns, net.routing.node_sw]).astype(np.int64)
    FR = np.zeros((R_ROWS, pool), np.int64)
    FREE = np.arange(pool - 1, -1, -1, dtype=np.int64)
    S[S_FREE_N] = pool
    n_hs = len(net.hs_port)
    HS = np.zeros((3, max(1, n_hs)), np.int64)
    HSF = np.zeros(max(1, n_hs))
    if n_hs:
        HS[HS_PORT], HS[HS_START], HS[HS_STOP] = net.hs_port, net.hs_start_ns, net.hs_stop_ns
        HSF[:n_hs] = 8e9 / net.hs_rate
    ntr = len(traced_flows)
    line_rate = float(params.line_rate)
    st = proto.new_state(n_ports, n_flows)
    pk = proto.pack()
    H, EP, EFREE, BK = new_heap(heap)
    S[S_EFREE_N] = heap
    return KernelState(
        S=S, C=C, H=H, EP=EP, EFREE=EFREE, BK=BK, PI=PI, PF=PF, FI=FI, HI=HI, GI=GI, GF=GF, NI=NI,
        # read-only in the kernel: shared with the network, not copied (switches x switches;
        # one flow per uniform destination)
        route=np.ascontiguousarray(net.routing.sw_route, np.int32),
        dst_flow=np.ascontiguousarray(net.dst_flow, np.int64),
        dst_list=np.ascontiguousarray(net.dst_list, np.int64),
        FR=FR, FREE=FREE, HS=HS[:, :n_hs] if n_hs else HS[:, :0], HSF=HSF,
        TQ=np.zeros((TQ_ROWS, n_ports, tbins), np.int64),
        TG=np.zeros((TG_ROWS, tbins), np.int64),
        TFB=np.zeros((max(ntr, 1), tbins), np.int64),
        TRP=np.zeros((TR_ROWS, max(ntr, 1), tbins)),
        tr_flows=np.asarray(traced_flows, np.int64),
        cp=st.get("cp", rules.new_cp_state(n_ports)),
        cpp=pk.get("cp", rules.pack_cp_params(params)),
        rp=st.get("rp", rules.new_rp_state(n_flows, line_rate)),
        rpp=pk.get("rp", rules.pack_rp_params(params)),
        out=np.zeros(max(rules.OUT_N, 4)),
        LOG=np.zeros((5, log_events), np.int64),
        EPF=np.zeros((X_ROWS, heap)),
        npst=st.get("np", np.zeros((2, 1))), npp=pk.get("np", np.zeros(2)),
        WF=np.zeros(n_ports + 1), WI=np.zeros(2 * n_ports + 2, np.int64),
    )  # fmt: skip


#: free event slots the kernel keeps beyond the events it is about to push (one event pushes
#: at most a few; the loop asks for growth below this many)
HEAP_SLACK = 64


def initial_events(net: CompiledNetwork) -> int:
    """Events scheduled before the first one runs: two per hotspot (start, stop), the first
    trace sample, the drift timer and one wake per host (``kernel_init`` and the oracle's
    ``_init``); the event heap is sized to hold them all."""
    return 2 * len(net.hs_port) + 2 + net.n_hosts


def protocol_config(params, qcn: bool, proto=None):
    """The run's ProtocolConfig: ``proto`` itself, else plain ``qcn`` (or ``none``)."""
    if proto is not None:
        return proto
    from qcnmodel.sim.protocols.registry import make_config

    return make_config("qcn", qcn=params) if qcn else make_config("none")
