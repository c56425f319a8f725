"""Protocol-family dispatch of the compiled kernel: the one place that maps a family to its
handlers.

Each protocol family (``Protocol.family`` of :mod:`qcnmodel.sim.protocols.registry`) has an
adapter module in :mod:`.families` (:data:`ADAPTERS`) defining the same hooks, which the
event loop (:mod:`.loop`) calls through the functions below:

============ ============================================================================
hook         when
============ ============================================================================
rl_send      a frame of RL ``f`` starts at its adapter: the on-transmit rule; returns the
             frame's tag ``FR[R_AUX]`` (ECM: its RL's CPID, else 0)
cp_enqueue   a frame is enqueued at a congestion point (the CP rule; CNM / mark)
cp_dequeue   frame ``k`` starts to leave a congestion point, ``q`` bytes stay queued behind
             it (SONAR's queue tracking; DCQCN's mark at dequeue)
np_deliver   a frame reaches its destination (DCQCN's notification point)
on_event     a protocol event fires (K_CNM, K_TIMER, K_AUX, K_PROBE, K_REPLY, K_ECHO)
on_drift     the periodic drift event
trace_rl     a trace sample reads RL ``f``: (active, CR, TR, bc stage, t stage, extra)
============ ============================================================================

plus ``configure(C, cfg)``, run in Python by :func:`qcnmodel.sim.kernel.state.build_state`
(the family's entries of the configuration vector ``C``, among them ``C[C_FAM]``).

Each function below selects the run's adapter by ``C[C_FAM]`` and is inlined, with the
adapter's hook, into the loop; one compiled loop serves every family. (Selecting the family
at compile time instead, to compile only the family a run needs, is a change of this module
alone: the adapters and the loop would stay as they are.) The pure-Python oracle's twin is
:mod:`qcnmodel.sim.oracle.dispatch`; both push the same events in the same order.
"""

from __future__ import annotations

from numba import njit

from qcnmodel.sim.kernel.families import dcqcn, ecm, none, qcn
from qcnmodel.sim.kernel.state import C_FAM, FAM_DCQCN, FAM_ECM, FAM_QCN, FAMILY_CODES

__all__ = ["ADAPTERS", "configure"]

#: protocol family -> its kernel adapter module
ADAPTERS = {"none": none, "qcn": qcn, "ecm": ecm, "dcqcn": dcqcn}


def configure(C, cfg) -> None:
    """Set ``C[C_FAM]`` and the family's entries of ``C`` for the ProtocolConfig ``cfg``."""
    family = cfg.protocol.family
    C[C_FAM] = FAMILY_CODES[family]
    ADAPTERS[family].configure(C, cfg)


@njit(cache=True, inline="always")
def rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    fam = C[C_FAM]
    if fam == FAM_QCN:
        return qcn.rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)
    if fam == FAM_ECM:
        return ecm.rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)
    if fam == FAM_DCQCN:
        return dcqcn.rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)
    return none.rl_send(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)


@njit(cache=True, inline="always")
def cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    fam = C[C_FAM]
    if fam == FAM_QCN:
        qcn.cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now)
    elif fam == FAM_ECM:
        ecm.cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now)
    elif fam == FAM_DCQCN:
        dcqcn.cp_enqueue(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay,
                         now)  # fmt: skip


@njit(cache=True, inline="always")
def cp_dequeue(C, FR, cp, cpp, p, k, q, L, now):
    fam = C[C_FAM]
    if fam == FAM_QCN:
        qcn.cp_dequeue(C, FR, cp, cpp, p, k, q, L, now)
    elif fam == FAM_DCQCN:
        dcqcn.cp_dequeue(C, FR, cp, cpp, p, k, q, L, now)


@njit(cache=True, inline="always")
def np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    if C[C_FAM] == FAM_DCQCN:
        dcqcn.np_deliver(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d)


@njit(cache=True)
def on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp, kind,
             a, b, c, slot, now):  # fmt: skip
    fam = C[C_FAM]
    if fam == FAM_QCN:
        qcn.on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp,
                     rpp, kind, a, b, c, slot, now)  # fmt: skip
    elif fam == FAM_ECM:
        ecm.on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp,
                     rpp, kind, a, b, c, slot, now)  # fmt: skip
    elif fam == FAM_DCQCN:
        dcqcn.on_event(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp,
                       rpp, kind, a, b, c, slot, now)  # fmt: skip


@njit(cache=True)
def on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    fam = C[C_FAM]
    if fam == FAM_QCN:
        qcn.on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows)
    elif fam == FAM_ECM:
        ecm.on_drift(H, EP, EFREE, BK, S, C, rp, rpp, n_flows)


@njit(cache=True, inline="always")
def trace_rl(C, rp, rpp, f):
    fam = C[C_FAM]
    if fam == FAM_QCN:
        return qcn.trace_rl(C, rp, rpp, f)
    if fam == FAM_ECM:
        return ecm.trace_rl(C, rp, rpp, f)
    if fam == FAM_DCQCN:
        return dcqcn.trace_rl(C, rp, rpp, f)
    return none.trace_rl(C, rp, rpp, f)
