"""Test helpers: one object interface over the compiled protocol rules and their Python twins.

``make_*(impl, ...)`` return objects with the reference classes' methods and ``as_array()``.
Compiled objects keep their state in column ``index`` of a 3-column struct-of-arrays (the
other columns must stay untouched, see :func:`others_untouched`).
"""

from __future__ import annotations

import numpy as np

from qcnmodel.sim.protocols import dcqcn as d
from qcnmodel.sim.protocols import ecm as e
from qcnmodel.sim.protocols import qcn_variants as v
from qcnmodel.sim.protocols.dcqcn_ref import (
    DCQCNCongestionPoint,
    DCQCNNotificationPoint,
    DCQCNReactionPoint,
)
from qcnmodel.sim.protocols.ecm_ref import ECMCongestionPoint, ECMReactionPoint
from qcnmodel.sim.protocols.qcn_variants_ref import VariantCongestionPoint, VariantReactionPoint

IMPLS = ("compiled", "reference")
N_COLS = 3


class _Col:
    """Base: a compiled state with the object's column ``i``."""

    def as_array(self):
        return self.state[:, self.i].copy()

    def others_untouched(self):
        cols = [c for c in range(N_COLS) if c != self.i]
        return np.array_equal(self.state[:, cols], self.fresh[:, cols])


# ============================================================================ ECM
class CompiledECMCP(_Col):
    def __init__(self, params, seed, index):
        self.prm = e.pack_ecm_cp_params(params)
        self.seed, self.i = seed, index
        self.state = e.new_ecm_cp_state(N_COLS)
        self.fresh = self.state.copy()
        self.out = np.zeros(e.OUT_N)

    def on_arrival(self, q, frame, tagged):
        k = e.ecm_cp_on_arrival(
            self.state, self.i, float(q), float(frame), int(tagged), self.seed, self.prm, self.out
        )
        return int(k), float(self.out[0]), float(self.out[1]), float(self.out[2])


class CompiledECMRP(_Col):
    def __init__(self, params, seed, index):
        self.p = params
        self.prm = e.pack_ecm_rp_params(params)
        self.i = index
        self.state = e.new_ecm_rp_state(N_COLS, params.line_rate)
        self.fresh = self.state.copy()

    def on_fb(self, fb, cpid):
        return int(e.ecm_rp_on_fb(self.state, self.i, float(fb), cpid, self.prm))

    def on_codes(self, co, cd, cpid):
        return int(e.ecmq_rp_on_fb(self.state, self.i, float(co), float(cd), cpid, self.prm))

    def on_00(self, cpid):
        return int(e.ecm_rp_on_00(self.state, self.i, cpid, self.prm))

    def on_drift(self):
        return int(e.ecm_rp_on_drift(self.state, self.i, self.prm))

    def tag(self):
        return int(e.ecm_rp_tag(self.state, self.i))

    @property
    def cr(self):
        return float(self.state[e.ERP_CR, self.i])

    @property
    def active(self):
        return bool(self.state[e.ERP_ACTIVE, self.i])

    @property
    def cpid(self):
        return int(self.state[e.ERP_CPID, self.i])


def make_ecm_cp(impl, params, seed=1, index=1):
    if impl == "compiled":
        return CompiledECMCP(params, seed, index)
    return ECMCongestionPoint(params, seed, index)


def make_ecm_rp(impl, params, seed=1, index=1):
    if impl == "compiled":
        return CompiledECMRP(params, seed, index)
    return ECMReactionPoint(params, seed, index)


# ============================================================================ QCN variants
class CompiledVRP(_Col):
    def __init__(self, qcn, seed, index, efr=None, plus=None, probe=None, sonar=None):
        self.p = qcn
        self.prm = v.pack_variant_rp_params(qcn, efr, plus, probe, sonar)
        self.seed, self.i = seed, index
        self.state = v.new_variant_rp_state(N_COLS, qcn.line_rate)
        self.fresh = self.state.copy()

    def on_cnm(self, qfb, cpid, now_ns, qoff=0.0, qdelta=0.0):
        s, i = self.state, self.i
        return int(v.vrp_on_cnm(s, i, qfb, float(qoff), float(qdelta), cpid, now_ns, self.seed,
                                self.prm))  # fmt: skip

    def on_tx(self, nbytes, now_ns):
        return int(v.vrp_on_tx(self.state, self.i, float(nbytes), now_ns, self.seed, self.prm))

    def on_timer(self, gen, now_ns):
        return int(v.vrp_on_timer(self.state, self.i, gen, now_ns, self.seed, self.prm))

    def on_drift(self):
        return int(v.vrp_on_drift(self.state, self.i, self.prm))

    def on_aux_timer(self, gen, now_ns):
        return int(v.vrp_on_aux_timer(self.state, self.i, gen, now_ns, self.seed, self.prm))

    def take_send(self):
        return int(v.vrp_take_send(self.state, self.i))

    def take_arm(self):
        return int(v.vrp_take_arm(self.state, self.i))

    def on_probe_reply(self, code, qoff, qdelta, cpid, now_ns):
        s, i = self.state, self.i
        return int(v.vrp_on_probe_reply(s, i, float(code), float(qoff), float(qdelta), cpid,
                                        now_ns, self.seed, self.prm))  # fmt: skip

    def on_echo(self, nc, now_ns):
        return int(v.vrp_on_echo(self.state, self.i, bool(nc), now_ns, self.seed, self.prm))

    def __getattr__(self, name):
        rows = {"active": 0, "cr": 1, "tr": 2, "bc_stage": 3, "t_stage": 4, "bc_left": 5,
                "timer_gen": 6, "cpid": 10, "deadline": 11, "aux_gen": v.RV_AUX_GEN,
                "aux_deadline": v.RV_AUX_DEADLINE, "phase": v.RV_PHASE}  # fmt: skip
        if name in rows:
            x = self.state[rows[name], self.i]
            return bool(x) if name == "active" else float(x)
        raise AttributeError(name)

    def set(self, **kw):
        rows = {"cr": 1, "tr": 2}
        for k, x in kw.items():
            self.state[rows[k], self.i] = x


class RefVRP(VariantReactionPoint):
    def set(self, **kw):
        for k, x in kw.items():
            setattr(self, k, x)


class CompiledVCP(_Col):
    def __init__(self, qcn, seed, index, fbhat=None, sonar=None):
        self.p = qcn
        self.prm = v.pack_variant_cp_params(qcn, fbhat, sonar)
        self.seed, self.i = seed, index
        self.state = v.new_variant_cp_state(N_COLS)
        self.fresh = self.state.copy()
        self.out = np.zeros(4)

    def on_arrival(self, q, frame):
        cnm = v.vcp_on_arrival(self.state, self.i, float(q), float(frame), self.seed, self.prm,
                               self.out)  # fmt: skip
        return bool(cnm), int(self.out[0]), float(self.out[1]), float(self.out[2])

    def probe_fb(self, q):
        return float(v.vcp_probe_fb(self.state, self.i, float(q), self.prm))

    def probe_code(self, fb):
        return float(v.vcp_probe_code(float(fb), self.prm))

    def on_queue(self, q, now_ns):
        v.vcp_on_queue(self.state, self.i, float(q), now_ns, self.prm)

    def on_ping(self, q, now_ns):
        return bool(v.vcp_on_ping(self.state, self.i, float(q), now_ns, self.prm))


def make_vrp(impl, qcn, seed=1, index=1, **opts):
    if impl == "compiled":
        return CompiledVRP(qcn, seed, index, **opts)
    return RefVRP(qcn, seed, index, **opts)


def make_vcp(impl, qcn, seed=1, index=1, **opts):
    if impl == "compiled":
        return CompiledVCP(qcn, seed, index, **opts)
    return VariantCongestionPoint(qcn, seed, index, **opts)


# ============================================================================ DCQCN
class CompiledDCP(_Col):
    def __init__(self, p, seed, index):
        self.prm = d.pack_dcqcn_cp_params(p)
        self.seed, self.i = seed, index
        self.state = d.new_dcqcn_cp_state(N_COLS)
        self.fresh = self.state.copy()

    def on_arrival(self, q):
        return bool(d.dcqcn_cp_on_arrival(self.state, self.i, float(q), self.seed, self.prm))


class CompiledDNP(_Col):
    def __init__(self, p, index=1):
        self.prm = d.pack_dcqcn_np_params(p)
        self.i = index
        self.state = d.new_dcqcn_np_state(N_COLS)
        self.fresh = self.state.copy()

    def on_packet(self, marked, now_ns):
        return int(d.dcqcn_np_on_packet(self.state, self.i, bool(marked), now_ns, self.prm))


class CompiledDRP(_Col):
    def __init__(self, p, seed, index):
        self.p = p
        self.prm = d.pack_dcqcn_rp_params(p)
        self.seed, self.i = seed, index
        self.state = d.new_dcqcn_rp_state(N_COLS, p.line_rate)
        self.fresh = self.state.copy()

    def on_cnp(self, now_ns):
        return int(d.dcqcn_rp_on_cnp(self.state, self.i, now_ns, self.seed, self.prm))

    def on_tx(self, nbytes):
        return int(d.dcqcn_rp_on_tx(self.state, self.i, float(nbytes), self.seed, self.prm))

    def on_rate_timer(self, gen, now_ns):
        s = self.state
        return int(d.dcqcn_rp_on_rate_timer(s, self.i, gen, now_ns, self.seed, self.prm))

    def on_alpha_timer(self, gen, now_ns):
        return int(d.dcqcn_rp_on_alpha_timer(self.state, self.i, gen, now_ns, self.prm))

    def __getattr__(self, name):
        rows = {"active": d.D_ACTIVE, "cr": d.D_CR, "tr": d.D_TR, "alpha": d.D_ALPHA,
                "timer_gen": d.D_TIMER_GEN, "alpha_gen": d.D_ALPHA_GEN,
                "alpha_deadline": d.D_ALPHA_DEADLINE, "bc_stage": d.D_BC_STAGE,
                "t_stage": d.D_T_STAGE}  # fmt: skip
        if name in rows:
            x = self.state[rows[name], self.i]
            return bool(x) if name == "active" else float(x)
        raise AttributeError(name)


def make_dcp(impl, p, seed=1, index=1):
    return (
        CompiledDCP(p, seed, index) if impl == "compiled" else DCQCNCongestionPoint(p, seed, index)
    )


def make_dnp(impl, p):
    return CompiledDNP(p) if impl == "compiled" else DCQCNNotificationPoint(p)


def make_drp(impl, p, seed=1, index=1):
    return CompiledDRP(p, seed, index) if impl == "compiled" else DCQCNReactionPoint(p, seed, index)
