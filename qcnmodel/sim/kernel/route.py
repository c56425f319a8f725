"""Routing lookup of the compiled kernel over the compact tables of
:class:`~qcnmodel.sim.network.compiled.Routing` (the oracle's ``next_port`` is its twin)."""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.kernel.state import F_BACK, F_UP, N_SW


@njit(cache=True, inline="always")
def next_port(NI, FI, route, node, f):
    """Egress port of switch ``node`` for a frame of flow ``f``.

    The flow's destination hangs from switch ``FI[F_UP, f]`` (its one link enters the host
    through port ``FI[F_BACK, f]``); other switches forward by the switch-to-switch table
    ``route[switch, switch]``. Only switches route: a host sends on its one port.
    """
    s = NI[N_SW, node]
    u = FI[F_UP, f]
    if u == s:
        return FI[F_BACK, f]
    return np.int64(route[s, u])
