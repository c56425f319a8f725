"""QCN variants (QCN-H, QCN-P/HP/SP/PP, QCN-SONAR, QCN+, EFR, TO_THRESH), numba-compiled.

Sources: IBM Zurich, "Toward a Scalable and Robust QCN" (seed 000: QCN-SONAR, QCN+ r1.01,
TO_THRESH, the drift); Teak Technologies' ECM/QCN/QCN-H/QCN-P/QCN-HP/QCN-SP/QCN-PP deck
(seed 003) and "Congestion Management Protocols: More QCN Simulation Results" (seed 004:
extra fast recovery, probes). The plain-Python twin is :mod:`.qcn_variants_ref`
(bit-identical).

The options that change a rule of QCN itself (Fb-hat, extra fast recovery, TO_THRESH, QCN+,
arming the auxiliary timer after a negative feedback) are parameters of the rules of
:mod:`.qcn`, one body each, in the one layout of :mod:`.qcn_layout`; with every option off
they are plain QCN. This module holds the variants' own events: the auxiliary (probe or
SONAR) timer, probe replies, SONAR echoes, and the CP's answers to probes and pings.

Assumptions (the decks leave these unspecified; each is a switch in
:mod:`qcnmodel.sim.protocol_params`):

1. **Fb-hat (QCN-H)** -- ``FbHatParams.mode``: ``normalised`` (default) rescales Qdelta to a
   reference interval, Qdelta_hat = Qdelta ref / (bytes since the last sample), so variable
   sampling does not weaken the derivative term; ``ewma`` averages Fb over samples. The CNM's
   Qdelta field carries Qdelta_hat. Seed 003's A = 24 Mb/s for QCN-H is a QCNParams r_ai.
2. **Extra fast recovery** -- in fast recovery (no counter past FR_TH) CR moves
   ``efr_fraction`` (0.75) of the way to TR instead of 1/2; **EFR MAX**: the first expiry
   after a cut sets CR = TR. Both off in plain QCN; the decks run EFR on, EFR MAX off.
3. **TO_THRESH** -- byte-counter cycle BC_LIMIT, or frame_size / P_sample (seed 000) at the
   base rate (``psample``) or at the rate implied by the last CNM's qFb (``cnm``).
4. **Probes** (QCN-P/HP: CP-directed; QCN-SP: sub-path RP -> CP; QCN-PP: full path): an
   active RL sends a probe every ``interval`` x U() to its CPID. A CP answers with its current
   Fb = -(Qoff + w (Q - Qold)) (Qold of its last sample; the probe does not change CP state),
   as a signed code on the fb_bits scale (the quantiser applied to |Fb|). Negative reply =
   a CNM; positive reply from the RL's own CPID: TR += pos_gain C k / full, CR = (CR+TR)/2;
   a reply from another CP with Fb >= 0 is ignored (no CPID thrashing). Path semantics for the
   kernel: ``reply=first_negative``: the first CP on the walked path with Fb < 0 answers and
   absorbs the probe, else the target answers (CP for sub-path; the destination, "last
   chance", for path probing, with the most negative Fb seen, i.e. min over the path);
   ``reply=target``: only the target answers, with that minimum.
5. **SONAR** -- after each CNM the RP waits WP (10 ms), then pings its CP every SF (0.5 ms);
   the CP echoes "not congested" iff Q < 15000 B has held for >= 10 ms; on such an echo the
   RP boosts (``boost``: HAI step k R_HAI with k consecutive echoes, default) and holds WE
   (2 ms) before pinging again. Congested echoes are ignored. The three timers are jittered
   by U() with QCNParams.jitter (probe timers: ProbeParams.jitter). "No FR1 target-rate
   adjustment" = QCNParams ``tr_div8="off"`` (the registry sets it).
6. **QCN+** (r1.01) -- RTT is a parameter. One accepted negative adjustment per RTT (later
   CNMs and negative replies within RTT are ignored). The RP recomputes Fb = -(Qoff + W
   Qdelta) with W = baseW + RTT factor / N, N = link capacity / CR (CR before the cut), and
   quantises it with Fbmax = Qeq (2 baseW + 1); Fb >= 0 ignores the CNM. Byte-counter cycle
   max(TO_THRESH, RTT 2 CR / 8) bytes. The positive loop gain 0.5**(RTT / 1 ms) scales the
   R_AI / R_HAI steps and positive-reply increases (not the averaging, not drift).

Kernel contract (besides that of :mod:`.qcn`)
---------------------------------------------
* Auxiliary timer (probe period or SONAR timers): after *every* RP call, ``vrp_take_arm(rp,
  i) -> int64`` returns a deadline to schedule an aux-timer event with generation
  ``rp[RV_AUX_GEN, i]`` (or -1). ``vrp_on_aux_timer(rp, i, gen, now_ns, seed, prm) ->
  int64`` returns the next aux deadline (same generation) or -1. After it,
  ``vrp_take_send(rp, i) -> int64`` gives the CPID to probe/ping (or -1).
* Replies: ``vrp_on_probe_reply(rp, i, code, qoff, qdelta, cpid, now_ns, seed, prm)`` (code
  < 0: like a CNM, returns its timer deadline; else -1); ``vrp_on_echo(rp, i,
  not_congested, now_ns, seed, prm)`` (-1 or a new aux deadline, also via take_arm).
* CP: ``vcp_probe_fb(cp, j, q_bytes, prm)``, ``vcp_probe_code(fb, prm)``,
  ``vcp_on_queue(cp, j, q_bytes, now_ns, prm)`` (SONAR: call on every queue change),
  ``vcp_on_ping(cp, j, q_bytes, now_ns, prm) -> bool``.
* Random draws of the aux timer: ``stream_key(STREAM_AUX, i)``, counter ``RV_AUX_RNG``.
"""

# ruff: noqa: F405 (the layout constants come from qcn_layout)
from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.protocols import qcn
from qcnmodel.sim.protocols.qcn_layout import *  # noqa: F403 (the layout is part of the API)

# Former names of the one QCN layout (the variants' rows and entries are part of it now).
V_N, CV_N, RV_NFIELDS, CV_NFIELDS = RPP_N, CPP_N, RP_NFIELDS, CP_NFIELDS
pack_variant_rp_params = pack_rp_params
pack_variant_cp_params = pack_cp_params
new_variant_rp_state = new_rp_state
new_variant_cp_state = new_cp_state
bc_base = qcn.bc_base
vrp_on_tx = qcn.rp_on_tx
vrp_on_timer = qcn.rp_on_timer
vrp_on_drift = qcn.rp_on_drift
vcp_on_arrival = qcn.cp_on_arrival


@njit(cache=True)
def vrp_on_cnm(rp, i, qfb, qoff, qdelta, cpid, now_ns, seed, prm):
    """:func:`qcn.rp_on_cnm` with the CNM fields in their former order (qfb, Qoff, Qdelta)."""
    return qcn.rp_on_cnm(rp, i, qfb, cpid, now_ns, seed, prm, qoff, qdelta)


# ============================================================================ RP events
@njit(cache=True)
def vrp_on_aux_timer(rp, i, gen, now_ns, seed, prm):
    """Probe / SONAR timer expiry: request a probe or ping (``vrp_take_send``), re-arm."""
    if rp[RP_ACTIVE, i] == 0.0 or np.int64(gen) != np.int64(rp[RV_AUX_GEN, i]):
        return np.int64(-1)
    if prm[V_PROBE] != 0.0:
        period = prm[V_PROBE_INT]
    elif prm[V_SONAR] != 0.0:
        rp[RV_PHASE, i] = PHASE_PING
        period = prm[V_SF]
    else:
        return np.int64(-1)
    rp[RV_SEND, i] = 1.0
    d = np.int64(now_ns) + qcn._ns(period * qcn._aux_draw(rp, i, seed, prm))
    rp[RV_AUX_DEADLINE, i] = d
    return d


@njit(cache=True)
def vrp_take_send(rp, i):
    """CPID to send a probe/ping to (and clear the request), or -1."""
    if rp[RV_SEND, i] == 0.0:
        return np.int64(-1)
    rp[RV_SEND, i] = 0.0
    return np.int64(rp[RP_CPID, i])


@njit(cache=True)
def vrp_take_arm(rp, i):
    """Aux-timer deadline to schedule (generation ``rp[RV_AUX_GEN, i]``) and clear, or -1."""
    d = np.int64(rp[RV_ARM, i])
    rp[RV_ARM, i] = -1.0
    return d


@njit(cache=True)
def vrp_on_probe_reply(rp, i, code, qoff, qdelta, cpid, now_ns, seed, prm):
    """Probe reply with signed code ``code`` from CP ``cpid`` (item 4). Deadline or -1.

    Positive replies are ignored without probe parameters, by an inactive RL, and from a CP
    other than the RL's CPID.
    """
    if code < 0.0:
        return qcn.rp_on_cnm(rp, i, np.int64(-code), cpid, now_ns, seed, prm, qoff, qdelta)
    if code == 0.0:
        return np.int64(-1)
    if prm[V_PROBE] == 0.0 or rp[RP_ACTIVE, i] == 0.0 or np.int64(cpid) != np.int64(rp[RP_CPID, i]):
        rp[RV_NIGNORED, i] += 1.0
        return np.int64(-1)
    c = prm[RPP_C]
    full = float((np.int64(1) << np.int64(prm[V_BITS])) - 1)
    rp[RP_TR, i] = rp[RP_TR, i] + prm[V_POS_GAIN] * prm[V_GAIN] * c * code / full
    rp[RP_CR, i] = min(c, (rp[RP_CR, i] + rp[RP_TR, i]) / 2.0)
    rp[RV_NPOS, i] += 1.0
    if rp[RP_CR, i] >= c:
        qcn.release(rp, i, prm)
    return np.int64(-1)


@njit(cache=True)
def vrp_on_echo(rp, i, not_congested, now_ns, seed, prm):
    """SONAR echo (item 5): boost on "not congested", then hold WE. Aux deadline or -1."""
    if rp[RP_ACTIVE, i] == 0.0 or prm[V_SONAR] == 0.0 or not not_congested:
        return np.int64(-1)
    c = prm[RPP_C]
    rp[RV_BOOSTS, i] += 1.0
    mode = prm[V_BOOST]
    if mode == BOOST_HAI:
        rp[RP_TR, i] = rp[RP_TR, i] + prm[RPP_R_HAI] * rp[RV_BOOSTS, i] * prm[V_GAIN]
        rp[RP_CR, i] = min(c, (rp[RP_CR, i] + rp[RP_TR, i]) / 2.0)
    elif mode == BOOST_TARGET:
        rp[RP_CR, i] = min(c, rp[RP_TR, i])
    else:
        rp[RP_CR, i] = c
    if rp[RP_CR, i] >= c:
        qcn.release(rp, i, prm)
        return np.int64(-1)
    rp[RV_PHASE, i] = PHASE_HOLD
    return qcn.arm_aux(rp, i, prm[V_WE], now_ns, seed, prm)


# ============================================================================ CP answers
@njit(cache=True)
def vcp_probe_fb(cp, j, q_bytes, prm):
    """Fb a CP reports to a probe: -(Q - Qeq + w (Q - Qold)), Qold of its last sample."""
    cp[CV_NPROBES, j] += 1.0
    return -((q_bytes - prm[CPP_QEQ]) + prm[CPP_W] * (q_bytes - cp[CP_QOLD, j]))


@njit(cache=True)
def vcp_probe_code(fb, prm):
    """Signed reply code: the CP quantiser applied to |Fb| (capped at Fbmax), with Fb's sign."""
    q = float(qcn.quantise(abs(fb), prm[CPP_QEQ], prm[CPP_W], np.int64(prm[CPP_BITS]),
                           np.int64(prm[CPP_QUANT])))  # fmt: skip
    return q if fb >= 0.0 else -q


@njit(cache=True)
def vcp_on_queue(cp, j, q_bytes, now_ns, prm):
    """SONAR CP: track since when Q < nc_threshold (-1 while at or above it)."""
    if q_bytes < prm[CV_NC_THR]:
        if cp[CV_NC_SINCE, j] < 0.0:
            cp[CV_NC_SINCE, j] = now_ns
    else:
        cp[CV_NC_SINCE, j] = -1.0


@njit(cache=True)
def vcp_on_ping(cp, j, q_bytes, now_ns, prm):
    """SONAR ping: True ("not congested") iff Q < threshold held for >= nc_interval."""
    vcp_on_queue(cp, j, q_bytes, now_ns, prm)
    since = cp[CV_NC_SINCE, j]
    return since >= 0.0 and now_ns - since >= qcn._ns(prm[CV_NC_INT])
