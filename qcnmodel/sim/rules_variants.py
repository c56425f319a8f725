"""QCN variants and options (QCN-H, QCN-P/HP/SP/PP, QCN-SONAR, QCN+, EFR, TO_THRESH), numba.

Spec: ``qcn-algorithm.md`` §4.3-4.11, §3.2-3.3; seeds 000, 003, 004. The plain-Python twin is
:mod:`qcnmodel.sim.rules_variants_ref` (bit-identical). These rules are a superset of
:mod:`qcnmodel.sim.rules`: the state is the ``rules.RP_*`` / ``rules.CP_*`` layout with extra
rows appended, the parameter vectors are ``rules.pack_*_params`` with extra entries appended,
and with every option off each entry point is bit-identical to its ``rules`` counterpart (a
test checks it), so the kernel may use this module for every QCN-family protocol.

Assumptions (the seeds leave these N/S; each is a switch in
:mod:`qcnmodel.sim.protocol_params`):

1. **Fb-hat (QCN-H)** -- ``FbHatParams.mode``: ``normalised`` (default) rescales Qdelta to a
   reference interval, Qdelta_hat = Qdelta ref / (bytes since the last sample), so variable
   sampling does not weaken the derivative term; ``ewma`` averages Fb over samples. The CNM's
   Qdelta field carries Qdelta_hat. Seed 003's A = 24 Mb/s for QCN-H is a QCNParams r_ai.
2. **Extra fast recovery** -- in fast recovery (no counter past FR_TH) CR moves
   ``efr_fraction`` (0.75) of the way to TR instead of 1/2; **EFR MAX**: the first expiry
   after a cut sets CR = TR. Both off in plain QCN; the seeds run EFR on, EFR MAX off.
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

Kernel contract (besides the ``rules`` contract, which each ``vrp_*`` / ``vcp_*`` keeps)
--------------------------------------------------------------------------------------
* ``vrp_on_cnm(rp, i, qfb, qoff, qdelta, cpid, now_ns, seed, prm) -> int64``: as
  ``rules.rp_on_cnm`` (the CNM's Qoff/Qdelta are needed by QCN+).
* Auxiliary timer (probe period or SONAR timers): after *every* RP call, ``vrp_take_arm(rp,
  i) -> int64`` returns a deadline to schedule an aux-timer event with generation
  ``rp[RV_AUX_GEN, i]`` (or -1). ``vrp_on_aux_timer(rp, i, gen, now_ns, seed, prm) ->
  int64`` returns the next aux deadline (same generation) or -1. After it,
  ``vrp_take_send(rp, i) -> int64`` gives the CPID to probe/ping (or -1).
* Replies: ``vrp_on_probe_reply(rp, i, code, qoff, qdelta, cpid, now_ns, seed, prm)`` (code
  < 0: like a CNM, returns its timer deadline; else -1); ``vrp_on_echo(rp, i,
  not_congested, now_ns, seed, prm)`` (-1 or a new aux deadline, also via take_arm).
* CP: ``vcp_on_arrival`` (rules signature, Fb-hat), ``vcp_probe_fb(cp, j, q_bytes, prm)``,
  ``vcp_probe_code(fb, prm)``, ``vcp_on_queue(cp, j, q_bytes, now_ns, prm)`` (SONAR: call on
  every queue change), ``vcp_on_ping(cp, j, q_bytes, now_ns, prm) -> bool``.
* Random draws of the aux timer: ``stream_key(STREAM_AUX, i)``, counter ``RV_AUX_RNG``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim import rules as r
from qcnmodel.sim.rng import STREAM_USER, stream_key, uniform01
from qcnmodel.sim.rules import (
    CP_INIT,
    CP_LAST_QFB,
    CP_NCNM,
    CP_NSAMPLES,
    CP_QOLD,
    CP_TO_SAMPLE,
    CPP_BITS,
    CPP_QEQ,
    CPP_QFB_POS,
    CPP_QUANT,
    CPP_W,
    OUT_QDELTA,
    OUT_QFB,
    OUT_QOFF,
    OUT_SAMPLED,
    RP_ACTIVE,
    RP_BC_LEFT,
    RP_BC_STAGE,
    RP_CPID,
    RP_CR,
    RP_DEADLINE,
    RP_HAI_COUNT,
    RP_NCNM,
    RP_T_STAGE,
    RP_TIMER_GEN,
    RP_TR,
    RPP_BC_LIMIT,
    RPP_BC_RELOAD,
    RPP_C,
    RPP_DRIFT_FACTOR,
    RPP_DRIFT_INC,
    RPP_FR_TH,
    RPP_GD,
    RPP_HAI,
    RPP_HAI_INDEX,
    RPP_MIN_DEC,
    RPP_MIN_RATE,
    RPP_QFB_POS,
    RPP_R_AI,
    RPP_R_HAI,
    RPP_TIMER,
    RPP_TIMER_MODE,
    RPP_TR_DIV8,
    TX_INCREASE,
    TX_NONE,
    TX_RELEASED,
    quantise,
    table_index,
)

STREAM_AUX = STREAM_USER + 8  #: probe / SONAR timer jitter, index = RL index

# ------------------------------------------------------------------ RP parameters (appended)
V_EFR, V_EFR_FRAC, V_EFR_MAX, V_TO_THRESH, V_TO_BASE = 20, 21, 22, 23, 24
V_SAMPLING, V_FIXED_INT, V_TAB0 = 25, 26, 27  # table: 8 entries 27..34
V_BITS, V_PLUS, V_RTT, V_ONE_NEG, V_TO_RTT, V_BASE_W = 35, 36, 37, 38, 39, 40
V_W_FACTOR, V_LINK_C, V_GAIN, V_QEQ, V_QUANT = 41, 42, 43, 44, 45
V_PROBE, V_PROBE_INT, V_PROBE_JIT, V_POS_GAIN = 46, 47, 48, 49
V_SONAR, V_WP, V_WE, V_SF, V_BOOST = 50, 51, 52, 53, 54
V_N = 55
TO_BC, TO_PSAMPLE, TO_CNM = 0, 1, 2
BOOST_HAI, BOOST_TARGET, BOOST_RELEASE = 0, 1, 2
CODES = {
    "to_thresh": {"bc_limit": 0, "psample": 1, "cnm": 2},
    "boost": {"hai": 0, "target": 1, "release": 2},
    "mode": {"off": 0, "normalised": 1, "ewma": 2},
}
# ------------------------------------------------------------------ RP state (appended)
RV_LAST_QFB, RV_LAST_NEG_NS, RV_AUX_GEN, RV_AUX_DEADLINE, RV_AUX_RNG = 14, 15, 16, 17, 18
RV_SEND, RV_ARM, RV_PHASE, RV_BOOSTS, RV_NPOS, RV_NIGNORED = 19, 20, 21, 22, 23, 24
RV_NFIELDS = 25
PHASE_IDLE, PHASE_WAIT, PHASE_PING, PHASE_HOLD = 0, 1, 2, 3
# ------------------------------------------------------------------ CP (appended)
CV_FBHAT, CV_REF, CV_EWMA, CV_NC_THR, CV_NC_INT = 16, 17, 18, 19, 20
CV_N = 21
CV_BYTES, CV_FBHAT_STATE, CV_NC_SINCE, CV_NPROBES = 7, 8, 9, 10
CV_NFIELDS = 11


def pack_variant_rp_params(qcn, efr=None, plus=None, probe=None, sonar=None) -> np.ndarray:
    """``rules.pack_rp_params(qcn)`` followed by the option entries ``V_*``.

    Parameters
    ----------
    qcn : QCNParams
    efr : EFRParams, optional
    plus : QCNPlusParams, optional
    probe : ProbeParams, optional
    sonar : SonarParams, optional
    """
    a = np.zeros(V_N)
    a[: r.RPP_N] = r.pack_rp_params(qcn)
    if efr is not None:
        a[V_EFR] = float(efr.efr)
        a[V_EFR_FRAC] = efr.efr_fraction
        a[V_EFR_MAX] = float(efr.efr_max)
        a[V_TO_THRESH] = CODES["to_thresh"][efr.to_thresh]
    a[V_TO_BASE] = qcn.frame_size / qcn.ps
    a[V_SAMPLING] = r.CODES["sampling"][qcn.sampling]
    a[V_FIXED_INT] = qcn.frame_size / qcn.ps_fixed
    a[V_TAB0 : V_TAB0 + 8] = qcn.sample_table()
    a[V_BITS] = qcn.fb_bits
    a[V_QEQ] = qcn.qeq
    a[V_QUANT] = r.CODES["quantiser"][qcn.quantiser]
    a[V_GAIN] = 1.0
    if plus is not None:
        a[V_PLUS] = 1.0
        a[V_RTT] = plus.rtt
        a[V_ONE_NEG] = float(plus.one_neg_per_rtt)
        a[V_TO_RTT] = float(plus.to_thresh_rtt)
        a[V_BASE_W] = qcn.w if plus.base_w is None else plus.base_w
        a[V_W_FACTOR] = plus.w_factor
        a[V_LINK_C] = qcn.line_rate if plus.link_capacity is None else plus.link_capacity
        a[V_GAIN] = plus.loop_gain()
    if probe is not None:
        a[V_PROBE] = 1.0
        a[V_PROBE_INT] = probe.interval
        a[V_PROBE_JIT] = probe.jitter
        a[V_POS_GAIN] = probe.pos_gain
    if sonar is not None:
        a[V_SONAR] = 1.0
        a[V_WP] = sonar.wp_timer
        a[V_WE] = sonar.we_timer
        a[V_SF] = sonar.sf_timer
        a[V_BOOST] = CODES["boost"][sonar.boost]
        if probe is None:
            a[V_PROBE_JIT] = qcn.jitter
    return a


def pack_variant_cp_params(qcn, fbhat=None, sonar=None) -> np.ndarray:
    """``rules.pack_cp_params(qcn)`` followed by the ``CV_*`` entries."""
    a = np.zeros(CV_N)
    a[: r.CPP_N] = r.pack_cp_params(qcn)
    if fbhat is not None:
        a[CV_FBHAT] = CODES["mode"][fbhat.mode]
        a[CV_REF] = qcn.sample_base if fbhat.ref_interval is None else fbhat.ref_interval
        a[CV_EWMA] = fbhat.ewma_gain
    if sonar is not None:
        a[CV_NC_THR] = sonar.nc_threshold
        a[CV_NC_INT] = sonar.nc_interval
    return a


def new_variant_rp_state(n: int, line_rate: float = 0.0) -> np.ndarray:
    """``rules.new_rp_state`` plus the ``RV_*`` rows (deadlines -1, no negative yet)."""
    s = np.zeros((RV_NFIELDS, n))
    s[: r.RP_NFIELDS] = r.new_rp_state(n, line_rate)
    s[RV_LAST_NEG_NS] = -1.0
    s[RV_AUX_DEADLINE] = -1.0
    s[RV_ARM] = -1.0
    return s


def new_variant_cp_state(n: int) -> np.ndarray:
    """``rules.new_cp_state`` plus the ``CV_*`` rows (not-congested timer unset: -1)."""
    s = np.zeros((CV_NFIELDS, n))
    s[CV_NC_SINCE] = -1.0
    return s


# ============================================================================ RP internals
@njit(cache=True)
def _aux_draw(rp, i, seed, prm):
    u = uniform01(seed, stream_key(STREAM_AUX, i), np.int64(rp[RV_AUX_RNG, i]))
    rp[RV_AUX_RNG, i] += 1.0
    return 1.0 + prm[V_PROBE_JIT] * (2.0 * u - 1.0)


@njit(cache=True)
def _arm_aux(rp, i, period, now_ns, seed, prm):
    rp[RV_AUX_GEN, i] += 1.0
    d = np.int64(now_ns) + r._ns(period * _aux_draw(rp, i, seed, prm))
    rp[RV_AUX_DEADLINE, i] = d
    rp[RV_ARM, i] = d
    return d


@njit(cache=True)
def _release_v(rp, i):
    r._release(rp, i)
    rp[RV_AUX_GEN, i] += 1.0
    rp[RV_AUX_DEADLINE, i] = -1.0
    rp[RV_ARM, i] = -1.0
    rp[RV_PHASE, i] = PHASE_IDLE


@njit(cache=True)
def bc_base(rp, i, prm):
    """Byte-counter cycle before halving/jitter: TO_THRESH option, QCN+ RTT rule."""
    mode = prm[V_TO_THRESH]
    if mode == TO_PSAMPLE:
        base = prm[V_TO_BASE]
    elif mode == TO_CNM:
        if prm[V_SAMPLING] == r.SAMPLING_FIXED:
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
def _self_increase_v(rp, i, own_stage, prm):
    """rules._self_increase with the loop gain (QCN+) and extra fast recovery. True iff released."""
    fr_th = prm[RPP_FR_TH]
    bc = rp[RP_BC_STAGE, i]
    ts = rp[RP_T_STAGE, i]
    lo = min(bc, ts)
    hi = max(bc, ts)
    inc = 0.0
    if lo > fr_th:
        if prm[RPP_HAI] != 0.0:
            if prm[RPP_HAI_INDEX] == r.HAI_INDEX_EVENT_COUNT:
                rp[RP_HAI_COUNT, i] += 1.0
                inc = prm[RPP_R_HAI] * rp[RP_HAI_COUNT, i]
            else:
                inc = prm[RPP_R_HAI] * (lo - fr_th)
        else:
            inc = prm[RPP_R_AI]
    elif hi > fr_th:
        inc = prm[RPP_R_AI]
    inc = inc * prm[V_GAIN]
    mode = prm[RPP_TR_DIV8]
    first = False
    if mode == r.TRDIV8_OWN_FIRST:
        first = own_stage == 1.0
    elif mode == r.TRDIV8_EITHER:
        first = bc == 1.0 or ts == 1.0
    if first and rp[RP_TR, i] > 10.0 * rp[RP_CR, i]:
        rp[RP_TR, i] = rp[RP_TR, i] / 8.0
    else:
        rp[RP_TR, i] = rp[RP_TR, i] + inc
    c = prm[RPP_C]
    if prm[V_EFR] != 0.0 and hi <= fr_th:
        if prm[V_EFR_MAX] != 0.0 and own_stage == 1.0:
            cr = rp[RP_TR, i]
        else:
            cr = rp[RP_CR, i] + (rp[RP_TR, i] - rp[RP_CR, i]) * prm[V_EFR_FRAC]
    else:
        cr = (rp[RP_CR, i] + rp[RP_TR, i]) / 2.0
    rp[RP_CR, i] = min(c, cr)
    if rp[RP_CR, i] >= c:
        _release_v(rp, i)
        return True
    return False


@njit(cache=True)
def _timer_expiry_v(rp, i, base_ns, seed, prm):
    rp[RP_T_STAGE, i] += 1.0
    f = r.cycle_factor(rp[RP_T_STAGE, i], rp[RP_BC_STAGE, i], prm)
    deadline = np.int64(base_ns) + r._ns(prm[RPP_TIMER] * f * r._timer_draw(rp, i, seed, prm))
    rp[RP_DEADLINE, i] = deadline
    if _self_increase_v(rp, i, rp[RP_T_STAGE, i], prm):
        return np.int64(-1)
    return deadline


# ============================================================================ RP entry points
@njit(cache=True)
def vrp_on_cnm(rp, i, qfb, qoff, qdelta, cpid, now_ns, seed, prm):
    """CNM (or negative reply) at RL ``i``: rules.rp_on_cnm plus QCN+ and aux timers.

    Returns the new QCN timer deadline (ns) or -1 if ignored (module docstring, items 3-6).
    """
    c = prm[RPP_C]
    if prm[V_PLUS] != 0.0:
        last = rp[RV_LAST_NEG_NS, i]
        if prm[V_ONE_NEG] != 0.0 and last >= 0.0 and now_ns - last < r._ns(prm[V_RTT]):
            rp[RV_NIGNORED, i] += 1.0
            return np.int64(-1)
        cr0 = rp[RP_CR, i] if rp[RP_ACTIVE, i] != 0.0 else c
        w = prm[V_BASE_W] + prm[V_RTT] * prm[V_W_FACTOR] / (prm[V_LINK_C] / cr0)
        fb = -(qoff + w * qdelta)
        if not fb < 0.0:
            rp[RV_NIGNORED, i] += 1.0
            return np.int64(-1)
        qfb = quantise(-fb, prm[V_QEQ], prm[V_BASE_W], np.int64(prm[V_BITS]),
                       np.int64(prm[V_QUANT]))  # fmt: skip
    if prm[RPP_QFB_POS] != 0.0 and qfb <= 0:
        return np.int64(-1)
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
    if prm[RPP_BC_RELOAD] == r.BC_RELOAD_ALWAYS or tr_reset:
        rp[RP_BC_LEFT, i] = bc_base(rp, i, prm) * r._bc_draw(rp, i, seed, prm)
    rp[RP_TIMER_GEN, i] += 1.0
    deadline = np.int64(now_ns) + r._ns(prm[RPP_TIMER] * r._timer_draw(rp, i, seed, prm))
    rp[RP_DEADLINE, i] = deadline
    rp[RP_CPID, i] = cpid
    rp[RP_NCNM, i] += 1.0
    rp[RV_LAST_NEG_NS, i] = now_ns
    if prm[V_PROBE] != 0.0 and rp[RV_AUX_DEADLINE, i] < 0.0:
        _arm_aux(rp, i, prm[V_PROBE_INT], now_ns, seed, prm)
    if prm[V_SONAR] != 0.0:
        rp[RV_PHASE, i] = PHASE_WAIT
        rp[RV_BOOSTS, i] = 0.0
        _arm_aux(rp, i, prm[V_WP], now_ns, seed, prm)
    return deadline


@njit(cache=True)
def vrp_on_tx(rp, i, nbytes, now_ns, seed, prm):
    """rules.rp_on_tx with the TO_THRESH / QCN+ cycle and the variant increase. ``TX_*``."""
    if rp[RP_ACTIVE, i] == 0.0:
        return TX_NONE
    status = TX_NONE
    if prm[RPP_TIMER_MODE] == r.TIMER_LAZY:
        while rp[RP_DEADLINE, i] >= 0.0 and rp[RP_DEADLINE, i] <= now_ns:
            if _timer_expiry_v(rp, i, np.int64(rp[RP_DEADLINE, i]), seed, prm) < 0:
                return TX_RELEASED
            status = TX_INCREASE
    rp[RP_BC_LEFT, i] -= nbytes
    if rp[RP_BC_LEFT, i] <= 0.0:
        rp[RP_BC_STAGE, i] += 1.0
        f = r.cycle_factor(rp[RP_BC_STAGE, i], rp[RP_T_STAGE, i], prm)
        rp[RP_BC_LEFT, i] = bc_base(rp, i, prm) * f * r._bc_draw(rp, i, seed, prm)
        if _self_increase_v(rp, i, rp[RP_BC_STAGE, i], prm):
            return TX_RELEASED
        status = TX_INCREASE
    return status


@njit(cache=True)
def vrp_on_timer(rp, i, gen, now_ns, seed, prm):
    """rules.rp_on_timer with the variant increase."""
    if (
        rp[RP_ACTIVE, i] == 0.0
        or np.int64(gen) != np.int64(rp[RP_TIMER_GEN, i])
        or prm[RPP_TIMER_MODE] == r.TIMER_LAZY
    ):
        return np.int64(-1)
    return _timer_expiry_v(rp, i, now_ns, seed, prm)


@njit(cache=True)
def vrp_on_drift(rp, i, prm):
    """rules.rp_on_drift (§4.5), releasing with the aux timer cancelled."""
    if rp[RP_ACTIVE, i] == 0.0:
        return TX_NONE
    if prm[RPP_DRIFT_INC] == 0.0 and prm[RPP_DRIFT_FACTOR] == 1.0:
        return TX_NONE
    c = prm[RPP_C]
    rp[RP_CR, i] = min(c, (rp[RP_CR, i] + prm[RPP_DRIFT_INC]) * prm[RPP_DRIFT_FACTOR])
    if rp[RP_CR, i] >= c:
        _release_v(rp, i)
        return TX_RELEASED
    return TX_INCREASE


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
    d = np.int64(now_ns) + r._ns(period * _aux_draw(rp, i, seed, prm))
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
        return vrp_on_cnm(rp, i, np.int64(-code), qoff, qdelta, cpid, now_ns, seed, prm)
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
        _release_v(rp, i)
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
        _release_v(rp, i)
        return np.int64(-1)
    rp[RV_PHASE, i] = PHASE_HOLD
    return _arm_aux(rp, i, prm[V_WE], now_ns, seed, prm)


# ============================================================================ CP
@njit(cache=True)
def vcp_on_arrival(cp, j, q_bytes, frame_bytes, seed, prm, out):
    """rules.cp_on_arrival with Fb-hat (QCN-H, item 1); same contract."""
    out[OUT_QFB] = 0.0
    out[OUT_QOFF] = 0.0
    out[OUT_QDELTA] = 0.0
    out[OUT_SAMPLED] = 0.0
    if cp[CP_INIT, j] == 0.0:
        cp[CP_INIT, j] = 1.0
        cp[CP_TO_SAMPLE, j] = r._cp_interval(0, prm) * r._cp_draw(cp, j, seed, prm)
    cp[CV_BYTES, j] += frame_bytes
    cp[CP_TO_SAMPLE, j] -= frame_bytes
    if cp[CP_TO_SAMPLE, j] > 0.0:
        return False
    qoff = q_bytes - prm[CPP_QEQ]
    qdelta = q_bytes - cp[CP_QOLD, j]
    mode = prm[CV_FBHAT]
    if mode == 1.0:
        qdelta = qdelta * (prm[CV_REF] / cp[CV_BYTES, j])
        fb = -(qoff + prm[CPP_W] * qdelta)
    elif mode == 2.0:
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
    cp[CP_TO_SAMPLE, j] = r._cp_interval(qfb, prm) * r._cp_draw(cp, j, seed, prm)
    cp[CP_NSAMPLES, j] += 1.0
    cp[CP_LAST_QFB, j] = qfb
    if cnm:
        cp[CP_NCNM, j] += 1.0
    out[OUT_QFB] = qfb
    out[OUT_QOFF] = qoff
    out[OUT_QDELTA] = qdelta
    out[OUT_SAMPLED] = 1.0
    return cnm


@njit(cache=True)
def vcp_probe_fb(cp, j, q_bytes, prm):
    """Fb a CP reports to a probe: -(Q - Qeq + w (Q - Qold)), Qold of its last sample."""
    cp[CV_NPROBES, j] += 1.0
    return -((q_bytes - prm[CPP_QEQ]) + prm[CPP_W] * (q_bytes - cp[CP_QOLD, j]))


@njit(cache=True)
def vcp_probe_code(fb, prm):
    """Signed reply code: the CP quantiser applied to |Fb| (capped at Fbmax), with Fb's sign."""
    q = float(quantise(abs(fb), prm[CPP_QEQ], prm[CPP_W], np.int64(prm[CPP_BITS]),
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
    return since >= 0.0 and now_ns - since >= r._ns(prm[CV_NC_INT])
