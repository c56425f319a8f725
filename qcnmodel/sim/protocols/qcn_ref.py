"""QCN CP and RP rules as small plain-Python classes: the oracle's rules.

Each method follows the rules of IEEE 802.1Qau as the sources state them and cites them: the
CP formula and quantiser in the wording of a switch vendor's QCN configuration guide, the RP
state machine of Stanford's "QCN: Description and Benchmark Simulations" (seed 002; its
randomness from Stanford's NetFPGA deck, seed 001), and the behaviour of public
implementations where the decks are silent (ns-3-dcn, ns3-rdma, a 2011 OMNeT++ model, a Linux
qdisc patch). The options of the QCN variants that change these rules (Fb-hat, extra fast
recovery, TO_THRESH, QCN+, the auxiliary timer) are constructor arguments, off by default;
their sources are in :mod:`.qcn_variants`, whose twin :mod:`.qcn_variants_ref` adds the
variants' own events.

The compiled twin :mod:`.qcn` must give identical results bit for bit: both draw
``U = 1 + J (2u - 1)`` with ``u = uniform01(seed, stream, counter)`` on the same streams
(``stream_key(STREAM_CP, index)`` for a CP; ``STREAM_RP_BC``, ``STREAM_RP_TIMER`` and
``STREAM_AUX`` for an RL), in the same order, with the same float expressions.

Return conventions (same as :mod:`.qcn`):

* ``CongestionPoint.on_arrival(q_bytes, frame_bytes) -> (cnm, qfb, qoff, qdelta)``;
  ``(False, 0, 0.0, 0.0)`` when the frame is not sampled (``last_sampled`` tells).
* ``ReactionPoint.on_cnm(qfb, cpid, now_ns, qoff=0, qdelta=0) -> deadline`` (int ns; -1 if
  ignored).
* ``ReactionPoint.on_tx(nbytes, now_ns) -> status`` (0 none, 1 increase, 2 released).
* ``ReactionPoint.on_timer(gen, now_ns) -> deadline`` (-1: stale, inactive, lazy, released).
* ``ReactionPoint.on_drift() -> status``.

``as_array()`` returns the state in the layout of :mod:`.qcn_layout` (for tests).
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.sim.protocols import qcn_layout as _l
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
    """Quantise -Fb to ``bits`` bits (IEEE 802.1Qau; the vendor guide's formula).

    ``x = min(-Fb, Fbmax)``, ``Fbmax = Qeq (2w + 1)`` maps to full scale ``2**bits - 1``.
    ``floor63``: truncation (default); ``round63``: round half up; ``floor64cap``:
    ns-3-dcn's ``min(63, floor(64 x / Fbmax))``; ``msb6``: the top ``bits`` bits of |Fb|
    (2011 OMNeT++ model); ``shift``: ``(x >> k) & full`` with the smallest k such that
    ``Fbmax >> k <= full`` (the correct use of the Linux patch's shift, whose fixed k = 13
    is a pitfall). Exact integers when -Fb and Fbmax are integral.
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
    """Top 3 bits of qFb on the ``bits`` scale: qFb >> 3 for 6 bits (the sampling table)."""
    return qfb >> (bits - 3) if bits >= 3 else qfb << (3 - bits)


def _ns(seconds: float) -> int:
    """Seconds -> integer ns, rounding half up."""
    return math.floor(seconds * 1e9 + 0.5)


class CongestionPoint:
    """One CP: an egress queue (port x priority) that samples and sends CNMs.

    Parameters
    ----------
    params : QCNParams
    seed : int
        Run seed.
    index : int
        CP index j (its random stream is ``stream_key(STREAM_CP, j)``).
    fbhat : FbHatParams, optional
        Fb-hat (QCN-H, Teak's deck, seed 003); default off.
    """

    def __init__(self, params, seed: int, index: int, fbhat=None) -> None:
        self.p = params
        self.fbhat = fbhat
        self.seed = int(seed)
        self.index = int(index)
        self.stream = stream_key_py(STREAM_CP, index)
        self.table = [float(v) for v in params.sample_table()]
        self.qold = 0.0  # Qold, bytes (initial value unspecified: 0)
        self.to_sample = 0.0  # byte countdown, drawn at the first arrival
        self.rng = 0  # draw counter
        self.initialised = False
        self.n_samples = 0
        self.n_cnm = 0
        self.last_qfb = 0
        self.last_sampled = False
        self.bytes = 0.0  # bytes since the last sample (Fb-hat)
        self.fbhat_state = 0.0  # averaged Fb (Fb-hat ewma)
        self.nc_since = -1  # SONAR: Q below the threshold since (ns)
        self.n_probes = 0

    def _u(self) -> float:
        """Jitter factor U() in [1-J, 1+J) ("30% randomness", seeds 001/002)."""
        u = uniform01_py(self.seed, self.stream, self.rng)
        self.rng += 1
        return jitter_py(self.p.jitter, u)

    def _interval(self, qfb: int) -> float:
        """Sampling interval in bytes: table[qFb >> 3] (the 802.1Qau table) or frame_size / Ps
        (fixed sampling)."""
        if self.p.sampling == "fixed":
            return self.p.frame_size / self.p.ps_fixed
        return self.table[table_index_py(qfb, self.p.fb_bits)]

    def _feedback(self, qoff: float, qdelta: float) -> tuple[float, float]:
        """(Fb, the Qdelta the CNM carries): -(Qoff + w Qdelta), or Fb-hat's normalised
        derivative (Qdelta x ref / bytes since the last sample) or averaged Fb."""
        p, fh = self.p, self.fbhat
        if fh is not None and fh.mode == "normalised":
            ref = p.sample_base if fh.ref_interval is None else fh.ref_interval
            qdelta = qdelta * (ref / self.bytes)
            return -(qoff + p.w * qdelta), qdelta
        if fh is not None and fh.mode == "ewma":
            g = fh.ewma_gain
            self.fbhat_state = (1.0 - g) * self.fbhat_state + g * (-(qoff + p.w * qdelta))
            return self.fbhat_state, qdelta
        return -(qoff + p.w * qdelta), qdelta

    def on_arrival(self, q_bytes: float, frame_bytes: float):
        """Frame arrival; Q includes the frame. Returns (cnm, qfb, qoff, qdelta).

        ``to_sample -= frame_bytes``; sample when <= 0. Qoff = Q - Qeq, Qdelta = Q - Qold,
        Fb = -(Qoff + w Qdelta); CNM iff Fb < 0 (vendor guide; seed 002 "Fb < 0"), and
        qFb > 0 under ``cnm_requires_qfb_positive`` (ns-3-dcn). Qold = Q at every sample
        (ns-3-dcn, OMNeT++, Linux patch). Reload table[qFb >> 3]·U(), index 0 when Fb >= 0.
        Initial countdown (unspecified): table[0]·U() at the first arrival.
        """
        self.last_sampled = False
        if not self.initialised:
            self.initialised = True
            self.to_sample = self._interval(0) * self._u()
        self.bytes += frame_bytes
        self.to_sample -= frame_bytes
        if self.to_sample > 0.0:
            return False, 0, 0.0, 0.0
        p = self.p
        qoff = q_bytes - p.qeq
        fb, qdelta = self._feedback(qoff, q_bytes - self.qold)
        self.bytes = 0.0
        qfb = 0
        if fb < 0.0:
            qfb = quantise_py(-fb, p.qeq, p.w, p.fb_bits, p.quantiser)
        cnm = fb < 0.0 and (not p.cnm_requires_qfb_positive or qfb > 0)
        self.qold = q_bytes
        self.to_sample = self._interval(qfb) * self._u()
        self.n_samples += 1
        self.last_qfb = qfb
        self.n_cnm += int(cnm)
        self.last_sampled = True
        return cnm, qfb, qoff, qdelta

    def as_array(self) -> np.ndarray:
        """State in the ``CP_*`` row layout."""
        a = np.zeros(_l.CP_NFIELDS)
        a[_l.CP_QOLD] = self.qold
        a[_l.CP_TO_SAMPLE] = self.to_sample
        a[_l.CP_RNG] = self.rng
        a[_l.CP_INIT] = float(self.initialised)
        a[_l.CP_NSAMPLES] = self.n_samples
        a[_l.CP_NCNM] = self.n_cnm
        a[_l.CP_LAST_QFB] = self.last_qfb
        a[_l.CV_BYTES] = self.bytes
        a[_l.CV_FBHAT_STATE] = self.fbhat_state
        a[_l.CV_NC_SINCE] = self.nc_since
        a[_l.CV_NPROBES] = self.n_probes
        return a


class ReactionPoint:
    """One rate limiter (RL) of a reaction point.

    Parameters
    ----------
    params : QCNParams
    seed : int
        Run seed.
    index : int
        RL index i (streams ``stream_key(STREAM_RP_BC, i)``, ``(STREAM_RP_TIMER, i)`` and
        ``(STREAM_AUX, i)``).
    line_rate : float or None
        CR = TR of the inactive RL before its first CNM (the rules never read them while
        inactive); default ``params.line_rate``, as ``new_rp_state(n, line_rate)``.
    efr, plus, probe, sonar : optional
        The options of the variants that change these rules (:mod:`.qcn_variants`): extra
        fast recovery and TO_THRESH (EFRParams), QCN+ (QCNPlusParams), and the auxiliary
        timer armed after a negative feedback (ProbeParams, SonarParams). None = off.
    """

    def __init__(self, params, seed: int, index: int, line_rate: float | None = None, *,
                 efr=None, plus=None, probe=None, sonar=None) -> None:  # fmt: skip
        self.p = params
        self.efr, self.plus, self.probe, self.sonar = efr, plus, probe, sonar
        self.seed = int(seed)
        self.index = int(index)
        self.bc_stream = stream_key_py(STREAM_RP_BC, index)
        self.timer_stream = stream_key_py(STREAM_RP_TIMER, index)
        self.aux_stream = stream_key_py(_l.STREAM_AUX, index)
        self.gain = plus.loop_gain() if plus is not None else 1.0
        self.aux_jitter = (
            probe.jitter if probe is not None else params.jitter if sonar is not None else 0.0
        )
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
        self.last_qfb = 0
        self.last_neg_ns = -1
        self.aux_gen = 0
        self.aux_deadline = -1
        self.aux_rng = 0
        self.send = False
        self.arm = -1
        self.phase = _l.PHASE_IDLE
        self.boosts = 0
        self.n_pos = 0
        self.n_ignored = 0

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

    def _u_aux(self) -> float:
        """U() for the auxiliary (probe or SONAR) timer."""
        u = uniform01_py(self.seed, self.aux_stream, self.aux_rng)
        self.aux_rng += 1
        return jitter_py(self.aux_jitter, u)

    def _arm_aux(self, period: float, now_ns: int) -> int:
        """(Re-)arm the auxiliary timer at now + period U() (new generation)."""
        self.aux_gen += 1
        self.aux_deadline = int(now_ns) + _ns(period * self._u_aux())
        self.arm = self.aux_deadline
        return self.aux_deadline

    # -- rules -----------------------------------------------------------------------
    def cycle_factor(self, own: int, other: int) -> float:
        """Cycle halving (seed 002 "150KB/cycle" then "75KB/cycle", TIMER_PERIOD/2).

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
        """Release at CR = C: RL inactive, timers cancelled, counters frozen."""
        self.active = False
        self.timer_gen += 1  # the pending timer event becomes stale
        self.deadline = -1
        self.n_release += 1
        if self.probe is not None or self.sonar is not None:
            self.aux_gen += 1
            self.aux_deadline = -1
            self.arm = -1
            self.phase = _l.PHASE_IDLE

    def _increase_step(self) -> float:
        """TR step of an expiry (seed 002): 0 in fast recovery (both stages <= FR_TH), R_AI
        when one is past it, in HAI (both are) "TR = TR + i·R_HAI" with i = min(stages) -
        FR_TH (ns-3-dcn's "pseudocode v2.2"; ``hai_index=event_count``: i counts HAI events;
        ``hai=off``: R_AI)."""
        p = self.p
        lo = min(self.bc_stage, self.t_stage)
        if lo > p.fr_th:
            if not p.hai:
                return p.r_ai
            if p.hai_index == "event_count":
                self.hai_count += 1
                return p.r_hai * self.hai_count
            return p.r_hai * (lo - p.fr_th)
        if max(self.bc_stage, self.t_stage) > p.fr_th:
            return p.r_ai
        return 0.0

    def self_increase(self, own_stage: int) -> bool:
        """Rate increase at a counter expiry. True iff released.

        TR += the step (x QCN+'s loop gain), or seed 002's "if the first cycle of
        byte-counter/timer expires and TR > 10·CR: TR = TR/8" (``tr_div8``: own_first /
        either / off); then CR = (CR + TR)/2 (averaging principle), or, with extra fast
        recovery in fast recovery, CR moves ``efr_fraction`` of the way (EFR MAX: all of it
        at the first expiry).
        """
        p = self.p
        inc = self._increase_step() * self.gain
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
        e = self.efr
        if e is not None and e.efr and max(self.bc_stage, self.t_stage) <= p.fr_th:
            if e.efr_max and own_stage == 1:
                cr = self.tr
            else:
                cr = self.cr + (self.tr - self.cr) * e.efr_fraction
        else:
            cr = (self.cr + self.tr) / 2.0
        self.cr = min(c, cr)
        if self.cr >= c:
            self._release()
            return True
        return False

    def bc_base(self) -> float:
        """Byte-counter cycle: BC_LIMIT; TO_THRESH (seed 000 "packet_size / P_sample") and
        QCN+ max(., RTT 2 rate)."""
        p = self.p
        mode = self.efr.to_thresh if self.efr is not None else "bc_limit"
        if mode == "psample":
            base = p.frame_size / p.ps
        elif mode == "cnm":
            if p.sampling == "fixed":
                base = p.frame_size / p.ps_fixed
            else:
                base = float(p.sample_table()[table_index_py(int(self.last_qfb), p.fb_bits)])
        else:
            base = p.bc_limit
        if self.plus is not None and self.plus.to_thresh_rtt:
            base = max(base, self.plus.rtt * 2.0 * self.cr / 8.0)
        return base

    def _plus_feedback(self, qoff: float, qdelta: float, now_ns: int) -> int:
        """QCN+ (seed 000, r1.01): one negative per RTT, Fb recomputed with W(RTT, N) and
        quantised; -1 if ignored."""
        p, pl = self.p, self.plus
        last = self.last_neg_ns
        if pl.one_neg_per_rtt and last >= 0 and now_ns - last < _ns(pl.rtt):
            self.n_ignored += 1
            return -1
        cr0 = self.cr if self.active else p.line_rate
        base_w = p.w if pl.base_w is None else pl.base_w
        link = p.line_rate if pl.link_capacity is None else pl.link_capacity
        w = base_w + pl.rtt * pl.w_factor / (link / cr0)
        fb = -(qoff + w * qdelta)
        if not fb < 0.0:
            self.n_ignored += 1
            return -1
        return quantise_py(-fb, p.qeq, base_w, p.fb_bits, p.quantiser)

    def on_cnm(self, qfb: int, cpid: int, now_ns: int, qoff=0.0, qdelta=0.0) -> int:
        """CNM. Returns the new timer deadline in ns (-1 if ignored).

        First CNM creates the RL at CR = TR = C. Seed 002: "if si_bcount != 0, TR = CR"
        (``CR == C`` covers a fresh RL); "CR = CR·(1 - Gd·|Fb|)" bounded by MIN_DEC
        (RpgMinDecFac) and MIN_RATE (RpgMinRate); "both reset by Fb < 0"; byte counter
        reloaded with bc_base·U() (``bc_reload_on_cnm=tr_reset_only``: only with the TR
        reset, ns-3-dcn); timer re-armed at now + T·U(). ``cnm_requires_qfb_positive``:
        qFb = 0 is ignored (ns-3-dcn). Probes and SONAR then arm the auxiliary timer.
        """
        p = self.p
        if self.plus is not None:
            qfb = self._plus_feedback(qoff, qdelta, now_ns)
            if qfb < 0:
                return -1
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
        self.last_qfb = qfb
        if p.bc_reload_on_cnm == "always" or tr_reset:
            self.bc_left = self.bc_base() * self._u_bc()
        self.timer_gen += 1
        self.deadline = int(now_ns) + _ns(p.timer * self._u_timer())
        self.cpid = cpid
        self.n_cnm += 1
        self.last_neg_ns = int(now_ns)
        if self.probe is not None and self.aux_deadline < 0:
            self._arm_aux(self.probe.interval, now_ns)
        if self.sonar is not None:
            self.phase = _l.PHASE_WAIT
            self.boosts = 0
            self._arm_aux(self.sonar.wp_timer, now_ns)
        return self.deadline

    def _timer_expiry(self, base_ns: int) -> int:
        """One timer expiry: t_stage += 1, re-arm, self-increase."""
        self.t_stage += 1
        f = self.cycle_factor(self.t_stage, self.bc_stage)
        self.deadline = int(base_ns) + _ns(self.p.timer * f * self._u_timer())
        if self.self_increase(self.t_stage):
            return -1
        return self.deadline

    def on_tx(self, nbytes: float, now_ns: int) -> int:
        """Data frame released by this RL. Returns 0, 1 or 2.

        Byte counter: bc_base per cycle, halved from the FR_TH-th expiry on (seed 002); the
        overshoot is dropped. ``timer_mode=lazy`` (ns-3-dcn): missed timer expiries
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
            self.bc_left = self.bc_base() * f * self._u_bc()
            if self.self_increase(self.bc_stage):
                return TX_RELEASED
            status = TX_INCREASE
        return status

    def on_timer(self, gen: int, now_ns: int) -> int:
        """Timer event (a real event, so it fires for idle flows too; ns-3-dcn's lazy timer is
        the variant). Returns the next deadline (ns), or -1 if ``gen`` is stale, the RL is
        inactive, the timer mode is lazy, or the expiry released the RL."""
        if not self.active or gen != self.timer_gen or self.p.timer_mode == "lazy":
            return -1
        return self._timer_expiry(now_ns)

    def on_drift(self) -> int:
        """Drift (seed 000 "4 Mb/s every 20 ms", seeds 003/004 factor 1.005).

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
        """State in the ``RP_*`` / ``RV_*`` row layout."""
        a = np.zeros(_l.RP_NFIELDS)
        rows = (
            (_l.RP_ACTIVE, float(self.active)), (_l.RP_CR, self.cr), (_l.RP_TR, self.tr),
            (_l.RP_BC_STAGE, self.bc_stage), (_l.RP_T_STAGE, self.t_stage),
            (_l.RP_BC_LEFT, self.bc_left), (_l.RP_TIMER_GEN, self.timer_gen),
            (_l.RP_RNG_BC, self.bc_rng), (_l.RP_RNG_TIMER, self.timer_rng),
            (_l.RP_HAI_COUNT, self.hai_count), (_l.RP_CPID, self.cpid),
            (_l.RP_DEADLINE, self.deadline), (_l.RP_NCNM, self.n_cnm),
            (_l.RP_NRELEASE, self.n_release), (_l.RV_LAST_QFB, self.last_qfb),
            (_l.RV_LAST_NEG_NS, self.last_neg_ns), (_l.RV_AUX_GEN, self.aux_gen),
            (_l.RV_AUX_DEADLINE, self.aux_deadline), (_l.RV_AUX_RNG, self.aux_rng),
            (_l.RV_SEND, float(self.send)), (_l.RV_ARM, self.arm), (_l.RV_PHASE, self.phase),
            (_l.RV_BOOSTS, self.boosts), (_l.RV_NPOS, self.n_pos),
            (_l.RV_NIGNORED, self.n_ignored),
        )  # fmt: skip
        for row, v in rows:
            a[row] = v
        return a
