"""Protocol dispatch of the compiled kernel: QCN family, ECM family and DCQCN events.

The event loop (:mod:`qcnmodel.sim.kernel`) calls these helpers (all inlined) at four
places -- a frame leaves its adapter (:func:`rp_frame_tx`), a frame is enqueued at a switch
port (:func:`cp_enqueue`), a frame reaches its destination (:func:`np_deliver`), and a
protocol event fires (:func:`proto_event`) -- and dispatches on ``C[C_FAM]`` (``FAM_*`` of
:mod:`.kernel_state`). The pure-Python twin is :mod:`qcnmodel.sim.oracle_proto`; both push
the same events in the same order. Rules: :mod:`.rules_variants` (QCN family),
:mod:`.rules_ecm`, :mod:`.rules_dcqcn`; probe paths: :mod:`.probes`.

Protocol events (payload ``a, b, c`` + floats ``EPF[X0..X2, slot]``):

========= ============================================ ====================================
kind      QCN family                                   ECM / DCQCN
========= ============================================ ====================================
K_CNM     CNM at the RP (f, qfb, cpid; Qoff, Qdelta)   ECM message (f, MSG_*, cpid; Fb,
                                                       Qoff/code, Qdelta/code); DCQCN CNP (f)
K_TIMER   QCN timer (f, generation)                    DCQCN rate timer (f, generation)
K_AUX     probe / SONAR timer (f, generation)          DCQCN alpha timer (f, generation)
K_PROBE   probe (c=0) or SONAR ping (c=1) reaching     --
          its target (f, target CP port)
K_REPLY   probe reply at the RP (f, -, cpid; code,     --
          Qoff, Qdelta)
K_ECHO    SONAR echo at the RP (f, not congested, cp)  --
K_DRIFT   drift of every RL (QCN family and ECM)       ECM drift
========= ============================================ ====================================

Probe timing (our reading; qcn-algorithm.md §4.8-4.10 leave it N/S): a probe or ping is a
control frame that sees no queueing. It reaches its target (the CPID's port for ``cp`` and
``subpath`` probing, the destination for ``path`` probing) after the propagation and switch
latencies of the hops before it, i.e. the CNM delay of that CP without ``cp_latency``. The
CPs of the walked path are read at that moment (:func:`qcnmodel.sim.probes.probe_replier`
picks the answering hop); the reply reaches the RP after ``cp_latency`` plus the same
latency back from the answering CP (from the destination: the whole path latency, no
``cp_latency``). A DCQCN CNP leaves the receiver when the marked frame arrives and takes the
path latency back.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim import rules_dcqcn as rd
from qcnmodel.sim import rules_ecm as re_
from qcnmodel.sim import rules_variants as rv
from qcnmodel.sim.kernel_heap import S_CNM, S_EFREE_N, heap_push
from qcnmodel.sim.kernel_state import (
    C_AUX,
    C_CPLAT,
    C_ECMQ,
    C_END,
    C_FAM,
    C_FIRSTNEG,
    C_PROBE,
    C_SEED,
    C_SONAR,
    F_DST,
    F_SRC,
    FAM_DCQCN,
    FAM_ECM,
    FAM_QCN,
    H_PORT,
    K_AUX,
    K_CNM,
    K_ECHO,
    K_PROBE,
    K_REPLY,
    K_TIMER,
    N_HOST,
    N_LAT,
    P_CP,
    P_DST,
    P_PROP,
    P_Q,
    PROBE_CP,
    PROBE_PATH,
    R_AUX,
    R_BACK,
    X0,
    X1,
    X2,
)
from qcnmodel.sim.probes import probe_replier
from qcnmodel.sim.rules import CPP_QEQ, OUT_QDELTA, OUT_QFB, OUT_QOFF

# per-frame rules re-compiled inline (same Python source: no call overhead)
vcp_on_arrival = njit(cache=True, inline="always")(rv.vcp_on_arrival.py_func)
vrp_on_tx = njit(cache=True, inline="always")(rv.vrp_on_tx.py_func)


@njit(cache=True, inline="always")
def push_x(H, EP, EFREE, BK, S, EPF, t, kind, a, b, c, x0, x1, x2):
    """``heap_push`` plus three float payloads in ``EPF[:, slot]``."""
    heap_push(H, EP, EFREE, BK, S, t, kind, a, b, c)
    slot = EFREE[S[S_EFREE_N]]  # the slot heap_push just took
    EPF[X0, slot] = x0
    EPF[X1, slot] = x1
    EPF[X2, slot] = x2


@njit(cache=True, inline="always")
def arm_aux(H, EP, EFREE, BK, S, rp, i):
    """QCN family: schedule the aux timer the last RP call requested (``vrp_take_arm``)."""
    d = rv.vrp_take_arm(rp, i)
    if d >= 0:
        heap_push(H, EP, EFREE, BK, S, d, K_AUX, i, np.int64(rp[rv.RV_AUX_GEN, i]), 0)


@njit(cache=True, inline="always")
def rp_frame_tx(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    """A frame of RL ``f`` starts: the family's on-transmit rule (none for ECM)."""
    fam = C[C_FAM]
    if fam == FAM_QCN:
        vrp_on_tx(rp, f, float(L), now, C[C_SEED], rpp)
        if C[C_AUX] != 0:
            arm_aux(H, EP, EFREE, BK, S, rp, f)
    elif fam == FAM_DCQCN:
        rd.dcqcn_rp_on_tx(rp, f, float(L), C[C_SEED], rpp)


@njit(cache=True, inline="always")
def frame_tag(C, rp, f):
    """``FR[R_AUX]`` of a new frame: ECM's CPID tag, else 0 (DCQCN: not ECN-marked)."""
    if C[C_FAM] == FAM_ECM:
        return re_.ecm_rp_tag(rp, f)
    return np.int64(0)


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    """Frame ``k`` (flow ``f``, ``L`` bytes) enqueued at CP port ``o`` (queue ``q`` bytes)."""
    fam = C[C_FAM]
    seed = C[C_SEED]
    if fam == FAM_QCN:
        if C[C_SONAR] != 0:
            rv.vcp_on_queue(cp, o, float(q), now, cpp)
        if vcp_on_arrival(cp, o, float(q), float(L), seed, cpp, out):
            S[S_CNM] += 1
            push_x(H, EP, EFREE, BK, S, EPF, now + delay, K_CNM, f, np.int64(out[OUT_QFB]), o,
                   out[OUT_QOFF], out[OUT_QDELTA], 0.0)  # fmt: skip
    elif fam == FAM_ECM:
        m = re_.ecm_cp_on_arrival(cp, o, float(q), float(L), FR[R_AUX, k] == o, seed, cpp, out)
        if m != re_.MSG_NONE:
            S[S_CNM] += 1
            push_x(H, EP, EFREE, BK, S, EPF, now + delay, K_CNM, f, m, o, out[re_.OUT_FB],
                   out[OUT_QOFF], out[OUT_QDELTA])  # fmt: skip
    elif fam == FAM_DCQCN:
        if rd.dcqcn_cp_on_arrival(cp, o, float(q), seed, cpp):
            FR[R_AUX, k] = 1


@njit(cache=True, inline="always")
def np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    """DCQCN notification point: frame ``k`` reaches its destination at ``t`` (last hop ``d``)."""
    if C[C_FAM] == FAM_DCQCN and FR[R_AUX, k] != 0 and t <= C[C_END]:
        if rd.dcqcn_np_on_packet(npst, f, True, t, npp):
            S[S_CNM] += 1
            heap_push(H, EP, EFREE, BK, S, t + FR[R_BACK, k] + d, K_CNM, f, 0, 0)


@njit(cache=True)
def path_walk(PI, NI, HI, FI, route, WI, off, f, target):
    """Walk flow ``f``'s path to port ``target`` (-1: to the destination).

    Returns (latency, n): the latency from the source to ``target``'s switch (propagation
    and switch latencies of the hops before it; to the destination: the whole path) or -1
    if ``target`` is not on the path, and the number ``n`` of CP ports crossed, stored in
    ``WI[off:off + n]`` in path order (the target included).
    """
    p = HI[H_PORT, FI[F_SRC, f]]
    dst = FI[F_DST, f]
    d = np.int64(0)
    n = 0
    for _ in range(PI.shape[1] + 1):
        node = PI[P_DST, p]
        d += PI[P_PROP, p] + NI[N_LAT, node]
        if NI[N_HOST, node] >= 0:
            return (d if target < 0 else np.int64(-1)), n
        p = route[node, dst]
        if PI[P_CP, p] != 0:
            WI[off + n] = p
            n += 1
        if p == target:
            return d - NI[N_LAT, node], n
    return np.int64(-1), n


@njit(cache=True)
def send_probe(H, EP, EFREE, BK, S, C, PI, NI, HI, FI, route, WI, f, target, now):
    """RL ``f`` probes (or, SONAR, pings) CP port ``target``: schedule K_PROBE."""
    ping = C[C_SONAR] != 0
    to_dst = not ping and C[C_PROBE] == PROBE_PATH
    d, _ = path_walk(PI, NI, HI, FI, route, WI, 0, f, -1 if to_dst else target)
    if d >= 0:
        heap_push(H, EP, EFREE, BK, S, now + d, K_PROBE, f, target, 1 if ping else 0)


@njit(cache=True)
def on_probe(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, f, target,
             ping, now):  # fmt: skip
    """A probe or ping of RL ``f`` reaches its target: the answering CP replies."""
    cplat = C[C_CPLAT]
    if ping != 0:
        nc = rv.vcp_on_ping(cp, target, float(PI[P_Q, target]), now, cpp)
        d, _ = path_walk(PI, NI, HI, FI, route, WI, 0, f, target)
        heap_push(H, EP, EFREE, BK, S, now + cplat + d, K_ECHO, f, 1 if nc else 0, target)
        return
    mode = C[C_PROBE]
    if mode == PROBE_CP:
        dt, _ = path_walk(PI, NI, HI, FI, route, WI, 0, f, target)
        WI[0] = target
        n = 1
    else:
        dt, n = path_walk(PI, NI, HI, FI, route, WI, 0, f, -1 if mode == PROBE_PATH else target)
    if n == 0 or dt < 0:  # no CP to read, or the target left the path (not expected)
        return
    jmin = 0
    for k in range(n):
        WF[k] = rv.vcp_probe_fb(cp, WI[k], float(PI[P_Q, WI[k]]), cpp)
        if WF[k] < WF[jmin]:
            jmin = k
    k, fb = probe_replier(WF, n, C[C_FIRSTNEG] != 0, mode == PROBE_PATH)
    j = WI[k] if k < n and WF[k] == fb else WI[jmin]
    if k >= n:  # the destination answers (path probing)
        back = dt
    elif mode != PROBE_PATH and WI[k] == target:
        back = cplat + dt
    else:
        back, _ = path_walk(PI, NI, HI, FI, route, WI, n, f, WI[k])
        back += cplat
    q = float(PI[P_Q, j])
    code = rv.vcp_probe_code(fb, cpp)
    push_x(H, EP, EFREE, BK, S, EPF, now + back, K_REPLY, f, 0, j, code, q - cpp[CPP_QEQ],
           q - cp[rv.CP_QOLD, j])  # fmt: skip


@njit(cache=True)
def proto_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
                kind, a, b, c, slot, now):  # fmt: skip
    """Handle a protocol event (K_CNM, K_TIMER, K_AUX, K_PROBE, K_REPLY, K_ECHO)."""
    fam = C[C_FAM]
    seed = C[C_SEED]
    x0, x1, x2 = EPF[X0, slot], EPF[X1, slot], EPF[X2, slot]
    if fam == FAM_QCN:
        if kind == K_CNM:
            d = rv.vrp_on_cnm(rp, a, b, x0, x1, c, now, seed, rpp)
            if d >= 0:
                heap_push(H, EP, EFREE, BK, S, d, K_TIMER, a, np.int64(rp[rv.RP_TIMER_GEN, a]), 0)
        elif kind == K_TIMER:
            d = rv.vrp_on_timer(rp, a, b, now, seed, rpp)
            if d >= 0:
                heap_push(H, EP, EFREE, BK, S, d, K_TIMER, a, b, 0)
        elif kind == K_AUX:
            d = rv.vrp_on_aux_timer(rp, a, b, now, seed, rpp)
            if d >= 0:
                heap_push(H, EP, EFREE, BK, S, d, K_AUX, a, b, 0)
            arm_aux(H, EP, EFREE, BK, S, rp, a)
            target = rv.vrp_take_send(rp, a)
            if target >= 0:
                send_probe(H, EP, EFREE, BK, S, C, PI, NI, HI, FI, route, WI, a, target, now)
            return
        elif kind == K_PROBE:
            on_probe(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, a, b,
                     c, now)  # fmt: skip
            return
        elif kind == K_REPLY:
            d = rv.vrp_on_probe_reply(rp, a, x0, x1, x2, c, now, seed, rpp)
            if d >= 0:
                heap_push(H, EP, EFREE, BK, S, d, K_TIMER, a, np.int64(rp[rv.RP_TIMER_GEN, a]), 0)
        elif kind == K_ECHO:
            rv.vrp_on_echo(rp, a, b != 0, now, seed, rpp)
        if C[C_AUX] != 0:
            arm_aux(H, EP, EFREE, BK, S, rp, a)
    elif fam == FAM_ECM:
        if kind == K_CNM:
            if b == re_.MSG_00:
                re_.ecm_rp_on_00(rp, a, c, rpp)
            elif C[C_ECMQ] != 0:
                re_.ecmq_rp_on_fb(rp, a, x1, x2, c, rpp)
            else:
                re_.ecm_rp_on_fb(rp, a, x0, c, rpp)
    elif fam == FAM_DCQCN:
        if kind == K_CNM:
            d = rd.dcqcn_rp_on_cnp(rp, a, now, seed, rpp)
            heap_push(H, EP, EFREE, BK, S, d, K_TIMER, a, np.int64(rp[rd.D_TIMER_GEN, a]), 0)
            heap_push(H, EP, EFREE, BK, S, np.int64(rp[rd.D_ALPHA_DEADLINE, a]), K_AUX, a,
                      np.int64(rp[rd.D_ALPHA_GEN, a]), 0)  # fmt: skip
        elif kind == K_TIMER:
            d = rd.dcqcn_rp_on_rate_timer(rp, a, b, now, seed, rpp)
            if d >= 0:
                heap_push(H, EP, EFREE, BK, S, d, K_TIMER, a, b, 0)
        elif kind == K_AUX:
            d = rd.dcqcn_rp_on_alpha_timer(rp, a, b, now, rpp)
            if d >= 0:
                heap_push(H, EP, EFREE, BK, S, d, K_AUX, a, b, 0)


@njit(cache=True)
def proto_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    """Drift event: every RL of the QCN family (or ECM) drifts (§4.5)."""
    fam = C[C_FAM]
    for f in range(n_flows):
        if fam == FAM_QCN:
            rv.vrp_on_drift(rp, f, rpp)
            if C[C_AUX] != 0:
                arm_aux(H, EP, EFREE, BK, S, rp, f)
        elif fam == FAM_ECM:
            re_.ecm_rp_on_drift(rp, f, rpp)


@njit(cache=True, inline="always")
def trace_rl(C, rp, rpp, f):
    """(active, CR, TR, bc stage, t stage, extra) of RL ``f`` for the traces (C if inactive)."""
    act = rp[0, f]
    line = rpp[0]  # RPP_C, ERP_C and DRP_C are all entry 0
    fam = C[C_FAM]
    cr = rp[1, f] if act != 0.0 else line
    if fam == FAM_ECM:
        return act, cr, cr, 0.0, 0.0, 0.0
    if fam == FAM_DCQCN:
        tr = rp[rd.D_TR, f] if act != 0.0 else line
        return act, cr, tr, rp[rd.D_BC_STAGE, f], rp[rd.D_T_STAGE, f], rp[rd.D_ALPHA, f]
    tr = rp[rv.RP_TR, f] if act != 0.0 else line
    return act, cr, tr, rp[rv.RP_BC_STAGE, f], rp[rv.RP_T_STAGE, f], 0.0
