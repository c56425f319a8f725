"""The rational part G(s) = num(s)/den(s) of a delayed loop, factored for exact evaluation.

:class:`Rational` keeps G as ``k * s^-n_int * prod(s - z) / prod(s - p)`` so that ``log|G(jw)|``
and the *continuous* (unwrapped) ``arg G(jw)`` are sums over roots, robust for the large
coefficients of fluid-model loops. :mod:`qcnmodel.analysis.margins` finds gain crossovers,
phase crossings and the closed-loop count on it; :mod:`qcnmodel.analysis.loop` and
:mod:`qcnmodel.analysis.plot` read its corner frequencies and phase.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from qcnmodel import config

__all__ = ["Rational"]


class Rational:
    """Factored form of G = k * s^-n_int * prod(s - z) / prod(s - p)."""

    def __init__(self, num: np.ndarray, den: np.ndarray) -> None:
        num = np.trim_zeros(np.asarray(num, float), "f")
        den = np.trim_zeros(np.asarray(den, float), "f")
        nz_num = len(num) - len(np.trim_zeros(num, "b"))
        nz_den = len(den) - len(np.trim_zeros(den, "b"))
        self.n_int = nz_den - nz_num  # net integrators (negative: differentiators)
        self.num = num
        self.den = den
        rn, rd = np.trim_zeros(num, "b"), np.trim_zeros(den, "b")
        self.zeros = np.roots(rn) if len(rn) > 1 else np.zeros(0, complex)
        self.poles = np.roots(rd) if len(rd) > 1 else np.zeros(0, complex)
        self.k = rn[0] / rd[0]
        self.rel_degree = len(den) - len(num)
        self.low_gain = abs(rn[-1] / rd[-1])  # |G| ~ low_gain * w^-n_int as w -> 0

    def logmag(self, w: np.ndarray) -> np.ndarray:
        """log|G(jw)| for w > 0 (robust for large coefficients)."""
        w = np.asarray(w, float)
        jw = 1j * w[..., None]
        out = np.log(abs(self.k)) - self.n_int * np.log(w)
        if self.zeros.size:
            out = out + np.sum(np.log(np.abs(jw - self.zeros)), axis=-1)
        if self.poles.size:
            out = out - np.sum(np.log(np.abs(jw - self.poles)), axis=-1)
        return out

    @staticmethod
    def _theta(w: np.ndarray, r: np.ndarray) -> np.ndarray:
        # continuous arg(jw - r) for w > 0 (see module docstring):
        # atan(y/x) for x > 0, pi + atan(y/x) for x < 0, sign(y)*pi/2 for x = 0
        x = -r.real
        x = np.where(x == 0, 0.0, x)  # turn -0.0 into +0.0: atan(y/+0) = sign(y) pi/2
        y = np.asarray(w, float)[..., None] - r.imag
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.arctan(y / x) + np.pi * (x < 0)

    def phase(self, w: np.ndarray) -> np.ndarray:
        """Continuous (unwrapped) arg G(jw) in rad for w > 0."""
        w = np.asarray(w, float)
        out = np.full(w.shape, np.pi if self.k < 0 else 0.0) - self.n_int * np.pi / 2
        if self.zeros.size:
            out = out + np.sum(self._theta(w, self.zeros), axis=-1)
        if self.poles.size:
            out = out - np.sum(self._theta(w, self.poles), axis=-1)
        return out

    def dphase(self, w: np.ndarray) -> np.ndarray:
        """d arg G(jw) / dw (rad s) for w > 0: sum of x/(x^2 + y^2) over roots."""
        w = np.asarray(w, float)
        out = np.zeros(w.shape)
        for roots, sign in ((self.zeros, 1.0), (self.poles, -1.0)):
            if roots.size:
                x = -roots.real
                y = w[..., None] - roots.imag
                out = out + sign * np.sum(x / (x * x + y * y), axis=-1)
        return out

    def corners(self) -> np.ndarray:
        """Characteristic frequencies: root magnitudes and asymptote crossings.

        ``|G| = 1`` can only be met outside the span of the root magnitudes on
        an asymptote, so an asymptote's crossing is added only when it lies
        below the smallest (low-frequency) or above the largest (high) root.
        """
        r = np.concatenate([self.zeros, self.poles])
        mags = np.abs(r[np.abs(r) > 0])
        c = list(mags)
        lo_root = mags.min() if mags.size else np.inf
        hi_root = mags.max() if mags.size else 0.0
        if self.n_int != 0:  # low-frequency asymptote low_gain*w^-n_int = 1
            w_x = self.low_gain ** (1.0 / self.n_int)
            if w_x < lo_root:
                c.append(w_x)
        if self.rel_degree != 0:  # high-frequency asymptote |k| w^-rel = 1
            w_x = abs(self.k) ** (1.0 / self.rel_degree)
            if w_x > hi_root:
                c.append(w_x)
        c = np.asarray([v for v in c if np.isfinite(v) and v > 0])
        return c if c.size else np.array([1.0])

    def grid(self, per_decade: int | None = None, pad: float = 1e3) -> np.ndarray:
        """Log-spaced grid spanning all corners with ``pad`` on both sides (``per_decade``:
        ``config.defaults["analysis.crossover_grid_per_decade"]``)."""
        if per_decade is None:
            per_decade = config.defaults["analysis.crossover_grid_per_decade"]
        c = self.corners()
        lo, hi = np.log10(c.min() / pad), np.log10(c.max() * pad)
        return np.logspace(lo, hi, int(np.ceil((hi - lo) * per_decade)) + 1)

    def crossovers(self) -> np.ndarray:
        """All gain crossovers (|G(jw)| = 1), by brentq on log|G|."""
        w = self.grid()
        f = self.logmag(w)
        idx = np.nonzero(np.sign(f[:-1]) * np.sign(f[1:]) < 0)[0]
        roots = [brentq(self.logmag, w[i], w[i + 1], xtol=1e-14 * w[i]) for i in idx]
        roots += list(w[np.nonzero(f == 0.0)[0]])
        return np.sort(np.asarray(roots, float))

    def closed_loop_rhp(self) -> int:
        """Unstable roots of the delay-free closed loop den + num."""
        n = len(self.den)
        num = np.concatenate([np.zeros(n - len(self.num)), self.num])
        char = np.trim_zeros(self.den + num, "f")
        if len(char) <= 1:
            return 0
        r = np.roots(char)
        return int(np.sum(r.real > 1e-12 * max(1.0, np.abs(r).max())))
