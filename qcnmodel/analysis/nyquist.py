"""Closed-loop stability of a loop with an exact delay by the Nyquist encirclement count.

``1 + L(s) = 0`` with ``L(s) = G(s) exp(-s tau)`` (:class:`qcnmodel.analysis.loop.DelayedLoop`):
encirclements of -1 along the Nyquist contour (upper half, doubled by symmetry), with poles of
``L`` at ``s = 0`` avoided by a quarter circle of radius 1e-4 x the smallest corner frequency.
The contour is sampled until ``arg(1 + L)`` turns by less than pi/8 per step, so the delay's
rotation ``w tau`` sets its length: a contour longer than ``_TRACE_FACTOR`` x
``analysis.nyquist_max_points`` points is refused (:func:`qcnmodel.analysis.margins.margins`
then counts the unstable roots by the delay sweep instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qcnmodel import config
from qcnmodel.analysis._rational import Rational

__all__ = ["NyquistCount", "contour_extent", "nyquist_contour", "nyquist_count"]

#: a Nyquist contour takes at most this many times ``analysis.nyquist_max_points`` points;
#: :func:`qcnmodel.analysis.margins.margins` leaves longer ones to the delay sweep's count
_TRACE_FACTOR = 16
_TWO_PI = 2.0 * np.pi


def _check_loop(rat: Rational, delay_positive: bool) -> None:
    if rat.rel_degree < 0:
        raise ValueError("loop must be proper (deg num <= deg den)")
    if delay_positive and rat.rel_degree == 0:
        raise ValueError("loop with a delay must be strictly proper")


@dataclass(frozen=True)
class NyquistCount:
    """Result of the Nyquist encirclement count.

    Attributes
    ----------
    encirclements_cw : int
        Clockwise encirclements of -1 by ``L`` along the (indented) contour.
    open_loop_rhp_poles : int
        Poles of ``L`` with positive real part (origin poles excluded).
    closed_loop_rhp_poles : int
        ``Z = N + P``, unstable closed-loop roots.
    """

    encirclements_cw: int
    open_loop_rhp_poles: int
    closed_loop_rhp_poles: int

    @property
    def stable(self) -> bool:
        """True when the closed loop has no root in the right half plane."""
        return self.closed_loop_rhp_poles == 0


def _refine(f, pts, param, max_iter: int = 40, max_step: float = np.pi / 8):
    """Sample f along a path, bisecting steps until arg f changes < max_step per step (at
    most ``_TRACE_FACTOR`` x ``analysis.nyquist_max_points`` points: a RuntimeError beyond)."""
    t = np.asarray(param, float)
    v = f(pts(t))
    limit = _TRACE_FACTOR * config.defaults["analysis.nyquist_max_points"]
    for _ in range(max_iter):
        d = np.angle(v[1:] / v[:-1])
        bad = np.nonzero(np.abs(d) > max_step)[0]
        if bad.size == 0:
            return t, v
        if t.size + bad.size > limit:
            break
        tm = 0.5 * (t[bad] + t[bad + 1])
        vm = f(pts(tm))
        t = np.insert(t, bad + 1, tm)
        v = np.insert(v, bad + 1, vm)
    raise RuntimeError("Nyquist contour refinement did not converge")


def contour_extent(rat: Rational, delay: float) -> tuple[float, float, int]:
    """The contour's radius ``eps`` around the origin, its end ``W`` on the imaginary axis
    (beyond the last frequency where ``|G| >= 0.9``: the asymptotics hold past it) and the
    number of points that resolve the delay's rotation ``w*tau`` in steps of pi/8."""
    eps = rat.corners().min() * 1e-4
    wg = rat.grid()
    above = np.nonzero(rat.logmag(wg) >= np.log(0.9))[0]
    w_end = max(wg[above[-1]] * 2 if above.size else wg[0], eps * 10)
    span = np.log(w_end / eps)
    n_pts = int(np.ceil(span / np.log(10) * 100)) + 1
    if delay > 0:
        n_pts = max(n_pts, int(min(np.ceil(span * w_end * delay / (np.pi / 8)), 2**62)) + 1)
    return eps, w_end, n_pts


def _contour(loop):
    """Upper half of the indented Nyquist contour: (s points, 1 + L(s), w_end)."""
    rat = Rational(loop.num, loop.den)
    _check_loop(rat, loop.delay > 0)
    eps, w_end, n_pts = contour_extent(rat, loop.delay)
    limit = config.defaults["analysis.nyquist_max_points"]
    if n_pts > _TRACE_FACTOR * limit:
        raise ValueError(
            f"delay: {loop.delay:g} s is too long to trace this loop's Nyquist contour: its "
            f"rotation w*tau up to |L| < 0.9 takes about {n_pts:.3g} points, over "
            f"{_TRACE_FACTOR} x analysis.nyquist_max_points = {_TRACE_FACTOR * limit} "
            "(margins() and margins_over_delay() count the unstable roots by the delay sweep)"
        )

    def one_plus_l(s):
        return 1.0 + loop(s)

    segments = []
    if rat.n_int > 0:  # quarter circle s = eps*exp(j*theta) around the origin poles
        th, v = _refine(one_plus_l, lambda th: eps * np.exp(1j * th), np.linspace(0, np.pi / 2, 65))
        segments.append((eps * np.exp(1j * th), v))
    else:
        segments.append((np.array([0j]), one_plus_l(np.array([0j]))))
    logw = np.linspace(np.log(eps), np.log(w_end), min(n_pts, limit))  # _refine adds more
    lw, v = _refine(one_plus_l, lambda lw: 1j * np.exp(lw), logw)
    segments.append((1j * np.exp(lw), v))
    s_all = np.concatenate([seg[0] for seg in segments])
    v_all = np.concatenate([seg[1] for seg in segments])
    return s_all, v_all, rat


def nyquist_contour(loop) -> tuple[np.ndarray, np.ndarray]:
    """Points ``s`` of the upper half of the indented contour and ``L(s)`` there.

    The lower half is the complex conjugate (real coefficients).  See
    :func:`nyquist_count` for the path.
    """
    if not hasattr(loop, "num"):  # a FrequencyLoop
        return loop.nyquist_contour()
    s, v, _ = _contour(loop)
    return s, v - 1.0


def nyquist_count(loop) -> NyquistCount:
    """Count encirclements of -1 by ``L`` with the exact delay.

    Parameters
    ----------
    loop : DelayedLoop

    Returns
    -------
    NyquistCount
        ``Z = N + P`` (clockwise encirclements plus open-loop RHP poles).

    Notes
    -----
    Upper half of the contour, doubled by conjugate symmetry: quarter circle ``eps*exp(j*theta)``
    (theta 0..pi/2) when ``L`` has poles at the origin (otherwise the segment 0..j*eps of the axis),
    then ``s = jw`` from ``eps`` up to ``W``, beyond which ``|L| < 1`` so ``arg(1+L)`` returns to 0
    without a turn; the large arc contributes nothing for a strictly proper ``L``. Steps are refined
    until ``arg(1+L)`` changes by less than pi/8 per step (the initial step also keeps ``w*tau``
    below pi/8), so no turn is missed.
    """
    if not hasattr(loop, "num"):  # a FrequencyLoop
        return loop.nyquist_count()
    s, v, rat = _contour(loop)
    total = float(np.sum(np.angle(v[1:] / v[:-1])))
    total += -np.angle(v[-1])  # tail: |L| < 1 beyond W, back to arg 0 at infinity
    n_ccw = int(np.rint(2 * total / _TWO_PI))
    p = int(np.sum(rat.poles.real > 0))
    n_cw = -n_ccw
    return NyquistCount(n_cw, p, n_cw + p)
