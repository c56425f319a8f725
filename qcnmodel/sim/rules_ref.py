"""QCN CP and RP rules as small plain-Python classes: the oracle's rules.

Each method mirrors the pseudo-code of ``qcn-algorithm.md`` §1 and §2.2 line by line and
cites its sources. The compiled twin :mod:`qcnmodel.sim.rules` must give identical results
bit for bit: both draw ``U = 1 + J (2u - 1)`` with ``u = uniform01(seed, stream, counter)`` on
the same streams (``stream_key(STREAM_CP, index)`` for a CP; ``STREAM_RP_BC`` and
``STREAM_RP_TIMER`` for an RL), in the same order, with the same float expressions.

Return conventions (same as :mod:`qcnmodel.sim.rules`):

* ``CongestionPoint.on_arrival(q_bytes, frame_bytes) -> (cnm, qfb, qoff, qdelta)``;
  ``(False, 0, 0.0, 0.0)`` when the frame is not sampled (``last_sampled`` tells).
* ``ReactionPoint.on_cnm(qfb, cpid, now_ns) -> deadline`` (int ns; -1 if ignored).
* ``ReactionPoint.on_tx(nbytes, now_ns) -> status`` (0 none, 1 increase, 2 released).
* ``ReactionPoint.on_timer(gen, now_ns) -> deadline`` (-1: stale, inactive, lazy, released).
* ``ReactionPoint.on_drift() -> status``.

``as_array()`` returns the state in the field layout of :mod:`qcnmodel.sim.rules` (for tests).
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.sim import rules as _r
from qcnmodel.sim.rng import (
    STREAM_CP,
    STREAM_RP_BC,
    STREAM_RP_TIMER,
    jitter_py,
    stream_key_py,
    uniform01_py,
)

__all__ = ["CongestionPoint", "ReactionPoint", "quantise_py", "table_index_py"]

TX_NONE, TX_INCREASE, TX_RELEASED = 0, 1, 2


def quantise_py(neg_fb: float, qeq: float, w: float, bits: int, mode: str) -> int:
    """Quantise -Fb to ``bits`` bits (qcn-algorithm.md §1.3; vendor guide formula).

    ``x = min(-Fb, Fbmax)``, ``Fbmax = Qeq (2w + 1)`` maps to full scale ``2**bits - 1``.
    ``floor63``: truncation (default); ``round63``: round half up; ``floor64cap``:
    ns-3-dcn's ``min(63, floor(64 x / Fbmax))``; ``msb6``: the top ``bits`` bits of |Fb|
    (2011 OMNeT++ model); ``shift``: ``(x >> k) & full`` with the smallest k such that
    ``Fbmax >> k <= full`` (the correct use of the Linux patch's shift, §6.1). Exact
    integers when -Fb and Fbmax are integral.
    """
    if not neg_fb > 0.0:
        return 0
    full = (1 << int(bits)) - 1
    fbmax = qeq * (2.0 * w + 1.0)
    if mode == "msb6":
        v = math.floor(neg_fb)
        return v if v <= full else v >> (v.bit_length() - int(bits))
    x = min(neg_fb, fbmax)
    if mode == "shift":
        fm, k = math.floor(fbmax), 0
        while (fm >> k) > full:
            k += 1
        return (math.floor(x) >> k) & full
    if x == math.floor(x) and fbmax == math.floor(fbmax):
        xi, fi = int(x), int(fbmax)
        if mode == "round63":
            return (2 * full * xi + fi) // (2 * fi)
        if mode == "floor64cap":
            return min(full, ((full + 1) * xi) // fi)
        return (full * xi) // fi
    if mode == "round63":
        return math.floor(full * x / fbmax + 0.5)
    if mode == "floor64cap":
        return min(full, math.floor((full + 1) * x / fbmax))
    return math.floor(full * x / fbmax)


def table_index_py(qfb: int, bits: int) -> int:
    """Top 3 bits of qFb on the ``bits`` scale: qFb >> 3 for 6 bits (§1.4 table index)."""
    return qfb >> (bits - 3) if bits >= 3 else qfb << (3 - bits)


def _ns(seconds: float) -> int:
    """Seconds -> integer ns, rounding half up."""
    return math.floor(seconds * 1e9 + 0.5)


class CongestionPoint:
    """One CP: an egress queue (port x priority) that samples and sends CNMs (§1).

    Parameters
    ----------
    params : QCNParams
    seed : int
        Run seed.
    index : int
        CP index j (its random stream is ``stream_key(STREAM_CP, j)``).
    """

    def __init__(self, params, seed: int, index: int) -> None:
        self.p = params
        self.seed = int(seed)
        self.index = int(index)
        self.stream = stream_key_py(STREAM_CP, index)
        self.table = [float(v) for v in params.sample_table()]
        self.qold = 0.0  # Qold, bytes (initial value N/S: 0)
        self.to_sample = 0.0  # byte countdown, drawn at the first arrival
        self.rng = 0  # draw counter
        self.initialised = False
        self.n_samples = 0
        self.n_cnm = 0
        self.last_qfb = 0
        self.last_sampled = False

    def _u(self) -> float:
        """Jitter factor U() in [1-J, 1+J) (§1.4 "30% randomness", seeds 001/002)."""
        u = uniform01_py(self.seed, self.stream, self.rng)
        self.rng += 1
        return jitter_py(self.p.jitter, u)

    def _interval(self, qfb: int) -> float:
        """Sampling interval in bytes: table[qFb >> 3] (§1.4 table) or frame_size / Ps (fixed)."""
        if self.p.sampling == "fixed":
            return self.p.frame_size / self.p.ps_fixed
        return self.table[table_index_py(qfb, self.p.fb_bits)]

    def on_arrival(self, q_bytes: float, frame_bytes: float):
        """Frame arrival; Q includes the frame (§1.1). Returns (cnm, qfb, qoff, qdelta).

        §1.4: ``to_sample -= frame_bytes``; sample when <= 0. §1.2: Qoff = Q - Qeq,
        Qdelta = Q - Qold, Fb = -(Qoff + w Qdelta); CNM iff Fb < 0 (vendor guide; seed 002
        "Fb < 0"), and qFb > 0 under ``cnm_requires_qfb_positive`` (ns-3-dcn). Qold = Q at
        every sample (ns-3-dcn, OMNeT++, Linux patch). Reload table[qFb >> 3]·U(), index 0 when
        Fb >= 0. Initial countdown (N/S): table[0]·U() at the first arrival.
        """
        self.last_sampled = False
        if not self.initialised:
            self.initialised = True
            self.to_sample = self._interval(0) * self._u()
        self.to_sample -= frame_bytes
        if self.to_sample > 0.0:
            return False, 0, 0.0, 0.0
        qoff = q_bytes - self.p.qeq
        qdelta = q_bytes - self.qold
        fb = -(qoff + self.p.w * qdelta)
        qfb = 0
        if fb < 0.0:
            qfb = quantise_py(-fb, self.p.qeq, self.p.w, self.p.fb_bits, self.p.quantiser)
        cnm = fb < 0.0 and (not self.p.cnm_requires_qfb_positive or qfb > 0)
        self.qold = q_bytes
        self.to_sample = self._interval(qfb) * self._u()
        self.n_samples += 1
        self.last_qfb = qfb
        self.n_cnm += int(cnm)
        self.last_sampled = True
        return cnm, qfb, qoff, qdelta

    def as_array(self) -> np.ndarray:
        """State in the ``rules.CP_*`` field layout."""
        a = np.zeros(_r.CP_NFIELDS)
        a[_r.CP_QOLD] = self.qold
        a[_r.CP_TO_SAMPLE] = self.to_sample
        a[_r.CP_RNG] = self.rng
        a[_r.CP_INIT] = float(self.initialised)
        a[_r.CP_NSAMPLES] = self.n_samples
        a[_r.CP_NCNM] = self.n_cnm
        a[_r.CP_LAST_QFB] = self.last_qfb
        return a


class ReactionPoint:
    """One rate limiter (RL) of a reaction point (§2.1-2.2).

    Parameters
    ----------
    params : QCNParams
    seed : int
        Run seed.
    index : int
        RL index i (streams ``stream_key(STREAM_RP_BC, i)`` and ``(STREAM_RP_TIMER, i)``).
    line_rate : float or None
        CR = TR of the inactive RL before its first CNM (the rules never read them while
        inactive); default ``params.line_rate``, as ``rules.new_rp_state(n, line_rate)``.
    """

    def __init__(self, params, seed: int, index: int, line_rate: float | None = None) -> None:
        self.p = params
        self.seed = int(seed)
        self.index = int(index)
        self.bc_stream = stream_key_py(STREAM_RP_BC, index)
        self.timer_stream = stream_key_py(STREAM_RP_TIMER, index)
        self.active = False
        self.cr = self.tr = float(params.line_rate if line_rate is None else line_rate)
        self.bc_stage = 0
        self.t_stage = 0
        self.bc_left = 0.0
        self.timer_gen = 0
        self.bc_rng = 0
        self.timer_rng = 0
        self.hai_count = 0
        self.cpid = 0
        self.deadline = -1  # pending timer deadline, ns
        self.n_cnm = 0
        self.n_release = 0

    # -- random draws --------------------------------------------------------------
    def _u_bc(self) -> float:
        """U() for the byte counter (seed 001: "30%" randomness on BC_LIMIT)."""
        u = uniform01_py(self.seed, self.bc_stream, self.bc_rng)
        self.bc_rng += 1
        return jitter_py(self.p.jitter, u)

    def _u_timer(self) -> float:
        """U() for the timer (seed 001: "30%" randomness on TIMER_PERIOD)."""
        u = uniform01_py(self.seed, self.timer_stream, self.timer_rng)
        self.timer_rng += 1
        return jitter_py(self.p.jitter, u)

    # -- rules -----------------------------------------------------------------------
    def cycle_factor(self, own: int, other: int) -> float:
        """Cycle halving (§2.3; seed 002 "150KB/cycle" then "75KB/cycle", TIMER_PERIOD/2).

        ``after_fr`` (default): halve once the counter's own stage >= FR_TH; ``one_late``
        (ns-3-dcn): stage > FR_TH; ``hai_only`` (ns3-rdma; our reading): both stages >=
        FR_TH; ``off`` (seed 000 "no cycle shrinking").
        """
        fr_th, mode = self.p.fr_th, self.p.cycle_halving
        if mode == "after_fr":
            return 0.5 if own >= fr_th else 1.0
        if mode == "one_late":
            return 0.5 if own > fr_th else 1.0
        if mode == "hai_only":
            return 0.5 if min(own, other) >= fr_th else 1.0
        return 1.0

    def _release(self) -> None:
        """Release at CR = C (§2.3 "Release"): RL inactive, timer cancelled, counters frozen."""
        self.active = False
        self.timer_gen += 1  # the pending timer event becomes stale
        self.deadline = -1
        self.n_release += 1

    def self_increase(self, own_stage: int) -> bool:
        """Rate increase at a counter expiry (§2.2 ``self_increase``). True iff released.

        Seed 002: FR while both stages < FR_TH, AI when one is past it (TR += R_AI), HAI when
        both are ("event numbered i: TR = TR + i·R_HAI", i = min(stages) - FR_TH as ns-3-dcn's
        "pseudocode v2.2"; ``hai_index=event_count``: i counts HAI events; ``hai=off``: R_AI).
        Seed 002: "if the first cycle of byte-counter/timer expires and TR > 10·CR: TR = TR/8"
        (``tr_div8``: own_first / either / off), then CR = (CR + TR)/2 (averaging principle).
        """
        p = self.p
        fr_th = p.fr_th
        lo = min(self.bc_stage, self.t_stage)
        hi = max(self.bc_stage, self.t_stage)
        if lo > fr_th:  # HAI: both counters past FR
            if p.hai:
                if p.hai_index == "event_count":
                    self.hai_count += 1
                    inc = p.r_hai * self.hai_count
                else:
                    inc = p.r_hai * (lo - fr_th)
            else:
                inc = p.r_ai
        elif hi > fr_th:  # AI: one counter past FR
            inc = p.r_ai
        else:  # FR
            inc = 0.0
        if p.tr_div8 == "own_first":
            first = own_stage == 1
        elif p.tr_div8 == "either":
            first = self.bc_stage == 1 or self.t_stage == 1
        else:
            first = False
        if first and self.tr > 10.0 * self.cr:
            self.tr = self.tr / 8.0
        else:
            self.tr = self.tr + inc
        c = p.line_rate
        self.cr = min(c, (self.cr + self.tr) / 2.0)
        if self.cr >= c:
            self._release()
            return True
        return False

    def on_cnm(self, qfb: int, cpid: int, now_ns: int) -> int:
        """CNM (§2.2 ``on_cnm``). Returns the new timer deadline in ns (-1 if ignored).

        First CNM creates the RL at CR = TR = C. Seed 002: "if si_bcount != 0, TR = CR"
        (``CR == C`` covers a fresh RL); "CR = CR·(1 - Gd·|Fb|)" bounded by MIN_DEC
        (RpgMinDecFac) and MIN_RATE (RpgMinRate); "both reset by Fb < 0"; byte counter
        reloaded with BC_LIMIT·U() (``bc_reload_on_cnm=tr_reset_only``: only with the TR
        reset, ns-3-dcn); timer re-armed at now + T·U(). ``cnm_requires_qfb_positive``:
        qFb = 0 is ignored (ns-3-dcn).
        """
        p = self.p
        if p.cnm_requires_qfb_positive and qfb <= 0:
            return -1
        c = p.line_rate
        if not self.active:
            self.active = True
            self.cr = self.tr = c
            self.bc_stage = self.t_stage = 0
        tr_reset = self.cr == c or self.bc_stage != 0
        if tr_reset:
            self.tr = self.cr
        self.cr = max(p.min_rate, self.cr * max(1.0 - p.gd * qfb, 1.0 - p.min_dec))
        self.bc_stage = self.t_stage = 0
        self.hai_count = 0
        if p.bc_reload_on_cnm == "always" or tr_reset:
            self.bc_left = p.bc_limit * self._u_bc()
        self.timer_gen += 1
        self.deadline = int(now_ns) + _ns(p.timer * self._u_timer())
        self.cpid = cpid
        self.n_cnm += 1
        return self.deadline

    def _timer_expiry(self, base_ns: int) -> int:
        """One timer expiry (§2.2 ``on_timer``): t_stage += 1, re-arm, self-increase."""
        self.t_stage += 1
        f = self.cycle_factor(self.t_stage, self.bc_stage)
        self.deadline = int(base_ns) + _ns(self.p.timer * f * self._u_timer())
        if self.self_increase(self.t_stage):
            return -1
        return self.deadline

    def on_tx(self, nbytes: float, now_ns: int) -> int:
        """Data frame released by this RL (§2.2 ``on_tx``). Returns 0, 1 or 2.

        Byte counter: BC_LIMIT per cycle, halved from the FR_TH-th expiry on (seed 002); the
        overshoot is dropped. ``timer_mode=lazy`` (ns-3-dcn, §6.4): missed timer expiries
        (deadline <= now) are replayed first, each re-armed from the previous deadline.
        """
        if not self.active:
            return TX_NONE
        status = TX_NONE
        if self.p.timer_mode == "lazy":
            while 0 <= self.deadline <= now_ns:
                if self._timer_expiry(self.deadline) < 0:
                    return TX_RELEASED
                status = TX_INCREASE
        self.bc_left -= nbytes
        if self.bc_left <= 0.0:
            self.bc_stage += 1
            f = self.cycle_factor(self.bc_stage, self.t_stage)
            self.bc_left = self.p.bc_limit * f * self._u_bc()
            if self.self_increase(self.bc_stage):
                return TX_RELEASED
            status = TX_INCREASE
        return status

    def on_timer(self, gen: int, now_ns: int) -> int:
        """Timer event (§2.2 ``on_timer``; §6.4: a real event, fires for idle flows too).

        Returns the next deadline (ns), or -1 if ``gen`` is stale, the RL is inactive, the
        timer mode is lazy, or the expiry released the RL.
        """
        if not self.active or gen != self.timer_gen or self.p.timer_mode == "lazy":
            return -1
        return self._timer_expiry(now_ns)

    def on_drift(self) -> int:
        """Drift (§4.5 proposal; seed 000 "4 Mb/s every 20 ms", seeds 003/004 factor 1.005).

        CR <- min(C, (CR + drift_inc)·drift_factor) while active; release at C.
        """
        p = self.p
        if not self.active or (p.drift_inc == 0.0 and p.drift_factor == 1.0):
            return TX_NONE
        self.cr = min(p.line_rate, (self.cr + p.drift_inc) * p.drift_factor)
        if self.cr >= p.line_rate:
            self._release()
            return TX_RELEASED
        return TX_INCREASE

    def as_array(self) -> np.ndarray:
        """State in the ``rules.RP_*`` field layout."""
        a = np.zeros(_r.RP_NFIELDS)
        a[_r.RP_ACTIVE] = float(self.active)
        a[_r.RP_CR] = self.cr
        a[_r.RP_TR] = self.tr
        a[_r.RP_BC_STAGE] = self.bc_stage
        a[_r.RP_T_STAGE] = self.t_stage
        a[_r.RP_BC_LEFT] = self.bc_left
        a[_r.RP_TIMER_GEN] = self.timer_gen
        a[_r.RP_RNG_BC] = self.bc_rng
        a[_r.RP_RNG_TIMER] = self.timer_rng
        a[_r.RP_HAI_COUNT] = self.hai_count
        a[_r.RP_CPID] = self.cpid
        a[_r.RP_DEADLINE] = self.deadline
        a[_r.RP_NCNM] = self.n_cnm
        a[_r.RP_NRELEASE] = self.n_release
        return a
