"""Test helpers: one object interface over the compiled rules and the reference classes.

``make_cp(impl, params, seed, index)`` / ``make_rp(...)`` return an object with the methods
of :mod:`qcnmodel.sim.protocols.qcn_ref` (``on_arrival``, ``on_cnm``, ``on_tx``, ``on_timer``,
``on_drift``), attribute access to the state (``cr``, ``tr``, ``bc_stage``, ...), ``set(**kw)``
to force state, and ``as_array()``. For ``impl == "compiled"`` the state lives in column
``index`` of a 3-column struct-of-arrays, so the other columns must stay untouched.
"""

from __future__ import annotations

import numpy as np

from qcnmodel.sim.protocols import qcn as r
from qcnmodel.sim.protocols.qcn_ref import CongestionPoint, ReactionPoint

IMPLS = ("compiled", "reference")
N_COLS = 3

_RP_FIELDS = {
    "active": r.RP_ACTIVE,
    "cr": r.RP_CR,
    "tr": r.RP_TR,
    "bc_stage": r.RP_BC_STAGE,
    "t_stage": r.RP_T_STAGE,
    "bc_left": r.RP_BC_LEFT,
    "timer_gen": r.RP_TIMER_GEN,
    "hai_count": r.RP_HAI_COUNT,
    "cpid": r.RP_CPID,
    "deadline": r.RP_DEADLINE,
}
_CP_FIELDS = {
    "qold": r.CP_QOLD,
    "to_sample": r.CP_TO_SAMPLE,
    "rng": r.CP_RNG,
    "last_qfb": r.CP_LAST_QFB,
}
_INT_FIELDS = {
    "bc_stage",
    "t_stage",
    "timer_gen",
    "hai_count",
    "cpid",
    "deadline",
    "rng",
    "last_qfb",
}


class CompiledCP:
    """CongestionPoint-like view of column ``index`` of a compiled CP state."""

    def __init__(self, params, seed, index):
        self.p = params
        self.prm = r.pack_cp_params(params)
        self.seed = seed
        self.j = index
        self.state = r.new_cp_state(N_COLS)
        self.out = np.zeros(r.OUT_N)

    def on_arrival(self, q_bytes, frame_bytes):
        cnm = r.cp_on_arrival(
            self.state, self.j, float(q_bytes), float(frame_bytes), self.seed, self.prm, self.out
        )
        return (
            bool(cnm),
            int(self.out[r.OUT_QFB]),
            float(self.out[r.OUT_QOFF]),
            float(self.out[r.OUT_QDELTA]),
        )

    @property
    def last_sampled(self):
        return bool(self.out[r.OUT_SAMPLED])

    def __getattr__(self, name):
        if name in _CP_FIELDS:
            v = self.state[_CP_FIELDS[name], self.j]
            return int(v) if name in _INT_FIELDS else float(v)
        raise AttributeError(name)

    def as_array(self):
        return self.state[:, self.j].copy()


class CompiledRP:
    """ReactionPoint-like view of column ``index`` of a compiled RP state."""

    def __init__(self, params, seed, index):
        self.p = params
        self.prm = r.pack_rp_params(params)
        self.seed = seed
        self.i = index
        self.state = r.new_rp_state(N_COLS, params.line_rate)

    def on_cnm(self, qfb, cpid, now_ns):
        return int(r.rp_on_cnm(self.state, self.i, qfb, cpid, now_ns, self.seed, self.prm))

    def on_tx(self, nbytes, now_ns):
        return int(r.rp_on_tx(self.state, self.i, float(nbytes), now_ns, self.seed, self.prm))

    def on_timer(self, gen, now_ns):
        return int(r.rp_on_timer(self.state, self.i, gen, now_ns, self.seed, self.prm))

    def on_drift(self):
        return int(r.rp_on_drift(self.state, self.i, self.prm))

    def __getattr__(self, name):
        if name in _RP_FIELDS:
            v = self.state[_RP_FIELDS[name], self.i]
            if name == "active":
                return bool(v)
            return int(v) if name in _INT_FIELDS else float(v)
        raise AttributeError(name)

    def set(self, **kw):
        for k, v in kw.items():
            self.state[_RP_FIELDS[k], self.i] = float(v)

    def as_array(self):
        return self.state[:, self.i].copy()


class RefRP(ReactionPoint):
    """ReactionPoint with ``set(**kw)`` for forcing state in tests."""

    def set(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


def make_cp(impl, params, seed=1, index=1):
    if impl == "compiled":
        return CompiledCP(params, seed, index)
    return CongestionPoint(params, seed, index)


def make_rp(impl, params, seed=1, index=1):
    if impl == "compiled":
        return CompiledRP(params, seed, index)
    return RefRP(params, seed, index)


def other_columns_untouched(obj):
    """True if the compiled state's other columns are still at their initial values."""
    if not isinstance(obj, (CompiledCP, CompiledRP)):
        return True
    if isinstance(obj, CompiledCP):
        fresh = r.new_cp_state(N_COLS)
    else:
        fresh = r.new_rp_state(N_COLS, obj.p.line_rate)
    cols = [c for c in range(N_COLS) if c != (obj.j if isinstance(obj, CompiledCP) else obj.i)]
    return np.array_equal(obj.state[:, cols], fresh[:, cols])
