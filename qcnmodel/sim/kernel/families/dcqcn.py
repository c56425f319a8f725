"""Kernel adapter of DCQCN (rules of :mod:`..protocols.dcqcn`).

The CP marks frames (``FR[R_AUX] = 1``, RED/ECN) at enqueue or, by default, at dequeue
(``mark_at``; the queue including the frame); the notification point at the destination
turns marks into CNPs (``cnp_mode``), which leave the receiver at the time the rule gives
(the frame's arrival, or the end of a CNP interval) and take the path latency back (K_CNM
at the RP: f); a CNP due after the end time is not sent. K_TIMER is the rate-increase
timer and K_AUX the alpha timer (f, generation).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.kernel.heap import S_CNM, heap_push
from qcnmodel.sim.kernel.state import C_END, C_SEED, K_AUX, K_CNM, K_TIMER, R_AUX, R_BACK
from qcnmodel.sim.protocols import dcqcn as dc


def configure(C, cfg) -> None:
    """Nothing beyond the generic entries (no drift)."""


@njit(cache=True, inline="always")
def rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    dc.dcqcn_rp_on_tx(rp, f, float(L), C[C_SEED], rpp)
    return np.int64(0)  # not ECN-marked


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    if not dc.dcqcn_cp_marks_at_dequeue(cpp):
        if dc.dcqcn_cp_on_arrival(cp, o, float(q), C[C_SEED], cpp):
            FR[R_AUX, k] = 1


@njit(cache=True, inline="always")
def cp_dequeue(C, FR, cp, cpp, p, k, q, L, now):
    if dc.dcqcn_cp_marks_at_dequeue(cpp):
        if dc.dcqcn_cp_on_arrival(cp, p, float(q + L), C[C_SEED], cpp):
            FR[R_AUX, k] = 1


@njit(cache=True, inline="always")
def np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    if FR[R_AUX, k] != 0 and t <= C[C_END]:
        tc = dc.dcqcn_np_on_packet(npst, f, True, t, npp)
        if tc >= 0 and tc <= C[C_END]:
            S[S_CNM] += 1
            heap_push(H, EP, EFREE, BK, S, tc + FR[R_BACK, k] + d, K_CNM, f, 0, 0)


@njit(cache=True, inline="always")
def on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
    seed = C[C_SEED]
    if kind == K_CNM:
        t = dc.dcqcn_rp_on_cnp(rp, a, now, seed, rpp)
        heap_push(H, EP, EFREE, BK, S, t, K_TIMER, a, np.int64(rp[dc.D_TIMER_GEN, a]), 0)
        heap_push(H, EP, EFREE, BK, S, np.int64(rp[dc.D_ALPHA_DEADLINE, a]), K_AUX, a,
                  np.int64(rp[dc.D_ALPHA_GEN, a]), 0)  # fmt: skip
    elif kind == K_TIMER:
        t = dc.dcqcn_rp_on_rate_timer(rp, a, b, now, seed, rpp)
        if t >= 0:
            heap_push(H, EP, EFREE, BK, S, t, K_TIMER, a, b, 0)
    elif kind == K_AUX:
        t = dc.dcqcn_rp_on_alpha_timer(rp, a, b, now, rpp)
        if t >= 0:
            heap_push(H, EP, EFREE, BK, S, t, K_AUX, a, b, 0)


@njit(cache=True, inline="always")
def on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    return


@njit(cache=True, inline="always")
def trace_rl(C, rp, rpp, f):
    act = rp[dc.D_ACTIVE, f]
    cr = rp[dc.D_CR, f] if act != 0.0 else rpp[dc.DRP_C]
    tr = rp[dc.D_TR, f] if act != 0.0 else rpp[dc.DRP_C]
    return act, cr, tr, rp[dc.D_BC_STAGE, f], rp[dc.D_T_STAGE, f], rp[dc.D_ALPHA, f]
