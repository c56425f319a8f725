"""ECM and ECM-Q congestion-point and reaction-point rules, numba-compiled.

Sources: IBM Zurich, "Toward a Scalable and Robust QCN" (seed 000: ECM, ECM-Q, their settings);
Teak, "Congestion Management Protocols: More QCN Simulation Results" (seed 004: ECM settings,
max cut 50 %, max increase 0.1 C); "Analysis of Backward Congestion Notification (BCN) for
Ethernet in Datacenter Applications" (INFOCOM 2007). Conventions of :mod:`.qcn`: SoA
float64 state ``cp[ECP_*, j]`` / ``rp[ERP_*, i]``, parameters packed by
:func:`pack_ecm_cp_params` / :func:`pack_ecm_rp_params` from an
:class:`~qcnmodel.sim.protocol_params.ECMParams` (or ``ECMQParams``), randomness from
``uniform01`` on ``stream_key(STREAM_CP, j)`` with counter ``CP_RNG``. The plain-Python twin
is :mod:`qcnmodel.sim.protocols.ecm_ref` (bit-identical).

Rules
-----
CP (every arriving frame; fixed sampling: countdown of frame_size / psample bytes x U()):
at a sample, Qoff = Q - Qeq, Qdelta = Q - Qold, Fb = -(Qoff + w Qdelta), Qold = Q.

* ECM(0,0) on and Q >= Qsc: a (0,0) message (``MSG_00``).
* else ECM_MAX on and Q >= Qmax: Fb := -Fbmax (maximal negative feedback).
* Fb < 0: negative message (``MSG_NEG``) to the sampled frame's source.
* Fb > 0: positive message (``MSG_POS``) per ``pos_fb``: ``tagged`` -- only if the frame
  carries this CP's CPID (its source's RL was created by this CP; BCN's rule, which
  "suppresses spurious RL creation", seed 000); ``all``; ``tagged_below_qeq`` -- tagged and
  Q < Qeq.
* Encoding: ``fb_bits == 0``: Fb in bytes clipped to +-Fbmax (seed 004 gains act on raw Fb);
  ``fb_bits = k``: sign x floor((2**k - 1) min(|Fb|, Fbmax) / Fbmax) (seed 000, 8-bit).
  ECM-Q: Qoff and Qdelta are sent as separate signed codes (see ECMQParams), Fb is not sent.

RP (one rate r per RL; ``ERP_CR``):

* negative Fb: an inactive RL is created at r = C; r = max(Rmin, r (1 - Gd |Fb|)); the RL is
  tagged with the sender's CPID (``cpid_replace="never"``: only on creation).
* positive Fb: ignored by an inactive RL, and, under ``pos_fb`` tagged policies, if the
  sender is not the RL's CPID ("false positives discarded in RP", seed 003); else
  r = min(C, r + Gi Fb Ru); r = C releases the RL.
* (0,0): r = Rmin (creates the RL if needed).
* drift (seed 000's proposal, 4 Mb/s per 20 ms): r = min(C, (r + inc) factor) while active.
* ECM-Q: Fb = -(code_off step_off + w_rp code_delta step_delta), clipped to +-Fbmax, then
  scaled to the gain scale (x full / Fbmax when fb_bits > 0), not re-quantised.

Assumptions (unspecified by the decks; each a field of ECMParams / ECMQParams)
-----------------------------------------------------------------------------
1. Positive Fb only to CPID-tagged frames (``pos_fb``), foreign positives discarded at the RP.
2. CPID replacement by any negative Fb (``cpid_replace``).
3. ECM_MAX = maximal negative Fb at a sample with Q >= Qmax (``ecm_max``, ``q_max``).
4. ECM(0,0) = a message that sets r = Rmin, sent at a sample with Q >= Qsc (``ecm00``,
   ``q_sc``); BCN's "stop for a random time" is not modelled.
5. Sampling is a byte countdown with jitter (as QCN), not per-frame Bernoulli (``jitter``).
6. Seed 004's Fb is not quantised (``fb_bits=0``); seed 000's is 8-bit, floor rounding.
7. ECM-Q: signed 8-bit codes (sign and magnitude, truncation), ranges Fbmax/(1+w), RP's own
   weight ``w_rp``, no re-quantisation at the RP.
8. Drift acts on r while the RL is active (``drift_*``), as QCN's drift proposal.

Kernel contract
---------------
* ``ecm_cp_on_arrival(cp, j, q_bytes, frame_bytes, tagged, seed, prm, out) -> int64``:
  ``MSG_NONE`` / ``MSG_NEG`` / ``MSG_POS`` / ``MSG_00``; ``out[OUT_FB]`` signed feedback on
  the gain scale (ECM), ``out[OUT_QOFF]``, ``out[OUT_QDELTA]`` raw bytes (ECM) or the codes
  (ECM-Q), ``out[OUT_SAMPLED]``. ``tagged`` = 1 iff the frame carries this CP's CPID (the
  kernel compares ``ecm_rp_tag`` of the frame's RL with the CP's id).
* ``ecm_rp_on_fb(rp, i, fb, cpid, prm)``, ``ecmq_rp_on_fb(rp, i, code_off, code_delta,
  cpid, prm)``, ``ecm_rp_on_00(rp, i, cpid, prm)``, ``ecm_rp_on_drift(rp, i, prm)`` ->
  ``R_NONE`` (ignored), ``R_DEC``, ``R_INC``, ``R_RELEASED``. No timers: ECM needs only the
  message path and, with drift on, a periodic drift event per active RL.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from qcnmodel.sim.protocols.qcn import (
    CP_INIT,
    CP_LAST_QFB,
    CP_NCNM,
    CP_NSAMPLES,
    CP_QOLD,
    CP_RNG,
    CP_TO_SAMPLE,
    OUT_N,
    OUT_QDELTA,
    OUT_QOFF,
    OUT_SAMPLED,
    QUANT_FLOOR63,
    quantise,
)
from qcnmodel.sim.rng import STREAM_CP, draw_jitter

__all__ = ["OUT_N"]

OUT_FB = 0  #: signed feedback on the gain scale (same slot as the QCN layout's OUT_QFB)
MSG_NONE, MSG_NEG, MSG_POS, MSG_00 = 0, 1, 2, 3
R_NONE, R_DEC, R_INC, R_RELEASED = 0, 1, 2, 3
POS_TAGGED, POS_ALL, POS_TAGGED_BELOW = 0, 1, 2
CODES = {
    "pos_fb": {"tagged": 0, "all": 1, "tagged_below_qeq": 2},
    "cpid_replace": {"negative": 0, "never": 1},
}

# CP parameters
ECP_QEQ, ECP_W, ECP_BITS, ECP_INTERVAL, ECP_JITTER = 0, 1, 2, 3, 4
ECP_ECM_MAX, ECP_QMAX, ECP_ECM00, ECP_QSC, ECP_POS = 5, 6, 7, 8, 9
ECP_QSEP, ECP_QOFF_BITS, ECP_QDELTA_BITS, ECP_QOFF_RANGE, ECP_QDELTA_RANGE = 10, 11, 12, 13, 14
ECP_N = 15
# CP state: the rules.CP_* rows 0..6, then
ECP_NPOS = 7  #: positive messages sent
ECP_N00 = 8  #: (0,0) messages sent
ECP_NFIELDS = 9

# RP parameters
ERP_C, ERP_GD, ERP_GI, ERP_RU, ERP_RMIN, ERP_POS, ERP_CPID_REPLACE = 0, 1, 2, 3, 4, 5, 6
ERP_QSEP, ERP_W_RP, ERP_FBMAX, ERP_FULL, ERP_QOFF_STEP, ERP_QDELTA_STEP = 7, 8, 9, 10, 11, 12
ERP_DRIFT_INC, ERP_DRIFT_FACTOR, ERP_DRIFT_PERIOD = 13, 14, 15
ERP_N = 16
# RP state (ACTIVE and CR share rows 0 and 1 with rules.RP_*)
ERP_ACTIVE, ERP_CR, ERP_CPID, ERP_NNEG, ERP_NPOS, ERP_NIGNORED = 0, 1, 2, 3, 4, 5
ERP_NRELEASE, ERP_N00, ERP_LAST_FB = 6, 7, 8
ERP_NFIELDS = 9


def _half_full(bits: int) -> int:
    return 2 ** (int(bits) - 1) - 1


def pack_ecm_cp_params(p) -> np.ndarray:
    """CP vector (``ECP_*``) of an ECMParams / ECMQParams."""
    a = np.zeros(ECP_N)
    a[ECP_QEQ] = p.qeq
    a[ECP_W] = p.w
    a[ECP_BITS] = p.fb_bits
    a[ECP_INTERVAL] = p.sample_interval
    a[ECP_JITTER] = p.jitter
    a[ECP_ECM_MAX] = float(p.ecm_max)
    a[ECP_QMAX] = p.q_max
    a[ECP_ECM00] = float(p.ecm00)
    a[ECP_QSC] = p.q_sc_eff
    a[ECP_POS] = CODES["pos_fb"][p.pos_fb]
    if hasattr(p, "qoff_bits"):
        a[ECP_QSEP] = 1.0
        a[ECP_QOFF_BITS] = p.qoff_bits
        a[ECP_QDELTA_BITS] = p.qdelta_bits
        a[ECP_QOFF_RANGE] = p.qoff_range_eff
        a[ECP_QDELTA_RANGE] = p.qdelta_range_eff
    return a


def pack_ecm_rp_params(p) -> np.ndarray:
    """RP vector (``ERP_*``) of an ECMParams / ECMQParams."""
    a = np.zeros(ERP_N)
    a[ERP_C] = p.line_rate
    a[ERP_GD] = p.gd_eff
    a[ERP_GI] = p.gi_eff
    a[ERP_RU] = p.r_unit
    a[ERP_RMIN] = p.r_min
    a[ERP_POS] = CODES["pos_fb"][p.pos_fb]
    a[ERP_CPID_REPLACE] = CODES["cpid_replace"][p.cpid_replace]
    a[ERP_FBMAX] = p.fb_max
    a[ERP_FULL] = p.fb_full
    a[ERP_DRIFT_INC] = p.drift_inc
    a[ERP_DRIFT_FACTOR] = p.drift_factor
    a[ERP_DRIFT_PERIOD] = p.drift_period
    if hasattr(p, "qoff_bits"):
        a[ERP_QSEP] = 1.0
        a[ERP_W_RP] = p.w_rp_eff
        a[ERP_QOFF_STEP] = p.qoff_range_eff / _half_full(p.qoff_bits)
        a[ERP_QDELTA_STEP] = p.qdelta_range_eff / _half_full(p.qdelta_bits)
    return a


def new_ecm_cp_state(n: int) -> np.ndarray:
    """``n`` ECM CPs, shape (ECP_NFIELDS, n), zero (countdown drawn at the first arrival)."""
    return np.zeros((ECP_NFIELDS, n))


def new_ecm_rp_state(n: int, line_rate: float = 0.0) -> np.ndarray:
    """``n`` inactive ECM RLs, shape (ERP_NFIELDS, n); r = ``line_rate``, CPID -1."""
    s = np.zeros((ERP_NFIELDS, n))
    s[ERP_CR] = line_rate
    s[ERP_CPID] = -1.0
    return s


# ============================================================================ CP
@njit(cache=True)
def signed_code(x, bits, rng):
    """ECM-Q code of ``x``: sign x min(floor(|x| full / rng), full), full = 2**(bits-1) - 1."""
    full = float((np.int64(1) << np.int64(bits - 1)) - 1)
    c = math.floor(abs(x) * full / rng)
    if c > full:
        c = full
    return c if x >= 0.0 else -c


def pack_config(cfg) -> dict:
    """Packed ``cp`` and ``rp`` vectors of an ECM / ECM-Q ProtocolConfig."""
    p = cfg.params[cfg.protocol.params[0].__name__]
    return {"cp": pack_ecm_cp_params(p), "rp": pack_ecm_rp_params(p)}


def new_config_state(cfg, n_cp: int, n_rp: int) -> dict:
    """Initial ``cp`` and ``rp`` tables of an ECM / ECM-Q ProtocolConfig."""
    c = cfg.params[cfg.protocol.params[0].__name__].line_rate
    return {"cp": new_ecm_cp_state(n_cp), "rp": new_ecm_rp_state(n_rp, c)}


@njit(cache=True)
def ecm_encode(fb, prm):
    """Signed Fb on the gain scale: bytes clipped to +-Fbmax, or quantised to fb_bits."""
    fbmax = prm[ECP_QEQ] * (2.0 * prm[ECP_W] + 1.0)
    bits = np.int64(prm[ECP_BITS])
    if bits == 0:
        return max(-fbmax, min(fbmax, fb))
    q = float(quantise(abs(fb), prm[ECP_QEQ], prm[ECP_W], bits, np.int64(QUANT_FLOOR63)))
    return q if fb >= 0.0 else -q


@njit(cache=True)
def ecm_cp_on_arrival(cp, j, q_bytes, frame_bytes, tagged, seed, prm, out):
    """Frame arrival at ECM/ECM-Q CP ``j`` (module docstring). Returns ``MSG_*``."""
    out[OUT_FB] = 0.0
    out[OUT_QOFF] = 0.0
    out[OUT_QDELTA] = 0.0
    out[OUT_SAMPLED] = 0.0
    if cp[CP_INIT, j] == 0.0:
        cp[CP_INIT, j] = 1.0
        cp[CP_TO_SAMPLE, j] = prm[ECP_INTERVAL] * _draw(cp, j, seed, prm)
    cp[CP_TO_SAMPLE, j] -= frame_bytes
    if cp[CP_TO_SAMPLE, j] > 0.0:
        return np.int64(MSG_NONE)
    qoff = q_bytes - prm[ECP_QEQ]
    qdelta = q_bytes - cp[CP_QOLD, j]
    fb = -(qoff + prm[ECP_W] * qdelta)
    cp[CP_QOLD, j] = q_bytes
    cp[CP_TO_SAMPLE, j] = prm[ECP_INTERVAL] * _draw(cp, j, seed, prm)
    cp[CP_NSAMPLES, j] += 1.0
    out[OUT_SAMPLED] = 1.0
    if prm[ECP_ECM00] != 0.0 and q_bytes >= prm[ECP_QSC]:
        cp[ECP_N00, j] += 1.0
        cp[CP_LAST_QFB, j] = 0.0
        return np.int64(MSG_00)
    fbmax = prm[ECP_QEQ] * (2.0 * prm[ECP_W] + 1.0)
    saturated = prm[ECP_ECM_MAX] != 0.0 and q_bytes >= prm[ECP_QMAX]
    if saturated:
        fb = -fbmax
    kind = MSG_NONE
    if fb < 0.0:
        kind = MSG_NEG
    elif fb > 0.0:
        pol = prm[ECP_POS]
        if pol == POS_ALL or (tagged != 0 and (pol == POS_TAGGED or q_bytes < prm[ECP_QEQ])):
            kind = MSG_POS
    if kind == MSG_NONE:
        cp[CP_LAST_QFB, j] = 0.0
        return np.int64(MSG_NONE)
    if prm[ECP_QSEP] != 0.0:
        if saturated:
            qoff = prm[ECP_QOFF_RANGE]
            qdelta = prm[ECP_QDELTA_RANGE]
        out[OUT_QOFF] = signed_code(qoff, np.int64(prm[ECP_QOFF_BITS]), prm[ECP_QOFF_RANGE])
        out[OUT_QDELTA] = signed_code(qdelta, np.int64(prm[ECP_QDELTA_BITS]), prm[ECP_QDELTA_RANGE])
        cp[CP_LAST_QFB, j] = fb
    else:
        out[OUT_FB] = ecm_encode(fb, prm)
        out[OUT_QOFF] = qoff
        out[OUT_QDELTA] = qdelta
        cp[CP_LAST_QFB, j] = out[OUT_FB]
    if kind == MSG_NEG:
        cp[CP_NCNM, j] += 1.0
    else:
        cp[ECP_NPOS, j] += 1.0
    return np.int64(kind)


@njit(cache=True)
def _draw(cp, j, seed, prm):
    return draw_jitter(cp, CP_RNG, j, STREAM_CP, seed, prm[ECP_JITTER])


# ============================================================================ RP
@njit(cache=True)
def ecm_rp_tag(rp, i):
    """CPID the frames of RL ``i`` carry (-1 if the RL is inactive: untagged)."""
    if rp[ERP_ACTIVE, i] == 0.0:
        return np.int64(-1)
    return np.int64(rp[ERP_CPID, i])


@njit(cache=True)
def _release(rp, i):
    rp[ERP_ACTIVE, i] = 0.0
    rp[ERP_NRELEASE, i] += 1.0


@njit(cache=True)
def ecm_rp_on_fb(rp, i, fb, cpid, prm):
    """Feedback ``fb`` (signed, gain scale) from CP ``cpid`` at RL ``i`` (ECM). ``R_*``."""
    c = prm[ERP_C]
    rp[ERP_LAST_FB, i] = fb
    if fb < 0.0:
        if rp[ERP_ACTIVE, i] == 0.0:
            rp[ERP_ACTIVE, i] = 1.0
            rp[ERP_CR, i] = c
            rp[ERP_CPID, i] = cpid
        elif prm[ERP_CPID_REPLACE] == 0.0:
            rp[ERP_CPID, i] = cpid
        rp[ERP_CR, i] = max(prm[ERP_RMIN], rp[ERP_CR, i] * (1.0 - prm[ERP_GD] * (-fb)))
        rp[ERP_NNEG, i] += 1.0
        return np.int64(R_DEC)
    if fb > 0.0:
        foreign = prm[ERP_POS] != POS_ALL and np.int64(cpid) != np.int64(rp[ERP_CPID, i])
        if rp[ERP_ACTIVE, i] == 0.0 or foreign:
            rp[ERP_NIGNORED, i] += 1.0
            return np.int64(R_NONE)
        rp[ERP_CR, i] = min(c, rp[ERP_CR, i] + prm[ERP_GI] * fb * prm[ERP_RU])
        rp[ERP_NPOS, i] += 1.0
        if rp[ERP_CR, i] >= c:
            _release(rp, i)
            return np.int64(R_RELEASED)
        return np.int64(R_INC)
    return np.int64(R_NONE)


@njit(cache=True)
def ecmq_fb(code_off, code_delta, prm):
    """ECM-Q recombination at the RP: Fb on the gain scale from the two codes."""
    fbmax = prm[ERP_FBMAX]
    fb = -(code_off * prm[ERP_QOFF_STEP] + prm[ERP_W_RP] * (code_delta * prm[ERP_QDELTA_STEP]))
    fb = max(-fbmax, min(fbmax, fb))
    if prm[ERP_FULL] != fbmax:
        fb = fb * prm[ERP_FULL] / fbmax
    return fb


@njit(cache=True)
def ecmq_rp_on_fb(rp, i, code_off, code_delta, cpid, prm):
    """ECM-Q message (two codes) at RL ``i``: recombine, then :func:`ecm_rp_on_fb`."""
    return ecm_rp_on_fb(rp, i, ecmq_fb(code_off, code_delta, prm), cpid, prm)


@njit(cache=True)
def ecm_rp_on_00(rp, i, cpid, prm):
    """ECM(0,0) message: r = Rmin, RL created/tagged as for negative Fb. Returns ``R_DEC``."""
    if rp[ERP_ACTIVE, i] == 0.0:
        rp[ERP_ACTIVE, i] = 1.0
        rp[ERP_CPID, i] = cpid
    elif prm[ERP_CPID_REPLACE] == 0.0:
        rp[ERP_CPID, i] = cpid
    rp[ERP_CR, i] = prm[ERP_RMIN]
    rp[ERP_N00, i] += 1.0
    return np.int64(R_DEC)


@njit(cache=True)
def ecm_rp_on_drift(rp, i, prm):
    """Drift event: r = min(C, (r + inc) factor) while active; release at C."""
    if rp[ERP_ACTIVE, i] == 0.0:
        return np.int64(R_NONE)
    if prm[ERP_DRIFT_INC] == 0.0 and prm[ERP_DRIFT_FACTOR] == 1.0:
        return np.int64(R_NONE)
    c = prm[ERP_C]
    rp[ERP_CR, i] = min(c, (rp[ERP_CR, i] + prm[ERP_DRIFT_INC]) * prm[ERP_DRIFT_FACTOR])
    if rp[ERP_CR, i] >= c:
        _release(rp, i)
        return np.int64(R_RELEASED)
    return np.int64(R_INC)
