"""Delay-differential equation (DDE) integrators.

Systems of the form

.. math::

    x'(t) = f\\bigl(t, x(t), x(t - \\tau_1), \\dots, x(t - \\tau_m), p\\bigr),
    \\qquad x(t) = x_0 \\text{ for } t \\le t_0,

with constant delays :math:`\\tau_k > 0` and a constant initial history.

Two integrators are provided.

``integrate_fixed`` (compiled)
    Classic fourth-order Runge-Kutta with a fixed step ``dt`` and the method of steps: the past
    is kept in a ring buffer holding, at every grid point, the state and its derivative (the
    first RK stage). A delayed state :math:`x(t-\\tau)` between two grid points is the cubic
    Hermite interpolant of those values, which is third-order accurate, so the scheme keeps an
    overall error of order :math:`dt^3` at worst (order 4 when every delay is a multiple of
    ``dt`` and the solution is smooth). The right-hand side is a numba-compiled function with the
    signature ``rhs(t, x, xd, p, out)``: ``x`` the state (n,), ``xd`` the delayed states (m, n),
    ``p`` a float64 parameter vector, ``out`` the derivative to fill; :func:`compile_rhs`
    compiles it (as a C callback, so that the integrator itself is compiled and cached only
    once). The step must satisfy ``dt <= min(tau) / 2`` so that every delayed query falls in
    the already completed past.
    Physical constraints are imposed by the model's rhs (e.g. ``dq/dt = max(., 0)`` when
    ``q <= 0``, a reflecting boundary) and, as a guard against overshoot within a step, by the
    ``lower`` bound vector applied after each step.

``integrate_reference`` (adaptive)
    SciPy's DOP853 stepped one step at a time with ``max_step <= min(tau)``; each accepted
    step's dense output is appended to the history, and delayed states are read from it (a
    method of steps with a dense-output history). Tolerances are set by ``rtol``/``atol``. It
    is slow (pure Python) and is meant as the accuracy reference on short horizons. It takes
    the very same compiled rhs as ``integrate_fixed``, so the comparison tests the integration
    only.

``integrate_jitcdde`` (adaptive, independent)
    jitcdde (Ansmann 2018: Bogacki-Shampine with Hermite-interpolated history, generated C)
    on the *symbolic* right-hand side of a model. It is independent of the compiled rhs, so it
    also checks that the numba and SymPy twins of the equations agree. The symbolic rhs is the
    smooth branch of the model (e.g. congested QCN, DCQCN on the marking ramp): valid while
    the trajectory stays on that branch, which the models check. jitcdde builds its C module
    in a temporary directory (about 1 s per build), never in the repository.

Right-hand sides with discontinuities (indicator functions, clipping) limit either method to
first order near the switching instants; the tests compare the two integrators with that in
mind.
"""

from __future__ import annotations

import bisect
import warnings

import numba as nb
import numpy as np

__all__ = [
    "step_for_record",
    "integrate_jitcdde",
    "RHS_SIGNATURE",
    "CompiledRHS",
    "compile_rhs",
    "integrate_fixed",
    "integrate_reference",
    "DDEResult",
]

#: numba signature of a right-hand side: ``rhs(t, x, xd, p, out) -> None``.
RHS_SIGNATURE = nb.types.void(
    nb.types.float64,
    nb.types.float64[::1],
    nb.types.float64[:, ::1],
    nb.types.float64[::1],
    nb.types.float64[::1],
)


class CompiledRHS:
    """A right-hand side compiled twice: as a C callback and as a numba dispatcher.

    The C callback (``.cfunc``) is what :func:`integrate_fixed` calls: the integrator is then
    compiled once for the *function type* and cached on disk (a plain dispatcher argument
    would specialise, and defeat the cache of, the integrator for every model). The dispatcher
    (``.jit``) is callable from Python and is used by :func:`integrate_reference`.
    """

    __slots__ = ("cfunc", "jit", "name")

    def __init__(self, func):
        # both without reference counting: numba would otherwise update (atomically) the
        # count of each array argument at every call, a third of a simple right-hand side's
        # cost; the caller owns the arrays for the whole call, so a right-hand side must not
        # allocate. Both forms share one on-disk cache entry (same function, same signature),
        # hence the same flags.
        self.jit = nb.njit(RHS_SIGNATURE, cache=True, _nrt=False)(func)
        self.cfunc = nb.cfunc(RHS_SIGNATURE, cache=True, _nrt=False)(func)
        self.name = func.__name__

    def __repr__(self) -> str:
        return f"CompiledRHS({self.name})"


def compile_rhs(func) -> CompiledRHS:
    """Compile ``func(t, x, xd, p, out)`` (plain Python, numba-compatible) for both integrators.

    ``func`` must be defined at module level in a file (numba's on-disk cache is keyed on it).
    It may call other ``numba.njit`` functions (mark them ``inline="always"``: a call that
    is not inlined updates the reference counts of its array arguments), and must not
    allocate: both forms are compiled without numba's reference counting.
    """
    return CompiledRHS(func)


class DDEResult:
    """Trajectory of a DDE integration.

    Attributes
    ----------
    t : numpy.ndarray
        Sample times (k,), s.
    x : numpy.ndarray
        States (k, n).
    """

    __slots__ = ("t", "x")

    def __init__(self, t: np.ndarray, x: np.ndarray):
        self.t = t
        self.x = x

    def __repr__(self) -> str:
        return f"DDEResult(t=[{self.t[0]:g} .. {self.t[-1]:g}], n_samples={len(self.t)})"


@nb.njit(cache=True, inline="always")
def _hist_interp(tq, t0, dt, n_done, hx, hf, nbuf, x0, xd, k):
    """Cubic Hermite interpolation of the history at time ``tq`` into row ``k`` of ``xd``.

    Grid point j (time t0 + j*dt) is stored at ring index j % nbuf; points 0..n_done are
    available (state and derivative). Before t0 the constant history ``x0`` is returned.
    """
    n = x0.shape[0]
    if tq <= t0:
        for i in range(n):
            xd[k, i] = x0[i]
        return
    u = (tq - t0) / dt
    j = int(u)
    if j >= n_done:
        # only reachable through rounding when tq == t0 + n_done*dt
        j = n_done - 1
    s = u - j
    i0 = j % nbuf
    i1 = i0 + 1
    if i1 == nbuf:
        i1 = 0
    s1 = 1.0 - s
    h00 = (1.0 + 2.0 * s) * s1 * s1
    h10 = s * s1 * s1 * dt
    h01 = s * s * (3.0 - 2.0 * s)
    h11 = -s * s * s1 * dt
    for i in range(n):
        xd[k, i] = h00 * hx[i0, i] + h10 * hf[i0, i] + h01 * hx[i1, i] + h11 * hf[i1, i]


@nb.njit(cache=True)
def _rk4_dde(rhs, x0, t0, dt, n_steps, delays, p, lower, stride):
    n = x0.shape[0]
    m = delays.shape[0]
    max_delay = 0.0
    for k in range(m):
        if delays[k] > max_delay:
            max_delay = delays[k]
    nbuf = int(np.ceil(max_delay / dt)) + 4
    hx = np.empty((nbuf, n))
    hf = np.empty((nbuf, n))
    n_out = n_steps // stride + 1
    tout = np.empty(n_out)
    xout = np.empty((n_out, n))
    x = x0.copy()
    xd = np.empty((m, n))
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    xs = np.empty(n)
    tout[0] = t0
    xout[0, :] = x
    j = 1
    ib = 0
    cnt = 0
    for step in range(n_steps):
        t = t0 + step * dt
        # stage 1 (its derivative is also the history derivative at grid point `step`)
        for k in range(m):
            _hist_interp(t - delays[k], t0, dt, step, hx, hf, nbuf, x0, xd, k)
        rhs(t, x, xd, p, k1)
        for i in range(n):
            hx[ib, i] = x[i]
            hf[ib, i] = k1[i]
        ib += 1
        if ib == nbuf:
            ib = 0
        # stages 2 and 3 at t + dt/2
        th = t + 0.5 * dt
        for k in range(m):
            _hist_interp(th - delays[k], t0, dt, step, hx, hf, nbuf, x0, xd, k)
        for i in range(n):
            xs[i] = x[i] + 0.5 * dt * k1[i]
        rhs(th, xs, xd, p, k2)
        for i in range(n):
            xs[i] = x[i] + 0.5 * dt * k2[i]
        rhs(th, xs, xd, p, k3)
        # stage 4 at t + dt
        for k in range(m):
            _hist_interp(t + dt - delays[k], t0, dt, step, hx, hf, nbuf, x0, xd, k)
        for i in range(n):
            xs[i] = x[i] + dt * k3[i]
        rhs(t + dt, xs, xd, p, k4)
        for i in range(n):
            x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
            if x[i] < lower[i]:
                x[i] = lower[i]
        cnt += 1
        if cnt == stride:
            cnt = 0
            tout[j] = t + dt
            for i in range(n):
                xout[j, i] = x[i]
            j += 1
    return tout[:j], xout[:j]


def integrate_fixed(rhs, x0, delays, params, duration, dt, *, t0=0.0, lower=None, stride=1):
    """Integrate a DDE with compiled fixed-step RK4 and Hermite history interpolation.

    Parameters
    ----------
    rhs : CompiledRHS
        Right-hand side from :func:`compile_rhs`.
    x0 : array_like
        Initial state, also the constant history for ``t <= t0`` (n,).
    delays : array_like
        Constant delays (m,), s; each must be at least ``2*dt``.
    params : array_like
        Float parameter vector passed to ``rhs``.
    duration : float
        Integration horizon, s.
    dt : float
        Step, s.
    t0 : float
        Start time, s.
    lower : array_like, optional
        Lower bound for each state, applied after each step (default: no bound).
    stride : int
        Record every ``stride``-th step.

    Returns
    -------
    DDEResult
    """
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    delays = np.atleast_1d(np.asarray(delays, dtype=np.float64))
    p = np.ascontiguousarray(params, dtype=np.float64)
    if not (dt > 0 and np.isfinite(dt)):
        raise ValueError(f"dt: must be > 0, got {dt!r}")
    if np.any(delays < 2.0 * dt * (1 - 1e-12)):
        raise ValueError(
            f"dt: must be at most min(delay)/2 = {delays.min() / 2:g} s for the method of "
            f"steps, got {dt:g} s"
        )
    if not duration > 0:
        raise ValueError(f"duration: must be > 0, got {duration!r}")
    stride = max(1, int(stride))
    lower = (
        np.full(x0.shape, -np.inf)
        if lower is None
        else np.ascontiguousarray(lower, dtype=np.float64)
    )
    n_steps = int(round(duration / dt))
    t, x = _rk4_dde(rhs.cfunc, x0, float(t0), float(dt), n_steps, delays, p, lower, stride)
    return DDEResult(t, x)


def step_for_record(dt: float, record_dt: float) -> tuple[float, int]:
    """Largest step <= ``dt`` that divides ``record_dt``, and the matching stride.

    The compiled integrator then records exactly on the grid k * record_dt, the grid of the
    reference integrators, so trajectories can be compared sample by sample.
    """
    stride = max(1, int(np.ceil(record_dt / dt * (1 - 1e-12))))
    return record_dt / stride, stride


class _DenseHistory:
    """Piecewise dense-output history used by :func:`integrate_reference`."""

    def __init__(self, t0: float, x0: np.ndarray):
        self.t0 = t0
        self.x0 = x0
        self.starts: list[float] = []
        self.pieces: list = []

    def add(self, t_start: float, dense) -> None:
        self.starts.append(t_start)
        self.pieces.append(dense)

    def __call__(self, tq: float) -> np.ndarray:
        if tq <= self.t0 or not self.pieces:
            return self.x0
        i = bisect.bisect_right(self.starts, tq) - 1
        return self.pieces[max(i, 0)](tq)


def integrate_reference(
    rhs,
    x0,
    delays,
    params,
    duration,
    *,
    t0=0.0,
    rtol=1e-9,
    atol=1e-9,
    t_eval=None,
    lower=None,
):
    """Integrate a DDE adaptively (SciPy DOP853, method of steps with dense-output history).

    Same arguments as :func:`integrate_fixed` (``rhs.jit`` is called from Python);
    ``t_eval`` are the output times (default: 1001 equally spaced points); ``lower`` bounds are
    applied to the dense output only (the rhs must keep the state feasible).

    Returns
    -------
    DDEResult
    """
    from scipy.integrate import DOP853

    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    delays = np.atleast_1d(np.asarray(delays, dtype=np.float64))
    p = np.ascontiguousarray(params, dtype=np.float64)
    m, n = delays.shape[0], x0.shape[0]
    hist = _DenseHistory(float(t0), x0.copy())
    jit = rhs.jit
    xd = np.empty((m, n))
    out = np.empty(n)

    def fun(t, x):
        for k in range(m):
            xd[k] = hist(t - delays[k])
        jit(t, np.ascontiguousarray(x, dtype=np.float64), xd, p, out)
        return out.copy()

    t_end = t0 + duration
    solver = DOP853(fun, t0, x0.copy(), t_end, max_step=float(delays.min()), rtol=rtol, atol=atol)
    while solver.status == "running":
        t_old = solver.t
        solver.step()
        if solver.status == "failed":
            raise RuntimeError(f"reference integration failed at t = {solver.t:g} s")
        hist.add(t_old, solver.dense_output())
    if t_eval is None:
        t_eval = np.linspace(t0, t_end, 1001)
    t_eval = np.asarray(t_eval, dtype=float)
    xs = np.array([hist(tq) for tq in t_eval])
    if lower is not None:
        xs = np.maximum(xs, np.asarray(lower, dtype=float))
    return DDEResult(t_eval, xs)


def integrate_jitcdde(f, x, xd, subs, delay, x0, t_eval, *, rtol=1e-8, atol=1e-8):
    """Integrate a symbolic single-delay system with jitcdde (see the module docstring).

    Parameters
    ----------
    f : sequence of sympy.Expr
        Right-hand sides in the state symbols ``x`` and delayed symbols ``xd``.
    x, xd : sequence of sympy.Symbol
        States and their delayed twins.
    subs : dict
        Numeric values of every other symbol.
    delay : float
        The delay, s.
    x0 : array_like
        Initial state and constant history.
    t_eval : array_like
        Output times. jitcdde first steps over the initial discontinuities (up to a few
        multiples of ``delay``); outputs at 0 < t < that point are NaN, at t <= 0 the history.
    rtol, atol : float
        jitcdde tolerances.

    Returns
    -------
    DDEResult
    """
    import os
    import tempfile

    import symengine as se
    import sympy as sp
    from jitcdde import jitcdde, t, y
    from sympy.codegen.cfunctions import expm1, log1p

    exprs = []
    for e in f:
        e = sp.sympify(e).subs(subs)
        e = e.replace(expm1, lambda z: sp.exp(z) - 1).replace(log1p, lambda z: sp.log(1 + z))
        exprs.append(e)
    table = {se.Symbol(s.name): y(i) for i, s in enumerate(x)}
    table.update({se.Symbol(s.name): y(i, t - delay) for i, s in enumerate(xd)})
    fse = [se.sympify(e).subs(table) for e in exprs]
    dde = jitcdde(fse, verbose=False, max_delay=delay)
    # jitcdde builds the C module with setuptools, which inspects the working directory (a
    # project's pyproject.toml breaks it): build from an empty temporary directory, never in
    # the repository. A build takes ~1 s, so modules are not kept across calls.
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="qcnmodel-jitcdde-") as tmp:
        os.chdir(tmp)
        try:
            dde.compile_C(verbose=False, simplify=False)
        finally:
            os.chdir(cwd)
    x0 = np.asarray(x0, dtype=float)
    dde.constant_past(x0, time=0.0)
    dde.set_integration_parameters(
        rtol=rtol, atol=atol, min_step=1e-14, first_step=delay / 100, max_step=delay
    )
    dde.step_on_discontinuities()
    t_eval = np.asarray(t_eval, dtype=float)
    out = np.empty((t_eval.size, x0.size))
    t_start = dde.t
    with warnings.catch_warnings():
        # a sample exactly at the current time triggers a harmless "no step" warning
        warnings.filterwarnings("ignore", message="The target time is smaller")
        for i, tq in enumerate(t_eval):
            if tq >= t_start:
                out[i] = dde.integrate(tq)
            else:
                out[i] = x0 if tq <= 0 else np.nan
    return DDEResult(t_eval, out)
