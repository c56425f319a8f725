"""ECM / ECM-Q rules as plain-Python classes: the oracle twin of :mod:`qcnmodel.sim.protocols.ecm`.

Same rules, streams, draw order and float expressions as the compiled module (whose docstring
states the rules and the assumptions); results are identical bit for bit.

* ``ECMCongestionPoint.on_arrival(q_bytes, frame_bytes, tagged) -> (kind, fb, qoff, qdelta)``
* ``ECMReactionPoint.on_fb(fb, cpid)``, ``.on_codes(code_off, code_delta, cpid)``,
  ``.on_00(cpid)``, ``.on_drift()`` -> ``R_*`` code.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.sim.protocols import ecm as _e
from qcnmodel.sim.protocols.qcn_ref import quantise_py
from qcnmodel.sim.rng import STREAM_CP, jitter_py, stream_key_py, uniform01_py

__all__ = ["ECMCongestionPoint", "ECMReactionPoint", "signed_code_py"]

MSG_NONE, MSG_NEG, MSG_POS, MSG_00 = 0, 1, 2, 3
R_NONE, R_DEC, R_INC, R_RELEASED = 0, 1, 2, 3


def signed_code_py(x: float, bits: int, rng: float) -> float:
    """ECM-Q code (seed 000 "separate quantization of Qoff and Qdelta"; widths/ranges N/S)."""
    full = float((1 << (int(bits) - 1)) - 1)
    c = math.floor(abs(x) * full / rng)
    c = min(c, full)
    return float(c) if x >= 0.0 else -float(c)


class ECMCongestionPoint:
    """One ECM or ECM-Q CP; ``params`` an ECMParams or ECMQParams."""

    def __init__(self, params, seed: int, index: int) -> None:
        self.p = params
        self.seed = int(seed)
        self.index = int(index)
        self.stream = stream_key_py(STREAM_CP, index)
        self.sep = hasattr(params, "qoff_bits")
        self.qold = 0.0
        self.to_sample = 0.0
        self.rng = 0
        self.initialised = False
        self.n_samples = 0
        self.n_neg = 0
        self.n_pos = 0
        self.n_00 = 0
        self.last_fb = 0.0

    def _u(self) -> float:
        u = uniform01_py(self.seed, self.stream, self.rng)
        self.rng += 1
        return jitter_py(self.p.jitter, u)

    def encode(self, fb: float) -> float:
        """Signed Fb on the gain scale (raw bytes clipped, or fb_bits floor quantiser)."""
        p = self.p
        fbmax = p.qeq * (2.0 * p.w + 1.0)
        if p.fb_bits == 0:
            return max(-fbmax, min(fbmax, fb))
        q = float(quantise_py(abs(fb), p.qeq, p.w, p.fb_bits, "floor63"))
        return q if fb >= 0.0 else -q

    def on_arrival(self, q_bytes: float, frame_bytes: float, tagged: bool):
        """Sampled feedback of both signs, ECM_MAX, ECM(0,0), positive-Fb policy."""
        p = self.p
        if not self.initialised:
            self.initialised = True
            self.to_sample = p.sample_interval * self._u()
        self.to_sample -= frame_bytes
        if self.to_sample > 0.0:
            return MSG_NONE, 0.0, 0.0, 0.0
        qoff = q_bytes - p.qeq
        qdelta = q_bytes - self.qold
        fb = -(qoff + p.w * qdelta)
        self.qold = q_bytes
        self.to_sample = p.sample_interval * self._u()
        self.n_samples += 1
        if p.ecm00 and q_bytes >= p.q_sc_eff:
            self.n_00 += 1
            self.last_fb = 0.0
            return MSG_00, 0.0, 0.0, 0.0
        fbmax = p.qeq * (2.0 * p.w + 1.0)
        saturated = p.ecm_max and q_bytes >= p.q_max
        if saturated:
            fb = -fbmax
        kind = MSG_NONE
        if fb < 0.0:
            kind = MSG_NEG
        elif fb > 0.0:
            pol = p.pos_fb
            if pol == "all" or (tagged and (pol == "tagged" or q_bytes < p.qeq)):
                kind = MSG_POS
        if kind == MSG_NONE:
            self.last_fb = 0.0
            return MSG_NONE, 0.0, 0.0, 0.0
        if self.sep:
            if saturated:
                qoff, qdelta = p.qoff_range_eff, p.qdelta_range_eff
            res = (
                kind,
                0.0,
                signed_code_py(qoff, p.qoff_bits, p.qoff_range_eff),
                signed_code_py(qdelta, p.qdelta_bits, p.qdelta_range_eff),
            )
            self.last_fb = fb
        else:
            v = self.encode(fb)
            res = (kind, v, qoff, qdelta)
            self.last_fb = v
        if kind == MSG_NEG:
            self.n_neg += 1
        else:
            self.n_pos += 1
        return res

    def as_array(self) -> np.ndarray:
        a = np.zeros(_e.ECP_NFIELDS)
        a[[0, 1, 2, 3, 4, 5, 6]] = [self.qold, self.to_sample, self.rng, float(self.initialised),
                                    self.n_samples, self.n_neg, self.last_fb]  # fmt: skip
        a[_e.ECP_NPOS] = self.n_pos
        a[_e.ECP_N00] = self.n_00
        return a


class ECMReactionPoint:
    """One ECM rate limiter (the RP rules of :mod:`.ecm`'s module docstring)."""

    def __init__(self, params, seed: int = 0, index: int = 0, line_rate=None) -> None:
        self.p = params
        self.sep = hasattr(params, "qoff_bits")
        self.active = False
        self.cr = float(params.line_rate if line_rate is None else line_rate)
        self.cpid = -1
        self.n_neg = self.n_pos = self.n_ignored = self.n_release = self.n_00 = 0
        self.last_fb = 0.0

    def tag(self) -> int:
        return self.cpid if self.active else -1

    def _release(self) -> None:
        self.active = False
        self.n_release += 1

    def on_fb(self, fb: float, cpid: int) -> int:
        """Seeds 000/004: Fb < 0: r *= 1 - Gd|Fb| (>= Rmin); Fb > 0: r += Gi Fb Ru (<= C)."""
        p = self.p
        c = p.line_rate
        self.last_fb = fb
        if fb < 0.0:
            if not self.active:
                self.active = True
                self.cr = c
                self.cpid = cpid
            elif p.cpid_replace == "negative":
                self.cpid = cpid
            self.cr = max(p.r_min, self.cr * (1.0 - p.gd_eff * (-fb)))
            self.n_neg += 1
            return R_DEC
        if fb > 0.0:
            foreign = p.pos_fb != "all" and int(cpid) != int(self.cpid)
            if not self.active or foreign:
                self.n_ignored += 1
                return R_NONE
            self.cr = min(c, self.cr + p.gi_eff * fb * p.r_unit)
            self.n_pos += 1
            if self.cr >= c:
                self._release()
                return R_RELEASED
            return R_INC
        return R_NONE

    def recombine(self, code_off: float, code_delta: float) -> float:
        """ECM-Q: Fb = -(Qoff_hat + w_rp Qdelta_hat), clipped, on the gain scale."""
        p = self.p
        fbmax = p.fb_max
        step_off = p.qoff_range_eff / ((1 << (p.qoff_bits - 1)) - 1)
        step_delta = p.qdelta_range_eff / ((1 << (p.qdelta_bits - 1)) - 1)
        fb = -(code_off * step_off + p.w_rp_eff * (code_delta * step_delta))
        fb = max(-fbmax, min(fbmax, fb))
        if p.fb_full != fbmax:
            fb = fb * p.fb_full / fbmax
        return fb

    def on_codes(self, code_off: float, code_delta: float, cpid: int) -> int:
        return self.on_fb(self.recombine(code_off, code_delta), cpid)

    def on_00(self, cpid: int) -> int:
        """ECM(0,0) (our reading of BCN(0,0)): r = Rmin."""
        if not self.active:
            self.active = True
            self.cpid = cpid
        elif self.p.cpid_replace == "negative":
            self.cpid = cpid
        self.cr = self.p.r_min
        self.n_00 += 1
        return R_DEC

    def on_drift(self) -> int:
        p = self.p
        if not self.active or (p.drift_inc == 0.0 and p.drift_factor == 1.0):
            return R_NONE
        self.cr = min(p.line_rate, (self.cr + p.drift_inc) * p.drift_factor)
        if self.cr >= p.line_rate:
            self._release()
            return R_RELEASED
        return R_INC

    def as_array(self) -> np.ndarray:
        a = np.zeros(_e.ERP_NFIELDS)
        a[_e.ERP_ACTIVE] = float(self.active)
        a[_e.ERP_CR] = self.cr
        a[_e.ERP_CPID] = self.cpid
        a[_e.ERP_NNEG] = self.n_neg
        a[_e.ERP_NPOS] = self.n_pos
        a[_e.ERP_NIGNORED] = self.n_ignored
        a[_e.ERP_NRELEASE] = self.n_release
        a[_e.ERP_N00] = self.n_00
        a[_e.ERP_LAST_FB] = self.last_fb
        return a
