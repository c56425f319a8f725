"""QCN variants as plain-Python classes: the oracle twin of :mod:`qcnmodel.sim.rules_variants`.

Subclasses of :class:`qcnmodel.sim.rules_ref.CongestionPoint` / ``ReactionPoint`` with the
options of the compiled module (whose docstring lists the assumptions, items 1-6); same
streams, draw order and float expressions, hence identical results bit for bit.
"""

from __future__ import annotations

import numpy as np

from qcnmodel.sim import rules_variants as _v
from qcnmodel.sim.rng import jitter_py, stream_key_py, uniform01_py
from qcnmodel.sim.rules_ref import (
    CongestionPoint,
    ReactionPoint,
    _ns,
    quantise_py,
    table_index_py,
)

__all__ = ["VariantCongestionPoint", "VariantReactionPoint"]

TX_NONE, TX_INCREASE, TX_RELEASED = 0, 1, 2


class VariantReactionPoint(ReactionPoint):
    """QCN RL with EFR, TO_THRESH, QCN+ gain tuning, probes and SONAR timers.

    Parameters
    ----------
    params : QCNParams
    seed, index : int
    efr, plus, probe, sonar : optional option dataclasses (None = off)
    """

    def __init__(self, params, seed, index, efr=None, plus=None, probe=None, sonar=None,
                 line_rate=None):  # fmt: skip
        super().__init__(params, seed, index, line_rate)
        self.efr, self.plus, self.probe, self.sonar = efr, plus, probe, sonar
        self.aux_stream = stream_key_py(_v.STREAM_AUX, index)
        self.gain = plus.loop_gain() if plus is not None else 1.0
        self.aux_jitter = (
            probe.jitter if probe is not None else params.jitter if sonar is not None else 0.0
        )
        self.last_qfb = 0
        self.last_neg_ns = -1
        self.aux_gen = 0
        self.aux_deadline = -1
        self.aux_rng = 0
        self.send = False
        self.arm = -1
        self.phase = _v.PHASE_IDLE
        self.boosts = 0
        self.n_pos = 0
        self.n_ignored = 0

    # -- helpers -----------------------------------------------------------------
    def _u_aux(self) -> float:
        u = uniform01_py(self.seed, self.aux_stream, self.aux_rng)
        self.aux_rng += 1
        return jitter_py(self.aux_jitter, u)

    def _arm_aux(self, period: float, now_ns: int) -> int:
        self.aux_gen += 1
        self.aux_deadline = int(now_ns) + _ns(period * self._u_aux())
        self.arm = self.aux_deadline
        return self.aux_deadline

    def _release(self) -> None:
        super()._release()
        self.aux_gen += 1
        self.aux_deadline = -1
        self.arm = -1
        self.phase = _v.PHASE_IDLE

    def bc_base(self) -> float:
        """TO_THRESH (seed 000 "packet_size / P_sample") and QCN+ max(., RTT 2 rate)."""
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

    # -- rules -------------------------------------------------------------------
    def self_increase(self, own_stage: int) -> bool:
        """§2.2 increase; AI/HAI steps x loop gain (QCN+); EFR / EFR MAX in fast recovery."""
        p = self.p
        fr_th = p.fr_th
        lo = min(self.bc_stage, self.t_stage)
        hi = max(self.bc_stage, self.t_stage)
        if lo > fr_th:
            if p.hai:
                if p.hai_index == "event_count":
                    self.hai_count += 1
                    inc = p.r_hai * self.hai_count
                else:
                    inc = p.r_hai * (lo - fr_th)
            else:
                inc = p.r_ai
        elif hi > fr_th:
            inc = p.r_ai
        else:
            inc = 0.0
        inc = inc * self.gain
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
        if e is not None and e.efr and hi <= fr_th:
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

    def on_cnm(self, qfb, cpid, now_ns, qoff=0.0, qdelta=0.0) -> int:
        """§2.2 on_cnm; QCN+: one negative per RTT, Fb recomputed with W(RTT, N)."""
        p = self.p
        c = p.line_rate
        pl = self.plus
        if pl is not None:
            last = self.last_neg_ns
            if pl.one_neg_per_rtt and last >= 0 and now_ns - last < _ns(pl.rtt):
                self.n_ignored += 1
                return -1
            cr0 = self.cr if self.active else c
            base_w = p.w if pl.base_w is None else pl.base_w
            link = p.line_rate if pl.link_capacity is None else pl.link_capacity
            w = base_w + pl.rtt * pl.w_factor / (link / cr0)
            fb = -(qoff + w * qdelta)
            if not fb < 0.0:
                self.n_ignored += 1
                return -1
            qfb = quantise_py(-fb, p.qeq, base_w, p.fb_bits, p.quantiser)
        if p.cnm_requires_qfb_positive and qfb <= 0:
            return -1
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
            self.phase = _v.PHASE_WAIT
            self.boosts = 0
            self._arm_aux(self.sonar.wp_timer, now_ns)
        return self.deadline

    def on_tx(self, nbytes, now_ns) -> int:
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

    def on_aux_timer(self, gen, now_ns) -> int:
        """Probe period / SONAR timer expiry: request a probe or ping, re-arm."""
        if not self.active or gen != self.aux_gen:
            return -1
        if self.probe is not None:
            period = self.probe.interval
        elif self.sonar is not None:
            self.phase = _v.PHASE_PING
            period = self.sonar.sf_timer
        else:
            return -1
        self.send = True
        self.aux_deadline = int(now_ns) + _ns(period * self._u_aux())
        return self.aux_deadline

    def take_send(self) -> int:
        if not self.send:
            return -1
        self.send = False
        return int(self.cpid)

    def take_arm(self) -> int:
        d, self.arm = self.arm, -1
        return int(d)

    def on_probe_reply(self, code, qoff, qdelta, cpid, now_ns) -> int:
        """Negative code: a CNM; positive from the own CPID: TR += g C k/full, average."""
        if code < 0.0:
            return self.on_cnm(int(-code), cpid, now_ns, qoff, qdelta)
        if code == 0.0:
            return -1
        if self.probe is None or not self.active or int(cpid) != int(self.cpid):
            self.n_ignored += 1
            return -1
        c = self.p.line_rate
        full = float((1 << self.p.fb_bits) - 1)
        self.tr = self.tr + self.probe.pos_gain * self.gain * c * code / full
        self.cr = min(c, (self.cr + self.tr) / 2.0)
        self.n_pos += 1
        if self.cr >= c:
            self._release()
        return -1

    def on_echo(self, not_congested, now_ns) -> int:
        """SONAR "not congested" echo: boost, hold WE (our reading of seed 000's timers)."""
        if not self.active or self.sonar is None or not not_congested:
            return -1
        c = self.p.line_rate
        self.boosts += 1
        mode = self.sonar.boost
        if mode == "hai":
            self.tr = self.tr + self.p.r_hai * self.boosts * self.gain
            self.cr = min(c, (self.cr + self.tr) / 2.0)
        elif mode == "target":
            self.cr = min(c, self.tr)
        else:
            self.cr = c
        if self.cr >= c:
            self._release()
            return -1
        self.phase = _v.PHASE_HOLD
        return self._arm_aux(self.sonar.we_timer, now_ns)

    def as_array(self) -> np.ndarray:
        a = np.zeros(_v.RV_NFIELDS)
        a[: len(super().as_array())] = super().as_array()
        a[_v.RV_LAST_QFB] = self.last_qfb
        a[_v.RV_LAST_NEG_NS] = self.last_neg_ns
        a[_v.RV_AUX_GEN] = self.aux_gen
        a[_v.RV_AUX_DEADLINE] = self.aux_deadline
        a[_v.RV_AUX_RNG] = self.aux_rng
        a[_v.RV_SEND] = float(self.send)
        a[_v.RV_ARM] = self.arm
        a[_v.RV_PHASE] = self.phase
        a[_v.RV_BOOSTS] = self.boosts
        a[_v.RV_NPOS] = self.n_pos
        a[_v.RV_NIGNORED] = self.n_ignored
        return a


class VariantCongestionPoint(CongestionPoint):
    """QCN CP with Fb-hat (QCN-H), probe replies and SONAR's "not congested" state."""

    def __init__(self, params, seed, index, fbhat=None, sonar=None) -> None:
        super().__init__(params, seed, index)
        self.fbhat, self.sonar = fbhat, sonar
        self.bytes = 0.0
        self.fbhat_state = 0.0
        self.nc_since = -1
        self.n_probes = 0

    def on_arrival(self, q_bytes, frame_bytes):
        """§1.2-1.4 with Fb-hat: normalised Qdelta (ref / bytes since last sample) or EWMA."""
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
        qdelta = q_bytes - self.qold
        fh = self.fbhat
        if fh is not None and fh.mode == "normalised":
            ref = p.sample_base if fh.ref_interval is None else fh.ref_interval
            qdelta = qdelta * (ref / self.bytes)
            fb = -(qoff + p.w * qdelta)
        elif fh is not None and fh.mode == "ewma":
            g = fh.ewma_gain
            self.fbhat_state = (1.0 - g) * self.fbhat_state + g * (-(qoff + p.w * qdelta))
            fb = self.fbhat_state
        else:
            fb = -(qoff + p.w * qdelta)
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

    def probe_fb(self, q_bytes) -> float:
        self.n_probes += 1
        return -((q_bytes - self.p.qeq) + self.p.w * (q_bytes - self.qold))

    def probe_code(self, fb) -> float:
        p = self.p
        q = float(quantise_py(abs(fb), p.qeq, p.w, p.fb_bits, p.quantiser))
        return q if fb >= 0.0 else -q

    def on_queue(self, q_bytes, now_ns) -> None:
        if q_bytes < self.sonar.nc_threshold:
            if self.nc_since < 0:
                self.nc_since = int(now_ns)
        else:
            self.nc_since = -1

    def on_ping(self, q_bytes, now_ns) -> bool:
        self.on_queue(q_bytes, now_ns)
        return self.nc_since >= 0 and now_ns - self.nc_since >= _ns(self.sonar.nc_interval)

    def as_array(self) -> np.ndarray:
        a = np.zeros(_v.CV_NFIELDS)
        a[: len(super().as_array())] = super().as_array()
        a[_v.CV_BYTES] = self.bytes
        a[_v.CV_FBHAT_STATE] = self.fbhat_state
        a[_v.CV_NC_SINCE] = self.nc_since
        a[_v.CV_NPROBES] = self.n_probes
        return a
