"""Symbolic linearisation of single-delay delay-differential systems.

A system is given as SymPy expressions with the undelayed states ``x`` and the delayed states
``xd`` (standing for :math:`x(t-\\tau)`) kept apart:

.. math::  x'(t) = f\\bigl(x(t), x(t-\\tau), \\theta\\bigr).

At a fixed point :math:`x^*` (a root of :math:`f(x^*, x^*, \\theta) = 0`, found numerically with
:func:`scipy.optimize.root`) the linearisation is
:math:`\\delta x' = A_0\\,\\delta x(t) + A_1\\,\\delta x(t-\\tau)` with
:math:`A_0 = \\partial f/\\partial x` and :math:`A_1 = \\partial f/\\partial x_\\tau`; its
characteristic quasi-polynomial is :math:`\\det(sI - A_0 - A_1 e^{-s\\tau})`.

Open loop
---------
If :math:`A_1` has rank one, :math:`A_1 = b c^T`, the delayed path is a single scalar channel
and the matrix determinant lemma gives the exact single-delay loop

.. math::

    \\det(sI - A_0 - A_1 e^{-s\\tau}) = P_0(s)\\,\\bigl(1 + L(s)\\bigr), \\qquad
    L(s) = -c^T (sI - A_0)^{-1} b\\, e^{-s\\tau}
         = \\frac{P_1(s)}{P_0(s)}\\, e^{-s\\tau},

with :math:`P_0(s) = \\det(sI - A_0)` and, because the determinant is affine in
:math:`e^{-s\\tau}` when the rank is one, :math:`P_1(s) = \\det(sI - A_0 - A_1) - P_0(s)`
(no explicit factorisation of :math:`A_1` is needed). The closed loop is stable iff the
quasi-polynomial has no root with :math:`\\Re s \\ge 0`, which is what the Nyquist criterion on
:math:`L` decides (mind the open-loop poles, the roots of :math:`P_0`).

If :math:`A_1` has rank :math:`r > 1` the quasi-polynomial contains
:math:`e^{-k s\\tau}, k \\le r`, and no exact single-delay loop exists. The system can then be
given a *loop channel*: a scalar delayed signal :math:`y = h(x_\\tau)` (for QCN the feedback
:math:`Fb(t-\\tau)` computed by the CP, for DCQCN the marking probability
:math:`p(t-\\tau^*)`), with ``f`` written in terms of ``y`` and of the remaining direct uses of
:math:`x_\\tau`. Then :math:`A_1 = b c^T + A_1^{d}` with :math:`b = \\partial f/\\partial y`,
:math:`c = \\partial h/\\partial x_\\tau` and :math:`A_1^{d} = \\partial f/\\partial x_\\tau|_y`
(the direct uses, e.g. the delayed rate that sets the rate of CNM or CNP arrivals). The loop is
broken at ``y``:

.. math::  L(s) = -c^T (sI - A_0 - A_1^{d})^{-1} b \\, e^{-s\\tau},

which is exact when :math:`A_1^{d} = 0` at the fixed point (the base QCN model: the delayed
rate only multiplies terms that vanish at equilibrium) and otherwise treats the direct delayed
paths as undelayed (:math:`e^{-s\\tau} \\approx 1` on them). The relative size
:math:`\\|A_1^{d}\\| / \\|A_1\\|` is reported as ``neglected``; :meth:`LinearDDE.characteristic`
always evaluates the exact quasi-polynomial, so the approximation can be checked.

Coefficient evaluation is vectorised: the Jacobians are ``sympy.lambdify``-ed once per system
and accept arrays of operating points; characteristic polynomials are computed in batch by the
Faddeev-LeVerrier recursion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.optimize import root

__all__ = [
    "DelaySystem",
    "LinearDDE",
    "charpoly_batch",
    "open_loop",
    "finite_difference_jacobian",
]


def charpoly_batch(a: np.ndarray) -> np.ndarray:
    """Coefficients of det(sI - A), highest power first, for a batch of matrices.

    Parameters
    ----------
    a : numpy.ndarray
        Matrices, shape (..., n, n).

    Returns
    -------
    numpy.ndarray
        Shape (..., n+1); the leading coefficient is 1 (Faddeev-LeVerrier recursion).
    """
    a = np.asarray(a, dtype=float)
    n = a.shape[-1]
    batch = a.shape[:-2]
    coeffs = np.zeros(batch + (n + 1,))
    coeffs[..., 0] = 1.0
    eye = np.broadcast_to(np.eye(n), batch + (n, n))
    m = np.zeros(batch + (n, n))
    for k in range(1, n + 1):
        m = a @ m + coeffs[..., k - 1, None, None] * eye
        am = a @ m
        coeffs[..., k] = -np.trace(am, axis1=-2, axis2=-1) / k
    # the constant term from an LU determinant: exact zero for a structurally singular A
    # (e.g. the queue integrator), where the recursion leaves round-off
    coeffs[..., n] = (-1.0) ** n * np.linalg.det(a)
    return coeffs


def finite_difference_jacobian(fun, x: np.ndarray, rel_step: float = 1e-6) -> np.ndarray:
    """Central finite-difference Jacobian of ``fun`` at ``x``.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> array`` (m,).
    x : numpy.ndarray
        Point (n,).
    rel_step : float
        Step relative to ``max(|x_i|, 1)``.

    Returns
    -------
    numpy.ndarray
        (m, n).
    """
    x = np.asarray(x, dtype=float)
    f0 = np.asarray(fun(x), dtype=float)
    jac = np.empty((f0.size, x.size))
    for i in range(x.size):
        h = rel_step * max(abs(x[i]), 1.0)
        xp = x.copy()
        xm = x.copy()
        xp[i] += h
        xm[i] -= h
        jac[:, i] = (np.asarray(fun(xp)) - np.asarray(fun(xm))) / (2 * h)
    return jac


@dataclass(frozen=True)
class LinearDDE:
    """Linearisation at one operating point.

    Attributes
    ----------
    x_star : numpy.ndarray
        Fixed point (n,).
    a0, a1 : numpy.ndarray
        Undelayed and delayed Jacobians (n, n).
    delay : float
        The delay tau, s.
    """

    x_star: np.ndarray
    a0: np.ndarray
    a1: np.ndarray
    delay: float
    b: np.ndarray | None = None
    c: np.ndarray | None = None
    a1_direct: np.ndarray | None = None

    def open_loop(self, rank_rtol: float = 1e-9):
        """(num, den, neglected) of the single-delay loop; see :func:`open_loop`."""
        return open_loop(self.a0, self.a1, self.b, self.c, self.a1_direct, rank_rtol)

    def root_near(self, s0: complex, tol: float = 1e-10, max_iter: int = 100) -> complex:
        """A root of the exact characteristic function near ``s0`` (Newton, secant slope).

        Raises
        ------
        RuntimeError
            Without convergence.
        """
        s = complex(s0)
        scale = max(abs(s), 1.0)
        for _ in range(max_iter):
            h = 1e-7 * scale
            f = complex(self.characteristic(s))
            df = (complex(self.characteristic(s + h)) - complex(self.characteristic(s - h))) / (
                2 * h
            )
            step = f / df
            s -= step
            if abs(step) < tol * scale:
                return s
        raise RuntimeError(f"no characteristic root found near {s0}")

    def rank_a1(self, rtol: float = 1e-9) -> int:
        """Numerical rank of A1 (singular values above ``rtol`` times the largest)."""
        sv = np.linalg.svd(self.a1, compute_uv=False)
        return int(np.sum(sv > rtol * sv[0])) if sv[0] > 0 else 0

    def direct_transfer(self, s, delay: float | None = None) -> np.ndarray:
        """The loop's delay-free part with the direct delayed paths kept delayed:
        ``G(s) = -c^T (sI - A0 - A1_direct e^{-s tau})^{-1} b`` (module docstring), at the
        delay ``delay`` (default :attr:`delay`). With it ``1 + G(s) e^{-s tau}`` is the exact
        characteristic function over ``det(sI - A0 - A1_direct e^{-s tau})``; ``G`` depends
        on the delay unless ``A1_direct`` is 0. Needs the loop channel (``b``, ``c``)."""
        if self.b is None or self.c is None:
            raise ValueError("direct_transfer: needs a loop channel (b, c)")
        tau = self.delay if delay is None else float(delay)
        s = np.atleast_1d(np.asarray(s, dtype=complex))
        n = self.a0.shape[-1]
        a1d = np.zeros((n, n)) if self.a1_direct is None else self.a1_direct
        mats = s[:, None, None] * np.eye(n) - self.a0 - a1d * np.exp(-s * tau)[:, None, None]
        x = np.linalg.solve(mats, np.broadcast_to(self.b, (s.size, n))[..., None])[..., 0]
        return -(x @ self.c)

    def delay_boundary(self, w_range=(1e-1, 1e6), points_per_decade: int = 200,
                       rank_rtol: float = 1e-9) -> float:  # fmt: skip
        """Smallest delay (s) at which a root of the exact quasi-polynomial
        ``det(sI - A0 - A1 e^{-s tau})`` reaches the imaginary axis, for a system stable at
        delay 0 (every eigenvalue of ``A0 + A1`` in the open left half plane): the delay at
        which it first loses stability.

        With ``A1 = U V`` of rank r, ``det(jwI - A0 - z A1) = 0`` for ``z = 1/mu``, mu an
        eigenvalue of the r x r matrix ``V (jwI - A0)^{-1} U``. A root sits at ``s = jw`` for
        the delays with ``e^{-jw tau} = z``, so where ``|z| = 1``: ``tau = (-arg z mod 2 pi)
        / w``. The magnitudes ``|z|``, sorted, are continuous in w; their crossings of 1 are
        bracketed on a log grid of ``w_range`` (rad/s, ``points_per_decade``) and refined
        by brentq. Exact for any rank (for rank one it is the critical delay of the
        single-delay loop).

        Returns
        -------
        float
            The delay; ``inf`` when no root reaches the axis in ``w_range``; ``nan`` when the
            system is unstable at delay 0.
        """
        from scipy.optimize import brentq

        n = self.a0.shape[-1]
        if np.max(np.linalg.eigvals(self.a0 + self.a1).real) >= 0:
            return float("nan")
        u, sv, vt = np.linalg.svd(self.a1)
        r = int(np.sum(sv > rank_rtol * sv[0])) if sv[0] > 0 else 0
        if r == 0:
            return float("inf")
        left, right = u[:, :r] * sv[:r], vt[:r]

        def zs(w):  # the roots z at each frequency, by magnitude
            w = np.atleast_1d(np.asarray(w, dtype=float))
            mats = 1j * w[:, None, None] * np.eye(n) - self.a0
            k = right @ np.linalg.solve(mats, np.broadcast_to(left, (w.size, n, r)))
            mu = np.linalg.eigvals(k)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(mu != 0, 1.0 / np.where(mu != 0, mu, 1.0), np.inf)
            return np.take_along_axis(z, np.argsort(np.abs(z), axis=1), axis=1)

        lo, hi = w_range
        w = np.geomspace(lo, hi, int(np.ceil(np.log10(hi / lo) * points_per_decade)) + 1)
        with np.errstate(divide="ignore"):
            lz = np.log(np.abs(zs(w)))
        best = np.inf
        for k in range(r):
            for i in np.nonzero(np.sign(lz[1:, k]) != np.sign(lz[:-1, k]))[0]:
                if not (np.isfinite(lz[i, k]) and np.isfinite(lz[i + 1, k])):
                    continue
                wc = brentq(lambda x, k=k: float(np.log(np.abs(zs(x)[0, k]))), w[i], w[i + 1],
                            rtol=1e-13)  # fmt: skip
                z = zs(wc)[0, k]
                best = min(best, float(np.remainder(-np.angle(z), 2 * np.pi) / wc))
        return best

    def characteristic(self, s) -> np.ndarray:
        """Exact characteristic function det(sI - A0 - A1 e^{-s tau}) at complex ``s``."""
        s = np.asarray(s, dtype=complex)
        n = self.a0.shape[-1]
        mats = (
            s[..., None, None] * np.eye(n)
            - self.a0
            - self.a1 * np.exp(-s * self.delay)[..., None, None]
        )
        return np.linalg.det(mats)


def open_loop(a0, a1, b=None, c=None, a1_direct=None, rank_rtol: float = 1e-9):
    """Numerator and denominator of L(s) = num(s)/den(s) e^{-s tau} (see module docstring).

    Parameters
    ----------
    a0, a1 : numpy.ndarray
        Jacobians, shape (..., n, n) (a batch is allowed).
    b, c, a1_direct : numpy.ndarray, optional
        Loop-channel split ``a1 = outer(b, c) + a1_direct`` (shapes (..., n), (..., n),
        (..., n, n)); without it, ``a1`` must have rank one.
    rank_rtol : float
        Relative singular-value threshold of the rank test.

    Returns
    -------
    num, den : numpy.ndarray
        Coefficients, highest power first, shape (..., n+1); num's leading entry is 0.
    neglected : numpy.ndarray
        ``|a1_direct| / |a1|`` (Frobenius): relative size of the delayed paths treated as
        undelayed (0 when exact).
    """
    a0 = np.asarray(a0, dtype=float)
    a1 = np.asarray(a1, dtype=float)
    if b is None:
        sv = np.linalg.svd(a1, compute_uv=False)
        if sv.shape[-1] > 1 and np.any(sv[..., 1] > rank_rtol * sv[..., 0]):
            raise ValueError(
                "A1 has rank > 1: no exact single-delay loop exists; define a loop channel "
                "(DelaySystem(..., channel=...)) to break the loop at one delayed signal"
            )
        neglected = np.zeros(a1.shape[:-2])
        a0_eff, a1_eff = a0, a1
    else:
        b = np.asarray(b, dtype=float)
        c = np.asarray(c, dtype=float)
        a1_direct = np.zeros_like(a1) if a1_direct is None else np.asarray(a1_direct, float)
        norm = np.linalg.norm(a1, axis=(-2, -1))
        neglected = np.linalg.norm(a1_direct, axis=(-2, -1)) / np.where(norm > 0, norm, 1.0)
        a0_eff = a0 + a1_direct
        a1_eff = b[..., :, None] * c[..., None, :]
    den = charpoly_batch(a0_eff)
    num = charpoly_batch(a0_eff + a1_eff) - den
    num[..., 0] = 0.0
    return num, den, neglected


class DelaySystem:
    """A symbolic single-delay system, lambdified for fast numeric linearisation.

    Parameters
    ----------
    f : sequence of sympy.Expr
        Right-hand sides (n).
    x, xd : sequence of sympy.Symbol
        Undelayed and delayed state symbols (n each), in the same order.
    params : sequence of sympy.Symbol
        Parameter symbols; numeric values are passed in this order.
    channel : tuple (sympy.Symbol, sympy.Expr), optional
        Loop channel ``(y, h(xd))``: ``f`` may contain the symbol ``y``, which stands for the
        delayed scalar signal ``h(xd)`` (see the module docstring).
    """

    def __init__(self, f, x, xd, params, channel=None):
        self.x = list(x)
        self.xd = list(xd)
        self.params = list(params)
        n = len(self.x)
        f = sp.Matrix(list(f))
        if f.shape[0] != n or len(self.xd) != n:
            raise ValueError("f, x and xd must have the same length")
        args = (self.x, self.xd, self.params)
        mods = ["numpy", "scipy"]
        self.channel = channel
        self._at_channel = None
        if channel is not None:
            y, h = channel
            self._f_channel = f
            self.f = f.subs(y, h)
            self.b_expr = f.jacobian([y]).subs(y, h)
            self.c_expr = sp.Matrix([h]).jacobian(self.xd)
            self.j1_direct = f.jacobian(self.xd).subs(y, h)
            self._split = sp.lambdify(
                args,
                [self.b_expr.tolist(), self.c_expr.tolist(), self.j1_direct.tolist()],
                modules=mods,
                cse=True,
            )
        else:
            self.f = f
        self.j0 = self.f.jacobian(self.x)
        self.j1 = self.f.jacobian(self.xd)
        self._f = sp.lambdify(args, list(self.f), modules=mods, cse=True)
        self._j01 = sp.lambdify(args, [self.j0.tolist(), self.j1.tolist()], modules=mods, cse=True)

    def rhs(self, x, xd, pvals) -> np.ndarray:
        """Numeric f(x, xd, params)."""
        return np.array(self._f(list(x), list(xd), list(pvals)), dtype=float)

    def fixed_point(self, pvals, guess, tol: float = 1e-13) -> np.ndarray:
        """Root of f(x, x) = 0 near ``guess`` (variables scaled by |guess|).

        Raises
        ------
        RuntimeError
            If :func:`scipy.optimize.root` does not converge.
        """
        guess = np.asarray(guess, dtype=float)
        scale = np.where(np.abs(guess) > 0, np.abs(guess), 1.0)

        def g(z):
            x = z * scale
            return self.rhs(x, x, pvals)

        def jac(z):
            x = z * scale
            a0, a1 = self._j01(list(x), list(x), list(pvals))
            return (np.array(a0, dtype=float) + np.array(a1, dtype=float)) * scale[None, :]

        sol = root(g, np.ones_like(guess), jac=jac, method="hybr", options={"xtol": tol})
        if not sol.success:
            raise RuntimeError(f"fixed point not found: {sol.message}")
        return sol.x * scale

    def _batch(self, exprs_fun, x_star, pvals):
        xs = [np.asarray(v, dtype=float) for v in x_star]
        ps = [np.asarray(v, dtype=float) for v in pvals]
        shape = np.broadcast_shapes(*(v.shape for v in xs + ps))
        raw = exprs_fun(xs, xs, ps)
        out = []
        for mat in raw:
            mat = [[np.broadcast_to(np.asarray(e, dtype=float), shape) for e in row] for row in mat]
            arr = np.stack([np.stack(row, axis=-1) for row in mat], axis=-2)
            out.append(arr)
        return out

    def jacobians(self, x_star, pvals):
        """A0 and A1 at ``x_star`` (xd = x); entries of ``x_star``/``pvals`` may be arrays.

        Returns arrays of shape (..., n, n).
        """
        a0, a1 = self._batch(self._j01, x_star, pvals)
        return a0, a1

    def linearise(self, x_star, pvals, delay, channel_value=None) -> LinearDDE:
        """:class:`LinearDDE` at an operating point (a batch if inputs are arrays).

        ``channel_value`` (with a loop channel ``(y, h)``): the exact value of ``y`` at the
        operating point, where the model defines it (ECM's equilibrium has Fb* = 0), instead
        of ``h(x_star)``: a derivative proportional to ``y`` then vanishes exactly, where the
        rounding of ``h(x_star)`` would leave a residue (a pole at 1e-13 rad/s in place of an
        integrator's pole at 0).
        """
        if channel_value is not None:
            return self._linearise_at_channel(x_star, pvals, delay, channel_value)
        a0, a1 = self.jacobians(x_star, pvals)
        b = c = a1d = None
        if self.channel is not None:
            b, c, a1d = self._batch(self._split, x_star, pvals)
            b = b[..., :, 0]
            c = c[..., 0, :]
        return LinearDDE(np.asarray(x_star, dtype=float), a0, a1, float(delay), b, c, a1d)

    def _linearise_at_channel(self, x_star, pvals, delay, y_star) -> LinearDDE:
        """:meth:`linearise` with the channel's value given: ``A0 = df/dx``, ``b = df/dy``,
        ``c = dh/dxd`` and the direct part ``df/dxd`` at ``y = y_star``, and
        ``A1 = b c^T + A1_direct`` (the chain rule through ``y``)."""
        if self.channel is None:
            raise ValueError("channel_value: the system has no loop channel")
        if self._at_channel is None:  # built on first use: most systems never need it
            y, _ = self.channel
            f = self._f_channel
            self._at_channel = sp.lambdify(
                (self.x, self.xd, self.params, [y]),
                [f.jacobian(self.x).tolist(), f.jacobian([y]).tolist(), self.c_expr.tolist(),
                 f.jacobian(self.xd).tolist()],
                modules=["numpy", "scipy"], cse=True,
            )  # fmt: skip
        ys = [np.asarray(y_star, dtype=float)]
        a0, b, c, a1d = self._batch(
            lambda xs, xds, ps: self._at_channel(xs, xds, ps, ys), x_star, pvals
        )
        b, c = b[..., :, 0], c[..., 0, :]
        a1 = b[..., :, None] * c[..., None, :] + a1d
        return LinearDDE(np.asarray(x_star, dtype=float), a0, a1, float(delay), b, c, a1d)

    def symbolic_loop(self, s=None):
        """Symbolic numerator and denominator of L = num/den e^{-s tau}.

        Entries are SymPy expressions in the state symbols (to be evaluated at the fixed
        point) and the parameters; ``xd`` is replaced by ``x``. Exact for a rank-one A1 (or a
        loop channel with vanishing direct part, see the module docstring).

        Returns
        -------
        num, den : sympy.Poly
            Polynomials in ``s``.
        """
        s = sp.Symbol("s") if s is None else s
        sub = dict(zip(self.xd, self.x))
        n = len(self.x)
        eye = sp.eye(n)
        if self.channel is None:
            a0 = self.j0.subs(sub)
            a1 = self.j1.subs(sub)
        else:
            a0 = (self.j0 + self.j1_direct).subs(sub)
            a1 = (self.b_expr * self.c_expr).subs(sub)
        den = sp.Poly((s * eye - a0).det(method="berkowitz"), s)
        full = sp.Poly((s * eye - a0 - a1).det(method="berkowitz"), s)
        return full - den, den
