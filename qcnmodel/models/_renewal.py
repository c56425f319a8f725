"""Renewal statistics of the reaction point's two cycle counters (byte counter and timer).

After every CNM the RP restarts both counters: the timer expires after ``T U1``, ``T U2``,
... seconds and the byte counter after ``B U1``, ``B U2``, ... bytes, each ``U ~ U(1-J, 1+J)``
drawn afresh per cycle (IEEE 802.1Qau RP; the jitter "margin of randomness: 30 %" of the
Stanford deck "QCN: Description and Benchmark Simulations"), and once a counter's own stage
reaches the fast-recovery threshold F its cycles are half as long. So the k-th expiry happens
at :math:`S_k = L \\sum_{i \\le k} \\ell_i U_i` on the counter's own clock (seconds or frames
sent since the CNM), :math:`\\ell_i = 1` for i <= F and 1/2 after.

The tables give, on a uniform grid of that clock, the event densities :math:`f_k(x)` of the
k-th expiry and the stage distribution :math:`P_k(x) = P(K(x) = k)`, from which the cohort
model (:mod:`._qcn_cohort`) takes every expectation it needs: the fast-recovery factor
:math:`\\Phi(x) = E[2^{-K(x)}]`, the probability of no expiry yet, the expiry rate in
fast recovery and after it, and the tails that give the hyperactive-increase index. These are
exact consequences of the renewal structure, computed once per (L, F, J) by convolving the
uniform cycle densities.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RenewalTable", "rate_averaged", "renewal_table"]

#: stages tabulated; beyond the last the counter is taken as staying at K_MAX (deep in AI/HAI)
K_MAX = 48
#: grid points of the clock
N_GRID = 6000


@dataclass(frozen=True)
class RenewalTable:
    """Stage statistics of one counter on a uniform clock grid ``x = i h``, i < n.

    Attributes
    ----------
    h : float
        Grid step (clock units per point).
    phi : ndarray (n,)
        :math:`E[2^{-K(x)}]`, the fraction of a fast-recovery gap left after the expiries
        so far.
    dphi : ndarray (n,)
        Its derivative in x, :math:`-\\sum_k 2^{-k} f_k(x)`.
    p0 : ndarray (n,)
        :math:`P(K(x) = 0)`: no expiry since the reset.
    nu : ndarray (n,)
        Expiry density :math:`\\sum_k f_k(x)`.
    nu_fr : ndarray (n,)
        Density of expiries that leave the stage <= F.
    p_gt : ndarray (n,)
        :math:`P(K(x) > F)`.
    nu_tail : ndarray (M, n)
        :math:`\\sum_{k \\ge F+m} f_k(x)` for m = 1..M (HAI index tails).
    p_tail : ndarray (M, n)
        :math:`P(K(x) \\ge F+m)` for m = 1..M.
    nu1 : ndarray (n,)
        Density of the first expiry (the TR/8 rule acts there).
    period : float
        The asymptotic cycle length (L/2), used beyond the grid.
    """

    h: float
    phi: np.ndarray
    dphi: np.ndarray
    p0: np.ndarray
    nu: np.ndarray
    nu_fr: np.ndarray
    p_gt: np.ndarray
    nu_tail: np.ndarray
    p_tail: np.ndarray
    nu1: np.ndarray
    period: float

    @property
    def n(self) -> int:
        return len(self.phi)

    @property
    def xmax(self) -> float:
        return self.h * (self.n - 1)

    def arrays(self):
        """The tables as a tuple for the compiled kernels (order fixed by the kernels)."""
        return (self.h, self.phi, self.dphi, self.p0, self.nu, self.nu_fr, self.p_gt,
                self.nu_tail, self.p_tail, self.period, self.nu1)  # fmt: skip


def _uniform_density(length: float, jitter: float, x: np.ndarray) -> np.ndarray:
    """Density of ``length * U(1 - J, 1 + J)`` on the grid (cell averages; a delta if J = 0)."""
    h = x[1] - x[0]
    d = np.zeros_like(x)
    lo, hi = length * (1.0 - jitter), length * (1.0 + jitter)
    # exact cell averages of the uniform density over [x_i - h/2, x_i + h/2]
    a = np.clip(x - h / 2, lo, hi)
    b = np.clip(x + h / 2, lo, hi)
    if hi > lo:
        d = (b - a) / ((hi - lo) * h)
    else:
        i = int(round(length / h))
        if i < len(x):
            d[i] = 1.0 / h
    return d


@functools.lru_cache(maxsize=64)
def renewal_table(length: float, fr_th: int, jitter: float, halving: bool = True,
                  k_max: int = K_MAX, n: int = N_GRID) -> RenewalTable:  # fmt: skip
    """Tables of a counter with nominal cycle ``length`` (clock units), threshold ``fr_th``.

    Parameters
    ----------
    length : float
        Nominal cycle L (s for the timer, frames for the byte counter); > 0.
    fr_th : int
        Fast-recovery threshold F (cycles are halved once the stage reaches F if
        ``halving``).
    jitter : float
        Half width J of the uniform cycle factor, in [0, 1).
    halving : bool
        Halve the cycles after F (the standard's rule) or not.
    """
    f_cyc = [1.0 if (i <= fr_th or not halving) else 0.5 for i in range(1, k_max + 1)]
    # the last clock value at which no flow can have passed K_MAX expiries: the tables are
    # complete below it, and beyond it the counter is deep in its halved cycles
    span = length * (1.0 - jitter) * sum(f_cyc)
    x = np.linspace(0.0, span, n)
    h = x[1] - x[0]
    if not (h > 0 and np.isfinite(span) and np.isfinite(length / h)):
        raise ValueError(f"no equilibrium: a counter's cycle ({length:.3g}, byte counter in "
                         "frames or timer in s) is too short to resolve")  # fmt: skip
    dens = np.zeros((k_max + 1, n))  # dens[k] = density of S_k (k >= 1)
    cur = None
    kernels = {}
    for k in range(1, k_max + 1):
        lk = length * f_cyc[k - 1]
        u = kernels.get(lk)
        if u is None:
            u = _uniform_density(lk, jitter, x)
            nz = np.nonzero(u)[0]
            u = (u[: nz[-1] + 1], nz[-1] + 1) if len(nz) else (u[:1], 1)
            kernels[lk] = u
        ker, m = u
        cur = ker.copy() if cur is None else np.convolve(cur, ker)[:n] * h
        if len(cur) < n:
            cur = np.pad(cur, (0, n - len(cur)))
        dens[k] = cur
    # P(S_k <= x) by the trapezoid-consistent cumulative sum of cell averages
    cdf = np.minimum(np.cumsum(dens, axis=1) * h, 1.0)
    cdf[0] = 1.0
    pmf = np.empty((k_max + 1, n))
    pmf[:k_max] = cdf[:k_max] - cdf[1:]
    pmf[k_max] = cdf[k_max]
    pmf = np.maximum(pmf, 0.0)
    w = 0.5 ** np.arange(k_max + 1)
    phi = w @ pmf
    dphi = -(w[1:] @ dens[1:])
    f = fr_th
    nu = dens[1:].sum(axis=0)
    nu_fr = dens[1 : f + 1].sum(axis=0)
    p_gt = pmf[f + 1 :].sum(axis=0)
    m_max = k_max - f
    nu_tail = np.empty((m_max, n))
    p_tail = np.empty((m_max, n))
    for m in range(1, m_max + 1):
        nu_tail[m - 1] = dens[f + m :].sum(axis=0)
        p_tail[m - 1] = pmf[f + m :].sum(axis=0)
    period = length * (0.5 if halving else 1.0)
    return RenewalTable(
        h, phi, dphi, pmf[0].copy(), nu, nu_fr, p_gt, nu_tail, p_tail, dens[1].copy(), period
    )


def rate_averaged(t: RenewalTable, cv: float, n_q: int = 24) -> RenewalTable:
    """The byte counter's table on a cohort's *mean* clock when each flow sends at rho times
    the cohort's mean rate, rho log-normal with mean 1 and coefficient of variation ``cv``:
    every statistic becomes E_rho[stat(rho x)] (densities scale by rho)."""
    if cv <= 0:
        return t
    s2 = math.log1p(cv * cv)
    z, wq = np.polynomial.hermite_e.hermegauss(n_q)
    wq = wq / wq.sum()
    rho = np.exp(math.sqrt(s2) * z - 0.5 * s2)
    x = np.arange(t.n) * t.h

    def avg(arr, beyond, density=False):
        arr2 = np.atleast_2d(arr)
        beyond = np.broadcast_to(beyond, (arr2.shape[0],))
        out = np.zeros_like(arr2)
        for r, w in zip(rho, wq):
            for i in range(arr2.shape[0]):
                v = np.interp(r * x, x, arr2[i], right=beyond[i])
                out[i] += w * (r * v if density else v)
        return out if np.ndim(arr) == 2 else out[0]

    inv = 1.0 / t.period
    return RenewalTable(
        t.h, avg(t.phi, 0.0), avg(t.dphi, 0.0, True), avg(t.p0, 0.0), avg(t.nu, inv, True),
        avg(t.nu_fr, 0.0, True), avg(t.p_gt, 1.0), avg(t.nu_tail, inv, True),
        avg(t.p_tail, 1.0), avg(t.nu1, 0.0, True), t.period,
    )  # fmt: skip
