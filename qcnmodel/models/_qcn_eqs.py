"""Equations of the QCN fluid model (numba and SymPy twins); see :mod:`qcnmodel.models.qcn`.

Internal units: packets (of ``frame_size`` bytes) and packets/s. The parameter vector layout
``P_*`` is shared by the compiled right-hand side and the symbolic one; the two are tested
against each other (linearisation vs finite differences of the compiled rhs).
"""

from __future__ import annotations

import math

import numba as nb
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p

from qcnmodel.analysis.dde import compile_rhs

# parameter vector layout
P_N, P_C, P_QEQ, P_W, P_PS, P_FBMAX, P_FS, P_GD, P_MINDEC, P_B, P_F = range(11)
P_RAI, P_RHAI, P_T, P_RMIN, P_RLINE = range(11, 16)
P_TIMER, P_HAI, P_TABLE, P_QUANT, P_HALVE, P_MINRATE = range(16, 22)
P_TAB0 = 22  # 8 table sampling probabilities
P_TON, P_TOFF, P_CHOT, P_TAU = 30, 31, 32, 33
# precomputed per sampling probability k = 0..7 (table) and 8 (base ps): 4 values each,
# (p/((1-p)^-B - 1), the same with the AI-stage length, (1-p)^(F B), log1p(-p))
P_PRE = 34
# counter resets (module docstring of models.qcn, ``reset``): 0 = every sample (as written),
# 1 = CNMs only, with a logistic indicator of width P_RWIDTH (packets) on Fb(t - tau);
# 2 = CNMs only plus the stage memory (a 4th state, the mean age since the last CNM)
P_RESET, P_RWIDTH = P_PRE + 36, P_PRE + 37
N_PARAMS = P_PRE + 38


def precompute(p):
    """Fill the P_PRE block of the parameter vector ``p`` in place (call after the rest)."""
    b = p[P_B]
    b_ai = 0.5 * b if p[P_HALVE] > 0.0 else b
    for k in range(9):
        ps = p[P_PS] if k == 8 else p[P_TAB0 + k]
        l1p = math.log1p(-ps) if ps < 1.0 else -math.inf
        j = P_PRE + 4 * k
        p[j] = cycle_rate(ps, b)
        p[j + 1] = cycle_rate(ps, b_ai)
        p[j + 2] = math.exp(p[P_F] * b * l1p)
        p[j + 3] = l1p


QUANT_NONE, QUANT_SMOOTH, QUANT_FLOOR = 0, 1, 2


@nb.njit(cache=True, inline="always")
def cycle_rate(p, length):
    """p / ((1-p)^(-length) - 1): rate factor of a cycle of `length` packets with no sample.

    Evaluated as p (1-p)^L / (1 - (1-p)^L) = p exp(L log1p(-p)) / -expm1(L log1p(-p)), which
    neither overflows nor cancels.
    """
    return cycle_rate_l1p(p, math.log1p(-p), length)


@nb.njit(cache=True, inline="always")
def cycle_rate_l1p(p, l1p, length):
    """:func:`cycle_rate` given ``l1p`` = log1p(-p) (the right-hand side reuses it)."""
    y = length * l1p
    if y > -1e-12:  # no resets: a cycle ends every `length` packets
        return 1.0 / length
    return p * math.exp(y) / -math.expm1(y)


@nb.njit(cache=True, inline="always")
def reset_indicator(fb, width):
    """Smoothed 1{Fb < 0}: 1 / (1 + exp(Fb / width)) (Fb, width in packets)."""
    z = fb / width
    if z > 700.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(z))


@nb.njit(cache=True, inline="always")
def capacity_at(t, p):
    """CP service rate (packets/s) at time t (hotspot window [t_on, t_off) -> C_hot)."""
    if p[P_TON] <= t < p[P_TOFF]:
        return p[P_CHOT]
    return p[P_C]


@nb.njit(cache=True, inline="always")
def cp_signals(qd, rcd, cap, p):
    """Feedback seen by the RP: (indicator Fb<0, quantised magnitude u, sampling prob)."""
    fb = -(qd - p[P_QEQ] + p[P_W] / (p[P_PS] * cap) * (p[P_N] * rcd - cap))
    mag = -fb if fb < 0.0 else 0.0
    if mag > p[P_FBMAX]:
        mag = p[P_FBMAX]
    x = p[P_FS] * mag / p[P_FBMAX]
    quant = p[P_QUANT]
    if quant == QUANT_SMOOTH:
        u = x - 0.5 if x > 0.5 else 0.0
    elif quant == QUANT_FLOOR:
        u = math.floor(x)
    else:
        u = x
    if p[P_TABLE] > 0.0:
        k = int(math.floor(x) * 8.0 / (p[P_FS] + 1.0))
        if k > 7:
            k = 7
        ps = p[P_TAB0 + k]
    else:
        k = 8
        ps = p[P_PS]
    if p[P_RESET] > 0.0:
        ind = reset_indicator(fb, p[P_RWIDTH])
    else:
        ind = 1.0 if fb < 0.0 else 0.0
    return ind, u, ps, k


@nb.njit(cache=True, inline="always")
def rate_derivatives(rc, rt, rcd, ind, u, ps, k, p):
    """(dRc/dt, dRt/dt) of one flow given the CP signals it receives (see cp_signals)."""
    return rate_derivatives_age(rc, rt, rcd, ind, u, ps, k, p, -1.0)


@nb.njit(cache=True, inline="always")
def stage_l1p(l1p, rcd, age):
    """log(1 - p) of the stage factors (1-p)^(F L): the reset probability itself, or with the
    stage memory (``age`` > 0) the effective 1 / (R_C(t-tau) age), equal to it at equilibrium."""
    if age <= 0.0:
        return l1p
    pe = 1.0 / (rcd * age) if rcd * age > 1.0 else 1.0 - 1e-12
    return math.log1p(-pe)


@nb.njit(cache=True, inline="always")
def rate_derivatives_age(rc, rt, rcd, ind, u, ps, k, p, age):
    """:func:`rate_derivatives` with the stage memory: ``age`` (s) = mean time since the last
    CNM (``age <= 0``: no memory, the stage factors use the reset probability)."""
    cut = p[P_GD] * u
    if cut > p[P_MINDEC]:
        cut = p[P_MINDEC]
    lam = rcd * ps
    b = p[P_B]
    f = p[P_F]
    if p[P_RESET] > 0.0:
        # counters are reset by CNMs only: per-packet reset probability ps * 1{Fb < 0}
        pc = ps * ind
        l1p = math.log1p(-pc)
        halve = p[P_HALVE] > 0.0
        avg = cycle_rate_l1p(pc, l1p, b)
        bc_ai = cycle_rate_l1p(pc, l1p, 0.5 * b) if halve else avg
        sl1p = stage_l1p(l1p, rcd, age)
        inc = p[P_RAI] * bc_ai * math.exp(f * b * sl1p)
    else:
        j = P_PRE + 4 * k
        bc_ai = p[j + 1]
        l1p = p[j + 3]
        avg = p[j]
        inc = p[P_RAI] * bc_ai * p[j + 2]
        pc = ps
        sl1p = stage_l1p(l1p, rcd, age) if p[P_TIMER] > 0.0 else l1p
    if p[P_TIMER] > 0.0:
        lt = p[P_T] * rcd
        tm = cycle_rate_l1p(pc, l1p, lt)
        tm_ai = cycle_rate_l1p(pc, l1p, 0.5 * lt) if p[P_HALVE] > 0.0 else tm
        avg += tm
        inc += p[P_RAI] * tm_ai * math.exp(f * lt * sl1p)
        if p[P_HAI] > 0.0:
            longest = b if b > lt else lt
            inc += (p[P_RHAI] - p[P_RAI]) * (bc_ai + tm_ai) * math.exp(f * longest * sl1p)
    d_rc = -cut * rc * lam * ind + 0.5 * (rt - rc) * rcd * avg
    d_rt = -(rt - rc) * lam * ind + rcd * inc
    if p[P_MINRATE] > 0.0 and rc <= p[P_RMIN] and d_rc < 0.0:
        d_rc = 0.0
    if rc >= p[P_RLINE] and d_rc > 0.0:
        d_rc = 0.0
    return d_rc, d_rt


@nb.njit(cache=True, inline="always")
def qcn_derivatives(t, q, rc, rt, qd, rcd, p, out):
    """dq/dt, dRc/dt, dRt/dt of the symmetric QCN fluid model into out[0:3]."""
    cap = capacity_at(t, p)
    cap_d = capacity_at(t - p[P_TAU], p)  # the CP's capacity when it sampled
    ind, u, ps, k = cp_signals(qd, rcd, cap_d, p)
    d_rc, d_rt = rate_derivatives(rc, rt, rcd, ind, u, ps, k, p)
    d_q = p[P_N] * rc - cap
    if q <= 0.0 and d_q < 0.0:
        d_q = 0.0
    out[0] = d_q
    out[1] = d_rc
    out[2] = d_rt


@nb.njit(cache=True, inline="always")
def qcn_derivatives_age(t, x, xd, p, out):
    """The model with the stage memory: states (q, Rc, Rt, A), A = mean age (s) since the
    last CNM, dA/dt = 1 - A lambda_c with the CNM rate lambda_c = R_C(t-tau) p 1{Fb(t-tau)<0}."""
    cap = capacity_at(t, p)
    cap_d = capacity_at(t - p[P_TAU], p)
    ind, u, ps, k = cp_signals(xd[0, 0], xd[0, 1], cap_d, p)
    d_rc, d_rt = rate_derivatives_age(x[1], x[2], xd[0, 1], ind, u, ps, k, p, x[3])
    d_q = p[P_N] * x[1] - cap
    if x[0] <= 0.0 and d_q < 0.0:
        d_q = 0.0
    out[0] = d_q
    out[1] = d_rc
    out[2] = d_rt
    out[3] = 1.0 - x[3] * xd[0, 1] * ps * ind


def _qcn_rhs(t, x, xd, p, out):
    if p[P_RESET] > 1.5:
        qcn_derivatives_age(t, x, xd, p, out)
    else:
        qcn_derivatives(t, x[0], x[1], x[2], xd[0, 0], xd[0, 1], p, out)


QCN_RHS = compile_rhs(_qcn_rhs)


def param_symbols():
    """SymPy symbols: the first 22 entries of the parameter vector, then ``p_rp``."""
    names = [
        "N", "C", "Q_eq", "w", "p_s", "Fb_max", "FS", "G_d", "min_dec", "B", "F",
        "R_AI", "R_HAI", "T", "R_min", "R_line",
        "timer", "hai", "table", "quant", "halve", "minrate", "p_rp",
    ]  # fmt: skip
    return sp.symbols(names, real=True)


N_SYM_PARAMS = 23


def _cycle_rate_sym(p, length):
    # p / ((1-p)^-L - 1) in the overflow-free form of _cycle_rate (also for its derivatives)
    y = length * log1p(-p)
    return p * sp.exp(y) / -expm1(y)


def qcn_symbolic(timer=False, hai=False, quant=QUANT_NONE, halving=False, reset=False,
                 memory=False):  # fmt: skip
    """SymPy right-hand side of the symmetric model on its congested interior branch.

    The branch is the one valid at an interior equilibrium, which
    :meth:`QCNFluidModel.fixed_point` checks: Fb(t-tau) < 0 (CNMs are sent), |Fb| < Fb_max (no
    full-scale cap), Gd*u < min_dec (unsaturated cut), u > 1/2 with quantisation. The sampling
    probability seen by the RP is the parameter ``p_rp`` (the table entry of the equilibrium's
    segment, or ``p_s``): the table is piecewise constant. ``quant=QUANT_FLOOR`` is represented
    by its dither average (``QUANT_SMOOTH``). The reflecting boundary at q = 0 and the rate
    clamps are omitted. The compiled rhs implements the full nonlinearity; the tests check that
    both agree (values and derivatives) at the equilibrium.

    Returns
    -------
    f : list of sympy.Expr
        [dq/dt, dRc/dt, dRt/dt].
    x, xd : list of sympy.Symbol
        (q, R_C, R_T) and their delayed twins.
    params : tuple of sympy.Symbol
        See :func:`param_symbols`; with ``reset=True`` one more, ``delta_r`` (the width of
        the logistic reset indicator, packets).
    channel : (sympy.Symbol, sympy.Expr)
        The loop channel: the symbol ``Fb_tau`` used in ``f`` and its expression
        Fb(t - tau) = -(q_tau - Qeq + w/(p_s C) (N R_C_tau - C)).
    """
    syms = param_symbols()
    n, c, qeq, w, ps0, fbmax, fs, gd, min_dec, b, f = syms[:11]
    r_ai, r_hai, t_per = syms[11], syms[12], syms[13]
    ps = syms[22]
    q, rc, rt = sp.symbols("q R_C R_T", real=True)
    qd, rcd, rtd = sp.symbols("q_tau R_C_tau R_T_tau", real=True)
    fb_expr = -(qd - qeq + w / (ps0 * c) * (n * rcd - c))
    fb = sp.Symbol("Fb_tau", real=True)
    x = -fs * fb / fbmax
    u = x - sp.Rational(1, 2) if quant != QUANT_NONE else x
    cut = gd * u
    lam = rcd * ps
    b_ai = b / 2 if halving else b
    ind = sp.Integer(1)
    pc = ps
    if reset:
        delta = sp.Symbol("delta_r", positive=True)
        syms = (*syms, delta)
        ind = 1 / (1 + sp.exp(fb / delta))
        pc = ps * ind
    bc = _cycle_rate_sym(pc, b)
    bc_ai = _cycle_rate_sym(pc, b_ai)
    l1p = log1p(-pc)
    if memory:  # stage memory: the stage factors use 1 / (R_C(t-tau) A)
        age, age_d = sp.symbols("A A_tau", positive=True)
        l1p_stage = log1p(-1 / (rcd * age))
    else:
        l1p_stage = l1p
    avg = bc
    inc = r_ai * bc_ai * sp.exp(f * b * l1p_stage)
    if timer:
        lt = t_per * rcd
        lt_ai = lt / 2 if halving else lt
        tm = _cycle_rate_sym(pc, lt)
        tm_ai = _cycle_rate_sym(pc, lt_ai)
        avg = avg + tm
        inc = inc + r_ai * tm_ai * sp.exp(f * lt * l1p_stage)
        if hai:
            inc = inc + (r_hai - r_ai) * (bc_ai + tm_ai) * sp.exp(f * sp.Max(b, lt) * l1p_stage)
    d_rc = -cut * rc * lam * ind + sp.Rational(1, 2) * (rt - rc) * rcd * avg
    d_rt = -(rt - rc) * lam * ind + rcd * inc
    d_q = n * rc - c
    if memory:
        d_age = 1 - age * rcd * ps * ind
        return ([d_q, d_rc, d_rt, d_age], [q, rc, rt, age], [qd, rcd, rtd, age_d], syms,
                (fb, fb_expr))  # fmt: skip
    return [d_q, d_rc, d_rt], [q, rc, rt], [qd, rcd, rtd], syms, (fb, fb_expr)
