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

    def _consts(self):
        p = self.params
        ps = p.ps_fixed
        return p.qeq, p.w, ps, 8.0 * p.frame_size / (ps * self.c), p.qeq * (2 * p.w + 1)

    def rhs(self, x, xd) -> np.ndarray:
        """(dq/dt, dR/dt) from the state x = (q, R) and the delayed state xd."""
        p, (qeq, w, ps, ts, fbmax) = self.params, self._consts()
        n, c = self.n_flows, self.c
        dq = (n * x[1] - c) / 8.0
        if x[0] <= 0 and dq < 0:
            dq = 0.0
        fb = (xd[0] - qeq) + w * ts * (n * xd[1] - c) / 8.0
        qfb = min(max(63.0 * fb / fbmax, 0.0), 63.0)
        cut = ps * xd[1] / (8.0 * p.frame_size) * p.gd * qfb * x[1]
        grow = self.k * p.r_ai * x[1] / (8.0 * p.bc_limit)
        return np.array([dq, grow - cut])

    def fixed_point(self) -> dict:
        p, (qeq, _, ps, _, fbmax) = self.params, self._consts()
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
        """Euler integration (step rtt/20) from an empty queue, every flow at ``rate0``."""
        dt = min(self.rtt / 20, record_dt)
        lag, every = max(1, round(self.rtt / dt)), max(1, round(record_dt / dt))
        steps = int(round(duration / dt))
        x = np.array([0.0, self.c / self.n_flows if rate0 is None else rate0])
        hist = np.tile(x, (lag, 1))
        out = [x.copy()]
        for i in range(steps):
            x = np.maximum(x + dt * self.rhs(x, hist[i % lag]), [0.0, self.params.min_rate])
            hist[i % lag] = x
            if (i + 1) % every == 0:
                out.append(x.copy())
        t = np.arange(len(out)) * every * dt
        arr = np.array(out)
        return xr.Dataset(
            {"q": ("time", arr[:, 0]), "rate_sent": ("time", arr[:, 1])}, coords={"time": t}
        )
