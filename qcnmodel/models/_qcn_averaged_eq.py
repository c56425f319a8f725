"""Equilibrium of the cycle-averaged QCN fluid model (:mod:`qcnmodel.models.qcn_averaged`).

In closed form where the equations allow it (N R_C = C, then R_T from dR_T = 0 and the
feedback u from dR_C = 0), else by bracketing the one remaining equation in Fb* (``reset=
"cnm"``). Both work in packets and packets/s, on the parameter vector of
:mod:`qcnmodel.models._qcn_eqs`.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.models import _qcn_eqs as eq

__all__ = ["analytic_fixed_point", "numeric_fixed_point"]

#: |Fb*| / Qeq below which the equilibrium is on the Fb = 0 surface to rounding (q* - Qeq is
#: then a few ulps of Qeq, and u*, the cut's slope and the loop gain are noise)
_ON_SURFACE = 1e-9


def analytic_fixed_point(model, p: np.ndarray):
    """Closed-form equilibrium (packets): N R_C = C, then R_T from dR_T = 0, u from dR_C = 0."""
    rc = p[eq.P_C] / p[eq.P_N]
    if model.reset == "cnm":
        return numeric_fixed_point(p, rc)
    cands = range(8) if model.sampling == "table" else [None]
    quant = p[eq.P_QUANT]  # the quantiser code the vector holds
    refused = None  # why the first inconsistent entry would have no equilibrium either
    for k in cands:
        ps = p[eq.P_PS] if k is None else p[eq.P_TAB0 + k]
        out = np.empty(3)
        # with u unknown, dR_T and dR_C do not depend on u except through the cut
        l1p = math.log1p(-ps) if ps < 1.0 else -math.inf  # every frame sampled
        b = p[eq.P_B]
        b_ai = b / 2 if model.halving else b
        avg = eq.cycle_rate(ps, b)
        bc_ai = eq.cycle_rate(ps, b_ai)
        inc = p[eq.P_RAI] * bc_ai * math.exp(p[eq.P_F] * b * l1p)
        if model.timer:
            lt = p[eq.P_T] * rc
            lt_ai = lt / 2 if model.halving else lt
            tm_ai = eq.cycle_rate(ps, lt_ai)
            avg += eq.cycle_rate(ps, lt)
            inc += p[eq.P_RAI] * tm_ai * math.exp(p[eq.P_F] * lt * l1p)
            if model.hai:
                inc += (
                    (p[eq.P_RHAI] - p[eq.P_RAI])
                    * (bc_ai + tm_ai)
                    * math.exp(p[eq.P_F] * max(b, lt) * l1p)
                )
        gap = inc / ps
        u = gap * avg / (2.0 * rc * ps * p[eq.P_GD])
        x = u + 0.5 if quant != eq.QUANT_NONE else u
        why = None
        if p[eq.P_GD] * u >= p[eq.P_MINDEC]:
            why = ("no equilibrium with an unsaturated cut: Gd*u reaches min_dec "
                   f"(u = {u:.3g}); the fluid model has no interior fixed point")  # fmt: skip
        elif x >= p[eq.P_FS]:
            why = (f"no equilibrium below feedback full scale: u* = {x:.3g} >= "
                   f"{p[eq.P_FS]:g} (|Fb*| would exceed Fb_max = Qeq(2w+1))")  # fmt: skip
        if k is not None and int(math.floor(x) * 8 / (p[eq.P_FS] + 1)) != k:
            # this entry's probability puts the feedback on another entry: not the
            # equilibrium, whatever its cut (a higher entry's may be consistent)
            refused = refused or why
            continue
        if why is not None:
            raise ValueError(why)
        if x * p[eq.P_FBMAX] / p[eq.P_FS] <= _ON_SURFACE * p[eq.P_QEQ]:
            raise ValueError(
                f"no equilibrium off the Fb = 0 switching surface: |Fb*| = "
                f"{x * p[eq.P_FBMAX] / p[eq.P_FS] * model.params.frame_size:.2g} B at "
                f"Ps = {ps:g} (the increase drive (1-p)^(F B) = "
                f"{math.exp(p[eq.P_F] * b * l1p):.2g} is too weak to hold the queue above "
                "Qeq); the linearisation there is rounding noise"
            )
        out[0] = p[eq.P_QEQ] + x * p[eq.P_FBMAX] / p[eq.P_FS]
        out[1] = rc
        out[2] = rc + gap
        return out, ps
    raise ValueError(
        refused
        or "no equilibrium: the sampling table has no consistent entry (the equilibrium sits "
        "on a table discontinuity)"
    )


def numeric_fixed_point(p: np.ndarray, rc: float):
    """Equilibrium with ``reset="cnm"``: N R_C = C; dR_T = 0 gives R_T - R_C, and
    dR_C = 0 is then one equation in Fb* < 0, solved by bracketing (Brent)."""
    from scipy.optimize import brentq

    qeq, fbmax = p[eq.P_QEQ], p[eq.P_FBMAX]

    def parts(fb):
        ind, u, ps, k = eq.cp_signals(qeq - fb, rc, p[eq.P_C], p)
        # rate_derivatives at R_T = R_C gives the increase drive rcd*inc in d_rt
        _, inc = eq.rate_derivatives(rc, rc, rc, ind, u, ps, k, p)
        gap = inc / (rc * ps * ind)
        d_rc, _ = eq.rate_derivatives(rc, rc + gap, rc, ind, u, ps, k, p)
        return d_rc, gap, ps

    hi = -1e-9 * fbmax
    lo = -fbmax * (1 - 1e-9)
    if parts(lo)[0] >= 0:
        raise ValueError(
            "no equilibrium below feedback full scale with reset='cnm' "
            "(|Fb*| would exceed Fb_max = Qeq(2w+1))"
        )
    if parts(hi)[0] <= 0:
        raise ValueError("no equilibrium with Fb* < 0 with reset='cnm'")
    fb = brentq(lambda v: parts(v)[0], lo, hi, xtol=1e-14 * fbmax, rtol=1e-14)
    _, gap, ps = parts(fb)
    return np.array([qeq - fb, rc, rc + gap]), ps
