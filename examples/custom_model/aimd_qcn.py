"""A user's own QCN fluid model: QCN's decrease with an additive-increase recovery.

This file stands for the model a researcher brings: it is not part of qcnmodel, it only
follows the loop-model protocol (``params``, ``rtt``, ``n_flows``, ``capacity``, ``loop()``,
``replace(**changes)``, and a ``simulate()`` returning an ``xarray.Dataset`` with the queue
``q``), so that :mod:`qcnmodel.testing` can validate it against the packet simulator.

Equations (N flows at rate R sharing a congestion point of capacity C; queue q in bytes,
rates in bit/s, delay tau = rtt)::

    dq/dt = (N R - C) / 8                                    (q >= 0)
    Fb    = (q - Qeq) + w Ts dq/dt,  Ts = 8 F / (p C)        (the CP's sampled feedback)
    qFb   = clip(63 Fb / (Qeq (2w + 1)), 0, 63)              (6-bit quantised, as QCN)
    dR/dt = -(p R(t-tau) / (8 F)) Gd qFb(t-tau) R            (QCN's multiplicative decrease)
            + k R_AI R / (8 B)                                (the variant: +k R_AI per byte-
                                                               counter cycle of B bytes)

QCN itself recovers by halving the distance to a target rate (Fast Recovery); this variant
replaces that by a plain additive increase of ``k * R_AI`` per cycle, the AIMD law of TCP.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from qcnmodel import QCNParams
from qcnmodel.analysis.linearize import finite_difference_jacobian, open_loop
from qcnmodel.analysis.loop import DelayedLoop


@dataclass(frozen=True)
class AIMDQCN:
    """QCN with an additive-increase recovery (module docstring); ``k`` scales R_AI."""

    params: QCNParams = field(default_factory=QCNParams)
    rtt: float = 100e-6
    n_flows: int = 10
    capacity: float | None = None
    k: float = 1.0

    def replace(self, **changes) -> AIMDQCN:
        return dataclasses.replace(self, **changes)

    @property
    def c(self) -> float:
        return self.params.line_rate if self.capacity is None else float(self.capacity)

    @functools.cached_property
    def _consts(self) -> tuple:
        """(Qeq, w, p, Ts, Fbmax, 8 F, Gd, R_AI / (8 B)) of the equations."""
        p, ps = self.params, self.params.ps_fixed
        ts = 8.0 * p.frame_size / (ps * self.c)
        return (
            p.qeq,
            p.w,
            ps,
            ts,
            p.qeq * (2 * p.w + 1),
            8.0 * p.frame_size,
            p.gd,
            p.r_ai / (8.0 * p.bc_limit),
        )

    def rhs(self, x, xd) -> np.ndarray:
        """(dq/dt, dR/dt) from the state x = (q, R) and the delayed state xd."""
        return np.array(self._f(x[0], x[1], xd[0], xd[1]))

    def _f(self, q, r, q_d, r_d):
        qeq, w, ps, ts, fbmax, bits, gd, ai = self._consts
        n, c = self.n_flows, self.c
        dq = (n * r - c) / 8.0
        if q <= 0 and dq < 0:
            dq = 0.0
        fb = (q_d - qeq) + w * ts * (n * r_d - c) / 8.0
        qfb = min(max(63.0 * fb / fbmax, 0.0), 63.0)
        return dq, self.k * ai * r - ps * r_d / bits * gd * qfb * r

    def fixed_point(self) -> dict:
        p, (qeq, _, ps, _, fbmax, *_) = self.params, self._consts
        r = self.c / self.n_flows
        qfb = self.k * p.r_ai * p.frame_size / (p.gd * ps * p.bc_limit * r)
        return {"q": qeq + qfb * fbmax / 63.0, "rate": r}

    def loop(self) -> DelayedLoop:
        fp = self.fixed_point()
        x = np.array([fp["q"], fp["rate"]])
        a0 = finite_difference_jacobian(lambda v: self.rhs(v, x), x)
        a1 = finite_difference_jacobian(lambda v: self.rhs(x, v), x)
        num, den, _ = open_loop(a0, a1)
        return DelayedLoop(num, den, self.rtt, name="AIMD-QCN")

    def simulate(self, duration, record_dt=50e-6, rate0=None) -> xr.Dataset:
        """Euler integration (step rtt/10) from an empty queue, every flow at ``rate0``."""
        dt = min(self.rtt / 10, record_dt)
        lag, every = max(1, round(self.rtt / dt)), max(1, round(record_dt / dt))
        q, r = 0.0, self.c / self.n_flows if rate0 is None else rate0
        hist = [(q, r)] * lag  # ring buffer of the state one RTT ago
        out = [(q, r)]
        for i in range(int(round(duration / dt))):
            dq, dr = self._f(q, r, *hist[i % lag])
            q, r = max(q + dt * dq, 0.0), max(r + dt * dr, self.params.min_rate)
            hist[i % lag] = (q, r)
            if (i + 1) % every == 0:
                out.append((q, r))
        arr = np.array(out)
        t = np.arange(len(out)) * every * dt
        return xr.Dataset(
            {"q": ("time", arr[:, 0]), "rate_sent": ("time", arr[:, 1])}, coords={"time": t}
        )
