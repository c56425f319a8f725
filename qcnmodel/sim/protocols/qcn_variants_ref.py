"""QCN variants as plain-Python classes: the oracle twin of :mod:`.qcn_variants`.

The options that change QCN's own rules are those of :class:`~.qcn_ref.ReactionPoint` and
:class:`~.qcn_ref.CongestionPoint`; the subclasses here add the variants' own events (the
auxiliary probe / SONAR timer, probe replies, SONAR echoes, the CP's answers to probes and
pings), with the compiled module's streams, draw order and float expressions, hence identical
results bit for bit. Their docstring lists the assumptions (items 1-6).
"""

from __future__ import annotations

from qcnmodel.sim.protocols import qcn_layout as _l
from qcnmodel.sim.protocols.qcn_ref import CongestionPoint, ReactionPoint, _ns, quantise_py

__all__ = ["VariantCongestionPoint", "VariantReactionPoint"]


class VariantReactionPoint(ReactionPoint):
    """QCN RL with EFR, TO_THRESH, QCN+ gain tuning, probes and SONAR timers.

    Parameters
    ----------
    params : QCNParams
    seed, index : int
    efr, plus, probe, sonar : optional option dataclasses (None = off)
    line_rate : float, optional
        As :class:`~.qcn_ref.ReactionPoint`.
    """

    def __init__(self, params, seed, index, efr=None, plus=None, probe=None, sonar=None,
                 line_rate=None):  # fmt: skip
        super().__init__(params, seed, index, line_rate, efr=efr, plus=plus, probe=probe,
                         sonar=sonar)  # fmt: skip

    def on_aux_timer(self, gen, now_ns) -> int:
        """Probe period / SONAR timer expiry: request a probe or ping, re-arm."""
        if not self.active or gen != self.aux_gen:
            return -1
        if self.probe is not None:
            period = self.probe.interval
        elif self.sonar is not None:
            self.phase = _l.PHASE_PING
            period = self.sonar.sf_timer
        else:
            return -1
        self.send = True
        self.aux_deadline = int(now_ns) + _ns(period * self._u_aux())
        return self.aux_deadline

    def take_send(self) -> int:
        """CPID to send a probe/ping to (and clear the request), or -1."""
        if not self.send:
            return -1
        self.send = False
        return int(self.cpid)

    def take_arm(self) -> int:
        """Aux-timer deadline to schedule (generation ``aux_gen``) and clear, or -1."""
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
        self.phase = _l.PHASE_HOLD
        return self._arm_aux(self.sonar.we_timer, now_ns)


class VariantCongestionPoint(CongestionPoint):
    """QCN CP with Fb-hat (QCN-H), probe replies and SONAR's "not congested" state."""

    def __init__(self, params, seed, index, fbhat=None, sonar=None) -> None:
        super().__init__(params, seed, index, fbhat)
        self.sonar = sonar

    def probe_fb(self, q_bytes) -> float:
        """Fb reported to a probe: -(Q - Qeq + w (Q - Qold)), Qold of the last sample."""
        self.n_probes += 1
        return -((q_bytes - self.p.qeq) + self.p.w * (q_bytes - self.qold))

    def probe_code(self, fb) -> float:
        """Signed reply code: the CP quantiser applied to |Fb|, with Fb's sign."""
        p = self.p
        q = float(quantise_py(abs(fb), p.qeq, p.w, p.fb_bits, p.quantiser))
        return q if fb >= 0.0 else -q

    def on_queue(self, q_bytes, now_ns) -> None:
        """SONAR: track since when Q < nc_threshold (-1 while at or above it)."""
        if q_bytes < self.sonar.nc_threshold:
            if self.nc_since < 0:
                self.nc_since = int(now_ns)
        else:
            self.nc_since = -1

    def on_ping(self, q_bytes, now_ns) -> bool:
        """SONAR ping: "not congested" iff Q < threshold has held for >= nc_interval."""
        self.on_queue(q_bytes, now_ns)
        return self.nc_since >= 0 and now_ns - self.nc_since >= _ns(self.sonar.nc_interval)
