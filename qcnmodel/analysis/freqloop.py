"""Open loops known by their exact frequency response: ``L(s) = G(s) * exp(-s*delay)``.

Some loops have no rational part: a population of reaction points whose cycles end at
(jittered) fixed ages answers a CNM with echoes at those ages, and its transfer function is
a Laplace transform, not a ratio of polynomials. :class:`FrequencyLoop` takes ``G`` as a
function that evaluates it exactly at any complex frequency and gives the same analysis as
:class:`~qcnmodel.analysis.loop.DelayedLoop`, with the same conventions
(:mod:`qcnmodel.analysis.margins`): gain crossovers of ``|G|`` (independent of the delay),
phase margin ``arg G(jw_c) + 180 deg`` decreasing linearly with the delay, the delay margin
and critical delay, phase crossovers for the gain margin, and stability by the argument
principle. ``G`` is tabulated once on a log grid (``w_range``, ``points_per_decade``) and
every crossing found there is refined on the exact function. A pair of gain crossovers closer
than the grid spacing (a dip of ``|G|`` below 1 and back between two grid points, or a peak
above it) shows on the table as a local extremum of ``|G|``: each one on the wrong side of 1
that can reach it between the nodes (:meth:`FrequencyLoop._hidden_pairs`) is refined on the
exact function too.

Assumptions, stated: ``G`` has ``origin_poles`` poles at s = 0 (the queue's integrator) and no
other pole with a non-negative real part, and ``|G| < 1`` above the grid. The delay-free
closed loop's unstable roots are counted by the winding of ``1 + G`` along the indented
imaginary axis; the delay-sweep form of the argument principle then gives stability at
every delay.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

import control
import numpy as np
from scipy.optimize import brentq

from qcnmodel.analysis.loop import control_name
from qcnmodel.analysis.margins import Margins, NyquistCount, delay_sweep

__all__ = ["FrequencyLoop"]

_TWO_PI = 2.0 * np.pi


#: log|G| within which a table extremum is refined whatever its curvature (|G| within 2 %)
_NEAR_UNITY = 0.02


def _at_delay(g, tau, s):
    """``g(s, tau)`` at one delay (module-level: picklable)."""
    return g(s, tau)


@dataclass(frozen=True, eq=False)
class FrequencyLoop:
    """Loop with an exact, non-rational delay-free part ``G`` and an exact delay.

    Parameters
    ----------
    g : callable
        ``g(s) -> complex array`` for an array of complex frequencies ``s``.
    delay : float
        Transport delay (s), >= 0.
    name : str
        Label for plots.
    w_range : (float, float)
        Frequencies (rad/s) between which ``G`` is tabulated; ``|G|`` must cross 1 inside.
    points_per_decade : int
        Tabulation density.
    origin_poles : int
        Poles of ``G`` at s = 0.
    g_delay : bool
        ``g(s, delay)`` depends on the delay too: the loop has other delayed paths than the
        one it is broken at (:meth:`qcnmodel.analysis.linearize.LinearDDE.direct_transfer`).
        Each delay then has its own ``G``: margins over delays are computed delay by delay,
        and the phase margin no longer falls linearly with the delay.
    delay_boundary : float, optional
        With ``g_delay``: the delay at which the closed loop first loses stability, from its
        characteristic equation (:meth:`~qcnmodel.analysis.linearize.LinearDDE.delay_boundary`);
        it is the ``critical_delay_s`` of the margins (``delay_margin_s`` = it less the delay).
    """

    g: Callable
    delay: float = 0.0
    name: str = ""
    w_range: tuple = (1e-1, 1e6)
    points_per_decade: int = 60
    origin_poles: int = 1
    g_delay: bool = False
    delay_boundary: float | None = None

    def __post_init__(self) -> None:
        delay = float(self.delay)
        if not np.isfinite(delay) or delay < 0:
            raise ValueError(f"delay must be finite and >= 0 (got {self.delay!r})")
        object.__setattr__(self, "delay", delay)

    # ------------------------------------------------------------------ values
    def G(self, s) -> np.ndarray:
        """The delay-free part at complex frequencies ``s`` (at the loop's delay if it
        depends on it, ``g_delay``)."""
        s = np.atleast_1d(np.asarray(s, dtype=complex))
        return np.asarray(self.g(s, self.delay) if self.g_delay else self.g(s), dtype=complex)

    def __call__(self, s):
        """Exact value ``G(s) exp(-s delay)``."""
        s = np.asarray(s, dtype=complex)
        out = self.G(s.reshape(-1)) * np.exp(-s.reshape(-1) * self.delay)
        return out.reshape(s.shape) if s.ndim else out[0]

    def with_delay(self, tau: float) -> FrequencyLoop:
        """Same ``G`` with delay ``tau`` (the tabulation is shared)."""
        new = dataclasses.replace(self, delay=tau)
        if "_table" in self.__dict__ and not self.g_delay:
            new.__dict__["_table"] = self.__dict__["_table"]
        return new

    @functools.cached_property
    def _table(self):
        lo, hi = self.w_range
        n = int(np.ceil(np.log10(hi / lo) * self.points_per_decade)) + 1
        w = np.logspace(np.log10(lo), np.log10(hi), n)
        g = np.concatenate([self.G(1j * w[i : i + 64]) for i in range(0, n, 64)])
        if not np.all(np.isfinite(g)):
            raise ValueError("G is not finite on the frequency grid")
        return w, g

    def default_omega(self) -> np.ndarray:
        """The tabulation grid (rad/s)."""
        return self._table[0]

    def frequency_response(self, omega=None) -> control.FrequencyResponseData:
        """FRD of the exact values ``L(jw)`` (delay included)."""
        if omega is None:
            w, g = self._table
        else:
            w = np.asarray(omega, float)
            g = self.G(1j * w)
        return control.frd(g * np.exp(-1j * w * self.delay), w, name=control_name(self.name))

    # ------------------------------------------------------------- crossings
    @functools.cached_property
    def _crossovers(self):
        """(w_c, PM0 [rad, wrapped to [-pi, pi)], direction +1 where |G| falls through 1)."""
        w, g = self._table
        with np.errstate(divide="ignore"):  # an open loop (G = 0) has no crossover
            lm = np.log(np.abs(g))
        idx = np.nonzero(np.sign(lm[1:]) != np.sign(lm[:-1]))[0]
        brackets = [(w[i], w[i + 1], 1 if lm[i + 1] < lm[i] else -1) for i in idx]
        brackets += self._hidden_pairs(w, lm)
        out = []
        for a, b, direction in brackets:
            wc = brentq(self._log_gain, a, b, rtol=1e-12)
            pm0 = np.remainder(np.angle(self.G(1j * wc)[0]) + np.pi + np.pi, _TWO_PI) - np.pi
            out.append((wc, pm0, direction))
        if not out:
            return np.zeros(0), np.zeros(0), np.zeros(0, int)
        a = np.array(sorted(out))
        return a[:, 0], a[:, 1], a[:, 2].astype(int)

    def _log_gain(self, x: float) -> float:
        return float(np.log(abs(self.G(1j * x)[0])))

    def _hidden_pairs(self, w, lm) -> list:
        """Brackets of the gain crossovers that come in pairs between two grid points.

        A dip of ``|G|`` below 1 (or a peak above it) narrower than the grid spacing leaves
        no sign change on the table, only a local extremum of ``log|G|`` at a grid point.
        Each such extremum on the wrong side of 0, and within twice its second difference
        of 0 (a feature that can reach 0 between the nodes; smooth ripple far from
        ``|G| = 1`` is left), is refined on the exact ``G`` over its two neighbouring
        intervals; where the true extremum crosses 0, the pair of crossovers on either side
        of it is bracketed (direction +1 where ``|G|`` falls).
        """
        from scipy.optimize import minimize_scalar

        out = []
        with np.errstate(invalid="ignore"):  # G = 0 somewhere: log|G| = -inf there
            slope = np.diff(lm)
        for i in np.nonzero(slope[:-1] * slope[1:] < 0)[0] + 1:
            peak = slope[i - 1] > 0  # a local maximum of log|G| on the table
            if not np.all(np.isfinite(lm[i - 1 : i + 2])) or (lm[i] >= 0) == peak:
                continue  # a crossing shows on the table already, or none can hide here
            if abs(lm[i]) > 2.0 * abs(slope[i] - slope[i - 1]) + _NEAR_UNITY:
                continue  # far from |G| = 1 for its curvature: a smooth ripple away from 1
            sign = -1.0 if peak else 1.0
            res = minimize_scalar(lambda u, sign=sign: sign * self._log_gain(np.exp(u)),
                                  bounds=(np.log(w[i - 1]), np.log(w[i + 1])), method="bounded",
                                  options={"xatol": 1e-9})  # fmt: skip
            w_ext = float(np.exp(res.x))
            if (self._log_gain(w_ext) > 0) != peak:
                continue  # the extremum stays on the same side of 0
            first = -1 if peak else 1  # |G| rises through 1 before a peak, falls before a dip
            out += [(w[i - 1], w_ext, first), (w_ext, w[i + 1], -first)]
        return out

    @functools.cached_property
    def _z0(self) -> int:
        """Unstable roots of the delay-free closed loop 1 + G = 0 (winding along the indented
        axis, doubled by symmetry; origin poles avoided on the right)."""
        w, g = self._table
        v = 1.0 + g
        total = float(np.sum(np.angle(v[1:] / v[:-1])))
        total += -np.angle(v[-1])  # |G| small beyond the grid: back to arg 0
        # from s = 0+ (1 + G real and positive) to the first grid point: the quarter circle
        # around the origin poles and the axis below w_lo
        total += np.angle(v[0])
        return max(0, -int(np.rint(2 * total / _TWO_PI)))

    def margins_over_delay(self, taus) -> Margins:
        """Margins for every delay in ``taus`` (same conventions as
        :func:`qcnmodel.analysis.margins.margins_over_delay`)."""
        from qcnmodel.analysis._args import delays

        taus = delays(taus)
        if self.g_delay:
            return self._margins_delay_by_delay(taus)
        shape = taus.shape
        taus = taus.reshape(-1)
        wc, pm, dm, crit, z = delay_sweep(*self._crossovers, self._z0, taus, slack=True)
        wpc, gm = self._gain_margins(taus)
        with np.errstate(divide="ignore"):
            gm_db = 20 * np.log10(gm)

        def out(x):
            return np.asarray(x).reshape(shape)

        return Margins(gain_margin=out(gm), gain_margin_db=out(gm_db),
                       phase_margin_deg=out(pm), crossover_rad_s=out(wc),
                       phase_crossover_rad_s=out(wpc), delay_margin_s=out(dm),
                       stable=out(z == 0), critical_delay_s=out(crit))  # fmt: skip

    def _margins_delay_by_delay(self, taus: np.ndarray) -> Margins:
        """Margins of a loop whose ``G`` depends on the delay: each delay's own loop, with
        the critical delay from the characteristic equation (``delay_boundary``)."""
        rows = []
        for tau in taus.reshape(-1).tolist():
            fixed = dataclasses.replace(self, g=functools.partial(_at_delay, self.g, tau),
                                        delay=tau, g_delay=False)  # fmt: skip
            m = fixed.margins_over_delay(np.array([tau])).at(0)
            if self.delay_boundary is not None and np.isfinite(m.crossover_rad_s):
                m = dataclasses.replace(m, critical_delay_s=self.delay_boundary,
                                        delay_margin_s=self.delay_boundary - tau)  # fmt: skip
            rows.append(m)
        return Margins(**{f.name: np.array([getattr(m, f.name) for m in rows]).reshape(taus.shape)
                          for f in dataclasses.fields(Margins)})  # fmt: skip

    def _gain_margins(self, taus):
        """Phase crossovers arg G - w tau = -pi (mod 2 pi): the one with the largest |G|.

        Bracketed on the table, then refined on the exact ``G`` for all delays at once
        (:meth:`_refine_phase`): one vectorised evaluation of ``G`` per iteration.
        """
        w, g = self._table
        wpc = np.full(len(taus), np.nan)
        gm = np.full(len(taus), np.inf)
        if not np.any(g):  # an open loop: no phase crossover, infinite gain margin
            return wpc, gm
        ph = np.unwrap(np.angle(g))
        with np.errstate(divide="ignore"):
            lm = np.log(np.abs(g))
        rows, brackets, targets = [], [], []
        for r, tau in enumerate(taus):
            lev = np.floor((ph - w * tau + np.pi) / _TWO_PI)
            idx = np.nonzero(lev[1:] != lev[:-1])[0]
            if idx.size == 0:
                continue
            i = idx[np.argmax(np.maximum(lm[idx], lm[idx + 1]))]
            rows.append(r)
            brackets.append(i)
            targets.append(max(lev[i], lev[i + 1]) * _TWO_PI - np.pi)
        if not rows:
            return wpc, gm
        rows, i = np.array(rows), np.array(brackets)
        t, tg = taus[rows], np.array(targets)
        ends = (ph[i] - w[i] * t - tg, ph[i + 1] - w[i + 1] * t - tg)  # exact at the nodes
        x, gx = self._refine_phase(w[i], w[i + 1], ends, t, tg, w, ph)
        wpc[rows] = x
        gm[rows] = 1.0 / np.abs(gx)
        return wpc, gm

    def _refine_phase(self, lo, hi, ends, taus, targets, w, ph, rtol=1e-12, max_iter=100):
        """Roots of ``arg G(jx) - x tau - target`` in ``[lo, hi]``, one per delay.

        ``ends`` holds the function's values at ``lo`` and ``hi`` (table nodes, where the
        tabulated phase is exact). The continuous phase puts ``angle()`` on the branch of the
        tabulated phase. A vectorised Illinois (modified regula falsi) iteration, bisecting
        where a step leaves its bracket; it stops when every bracket is below ``rtol``
        relative or the function vanishes. Returns the roots and ``G`` there.
        """
        lw = np.log(w)

        def f(x, tau, target):
            gx = self.G(1j * x)
            a = np.angle(gx)
            ref = np.interp(np.log(x), lw, ph)
            return a + _TWO_PI * np.round((ref - a) / _TWO_PI) - x * tau - target, gx

        lo, hi = lo.astype(float).copy(), hi.astype(float).copy()
        flo, fhi = (np.array(e, float) for e in ends)
        x = np.where(np.abs(flo) < np.abs(fhi), lo, hi)
        todo = np.nonzero((flo != 0) & (fhi != 0))[0]
        x[flo == 0], x[fhi == 0] = lo[flo == 0], hi[fhi == 0]
        side = np.zeros(lo.size, int)  # which end moved last (Illinois halving)
        for _ in range(max_iter):
            if todo.size == 0:
                break
            a, b, fa, fb = lo[todo], hi[todo], flo[todo], fhi[todo]
            with np.errstate(all="ignore"):
                xt = b - fb * (b - a) / (fb - fa)
            bad = ~np.isfinite(xt) | (xt <= a) | (xt >= b)
            xt = np.where(bad, 0.5 * (a + b), xt)
            fx, _ = f(xt, taus[todo], targets[todo])
            x[todo] = xt
            left = np.sign(fx) == np.sign(fa)  # root in [xt, b]
            lo[todo] = np.where(left, xt, a)
            hi[todo] = np.where(left, b, xt)
            flo[todo] = np.where(left, fx, np.where(side[todo] == -1, 0.5 * fa, fa))
            fhi[todo] = np.where(left, np.where(side[todo] == 1, 0.5 * fb, fb), fx)
            side[todo] = np.where(left, 1, -1)
            done = (fx == 0) | (hi[todo] - lo[todo] <= rtol * hi[todo])
            todo = todo[~done]
        return x, self.G(1j * x)

    def nyquist_contour(self) -> tuple[np.ndarray, np.ndarray]:
        """Points ``s = jw`` of the tabulation grid and ``L(s)`` there (upper half)."""
        w, g = self._table
        return 1j * w, g * np.exp(-1j * w * self.delay)

    def nyquist_count(self) -> NyquistCount:
        """Closed-loop unstable roots at the loop's delay (delay-sweep argument principle;
        no open-loop pole in the right half plane by assumption)."""
        m = self.margins_over_delay(np.array([self.delay]))
        z = int(self._z0 + 2 * self._crossings_at(self.delay))
        assert bool(np.asarray(m.stable).reshape(-1)[0]) == (z == 0)
        return NyquistCount(z, 0, z)

    def _crossings_at(self, tau: float) -> int:
        wc_all, pm0_all, direction = self._crossovers
        if not wc_all.size:
            return 0
        a = np.remainder(pm0_all, _TWO_PI)
        wt = wc_all * tau
        n_cross = np.where(wt >= a * (1 - 1e-12), np.floor((wt - a) / _TWO_PI + 1e-9) + 1, 0)
        return int((n_cross * direction).sum())

    def margins(self) -> Margins:
        """Scalar margins at the loop's own delay."""
        return self.margins_over_delay(np.array([self.delay])).at(0)

    def critical_delay(self) -> float:
        """Loop delay at which the phase margin reaches zero (``Margins.critical_delay_s``:
        inf without crossover, NaN when unstable without delay and no margin runs out)."""
        return float(self.margins().critical_delay_s)

    # ------------------------------------------------------------- time domain
    def step_response(self, T=None, pade_order=None):
        """Closed-loop unit step response of ``L/(1+L)`` with the exact delay (no Pade).

        Fourier inversion of the exact closed-loop response ``Tc = L/(1+L)``: the impulse
        response :math:`h(t) = (2/\\pi)\\int_0^\\infty \\mathrm{Re}\\,Tc(j\\omega)
        \\cos \\omega t\\,d\\omega` (a real, causal, stable system) by an FFT on a grid
        reaching 50 times the crossover frequency, then integrated; ``G`` is interpolated
        (log magnitude, continuous phase) from the tabulation. ``pade_order`` is accepted for
        the interface of :meth:`DelayedLoop.step_response` and ignored (reported as 0).
        """
        from qcnmodel import config
        from qcnmodel.analysis.loop import StepResponse

        m = self.margins()
        if not m.stable:
            raise ValueError("step_response: the closed loop is unstable (no step response)")
        w0 = m.crossover_rad_s if np.isfinite(m.crossover_rad_s) else 10 * self.w_range[0]
        points = config.defaults["analysis.step_points"]
        if T is None:
            t = np.linspace(0.0, config.defaults["analysis.step_periods"] * 2 * np.pi / w0, points)
        elif np.ndim(T) == 0:
            t = np.linspace(0.0, float(T), points)
        else:
            t = np.asarray(T, float)
        wt, gt = self._table
        if not np.any(gt):  # an open loop: the closed loop L/(1+L) is 0
            return StepResponse(time=t, output=np.zeros_like(t), name=self.name, pade_order=0)
        dt = np.pi / (50.0 * w0)
        n = int(2 ** np.ceil(np.log2(max(4.0 * t[-1] / dt, 64.0))))
        w = 2 * np.pi / (n * dt) * np.arange(n // 2 + 1)
        x = np.log(np.clip(w[1:], wt[0], wt[-1]))
        lw = np.exp(
            np.interp(x, np.log(wt), np.log(np.abs(gt)))
            + 1j * (np.interp(x, np.log(wt), np.unwrap(np.angle(gt))) - w[1:] * self.delay)
        )
        re_tc = np.concatenate([[1.0], np.real(lw / (1.0 + lw))])  # Tc(0) = 1 (integrator)
        h = (2.0 / np.pi) * (w[1] - w[0]) * (n / 2.0) * np.fft.irfft(re_tc, n)
        tg = dt * np.arange(n)
        y = np.concatenate([[0.0], np.cumsum(0.5 * (h[1:] + h[:-1]) * dt)])
        return StepResponse(time=t, output=np.interp(t, tg, y), name=self.name, pade_order=0)

    # ---------------------------------------------------------------- plotting
    def plot_bode(self, ax=None, **kw):
        """Bode plot with the exact delay (see :func:`qcnmodel.analysis.plot.plot_bode`)."""
        from qcnmodel.analysis.plot import plot_bode

        return plot_bode(self, ax=ax, **kw)

    def plot_nyquist(self, ax=None, **kw):
        """Nyquist plot (see :func:`qcnmodel.analysis.plot.plot_nyquist`)."""
        from qcnmodel.analysis.plot import plot_nyquist

        return plot_nyquist(self, ax=ax, **kw)

    def __repr__(self) -> str:
        return f"FrequencyLoop(delay={self.delay!r}, name={self.name!r})"
