"""DCQCN fluid model, after Zhu, Ghobadi, Misra, Padhye (CoNEXT 2016).

Equations (models.md §3; per flow i, rates in packets/s of ``packet_size`` bytes, q in
packets, all CP signals delayed by the loop delay tau* = ``rtt``):

.. math::

    p(t) &= \\begin{cases} 0 & q \\le K_{min} \\\\
        \\frac{q - K_{min}}{K_{max} - K_{min}} p_{max} & K_{min} < q \\le K_{max} \\\\
        1 & q > K_{max} \\end{cases} \\\\
    \\dot q &= \\textstyle\\sum_i R_C^i - C \\\\
    \\dot\\alpha^i &= \\frac{g}{\\tau'}\\bigl[1 - (1-p_d)^{\\tau' R_{C,d}^i} - \\alpha^i\\bigr] \\\\
    \\dot R_T^i &= -\\frac{R_T^i - R_C^i}{\\tau}\\bigl(1 - (1-p_d)^{\\tau R_{C,d}^i}\\bigr)
        + R_{AI} R_{C,d}^i \\frac{(1-p_d)^{FB} p_d}{(1-p_d)^{-B} - 1}
        + R_{AI} R_{C,d}^i \\frac{(1-p_d)^{F T R_{C,d}^i} p_d}{(1-p_d)^{-T R_{C,d}^i} - 1} \\\\
    \\dot R_C^i &= -\\frac{R_C^i \\alpha^i}{2\\tau}\\bigl(1 - (1-p_d)^{\\tau R_{C,d}^i}\\bigr)
        + \\frac{R_T^i - R_C^i}{2} R_{C,d}^i \\Bigl[\\frac{p_d}{(1-p_d)^{-B} - 1}
        + \\frac{p_d}{(1-p_d)^{-T R_{C,d}^i} - 1}\\Bigr]

with :math:`p_d = p(q(t-\\tau^*))`, :math:`R_{C,d} = R_C(t-\\tau^*)`; tau the CNP interval,
tau' the alpha-update interval, T the rate-increase timer, B the byte counter (packets).

Fixed point. R_C* = C/N; alpha* = 1 - (1-p*)^(tau' R_C*); R_T* - R_C* = tau R_AI R_C* (c+e)/a
(with a = 1 - (1-p)^(tau R_C), b = p/((1-p)^-B - 1), c = (1-p)^(FB) b,
d = p/((1-p)^-(T R_C) - 1), e = (1-p)^(F T R_C) d); p* is the root of the monotone equation
alpha(p) a(p)^2 = tau^2 R_AI R_C (c+e)(b+d) (``fixed_point_method="exact"``), or the paper's small-p
approximation p* = [R_AI N^2/(tau' C^2) (1/B + N/(T C))^2]^(1/3) (``"taylor"``);
q* = Kmin + (p*/pmax)(Kmax - Kmin). If p* > pmax there is no equilibrium on the marking ramp
(above Kmax the curve jumps to 1): a ValueError says so, unless ``ramp="extend"`` (the paper's
implicit extension of the ramp beyond Kmax, also used by the simulation then).

Linearisation. ``linearisation="exact"`` (default): symbolic Jacobians of the equations above
(:mod:`qcnmodel.linearize`), loop broken at the marking probability p(t - tau*). A1 has rank
two here (the delayed rate sets the CNP and timer rates directly, and these terms do not vanish
at the equilibrium), so L(s) treats that direct path as undelayed; ``loop_info()`` reports its
relative size and a root of the exact quasi-polynomial near the crossover.
``linearisation="paper"`` transcribes the authors' open loop (models.md §3.1, evaluated at the
Taylor fixed point), including their simplifications (first order in p of the byte-counter
terms, gC/N alpha pole, one damping term on the delayed rate).

The per-flow form (``per_flow=True``) integrates N separate flows (e.g. with different
initial rates); its linearisation at the symmetric fixed point is the symmetric one (the
asymmetric modes do not move q).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from qcnmodel import _fluid_dcqcn_eqs as eq
from qcnmodel._operating_point import check_operating_point, replace_model
from qcnmodel.dde import integrate_fixed, integrate_jitcdde, integrate_reference, step_for_record
from qcnmodel.linearize import DelaySystem, LinearDDE
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

__all__ = ["DCQCNParams", "DCQCNFluidModel", "paper_loop_coefficients"]

_FIELDS = {
    # name: (parser, low, high, low_open, unit)
    "capacity": (parse_rate, 0.0, math.inf, True, "bit/s"),
    "packet_size": (parse_size, 0.0, math.inf, True, "B"),
    "kmin": (parse_size, 0.0, math.inf, False, "B"),
    "kmax": (parse_size, 0.0, math.inf, True, "B"),
    "pmax": (parse_number, 0.0, 1.0, True, ""),
    "r_ai": (parse_rate, 0.0, math.inf, True, "bit/s"),
    "g": (parse_number, 0.0, 1.0, True, ""),
    "tau": (parse_time, 0.0, math.inf, True, "s"),
    "tau_prime": (parse_time, 0.0, math.inf, True, "s"),
    "timer": (parse_time, 0.0, math.inf, True, "s"),
    "byte_counter": (parse_size, 0.0, math.inf, True, "B"),
    "fr_th": (parse_number, 1.0, 1000.0, False, ""),
}


@dataclass(frozen=True)
class DCQCNParams:
    """DCQCN parameters (SI; defaults from the CoNEXT 2016 paper, models.md §3).

    Parameters
    ----------
    capacity : float
        Bottleneck capacity C, bit/s (40 Gb/s).
    packet_size : float
        Packet size, bytes (1000).
    kmin, kmax : float
        Marking ramp, bytes (5 KB, 200 KB).
    pmax : float
        Marking probability at Kmax (1%).
    r_ai : float
        Additive increase, bit/s (40 Mb/s).
    g : float
        Alpha gain (1/256).
    tau : float
        CNP generation interval, s (50 us).
    tau_prime : float
        Alpha update interval, s (55 us).
    timer : float
        Rate-increase timer T, s (55 us).
    byte_counter : float
        Byte counter B, bytes (10 MB).
    fr_th : int
        Fast-recovery threshold F (5).

    Unit strings are accepted ("40Gbps", "50us", "10MB", "1/256").
    """

    capacity: float = 40e9
    packet_size: float = 1000.0
    kmin: float = 5000.0
    kmax: float = 200000.0
    pmax: float = 0.01
    r_ai: float = 40e6
    g: float = 1.0 / 256.0
    tau: float = 50e-6
    tau_prime: float = 55e-6
    timer: float = 55e-6
    byte_counter: float = 10e6
    fr_th: int = 5

    def __post_init__(self) -> None:
        for name, (parser, lo, hi, lo_open, unit) in _FIELDS.items():
            v = parser(getattr(self, name), name)
            ok = (v > lo if lo_open else v >= lo) and v <= hi and math.isfinite(v)
            if not ok:
                left = "(" if lo_open else "["
                raise ValueError(f"{name}: must be in {left}{lo:g}, {hi:g}] {unit}, got {v!r}")
            object.__setattr__(self, name, v)
        if not float(self.fr_th).is_integer():
            raise ValueError(f"fr_th: must be an integer, got {self.fr_th!r}")
        object.__setattr__(self, "fr_th", int(self.fr_th))
        if self.kmax <= self.kmin:
            raise ValueError(f"kmax: must exceed kmin = {self.kmin:g} B, got {self.kmax:g} B")

    def replace(self, **changes) -> DCQCNParams:
        """New parameters with fields changed (unit strings accepted)."""
        return dataclasses.replace(self, **changes)


def taylor_p(params: DCQCNParams, n_flows: int) -> float:
    """The paper's small-p fixed point p* ~ [R_AI N^2/(tau' C^2) (1/B + N/(T C))^2]^(1/3)."""
    pk = 8.0 * params.packet_size
    c = params.capacity / pk
    r_ai = params.r_ai / pk
    b = params.byte_counter / params.packet_size
    n = n_flows
    return (r_ai * n**2 / (params.tau_prime * c**2) * (1 / b + n / (params.timer * c)) ** 2) ** (
        1 / 3
    )


def paper_loop_coefficients(params: DCQCNParams, n_flows: int):
    """num, den of the authors' open loop (models.md §3.1), packets of ``packet_size``.

    Returns
    -------
    num, den : numpy.ndarray
        Coefficients, highest power first; L(s) = num/den e^{-s tau*}.
    """
    pk = 8.0 * params.packet_size
    n = float(n_flows)
    c = params.capacity / pk
    r_ai = params.r_ai / pk
    b_ = params.byte_counter / params.packet_size
    kmin = params.kmin / params.packet_size
    kmax = params.kmax / params.packet_size
    g, tau, taup, t_, f_ = params.g, params.tau, params.tau_prime, params.timer, params.fr_th
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


@functools.lru_cache(maxsize=1)
def _system() -> DelaySystem:
    f, x, xd, syms, channel = eq.dcqcn_symbolic()
    return DelaySystem(f, x, xd, syms, channel=channel)


@dataclass(frozen=True)
class DCQCNFluidModel:
    """DCQCN fluid model at one operating point (LoopModel protocol).

    Parameters
    ----------
    params : DCQCNParams
        Protocol and network parameters.
    rtt : float
        Control-loop delay tau*, s (> 0; default 50 us, a toolkit choice).
    n_flows : int
        Number of flows N >= 1.
    fixed_point_method : {"exact", "taylor"}
        Root of the monotone equation or the paper's small-p approximation.
    linearisation : {"exact", "paper"}
        Symbolic linearisation of the equations, or the authors' open loop.
    ramp : {"strict", "extend"}
        Above Kmax the marking is 1 ("strict", the equations) or the ramp continues
        ("extend", the paper's implicit extension).
    per_flow : bool
        Simulate N separate flows (x0 may then give per-flow rates).
    """

    params: DCQCNParams = field(default_factory=DCQCNParams)
    rtt: float = 50e-6
    n_flows: int = 10
    fixed_point_method: str = "exact"
    linearisation: str = "exact"
    ramp: str = "strict"
    per_flow: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.params, DCQCNParams):
            raise ValueError(f"params: expected DCQCNParams, got {type(self.params).__name__}")
        check_operating_point(self)
        for name, allowed in (
            ("fixed_point_method", ("exact", "taylor")),
            ("linearisation", ("exact", "paper")),
            ("ramp", ("strict", "extend")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: must be one of {allowed}, got {getattr(self, name)!r}")

    def replace(self, **changes) -> DCQCNFluidModel:
        """New model; names of DCQCNParams fields are applied to ``params``."""
        return replace_model(self, changes)

    # ------------------------------------------------------------------ numbers
    @property
    def _pkt_bits(self) -> float:
        return 8.0 * self.params.packet_size

    def param_vector(self, hotspot=None) -> np.ndarray:
        """Parameter vector of the compiled rhs (packet units)."""
        pr = self.params
        ps = pr.packet_size
        p = np.zeros(eq.N_PARAMS)
        p[eq.P_N] = self.n_flows
        p[eq.P_NF] = self.n_flows if self.per_flow else 1
        p[eq.P_C] = pr.capacity / self._pkt_bits
        p[eq.P_KMIN] = pr.kmin / ps
        p[eq.P_KMAX] = pr.kmax / ps
        p[eq.P_PMAX] = pr.pmax
        p[eq.P_G] = pr.g
        p[eq.P_TAU] = pr.tau
        p[eq.P_TAUP] = pr.tau_prime
        p[eq.P_T] = pr.timer
        p[eq.P_B] = pr.byte_counter / ps
        p[eq.P_F] = pr.fr_th
        p[eq.P_RAI] = pr.r_ai / self._pkt_bits
        p[eq.P_RAMPEXT] = float(self.ramp == "extend")
        p[eq.P_TON] = p[eq.P_TOFF] = np.inf
        p[eq.P_CHOT] = p[eq.P_C]
        p[eq.P_RTT] = self.rtt
        if hotspot is not None:
            t_on, t_off, cap = hotspot
            p[eq.P_TON] = parse_time(t_on, "hotspot start")
            p[eq.P_TOFF] = parse_time(t_off, "hotspot end")
            p[eq.P_CHOT] = parse_rate(cap, "hotspot capacity") / self._pkt_bits
        return p

    def _terms(self, pm: float):
        """(alpha, a, b, c, d, e) at marking probability pm, R_C = C/N (packet units)."""
        p = self.param_vector()
        rc = p[eq.P_C] / p[eq.P_N]
        l1p = math.log1p(-pm)
        alpha = -math.expm1(p[eq.P_TAUP] * rc * l1p)
        a = -math.expm1(p[eq.P_TAU] * rc * l1p)
        b = eq.cycle(pm, l1p, p[eq.P_B])
        d = eq.cycle(pm, l1p, p[eq.P_T] * rc)
        c = math.exp(p[eq.P_F] * p[eq.P_B] * l1p) * b
        e = math.exp(p[eq.P_F] * p[eq.P_T] * rc * l1p) * d
        return rc, alpha, a, b, c, d, e

    def exact_p(self) -> float:
        """Root p* in (0, 1) of alpha a^2 = tau^2 R_AI R_C (c+e)(b+d).

        Solved by brentq in log p on the logarithm of both sides (c and e underflow for
        p B F >> 700, so the terms are kept in log space).
        """
        p = self.param_vector()
        tau, r_ai, taup = p[eq.P_TAU], p[eq.P_RAI], p[eq.P_TAUP]
        big_b, f, t_ = p[eq.P_B], p[eq.P_F], p[eq.P_T]
        rc = p[eq.P_C] / p[eq.P_N]

        def log_cycle(pm, l1p, length):  # log(p / ((1-p)^-length - 1))
            y = -length * l1p  # > 0
            return math.log(pm) - (y + math.log(-math.expm1(-y)))

        def h(logp):
            pm = math.exp(logp)
            l1p = math.log1p(-pm)
            log_alpha = math.log(-math.expm1(taup * rc * l1p))
            log_a = math.log(-math.expm1(tau * rc * l1p))
            lb = log_cycle(pm, l1p, big_b)
            ld = log_cycle(pm, l1p, t_ * rc)
            lc = f * big_b * l1p + lb
            le = f * t_ * rc * l1p + ld
            rhs = 2 * math.log(tau) + math.log(r_ai * rc) + np.logaddexp(lc, le)
            return log_alpha + 2 * log_a - rhs - np.logaddexp(lb, ld)

        return math.exp(brentq(h, math.log(1e-15), math.log(1 - 1e-9), xtol=1e-14))

    @functools.cached_property
    def _x_star(self) -> np.ndarray:
        p = self.param_vector()
        if self.fixed_point_method == "exact":
            pm = self.exact_p()
        else:
            pm = taylor_p(self.params, self.n_flows)
        if pm > self.params.pmax and self.ramp == "strict":
            raise ValueError(
                f"no equilibrium on the marking ramp: p* = {pm:.4g} > pmax = "
                f"{self.params.pmax:g} (q* would exceed Kmax, where marking jumps to 1); "
                "use ramp='extend' for the paper's implicit extension of the ramp"
            )
        rc, alpha, a, b, c, d, e = self._terms(pm)
        q = p[eq.P_KMIN] + pm / p[eq.P_PMAX] * (p[eq.P_KMAX] - p[eq.P_KMIN])
        rt = rc * (1 + (c + e) * p[eq.P_TAU] * p[eq.P_RAI] / a)
        return np.array([q, alpha, rt, rc])

    def fixed_point(self) -> dict:
        """Equilibrium (SI): q (bytes), p, alpha, rate_target, rate_current (bit/s), residual.

        ``residual`` is max |f(x*, x*)| of the compiled rhs relative to C (queue), g/tau'
        (alpha) and R_C* C (rates): ~1e-16 for "exact", O(p*) for "taylor".
        """
        x = self._x_star
        res = self._residual(x)
        pv = self.param_vector()
        return {
            "q": x[0] * self.params.packet_size,
            "p": (x[0] - pv[eq.P_KMIN]) / (pv[eq.P_KMAX] - pv[eq.P_KMIN]) * pv[eq.P_PMAX],
            "alpha": x[1],
            "rate_target": x[2] * self._pkt_bits,
            "rate_current": x[3] * self._pkt_bits,
            "residual": float(np.max(res)),
        }

    def _residual(self, x) -> np.ndarray:
        p = self.param_vector()
        p[eq.P_RAMPEXT] = 1.0  # evaluate on the (extended) ramp
        p[eq.P_NF] = 1
        out = np.empty(4)
        x = np.ascontiguousarray(x, dtype=float)
        eq.DCQCN_RHS.jit(0.0, x, x[None, :].copy(), p, out)
        c = p[eq.P_C]
        scale = np.array([c, p[eq.P_G] / p[eq.P_TAUP], x[3] * c, x[3] * c])
        return np.abs(out) / scale

    # ------------------------------------------------------------------ linear analysis
    def linearise(self) -> LinearDDE:
        """Exact linearisation at the fixed point (packet units)."""
        vals = eq.param_values(self.param_vector())
        return _system().linearise(self._x_star, vals, self.rtt)

    def loop(self):
        """Open loop as a DelayedLoop (exact or paper linearisation, see module docstring)."""
        from qcnmodel.loop import DelayedLoop

        name = f"DCQCN fluid ({self.linearisation}) N={self.n_flows} rtt={self.rtt * 1e6:g}us"
        if self.linearisation == "paper":
            num, den = paper_loop_coefficients(self.params, self.n_flows)
        else:
            num, den, _ = self.linearise().open_loop()
        return DelayedLoop(num, den, self.rtt, name)

    def loop_info(self) -> dict:
        """Exactness of the exact loop: ``neglected`` (relative size of the direct delayed-rate
        path treated as undelayed) and ``crossover_root``, the root of the exact
        quasi-polynomial found by Newton from j * (gain crossover): the pair that crosses the
        imaginary axis as tau* grows (not guaranteed to be the rightmost; None if not found).
        """
        lin = self.linearise()
        _, _, neglected = lin.open_loop()
        m = self.replace(linearisation="exact").loop().margins()
        root = None
        if np.isfinite(m.crossover_rad_s):
            try:
                root = lin.root_near(1j * m.crossover_rad_s)
            except RuntimeError:
                root = None
        return {"neglected": float(neglected), "crossover_root": root}

    def symbolic_loop(self):
        """SymPy (num, den) of the exact loop (states and parameters as symbols)."""
        return _system().symbolic_loop()

    def rhs_symbolic(self):
        """SymPy form (f, x, xd, params, channel) on the marking ramp."""
        return eq.dcqcn_symbolic()

    # ------------------------------------------------------------------ simulation
    def default_dt(self) -> float:
        """min(rtt/10, 5 us). At the paper's defaults the fastest linear mode is ~1.1e4 1/s
        (dt*|lambda| ~ 0.06 for RK4); measured against the adaptive reference (rtol 1e-10) the
        error is ~1e-9 of the queue swing at 5 us (tests bound it)."""
        return min(self.rtt / 10.0, 5e-6)

    def simulate(self, duration, dt=None, method="compiled", x0=None, hotspot=None,
                 record_dt=None, rtol=1e-8):  # fmt: skip
        """Nonlinear trajectory (xarray Dataset: q in bytes, p, alpha, rate_target and
        rate_current in bit/s; per-flow variables have a ``flow`` dimension when
        ``per_flow``). ``x0`` keys: q (bytes), alpha, rate_target, rate_current (bit/s;
        scalars or per-flow arrays); missing keys take the fixed point. ``method``:
        "compiled", "reference" or "jitcdde" (symbolic rhs on the marking ramp; raises if the
        queue leaves it). Other arguments as :meth:`qcnmodel.fluid_qcn.QCNFluidModel.simulate`.
        """
        import xarray as xr

        duration = parse_time(duration, "duration")
        p = self.param_vector(hotspot)
        nf = int(p[eq.P_NF])
        bits = self._pkt_bits
        ps = self.params.packet_size
        try:
            xs = self._x_star
        except ValueError:
            xs = np.array([0.0, 0.0, p[eq.P_C] / p[eq.P_N], p[eq.P_C] / p[eq.P_N]])
        x0 = dict(x0 or {})
        for k in x0:
            if k not in ("q", "alpha", "rate_target", "rate_current"):
                raise ValueError(f"x0: unknown key {k!r} (q, alpha, rate_target, rate_current)")
        q0 = x0.get("q", xs[0] * ps) / ps
        al = np.broadcast_to(np.asarray(x0.get("alpha", xs[1]), float), (nf,))
        rt = np.broadcast_to(np.asarray(x0.get("rate_target", xs[2] * bits), float) / bits, (nf,))
        rc = np.broadcast_to(np.asarray(x0.get("rate_current", xs[3] * bits), float) / bits, (nf,))
        x = np.concatenate([[q0], al, rt, rc])
        lower = np.zeros_like(x)
        record_dt = duration / 2000.0 if record_dt is None else record_dt
        if method == "compiled":
            dt = self.default_dt() if dt is None else parse_time(dt, "dt")
            dt, stride = step_for_record(dt, record_dt)
            res = integrate_fixed(eq.DCQCN_RHS, x, [self.rtt], p, duration, dt,
                                  lower=lower, stride=stride)  # fmt: skip
        elif method == "reference":
            t_eval = np.linspace(0.0, duration, int(round(duration / record_dt)) + 1)
            atol = rtol * np.maximum(np.abs(x), 1.0)
            res = integrate_reference(eq.DCQCN_RHS, x, [self.rtt], p, duration, rtol=rtol,
                                      atol=atol, t_eval=t_eval, lower=lower)  # fmt: skip
        elif method == "jitcdde":
            if hotspot is not None or self.per_flow:
                raise ValueError("method='jitcdde' supports the symmetric model without hotspot")
            sysm = _system()
            subs = dict(zip(sysm.params, eq.param_values(p)))
            t_eval = np.linspace(0.0, duration, int(round(duration / record_dt)) + 1)
            res = integrate_jitcdde(list(sysm.f), sysm.x, sysm.xd, subs, self.rtt, x, t_eval,
                                    rtol=rtol, atol=rtol)  # fmt: skip
            q = res.x[np.isfinite(res.x[:, 0]), 0]
            if np.any(q <= p[eq.P_KMIN]) or (self.ramp == "strict" and np.any(q > p[eq.P_KMAX])):
                raise ValueError(
                    "method='jitcdde' integrates the marking ramp only, and the queue left it: "
                    "use method='compiled' or a smaller perturbation"
                )
        else:
            raise ValueError(
                f"method: must be 'compiled', 'reference' or 'jitcdde', got {method!r}"
            )
        xx = res.x
        marks = np.array([eq.marking(v, p) if np.isfinite(v) else np.nan for v in xx[:, 0]])
        per = ("time", "flow") if self.per_flow else ("time",)

        def sel(block):
            v = xx[:, 1 + block * nf : 1 + (block + 1) * nf]
            return v if self.per_flow else v[:, 0]

        return xr.Dataset(
            {
                "q": ("time", xx[:, 0] * ps, {"units": "B"}),
                "p": ("time", marks),
                "alpha": (per, sel(0)),
                "rate_target": (per, sel(1) * bits, {"units": "bit/s"}),
                "rate_current": (per, sel(2) * bits, {"units": "bit/s"}),
            },
            coords={"time": ("time", res.t, {"units": "s"})},
            attrs={"model": "DCQCNFluidModel", "n_flows": self.n_flows, "rtt": self.rtt},
        )
