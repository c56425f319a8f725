"""Kernel adapter of the QCN variants of the seed decks that need more than plain QCN's
hooks (:func:`.qcn.uses_variants`): probes and SONAR. It runs :mod:`.qcn`'s hooks and adds
the aux timer, the probes and SONAR's queue tracking (rules of
:mod:`..protocols.qcn_variants`).

Events: K_CNM (f, qfb, cpid; Qoff, Qdelta), K_TIMER (f, generation), K_AUX (probe / SONAR
timer: f, generation), K_PROBE (probe, c = 0, or SONAR ping, c = 1, reaching its target: f,
target CP port), K_REPLY (probe reply at the RP: f, -, cpid; code, Qoff, Qdelta), K_ECHO
(SONAR echo at the RP: f, not congested, cp), K_DRIFT (every RL drifts).

Probe timing (our reading; the decks leave it unspecified): a probe or ping is a control
frame that sees no queueing. It reaches its target (the CPID's port for ``cp`` and
``subpath`` probing, the destination for ``path`` probing) after the propagation and switch
latencies of the hops before it, i.e. the CNM delay of that CP without ``cp_latency``. The
CPs of the walked path are read at that moment
(:func:`qcnmodel.sim.protocols.probes.probe_replier` picks the answering hop); the reply
reaches the RP after ``cp_latency`` plus the same latency back from the answering CP (from the
destination: the whole path latency, no ``cp_latency``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.kernel.families import qcn
from qcnmodel.sim.kernel.families.qcn import configure, np_deliver, trace_rl
from qcnmodel.sim.kernel.heap import heap_push_call, heap_push_x
from qcnmodel.sim.kernel.route import next_port
from qcnmodel.sim.kernel.state import (
    C_CPLAT,
    C_FIRSTNEG,
    C_PROBE,
    C_SEED,
    C_SONAR,
    F_SRC,
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
    X0,
    X1,
    X2,
)
from qcnmodel.sim.protocols import qcn as r
from qcnmodel.sim.protocols import qcn_variants as rv
from qcnmodel.sim.protocols.probes import probe_replier

__all__ = ["configure", "cp_dequeue", "cp_enqueue", "np_deliver", "on_drift", "on_event",
           "rl_send", "trace_rl"]  # fmt: skip


@njit(cache=True, inline="always")
def schedule_aux(H, EP, EFREE, BK, S, rp, i):
    """Schedule the aux timer the last RP call requested (``vrp_take_arm``), if it requested
    one: the check is inlined (it runs for every frame sent), the scheduling is not (inlined
    at each of its call sites it cost about 2 s of the first compilation)."""
    if rp[r.RV_ARM, i] >= 0.0:
        _schedule_aux(H, EP, EFREE, BK, S, rp, i)


@njit(cache=True)
def _schedule_aux(H, EP, EFREE, BK, S, rp, i):
    d = rv.vrp_take_arm(rp, i)
    if d >= 0:
        heap_push_call(H, EP, EFREE, BK, S, d, K_AUX, i, np.int64(rp[r.RV_AUX_GEN, i]), 0)


# ------------------------------------------------------------------ hooks
@njit(cache=True, inline="always")
def rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    tag = qcn.rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)
    schedule_aux(H, EP, EFREE, BK, S, rp, f)
    return tag


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    if C[C_SONAR] != 0:
        rv.vcp_on_queue(cp, o, float(q), now, cpp)
    qcn.cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now)


@njit(cache=True, inline="always")
def cp_dequeue(C, FR, cp, cpp, p, k, q, L, now):
    if C[C_SONAR] != 0:
        rv.vcp_on_queue(cp, p, float(q), now, cpp)


@njit(cache=True, inline="always")
def on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
    seed = C[C_SEED]
    if kind == K_CNM or kind == K_TIMER:
        qcn.on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp,
                     rpp, kind, a, b, c, slot, now)  # fmt: skip
    elif kind == K_AUX:
        d = rv.vrp_on_aux_timer(rp, a, b, now, seed, rpp)
        if d >= 0:
            heap_push_call(H, EP, EFREE, BK, S, d, K_AUX, a, b, 0)
        schedule_aux(H, EP, EFREE, BK, S, rp, a)
        target = rv.vrp_take_send(rp, a)
        if target >= 0:
            send_probe(H, EP, EFREE, BK, S, C, PI, NI, HI, FI, route, WI, a, target, now)
        return
    elif kind == K_PROBE:
        on_probe(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, a, b, c,
                 now)  # fmt: skip
        return
    elif kind == K_REPLY:
        d = rv.vrp_on_probe_reply(rp, a, EPF[X0, slot], EPF[X1, slot], EPF[X2, slot], c, now,
                                  seed, rpp)  # fmt: skip
        if d >= 0:
            heap_push_call(H, EP, EFREE, BK, S, d, K_TIMER, a, np.int64(rp[r.RP_TIMER_GEN, a]), 0)
    elif kind == K_ECHO:
        rv.vrp_on_echo(rp, a, b != 0, now, seed, rpp)
    schedule_aux(H, EP, EFREE, BK, S, rp, a)


@njit(cache=True, inline="always")
def on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    for f in range(n_flows):
        r.rp_on_drift(rp, f, rpp)
        schedule_aux(H, EP, EFREE, BK, S, rp, f)


# ------------------------------------------------------------------ probes
@njit(cache=True)
def path_walk(PI, NI, HI, FI, route, WI, off, f, target):
    """Walk flow ``f``'s path to port ``target`` (-1: to the destination).

    Returns (latency, n): the latency from the source to ``target``'s switch (propagation
    and switch latencies of the hops before it; to the destination: the whole path) or -1
    if ``target`` is not on the path, and the number ``n`` of CP ports crossed, stored in
    ``WI[off:off + n]`` in path order (the target included).
    """
    p = HI[H_PORT, FI[F_SRC, f]]
    d = np.int64(0)
    n = 0
    for _ in range(PI.shape[1] + 1):
        node = PI[P_DST, p]
        d += PI[P_PROP, p] + NI[N_LAT, node]
        if NI[N_HOST, node] >= 0:
            return (d if target < 0 else np.int64(-1)), n
        p = next_port(NI, FI, route, node, f)
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
    d, _ = path_walk(PI, NI, HI, FI, route, WI, np.int64(0), f, -1 if to_dst else target)
    if d >= 0:
        heap_push_call(H, EP, EFREE, BK, S, now + d, K_PROBE, f, target, 1 if ping else 0)


@njit(cache=True)
def on_probe(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, f, target,
             ping, now):  # fmt: skip
    """A probe or ping of RL ``f`` reaches its target: the answering CP replies."""
    cplat = C[C_CPLAT]
    if ping != 0:
        nc = rv.vcp_on_ping(cp, target, float(PI[P_Q, target]), now, cpp)
        d, _ = path_walk(PI, NI, HI, FI, route, WI, np.int64(0), f, target)
        heap_push_call(H, EP, EFREE, BK, S, now + cplat + d, K_ECHO, f, 1 if nc else 0, target)
        return
    mode = C[C_PROBE]
    if mode == PROBE_CP:
        dt, _ = path_walk(PI, NI, HI, FI, route, WI, np.int64(0), f, target)
        WI[0] = target
        n = 1
    else:
        to = -1 if mode == PROBE_PATH else target
        dt, n = path_walk(PI, NI, HI, FI, route, WI, np.int64(0), f, to)
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
    heap_push_x(H, EP, EFREE, BK, S, EPF, now + back, K_REPLY, f, 0, j, code,
                q - cpp[r.CPP_QEQ], q - cp[r.CP_QOLD, j])  # fmt: skip
