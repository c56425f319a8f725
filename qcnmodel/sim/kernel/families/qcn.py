"""Kernel adapter of plain QCN (IEEE 802.1Qau; rules of :mod:`..protocols.qcn`), also the base
of :mod:`.qcn_variants`.

Events: K_CNM (f, qfb, cpid; Qoff, Qdelta), K_TIMER (f, generation), K_DRIFT (every RL
drifts).

A QCN-family protocol without the seed decks' extra machinery (aux timers, probes, SONAR
queue tracking: :func:`uses_variants`) runs on this adapter alone, so its event loop compiles
without that machinery's rules (about 6 s less of a first compilation); the variants run on
:mod:`.qcn_variants`, which adds them to these hooks. Both give the same events in the same
order for a plain-QCN run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.kernel.heap import S_CNM, heap_push_call, heap_push_x
from qcnmodel.sim.kernel.state import (
    C_DRIFT,
    C_FIRSTNEG,
    C_PROBE,
    C_SEED,
    C_SONAR,
    K_CNM,
    K_TIMER,
    PROBE_CODES,
    PROBE_OFF,
    X0,
    X1,
)
from qcnmodel.sim.protocols import qcn as r

# per-frame rules re-compiled inline (same Python source: no call overhead)
_cp_on_arrival = njit(cache=True, inline="always")(r.cp_on_arrival.py_func)
_rp_on_tx = njit(cache=True, inline="always")(r.rp_on_tx.py_func)


def uses_variants(cfg) -> bool:
    """True if a QCN-family configuration needs :mod:`.qcn_variants`: probes (a probe path)
    or SONAR's queue tracking, both of which run an aux timer (the variants' adapter always
    does)."""
    return PROBE_CODES[cfg.protocol.probe_path] != PROBE_OFF or "SonarParams" in cfg.params


def configure(C, cfg) -> None:
    """Drift period, SONAR queue tracking, probe path and reply rule."""
    pp = cfg.params
    C[C_DRIFT] = int(round(pp["QCNParams"].drift_period * 1e9))
    C[C_PROBE] = PROBE_CODES[cfg.protocol.probe_path]
    C[C_SONAR] = 1 if "SonarParams" in pp else 0
    probe = pp.get("ProbeParams")
    C[C_FIRSTNEG] = 1 if probe is not None and probe.reply == "first_negative" else 0


# ------------------------------------------------------------------ hooks
@njit(cache=True, inline="always")
def rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    _rp_on_tx(rp, f, float(L), now, C[C_SEED], rpp)
    return np.int64(0)


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    if _cp_on_arrival(cp, o, float(q), float(L), C[C_SEED], cpp, out):
        S[S_CNM] += 1
        heap_push_x(H, EP, EFREE, BK, S, EPF, now + delay, K_CNM, f, np.int64(out[r.OUT_QFB]), o,
                    out[r.OUT_QOFF], out[r.OUT_QDELTA], 0.0)  # fmt: skip


@njit(cache=True, inline="always")
def cp_dequeue(C, FR, cp, cpp, p, k, q, L, now):
    return


@njit(cache=True, inline="always")
def np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    return


@njit(cache=True, inline="always")
def on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
    seed = C[C_SEED]
    if kind == K_CNM:
        d = r.rp_on_cnm(rp, a, b, c, now, seed, rpp, EPF[X0, slot], EPF[X1, slot])
        if d >= 0:
            heap_push_call(H, EP, EFREE, BK, S, d, K_TIMER, a, np.int64(rp[r.RP_TIMER_GEN, a]), 0)
    elif kind == K_TIMER:
        d = r.rp_on_timer(rp, a, b, now, seed, rpp)
        if d >= 0:
            heap_push_call(H, EP, EFREE, BK, S, d, K_TIMER, a, b, 0)


@njit(cache=True, inline="always")
def on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    for f in range(n_flows):
        r.rp_on_drift(rp, f, rpp)


@njit(cache=True, inline="always")
def trace_rl(C, rp, rpp, f):
    act = rp[r.RP_ACTIVE, f]
    cr = rp[r.RP_CR, f] if act != 0.0 else rpp[r.RPP_C]
    tr = rp[r.RP_TR, f] if act != 0.0 else rpp[r.RPP_C]
    return act, cr, tr, rp[r.RP_BC_STAGE, f], rp[r.RP_T_STAGE, f], 0.0
