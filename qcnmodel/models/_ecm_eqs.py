"""Equations of the ECM/BCN fluid model (numba and SymPy twins); see :mod:`qcnmodel.models.ecm`.

Internal units: packets (of ``frame_size`` bytes) and packets/s. The parameter layout ``P_*``
is shared by the compiled right-hand side and the symbolic one.
"""

from __future__ import annotations

import numba as nb
import sympy as sp

from qcnmodel.analysis.dde import compile_rhs

P_N, P_C, P_QEQ, P_W, P_PS, P_FBMAX, P_SCALE, P_GD, P_GIRU = range(9)
P_A_POS, P_A_NEG, P_RMIN, P_RLINE, P_QMAX, P_ECMMAX, P_MINRATE = range(9, 16)
P_TON, P_TOFF, P_CHOT, P_TAU = range(16, 20)
N_PARAMS = 20
N_SYM_PARAMS = 11  # the first 11 entries are symbolic parameters


@nb.njit(cache=True, inline="always")
def capacity_at(t, p):
    """CP service rate (packets/s) at time t (hotspot window [t_on, t_off) -> C_hot)."""
    if p[P_TON] <= t < p[P_TOFF]:
        return p[P_CHOT]
    return p[P_C]


@nb.njit(cache=True, inline="always")
def feedback(qd, rd, cap, p):
    """Fb(t - tau) in packets, ECM_MAX applied, clipped to +-Fbmax."""
    fb = -(qd - p[P_QEQ] + p[P_W] / (p[P_PS] * cap) * (p[P_N] * rd - cap))
    if p[P_ECMMAX] > 0.0 and qd >= p[P_QMAX]:
        fb = -p[P_FBMAX]
    if fb > p[P_FBMAX]:
        fb = p[P_FBMAX]
    elif fb < -p[P_FBMAX]:
        fb = -p[P_FBMAX]
    return fb


@nb.njit(cache=True, inline="always")
def ecm_derivatives(t, q, rate, qd, rd, p, out):
    """dq/dt and dR/dt of the symmetric ECM fluid model into out[0:2]."""
    cap = capacity_at(t, p)
    cap_d = capacity_at(t - p[P_TAU], p)
    u = feedback(qd, rd, cap_d, p) * p[P_SCALE]
    lam = rd * p[P_PS]
    if u > 0.0:
        d_r = lam * p[P_GIRU] * u
    else:
        d_r = lam * p[P_GD] * u * rate
    d_q = p[P_N] * rate - cap
    if q <= 0.0 and d_q < 0.0:
        d_q = 0.0
    if p[P_MINRATE] > 0.0 and rate <= p[P_RMIN] and d_r < 0.0:
        d_r = 0.0
    if rate >= p[P_RLINE] and d_r > 0.0:
        d_r = 0.0
    out[0] = d_q
    out[1] = d_r


def _ecm_rhs(t, x, xd, p, out):
    ecm_derivatives(t, x[0], x[1], xd[0, 0], xd[0, 1], p, out)


ECM_RHS = compile_rhs(_ecm_rhs)


def param_symbols():
    """SymPy symbols of the first ``N_SYM_PARAMS`` parameter entries."""
    names = ["N", "C", "Q_eq", "w", "p", "Fb_max", "sigma", "G_d", "G_iR_u", "a_pos", "a_neg"]
    return sp.symbols(names, real=True)


def ecm_symbolic():
    """SymPy right-hand side linearisable at Fb* = 0, loop channel Fb(t - tau).

    The increase and decrease branches meet at Fb = 0 with different slopes; the symbolic
    form weights them, dR/dt = p R_tau sigma Fb (a_pos Gi Ru + a_neg Gd R), so that
    (a_pos, a_neg) = (1, 0), (0, 1) or (1/2, 1/2) selects the branch or the describing-function
    mean. ECM_MAX, clipping and the rate clamps are inactive at the fixed point.
    """
    syms = param_symbols()
    n, c, qeq, w, ps, _fbmax, sigma, gd, giru, a_pos, a_neg = syms
    q, r = sp.symbols("q R", real=True)
    qd, rd = sp.symbols("q_tau R_tau", real=True)
    fb = sp.Symbol("Fb_tau", real=True)
    fb_expr = -(qd - qeq + w / (ps * c) * (n * rd - c))
    d_q = n * r - c
    d_r = ps * rd * sigma * fb * (a_pos * giru + a_neg * gd * r)
    return [d_q, d_r], [q, r], [qd, rd], syms, (fb, fb_expr)
