"""QCN congestion-point (CP) and reaction-point (RP) rules, numba-compiled: one body per rule.

Spec: IEEE 802.1Qau (the CP formula and quantiser in the wording of a switch vendor's QCN
configuration guide, the RP parameters of the IEEE8021-CN-MIB) and Stanford's "QCN:
Description and Benchmark Simulations" (seed 002) for the RP state machine. The plain-Python
twin :mod:`.qcn_ref` mirrors every rule here bit for bit and is the readable version; its
docstrings cite the sources line by line.

The options of the QCN variants that change these rules are parameters of the same bodies,
off by default (then the rules are plain QCN): Fb-hat at the CP (QCN-H), extra fast
recovery, TO_THRESH and QCN+'s RTT-based tuning at the RP, and the auxiliary timer that
probes and SONAR arm after a negative feedback. The variants' own events (probe and SONAR
timers, replies, echoes) are :mod:`.qcn_variants`; the layout and the packing of the
parameters are :mod:`.qcn_layout` (re-exported here).

State is struct-of-arrays: ``cp[CP_FIELD, j]`` and ``rp[RP_FIELD, i]`` are 2-D float64 arrays
(counters and integer-valued fields are exact up to 2**53). Randomness:
:func:`qcnmodel.sim.rng.uniform01` on the streams ``stream_key(STREAM_CP, j)`` (CP j
sampling), ``stream_key(STREAM_RP_BC, i)`` (RL i byte counter),
``stream_key(STREAM_RP_TIMER, i)`` (RL i timer) and ``stream_key(STREAM_AUX, i)`` (RL i
auxiliary timer), each with its counter in the state, incremented after every draw. A draw is
``U = 1 + J (2u - 1)`` (J = jitter half width); draws happen even when J = 0. Time is integer
ns: a deadline is ``now_ns + floor(period * U * 1e9 + 0.5)``.

Kernel contract (return codes)
------------------------------
* ``cp_on_arrival(cp, j, q_bytes, frame_bytes, seed, prm, out) -> bool``: True iff a CNM must
  be sent; ``out[OUT_QFB], out[OUT_QOFF], out[OUT_QDELTA]`` receive the CNM fields (Qdelta:
  Fb-hat's normalised Qdelta) and ``out[OUT_SAMPLED]`` is 1.0 iff this frame was sampled (all
  four are 0 otherwise). ``out`` is a float64 array of length >= ``OUT_N`` (4).
* ``rp_on_cnm(rp, i, qfb, cpid, now_ns, seed, prm, qoff=0, qdelta=0) -> int64``: the new timer
  deadline (ns); the RL's timer generation ``rp_timer_gen(rp, i)`` has been incremented: tag
  the timer event with it. -1 (nothing changed, schedule nothing) when the CNM is ignored:
  qfb == 0 under ``cnm_requires_qfb_positive``, or QCN+ discards it (the CNM's Qoff and
  Qdelta are QCN+'s inputs).
* ``rp_on_tx(...) -> int``: ``TX_NONE`` 0, ``TX_INCREASE`` 1 (a self-increase happened: CR
  changed), ``TX_RELEASED`` 2 (CR reached C: RL inactive, timer generation incremented, so
  the pending timer event is stale).
* ``rp_on_timer(rp, i, gen, now_ns, seed, prm) -> int64``: -1 if ``gen`` is stale, the RL is
  inactive, ``timer_mode == lazy``, or the expiry released the RL; else the next deadline,
  to be scheduled with the unchanged generation ``rp_timer_gen(rp, i)``.
* ``rp_on_drift(rp, i, prm) -> int``: same codes as ``rp_on_tx``.
* Auxiliary timer: after *every* RP call, :func:`qcnmodel.sim.protocols.qcn_variants.vrp_take_arm`
  gives a deadline to schedule (generation ``rp[RV_AUX_GEN, i]``) or -1.

``timer_mode == lazy`` (the ns-3-dcn reading) is handled here, not by the kernel: timer
events are ignored and ``rp_on_tx`` replays every expiry whose deadline (``RP_DEADLINE``) is
<= now_ns, each next deadline chained from the previous one, before counting the frame's
bytes.

Initial state: an RL is inactive (``RP_ACTIVE`` 0, CR = TR = the ``line_rate`` argument of
:func:`new_rp_state`; the rules never read them while inactive, and an inactive RL sends at
line rate). A CP's countdown is drawn lazily at its first arrival: ``table[0] * U()`` (or the
fixed interval times U()), with counter 0 of its stream.
"""

# ruff: noqa: F405 (the layout constants come from qcn_layout)
from __future__ import annotations

import math

import numpy as np
from numba import njit

from qcnmodel.sim.protocols.qcn_layout import *  # noqa: F403 (the layout is part of the API)
from qcnmodel.sim.rng import STREAM_CP, STREAM_RP_BC, STREAM_RP_TIMER, draw_jitter


# ======================================================================== CP
@njit(cache=True)
def quantise(neg_fb, qeq, w, bits, mode):
    """Quantise -Fb to ``bits`` bits, exact integer arithmetic (IEEE 802.1Qau quantiser).

    With Fbmax = qeq (2w + 1), full = 2**bits - 1 and x = min(-Fb, Fbmax):

    * ``floor63`` (0): ``(full * x) // Fbmax`` -- only full scale gives ``full``.
    * ``round63`` (1): round half up, ``(2 full x + Fbmax) // (2 Fbmax)``.
    * ``floor64cap`` (2): ``min(full, ((full + 1) x) // Fbmax)`` (ns-3-dcn).
    * ``msb6`` (3): the ``bits`` most significant bits of floor(|Fb|) (unclipped), or
      floor(|Fb|) itself if below 2**bits (2011 OMNeT++ model; non-uniform).
    * ``shift`` (4): ``(floor(x) >> k) & full`` with k the smallest shift such that
      ``floor(Fbmax) >> k <= full``, i.e. full * 2**k ~ Fbmax: the correct use of the Linux
      patch's rule (whose fixed k = 13 is a pitfall). Full scale maps to ``Fbmax >> k`` (63
      for Fbmax = 130000, k = 11), which can be < full.

    Integer arithmetic is used when -Fb and Fbmax are integers (bytes with integer w, the
    usual case); otherwise the same formulas are evaluated in float64 with ``floor``.
    Returns 0 if -Fb <= 0.
    """
    if not neg_fb > 0.0:
        return np.int64(0)
    full = (np.int64(1) << np.int64(bits)) - np.int64(1)
    fbmax = qeq * (2.0 * w + 1.0)
    if mode == QUANT_MSB6:
        v = np.int64(math.floor(neg_fb))
        if v <= full:
            return v
        nb = np.int64(0)
        t = v
        while t > 0:
            nb += 1
            t >>= np.int64(1)
        return v >> (nb - np.int64(bits))
    x = min(neg_fb, fbmax)
    if mode == QUANT_SHIFT:
        fm = np.int64(math.floor(fbmax))
        k = np.int64(0)
        while (fm >> k) > full:
            k += 1
        return (np.int64(math.floor(x)) >> k) & full
    if x == math.floor(x) and fbmax == math.floor(fbmax):
        xi = np.int64(x)
        fi = np.int64(fbmax)
        if mode == QUANT_ROUND63:
            return (2 * full * xi + fi) // (2 * fi)
        if mode == QUANT_FLOOR64CAP:
            return min(full, ((full + 1) * xi) // fi)
        return (full * xi) // fi
    if mode == QUANT_ROUND63:
        return np.int64(math.floor(full * x / fbmax + 0.5))
    if mode == QUANT_FLOOR64CAP:
        return min(full, np.int64(math.floor((full + 1) * x / fbmax)))
    return np.int64(math.floor(full * x / fbmax))


@njit(cache=True)
def table_index(qfb, bits):
    """Sampling-table index: the top 3 bits of qFb on the ``bits`` scale (qFb >> 3 for 6 bits)."""
    if bits >= 3:
        return np.int64(qfb) >> np.int64(bits - 3)
    return np.int64(qfb) << np.int64(3 - bits)


@njit(cache=True)
def _cp_draw(cp, j, seed, prm):
    return draw_jitter(cp, CP_RNG, j, STREAM_CP, seed, prm[CPP_JITTER])


@njit(cache=True)
def _cp_interval(qfb, prm):
    if prm[CPP_SAMPLING] == SAMPLING_FIXED:
        return prm[CPP_FIXED_INTERVAL]
    return prm[CPP_TABLE + table_index(qfb, np.int64(prm[CPP_BITS]))]


@njit(cache=True)
def cp_on_arrival(cp, j, q_bytes, frame_bytes, seed, prm, out):
    """Frame arrival at CP ``j`` (qcn_ref.CongestionPoint.on_arrival).

    ``q_bytes`` is the queue in bytes including the arriving frame. Countdown by bytes; on a
    sample: Qoff = Q - Qeq, Qdelta = Q - Qold, Fb = -(Qoff + w Qdelta) (Fb-hat: Qdelta
    normalised to the reference interval, or Fb averaged); CNM iff Fb < 0 (and qFb > 0 under
    ``cnm_requires_qfb_positive``); Qold = Q; reload the countdown with
    ``table[qFb >> (bits - 3)] * U()`` (index 0 when Fb >= 0) or the fixed interval * U(),
    dropping the overshoot (the countdown is replaced, not added to).

    Returns
    -------
    bool
        True iff a CNM must be sent; see ``out`` in the module docstring.
    """
    out[OUT_QFB] = 0.0
    out[OUT_QOFF] = 0.0
    out[OUT_QDELTA] = 0.0
    out[OUT_SAMPLED] = 0.0
    if cp[CP_INIT, j] == 0.0:
        cp[CP_INIT, j] = 1.0
        cp[CP_TO_SAMPLE, j] = _cp_interval(np.int64(0), prm) * _cp_draw(cp, j, seed, prm)
    cp[CV_BYTES, j] += frame_bytes
    cp[CP_TO_SAMPLE, j] -= frame_bytes
    if cp[CP_TO_SAMPLE, j] > 0.0:
        return False
    qoff = q_bytes - prm[CPP_QEQ]
    qdelta = q_bytes - cp[CP_QOLD, j]
    mode = prm[CV_FBHAT]
    if mode == FBHAT_NORMALISED:
        qdelta = qdelta * (prm[CV_REF] / cp[CV_BYTES, j])
        fb = -(qoff + prm[CPP_W] * qdelta)
    elif mode == FBHAT_EWMA:
        g = prm[CV_EWMA]
        cp[CV_FBHAT_STATE, j] = (1.0 - g) * cp[CV_FBHAT_STATE, j] + g * (
            -(qoff + prm[CPP_W] * qdelta)
        )
        fb = cp[CV_FBHAT_STATE, j]
    else:
        fb = -(qoff + prm[CPP_W] * qdelta)
    cp[CV_BYTES, j] = 0.0
    qfb = np.int64(0)
    if fb < 0.0:
        bits = np.int64(prm[CPP_BITS])
        qfb = quantise(-fb, prm[CPP_QEQ], prm[CPP_W], bits, np.int64(prm[CPP_QUANT]))
    cnm = fb < 0.0 and (prm[CPP_QFB_POS] == 0.0 or qfb > 0)
    cp[CP_QOLD, j] = q_bytes
    cp[CP_TO_SAMPLE, j] = _cp_interval(qfb, prm) * _cp_draw(cp, j, seed, prm)
    cp[CP_NSAMPLES, j] += 1.0
    cp[CP_LAST_QFB, j] = qfb
    if cnm:
        cp[CP_NCNM, j] += 1.0
    out[OUT_QFB] = qfb
    out[OUT_QOFF] = qoff
    out[OUT_QDELTA] = qdelta
    out[OUT_SAMPLED] = 1.0
    return cnm


# ======================================================================== RP
@njit(cache=True)
def rp_timer_gen(rp, i):
    """Current timer generation of RL ``i`` (tag for timer events)."""
    return np.int64(rp[RP_TIMER_GEN, i])


@njit(cache=True)
def _ns(seconds):
    return np.int64(math.floor(seconds * 1e9 + 0.5))


@njit(cache=True)
def _bc_draw(rp, i, seed, prm):
    return draw_jitter(rp, RP_RNG_BC, i, STREAM_RP_BC, seed, prm[RPP_JITTER])


@njit(cache=True)
def _timer_draw(rp, i, seed, prm):
    return draw_jitter(rp, RP_RNG_TIMER, i, STREAM_RP_TIMER, seed, prm[RPP_JITTER])


@njit(cache=True)
def _aux_draw(rp, i, seed, prm):
    return draw_jitter(rp, RV_AUX_RNG, i, STREAM_AUX, seed, prm[V_PROBE_JIT])


@njit(cache=True)
def arm_aux(rp, i, period, now_ns, seed, prm):
    """(Re-)arm the auxiliary timer at now + period U(): new generation, deadline to take."""
    rp[RV_AUX_GEN, i] += 1.0
    d = np.int64(now_ns) + _ns(period * _aux_draw(rp, i, seed, prm))
    rp[RV_AUX_DEADLINE, i] = d
    rp[RV_ARM, i] = d
    return d


@njit(cache=True)
def cycle_factor(own, other, prm):
    """Reload factor of a counter whose stage is ``own`` (after the increment): 0.5 or 1.

    ``after_fr``: own >= FR_TH; ``one_late``: own > FR_TH; ``hai_only``: min(own, other) >=
    FR_TH (both counters out of FR); ``off``: never.
    """
    mode = prm[RPP_CYCLE_HALVING]
    fr_th = prm[RPP_FR_TH]
    if mode == HALVE_AFTER_FR:
        return 0.5 if own >= fr_th else 1.0
    if mode == HALVE_ONE_LATE:
        return 0.5 if own > fr_th else 1.0
    if mode == HALVE_HAI_ONLY:
        return 0.5 if min(own, other) >= fr_th else 1.0
    return 1.0


@njit(cache=True)
def release(rp, i, prm):
    """Release at CR = C: RL inactive, timers cancelled (new generations)."""
    rp[RP_ACTIVE, i] = 0.0
    rp[RP_TIMER_GEN, i] += 1.0
    rp[RP_DEADLINE, i] = -1.0
    rp[RP_NRELEASE, i] += 1.0
    if prm[V_PROBE] != 0.0 or prm[V_SONAR] != 0.0:
        rp[RV_AUX_GEN, i] += 1.0
        rp[RV_AUX_DEADLINE, i] = -1.0
        rp[RV_ARM, i] = -1.0
        rp[RV_PHASE, i] = PHASE_IDLE


@njit(cache=True)
def _increase_step(rp, i, prm):
    """TR step of an expiry: 0 in fast recovery, R_AI in active increase, the HAI step."""
    fr_th = prm[RPP_FR_TH]
    lo = min(rp[RP_BC_STAGE, i], rp[RP_T_STAGE, i])
    if lo > fr_th:
        if prm[RPP_HAI] == 0.0:
            return prm[RPP_R_AI]
        if prm[RPP_HAI_INDEX] == HAI_INDEX_EVENT_COUNT:
            rp[RP_HAI_COUNT, i] += 1.0
            return prm[RPP_R_HAI] * rp[RP_HAI_COUNT, i]
        return prm[RPP_R_HAI] * (lo - fr_th)
    if max(rp[RP_BC_STAGE, i], rp[RP_T_STAGE, i]) > fr_th:
        return prm[RPP_R_AI]
    return 0.0


@njit(cache=True)
def _self_increase(rp, i, own_stage, prm):
    """FR/AI/HAI increase (x QCN+ loop gain), TR/8 rule, averaging (or extra fast recovery),
    release. True iff released."""
    fr_th = prm[RPP_FR_TH]
    bc = rp[RP_BC_STAGE, i]
    ts = rp[RP_T_STAGE, i]
    inc = _increase_step(rp, i, prm) * prm[V_GAIN]
    mode = prm[RPP_TR_DIV8]
    first = False
    if mode == TRDIV8_OWN_FIRST:
        first = own_stage == 1.0
    elif mode == TRDIV8_EITHER:
        first = bc == 1.0 or ts == 1.0
    if first and rp[RP_TR, i] > 10.0 * rp[RP_CR, i]:
        rp[RP_TR, i] = rp[RP_TR, i] / 8.0
    else:
        rp[RP_TR, i] = rp[RP_TR, i] + inc
    c = prm[RPP_C]
    if prm[V_EFR] != 0.0 and max(bc, ts) <= fr_th:
        if prm[V_EFR_MAX] != 0.0 and own_stage == 1.0:
            cr = rp[RP_TR, i]
        else:
            cr = rp[RP_CR, i] + (rp[RP_TR, i] - rp[RP_CR, i]) * prm[V_EFR_FRAC]
    else:
        cr = (rp[RP_CR, i] + rp[RP_TR, i]) / 2.0
    rp[RP_CR, i] = min(c, cr)
    if rp[RP_CR, i] >= c:
        release(rp, i, prm)
        return True
    return False


@njit(cache=True)
def bc_base(rp, i, prm):
    """Byte-counter cycle before halving and jitter: BC_LIMIT, or the TO_THRESH option, then
    QCN+'s max(., RTT 2 CR / 8)."""
    mode = prm[V_TO_THRESH]
    if mode == TO_PSAMPLE:
        base = prm[V_TO_BASE]
    elif mode == TO_CNM:
        if prm[V_SAMPLING] == SAMPLING_FIXED:
            base = prm[V_FIXED_INT]
        else:
            k = table_index(np.int64(rp[RV_LAST_QFB, i]), np.int64(prm[V_BITS]))
            base = prm[V_TAB0 + k]
    else:
        base = prm[RPP_BC_LIMIT]
    if prm[V_PLUS] != 0.0 and prm[V_TO_RTT] != 0.0:
        base = max(base, prm[V_RTT] * 2.0 * rp[RP_CR, i] / 8.0)
    return base


@njit(cache=True)
def _plus_feedback(rp, i, qoff, qdelta, now_ns, prm):
    """QCN+: the RP's own quantised feedback from the CNM's Qoff and Qdelta, or -1 (ignored:
    a second negative within one RTT, or Fb >= 0)."""
    last = rp[RV_LAST_NEG_NS, i]
    if prm[V_ONE_NEG] != 0.0 and last >= 0.0 and now_ns - last < _ns(prm[V_RTT]):
        rp[RV_NIGNORED, i] += 1.0
        return np.int64(-1)
    cr0 = rp[RP_CR, i] if rp[RP_ACTIVE, i] != 0.0 else prm[RPP_C]
    w = prm[V_BASE_W] + prm[V_RTT] * prm[V_W_FACTOR] / (prm[V_LINK_C] / cr0)
    fb = -(qoff + w * qdelta)
    if not fb < 0.0:
        rp[RV_NIGNORED, i] += 1.0
        return np.int64(-1)
    return quantise(-fb, prm[V_QEQ], prm[V_BASE_W], np.int64(prm[V_BITS]),
                    np.int64(prm[V_QUANT]))  # fmt: skip


@njit(cache=True)
def rp_on_cnm(rp, i, qfb, cpid, now_ns, seed, prm, qoff=0.0, qdelta=0.0):
    """CNM (or negative probe reply) with quantised feedback ``qfb`` at RL ``i``.

    Returns
    -------
    int64
        New timer deadline (ns), or -1 if the CNM is ignored (module docstring).
    """
    if prm[V_PLUS] != 0.0:
        qfb = _plus_feedback(rp, i, qoff, qdelta, now_ns, prm)
        if qfb < 0:
            return np.int64(-1)
    if prm[RPP_QFB_POS] != 0.0 and qfb <= 0:
        return np.int64(-1)
    c = prm[RPP_C]
    if rp[RP_ACTIVE, i] == 0.0:
        rp[RP_ACTIVE, i] = 1.0
        rp[RP_CR, i] = c
        rp[RP_TR, i] = c
        rp[RP_BC_STAGE, i] = 0.0
        rp[RP_T_STAGE, i] = 0.0
    tr_reset = rp[RP_CR, i] == c or rp[RP_BC_STAGE, i] != 0.0
    if tr_reset:
        rp[RP_TR, i] = rp[RP_CR, i]
    factor = max(1.0 - prm[RPP_GD] * qfb, 1.0 - prm[RPP_MIN_DEC])
    rp[RP_CR, i] = max(prm[RPP_MIN_RATE], rp[RP_CR, i] * factor)
    rp[RP_BC_STAGE, i] = 0.0
    rp[RP_T_STAGE, i] = 0.0
    rp[RP_HAI_COUNT, i] = 0.0
    rp[RV_LAST_QFB, i] = qfb
    if prm[RPP_BC_RELOAD] == BC_RELOAD_ALWAYS or tr_reset:
        rp[RP_BC_LEFT, i] = bc_base(rp, i, prm) * _bc_draw(rp, i, seed, prm)
    rp[RP_TIMER_GEN, i] += 1.0
    deadline = np.int64(now_ns) + _ns(prm[RPP_TIMER] * _timer_draw(rp, i, seed, prm))
    rp[RP_DEADLINE, i] = deadline
    rp[RP_CPID, i] = cpid
    rp[RP_NCNM, i] += 1.0
    rp[RV_LAST_NEG_NS, i] = now_ns
    if prm[V_PROBE] != 0.0 and rp[RV_AUX_DEADLINE, i] < 0.0:
        arm_aux(rp, i, prm[V_PROBE_INT], now_ns, seed, prm)
    if prm[V_SONAR] != 0.0:
        rp[RV_PHASE, i] = PHASE_WAIT
        rp[RV_BOOSTS, i] = 0.0
        arm_aux(rp, i, prm[V_WP], now_ns, seed, prm)
    return deadline


@njit(cache=True)
def _timer_expiry(rp, i, base_ns, seed, prm):
    """One timer expiry: stage, re-arm from ``base_ns``, increase."""
    rp[RP_T_STAGE, i] += 1.0
    f = cycle_factor(rp[RP_T_STAGE, i], rp[RP_BC_STAGE, i], prm)
    deadline = np.int64(base_ns) + _ns(prm[RPP_TIMER] * f * _timer_draw(rp, i, seed, prm))
    rp[RP_DEADLINE, i] = deadline
    if _self_increase(rp, i, rp[RP_T_STAGE, i], prm):
        return np.int64(-1)
    return deadline


@njit(cache=True)
def rp_on_tx(rp, i, nbytes, now_ns, seed, prm):
    """Data frame of ``nbytes`` released by RL ``i`` (the byte counter).

    On expiry: bc_stage += 1, reload bc_base * cycle_factor * U() (overshoot dropped), then
    self-increase. Under ``timer_mode == lazy`` the missed timer expiries are replayed first.

    Returns
    -------
    int
        ``TX_NONE``, ``TX_INCREASE`` or ``TX_RELEASED``.
    """
    if rp[RP_ACTIVE, i] == 0.0:
        return TX_NONE
    status = TX_NONE
    if prm[RPP_TIMER_MODE] == TIMER_LAZY:
        while rp[RP_DEADLINE, i] >= 0.0 and rp[RP_DEADLINE, i] <= now_ns:
            if _timer_expiry(rp, i, np.int64(rp[RP_DEADLINE, i]), seed, prm) < 0:
                return TX_RELEASED
            status = TX_INCREASE
    rp[RP_BC_LEFT, i] -= nbytes
    if rp[RP_BC_LEFT, i] <= 0.0:
        rp[RP_BC_STAGE, i] += 1.0
        f = cycle_factor(rp[RP_BC_STAGE, i], rp[RP_T_STAGE, i], prm)
        rp[RP_BC_LEFT, i] = bc_base(rp, i, prm) * f * _bc_draw(rp, i, seed, prm)
        if _self_increase(rp, i, rp[RP_BC_STAGE, i], prm):
            return TX_RELEASED
        status = TX_INCREASE
    return status


@njit(cache=True)
def rp_on_timer(rp, i, gen, now_ns, seed, prm):
    """Timer event of RL ``i`` tagged with generation ``gen``.

    Returns
    -------
    int64
        Next deadline (ns), or -1 (stale, inactive, lazy mode, or released).
    """
    if (
        rp[RP_ACTIVE, i] == 0.0
        or np.int64(gen) != np.int64(rp[RP_TIMER_GEN, i])
        or prm[RPP_TIMER_MODE] == TIMER_LAZY
    ):
        return np.int64(-1)
    return _timer_expiry(rp, i, now_ns, seed, prm)


@njit(cache=True)
def rp_on_drift(rp, i, prm):
    """Drift event: CR <- min(C, (CR + drift_inc) * drift_factor) if active.

    TR is unchanged (the proposal acts on CR only), so CR may pass TR and the next
    self-increase, (CR + TR)/2, then pulls it back down. Reaching C releases the RL. Returns
    ``TX_*`` codes (``TX_NONE`` if the RL is inactive or drift is neutral).
    """
    if rp[RP_ACTIVE, i] == 0.0:
        return TX_NONE
    if prm[RPP_DRIFT_INC] == 0.0 and prm[RPP_DRIFT_FACTOR] == 1.0:
        return TX_NONE
    c = prm[RPP_C]
    rp[RP_CR, i] = min(c, (rp[RP_CR, i] + prm[RPP_DRIFT_INC]) * prm[RPP_DRIFT_FACTOR])
    if rp[RP_CR, i] >= c:
        release(rp, i, prm)
        return TX_RELEASED
    return TX_INCREASE
