"""Struct-of-arrays layout of the QCN family: codes, parameter vectors, state rows, packing.

The compiled rules (:mod:`.qcn`, :mod:`.qcn_variants`) read float64 parameter vectors and
write float64 state tables ``X[ROW, index]``; this module names their entries and builds
them. One layout serves plain QCN and every variant: the option entries (``V_*``, ``CV_*``)
and rows (``RV_*``, ``CV_*``) follow the IEEE 802.1Qau ones, and with every option off
(:func:`pack_rp_params` without option objects) the rules are plain QCN.

String variants of :class:`qcnmodel.params.QCNParams` and of the option classes of
:mod:`qcnmodel.sim.protocol_params` become the small integer codes of :data:`CODES`.
"""

from __future__ import annotations

import numpy as np

from qcnmodel.sim.rng import STREAM_USER

# ------------------------------------------------------------------------ variant codes
QUANT_FLOOR63, QUANT_ROUND63, QUANT_FLOOR64CAP, QUANT_MSB6, QUANT_SHIFT = 0, 1, 2, 3, 4
SAMPLING_TABLE, SAMPLING_FIXED = 0, 1
HALVE_AFTER_FR, HALVE_ONE_LATE, HALVE_HAI_ONLY, HALVE_OFF = 0, 1, 2, 3
TRDIV8_OWN_FIRST, TRDIV8_EITHER, TRDIV8_OFF = 0, 1, 2
HAI_INDEX_MIN_STAGE, HAI_INDEX_EVENT_COUNT = 0, 1
TIMER_EVENT, TIMER_LAZY = 0, 1
BC_RELOAD_ALWAYS, BC_RELOAD_TR_RESET_ONLY = 0, 1
TO_BC, TO_PSAMPLE, TO_CNM = 0, 1, 2
BOOST_HAI, BOOST_TARGET, BOOST_RELEASE = 0, 1, 2
FBHAT_OFF, FBHAT_NORMALISED, FBHAT_EWMA = 0, 1, 2

#: Variant name -> code, per field of QCNParams and of the option classes.
CODES = {
    "quantiser": {"floor63": 0, "round63": 1, "floor64cap": 2, "msb6": 3, "shift": 4},
    "sampling": {"table": 0, "fixed": 1},
    "cycle_halving": {"after_fr": 0, "one_late": 1, "hai_only": 2, "off": 3},
    "tr_div8": {"own_first": 0, "either": 1, "off": 2},
    "hai_index": {"min_stage": 0, "event_count": 1},
    "timer_mode": {"event": 0, "lazy": 1},
    "bc_reload_on_cnm": {"always": 0, "tr_reset_only": 1},
    "to_thresh": {"bc_limit": 0, "psample": 1, "cnm": 2},
    "boost": {"hai": 0, "target": 1, "release": 2},
    "mode": {"off": 0, "normalised": 1, "ewma": 2},
}

STREAM_AUX = STREAM_USER + 8  #: probe / SONAR timer jitter, index = RL index

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
# options: Fb-hat (QCN-H) and SONAR's "not congested" threshold
CV_FBHAT, CV_REF, CV_EWMA, CV_NC_THR, CV_NC_INT = 16, 17, 18, 19, 20
CPP_N = 21

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
# options: extra fast recovery and TO_THRESH, QCN+, probes, SONAR (copies of QCN fields the
# options need at the RP: sampling, table, fb_bits, Qeq, quantiser)
V_EFR, V_EFR_FRAC, V_EFR_MAX, V_TO_THRESH, V_TO_BASE = 20, 21, 22, 23, 24
V_SAMPLING, V_FIXED_INT, V_TAB0 = 25, 26, 27  # table: 8 entries 27..34
V_BITS, V_PLUS, V_RTT, V_ONE_NEG, V_TO_RTT, V_BASE_W = 35, 36, 37, 38, 39, 40
V_W_FACTOR, V_LINK_C, V_GAIN, V_QEQ, V_QUANT = 41, 42, 43, 44, 45
V_PROBE, V_PROBE_INT, V_PROBE_JIT, V_POS_GAIN = 46, 47, 48, 49
V_SONAR, V_WP, V_WE, V_SF, V_BOOST = 50, 51, 52, 53, 54
RPP_N = 55

# ------------------------------------------------------------------------ CP state rows
CP_QOLD = 0  #: Qold (bytes), 0 initially
CP_TO_SAMPLE = 1  #: byte countdown to the next sample
CP_RNG = 2  #: draw counter of stream (STREAM_CP, j)
CP_INIT = 3  #: 1 once the initial countdown has been drawn
CP_NSAMPLES = 4  #: number of samples taken
CP_NCNM = 5  #: number of CNMs generated
CP_LAST_QFB = 6  #: qFb of the last sample
CV_BYTES = 7  #: bytes since the last sample (Fb-hat)
CV_FBHAT_STATE = 8  #: averaged Fb (Fb-hat ewma)
CV_NC_SINCE = 9  #: since when Q < the SONAR threshold (ns), -1 while at or above it
CV_NPROBES = 10  #: probes answered
CP_NFIELDS = 11

# ------------------------------------------------------------------------ RP state rows
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
RV_LAST_QFB = 14  #: qFb of the last accepted CNM (TO_THRESH=cnm)
RV_LAST_NEG_NS = 15  #: time of the last accepted negative feedback (ns), -1 if none
RV_AUX_GEN = 16  #: auxiliary-timer generation
RV_AUX_DEADLINE = 17  #: pending auxiliary deadline (ns), -1 if none
RV_AUX_RNG = 18  #: draw counter of stream (STREAM_AUX, i)
RV_SEND = 19  #: 1 while a probe / ping is to be sent
RV_ARM = 20  #: auxiliary deadline to schedule (ns), -1 if none
RV_PHASE = 21  #: SONAR phase (PHASE_*)
RV_BOOSTS = 22  #: consecutive SONAR boosts
RV_NPOS = 23  #: positive probe replies applied
RV_NIGNORED = 24  #: negative feedbacks and replies ignored
RP_NFIELDS = 25
PHASE_IDLE, PHASE_WAIT, PHASE_PING, PHASE_HOLD = 0, 1, 2, 3

# ------------------------------------------------------------------------ return codes
TX_NONE, TX_INCREASE, TX_RELEASED = 0, 1, 2
OUT_QFB, OUT_QOFF, OUT_QDELTA, OUT_SAMPLED = 0, 1, 2, 3
OUT_N = 4


# ======================================================================== packing
def pack_cp_params(p, fbhat=None, sonar=None) -> np.ndarray:
    """Pack the CP fields of a QCNParams (and the CP options) into a float64 vector.

    Parameters
    ----------
    p : QCNParams
    fbhat : FbHatParams, optional
        Fb-hat (QCN-H); default off.
    sonar : SonarParams, optional
        SONAR's "not congested" threshold and interval.

    Returns
    -------
    numpy.ndarray
        Shape ``(CPP_N,)``; see the ``CPP_*`` and ``CV_*`` index constants.
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
    if fbhat is not None:
        a[CV_FBHAT] = CODES["mode"][fbhat.mode]
        a[CV_REF] = p.sample_base if fbhat.ref_interval is None else fbhat.ref_interval
        a[CV_EWMA] = fbhat.ewma_gain
    if sonar is not None:
        a[CV_NC_THR] = sonar.nc_threshold
        a[CV_NC_INT] = sonar.nc_interval
    return a


def pack_rp_params(p, efr=None, plus=None, probe=None, sonar=None) -> np.ndarray:
    """Pack the RP fields of a QCNParams (and the RP options) into a float64 vector.

    Parameters
    ----------
    p : QCNParams
    efr : EFRParams, optional
        Extra fast recovery and TO_THRESH.
    plus : QCNPlusParams, optional
        QCN+'s RTT-based tuning.
    probe : ProbeParams, optional
        Probe timer and positive replies.
    sonar : SonarParams, optional
        SONAR timers and boost.

    Returns
    -------
    numpy.ndarray
        Shape ``(RPP_N,)``; see the ``RPP_*`` and ``V_*`` index constants.
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
    a[V_TO_BASE] = p.frame_size / p.ps
    a[V_SAMPLING] = CODES["sampling"][p.sampling]
    a[V_FIXED_INT] = p.frame_size / p.ps_fixed
    a[V_TAB0 : V_TAB0 + 8] = p.sample_table()
    a[V_BITS] = p.fb_bits
    a[V_QEQ] = p.qeq
    a[V_QUANT] = CODES["quantiser"][p.quantiser]
    a[V_GAIN] = 1.0
    if efr is not None:
        a[V_EFR] = float(efr.efr)
        a[V_EFR_FRAC] = efr.efr_fraction
        a[V_EFR_MAX] = float(efr.efr_max)
        a[V_TO_THRESH] = CODES["to_thresh"][efr.to_thresh]
    if plus is not None:
        a[V_PLUS] = 1.0
        a[V_RTT] = plus.rtt
        a[V_ONE_NEG] = float(plus.one_neg_per_rtt)
        a[V_TO_RTT] = float(plus.to_thresh_rtt)
        a[V_BASE_W] = p.w if plus.base_w is None else plus.base_w
        a[V_W_FACTOR] = plus.w_factor
        a[V_LINK_C] = p.line_rate if plus.link_capacity is None else plus.link_capacity
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
            a[V_PROBE_JIT] = p.jitter
    return a


def new_cp_state(n: int) -> np.ndarray:
    """State of ``n`` CPs, shape ``(CP_NFIELDS, n)``: zero (countdown drawn lazily), SONAR's
    "not congested since" unset (-1)."""
    s = np.zeros((CP_NFIELDS, n))
    s[CV_NC_SINCE] = -1.0
    return s


def new_rp_state(n: int, line_rate: float = 0.0) -> np.ndarray:
    """State of ``n`` inactive RLs, shape ``(RP_NFIELDS, n)``; CR = TR = ``line_rate``, no
    pending deadline, no negative feedback yet."""
    s = np.zeros((RP_NFIELDS, n))
    s[RP_CR] = line_rate
    s[RP_TR] = line_rate
    s[RP_DEADLINE] = -1.0
    s[RV_LAST_NEG_NS] = -1.0
    s[RV_AUX_DEADLINE] = -1.0
    s[RV_ARM] = -1.0
    return s


def pack_config(cfg) -> dict:
    """Packed vectors of a QCN-family ProtocolConfig: ``cp`` and ``rp`` with its options."""
    pp = cfg.params
    q = pp["QCNParams"]
    return {
        "cp": pack_cp_params(q, pp.get("FbHatParams"), pp.get("SonarParams")),
        "rp": pack_rp_params(q, pp.get("EFRParams"), pp.get("QCNPlusParams"),
                             pp.get("ProbeParams"), pp.get("SonarParams")),
    }  # fmt: skip


def new_config_state(cfg, n_cp: int, n_rp: int) -> dict:
    """Initial ``cp`` and ``rp`` tables of a QCN-family ProtocolConfig (RLs at line rate)."""
    return {"cp": new_cp_state(n_cp), "rp": new_rp_state(n_rp, cfg.params["QCNParams"].line_rate)}


__all__ = [n for n in dir() if n.isupper() or n.startswith(("pack_", "new_"))]
