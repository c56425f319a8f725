"""Protocol-family dispatch of the compiled kernel: the one place that maps a family to its
handlers.

Each protocol family (``Protocol.family`` of :mod:`qcnmodel.sim.protocols.registry`) has an
adapter module in :mod:`.families` (:data:`ADAPTERS`) defining the same hooks, which the
event loop (:mod:`.loop`) calls through the functions below. The kernel splits one family in
two: the QCN variants with aux timers, probes or SONAR run on their own adapter
(:func:`kernel_family`), so that plain QCN's loop compiles without them.

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

The family is selected at compile time: every hook below takes, first, the run's family
*marker* ``fam`` (:func:`marker`: an empty array whose dtype names the family) and is a numba
``overload`` that resolves, while the loop is typed, to the adapter of that family alone.
The loop is therefore compiled (and cached) once per family, with only that family's rules
in it: a run compiles what it needs. The pure-Python oracle's twin is
:mod:`qcnmodel.sim.oracle.dispatch`; both push the same events in the same order.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from qcnmodel.sim.kernel.families import dcqcn, ecm, none, qcn, qcn_variants
from qcnmodel.sim.kernel.state import C_FAM, FAMILY_CODES

__all__ = ["ADAPTERS", "MARKER_DTYPES", "WARM_PROTOCOLS", "configure", "kernel_family",
           "marker"]  # fmt: skip

#: kernel family -> its adapter module: a protocol family, except that the QCN variants
#: needing aux timers, probes or SONAR (:func:`kernel_family`) have their own
ADAPTERS = {"none": none, "qcn": qcn, "ecm": ecm, "dcqcn": dcqcn, "qcn-variants": qcn_variants}
#: kernel family -> dtype of its marker array (the loop's compile-time family switch)
MARKER_DTYPES = {"none": np.uint8, "qcn": np.int8, "ecm": np.int16, "dcqcn": np.int32,
                 "qcn-variants": np.uint16}  # fmt: skip
#: kernel family -> a protocol that runs on it (what a warm-up compiles with)
WARM_PROTOCOLS = {"none": "none", "qcn": "qcn", "ecm": "ecm", "dcqcn": "dcqcn",
                  "qcn-variants": "qcn-sonar"}  # fmt: skip
_BY_DTYPE = {np.dtype(d).name: ADAPTERS[f] for f, d in MARKER_DTYPES.items()}
_BY_CODE = {code: f for f, code in FAMILY_CODES.items()}


def kernel_family(cfg) -> str:
    """The kernel family of the ProtocolConfig ``cfg``: its protocol family, or
    ``"qcn-variants"`` for a QCN-family protocol with probes or SONAR
    (:func:`.families.qcn.uses_variants`), whose machinery plain QCN's loop leaves out."""
    family = cfg.protocol.family
    return "qcn-variants" if family == "qcn" and qcn.uses_variants(cfg) else family


def configure(C, cfg) -> None:
    """Set ``C[C_FAM]`` and the family's entries of ``C`` for the ProtocolConfig ``cfg``."""
    family = kernel_family(cfg)
    C[C_FAM] = FAMILY_CODES[family]
    ADAPTERS[family].configure(C, cfg)


def marker(family) -> np.ndarray:
    """The marker of ``family`` (a name, or a ``C[C_FAM]`` code): an empty array."""
    if not isinstance(family, str):
        family = _BY_CODE[int(family)]
    return np.zeros(0, MARKER_DTYPES[family])


def _adapter(fam):
    """The adapter module of a marker type (numba typing time)."""
    if isinstance(fam, types.Array) and str(fam.dtype) in _BY_DTYPE:
        return _BY_DTYPE[str(fam.dtype)]
    raise TypeError(f"not a protocol-family marker: {fam}")


def _stub(*args):  # pragma: no cover - replaced by the overloads when compiled
    raise NotImplementedError("a dispatch hook runs inside the compiled loop only")


def rl_send(fam, H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    return _stub()


def cp_enqueue(fam, H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    return _stub()


def cp_dequeue(fam, C, FR, cp, cpp, p, k, q, L, now):
    return _stub()


def np_deliver(fam, H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    return _stub()


def on_event(fam, H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
    return _stub()


def on_drift(fam, H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    return _stub()


def trace_rl(fam, C, rp, rpp, f):
    return _stub()


@overload(rl_send, inline="always")
def _rl_send(fam, H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
    hook = _adapter(fam).rl_send

    def impl(fam, H, EP, EFREE, BK, S, C, rp, rpp, f, L, now):
        return hook(H, EP, EFREE, BK, S, C, rp, rpp, f, L, now)

    return impl


@overload(cp_enqueue, inline="always")
def _cp_enqueue(fam, H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
    hook = _adapter(fam).cp_enqueue

    def impl(fam, H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now):
        hook(H, EP, EFREE, BK, S, C, EPF, FR, cp, cpp, out, k, f, o, q, L, delay, now)

    return impl


@overload(cp_dequeue, inline="always")
def _cp_dequeue(fam, C, FR, cp, cpp, p, k, q, L, now):
    hook = _adapter(fam).cp_dequeue

    def impl(fam, C, FR, cp, cpp, p, k, q, L, now):
        hook(C, FR, cp, cpp, p, k, q, L, now)

    return impl


@overload(np_deliver, inline="always")
def _np_deliver(fam, H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
    hook = _adapter(fam).np_deliver

    def impl(fam, H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d):
        hook(H, EP, EFREE, BK, S, C, FR, npst, npp, k, f, t, d)

    return impl


@overload(on_event)
def _on_event(fam, H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
              kind, a, b, c, slot, now):  # fmt: skip
    hook = _adapter(fam).on_event

    def impl(fam, H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp,
             kind, a, b, c, slot, now):  # fmt: skip
        hook(H, EP, EFREE, BK, S, C, EPF, PI, NI, HI, FI, route, WI, WF, cp, cpp, rp, rpp, kind,
             a, b, c, slot, now)  # fmt: skip

    return impl


@overload(on_drift)
def _on_drift(fam, H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
    hook = _adapter(fam).on_drift

    def impl(fam, H, EP, EFREE, BK, S, C, rp, rpp, n_flows):
        hook(H, EP, EFREE, BK, S, C, rp, rpp, n_flows)

    return impl


@overload(trace_rl, inline="always")
def _trace_rl(fam, C, rp, rpp, f):
    hook = _adapter(fam).trace_rl

    def impl(fam, C, rp, rpp, f):
        return hook(C, rp, rpp, f)

    return impl
