"""The DCQCN authors' own small-p fixed point and open loop (Zhu, Ghobadi, Misra, Padhye,
"ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY", ACM CoNEXT 2016), as
transcribed for ``DCQCNFluidModel(linearisation="paper", fixed_point_method="taylor")``
(:mod:`qcnmodel.models.dcqcn`), with their simplifications: first order in p of the
byte-counter terms, the gC/N alpha pole, one damping term on the delayed rate.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.params.dcqcn import DCQCNParams

__all__ = ["paper_loop_coefficients", "taylor_p"]


def taylor_p(params: DCQCNParams, n_flows: int) -> float:
    """The paper's small-p fixed point p* ~ [R_AI N^2/(tau' C^2) (1/B + N/(T C))^2]^(1/3)."""
    pk = 8.0 * params.packet_size
    c = params.line_rate / pk
    r_ai = params.r_ai / pk
    b = params.byte_counter / params.packet_size
    n = n_flows
    return (
        r_ai * n**2 / (params.alpha_timer * c**2) * (1 / b + n / (params.rate_timer * c)) ** 2
    ) ** (1 / 3)


def paper_loop_coefficients(params: DCQCNParams, n_flows: int):
    """num, den of the authors' open loop (Zhu et al.), packets of ``packet_size``.

    Returns
    -------
    num, den : numpy.ndarray
        Coefficients, highest power first; L(s) = num/den e^{-s tau*}.
    """
    pk = 8.0 * params.packet_size
    n = float(n_flows)
    c = params.line_rate / pk
    r_ai = params.r_ai / pk
    b_ = params.byte_counter / params.packet_size
    kmin = params.kmin / params.packet_size
    kmax = params.kmax / params.packet_size
    g, tau, taup, t_, f_ = (
        params.g,
        params.cnp_interval,
        params.alpha_timer,
        params.rate_timer,
        params.fr_th,
    )
    pmax = params.pmax
    rcs = c / n
    ps = taylor_p(params, n_flows)
    # (1-p)^x as exp(x log1p(-p)) and p/((1-p)^-x - 1) as p (1-p)^x/(1-(1-p)^x): the same
    # expressions, without overflow for large N
    l1p = math.log1p(-ps)
    alphas = -math.expm1(taup * c / n * l1p)
    a_ = 1 / b_ + 1 / (t_ * rcs)
    a = -math.expm1(tau * rcs * l1p)
    b = ps * math.exp(b_ * l1p) / -math.expm1(b_ * l1p)
    cc = math.exp(f_ * b_ * l1p) * b
    d = ps * math.exp(t_ * rcs * l1p) / -math.expm1(t_ * rcs * l1p)
    e = math.exp(f_ * t_ * rcs * l1p) * d
    rts = rcs * (1 + (cc + e) * tau * r_ai / a)
    k = n * pmax / (kmax - kmin)
    h = 0.5 + a_ / 4
    aa = (-0.5 * rcs**2 * alphas - h * rcs * rts + h * rcs**2) * k
    bb = -0.5 * ps * rcs * alphas - (a_ / 2) * rcs + h * ps * rcs
    cc_ = -0.5 * ps * rcs * alphas - (a_ / 2) * rcs + (a_ / 2) * rts + h * ps * rcs - h * ps * rts
    dd = -0.5 * ps * rcs**2 * g * c * k
    m = (a_ / 2) * rcs - h * ps * rcs
    ee = m * (ps * rcs + a_ * r_ai)
    ff = m * (-ps * rts + ps * rcs + a_ * r_ai - (1 + 2 * f_ + a_ / 2) * r_ai * ps)
    gg = m * (-rcs * rts + rcs**2 - (1 + 2 * f_ + a_ / 2) * r_ai * rcs) * k
    P = np.polynomial.Polynomial
    s = P([0.0, 1.0])
    ng = P([g * c, n])  # N s + g C
    sp_ = P([ps * rcs, 1.0])  # s + ps Rcs
    num = ng * sp_ * aa + ng * sp_ * s * bb + sp_ * dd + ng * s * ff + ng * gg
    den = -(s**2) * ng * sp_ + ng * sp_ * s * cc_ + s * ng * ee
    return num.coef[::-1].copy(), den.coef[::-1].copy()
