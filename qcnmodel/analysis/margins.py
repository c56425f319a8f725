"""Stability margins of loops with an exact transport delay.

The open loop is ``L(s) = G(s) * exp(-s*tau)`` with ``G = num/den`` rational (see
:class:`qcnmodel.analysis.loop.DelayedLoop`). Everything here is computed from the exact
expression; nothing is read off a frequency grid and no Pade approximant is used.

Conventions
-----------
* Gain crossovers ``w_i`` solve ``|G(jw)| = 1`` (brentq on ``log|G(jw)|``). ``|L| = |G|``,
  so they do not depend on the delay.
* The phase margin at crossover ``i`` is ``PM_i(tau) = PM0_i - w_i*tau``, where ``PM0_i =
  arg G(jw_i) + 180 deg`` is wrapped to ``[-180, 180)`` (python-control's convention). It is
  *not* re-wrapped in ``tau``: it decreases linearly with the delay, and a value below zero
  (even below -180 deg) means the delay is beyond the critical one. This makes
  ``critical_delay_s = delay + delay_margin_s`` the delay at which the loop first loses
  stability.
* When there are several crossovers the reported one minimises the delay margin
  ``PM_i/w_i`` among those where ``|G|`` falls through 1 (only there can extra delay push
  roots into the right half plane); that choice does not depend on ``tau``. With several
  crossovers the closed loop can have stability *windows* in the delay (unstable, stable,
  unstable ...); ``stable`` is exact, while PM and delay margin refer to the selected one.
* Phase crossovers ``w_pc`` solve ``arg G(jw) - w*tau = -180 deg (mod 360)`` (safeguarded
  Newton on the exact, continuous phase). With a delay there are infinitely many; the gain
  margin is the smallest ``1/|L(jw_pc)|`` over them (the most critical one; python-control
  reports the one closest to 0 dB, the same for the usual single-crossing loops).
* ``stable``: closed-loop stability of ``1 + L(s) = 0`` with the exact delay.
  :func:`nyquist_count` counts encirclements of -1 along the Nyquist contour (upper half,
  doubled by symmetry). Poles of ``L`` at ``s = 0`` (integrators) are avoided by a quarter
  circle ``s = eps*exp(j*theta)``, ``theta`` from 0 to 90 deg, of radius ``eps`` = 1e-4 x the
  smallest corner frequency: the contour indents to the right of the origin, so origin poles
  are not counted in ``P``. Other poles on the imaginary axis are not supported.
  :func:`margins_over_delay` uses the equivalent delay-sweep form of the argument principle:
  closed-loop roots cross the imaginary axis only at ``tau_ik = (PM0_i mod 360 + 360 k)/w_i``,
  two at a time, moving into the right half plane iff ``|G|`` decreases through 1 at
  ``w_i``; starting from the delay-free closed loop this gives the number of unstable roots
  at every ``tau`` (the tests check the two against each other).
``G`` must be strictly proper when the delay is positive (otherwise the closed loop is of
neutral type and the tail of the contour is not bounded). :func:`critical_delay` is the loop
delay at which PM reaches 0; :func:`critical_rtt` is the one home of a loop model's critical
RTT: that delay minus the model's extra loop delay (:func:`extra_delay`), a search when the
RTT enters ``G``, or the model's trajectories where it declares them its boundary method."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from qcnmodel import config
from qcnmodel.analysis._args import check_search, delays, require, time_or_none
from qcnmodel.analysis._rational import Rational
from qcnmodel.analysis.nyquist import (  # noqa: F401 (NyquistCount: re-exported)
    NyquistCount,
    _check_loop,
    contour_extent,
    nyquist_contour,
    nyquist_count,
)

__all__ = ["Margins", "NyquistCount", "margins", "margins_over_delay", "nyquist_count",
           "nyquist_contour", "critical_delay", "critical_rtt", "extra_delay",
           "rtt_offset"]  # fmt: skip

_TWO_PI = 2.0 * np.pi
# Newton steps (bisection outside the bracket): from a 5 % bracket ~5 reach machine precision
_NEWTON_ITER = 10


@dataclass(frozen=True)
class Margins:
    """Stability margins of a delayed loop (scalars, or arrays over delays).

    Attributes
    ----------
    gain_margin : float
        Absolute gain margin ``1/|L(jw_pc)|`` (``inf`` without phase crossover).
    gain_margin_db : float
        ``20*log10(gain_margin)``.
    phase_margin_deg : float
        Phase margin in degrees at ``crossover_rad_s`` (``inf`` without crossover).
    crossover_rad_s : float
        Gain crossover frequency (rad/s; ``nan`` if none).
    phase_crossover_rad_s : float
        Phase crossover frequency of the reported gain margin (``nan`` if none).
    delay_margin_s : float
        Extra delay the loop tolerates, ``PM[rad]/crossover`` (negative when the
        delay is already beyond the critical delay, ``inf`` without crossover, NaN where
        ``critical_delay_s`` is).
    stable : bool
        Closed-loop stability with the exact delay (argument principle).
    critical_delay_s : float
        Loop delay at which stability is lost: ``delay + delay_margin_s`` (``inf`` without
        a gain crossover, NaN if the loop is then unstable). For a loop
        unstable already without delay it is negative when the crossover's phase margin is
        (the margin ran out before delay 0), and NaN when that margin is positive (another
        crossover, or a gain above 1 at a phase crossover, makes it unstable: no delay
        restores stability by the crossover's margin).
    """

    gain_margin: Any
    gain_margin_db: Any
    phase_margin_deg: Any
    crossover_rad_s: Any
    phase_crossover_rad_s: Any
    delay_margin_s: Any
    stable: Any
    critical_delay_s: Any

    def __post_init__(self) -> None:
        gm = np.asarray(self.gain_margin, dtype=float)
        if np.any(gm < 0):
            raise ValueError("gain_margin must be >= 0")

    def at(self, index: int) -> Margins:
        """Scalar :class:`Margins` for one delay of an array-valued result.

        Parameters
        ----------
        index : int
            Position in the flattened arrays (negative from the end); scalar fields are kept.

        Returns
        -------
        Margins
            Float fields and a bool ``stable``.
        """
        vals = {}
        for f in dataclasses.fields(self):
            v = np.asarray(getattr(self, f.name))
            v = v.reshape(-1)[index] if v.ndim else v
            vals[f.name] = bool(v) if f.name == "stable" else float(v)
        return Margins(**vals)


def _wrap_pi(x):
    """Wrap an angle (rad) to [-pi, pi) like python-control's phase margin."""
    return np.remainder(np.asarray(x) + np.pi, _TWO_PI) - np.pi


def _crossover_table(rat: Rational):
    """Crossovers, their delay-free PM0 (rad) and crossing directions."""
    wc = rat.crossovers()
    if wc.size == 0:
        return wc, wc, wc
    pm0 = _wrap_pi(rat.phase(wc) + np.pi)
    # direction: |G| decreasing through 1 -> roots enter the RHP as tau grows
    h = 1e-6
    slope = rat.logmag(wc * (1 + h)) - rat.logmag(wc * (1 - h))
    direction = np.where(slope < 0, 1, -1)
    return wc, pm0, direction


def _phase_crossings(rat: Rational, taus: np.ndarray, n_best: int = 2):
    """Most critical phase crossover per delay: returns (w_pc, logmag).

    Crossings where |G| is below ``config.defaults["analysis.gain_floor"]`` are ignored; the
    bracketing grid has ``analysis.phase_grid_per_decade`` points per decade."""
    per_decade = config.defaults["analysis.phase_grid_per_decade"]
    c = rat.corners()
    c = np.concatenate([c, np.pi / taus[taus > 0]]) if np.any(taus > 0) else c
    lo, hi = np.log10(c.min() / 1e3), np.log10(c.max() * 1e3)
    w = np.logspace(lo, hi, int(np.ceil((hi - lo) * per_decade)) + 1)
    lm = rat.logmag(w)
    keep = lm >= np.log(config.defaults["analysis.gain_floor"])  # below: irrelevant
    if keep.sum() < 2:
        return np.full(len(taus), np.nan), np.full(len(taus), -np.inf)
    i0, i1 = np.nonzero(keep)[0][[0, -1]]
    w, lm = w[i0 : i1 + 1], lm[i0 : i1 + 1]
    ph0 = rat.phase(w)
    # prune intervals where no delay can cross a level: the phase is monotone in
    # tau at fixed w, so if the levels at tau_min and tau_max agree at both ends
    # of an interval, every tau in between has the same level at both ends
    base = (ph0 + np.pi) / _TWO_PI
    w2 = w / _TWO_PI
    lev_lo = np.floor(base - w2 * taus.min())
    lev_hi = np.floor(base - w2 * taus.max())
    active = (lev_lo[1:] != lev_lo[:-1]) | (lev_hi[1:] != lev_hi[:-1]) | (lev_lo[1:] != lev_hi[1:])
    icol = np.nonzero(active)[0]
    best_w = np.full(len(taus), np.nan)
    best_lm = np.full(len(taus), -np.inf)
    if icol.size == 0:
        return best_w, best_lm
    lev_a = np.floor(base[icol][None, :] - np.multiply.outer(taus, w2[icol]))
    lev_b = np.floor(base[icol + 1][None, :] - np.multiply.outer(taus, w2[icol + 1]))
    score = np.where(lev_a != lev_b, np.maximum(lm[icol], lm[icol + 1])[None, :], -np.inf)
    rows_all = np.arange(len(taus))
    picks = []
    for _ in range(min(n_best, icol.size)):  # top-n_best intervals per delay
        j = np.argmax(score, axis=1)
        picks.append(j)
        score[rows_all, j] = -np.inf
    cand = np.stack(picks, axis=1)
    rows = np.repeat(rows_all, cand.shape[1])
    sel = cand.reshape(-1)
    ok = lev_a[rows, sel] != lev_b[rows, sel]  # intervals that really cross
    rows, sel = rows[ok], sel[ok]
    cols = icol[sel]
    l0, l1 = lev_a[rows, sel], lev_b[rows, sel]
    if rows.size == 0:
        return best_w, best_lm
    tau = taus[rows]
    target = np.where(l1 < l0, l0, l1) * _TWO_PI - np.pi  # level nearest the left end
    a, b = np.log(w[cols]), np.log(w[cols + 1])
    fa = rat.phase(np.exp(a)) - np.exp(a) * tau - target
    x = 0.5 * (a + b)
    for _ in range(_NEWTON_ITER):  # safeguarded Newton in log w on the exact phase
        wx = np.exp(x)
        fx = rat.phase(wx) - wx * tau - target
        same = np.sign(fx) == np.sign(fa)
        a, fa = np.where(same, x, a), np.where(same, fx, fa)
        b = np.where(same, b, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - fx / (wx * (rat.dphase(wx) - tau))
        inside = (step >= np.minimum(a, b)) & (step <= np.maximum(a, b))
        x = np.where(inside, step, 0.5 * (a + b))
    wr = np.exp(x)
    lmr = rat.logmag(wr)
    order = np.lexsort((-lmr, rows))  # per row, largest |G| first
    rows, wr, lmr = rows[order], wr[order], lmr[order]
    first = np.ones(rows.size, bool)
    first[1:] = rows[1:] != rows[:-1]
    best_w[rows[first]] = wr[first]
    best_lm[rows[first]] = lmr[first]
    return best_w, best_lm


def delay_sweep(wc_all, pm0_all, direction, z0: int, taus, slack: bool = False):
    """The margins a delay changes, over the delays ``taus``, from a loop's crossover table.

    Parameters
    ----------
    wc_all, pm0_all, direction : ndarray
        Gain crossovers (rad/s), their delay-free phase margins (rad) and crossing
        directions (+1 where ``|G|`` falls through 1).
    z0 : int
        Unstable roots of the delay-free closed loop.
    taus : ndarray
        Loop delays (s), one dimension.
    slack : bool
        Count a crossing reached to rounding (a tabulated response's crossovers).

    Returns
    -------
    tuple of ndarray
        Per delay: the selected crossover (rad/s), its phase margin (deg), the delay
        margin and the critical delay (s), and the closed loop's unstable roots.

    Notes
    -----
    Only crossovers where ``|G|`` falls through 1 can lose stability as the delay grows
    (roots cross into the RHP there); the one whose margin runs out first is selected,
    any one if none falls. A loop stable without delay (``z0 = 0``) loses stability where
    that margin runs out. One unstable already without delay has no delay at which it
    loses stability: its critical delay is the margin's when that is negative (it ran out
    "before delay 0"), else NaN, as when another crossover or a gain above 1 at a phase
    crossover makes it unstable while this crossover's margin is still positive. Without
    a crossover the delay changes nothing: stable at every delay (``inf``) or at none (NaN).
    The unstable roots follow from the argument principle as the delay sweeps each
    crossover's phase through -180 deg.
    """
    n = taus.size
    if not wc_all.size:
        fill = np.inf if z0 == 0 else np.nan
        return (np.full(n, np.nan), np.full(n, np.inf), np.full(n, fill), np.full(n, fill),
                np.full(n, z0))  # fmt: skip
    dm0 = pm0_all / wc_all  # delay margin at tau = 0 per crossover
    dm_sel = np.where(direction > 0, dm0, np.inf) if np.any(direction > 0) else dm0
    i = int(np.argmin(dm_sel))
    crit = float(dm0[i]) if z0 == 0 or dm0[i] < 0 else np.nan
    a = np.remainder(pm0_all, _TWO_PI)  # first crossing delay per crossover
    wt = wc_all[None, :] * taus[:, None]
    if slack:
        n_cross = np.where(wt >= a * (1 - 1e-12), np.floor((wt - a) / _TWO_PI + 1e-9) + 1, 0)
    else:
        n_cross = np.where(wt > a, np.floor((wt - a) / _TWO_PI) + 1, 0)
    z = z0 + 2 * (n_cross * direction[None, :]).sum(axis=1)
    pm = np.degrees(pm0_all[i] - wc_all[i] * taus)
    return np.full(n, wc_all[i]), pm, crit - taus, np.full(n, crit), z


def margins_over_delay(loop, taus) -> Margins:
    """Margins of ``loop.with_delay(tau)`` for every ``tau`` in ``taus``, vectorised.

    Parameters
    ----------
    loop : DelayedLoop
        Loop whose rational part is used; its own delay is ignored.
    taus : array_like
        Loop delays (s, >= 0; unit strings such as ``"50us"`` accepted).

    Returns
    -------
    Margins
        With array fields of the shape of ``taus``.

    Notes
    -----
    Gain crossovers and ``PM0`` are computed once; ``PM(tau) = PM0 - w_c*tau``. Phase crossovers are
    found for all delays at once on a shared log grid (50 points/decade; intervals no delay can
    cross are pruned), the two intervals with the largest ``|G|`` per delay are refined by
    vectorised safeguarded Newton on the exact phase. Stability follows from the delay-sweep
    argument principle (module doc).
    """
    if not hasattr(loop, "num"):  # a FrequencyLoop: known by its frequency response
        require(loop, "loop", ("margins_over_delay",), "a DelayedLoop or FrequencyLoop")
        return loop.margins_over_delay(taus)  # it checks them as below
    taus = delays(taus)
    shape = taus.shape
    taus = taus.reshape(-1)
    if taus.size > config.defaults["analysis.max_delays"]:
        raise ValueError(f"taus: at most {config.defaults['analysis.max_delays']} delays "
                         f"(analysis.max_delays), got {taus.size}")  # fmt: skip
    rat = Rational(loop.num, loop.den)
    _check_loop(rat, bool(np.any(taus > 0)))
    wc_all, pm0_all, direction = _crossover_table(rat)
    wc, pm, dm, crit, z = delay_sweep(wc_all, pm0_all, direction, rat.closed_loop_rhp(), taus)
    wpc, lm = _phase_crossings(rat, taus)
    gm = np.exp(-lm)
    with np.errstate(divide="ignore"):
        gm_db = 20 * np.log10(gm)

    def out(x):
        return np.asarray(x).reshape(shape)

    return Margins(
        gain_margin=out(gm),
        gain_margin_db=out(gm_db),
        phase_margin_deg=out(pm),
        crossover_rad_s=out(wc),
        phase_crossover_rad_s=out(wpc),
        delay_margin_s=out(dm),
        stable=out(z == 0),
        critical_delay_s=out(crit),
    )


def margins(loop) -> Margins:
    """Scalar margins of ``loop`` at its own delay (stability by Nyquist count).

    Parameters
    ----------
    loop : DelayedLoop

    Returns
    -------
    Margins

    Notes
    -----
    When the Nyquist contour passes through -1 (to rounding), e.g. at exactly the critical
    delay, a closed-loop pole lies on the imaginary axis: the loop is at the stability
    boundary, not asymptotically stable, and ``stable`` is False.
    """
    m = margins_over_delay(loop, np.array([loop.delay])).at(0)
    if not hasattr(loop, "num"):  # FrequencyLoop: stability by the delay-sweep count
        return m
    rat = Rational(loop.num, loop.den)
    if contour_extent(rat, loop.delay)[2] > config.defaults["analysis.nyquist_max_points"]:
        return m  # a contour too long to trace: the delay sweep's count (exact) decides
    try:
        stable = nyquist_count(loop).stable
    except RuntimeError:
        on_boundary = [
            w
            for w in (m.crossover_rad_s, m.phase_crossover_rad_s)
            if np.isfinite(w) and abs(1.0 + loop(1j * w)) < 1e-6
        ]
        if not on_boundary:
            raise
        stable = False
    return dataclasses.replace(m, stable=stable)


# --------------------------------------------------------------------------
# critical delay
# --------------------------------------------------------------------------
def critical_delay(loop) -> float:
    """Loop delay (s) at which the phase margin of ``loop`` reaches zero.

    The rational part is kept and only the delay grows: ``delay + delay_margin_s``, i.e.
    ``Margins.critical_delay_s``: ``inf`` when the loop has no gain crossover and is stable,
    NaN when it is unstable already without delay with no margin to run out (see
    :class:`Margins`). The critical *RTT* of a model is this minus the model's extra loop
    delay: :func:`critical_rtt`.
    """
    return float(margins_over_delay(loop, np.array([loop.delay])).at(0).critical_delay_s)


# --------------------------------------------------------------------------
# critical RTT of a loop model
# --------------------------------------------------------------------------
def rtt_offset(model, rtt_a: float = 1e-6, rtt_b: float = 1e-3) -> float | None:
    """Constant ``d`` such that ``loop().delay == rtt + d`` with an RTT-free rational part.

    Parameters
    ----------
    model : LoopModel
    rtt_a, rtt_b : float
        Two RTTs (s) at which the loop is compared.

    Returns
    -------
    float or None
        The offset, or ``None`` when the RTT enters the rational part (no fast path).
    """
    la = model.replace(rtt=rtt_a).loop()
    lb = model.replace(rtt=rtt_b).loop()
    if not hasattr(la, "num"):  # loops known by their frequency response: compare G itself
        s = 1j * np.geomspace(1.0, 1e5, 7)
        same = np.allclose(la.G(s), lb.G(s), rtol=1e-9, atol=0)
    else:
        same = (
            la.num.shape == lb.num.shape
            and la.den.shape == lb.den.shape
            and np.allclose(la.num, lb.num, rtol=1e-12, atol=0)
            and np.allclose(la.den, lb.den, rtol=1e-12, atol=0)
        )
    da, db = la.delay - rtt_a, lb.delay - rtt_b
    if same and np.isclose(da, db, rtol=1e-9, atol=1e-15):
        return float(da)
    return None


def extra_delay(model) -> float | None:
    """The model's loop delay beyond its RTT (s): ``loop().delay - rtt``.

    ``model.extra_delay`` when the model declares it (every model of :mod:`qcnmodel.models`
    does: e.g. the CP's sampling lag); otherwise measured by :func:`rtt_offset`. ``None``
    when the RTT enters the rational part of the loop (no constant offset).
    """
    declared = getattr(model, "extra_delay", None)
    if declared is not None:
        return float(declared)
    return rtt_offset(model)


def critical_rtt(
    model,
    rtt_min: float | None = None,
    rtt_max: float | None = None,
    xtol: float = 1e-12,
    rtol: float = 1e-10,
    *,
    loop=None,
    method: str = "model",
) -> float:
    """Largest RTT (s) up to which the loop stays stable: its phase margin stays positive.

    Parameters
    ----------
    model : LoopModel, DelayedLoop, FrequencyLoop or callable
        A loop model (``rtt``, ``.loop()``, ``.replace(rtt=...)``); a loop (the answer is its
        critical delay); or a factory ``f(rtt) -> loop``.
    rtt_min, rtt_max : float, optional
        Search interval (s) when the RTT enters the rational part (default
        ``config.defaults["analysis.rtt_search"]``, 1 ns .. 1 s).
    xtol, rtol : float
        Tolerances passed to :func:`scipy.optimize.brentq` on that path.
    loop : DelayedLoop, optional
        ``model.loop()`` if the caller already has it.
    method : {"model", "linearisation"}
        The model's own ``boundary_method``, or its phase margin even where it has another.

    Returns
    -------
    float
        The critical RTT; ``inf`` if the phase margin stays positive up to ``rtt_max`` (or
        the loop has no crossover); on the search path ``nan`` if it is already non-positive
        at ``rtt_min``. It is negative when the loop is unstable even at RTT 0, and NaN
        when it is unstable there with a positive margin at its crossover (another
        crossover, or a gain above 1 at a phase crossover: :class:`Margins`).

    Notes
    -----
    A model with ``boundary_method = "trajectories"`` (the congested packet-fidelity QCN
    model) is judged by its trajectories (:func:`~.boundary.trajectory_critical_rtt`).
    When the model's rational part does not depend on the RTT (:func:`extra_delay` is not
    None), the phase margin falls linearly with the delay and the answer is exact:
    :func:`~qcnmodel.analysis.margins.critical_delay` minus the extra loop delay. Otherwise
    ``PM(rtt)``, signed by the loop's stability (a loop unstable through another crossover
    counts as lost), is bracketed on a geometric ladder (factor 2) from ``rtt_min`` and the
    first sign change is refined by brentq; if it is not monotone in the RTT the first loss
    is returned.
    """
    rtt_min, rtt_max = time_or_none(rtt_min, "rtt_min"), time_or_none(rtt_max, "rtt_max")
    check_search(rtt_min, rtt_max, xtol=xtol, rtol=rtol)
    if _is_loop(model):  # a DelayedLoop or a FrequencyLoop: its own critical delay
        return critical_delay(model)
    from qcnmodel.analysis.boundary import judged_by_trajectories, trajectory_critical_rtt

    if judged_by_trajectories(model, method):
        return trajectory_critical_rtt(model, rtt_min, rtt_max)
    if hasattr(model, "replace") and hasattr(model, "loop"):
        offset = extra_delay(model)
        if offset is not None:
            return critical_delay(model.loop() if loop is None else loop) - offset

        def make(rtt: float):
            return model.replace(rtt=rtt).loop()

    elif callable(model):
        make = model
    else:
        raise TypeError("model must be a DelayedLoop, a LoopModel or a callable rtt -> loop")
    lo, hi = config.defaults["analysis.rtt_search"]
    lo, hi = lo if rtt_min is None else rtt_min, hi if rtt_max is None else rtt_max
    check_search(lo, hi)  # one end given, the other the configured one
    return _first_loss(make, lo, hi, xtol, rtol)


def _is_loop(obj) -> bool:
    """Whether ``obj`` is a loop (rational, or known by its frequency response), not a model
    or an ``rtt -> loop`` factory (a FrequencyLoop is callable too)."""
    return (hasattr(obj, "num") and hasattr(obj, "den")) or (
        hasattr(obj, "g") and hasattr(obj, "with_delay") and hasattr(obj, "margins_over_delay")
    )


def _signed_margin(loop) -> float:
    """The phase margin (deg) of ``loop`` at its delay, signed by its stability (the
    delay-sweep count): at least +1e-9 when stable, at most -1e-9 when not, so that a loop
    unstable through another crossover, or a gain above 1 at a phase crossover, counts as lost
    while its crossover's margin is still positive (infinite without gain crossover)."""
    m = margins_over_delay(loop, np.array([loop.delay])).at(0)
    pm = float(m.phase_margin_deg)
    return max(pm, 1e-9) if m.stable else min(-abs(pm), -1e-9)


def _first_loss(make, rtt_min: float, rtt_max: float, xtol: float, rtol: float) -> float:
    """First RTT in [rtt_min, rtt_max] where the loop ``make(rtt)`` loses stability: its
    phase margin reaches 0, or the closed loop turns unstable otherwise."""

    def pm(rtt: float) -> float:
        return _signed_margin(make(rtt))

    lo = rtt_min
    f_lo = pm(lo)
    if f_lo <= 0:
        return np.nan
    if not np.isfinite(f_lo):
        return np.inf
    while lo < rtt_max:
        hi = min(lo * 2, rtt_max)
        if pm(hi) <= 0:
            return float(brentq(pm, lo, hi, xtol=xtol, rtol=rtol))
        lo = hi
    return np.inf
