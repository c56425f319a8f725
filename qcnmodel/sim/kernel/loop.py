"""Compiled (numba) event loop of the packet-level simulator.

Event semantics (shared exactly with the pure-Python oracle, :mod:`qcnmodel.sim.oracle.loop`):

* Time is integer ns; events are ordered by (time, sequence) (:mod:`.heap`).
* **Traffic** (the decks' traffic models, :mod:`.traffic`): generators are evaluated lazily.
  A host's generators are "caught up" (every arrival with time <= now is emitted in time
  order, ties to the lower generator index) whenever the host's transmitter is consulted: at
  a WAKE event, at the end of its transmission, on XON. An idle host schedules one WAKE at
  its next arrival or rate-limiter release. This is exactly equivalent to one event per
  arrival (the VOQs change only at the host's own decisions) and saves one event per frame.
  A frame refused by a full VOQ is counted as ``blocked``; accepted frames are ``sent``.
* **Adapter** (the 802.1Qau reaction point): VOQs (one per flow) in a round-robin ring of
  non-empty VOQs; the next VOQ whose rate limiter allows (``next_allowed <= now``) is served.
  After a frame of flow f starts, ``rp_on_tx`` runs and the RL spacing ``8 L / CR`` (CR after
  the update, rounded with a carried remainder: :mod:`.pacing`; none when the RL is
  inactive, i.e. line rate) gives f's next allowed start. A CNM or timer does not move an
  already computed ``next_allowed`` (the new rate applies from the next frame).
* **Ports**: a frame of L bytes occupies a port for ``round(L * 8e9 / rate + carry)`` ns, the
  carry being the port's last rounding remainder (the line rate is exact); it arrives at the
  next node after the propagation delay plus that node's processing latency (switches; seeds
  003/004: 1 us). Events per hop: TXDONE (port free) and ARRIVE.
* **Switch** (seed 000): input partitions, OQ limit, drops, PAUSE XOFF/XON
  (:mod:`qcnmodel.sim.network`). The CP runs on every enqueued frame with Q = output-queue
  bytes including the frame, excluding the one in transmission (IEEE 802.1Qau).
* **CNM** (``cnm_path=fixed``): reaches the source RP after ``cp_latency`` + the propagation
  delays and latencies of the hops the sampled frame crossed (a symmetric route's reverse).
* **RP timer**: an event tagged with the RL's timer generation (it fires for idle flows too;
  ns-3-dcn's lazy timer is the ``timer_mode=lazy`` variant).
* **Protocols**: the CP at enqueue (and dequeue), the RP at a frame's start, DCQCN's
  notification point at delivery, every protocol event (CNM / ECM message / CNP, timers, aux
  timers, probes, replies, echoes, drift) and the traced RL state go through the hooks of
  :mod:`.dispatch`, which selects the run's protocol-family adapter (:mod:`.families`).
* **Hotspot**: the port's rate switches at start and back at stop (not a frame's in flight).
* **Traces**: at the end of every bin a SAMPLE event records per-port queue (instantaneous,
  time integral, maximum), cumulative counters and the traced RLs' CR/TR/stages; delivered
  bytes of traced flows are binned at delivery; the last bin again after the run (so the
  traces' totals equal the final counters). Bin b is column ``b - C[C_TB0]`` of the tables.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel._borrow import borrow as _borrow
from qcnmodel.sim.kernel import dispatch as D
from qcnmodel.sim.kernel.heap import (
    EP_T,
    S_BLOCKED,
    S_CNM,
    S_DELIV,
    S_DELIV_BYTES,
    S_DROP,
    S_EFREE_N,
    S_EVENTS,
    S_FREE_N,
    S_HN,
    S_NOW,
    S_PAUSE,
    S_SENT,
    S_TAIL,
    heap_push,
    heap_push_call,
    queue_peek,
    queue_remove,
)
from qcnmodel.sim.kernel.pacing import rl_spacing
from qcnmodel.sim.kernel.route import next_port
from qcnmodel.sim.kernel.state import (
    C_BIN,
    C_CPLAT,
    C_DRIFT,
    C_END,
    C_MA,
    C_MB,
    C_NBINS,
    C_SEED,
    C_TB0,
    F_DBYTES,
    F_DELIV,
    F_LEN,
    F_NA,
    F_RLCARRY,
    F_RNEXT,
    F_RPREV,
    F_TROW,
    F_VN,
    F_WBYTES,
    G_NEXT,
    H_GC,
    H_GS,
    H_PORT,
    H_RR,
    H_WAKE,
    HS_PORT,
    HS_START,
    HS_STOP,
    INF_NS,
    K_ARRIVE,
    K_AUX,
    K_CNM,
    K_DRIFT,
    K_HOT,
    K_PAUSE,
    K_SAMPLE,
    K_TIMER,
    K_TXDONE,
    K_WAKE,
    N_HOST,
    N_LAT,
    P_BUSY,
    P_CP,
    P_DROPS,
    P_DST,
    P_HEAD,
    P_HOST,
    P_OQLIM,
    P_PART,
    P_PAUSED,
    P_PLIM,
    P_PROP,
    P_PSENT,
    P_Q,
    P_QAREA,
    P_QMAX,
    P_QN,
    P_QT,
    P_TAIL,
    P_TXB,
    P_TXF,
    P_XOFF,
    P_XON,
    PF_CARRY,
    PF_NSPB,
    PF_NSPB_BASE,
    R_AUX,
    R_BACK,
    R_FLOW,
    R_INLINK,
    R_NEXT,
    TG_BLOCKED,
    TG_CNM,
    TG_DBYTES,
    TG_DELIV,
    TG_DROP,
    TG_PAUSE,
    TG_SENT,
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
from qcnmodel.sim.kernel.traffic import gen_init, host_catch_up

RP_ACTIVE, RP_CR = 0, 1  # rate-limiter rows shared by every family's RP state

ST_OK, ST_GROW_HEAP, ST_GROW_POOL = 0, 1, 2


@njit(cache=True, inline="always")
def deliver(S, C, FI, TFB, f, L, t):
    """Count frame of flow ``f`` delivered at time ``t`` (its arrival at the destination)."""
    if t > C[C_END]:
        S[S_TAIL] += 1  # still on the last link when the run ends: in flight
        return
    S[S_DELIV] += 1
    S[S_DELIV_BYTES] += L
    FI[F_DELIV, f] += 1
    FI[F_DBYTES, f] += L
    if t >= C[C_MA] and t < C[C_MB]:
        FI[F_WBYTES, f] += L
    row = FI[F_TROW, f]
    if row >= 0:
        b = t // C[C_BIN]
        if b < C[C_NBINS]:
            if b - C[C_TB0] < TFB.shape[1]:  # the window's column (engines: margin)
                TFB[row, b - C[C_TB0]] += L


@njit(cache=True, inline="always")
def port_transmit(
    fam, H, EP, EFREE, BK, S, C, PI, PF, NI, FI, FR, FREE, TFB, npst, npp, p, k, nbytes, inlink, now
):  # fmt: skip
    """Start sending frame ``k`` on port ``p``: schedule TXDONE and the next ARRIVE.

    A frame towards a host is delivered here, at its known arrival time (no ARRIVE event:
    nothing else happens to it; DCQCN's notification point runs), and its slot is freed.
    """
    exact = nbytes * PF[PF_NSPB, p] + PF[PF_CARRY, p]
    tx = np.int64(exact + 0.5)
    PF[PF_CARRY, p] = exact - tx
    PI[P_BUSY, p] = 1
    PI[P_TXB, p] += nbytes
    PI[P_TXF, p] += 1
    heap_push(H, EP, EFREE, BK, S, now + tx, K_TXDONE, p, inlink, nbytes)
    dst = PI[P_DST, p]
    d = PI[P_PROP, p] + NI[N_LAT, dst]
    if NI[N_HOST, dst] >= 0:
        deliver(S, C, FI, TFB, FR[R_FLOW, k], nbytes, now + tx + d)
        D.np_deliver(fam, H, EP, EFREE, BK, S, C, FR, npst, npp, k, FR[R_FLOW, k], now + tx + d, d)
        FREE[S[S_FREE_N]] = k
        S[S_FREE_N] += 1
    else:
        FR[R_BACK, k] += d
        heap_push(H, EP, EFREE, BK, S, now + tx + d, K_ARRIVE, k, p, 0)


@njit(cache=True, inline="always")
def q_touch(PI, p, now):
    """Accumulate the queue-time integral of port ``p`` up to ``now``."""
    PI[P_QAREA, p] += PI[P_Q, p] * (now - PI[P_QT, p])
    PI[P_QT, p] = now


@njit(cache=True, inline="always")
def switch_service(
    fam, H, EP, EFREE, BK, S, C, PI, PF, NI, FI, FR, FREE, TFB, npst, npp, cp, cpp, p, now
):  # fmt: skip
    """Take the head frame of output queue ``p`` if the port is free and not paused: returns
    (port, frame, bytes, input link) for :func:`port_transmit`, or port -1."""
    if PI[P_BUSY, p] != 0 or PI[P_PAUSED, p] != 0 or PI[P_QN, p] == 0:
        return -1, -1, 0, -1
    k = PI[P_HEAD, p]
    PI[P_HEAD, p] = FR[R_NEXT, k]
    if FR[R_NEXT, k] < 0:
        PI[P_TAIL, p] = -1
    L = FI[F_LEN, FR[R_FLOW, k]]
    q_touch(PI, p, now)
    PI[P_Q, p] -= L
    PI[P_QN, p] -= 1
    if PI[P_CP, p] != 0:
        D.cp_dequeue(fam, C, FR, cp, cpp, p, k, PI[P_Q, p], L, now)
    return p, k, L, FR[R_INLINK, k]


@njit(cache=True, inline="always")
def host_service(
    fam, H, EP, EFREE, BK, S, C, PI, PF, FI, HI, GI, GF, NI, dst_flow, dst_list, FR, FREE, TFB,
    rp, rpp, npst, npp, h, now,
):  # fmt: skip
    """Catch up host ``h``'s traffic, then take a frame (returns (port, frame, bytes, -1) for
    :func:`port_transmit`) or schedule a WAKE (port -1)."""
    seed = C[C_SEED]
    host_catch_up(S, h, now, FI, HI, GI, GF, dst_flow, dst_list, seed)
    p = HI[H_PORT, h]
    if PI[P_BUSY, p] != 0 or PI[P_PAUSED, p] != 0:
        return -1, -1, 0, -1
    f0 = HI[H_RR, h]
    chosen = -1
    wmin = INF_NS
    if f0 >= 0:
        f = f0
        while True:
            na = FI[F_NA, f]
            if na <= now:
                chosen = f
                break
            if na < wmin:
                wmin = na
            f = FI[F_RNEXT, f]
            if f == f0:
                break
    if chosen < 0:
        for g in range(HI[H_GS, h], HI[H_GS, h] + HI[H_GC, h]):
            if GI[G_NEXT, g] < wmin:
                wmin = GI[G_NEXT, g]
        if wmin < INF_NS and wmin != HI[H_WAKE, h]:
            HI[H_WAKE, h] = wmin
            heap_push(H, EP, EFREE, BK, S, wmin, K_WAKE, h, 0, 0)
        return -1, -1, 0, -1
    f = chosen
    L = FI[F_LEN, f]
    FI[F_VN, f] -= 1
    nxt = FI[F_RNEXT, f]
    if FI[F_VN, f] == 0:
        if nxt == f:
            HI[H_RR, h] = -1
        else:
            prev = FI[F_RPREV, f]
            FI[F_RNEXT, prev] = nxt
            FI[F_RPREV, nxt] = prev
            HI[H_RR, h] = nxt
    else:
        HI[H_RR, h] = nxt
    FI[F_NA, f] = now
    tag = D.rl_send(fam, H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)
    if rp[RP_ACTIVE, f] != 0.0:  # (an inactive RL keeps its carry, at most half a ns)
        gap, FI[F_RLCARRY, f] = rl_spacing(L, rp[RP_CR, f], FI[F_RLCARRY, f])
        FI[F_NA, f] = now + gap
    n = S[S_FREE_N] - 1
    S[S_FREE_N] = n
    k = FREE[n]
    FR[R_FLOW, k] = f
    FR[R_NEXT, k] = -1
    FR[R_BACK, k] = 0
    FR[R_INLINK, k] = -1
    FR[R_AUX, k] = tag
    return p, k, L, np.int64(-1)


@njit(cache=True, inline="always")
def on_arrive(
    fam, H, EP, EFREE, BK, S, C, PI, FI, NI, route, FR, FREE, cp, cpp, out, EPF, k, link, now
):  # fmt: skip
    """Frame ``k`` arrives at a switch over port ``link``: drop or enqueue (then run the CP).

    Returns the output port to serve, or -1 after a drop.
    """
    f = FR[R_FLOW, k]
    L = FI[F_LEN, f]
    node = PI[P_DST, link]
    o = next_port(NI, FI, route, node, f)
    if PI[P_PART, link] + L > PI[P_PLIM, link] or (
        PI[P_OQLIM, o] >= 0 and PI[P_Q, o] + L > PI[P_OQLIM, o]
    ):
        S[S_DROP] += 1
        PI[P_DROPS, o] += 1
        FREE[S[S_FREE_N]] = k
        S[S_FREE_N] += 1
        return -1
    PI[P_PART, link] += L
    FR[R_INLINK, k] = link
    FR[R_NEXT, k] = -1
    if PI[P_TAIL, o] < 0:
        PI[P_HEAD, o] = k
    else:
        FR[R_NEXT, PI[P_TAIL, o]] = k
    PI[P_TAIL, o] = k
    q_touch(PI, o, now)
    PI[P_Q, o] += L
    PI[P_QN, o] += 1
    if PI[P_Q, o] > PI[P_QMAX, o]:
        PI[P_QMAX, o] = PI[P_Q, o]
    if PI[P_XOFF, link] >= 0 and PI[P_PSENT, link] == 0 and PI[P_PART, link] >= PI[P_XOFF, link]:
        PI[P_PSENT, link] = 1
        S[S_PAUSE] += 1
        heap_push_call(H, EP, EFREE, BK, S, now + PI[P_PROP, link], K_PAUSE, link, 1, 0)
    if PI[P_CP, o] != 0:
        delay = C[C_CPLAT] + FR[R_BACK, k] - NI[N_LAT, node]
        D.cp_enqueue(fam, H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, PI[P_Q, o], L,
                     delay, now)  # fmt: skip
    return o


@njit(cache=True)
def record_bin(S, PI, TQ, TG, b, now):
    """Write trace column ``b``'s cumulative counters at ``now``; the queue peak is the larger
    of the recorded and the running one (the end-of-run flush keeps the first call's)."""
    for p in range(PI.shape[1]):
        q_touch(PI, p, now)
        TQ[TQ_Q, p, b] = PI[P_Q, p]
        TQ[TQ_AREA, p, b] = PI[P_QAREA, p]
        TQ[TQ_MAX, p, b] = max(TQ[TQ_MAX, p, b], PI[P_QMAX, p])
        PI[P_QMAX, p] = PI[P_Q, p]
        TQ[TQ_TXB, p, b] = PI[P_TXB, p]
        TQ[TQ_DROPS, p, b] = PI[P_DROPS, p]
    TG[TG_CNM, b] = S[S_CNM]
    TG[TG_PAUSE, b] = S[S_PAUSE]
    TG[TG_DROP, b] = S[S_DROP]
    TG[TG_DELIV, b] = S[S_DELIV]
    TG[TG_SENT, b] = S[S_SENT]
    TG[TG_BLOCKED, b] = S[S_BLOCKED]
    TG[TG_DBYTES, b] = S[S_DELIV_BYTES]


@njit(cache=True)
def on_sample(fam, H, EP, EFREE, BK, S, C, PI, FI, TQ, TG, TRP, tr_flows, rp, rpp, b, now):
    """End of bin ``b``: record the traces and schedule the next sample."""
    i = b - C[C_TB0]  # the column of bin b in the trace window
    record_bin(S, PI, TQ, TG, i, now)
    for r in range(tr_flows.shape[0]):
        act, cr, tr, bc, ts, x = D.trace_rl(fam, C, rp, rpp, tr_flows[r])
        TRP[TR_ACTIVE, r, i] = act
        TRP[TR_CR, r, i] = cr
        TRP[TR_TR, r, i] = tr
        TRP[TR_BC, r, i] = bc
        TRP[TR_TS, r, i] = ts
        TRP[TR_X, r, i] = x
    if b + 1 < C[C_NBINS]:
        t = min((b + 2) * C[C_BIN], C[C_END])
        heap_push_call(H, EP, EFREE, BK, S, t, K_SAMPLE, b + 1, 0, 0)


@njit(cache=True)
def kernel_init(S, C, H, EP, EFREE, BK, PI, PF, FI, HI, GI, GF, NI, HS, rpp):
    """Schedule the initial events (hotspots, first sample, drift, first host wakes); returns
    ``ST_GROW_HEAP``, scheduling nothing, when the event table has fewer free slots than they
    need (2 per hotspot + 2 + 1 per host, plus the loop's margin of 8), else ``ST_OK``."""
    need = 2 * HS.shape[1] + 2 + HI.shape[1] + 8
    if S[S_EFREE_N] < need or H.shape[1] - S[S_HN] < need:
        return ST_GROW_HEAP
    for i in range(HS.shape[1]):
        heap_push_call(H, EP, EFREE, BK, S, HS[HS_START, i], K_HOT, i, 1, 0)
        heap_push_call(H, EP, EFREE, BK, S, HS[HS_STOP, i], K_HOT, i, 0, 0)
    heap_push_call(H, EP, EFREE, BK, S, min(C[C_BIN], C[C_END]), K_SAMPLE, 0, 0, 0)
    if C[C_DRIFT] > 0:
        heap_push_call(H, EP, EFREE, BK, S, C[C_DRIFT], K_DRIFT, 0, 0, 0)
    for h in range(HI.shape[1]):
        wmin = INF_NS
        for g in range(HI[H_GS, h], HI[H_GS, h] + HI[H_GC, h]):
            gen_init(GI, GF, g, C[C_SEED])
            if GI[G_NEXT, g] < wmin:
                wmin = GI[G_NEXT, g]
        if wmin < INF_NS:
            HI[H_WAKE, h] = wmin
            heap_push_call(H, EP, EFREE, BK, S, wmin, K_WAKE, h, 0, 0)
    return ST_OK


@njit(cache=True, _nrt=False)
def _run_until(
    fam, S, C, H, EP, EFREE, BK, PI, PF, FI, HI, GI, GF, NI, route, dst_flow, dst_list, FR, FREE,
    HS, HSF, TQ, TG, TFB, TRP, tr_flows, cp, cpp, rp, rpp, out, LOG, EPF, npst, npp, WF, WI, until,
):  # fmt: skip
    """Process events with time <= ``until``; returns a status code (``ST_*``)."""
    cap = H.shape[1]
    while True:
        slot, bk = queue_peek(H, EP, BK, S)
        if slot < 0 or EP[EP_T, slot] > until:
            return ST_OK
        if S[S_HN] + 8 >= cap or S[S_EFREE_N] < 8:
            return ST_GROW_HEAP
        if S[S_FREE_N] < 2:
            return ST_GROW_POOL
        now, kind, a, b, c = queue_remove(H, EP, EFREE, BK, S, slot, bk)
        S[S_NOW] = now
        ne = S[S_EVENTS]
        S[S_EVENTS] = ne + 1
        if ne < LOG.shape[1]:  # optional event log (tests compare it with the oracle's)
            LOG[0, ne] = now
            LOG[1, ne] = kind
            LOG[2, ne] = a
            LOG[3, ne] = b
            LOG[4, ne] = c
        hsvc = -1  # host whose transmitter must be served after the event
        psvc = -1  # switch port to serve after the event
        if kind == K_ARRIVE:
            psvc = on_arrive(
                fam, H, EP, EFREE, BK, S, C, PI, FI, NI, route, FR, FREE, cp, cpp, out, EPF, a, b,
                now,
            )  # fmt: skip
        elif kind == K_TXDONE:
            PI[P_BUSY, a] = 0
            if b >= 0:
                PI[P_PART, b] -= c
                if PI[P_PSENT, b] != 0 and PI[P_PART, b] <= PI[P_XON, b]:
                    PI[P_PSENT, b] = 0
                    S[S_PAUSE] += 1
                    heap_push_call(H, EP, EFREE, BK, S, now + PI[P_PROP, b], K_PAUSE, b, 0, 0)
            hsvc = PI[P_HOST, a]
            if hsvc < 0:
                psvc = a
        elif kind == K_WAKE:
            if HI[H_WAKE, a] == now:
                HI[H_WAKE, a] = -1
                hsvc = a
        elif kind == K_CNM or kind == K_TIMER or kind >= K_AUX:
            D.on_event(fam, H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp,
                       rpp, kind, a, b, c, slot, now)  # fmt: skip
        elif kind == K_PAUSE:
            PI[P_PAUSED, a] = b
            if b == 0:
                hsvc = PI[P_HOST, a]
                if hsvc < 0:
                    psvc = a
        elif kind == K_HOT:
            p = HS[HS_PORT, a]
            PF[PF_NSPB, p] = HSF[a] if b != 0 else PF[PF_NSPB_BASE, p]
        elif kind == K_SAMPLE:
            on_sample(fam, H, EP, EFREE, BK, S, C, PI, FI, TQ, TG, TRP, tr_flows, rp, rpp, a, now)
        elif kind == K_DRIFT:
            D.on_drift(fam, H, EP, EFREE, BK, S, C, rp, rpp, FI.shape[1])
            heap_push_call(H, EP, EFREE, BK, S, now + C[C_DRIFT], K_DRIFT, 0, 0, 0)
        tp = -1  # the port that starts a frame (one call site: the loop compiles faster)
        if hsvc >= 0:
            tp, k, L, inl = host_service(
                fam, H, EP, EFREE, BK, S, C, PI, PF, FI, HI, GI, GF, NI, dst_flow, dst_list, FR,
                FREE, TFB, rp, rpp, npst, npp, hsvc, now,
            )  # fmt: skip
        elif psvc >= 0:
            tp, k, L, inl = switch_service(
                fam, H, EP, EFREE, BK, S, C, PI, PF, NI, FI, FR, FREE, TFB, npst, npp, cp, cpp,
                psvc, now,
            )  # fmt: skip
        if tp >= 0:
            port_transmit(fam, H, EP, EFREE, BK, S, C, PI, PF, NI, FI, FR, FREE, TFB, npst, npp,
                          tp, k, L, inl, now)  # fmt: skip
    return ST_OK


@njit(cache=True)
def run_until(
    fam, S, C, H, EP, EFREE, BK, PI, PF, FI, HI, GI, GF, NI, route, dst_flow, dst_list, FR, FREE,
    HS, HSF, TQ, TG, TFB, TRP, tr_flows, cp, cpp, rp, rpp, out, LOG, EPF, npst, npp, WF, WI, until,
):  # fmt: skip
    """Process events with time <= ``until`` (on borrowed views); returns an ``ST_*`` code."""
    return _run_until(
        _borrow(fam), _borrow(S), _borrow(C), _borrow(H), _borrow(EP), _borrow(EFREE), _borrow(BK),
        _borrow(PI), _borrow(PF), _borrow(FI), _borrow(HI), _borrow(GI), _borrow(GF), _borrow(NI),
        _borrow(route), _borrow(dst_flow), _borrow(dst_list), _borrow(FR), _borrow(FREE),
        _borrow(HS), _borrow(HSF), _borrow(TQ), _borrow(TG), _borrow(TFB), _borrow(TRP),
        _borrow(tr_flows), _borrow(cp), _borrow(cpp), _borrow(rp), _borrow(rpp), _borrow(out),
        _borrow(LOG), _borrow(EPF), _borrow(npst), _borrow(npp), _borrow(WF), _borrow(WI),
        until,
    )  # fmt: skip


@njit(cache=True)
def kernel_finish(S, C, FI, HI, GI, GF, dst_flow, dst_list, PI, TQ, TG):
    """Catch every host up to the end time, then record the last bin again (module: Traces)."""
    for h in range(HI.shape[1]):
        host_catch_up(S, h, C[C_END], FI, HI, GI, GF, dst_flow, dst_list, C[C_SEED])
    if C[C_NBINS] > 0:
        record_bin(S, PI, TQ, TG, C[C_NBINS] - 1 - C[C_TB0], C[C_END])


def run_compiled(state, n_chunks: int = 1, callback=None, stops=(), on_stop=None) -> None:
    """Run a :class:`~qcnmodel.sim.kernel.state.KernelState` to its end time, in ``n_chunks``
    equal slices (``callback(fraction)`` after each) and stopping at each time of ``stops``
    (ns, before the end) for ``on_stop(state, time)`` (:func:`qcnmodel.sim.engines.run` moves
    the trace window there). Stops change nothing: the state carries over. The heap and frame
    pool grow when the kernel asks."""
    end = int(state.C[C_END])
    fam = D.marker(int(state.C[D.C_FAM]))  # compiles (or loads) this family's loop only
    while kernel_init(
        state.S, state.C, state.H, state.EP, state.EFREE, state.BK, state.PI, state.PF, state.FI,
        state.HI, state.GI, state.GF, state.NI, state.HS, state.rpp,
    ) == ST_GROW_HEAP:  # fmt: skip
        state.grow_heap()  # capacity is checked before anything is scheduled
    ticks = {(end if i == n_chunks else end * i // n_chunks): i for i in range(1, n_chunks + 1)}
    for until in sorted(set(ticks) | (stop_set := {int(t) for t in stops if 0 <= t < end})):
        while (st := run_until(fam, *state.args(), until)) != ST_OK:
            if st == ST_GROW_HEAP:
                state.grow_heap()
            else:
                state.grow_pool()
        if until in stop_set:
            on_stop(state, until)
        if callback is not None and until in ticks:
            callback(ticks[until] / n_chunks)
    kernel_finish(*(getattr(state, k) for k in ("S", "C", "FI", "HI", "GI", "GF", "dst_flow",
                                                "dst_list", "PI", "TQ", "TG")))  # fmt: skip


_WARM: dict[str, float] = {}


def warm_up(family: str = "qcn") -> float:
    """Compile (or load) ``family``'s event loop on a tiny network; the time it took (0.0
    after the first call in a process), reported apart from the simulation."""
    if family in _WARM:
        return 0.0
    import time

    from qcnmodel.params import QCNParams
    from qcnmodel.sim.kernel.state import build_state
    from qcnmodel.sim.network import Host, Hotspot, Link, NetworkSpec, Switch, UniformTraffic
    from qcnmodel.sim.network.compile import compile_network
    from qcnmodel.sim.protocols.registry import make_config

    t0 = time.perf_counter()
    spec = NetworkSpec(
        "warm-up", (Host("a"), Host("b")), (Switch("s"),), (Link("a", "s"), Link("b", "s")),
        (UniformTraffic("a", 5e9),), (Hotspot("b", 1e9, 0.0, 1e-5),),
    )  # fmt: skip
    net = compile_network(spec)
    proto = make_config(D.WARM_PROTOCOLS[family])
    st = build_state(net, QCNParams(), qcn=True, seed=0, end_ns=20_000, bin_ns=10_000,
                     measure_ns=(0, 20_000), traced_flows=np.arange(net.n_flows),
                     proto=proto)  # fmt: skip
    run_compiled(st)
    _WARM[family] = time.perf_counter() - t0
    return _WARM[family]
