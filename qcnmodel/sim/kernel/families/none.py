"""Kernel adapter of the ``none`` family: no congestion management (every hook is a no-op).

The RL state arrays are idle plain-QCN ones (never activated), so the loop's rate-limiter
spacing never applies and the traces show every RL inactive at the line rate.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def configure(C, cfg) -> None:
    """Nothing to configure."""


@njit(cache=True, inline="always")
def rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    return np.int64(0)


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    return


@njit(cache=True, inline="always")
def cp_dequeue(C, FR, cp, cpp, p, k, q, L, now):
    return


@njit(cache=True, inline="always")
def np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    return


@njit(cache=True, inline="always")
def on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
    return


@njit(cache=True, inline="always")
def on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    return


@njit(cache=True, inline="always")
def trace_rl(C, rp, rpp, f):
    line = rpp[0]  # RPP_C of the idle plain-QCN vector
    return 0.0, line, line, 0.0, 0.0, 0.0
