"""Equations of the DCQCN fluid model (numba and SymPy twins); see :mod:`qcnmodel.models.dcqcn`.

Internal units: packets (of ``packet_size`` bytes) and packets/s. State layout for ``nf``
flow states (``nf = 1``: the symmetric model, the flow standing for all N flows):
``[q, alpha_1..alpha_nf, R_T_1..R_T_nf, R_C_1..R_C_nf]``; with the stage memory
(:data:`DCQCN_RHS_MEM`) also ``y_1..y_nf``, y' = R_C log(1 - p(q)), taken at the two delays
``[loop delay, loop delay + F T]``. With the coalescing notification point (:data:`DCQCN_RHS_NP`,
:data:`DCQCN_RHS_NP_MEM`) ``y`` is always there and ``Z_1..Z_nf`` follow, the cumulative CNPs
per flow, Z' = the CNP rate; the delays are ``[d, d + F T, d + tau, tau, tau + delta]`` (d
the loop delay, tau the CNP interval, delta = ``p[P_DELTA]``).
"""

from __future__ import annotations

import math

import numba as nb
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p

from qcnmodel.analysis.dde import compile_rhs

(P_N, P_NF, P_C, P_KMIN, P_KMAX, P_PMAX, P_G, P_TAU, P_TAUP, P_T, P_B, P_F, P_RAI,
 P_RAMPEXT, P_TON, P_TOFF, P_CHOT, P_RTT, P_DELTA) = range(19)  # fmt: skip
N_PARAMS = 19
#: above this marking probability a packet counts as surely marked in the stage memory
#: (log(1 - p) capped at log(0.01): a factor e^-4.6 per packet, i.e. 0 after a few packets)
MARK_ALL = 0.99
LOG_MARK_ALL = math.log(0.01)


@nb.njit(cache=True, inline="always")
def marking(q, p):
    """RED-like marking probability of the CP queue q (packets)."""
    if q <= p[P_KMIN]:
        return 0.0
    v = (q - p[P_KMIN]) / (p[P_KMAX] - p[P_KMIN]) * p[P_PMAX]
    if p[P_RAMPEXT] > 0.0:
        return v if v < 1.0 else 1.0
    if q > p[P_KMAX]:
        return 1.0
    return v


@nb.njit(cache=True, inline="always")
def cycle(pm, l1p, length):
    """p / ((1-p)^(-length) - 1), with its p -> 0 limit 1/length."""
    if pm <= 0.0:
        return 1.0 / length
    y = length * l1p  # overflow-free form p (1-p)^L / (1 - (1-p)^L)
    return pm * math.exp(y) / -math.expm1(y)


@nb.njit(cache=True, inline="always")
def capacity_at(t, p):
    if p[P_TON] <= t < p[P_TOFF]:
        return p[P_CHOT]
    return p[P_C]


def _dcqcn_rhs(t, x, xd, p, out):
    _dcqcn_core(t, x, xd, p, out, False, False)


def _dcqcn_rhs_mem(t, x, xd, p, out):
    _dcqcn_core(t, x, xd, p, out, True, False)


def _dcqcn_rhs_np(t, x, xd, p, out):
    _dcqcn_core(t, x, xd, p, out, False, True)


def _dcqcn_rhs_np_mem(t, x, xd, p, out):
    _dcqcn_core(t, x, xd, p, out, True, True)


@nb.njit(cache=True, inline="always")
def coalesced_cnp_rate(x, xd, p, nf, i, rcd, pm):
    """CNP rate of flow ``i`` at its reaction point under the coalescing notification point.

    The rule (Zhu et al., SIGCOMM 2015, the NIC's notification point): a marked packet sends
    a CNP at once unless one left in the last interval tau; a mark inside that interval is
    remembered, and one CNP leaves when the interval ends, which opens the next interval.
    With W(t) = P(a CNP in (t - tau, t]) = Z(t) - Z(t - tau) (at most one per interval) and
    A(t) = P(a mark among the packets of the window (t - tau, t]), the expected rate is

        c(t) = m(t) (1 - W(t)) + c(t - tau) A(t),   m = R_C(t - d) p(q(t - d)),

    the first CNP after a quiet spell without lag, then one per interval while the marks last
    (stationary: c = m / ((1 - p)^(tau R_C) + m tau); dense marks: 1/tau). c(t - tau) is the
    mean of Z' over the last ``delta`` before t - tau. Signals at the CP are delayed by the
    loop delay d, as everywhere in the model.
    """
    iy = 1 + 3 * nf + i
    iz = 1 + 4 * nf + i
    m = rcd * pm
    w = x[iz] - xd[3, iz]
    w = min(max(w, 0.0), 1.0)
    a = -math.expm1(min(0.0, xd[0, iy] - xd[2, iy]))
    c_prev = max(0.0, (xd[3, iz] - xd[4, iz]) / p[P_DELTA])
    return m * (1.0 - w) + c_prev * a


@nb.njit(cache=True, inline="always")
def _dcqcn_core(t, x, xd, p, out, memory, coalesce):
    """The equations; ``memory``: the timer's AI factor from the last F T of history (the
    states ``y`` after the flows, delays ``xd[0]`` = loop delay, ``xd[1]`` = + F T);
    ``coalesce``: the CNP rate of the coalescing notification point
    (:func:`coalesced_cnp_rate`) instead of the windowed a / tau."""
    nf = int(p[P_NF])
    pm = marking(xd[0, 0], p)
    l1p = math.log1p(-pm) if pm < 1.0 else -1e300
    tau = p[P_TAU]
    taup = p[P_TAUP]
    b = p[P_B]
    f = p[P_F]
    total = 0.0
    for i in range(nf):
        al = x[1 + i]
        rt = x[1 + nf + i]
        rc = x[1 + 2 * nf + i]
        rcd = xd[0, 1 + 2 * nf + i]
        lt = p[P_T] * rcd
        a_alpha = -math.expm1(taup * rcd * l1p)
        bb = cycle(pm, l1p, b)
        dd = cycle(pm, l1p, lt) if lt > 0.0 else 0.0
        c = math.exp(f * b * l1p) * bb
        if memory:  # P(no mark among the packets of the last F T) = exp(y(t) - y(t - F T))
            e = math.exp(min(0.0, xd[0, 1 + 3 * nf + i] - xd[1, 1 + 3 * nf + i])) * dd
        else:
            e = math.exp(f * lt * l1p) * dd
        if coalesce:
            cnp = coalesced_cnp_rate(x, xd, p, nf, i, rcd, pm)
            out[1 + 4 * nf + i] = cnp
        else:  # one CNP per interval tau that saw a mark
            cnp = -math.expm1(tau * rcd * l1p) / tau
        out[1 + i] = p[P_G] / taup * (a_alpha - al)
        out[1 + nf + i] = -(rt - rc) * cnp + p[P_RAI] * rcd * (c + e)
        out[1 + 2 * nf + i] = -rc * al / 2.0 * cnp + 0.5 * (rt - rc) * rcd * (bb + dd)
        total += rc
    dq = p[P_N] / nf * total - capacity_at(t, p)
    if x[0] <= 0.0 and dq < 0.0:
        dq = 0.0
    out[0] = dq
    if memory or coalesce:
        pn = marking(x[0], p)
        l1n = math.log1p(-pn) if pn < MARK_ALL else LOG_MARK_ALL
        for i in range(nf):
            out[1 + 3 * nf + i] = x[1 + 2 * nf + i] * l1n


DCQCN_RHS = compile_rhs(_dcqcn_rhs)
DCQCN_RHS_MEM = compile_rhs(_dcqcn_rhs_mem)
DCQCN_RHS_NP = compile_rhs(_dcqcn_rhs_np)
DCQCN_RHS_NP_MEM = compile_rhs(_dcqcn_rhs_np_mem)


def param_symbols():
    """SymPy symbols of the parameters used by :func:`dcqcn_symbolic`."""
    return sp.symbols("N C K_min K_max p_max g tau tau_p T B F R_AI", positive=True)


def param_values(p):
    """Numeric values for :func:`param_symbols` from a parameter vector."""
    idx = [P_N, P_C, P_KMIN, P_KMAX, P_PMAX, P_G, P_TAU, P_TAUP, P_T, P_B, P_F, P_RAI]
    return [float(p[i]) for i in idx]


def _cycle_sym(pm, length):
    y = length * log1p(-pm)  # overflow-free form, also for the derivatives
    return pm * sp.exp(y) / -expm1(y)


def dcqcn_symbolic():
    """Symmetric DCQCN on the marking ramp (Kmin < q < Kmax), loop channel p(t - tau*).

    Returns
    -------
    f, x, xd, params, channel
        As for :class:`qcnmodel.analysis.linearize.DelaySystem`; x = (q, alpha, R_T, R_C).
    """
    n, c, kmin, kmax, pmax, g, tau, taup, t_per, b, f, r_ai = param_symbols()
    q, al, rt, rc = sp.symbols("q alpha R_T R_C", real=True)
    qd, ald, rtd, rcd = sp.symbols("q_tau alpha_tau R_T_tau R_C_tau", real=True)
    pm = sp.Symbol("p_tau", positive=True)
    p_expr = (qd - kmin) / (kmax - kmin) * pmax
    l1p = log1p(-pm)
    a = -expm1(tau * rcd * l1p)
    a_alpha = -expm1(taup * rcd * l1p)
    lt = t_per * rcd
    bb = _cycle_sym(pm, b)
    dd = _cycle_sym(pm, lt)
    cc = sp.exp(f * b * l1p) * bb
    ee = sp.exp(f * lt * l1p) * dd
    d_al = g / taup * (a_alpha - al)
    d_rt = -(rt - rc) / tau * a + r_ai * rcd * (cc + ee)
    d_rc = -rc * al / (2 * tau) * a + (rt - rc) / 2 * rcd * (bb + dd)
    d_q = n * rc - c
    return (
        [d_q, d_al, d_rt, d_rc],
        [q, al, rt, rc],
        [qd, ald, rtd, rcd],
        param_symbols(),
        (pm, p_expr),
    )
