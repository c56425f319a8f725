"""Kernel adapter of the ECM family: ECM and ECM-Q (rules of :mod:`..protocols.ecm`).

Events: K_CNM carries an ECM message (f, MSG_*, cpid; Fb, Qoff or its code, Qdelta or its
code); K_DRIFT drifts every RL. A new frame carries its RL's CPID tag (``FR[R_AUX]``) so that
the CP can tell whether a positive feedback may go to it. No timers.
"""

from __future__ import annotations

from numba import njit

from qcnmodel.sim.kernel.heap import S_CNM, heap_push_x
from qcnmodel.sim.kernel.state import C_DRIFT, C_ECMQ, C_SEED, K_CNM, R_AUX, X0, X1, X2
from qcnmodel.sim.protocols import ecm as e


def configure(C, cfg) -> None:
    """Drift period and ECM-Q's two-code messages."""
    p = cfg.params[cfg.protocol.params[0].__name__]
    C[C_DRIFT] = int(round(p.drift_period * 1e9))
    C[C_ECMQ] = 1 if cfg.protocol.name == "ecm-q" else 0


@njit(cache=True, inline="always")
def rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    return e.ecm_rp_tag(rp, f)  # the frame carries its RL's CPID


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    m = e.ecm_cp_on_arrival(cp, o, float(q), float(L), FR[R_AUX, k] == o, C[C_SEED], cpp, out)
    if m != e.MSG_NONE:
        S[S_CNM] += 1
        heap_push_x(H, EP, EFREE, BK, S, EPF, now + delay, K_CNM, f, m, o, out[e.OUT_FB],
                    out[e.OUT_QOFF], out[e.OUT_QDELTA])  # fmt: skip


@njit(cache=True, inline="always")
def cp_dequeue(C, FR, cp, cpp, p, k, q, L, now):
    return


@njit(cache=True, inline="always")
def np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    return


@njit(cache=True, inline="always")
def on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
    if kind == K_CNM:
        if b == e.MSG_00:
            e.ecm_rp_on_00(rp, a, c, rpp)
        elif C[C_ECMQ] != 0:
            e.ecmq_rp_on_fb(rp, a, EPF[X1, slot], EPF[X2, slot], c, rpp)
        else:
            e.ecm_rp_on_fb(rp, a, EPF[X0, slot], c, rpp)


@njit(cache=True, inline="always")
def on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    for f in range(n_flows):
        e.ecm_rp_on_drift(rp, f, rpp)


@njit(cache=True, inline="always")
def trace_rl(C, rp, rpp, f):
    act = rp[e.ERP_ACTIVE, f]
    cr = rp[e.ERP_CR, f] if act != 0.0 else rpp[e.ERP_C]
    return act, cr, cr, 0.0, 0.0, 0.0
