"""Equilibrium and exact linear response of the renewal (packet-fidelity) QCN model.

At equilibrium the CNM probability per frame kappa and the mean cut per CNM are constant and
the population of cohorts is stationary: a cohort born with target T0 and rate c0 follows
the mean path of :func:`~._qcn_cohort.cohort_path` and survives to age a with probability
exp(-kappa int sent). The birth values are self-consistent (T0 is the target a CNM leaves, c0
the rate it cuts, averaged over the flows a CNM reaches), and the feedback Fb* makes the
per-flow rate the fair share C/N (:func:`equilibrium`).

Around it, a perturbation of kappa or of the cut moves the per-flow mean rate R through
:math:`\\hat R = H_K(s) \\hat\\kappa + H_U(s) \\hat u` (:func:`response`). Both come from the
stationary profile and its sensitivities to the birth values as Laplace transforms over the
age (cohorts born at t - a contribute with exp(-s a)), computed exactly for piecewise-linear
integrands (Filon quadrature), with the births closing a small linear system per frequency.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.models._base import NoStandingQueue, Overloaded
from qcnmodel.models._qcn_cohort import R_PERIOD, cohort_path
from qcnmodel.models._qcn_cp import K_C, K_ENQ, K_FBMAX, K_N, K_QEQ, K_SIGMA, cp_signals

__all__ = ["Stationary", "age_grid", "equilibrium", "response"]

#: log survival below which a cohort's path no longer counts (the age grid ends there)
_NEGLIGIBLE_LOG_SURVIVAL = -40.0


#: the grid stops refining at this cycle jitter J (its window, 2 J of a cycle, over 45
#: uniform points takes 22,500 per cycle); smaller jitters, down to deterministic cycles
#: (J = 0), use its grid
MIN_JITTER = 0.001


def grid_steps(jitter: float) -> tuple[int, float]:
    """``(per_cycle, rel)`` of :func:`age_grid` for the cycles' jitter half-width J.

    The profile changes over a cycle's jitter window, 2 J of the cycle. The uniform step puts
    45 points across the first window (150 per cycle at the standard's J = 0.15), and the
    relative step of the later ages keeps 30 across a window at one cycle's age (1 % at
    J = 0.15); smaller jitters refine both. Coarser grids gave erratic responses below
    J = 0.01: phase margins of 18, -52 and 20 deg at J = 0.003, 0.005 and 0.01, against
    16.6-16.8 deg on a grid ten times finer.
    """
    j = max(float(jitter), MIN_JITTER)
    return max(150, math.ceil(45 / (2 * j))), min(0.01, 2 * j / 30)


def age_grid(tt, tb, rate, kappa, rel=0.01, per_cycle=150, max_uniform=60000):
    """Ages resolving the stationary profile: a uniform step of 1/``per_cycle`` of the
    shorter first cycle (its jitter window over tens of points: :func:`grid_steps`), then
    steps of ``rel`` times the age, up to a survival of e^-40 (at most 60 s)."""
    cyc_b = tb[R_PERIOD] * 2.0 / max(rate, 1e-9)
    cyc_t = tt[R_PERIOD] * 2.0
    h0 = min(cyc_b, cyc_t) / per_cycle
    a_end = min(40.0 / max(kappa * rate, 1e-12), 60.0)
    a_switch = min(h0 / rel, a_end, h0 * max_uniform)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # tested just below
        ratio = a_end / a_switch
    if not (h0 > 0 and math.isfinite(ratio)):  # e.g. a timer of 1e-320 s
        first = min(cyc_b, cyc_t)
        raise ValueError(f"no equilibrium: the reaction points' first cycle ({first:.3g} s, "
                         "byte counter or timer) is too short to resolve")  # fmt: skip
    uni = np.arange(0.0, a_switch + 0.5 * h0, h0)
    if uni[-1] >= a_end:
        return uni
    n_geo = int(math.ceil(math.log(a_end / uni[-1]) / math.log1p(rel)))
    return np.concatenate([uni, uni[-1] * (1.0 + rel) ** np.arange(1, n_geo + 1)])


def _trap(x, f):
    return float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x)))


class Stationary:
    """The stationary population for given kappa and cut, on a fixed age grid.

    Attributes set by :meth:`set_birth`: ``tr0``, ``c0`` (birth values, frames/s), ``path``
    (rows c, sent, T, b, psi, log survival), ``m`` (age density, integral 1), ``R`` (mean
    sending rate), ``Nc``, ``Nt`` (CNM-weighted integrals of c and of psi).
    """

    def __init__(self, k, tt, tb, roff, ages):
        self.k, self.tt, self.tb, self.roff, self.ages = k, tt, tb, roff, ages
        self.kappa = self.cut = math.nan
        self._lin = None

    def set_birth(self, tr0, c0):
        out = cohort_path(tr0, tr0 - c0, self.kappa, self.roff, self.k, self.tt, self.tb,
                          self.ages)  # fmt: skip
        bad = ~np.all(np.isfinite(out), axis=0)
        if bad.any():  # a tail past survival e^-40 (e.g. at the line rate) counts for nothing
            i = int(np.argmax(bad))
            if i > 1 and out[5, i - 1] < _NEGLIGIBLE_LOG_SURVIVAL:
                out, self.ages = out[:, :i], self.ages[:i]
        surv = np.exp(out[5])
        m = surv / _trap(self.ages, surv)
        c, sent, _, _, psi = out[:5]
        self.tr0, self.c0, self.path, self.m = tr0, c0, out, m
        self._lin = None  # the linearisation's frequency-independent part, on first use
        self.R = _trap(self.ages, m * sent)
        self.Nc = _trap(self.ages, m * sent * c)
        self.Nt = _trap(self.ages, m * sent * psi)
        return self

    def birth_residual(self):
        """log(T0 implied / T0), log(c0 implied / c0): zero when self-consistent."""
        return (math.log(self.Nt / self.R / self.tr0),
                math.log((1.0 - self.cut) * self.Nc / self.R / self.c0))  # fmt: skip


def _signals(k, fb, target):
    q = k[K_QEQ] - k[K_ENQ] - fb  # the CP reads the fluid queue plus the arriving frame
    kap, cut, _ = cp_signals(q, target, k[K_C], k, q)  # Qdelta = 0 at equilibrium
    return kap, cut


def standing_queue(k, fb: float, params, n_flows: int) -> float:
    """The mean queue (bytes) of the equilibrium at feedback ``fb`` (frames); raises
    :class:`~qcnmodel.models._base.NoStandingQueue` when it is below zero.

    The equilibrium holds the flows at C/N with Fb's frame noise about the fluid queue
    (its variance grows with w, N and the sampling probability). Where that noise, or a set
    point of few frames, makes the reaction points cut below C/N even at an empty queue, the
    mean field balances only at a negative queue, a state a fluid queue cannot take: the
    packets then hold a queue well below qeq, or empty it, and the port can idle.
    """
    q = (k[K_QEQ] - k[K_ENQ] - fb) * float(params.frame_size)
    if q < 0:
        p = params
        raise NoStandingQueue(
            f"no equilibrium with a standing queue: the model's mean field balances only "
            f"at a queue of {q:.0f} B (qeq = {p.qeq:g} B, frames of {p.frame_size:g} B, "
            f"Fb's noise std {k[K_SIGMA]:.2g} frames at w = {p.w:g}, N = {n_flows}), "
            "below empty: its noisy feedback cuts the flows below C/N and it has no answer "
            "here (packets at such settings hold a queue well below qeq, or empty it); raise "
            "qeq, or lower w or the sampling probability (the trajectories from idle, "
            "simulate(start='idle'), still run)"
        )
    return q


def equilibrium(k, tt, tb, roff, fb_guess=None, jitter=0.15):
    """Solve for (Fb*, T0, c0) jointly: per-flow rate C/N and self-consistent births.

    Returns ``(fb, Stationary)`` (Fb in frames), on an age grid for the cycles' ``jitter``
    (:func:`grid_steps`). Raises ValueError when no equilibrium exists (a clear sentence:
    full-scale feedback, or the rate never reaches C/N).
    """
    per_cycle, rel = grid_steps(jitter)

    def grid(rate, kappa):
        return age_grid(tt, tb, rate, kappa, rel=rel, per_cycle=per_cycle)

    target = k[K_C] / k[K_N]
    starts = [] if fb_guess is None else [fb_guess]
    starts += [-f * k[K_FBMAX] for f in (0.0, 0.01, 0.03, 0.1, 0.2, 0.4, 0.7)]
    # past full scale on the mean: the noisy samples saturate only gradually
    starts += [-(k[K_FBMAX] + f * k[K_SIGMA]) for f in (0.0, 2.0, 4.0)]
    scale = max(k[K_SIGMA], 1.0)
    # and a queue below qeq: a frequent sampling's noisy Fb cuts the flows there (fixed Ps of
    # 0.3 at N = 10 balances 7 frames below qeq); tried last, so a root found before stays
    starts += [f * scale for f in (1.0, 2.0, 3.0, 5.0)]
    best = math.inf
    cnm_free = False  # a start balanced only where no CNM reaches the population
    ratio = None  # the rate at full-scale feedback over C/N, once a first start has failed
    for i, fb0 in enumerate(starts):
        if i == 1:  # an overloaded port has no equilibrium: say so without the other starts
            ratio = _saturated_rate(k, tt, tb, roff, target, grid)
            if ratio > 1.0:
                break
        kap0, _ = _signals(k, fb0, target)
        st = Stationary(k, tt, tb, roff, grid(target, max(kap0, 1e-6) / 3.0))
        x0 = [fb0 / scale, math.log(target), math.log(target)]
        try:
            x, res = _solve(st, x0, scale, target)
            # the grid was sized by the start's CNM probability: where the balance has a
            # smaller one, the population outlives the grid; size it by the balance's own
            for _ in range(_REGRIDS):
                if not (res < 1e-7 and st.path[5, -1] > _TRUNCATED_LOG_SURVIVAL):
                    break
                st = Stationary(k, tt, tb, roff, grid(target, max(st.kappa, 1e-6) / 3.0))
                x, res = _solve(st, x, scale, target)
        except (ValueError, FloatingPointError, ZeroDivisionError, OverflowError):
            continue
        if res < 1e-7 and _cut_within_grid(st):
            return float(x[0] * scale), st
        if res < 1e-7:
            cnm_free = True
        else:
            best = min(best, res)
    if ratio is None:
        ratio = _saturated_rate(k, tt, tb, roff, target, grid)
    if ratio > 1.0:
        raise Overloaded(
            f"no equilibrium: even full-scale feedback on every sample (Fb beyond -Fbmax by "
            f"{_SATURATED_SIGMAS:g} times its noise std) leaves the reaction "
            f"points' stationary rate at {ratio:.4g} x the fair share C/N, so the port stays "
            f"overloaded at N = {k[K_N]:g} (its queue grows until frames are dropped or "
            "paused): fewer flows, a larger gd or a higher sampling probability hold it",
            ratio,
        )
    raise ValueError(
        "no equilibrium: the search found no feedback level at which the reaction points' "
        f"stationary rate equals the fair share C/N (best relative residual {best:.2g}, "
        "against 1e-7); a search's result, not a proof: with little timer jitter (e.g. "
        "none, at 50 flows) the stationary rate changes abruptly with the feedback and the "
        "search can miss a balance"
        + (
            "; the search balanced only where the feedback never signals congestion (CNM "
            "probability ~0, no reaction point cut within its age grid), which is no "
            "stationary state: every rate would rise (the trajectories from idle, "
            "simulate(start='idle'), still run)"
            if cnm_free
            else ""
        )
    )


#: a stationary population's survival must fall below e^-1 within its age grid: a balance
#: where it does not (CNM probability ~0: e.g. 1e-16 at w = 0.5, Ps = 0.5) has no reaction
#: point cut, so its rates would rise without end; its residual vanishes only because the
#: grid is finite (legitimate equilibria end at e^-3 or below: e^-30 to e^-117 at the
#: defaults, e^-6 at fixed Ps = 0.2)
_MAX_END_LOG_SURVIVAL = -1.0


#: log survival at a balance's last age above which its age grid is rebuilt from the
#: balance's own CNM probability (the grid, sized by the search start's, would leave more
#: than e^-20 of the population beyond it: at a fixed Ps of 0.3-0.995 and N = 10, 5 % of it,
#: which moved the equilibrium queue by up to 6 % with the start the search converged from)
_TRUNCATED_LOG_SURVIVAL = -20.0

#: grids rebuilt at most, one after another, for one start
_REGRIDS = 3


def _solve(st, x0, scale: float, target: float):
    """Balance ``st``'s population from ``x0`` = (Fb / scale, log T0, log c0): the rate at
    C/N and self-consistent births; returns the solution and its largest residual."""
    from scipy.optimize import root

    k = st.k

    def resid(x):
        st.kappa, st.cut = _signals(k, x[0] * scale, target)
        st.set_birth(*np.exp(x[1:]))
        r = st.birth_residual()
        return [math.log(st.R / target), r[0], r[1]]

    with np.errstate(all="ignore"):
        sol = root(resid, x0, method="hybr", options={"xtol": 1e-12})
        res = np.max(np.abs(resid(sol.x))) if np.all(np.isfinite(sol.x)) else np.inf
    return sol.x, res


def _cut_within_grid(st) -> bool:
    """The population ``st`` sees its CNMs: its survival ends below e^-1 on its age grid."""
    return bool(st.kappa > 0 and st.path[5, -1] < _MAX_END_LOG_SURVIVAL)


#: noise std (Fb's) past -Fbmax at which every sample's quantised feedback is full scale
_SATURATED_SIGMAS = 8.0


def _full_scale(k) -> float:
    """The mean feedback -Fb (frames) at which the noisy samples all quantise to full scale:
    Fbmax plus :data:`_SATURATED_SIGMAS` noise std (the mean cut and the CNM probability rise
    until then, so an equilibrium can lie past Fbmax)."""
    return float(k[K_FBMAX] + _SATURATED_SIGMAS * k[K_SIGMA])


def _saturated_rate(k, tt, tb, roff, target, grid) -> float:
    """The reaction points' stationary rate over C/N at full-scale feedback on every sample
    (:func:`_full_scale`; births solved; nan where that fails): above 1, no feedback level
    can hold the flows at C/N."""
    from scipy.optimize import root

    try:
        with np.errstate(all="ignore"):
            kap, cut = _signals(k, -_full_scale(k), target)
            st = Stationary(k, tt, tb, roff, grid(target, max(kap, 1e-6) / 3.0))
            st.kappa, st.cut = kap, cut

            def resid(x):
                st.set_birth(*np.exp(x))
                return st.birth_residual()

            sol = root(resid, [math.log(target)] * 2, method="hybr", options={"xtol": 1e-12})
            if not np.max(np.abs(resid(sol.x))) < 1e-7:
                return math.nan
    except (ValueError, FloatingPointError, ZeroDivisionError, OverflowError):
        return math.nan
    return float(st.R / target)


# ------------------------------------------------------------------ linear response
def _filon_cells(ages, s, sign):
    """Per-cell weights (left, right) of int exp(sign s a) f(a) da for piecewise-linear f."""
    a0 = ages[:-1]
    h = np.diff(ages)
    s = np.asarray(s, dtype=complex)[:, None]
    z = -sign * s * h[None, :]
    if np.all(s.real == 0):  # on the imaginary axis |exp| = 1: one exponential per node
        e = np.exp(sign * s * ages[None, :])
        e0, em = e[:, :-1], e[:, 1:] / e[:, :-1]
    else:
        e0, em = np.exp(sign * s * a0[None, :]), np.exp(-z)
    small = np.abs(z) < 1e-4
    zs = np.where(small, 1.0, z)
    inv = 1.0 / zs
    d = (1.0 - em) * inv * inv
    il, ir = h * (inv - d), h * (d - em * inv)
    if np.any(small):  # series near z = 0, where the closed form cancels
        hz = np.broadcast_to(h, z.shape)[small]
        il[small] = hz * (0.5 - z[small] / 6.0)
        ir[small] = hz * (0.5 - z[small] / 3.0)
    return e0 * il, e0 * ir


def _cells_both(ages, s):
    """Cells of exp(-s a) and of exp(+s a); on the imaginary axis the second are the
    complex conjugates of the first (real integrands), so one evaluation serves both."""
    minus = _filon_cells(ages, s, -1.0)
    if np.all(np.asarray(s).real == 0):
        return minus, (np.conj(minus[0]), np.conj(minus[1]))
    return minus, _filon_cells(ages, s, +1.0)


def _laplace(ages, s, cells=None):
    """W[j] with W[j] @ f = int_0^inf exp(-s_j a) f(a) da (piecewise-linear f)."""
    il, ir = _filon_cells(ages, s, -1.0) if cells is None else cells
    w = np.zeros((il.shape[0], len(ages)), dtype=complex)
    w[:, :-1] += il
    w[:, 1:] += ir
    return w


def _cumulative_laplace(ages, f, s, cells=None):
    """E[j, i] = int_0^{a_i} exp(+s_j x) f(x) dx (piecewise-linear f)."""
    il, ir = _filon_cells(ages, s, +1.0) if cells is None else cells
    out = np.zeros((il.shape[0], len(ages)), dtype=complex)
    out[:, 1:] = np.cumsum(il * f[None, :-1] + ir * f[None, 1:], axis=1)
    return out


def _cumtrapz(x, f):
    out = np.zeros_like(f)
    out[1:] = np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(x))
    return out


def _sensitivities(st, eps=1e-6):
    """d(path)/d(T0) and d(path)/d(g0) by central differences (rows c, sent, T, b, psi)."""
    g0 = st.tr0 - st.c0
    out = []
    for dtr, dg in ((1.0, 0.0), (0.0, 1.0)):
        h = eps * st.tr0
        hi = cohort_path(st.tr0 + dtr * h, g0 + dg * h, st.kappa, st.roff, st.k, st.tt, st.tb,
                         st.ages)  # fmt: skip
        lo = cohort_path(st.tr0 - dtr * h, g0 - dg * h, st.kappa, st.roff, st.k, st.tt, st.tb,
                         st.ages)  # fmt: skip
        out.append((hi[:5] - lo[:5]) / (2.0 * h))
    return out


#: frequencies x ages evaluated at once by :func:`response` (its arrays of that shape, about
#: ten of 16 bytes per cell, then take some 300 MB); more are evaluated in chunks
_RESPONSE_CELLS = 2_000_000


def response(st, s):
    """(H_K(s), H_U(s)): the per-flow mean rate's response (frames/s) to the CNM
    probability per frame and to the mean cut per CNM, at complex frequencies ``s``."""
    s = np.atleast_1d(np.asarray(s, dtype=complex))
    ages = st.ages
    if s.size > 1 and s.size * ages.size > _RESPONSE_CELLS:  # bounded memory: in chunks
        step = max(1, _RESPONSE_CELLS // ages.size)
        parts = [response(st, s[i : i + step]) for i in range(0, s.size, step)]
        return tuple(np.concatenate([part[k] for part in parts]) for k in (0, 1))
    c, sent, _, _, psi = st.path[:5]
    m = st.m
    kap = st.kappa
    surv = m / (kap * st.R)  # the survival S(a); m = m0 S with birth flux m0 = kappa R
    if getattr(st, "_lin", None) is None:  # independent of s: once per stationary state
        d_tr, d_g = _sensitivities(st)
        st._lin = (d_tr, d_g, _cumtrapz(ages, d_tr[1]), _cumtrapz(ages, d_g[1]))
    d_tr, d_g, lam_tr, lam_g = st._lin
    minus, plus = _cells_both(ages, s)
    w = _laplace(ages, s, minus)
    e = _cumulative_laplace(ages, sent, s, plus)

    def dot(v):
        # complex-by-real products without BLAS (its threads only contend at this size)
        return np.einsum("ij,j->i", w, v)

    def functional(phi, dphi_tr, dphi_g):
        # coefficients of an integral int m(t-a, a) phi da on (birth flux, kappa, T0, g0)
        c_m = dot(surv * phi)
        c_k = -np.einsum("ij,j,ij->i", w, m * phi, e)
        c_t = dot(m * (dphi_tr - kap * phi * lam_tr))
        c_g = dot(m * (dphi_g - kap * phi * lam_g))
        return c_m, c_k, c_t, c_g

    f_r = functional(sent, d_tr[1], d_g[1])
    f_c = functional(sent * c, d_tr[1] * c + sent * d_tr[0], d_g[1] * c + sent * d_g[0])
    f_t = functional(sent * psi, d_tr[1] * psi + sent * d_tr[4], d_g[1] * psi + sent * d_g[4])
    R, nc, nt, cut = st.R, st.Nc, st.Nt, st.cut
    n = len(s)
    a = np.zeros((n, 6, 6), dtype=complex)
    b = np.zeros((n, 6, 2), dtype=complex)
    # unknowns x = [R, Nc, Nt, M0, T0, c0] (g0 = T0 - c0); inputs [kappa, cut]
    for row, (c_m, c_k, c_t, c_g) in enumerate((f_r, f_c, f_t)):
        a[:, row, row] = 1.0
        a[:, row, 3] = -c_m
        a[:, row, 4] = -(c_t + c_g)
        a[:, row, 5] = c_g
        b[:, row, 0] = c_k
    a[:, 3, 3] = 1.0  # births M0 = kappa R
    a[:, 3, 0] = -kap
    b[:, 3, 0] = R
    a[:, 4, 4] = 1.0  # T0 = Nt / R
    a[:, 4, 2] = -1.0 / R
    a[:, 4, 0] = nt / R**2
    a[:, 5, 5] = 1.0  # c0 = (1 - cut) Nc / R
    a[:, 5, 1] = -(1.0 - cut) / R
    a[:, 5, 0] = (1.0 - cut) * nc / R**2
    b[:, 5, 1] = -nc / R
    x = np.linalg.solve(a, b)
    return x[:, 0, 0], x[:, 0, 1]
