"""DCQCN rules as plain-Python classes: the oracle twin of :mod:`qcnmodel.sim.protocols.dcqcn`.

Same rules (stated there; Zhu et al., SIGCOMM 2015 and CoNEXT 2016), streams, draw order and float
expressions, hence identical results bit for bit.
"""

from __future__ import annotations

import numpy as np

from qcnmodel.sim.protocols import dcqcn as _d
from qcnmodel.sim.protocols.qcn_ref import _ns
from qcnmodel.sim.rng import (
    STREAM_CP,
    STREAM_RP_BC,
    STREAM_RP_TIMER,
    jitter_py,
    stream_key_py,
    uniform01_py,
)

__all__ = ["DCQCNCongestionPoint", "DCQCNNotificationPoint", "DCQCNReactionPoint"]

TX_NONE, TX_INCREASE, TX_RELEASED = 0, 1, 2


def mark_probability_py(q: float, p) -> float:
    """RED/ECN ramp of the DCQCN paper (CoNEXT 2016)."""
    if q <= p.kmin:
        return 0.0
    if q <= p.kmax:
        return (q - p.kmin) / (p.kmax - p.kmin) * p.pmax
    return 1.0


class DCQCNCongestionPoint:
    """ECN-marking queue: marked iff u < p(Q), one draw per frame (at arrival or departure,
    ``mark_at``)."""

    def __init__(self, params, seed: int, index: int) -> None:
        self.p = params
        self.at_dequeue = getattr(params, "mark_at", "dequeue") == "dequeue"
        self.seed = int(seed)
        self.stream = stream_key_py(STREAM_CP, index)
        self.rng = 0
        self.n_mark = 0
        self.n_arr = 0

    def on_arrival(self, q_bytes: float) -> bool:
        u = uniform01_py(self.seed, self.stream, self.rng)
        self.rng += 1
        self.n_arr += 1
        marked = u < mark_probability_py(q_bytes, self.p)
        self.n_mark += int(marked)
        return marked

    def as_array(self) -> np.ndarray:
        return np.array([self.rng, self.n_mark, self.n_arr], dtype=float)


class DCQCNNotificationPoint:
    """Receiver of one flow: the CNP rule ``cnp_mode`` with interval ``cnp_interval``."""

    def __init__(self, params) -> None:
        self.p = params
        self.mode = getattr(params, "cnp_mode", "coalesce")
        self.last = -1
        self.n_cnp = 0

    def on_packet(self, marked: bool, now_ns: int) -> int:
        """Time (ns) at which a CNP leaves for the RP, or -1."""
        if not marked:
            return -1
        now, iv, last = int(now_ns), _ns(self.p.cnp_interval), self.last
        t = now
        if iv > 0 and self.mode == "window":
            t = (now // iv + 1) * iv
            if t == last:
                return -1
        elif iv > 0 and last >= 0 and now < last + iv:
            if self.mode != "coalesce" or now < last:
                return -1
            t = last + iv
        self.last = t
        self.n_cnp += 1
        return t

    def as_array(self) -> np.ndarray:
        return np.array([self.last, self.n_cnp], dtype=float)


class DCQCNReactionPoint:
    """DCQCN rate limiter: alpha, CNP cut, QCN increase machine (B, T, F, R_AI, R_HAI)."""

    def __init__(self, params, seed: int, index: int, line_rate=None) -> None:
        self.p = params
        self.seed = int(seed)
        self.bc_stream = stream_key_py(STREAM_RP_BC, index)
        self.t_stream = stream_key_py(STREAM_RP_TIMER, index)
        self.active = False
        self.cr = self.tr = float(params.line_rate if line_rate is None else line_rate)
        self.alpha = 0.0
        self.bc_stage = self.t_stage = 0
        self.bc_left = 0.0
        self.timer_gen = 0
        self.deadline = -1
        self.alpha_gen = 0
        self.alpha_deadline = -1
        self.bc_rng = self.t_rng = 0
        self.n_cnp = self.n_release = 0

    def _u_bc(self) -> float:
        u = uniform01_py(self.seed, self.bc_stream, self.bc_rng)
        self.bc_rng += 1
        return jitter_py(self.p.jitter, u)

    def _u_t(self) -> float:
        u = uniform01_py(self.seed, self.t_stream, self.t_rng)
        self.t_rng += 1
        return jitter_py(self.p.jitter, u)

    def _release(self) -> None:
        self.active = False
        self.timer_gen += 1
        self.alpha_gen += 1
        self.deadline = self.alpha_deadline = -1
        self.n_release += 1

    def _increase(self) -> bool:
        p = self.p
        f, c = p.fr_th, p.line_rate
        lo = min(self.bc_stage, self.t_stage)
        hi = max(self.bc_stage, self.t_stage)
        if lo > f:  # hyper increase
            self.tr = min(c, self.tr + p.r_hai * (lo - f))
        elif hi > f:  # additive increase
            self.tr = min(c, self.tr + p.r_ai)
        self.cr = min(c, (self.cr + self.tr) / 2.0)
        if self.cr >= c and p.release:
            self._release()
            return True
        return False

    def on_cnp(self, now_ns: int) -> int:
        """DCQCN paper: RT = RC; RC = RC (1 - alpha/2); alpha = (1-g) alpha + g."""
        p = self.p
        c = p.line_rate
        if not self.active:
            self.active = True
            self.cr = self.tr = c
            self.alpha = p.alpha_init
        self.tr = self.cr
        self.cr = max(p.min_rate, self.cr * (1.0 - self.alpha / 2.0))
        self.alpha = (1.0 - p.g) * self.alpha + p.g
        self.bc_stage = self.t_stage = 0
        self.bc_left = p.byte_counter * self._u_bc()
        self.timer_gen += 1
        self.deadline = int(now_ns) + _ns(p.rate_timer * self._u_t())
        self.alpha_gen += 1
        self.alpha_deadline = int(now_ns) + _ns(p.alpha_timer)
        self.n_cnp += 1
        return self.deadline

    def on_tx(self, nbytes: float) -> int:
        if not self.active:
            return TX_NONE
        self.bc_left -= nbytes
        if self.bc_left > 0.0:
            return TX_NONE
        self.bc_stage += 1
        self.bc_left = self.p.byte_counter * self._u_bc()
        return TX_RELEASED if self._increase() else TX_INCREASE

    def on_rate_timer(self, gen: int, now_ns: int) -> int:
        if not self.active or gen != self.timer_gen:
            return -1
        self.t_stage += 1
        self.deadline = int(now_ns) + _ns(self.p.rate_timer * self._u_t())
        return -1 if self._increase() else self.deadline

    def on_alpha_timer(self, gen: int, now_ns: int) -> int:
        """No CNP for tau': alpha = (1 - g) alpha."""
        if not self.active or gen != self.alpha_gen:
            return -1
        self.alpha = (1.0 - self.p.g) * self.alpha
        self.alpha_deadline = int(now_ns) + _ns(self.p.alpha_timer)
        return self.alpha_deadline

    def as_array(self) -> np.ndarray:
        a = np.zeros(_d.D_NFIELDS)
        vals = {
            _d.D_ACTIVE: float(self.active), _d.D_CR: self.cr, _d.D_TR: self.tr,
            _d.D_ALPHA: self.alpha, _d.D_BC_STAGE: self.bc_stage, _d.D_T_STAGE: self.t_stage,
            _d.D_BC_LEFT: self.bc_left, _d.D_TIMER_GEN: self.timer_gen,
            _d.D_DEADLINE: self.deadline, _d.D_ALPHA_GEN: self.alpha_gen,
            _d.D_ALPHA_DEADLINE: self.alpha_deadline, _d.D_RNG_BC: self.bc_rng,
            _d.D_RNG_T: self.t_rng, _d.D_NCNP: self.n_cnp, _d.D_NRELEASE: self.n_release,
        }  # fmt: skip
        for k, v in vals.items():
            a[k] = v
        return a
