"""DCQCN rules (CP marking, notification point, reaction point), numba-compiled.

Sources: Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from Analysis of DCQCN and
TIMELY" (CoNEXT 2016), after Zhu et al., "Congestion Control for Large-Scale RDMA
Deployments" (SIGCOMM 2015); the increase machine is QCN's (IEEE 802.1Qau; the "ns3-rdma"
simulator keeps it). Twin:
:mod:`qcnmodel.sim.protocols.dcqcn_ref`. Parameters:
:class:`~qcnmodel.sim.protocol_params.DCQCNSimParams`.

Rules
-----
* **CP (RED/ECN)**: a frame is marked with probability p(Q) = 0 (Q <= Kmin),
  pmax (Q - Kmin)/(Kmax - Kmin) (Kmin < Q <= Kmax), 1 (Q > Kmax): marked iff u < p(Q), one
  draw per frame on ``stream_key(STREAM_CP, j)``. ``mark_at="dequeue"`` (default; DCQCN's
  egress marking, Zhu et al., SIGCOMM 2015) draws when the frame starts to leave, against Q
  = the output queue in bytes including the frame; ``mark_at="enqueue"`` draws at its
  arrival, against Q in bytes including the frame.
* **NP** (receiver, per flow, interval tau = ``cnp_interval``), at a marked packet arriving
  at t; ``last`` is the time of the flow's latest CNP (possibly still ahead of t):

  - ``cnp_mode="dead_time"``: a CNP at t if no CNP in (t - tau, t]; else the mark is
    ignored.
  - ``cnp_mode="coalesce"`` (default; the NP of the Mellanox NIC described in the DCQCN
    paper, SIGCOMM 2015): as dead_time, but a mark inside the interval after a CNP is
    remembered: one CNP leaves at ``last + tau`` (marks before a pending CNP are covered
    by it). No mark is lost; at most one CNP per interval.
  - ``cnp_mode="window"``: intervals on a fixed grid [w tau, (w + 1) tau); one CNP at the
    end of each interval in which a mark arrived.

  With tau = 0 every marked packet sends a CNP at once.
* **RP**: on a CNP: (an inactive RL is created at CR = TR = C, alpha = alpha_init) TR = CR,
  CR = max(min_rate, CR (1 - alpha/2)), alpha = (1 - g) alpha + g; byte counter (B U()),
  rate timer (T U()) and alpha timer (tau') restart, stages reset. Alpha timer expiry (no CNP
  for tau'): alpha = (1 - g) alpha, re-armed. Byte-counter / rate-timer expiry: own stage
  += 1, then (QCN convention): fast recovery while both stages <= F (CR = (CR+TR)/2),
  additive (TR += R_AI) when one is > F, hyper (TR += (min stage - F) R_HAI) when both are;
  TR is capped at C (ns3-rdma; assumption), CR = min(C, (CR + TR)/2). No TR/8 rule, no
  cycle halving. CR = C releases the RL if ``release`` (else it stays at C).

Kernel contract
---------------
``dcqcn_cp_on_arrival(cp, j, q_bytes, seed, prm) -> bool`` (marked);
``dcqcn_cp_marks_at_dequeue(prm) -> bool``;
``dcqcn_np_on_packet(np_state, f, marked, now_ns, prm) -> int64``: the time (ns, >= now) at
which a CNP leaves the NP towards flow f's RP, or -1 (none);
``dcqcn_rp_on_cnp(rp, i, now_ns, seed, prm) -> int64`` rate-timer deadline (generation
``rp[D_TIMER_GEN, i]``); the alpha timer must be (re)scheduled at ``rp[D_ALPHA_DEADLINE, i]``
with generation ``rp[D_ALPHA_GEN, i]``; ``dcqcn_rp_on_tx(rp, i, nbytes, seed, prm) -> TX_*``;
``dcqcn_rp_on_rate_timer(rp, i, gen, now_ns, seed, prm)`` and
``dcqcn_rp_on_alpha_timer(rp, i, gen, now_ns, prm)`` -> next deadline or -1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.protocols.qcn import TX_INCREASE, TX_NONE, TX_RELEASED, _ns
from qcnmodel.sim.rng import (
    STREAM_CP,
    STREAM_RP_BC,
    STREAM_RP_TIMER,
    draw_jitter,
    stream_key,
    uniform01,
)

# CP
DCP_KMIN, DCP_KMAX, DCP_PMAX, DCP_MARK_AT, DCP_N = 0, 1, 2, 3, 4
DC_RNG, DC_NMARK, DC_NARR, DC_NFIELDS = 0, 1, 2, 3
MARK_ENQUEUE, MARK_DEQUEUE = 0.0, 1.0  #: DCP_MARK_AT codes
# NP
NPP_INTERVAL, NPP_MODE, NPP_N = 0, 1, 2
NP_LAST_CNP, NP_NCNP, NP_NFIELDS = 0, 1, 2
CNP_DEAD_TIME, CNP_COALESCE, CNP_WINDOW = 0.0, 1.0, 2.0  #: NPP_MODE codes
MARK_AT_CODES = {"enqueue": MARK_ENQUEUE, "dequeue": MARK_DEQUEUE}
CNP_MODE_CODES = {"dead_time": CNP_DEAD_TIME, "coalesce": CNP_COALESCE, "window": CNP_WINDOW}
# RP parameters
DRP_C, DRP_G, DRP_ALPHA_T, DRP_RATE_T, DRP_B, DRP_F, DRP_RAI, DRP_RHAI = 0, 1, 2, 3, 4, 5, 6, 7
DRP_RMIN, DRP_ALPHA0, DRP_JITTER, DRP_RELEASE = 8, 9, 10, 11
DRP_N = 12
# RP state (ACTIVE, CR, TR share rows 0-2 with the QCN layout's RP_*)
D_ACTIVE, D_CR, D_TR, D_ALPHA, D_BC_STAGE, D_T_STAGE, D_BC_LEFT = 0, 1, 2, 3, 4, 5, 6
D_TIMER_GEN, D_DEADLINE, D_ALPHA_GEN, D_ALPHA_DEADLINE, D_RNG_BC, D_RNG_T = 7, 8, 9, 10, 11, 12
D_NCNP, D_NRELEASE = 13, 14
D_NFIELDS = 15


def pack_dcqcn_cp_params(p) -> np.ndarray:
    """CP vector (``DCP_*``) of a DCQCNSimParams (a DCQCNParams marks at dequeue)."""
    return np.array([p.kmin, p.kmax, p.pmax, MARK_AT_CODES[getattr(p, "mark_at", "dequeue")]])


def pack_dcqcn_np_params(p) -> np.ndarray:
    """NP vector (``NPP_*``) (a DCQCNParams coalesces)."""
    return np.array([p.cnp_interval, CNP_MODE_CODES[getattr(p, "cnp_mode", "coalesce")]])


def pack_dcqcn_rp_params(p) -> np.ndarray:
    """RP vector (``DRP_*``)."""
    a = np.zeros(DRP_N)
    a[DRP_C] = p.line_rate
    a[DRP_G] = p.g
    a[DRP_ALPHA_T] = p.alpha_timer
    a[DRP_RATE_T] = p.rate_timer
    a[DRP_B] = p.byte_counter
    a[DRP_F] = p.fr_th
    a[DRP_RAI] = p.r_ai
    a[DRP_RHAI] = p.r_hai
    a[DRP_RMIN] = p.min_rate
    a[DRP_ALPHA0] = p.alpha_init
    a[DRP_JITTER] = p.jitter
    a[DRP_RELEASE] = float(p.release)
    return a


def new_dcqcn_cp_state(n: int) -> np.ndarray:
    return np.zeros((DC_NFIELDS, n))


def new_dcqcn_np_state(n: int) -> np.ndarray:
    s = np.zeros((NP_NFIELDS, n))
    s[NP_LAST_CNP] = -1.0
    return s


def new_dcqcn_rp_state(n: int, line_rate: float = 0.0) -> np.ndarray:
    s = np.zeros((D_NFIELDS, n))
    s[D_CR] = line_rate
    s[D_TR] = line_rate
    s[D_DEADLINE] = -1.0
    s[D_ALPHA_DEADLINE] = -1.0
    return s


# ============================================================================ CP and NP
@njit(cache=True)
def mark_probability(q, prm):
    """RED ramp p(q) (CoNEXT 2016): 0, linear to pmax on (Kmin, Kmax], 1 above Kmax."""
    if q <= prm[DCP_KMIN]:
        return 0.0
    if q <= prm[DCP_KMAX]:
        return (q - prm[DCP_KMIN]) / (prm[DCP_KMAX] - prm[DCP_KMIN]) * prm[DCP_PMAX]
    return 1.0


def pack_config(cfg) -> dict:
    """Packed ``cp``, ``np`` and ``rp`` vectors of a DCQCN ProtocolConfig."""
    p = cfg.params["DCQCNSimParams"]
    return {
        "cp": pack_dcqcn_cp_params(p),
        "np": pack_dcqcn_np_params(p),
        "rp": pack_dcqcn_rp_params(p),
    }


def new_config_state(cfg, n_cp: int, n_rp: int) -> dict:
    """Initial ``cp``, ``np`` (per flow) and ``rp`` tables of a DCQCN ProtocolConfig."""
    c = cfg.params["DCQCNSimParams"].line_rate
    return {
        "cp": new_dcqcn_cp_state(n_cp),
        "np": new_dcqcn_np_state(n_rp),
        "rp": new_dcqcn_rp_state(n_rp, c),
    }


@njit(cache=True)
def dcqcn_cp_on_arrival(cp, j, q_bytes, seed, prm):
    """ECN marking at CP ``j``: one draw per arrival, marked iff u < p(Q)."""
    u = uniform01(seed, stream_key(STREAM_CP, j), np.int64(cp[DC_RNG, j]))
    cp[DC_RNG, j] += 1.0
    cp[DC_NARR, j] += 1.0
    marked = u < mark_probability(q_bytes, prm)
    if marked:
        cp[DC_NMARK, j] += 1.0
    return marked


@njit(cache=True)
def dcqcn_cp_marks_at_dequeue(prm):
    """True iff the CP draws its marks at dequeue (``mark_at="dequeue"``)."""
    return prm[DCP_MARK_AT] == MARK_DEQUEUE


@njit(cache=True)
def dcqcn_np_on_packet(nps, f, marked, now_ns, prm):
    """Notification point of flow ``f`` (module docstring): the time (ns) at which a CNP
    leaves for the flow's RP, or -1."""
    if not marked:
        return np.int64(-1)
    now = np.int64(now_ns)
    iv = _ns(prm[NPP_INTERVAL])
    last = np.int64(nps[NP_LAST_CNP, f])  # -1: no CNP yet
    mode = prm[NPP_MODE]
    t = now
    if iv > 0 and mode == CNP_WINDOW:
        t = (now // iv + 1) * iv
        if t == last:
            return np.int64(-1)  # this interval's CNP is already due
    elif iv > 0 and last >= 0 and now < last + iv:
        if mode != CNP_COALESCE or now < last:
            return np.int64(-1)  # dead time, or covered by the pending CNP at ``last``
        t = last + iv
    nps[NP_LAST_CNP, f] = t
    nps[NP_NCNP, f] += 1.0
    return t


# ============================================================================ RP
@njit(cache=True, inline="always")
def _u(rp, i, row, kind, seed, prm):
    return draw_jitter(rp, row, i, kind, seed, prm[DRP_JITTER])


@njit(cache=True)
def _release(rp, i):
    rp[D_ACTIVE, i] = 0.0
    rp[D_TIMER_GEN, i] += 1.0
    rp[D_ALPHA_GEN, i] += 1.0
    rp[D_DEADLINE, i] = -1.0
    rp[D_ALPHA_DEADLINE, i] = -1.0
    rp[D_NRELEASE, i] += 1.0


@njit(cache=True)
def _increase(rp, i, prm):
    """FR / AI / HAI step and averaging (module docstring). True iff released."""
    f = prm[DRP_F]
    lo = min(rp[D_BC_STAGE, i], rp[D_T_STAGE, i])
    hi = max(rp[D_BC_STAGE, i], rp[D_T_STAGE, i])
    c = prm[DRP_C]
    if lo > f:
        rp[D_TR, i] = min(c, rp[D_TR, i] + prm[DRP_RHAI] * (lo - f))
    elif hi > f:
        rp[D_TR, i] = min(c, rp[D_TR, i] + prm[DRP_RAI])
    rp[D_CR, i] = min(c, (rp[D_CR, i] + rp[D_TR, i]) / 2.0)
    if rp[D_CR, i] >= c and prm[DRP_RELEASE] != 0.0:
        _release(rp, i)
        return True
    return False


@njit(cache=True)
def dcqcn_rp_on_cnp(rp, i, now_ns, seed, prm):
    """CNP at RL ``i``: cut by alpha/2, alpha update, counters and timers restart."""
    c = prm[DRP_C]
    if rp[D_ACTIVE, i] == 0.0:
        rp[D_ACTIVE, i] = 1.0
        rp[D_CR, i] = c
        rp[D_TR, i] = c
        rp[D_ALPHA, i] = prm[DRP_ALPHA0]
    rp[D_TR, i] = rp[D_CR, i]
    rp[D_CR, i] = max(prm[DRP_RMIN], rp[D_CR, i] * (1.0 - rp[D_ALPHA, i] / 2.0))
    g = prm[DRP_G]
    rp[D_ALPHA, i] = (1.0 - g) * rp[D_ALPHA, i] + g
    rp[D_BC_STAGE, i] = 0.0
    rp[D_T_STAGE, i] = 0.0
    rp[D_BC_LEFT, i] = prm[DRP_B] * _u(rp, i, D_RNG_BC, STREAM_RP_BC, seed, prm)
    rp[D_TIMER_GEN, i] += 1.0
    d = np.int64(now_ns) + _ns(prm[DRP_RATE_T] * _u(rp, i, D_RNG_T, STREAM_RP_TIMER, seed, prm))
    rp[D_DEADLINE, i] = d
    rp[D_ALPHA_GEN, i] += 1.0
    rp[D_ALPHA_DEADLINE, i] = np.int64(now_ns) + _ns(prm[DRP_ALPHA_T])
    rp[D_NCNP, i] += 1.0
    return d


@njit(cache=True)
def dcqcn_rp_on_tx(rp, i, nbytes, seed, prm):
    """Data packet of ``nbytes`` sent by RL ``i``: byte counter B. ``TX_*``."""
    if rp[D_ACTIVE, i] == 0.0:
        return TX_NONE
    rp[D_BC_LEFT, i] -= nbytes
    if rp[D_BC_LEFT, i] > 0.0:
        return TX_NONE
    rp[D_BC_STAGE, i] += 1.0
    rp[D_BC_LEFT, i] = prm[DRP_B] * _u(rp, i, D_RNG_BC, STREAM_RP_BC, seed, prm)
    if _increase(rp, i, prm):
        return TX_RELEASED
    return TX_INCREASE


@njit(cache=True)
def dcqcn_rp_on_rate_timer(rp, i, gen, now_ns, seed, prm):
    """Rate-increase timer T: next deadline, or -1 (stale, inactive, released)."""
    if rp[D_ACTIVE, i] == 0.0 or np.int64(gen) != np.int64(rp[D_TIMER_GEN, i]):
        return np.int64(-1)
    rp[D_T_STAGE, i] += 1.0
    d = np.int64(now_ns) + _ns(prm[DRP_RATE_T] * _u(rp, i, D_RNG_T, STREAM_RP_TIMER, seed, prm))
    rp[D_DEADLINE, i] = d
    if _increase(rp, i, prm):
        return np.int64(-1)
    return d


@njit(cache=True)
def dcqcn_rp_on_alpha_timer(rp, i, gen, now_ns, prm):
    """No CNP for tau': alpha = (1 - g) alpha; next deadline or -1 (stale / inactive)."""
    if rp[D_ACTIVE, i] == 0.0 or np.int64(gen) != np.int64(rp[D_ALPHA_GEN, i]):
        return np.int64(-1)
    rp[D_ALPHA, i] = (1.0 - prm[DRP_G]) * rp[D_ALPHA, i]
    d = np.int64(now_ns) + _ns(prm[DRP_ALPHA_T])
    rp[D_ALPHA_DEADLINE, i] = d
    return d
