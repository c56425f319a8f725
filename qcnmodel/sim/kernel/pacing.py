"""The rate limiter's spacing of a compiled run: whole nanoseconds that keep the rate exact.

A rate limiter (the IEEE 802.1Qau reaction point's, DCQCN's) lets a flow's next frame start
``8 L / CR`` after the last one. The kernel's clock counts whole nanoseconds, so each
spacing is rounded; rounding each one alone would send at ``8 L / round(8 L / CR)``, which
is the port's own rate for every CR within half a nanosecond per frame of it (at 10 Gb/s,
1500-byte frames: CR within 0.04 % of 10 Gb/s sends at exactly 10 Gb/s). The remainder of
each rounding is carried to the next spacing instead, as a token bucket keeps its
fractional credit, so that in the long run the flow sends at CR. The carry is an integer
number of :data:`RL_CARRY_UNIT` ns (``FI[F_RLCARRY]``), so the state stays in the kernel's
integer flow table.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["RL_CARRY_UNIT", "rl_spacing"]

#: resolution of the carried remainder, ns
RL_CARRY_UNIT = 2.0**-20


@njit(cache=True, inline="always")
def rl_spacing(L, cr, carry):
    """Spacing (ns) after a frame of ``L`` bytes at ``cr`` bit/s, rounded to whole ns, with
    the remainder ``carry`` (units of :data:`RL_CARRY_UNIT` ns) carried from the previous
    frame: ``(gap, new carry)``."""
    exact = L * 8e9 / cr + carry * RL_CARRY_UNIT
    gap = np.int64(np.floor(exact + 0.5))
    return gap, np.int64(np.floor((exact - gap) / RL_CARRY_UNIT + 0.5))
