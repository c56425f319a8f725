"""Roots bracketed on a table, refined together on the exact function.

A loop known by its frequency response (:class:`~qcnmodel.analysis.freqloop.FrequencyLoop`)
is tabulated on a log grid, and each of its crossings (a gain crossover, a phase crossover at
one delay) lies between two neighbouring nodes where the function's values are known already.
:func:`table_guess` starts each root from the table itself: inverse cubic interpolation
through the four nodes around its bracket, accurate to a few parts in a million of the
frequency on a smooth response at 60 points per decade. :func:`refine_roots` then refines
every root at once, one vectorised evaluation of the function per iteration, by the steps of
Brent's method (R. P. Brent, "Algorithms for Minimization without Derivatives", 1973, ch. 4):
inverse quadratic interpolation through the three latest points, else the secant, else
bisection, always inside the bracket. Every trial point stays at least half the tolerance
inside the bracket's ends, so that once an estimate is within the tolerance the next trial
lands on the root's other side and closes the bracket. Steps that fail to halve the
function's smallest value so far are stretched (the function's rounding noise near the
tolerance can hold the estimates on one side), and after several such steps the bracket is
bisected, which bounds the iterations on an awkward function.

A root is done when its bracket is narrower than ``xtol + rtol * |x|``, the criterion of
:func:`scipy.optimize.brentq`, or the function vanishes at a trial point: the answer is
within that tolerance of a sign change of the function, as brentq's is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["refine_roots", "table_guess"]


def table_guess(x: np.ndarray, f: np.ndarray, i: np.ndarray) -> np.ndarray:
    """First estimates of the roots bracketed by the table nodes ``i`` and ``i + 1``.

    Parameters
    ----------
    x, f : ndarray
        Nodes (increasing) and the function's values there, shape ``(n_roots, n_nodes)`` or
        ``(n_nodes,)`` shared by every root.
    i : ndarray of int
        The left node of each root's bracket (``f`` changes sign from ``i`` to ``i + 1``).

    Returns
    -------
    ndarray
        Inverse cubic interpolation through the four nodes around the bracket where ``f`` is
        strictly monotone over them and the estimate falls inside the bracket, else the
        secant of the bracket's ends.
    """
    i = np.asarray(i, int)
    rows = np.arange(i.size)
    x2 = np.broadcast_to(x, (i.size, np.shape(x)[-1]))
    f2 = np.broadcast_to(f, (i.size, np.shape(f)[-1]))
    n = x2.shape[1]
    xa, xb, fa, fb = x2[rows, i], x2[rows, i + 1], f2[rows, i], f2[rows, i + 1]
    with np.errstate(all="ignore"):
        guess = xb - fb * (xb - xa) / (fb - fa)
    if n < 4:
        return guess
    start = np.clip(i - 1, 0, n - 4)
    cols = start[:, None] + np.arange(4)
    xs, fs = x2[rows[:, None], cols], f2[rows[:, None], cols]
    df = np.diff(fs, axis=1)
    monotone = np.all(df > 0, axis=1) | np.all(df < 0, axis=1)
    cubic = np.zeros(i.size)
    with np.errstate(all="ignore"):
        for j in range(4):  # Lagrange form of x(f) evaluated at f = 0
            term = xs[:, j]
            for k in range(4):
                if k != j:
                    term = term * (0.0 - fs[:, k]) / (fs[:, j] - fs[:, k])
            cubic = cubic + term
    ok = monotone & np.isfinite(cubic) & (cubic > xa) & (cubic < xb)
    return np.where(ok, cubic, guess)


def refine_roots(f: Callable, lo, hi, flo, fhi, guess, xtol: float = 2e-12,
                 rtol: float = 1e-12, max_iter: int = 200):  # fmt: skip
    """Roots of ``f`` in the brackets ``[lo, hi]``, all refined together.

    Parameters
    ----------
    f : callable
        ``f(x, idx) -> (values, payload)``: the function at the points ``x`` of the roots
        ``idx`` (indices into ``lo``), and any array of the same length that the caller wants
        back at the answer (e.g. the transfer function's values there).
    lo, hi : array_like
        Bracket ends (``lo < hi``).
    flo, fhi : array_like
        The function's values at the ends, of opposite signs (or zero: that end is the root).
    guess : array_like
        First trial point of each root (e.g. :func:`table_guess`); moved inside the bracket.
    xtol, rtol : float
        A root is done when its bracket is narrower than ``xtol + rtol * |x|``.
    max_iter : int
        Evaluations at most (the answer is then the last trial point).

    Returns
    -------
    x : ndarray
        The roots: the last trial point of each (an end of its final bracket), or the end
        where the function vanishes.
    payload : ndarray
        ``f``'s payload at ``x``; NaN for a root at an end where ``f`` was not evaluated.
    evaluations : int
        Calls of ``f``.
    """
    a, b = np.array(lo, float), np.array(hi, float)
    fa, fb = np.array(flo, float), np.array(fhi, float)
    n = a.size
    x = np.where(fa == 0, a, b)
    payload = np.full(n, np.nan, complex)
    # the three latest points of each root (interpolation): the ends, then each trial
    px = np.stack([a, b, b]).T.copy()
    pf = np.stack([fa, fb, fb]).T.copy()
    best = np.minimum(np.abs(fa), np.abs(fb))
    slow = np.zeros(n, int)  # trials in a row that failed to halve the smallest |f|
    trial = np.clip(np.asarray(guess, float), a, b)
    todo = np.nonzero((fa != 0) & (fb != 0))[0]
    calls = 0
    for _ in range(max_iter):
        if todo.size == 0:
            break
        ta, tb = a[todo], b[todo]
        step = 0.5 * (xtol + rtol * np.maximum(np.abs(ta), np.abs(tb)))
        t = np.minimum(np.maximum(trial[todo], ta + step), tb - step)
        t = np.where(tb - ta <= 2.0 * step, 0.5 * (ta + tb), t)
        ft, pt = f(t, todo)
        ft = np.asarray(ft, float)
        calls += 1
        x[todo], payload[todo] = t, pt
        left = np.sign(ft) == np.sign(fa[todo])  # the root lies in [t, b]
        a[todo] = np.where(left, t, ta)
        fa[todo] = np.where(left, ft, fa[todo])
        b[todo] = np.where(left, tb, t)
        fb[todo] = np.where(left, fb[todo], ft)
        px[todo] = np.column_stack([px[todo, 1], px[todo, 2], t])
        pf[todo] = np.column_stack([pf[todo, 1], pf[todo, 2], ft])
        slow[todo] = np.where(np.abs(ft) > 0.5 * best[todo], slow[todo] + 1, 0)
        best[todo] = np.minimum(best[todo], np.abs(ft))
        done = (ft == 0) | (b[todo] - a[todo] <= xtol + rtol * np.abs(t))
        todo = todo[~done]
        trial[todo] = _next_trial(px[todo], pf[todo], a[todo], b[todo], fa[todo], fb[todo],
                                  slow[todo])  # fmt: skip
    return x, payload, calls


def _next_trial(px, pf, a, b, fa, fb, slow) -> np.ndarray:
    """The next trial point of each root, strictly inside its bracket ``(a, b)``.

    The estimate is the inverse quadratic interpolation through the three latest points,
    else the secant of the last two, else the secant of the bracket's ends (regula falsi),
    else the bracket's middle. After ``slow`` trials in a row that failed to halve the
    smallest ``|f|`` (the estimates creep towards the root from one side, or the function's
    rounding noise, near the tolerance, misleads them), the step from the latest point to
    the estimate is stretched ``2**slow`` times, to land on the root's other side; after
    more than four, the bracket is bisected."""
    x0, x1, x2 = px.T
    f0, f1, f2 = pf.T
    with np.errstate(all="ignore"):
        iqi = (x0 * f1 * f2 / ((f0 - f1) * (f0 - f2)) + x1 * f0 * f2 / ((f1 - f0) * (f1 - f2))
               + x2 * f0 * f1 / ((f2 - f0) * (f2 - f1)))  # fmt: skip
        secant = x2 - f2 * (x2 - x1) / (f2 - f1)
        falsi = b - fb * (b - a) / (fb - fa)
    middle = 0.5 * (a + b)
    out = middle
    for cand in (falsi, secant, iqi):  # the last valid one wins
        out = np.where(np.isfinite(cand) & (cand > a) & (cand < b), cand, out)
    stretched = np.clip(x2 + 2.0 ** np.minimum(slow, 2) * (out - x2), a, b)
    return np.where(slow == 0, out, np.where(slow > 2, middle, stretched))
