"""The frame-level queue of N paced flows: the N*D/D/1 waiting queue.

A fluid queue is empty whenever the arrival rate A is below the service rate C. The packet
queue of N flows that each send evenly spaced frames is not: frames of different flows
collide at the port and wait. With independent, uniformly distributed phases this is the
N*D/D/1 queue, whose unfinished work U (in frame service times) has the exact tail of
Roberts and Virtamo ("The superposition of periodic cell arrival streams in an ATM
multiplexer", IEEE Trans. Commun. 39(2), 1991)::

    P(U > x) = sum_{n > x}^{N} C(N, n) ((n - x)/D)^n (1 - (n - x)/D)^(N - n) (D - N + x)/(D - n + x)

with D = N / rho the period of each flow in frame times and rho = A / C. The bytes *waiting*
(the packet simulator counts a frame until its transmission starts) are U minus the residual
of the frame in service, whose mean is rho / 2 frames. :func:`waiting_frames` returns that
mean, E[U] - rho/2: 0 for one flow (its frames never meet), 1.38 frames for 20 flows at rho =
0.9, about 0.63 sqrt(N) frames as rho -> 1 for many flows. Beyond ``_EXACT_MAX`` flows the
Brownian-bridge form of the same tail, P(U > x) ~ exp(-2 x (x/N + 1 - rho)) (Roberts and
Virtamo), gives E[U] = sqrt(pi N / 8) erfcx((1 - rho) sqrt(N / 2)) (at N = 100 within 5 % of
the exact sum near full load, 0.71 against 0.24 frames waiting at rho = 0.5).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import erfcx, gammaln

__all__ = ["observed_queue", "waiting_frames", "waiting_table"]

#: load grid of the table (rho in [0, 1]); above 1 the queue is a fluid backlog
_RHO = np.linspace(0.0, 1.0, 101)
#: integration points over x per flow count, and the largest N summed exactly
_X_POINTS = 600
_EXACT_MAX = 200


def _mean_waiting(rho: float, n: int) -> float:
    """E[U] - rho/2 (frames) of the N*D/D/1 queue at load ``rho`` (module docstring)."""
    if n <= 1 or rho <= 0.0:
        return 0.0
    if n > _EXACT_MAX:
        u = np.sqrt(np.pi * n / 8.0) * erfcx((1.0 - rho) * np.sqrt(n / 2.0))
        return max(float(u) - rho / 2.0, 0.0)
    d = n / rho
    x = np.linspace(0.0, float(n), _X_POINTS)
    ks = np.arange(1, n + 1, dtype=float)[:, None]
    a = (ks - x[None, :]) / d
    ok = (x[None, :] < ks) & (a > 0.0) & (a < 1.0)
    safe = np.where(ok, a, 0.5)
    log_b = gammaln(n + 1.0) - gammaln(ks + 1.0) - gammaln(n - ks + 1.0)
    log_t = log_b + ks * np.log(safe) + (n - ks) * np.log1p(-safe)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ok, (d - n + x[None, :]) / (d - ks + x[None, :]), 0.0)
    tail = np.where(ok, np.exp(log_t) * ratio, 0.0).sum(axis=0)
    return max(float(np.trapezoid(tail, x)) - rho / 2.0, 0.0)


@functools.lru_cache(maxsize=64)
def _table(n: int) -> np.ndarray:
    return np.array([_mean_waiting(float(r), n) for r in _RHO])


def waiting_table(n: int) -> np.ndarray:
    """Mean frames waiting in the N*D/D/1 queue of ``n`` flows at the loads
    ``linspace(0, 1, 101)`` (a copy: the table :func:`waiting_frames` interpolates)."""
    return _table(int(n)).copy()


def waiting_frames(rho, n: int) -> np.ndarray:
    """Mean number of frames waiting in the N*D/D/1 queue at load ``rho`` (array_like),
    interpolated on a table of 101 loads; loads above 1 take the value at 1."""
    rho = np.clip(np.asarray(rho, dtype=float), 0.0, 1.0)
    return np.interp(rho, _RHO, _table(int(n)))


def observed_queue(t, q, rate_sent, n: int, capacity, fwd: float, rate0: float,
                   frame: float, hot=None) -> np.ndarray:  # fmt: skip
    """The queue a packet port would hold *on average*: the fluid backlog ``q`` (bytes) where
    there is one, else the N*D/D/1 waiting queue's mean at the current load,
    ``max(q, waiting_frames(rho) frame)``. (The hybrid model realises the port from its flows'
    frames, :mod:`qcnmodel.models._port`; this mean stands in where it keeps no flow's bytes.)

    ``rho = n r(t - fwd) / C(t)``: the flows' mean sending rate ``rate_sent`` (bit/s, on the
    record times ``t``) reaches the port ``fwd`` seconds later (``rate0`` before the first
    record does), and ``C(t)`` is ``capacity`` or, inside ``hot = (start, stop, rate)``, the
    hotspot's rate. The maximum, not the sum that the hybrid model's congestion point samples
    (a busy period keeps the frames it started from): the smaller of the two estimates.
    """
    t = np.asarray(t, dtype=float)
    arriving = n * np.interp(t - fwd, t, np.asarray(rate_sent, float), left=rate0)
    cap = np.full_like(t, float(capacity))
    if hot is not None:
        cap[(t >= hot[0]) & (t < hot[1])] = hot[2]
    return np.maximum(np.asarray(q, float), waiting_frames(arriving / cap, n) * frame)
