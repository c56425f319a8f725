"""QCN congestion-point (CP) and reaction-point (RP) rules, numba-compiled.

Spec: ``qcn-algorithm.md`` §1 (CP), §2 (RP), §4.5 (drift), §6 (pitfalls), §7 (facts). The
plain-Python twin :mod:`qcnmodel.sim.rules_ref` mirrors every function here bit for bit and is
the readable version; the docstrings there cite the seeds line by line.

State is struct-of-arrays: ``cp[CP_FIELD, j]`` and ``rp[RP_FIELD, i]`` are 2-D float64 arrays
(counters and integer-valued fields are exact up to 2**53). Parameters are packed into
float64 vectors by :func:`pack_cp_params` / :func:`pack_rp_params`; string variants become the
small integer codes below. Randomness: :func:`qcnmodel.sim.rng.uniform01` on the streams
``stream_key(STREAM_CP, j)`` (CP j sampling), ``stream_key(STREAM_RP_BC, i)`` (RL i byte
counter) and ``stream_key(STREAM_RP_TIMER, i)`` (RL i timer), each with its counter in the
state (``CP_RNG``, ``RP_RNG_BC``, ``RP_RNG_TIMER``), incremented after every draw. A draw is
``U = 1 + J (2u - 1)`` (J = jitter half width); draws happen even when J = 0.

Time is integer ns: a deadline is ``now_ns + floor(period * U * 1e9 + 0.5)`` (period = T or
T/2).

Kernel contract (return codes)
------------------------------
* ``cp_on_arrival(cp, j, q_bytes, frame_bytes, seed, prm, out) -> bool``: True iff a CNM must
  be sent; ``out[OUT_QFB], out[OUT_QOFF], out[OUT_QDELTA]`` receive the CNM fields and
  ``out[OUT_SAMPLED]`` is 1.0 iff this frame was sampled (all four are 0 otherwise). ``out``
  is a float64 array of length >= ``OUT_N`` (4).
* ``rp_on_cnm(...) -> int64``: the new timer deadline (ns). The RL's timer generation
  ``rp[RP_TIMER_GEN, i]`` (``rp_timer_gen(rp, i)``) has been incremented; tag the timer event
  with it. Returns -1 (nothing changed, schedule nothing) only when the CNM is ignored:
  qfb == 0 under ``cnm_requires_qfb_positive`` (the CP never sends such a CNM then).
* ``rp_on_tx(...) -> int``: ``TX_NONE`` 0, ``TX_INCREASE`` 1 (a self-increase happened: CR
  changed), ``TX_RELEASED`` 2 (CR reached C: RL inactive, timer generation incremented, so
  the pending timer event is stale).
* ``rp_on_timer(rp, i, gen, now_ns, seed, prm) -> int64``: -1 if ``gen`` is stale, the RL is
  inactive, ``timer_mode == lazy``, or the expiry released the RL; else the next deadline,
  to be scheduled with the unchanged generation ``rp_timer_gen(rp, i)``.
* ``rp_on_drift(rp, i, prm) -> int`` (addition, §4.5 proposal): same codes as ``rp_on_tx``.

``timer_mode == lazy`` (ns-3-dcn, pitfall §6.4) is handled here, not by the kernel: timer
events are ignored and ``rp_on_tx`` replays every expiry whose deadline (``RP_DEADLINE``) is
<= now_ns, each next deadline chained from the previous one, before counting the frame's
bytes. The kernel may keep scheduling timer events as usual.

Initial state: an RL is inactive (``RP_ACTIVE`` 0, CR = TR = the ``line_rate`` argument of
:func:`new_rp_state`, default 0; the rules never read them while inactive, and an inactive RL
sends at line rate). A CP's
countdown is drawn lazily at its first arrival: ``to_sample = table[0] * U()`` (or the fixed
interval times U()), using counter 0 of its stream (§1.4: initial countdown is N/S).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from qcnmodel.sim.rng import STREAM_CP, STREAM_RP_BC, STREAM_RP_TIMER, stream_key, uniform01

# ------------------------------------------------------------------------ variant codes
QUANT_FLOOR63, QUANT_ROUND63, QUANT_FLOOR64CAP, QUANT_MSB6, QUANT_SHIFT = 0, 1, 2, 3, 4
SAMPLING_TABLE, SAMPLING_FIXED = 0, 1
HALVE_AFTER_FR, HALVE_ONE_LATE, HALVE_HAI_ONLY, HALVE_OFF = 0, 1, 2, 3
TRDIV8_OWN_FIRST, TRDIV8_EITHER, TRDIV8_OFF = 0, 1, 2
HAI_INDEX_MIN_STAGE, HAI_INDEX_EVENT_COUNT = 0, 1
TIMER_EVENT, TIMER_LAZY = 0, 1
BC_RELOAD_ALWAYS, BC_RELOAD_TR_RESET_ONLY = 0, 1

#: Variant name -> code, per QCNParams field.
CODES = {
    "quantiser": {"floor63": 0, "round63": 1, "floor64cap": 2, "msb6": 3, "shift": 4},
    "sampling": {"table": 0, "fixed": 1},
    "cycle_halving": {"after_fr": 0, "one_late": 1, "hai_only": 2, "off": 3},
    "tr_div8": {"own_first": 0, "either": 1, "off": 2},
    "hai_index": {"min_stage": 0, "event_count": 1},
    "timer_mode": {"event": 0, "lazy": 1},
    "bc_reload_on_cnm": {"always": 0, "tr_reset_only": 1},
}

# ------------------------------------------------------------------------ CP parameters
CPP_QEQ = 0  #: Qeq (bytes)
CPP_W = 1  #: feedback weight w
CPP_BITS = 2  #: fb_bits
CPP_QUANT = 3  #: QUANT_* code
CPP_SAMPLING = 4  #: SAMPLING_* code
CPP_FIXED_INTERVAL = 5  #: frame_size / ps_fixed (bytes)
CPP_JITTER = 6  #: J
CPP_QFB_POS = 7  #: cnm_requires_qfb_positive (0/1)
CPP_TABLE = 8  #: 8 table entries (bytes) at CPP_TABLE .. CPP_TABLE + 7
CPP_N = 16

# ------------------------------------------------------------------------ RP parameters
RPP_C = 0  #: line rate C (bit/s)
RPP_GD = 1
RPP_MIN_DEC = 2
RPP_MIN_RATE = 3
RPP_BC_LIMIT = 4  #: bytes
RPP_TIMER = 5  #: T (s)
RPP_FR_TH = 6
RPP_R_AI = 7
RPP_R_HAI = 8
RPP_HAI = 9  #: 0/1
RPP_JITTER = 10
RPP_CYCLE_HALVING = 11  #: HALVE_* code
RPP_TR_DIV8 = 12  #: TRDIV8_* code
RPP_HAI_INDEX = 13  #: HAI_INDEX_* code
RPP_TIMER_MODE = 14  #: TIMER_* code
RPP_BC_RELOAD = 15  #: BC_RELOAD_* code
RPP_QFB_POS = 16  #: cnm_requires_qfb_positive (0/1)
RPP_DRIFT_INC = 17  #: bit/s per drift event
RPP_DRIFT_FACTOR = 18
RPP_DRIFT_PERIOD = 19  #: s (0 = off; the kernel schedules drift events)
RPP_N = 20

# ------------------------------------------------------------------------ CP state fields
CP_QOLD = 0  #: Qold (bytes), 0 initially
CP_TO_SAMPLE = 1  #: byte countdown to the next sample
CP_RNG = 2  #: draw counter of stream (STREAM_CP, j)
CP_INIT = 3  #: 1 once the initial countdown has been drawn
CP_NSAMPLES = 4  #: number of samples taken
CP_NCNM = 5  #: number of CNMs generated
CP_LAST_QFB = 6  #: qFb of the last sample
CP_NFIELDS = 7

# ------------------------------------------------------------------------ RP state fields
RP_ACTIVE = 0  #: 1 while the RL exists (created by a CNM, released at C)
RP_CR = 1  #: current rate (bit/s)
RP_TR = 2  #: target rate (bit/s)
RP_BC_STAGE = 3  #: byte-counter stage (expiries since the last CNM)
RP_T_STAGE = 4  #: timer stage
RP_BC_LEFT = 5  #: bytes left in the current byte-counter cycle
RP_TIMER_GEN = 6  #: timer generation; a timer event tagged with another value is stale
RP_RNG_BC = 7  #: draw counter of stream (STREAM_RP_BC, i)
RP_RNG_TIMER = 8  #: draw counter of stream (STREAM_RP_TIMER, i)
RP_HAI_COUNT = 9  #: HAI events since the last CNM (hai_index=event_count)
RP_CPID = 10  #: CPID of the last CNM
RP_DEADLINE = 11  #: pending timer deadline (ns), -1 if none
RP_NCNM = 12  #: CNMs received
RP_NRELEASE = 13  #: releases
RP_NFIELDS = 14

# ------------------------------------------------------------------------ return codes
TX_NONE, TX_INCREASE, TX_RELEASED = 0, 1, 2
OUT_QFB, OUT_QOFF, OUT_QDELTA, OUT_SAMPLED = 0, 1, 2, 3
OUT_N = 4


# ======================================================================== packing
def pack_cp_params(p) -> np.ndarray:
    """Pack the CP fields of a :class:`qcnmodel.params.QCNParams` into a float64 vector.

    Parameters
    ----------
    p : QCNParams

    Returns
    -------
    numpy.ndarray
        Shape ``(CPP_N,)``; see the ``CPP_*`` index constants.
    """
    a = np.zeros(CPP_N)
    a[CPP_QEQ] = p.qeq
    a[CPP_W] = p.w
    a[CPP_BITS] = p.fb_bits
    a[CPP_QUANT] = CODES["quantiser"][p.quantiser]
    a[CPP_SAMPLING] = CODES["sampling"][p.sampling]
    a[CPP_FIXED_INTERVAL] = p.frame_size / p.ps_fixed
    a[CPP_JITTER] = p.jitter
    a[CPP_QFB_POS] = 1.0 if p.cnm_requires_qfb_positive else 0.0
    a[CPP_TABLE : CPP_TABLE + 8] = np.asarray(p.sample_table(), dtype=np.float64)
    return a


def pack_rp_params(p) -> np.ndarray:
    """Pack the RP fields of a :class:`qcnmodel.params.QCNParams` into a float64 vector.

    Parameters
    ----------
    p : QCNParams

    Returns
    -------
    numpy.ndarray
        Shape ``(RPP_N,)``; see the ``RPP_*`` index constants.
    """
    a = np.zeros(RPP_N)
    a[RPP_C] = p.line_rate
    a[RPP_GD] = p.gd
    a[RPP_MIN_DEC] = p.min_dec
    a[RPP_MIN_RATE] = p.min_rate
    a[RPP_BC_LIMIT] = p.bc_limit
    a[RPP_TIMER] = p.timer
    a[RPP_FR_TH] = p.fr_th
    a[RPP_R_AI] = p.r_ai
    a[RPP_R_HAI] = p.r_hai
    a[RPP_HAI] = 1.0 if p.hai else 0.0
    a[RPP_JITTER] = p.jitter
    a[RPP_CYCLE_HALVING] = CODES["cycle_halving"][p.cycle_halving]
    a[RPP_TR_DIV8] = CODES["tr_div8"][p.tr_div8]
    a[RPP_HAI_INDEX] = CODES["hai_index"][p.hai_index]
    a[RPP_TIMER_MODE] = CODES["timer_mode"][p.timer_mode]
    a[RPP_BC_RELOAD] = CODES["bc_reload_on_cnm"][p.bc_reload_on_cnm]
    a[RPP_QFB_POS] = 1.0 if p.cnm_requires_qfb_positive else 0.0
    a[RPP_DRIFT_INC] = p.drift_inc
    a[RPP_DRIFT_FACTOR] = p.drift_factor
    a[RPP_DRIFT_PERIOD] = p.drift_period
    return a


def new_cp_state(n: int) -> np.ndarray:
    """State of ``n`` CPs, shape ``(CP_NFIELDS, n)``, all zero (countdown drawn lazily)."""
    return np.zeros((CP_NFIELDS, n))


def new_rp_state(n: int, line_rate: float = 0.0) -> np.ndarray:
    """State of ``n`` inactive RLs, shape ``(RP_NFIELDS, n)``; CR = TR = ``line_rate``."""
    s = np.zeros((RP_NFIELDS, n))
    s[RP_CR] = line_rate
    s[RP_TR] = line_rate
    s[RP_DEADLINE] = -1.0
    return s


# ======================================================================== CP
@njit(cache=True)
def quantise(neg_fb, qeq, w, bits, mode):
    """Quantise -Fb to ``bits`` bits (qcn-algorithm.md §1.3), exact integer arithmetic.

    With Fbmax = qeq (2w + 1), full = 2**bits - 1 and x = min(-Fb, Fbmax):

    * ``floor63`` (0): ``(full * x) // Fbmax`` -- only full scale gives ``full``.
    * ``round63`` (1): round half up, ``(2 full x + Fbmax) // (2 Fbmax)``.
    * ``floor64cap`` (2): ``min(full, ((full + 1) x) // Fbmax)`` (ns-3-dcn).
    * ``msb6`` (3): the ``bits`` most significant bits of floor(|Fb|) (unclipped), or
      floor(|Fb|) itself if below 2**bits (2011 OMNeT++ model; non-uniform).
    * ``shift`` (4): ``(floor(x) >> k) & full`` with k the smallest shift such that
      ``floor(Fbmax) >> k <= full``, i.e. full * 2**k ~ Fbmax: the correct use of the Linux
      patch's rule (§6.1 shows the wrong fixed k = 13). Full scale maps to
      ``Fbmax >> k`` (63 for Fbmax = 130000, k = 11), which can be < full.

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
    u = uniform01(seed, stream_key(STREAM_CP, j), np.int64(cp[CP_RNG, j]))
    cp[CP_RNG, j] += 1.0
    return 1.0 + prm[CPP_JITTER] * (2.0 * u - 1.0)


@njit(cache=True)
def _cp_interval(qfb, prm):
    if prm[CPP_SAMPLING] == SAMPLING_FIXED:
        return prm[CPP_FIXED_INTERVAL]
    return prm[CPP_TABLE + table_index(qfb, np.int64(prm[CPP_BITS]))]


@njit(cache=True)
def cp_on_arrival(cp, j, q_bytes, frame_bytes, seed, prm, out):
    """Frame arrival at CP ``j`` (qcn-algorithm.md §1.2-1.4; rules_ref.CongestionPoint).

    ``q_bytes`` is the queue in bytes including the arriving frame. Countdown by bytes; on a
    sample: Qoff = Q - Qeq, Qdelta = Q - Qold, Fb = -(Qoff + w Qdelta); CNM iff Fb < 0 (and
    qFb > 0 under ``cnm_requires_qfb_positive``); Qold = Q; reload the countdown with
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
        cp[CP_TO_SAMPLE, j] = _cp_interval(0, prm) * _cp_draw(cp, j, seed, prm)
    cp[CP_TO_SAMPLE, j] -= frame_bytes
    if cp[CP_TO_SAMPLE, j] > 0.0:
        return False
    qoff = q_bytes - prm[CPP_QEQ]
    qdelta = q_bytes - cp[CP_QOLD, j]
    fb = -(qoff + prm[CPP_W] * qdelta)
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
    u = uniform01(seed, stream_key(STREAM_RP_BC, i), np.int64(rp[RP_RNG_BC, i]))
    rp[RP_RNG_BC, i] += 1.0
    return 1.0 + prm[RPP_JITTER] * (2.0 * u - 1.0)


@njit(cache=True)
def _timer_draw(rp, i, seed, prm):
    u = uniform01(seed, stream_key(STREAM_RP_TIMER, i), np.int64(rp[RP_RNG_TIMER, i]))
    rp[RP_RNG_TIMER, i] += 1.0
    return 1.0 + prm[RPP_JITTER] * (2.0 * u - 1.0)


@njit(cache=True)
def cycle_factor(own, other, prm):
    """Reload factor of a counter whose stage is ``own`` (after the increment): 0.5 or 1.

    ``after_fr``: own >= FR_TH; ``one_late``: own > FR_TH; ``hai_only``: min(own, other) >=
    FR_TH (both counters out of FR); ``off``: never (qcn-algorithm.md §2.3).
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
def _release(rp, i):
    rp[RP_ACTIVE, i] = 0.0
    rp[RP_TIMER_GEN, i] += 1.0
    rp[RP_DEADLINE, i] = -1.0
    rp[RP_NRELEASE, i] += 1.0


@njit(cache=True)
def _self_increase(rp, i, own_stage, prm):
    """FR/AI/HAI increase, TR/8 rule, averaging, release (§2.2). True iff released."""
    fr_th = prm[RPP_FR_TH]
    bc = rp[RP_BC_STAGE, i]
    ts = rp[RP_T_STAGE, i]
    lo = min(bc, ts)
    hi = max(bc, ts)
    inc = 0.0
    if lo > fr_th:
        if prm[RPP_HAI] != 0.0:
            if prm[RPP_HAI_INDEX] == HAI_INDEX_EVENT_COUNT:
                rp[RP_HAI_COUNT, i] += 1.0
                inc = prm[RPP_R_HAI] * rp[RP_HAI_COUNT, i]
            else:
                inc = prm[RPP_R_HAI] * (lo - fr_th)
        else:
            inc = prm[RPP_R_AI]
    elif hi > fr_th:
        inc = prm[RPP_R_AI]
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
    rp[RP_CR, i] = min(c, (rp[RP_CR, i] + rp[RP_TR, i]) / 2.0)
    if rp[RP_CR, i] >= c:
        _release(rp, i)
        return True
    return False


@njit(cache=True)
def rp_on_cnm(rp, i, qfb, cpid, now_ns, seed, prm):
    """CNM with quantised feedback ``qfb`` at RL ``i`` (§2.2 ``on_cnm``).

    Returns
    -------
    int64
        New timer deadline (ns), or -1 if the CNM is ignored (module docstring).
    """
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
    if prm[RPP_BC_RELOAD] == BC_RELOAD_ALWAYS or tr_reset:
        rp[RP_BC_LEFT, i] = prm[RPP_BC_LIMIT] * _bc_draw(rp, i, seed, prm)
    rp[RP_TIMER_GEN, i] += 1.0
    deadline = np.int64(now_ns) + _ns(prm[RPP_TIMER] * _timer_draw(rp, i, seed, prm))
    rp[RP_DEADLINE, i] = deadline
    rp[RP_CPID, i] = cpid
    rp[RP_NCNM, i] += 1.0
    return deadline


@njit(cache=True)
def _timer_expiry(rp, i, base_ns, seed, prm):
    """One timer expiry (§2.2 ``on_timer``): stage, re-arm from ``base_ns``, increase."""
    rp[RP_T_STAGE, i] += 1.0
    f = cycle_factor(rp[RP_T_STAGE, i], rp[RP_BC_STAGE, i], prm)
    deadline = np.int64(base_ns) + _ns(prm[RPP_TIMER] * f * _timer_draw(rp, i, seed, prm))
    rp[RP_DEADLINE, i] = deadline
    if _self_increase(rp, i, rp[RP_T_STAGE, i], prm):
        return np.int64(-1)
    return deadline


@njit(cache=True)
def rp_on_tx(rp, i, nbytes, now_ns, seed, prm):
    """Data frame of ``nbytes`` released by RL ``i`` (§2.2 ``on_tx``; byte counter).

    On expiry: bc_stage += 1, reload BC_LIMIT * cycle_factor * U() (overshoot dropped), then
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
        rp[RP_BC_LEFT, i] = prm[RPP_BC_LIMIT] * f * _bc_draw(rp, i, seed, prm)
        if _self_increase(rp, i, rp[RP_BC_STAGE, i], prm):
            return TX_RELEASED
        status = TX_INCREASE
    return status


@njit(cache=True)
def rp_on_timer(rp, i, gen, now_ns, seed, prm):
    """Timer event of RL ``i`` tagged with generation ``gen`` (§2.2 ``on_timer``).

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
    """Drift event (§4.5 proposal): CR <- min(C, (CR + drift_inc) * drift_factor) if active.

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
        _release(rp, i)
        return TX_RELEASED
    return TX_INCREASE
