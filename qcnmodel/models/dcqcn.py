"""DCQCN fluid model, after Zhu, Ghobadi, Misra, Padhye (CoNEXT 2016).

Equations of Y. Zhu, M. Ghobadi, V. Misra, J. Padhye, "ECN or Delay: Lessons Learnt from
Analysis of DCQCN and TIMELY" (ACM CoNEXT 2016) (per flow i, rates in packets/s of
``packet_size`` bytes, q in packets, all CP signals delayed by the loop delay tau* = ``rtt``):

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

Two options add mechanisms of the DCQCN rules that the paper's equations leave out; both
default to off (the paper's equations):

* **CNP lag** (``cnp_lag``). The CNP term counts one CNP per interval tau that saw a mark,
  i.e. the notification point reports the marks of a window (t - tau, t] at its end: a boxcar
  average whose mean lag is tau/2. ``cnp_lag`` adds that lag to the loop delay (every delayed
  signal is taken at t - (tau* + cnp_lag); ``extra_delay``). It is exact for the windowed
  notification point of the simulator released with the CoNEXT 2016 paper; for the SIGCOMM
  2015 rule (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments"), which
  coalesces the marks that follow a CNP into one CNP tau later, it holds while marks are
  dense (the first CNP after a quiet spell is immediate). ``cnp_lag=params.tau / 2`` is the
  windowed notification point.
* **Stage memory** (``stage_memory``, nonlinear trajectories only). The timer's AI factor
  (1-p)^(F T R_C) is the stationary probability that the last F timer periods saw no mark.
  It has no memory: when the marks stop it jumps to 1 and AI starts at once, while the rule
  needs F timer expiries (F T = 275 us at the defaults) without a CNP first. With
  ``stage_memory=True`` a state y' = R_C log(1 - p(q)) per flow gives the factor
  exp(y(t - d) - y(t - d - F T)), d the loop delay: the probability that none of the packets
  the CP handled in that window of F T was marked, equal to the stationary factor at the
  fixed point. ``linearise`` and ``loop`` stay those of the memoryless equations (the window
  would need a second delay in the linearisation).
* **Notification point** (``notification``, nonlinear trajectories only). The equations'
  CNP rate (1 - (1-p)^(tau R_C)) / tau is one CNP per interval tau that saw a mark (the
  windowed rule, ``"window"``). The notification point of the NIC (SIGCOMM 2015; the packet
  simulator's default) coalesces instead: a mark sends a CNP at once unless one left in the
  last interval; a mark inside that interval is remembered and sent when it ends. With
  ``notification="coalesce"`` the CNP rate is that rule's expectation, a renewal equation
  c(t) = m(t) (1 - W(t)) + c(t - tau) A(t) (m the rate of marked packets, W the probability
  of an open interval, A that of a mark in the last interval;
  :func:`qcnmodel.models._dcqcn_eqs.coalesced_cnp_rate`): the first CNP after a quiet spell
  comes without lag, then one per interval while the marks last. The CNP lag of the windowed
  rule is then part of the process (``cnp_lag`` must be 0). ``linearise``, ``loop`` and the
  fixed point stay those of the windowed equations.

Fixed point. R_C* = C/N; alpha* = 1 - (1-p*)^(tau' R_C*); R_T* - R_C* = tau R_AI R_C* (c+e)/a
(with a = 1 - (1-p)^(tau R_C), b = p/((1-p)^-B - 1), c = (1-p)^(FB) b,
d = p/((1-p)^-(T R_C) - 1), e = (1-p)^(F T R_C) d); p* is the root of the monotone equation
alpha(p) a(p)^2 = tau^2 R_AI R_C (c+e)(b+d) (``fixed_point_method="exact"``), or the paper's small-p
approximation p* = [R_AI N^2/(tau' C^2) (1/B + N/(T C))^2]^(1/3) (``"taylor"``);
q* = Kmin + (p*/pmax)(Kmax - Kmin). If p* > pmax there is no equilibrium on the marking ramp
(above Kmax the curve jumps to 1): a ValueError says so, unless ``ramp="extend"`` (the paper's
implicit extension of the ramp beyond Kmax, also used by the simulation then).

Linearisation. ``linearisation="exact"`` (default): symbolic Jacobians of the equations above
(:mod:`qcnmodel.analysis.linearize`), loop broken at the marking probability p(t - tau*). A1 has
rank two here (the delayed rate sets the CNP and timer rates directly, and these terms do not
vanish at the equilibrium). ``loop()`` keeps that direct path delayed: its
``G(s) = -c^T (sI - A0 - A1_direct e^{-s tau*})^{-1} b`` depends on the loop delay, so the
margins are computed delay by delay and the critical delay comes from the exact
quasi-polynomial (:meth:`~qcnmodel.analysis.linearize.LinearDDE.delay_boundary`). Treating
the path as undelayed overestimated the critical delay by 19 % at N = 100 and 57 % at
N = 200 (``ramp="extend"``); ``loop_info()`` reports its relative size.
``linearisation="paper"`` transcribes the authors' open loop (the paper's phase-margin analysis,
evaluated at the Taylor fixed point), including their simplifications (first order in p of the
byte-counter terms, gC/N alpha pole, one damping term on the delayed rate).

The per-flow form (``per_flow=True``) integrates N separate flows (e.g. with different
initial rates); its linearisation at the symmetric fixed point is the symmetric one (the
asymmetric modes do not move q).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from qcnmodel import config
from qcnmodel._errors import unknown_name
from qcnmodel.analysis.dde import integrate_jitcdde
from qcnmodel.analysis.linearize import DelaySystem, LinearDDE
from qcnmodel.models import _dcqcn_eqs as eq
from qcnmodel.models._base import (
    LoopModel,
    _positive,
    check_operating_point,
    hotspot_spec,
    initial_state,
    integrate,
    trajectory,
)
from qcnmodel.models._dcqcn_paper import paper_loop_coefficients, taylor_p
from qcnmodel.models.dcqcn_runs import RunsJudged
from qcnmodel.params._validate import check_choice
from qcnmodel.params.dcqcn import DCQCNParams
from qcnmodel.units import parse_time

__all__ = ["DCQCNParams", "DCQCNFluidModel", "HALF_INTERVAL", "paper_loop_coefficients"]

#: ``cnp_lag`` value meaning half the parameter set's CNP interval (the windowed CNP's mean lag)
HALF_INTERVAL = "half-interval"


@functools.lru_cache(maxsize=1)
def _system() -> DelaySystem:
    f, x, xd, syms, channel = eq.dcqcn_symbolic()
    return DelaySystem(f, x, xd, syms, channel=channel)


@dataclass(frozen=True)
class DCQCNFluidModel(RunsJudged, LoopModel):
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
    cnp_lag : float or "half-interval"
        Mean lag of the notification point's CNP window, s, added to the loop delay (module
        docstring, "CNP lag"): 0 (default, the paper's equations), a time (unit strings
        accepted), or ``"half-interval"``, half the parameter set's CNP interval (the
        configuration the validation compares: registry variant ``cnp-lag+stage-memory``).
    stage_memory : bool
        The timer's AI factor from the last F T of history (module docstring; ``simulate``
        only).
    notification : {"window", "coalesce"}
        The notification point's CNP rule in the trajectories (module docstring,
        "Notification point"): one CNP per interval that saw a mark ("window", the paper's
        equations) or the coalescing rule of the NIC ("coalesce"; ``simulate`` only, with
        ``cnp_lag`` 0: the rule carries its own lag).
    trajectories : {"mean-field", "agents"}
        What :meth:`simulate` integrates by default: the mean field (the equations; method
        "compiled") or every flow with the packet rules on a fluid queue (method "agents",
        :mod:`._dcqcn_agents`; the registry's validated variant ``packet``). The
        linearisation and the fixed point are the mean field's either way.
    """

    params: DCQCNParams = field(default_factory=DCQCNParams)
    rtt: float = 50e-6
    n_flows: int = 10
    fixed_point_method: str = "exact"
    linearisation: str = "exact"
    ramp: str = "strict"
    per_flow: bool = False
    cnp_lag: float | str = 0.0
    stage_memory: bool = False
    notification: str = "window"
    trajectories: str = "mean-field"

    def __post_init__(self) -> None:
        if not isinstance(self.params, DCQCNParams):
            raise ValueError(f"params: expected DCQCNParams, got {type(self.params).__name__}")
        check_operating_point(self)
        if isinstance(self.cnp_lag, str) and self.cnp_lag.strip().lower() == HALF_INTERVAL:
            object.__setattr__(self, "cnp_lag", HALF_INTERVAL)
        else:
            lag = parse_time(self.cnp_lag, "cnp_lag")
            if not (0.0 <= lag < math.inf):
                raise ValueError(
                    f"cnp_lag: must be in [0, inf) s or {HALF_INTERVAL!r}, got {self.cnp_lag!r}"
                )
            object.__setattr__(self, "cnp_lag", lag)
        if not isinstance(self.stage_memory, bool):
            raise ValueError(f"stage_memory: must be True or False, got {self.stage_memory!r}")
        for name, allowed in (
            ("fixed_point_method", ("exact", "taylor")),
            ("linearisation", ("exact", "paper")),
            ("ramp", ("strict", "extend")),
            ("notification", ("window", "coalesce")),
            ("trajectories", ("mean-field", "agents")),
        ):
            check_choice(name, getattr(self, name), allowed)
        if self.notification == "coalesce" and self.cnp_lag_s != 0.0:
            raise ValueError(
                f"cnp_lag: must be 0 with notification='coalesce' (the coalescing rule carries "
                f"its own lag; the registry variant 'coalesce+stage-memory' sets both), got "
                f"{self.cnp_lag!r}"
            )
        # the simulator accepts 0 for both (a CNP per mark, no increase); the equations do not
        for name, alias in (("cnp_interval", "tau"), ("r_ai", "r_ai")):
            if not getattr(self.params, name) > 0:
                raise ValueError(
                    f"{alias}: the fluid model needs {name} > 0, got {getattr(self.params, name)!r}"
                )

    # ------------------------------------------------------------------ numbers
    @property
    def cnp_lag_s(self) -> float:
        """The CNP lag in seconds (``"half-interval"`` resolved on the parameter set)."""
        if self.cnp_lag == HALF_INTERVAL:
            return 0.5 * self.params.cnp_interval
        return self.cnp_lag

    @property
    def extra_delay(self) -> float:
        """Loop delay beyond the RTT, s: the CNP lag (``loop_delay`` = ``rtt`` + the lag)."""
        return self.cnp_lag_s

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
        p[eq.P_C] = pr.line_rate / self._pkt_bits
        p[eq.P_KMIN] = pr.kmin / ps
        p[eq.P_KMAX] = pr.kmax / ps
        p[eq.P_PMAX] = pr.pmax
        p[eq.P_G] = pr.g
        p[eq.P_TAU] = pr.cnp_interval
        p[eq.P_TAUP] = pr.alpha_timer
        p[eq.P_T] = pr.rate_timer
        p[eq.P_B] = pr.byte_counter / ps
        p[eq.P_F] = pr.fr_th
        p[eq.P_RAI] = pr.r_ai / self._pkt_bits
        p[eq.P_RAMPEXT] = float(self.ramp == "extend")
        p[eq.P_TON] = p[eq.P_TOFF] = np.inf
        p[eq.P_CHOT] = p[eq.P_C]
        p[eq.P_RTT] = self.loop_delay
        if hotspot is not None:
            p[eq.P_TON], p[eq.P_TOFF], p[eq.P_CHOT] = hotspot_spec(hotspot, self._pkt_bits)
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
        """Equilibrium in SI units (ValueError if none is on the marking ramp, ramp="strict").

        Returns
        -------
        dict
            q (bytes), p, alpha, rate_target, rate_current (bit/s) and ``residual``: max
            |f(x*, x*)| of the compiled rhs relative to C (queue), g/tau' (alpha) and R_C* C
            (rates), ~1e-16 for "exact", O(p*) for "taylor".
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
        return _system().linearise(self._x_star, vals, self.loop_delay)

    def loop(self):
        """Open loop broken at the marking probability: exact (a FrequencyLoop whose ``G``
        keeps the direct delayed-rate paths delayed) or the paper's (a DelayedLoop)."""
        from qcnmodel.analysis.loop import DelayedLoop

        name = f"DCQCN fluid ({self.linearisation}) N={self.n_flows} rtt={self.rtt * 1e6:g}us"
        if self.cnp_lag_s:
            name += f" + CNP lag {self.cnp_lag_s * 1e6:g}us"
        if self.linearisation == "paper":
            num, den = paper_loop_coefficients(self.params, self.n_flows)
            return DelayedLoop(num, den, self.loop_delay, name)
        lin = self.linearise()
        num, den, neglected = lin.open_loop()
        if not neglected:
            return DelayedLoop(num, den, self.loop_delay, name)
        from qcnmodel.analysis.freqloop import FrequencyLoop

        return FrequencyLoop(lin.direct_transfer, self.loop_delay, name, g_delay=True,
                             delay_boundary=lin.delay_boundary())  # fmt: skip

    def loop_info(self) -> dict:
        """Size of the direct delayed-rate path: ``neglected`` (its relative size, what a
        single-delay loop treating it as undelayed would leave out) and ``crossover_root``,
        the root of the exact quasi-polynomial found by Newton from j * (gain crossover): the
        pair that crosses the imaginary axis as tau* grows (not guaranteed to be the
        rightmost; None if not found)."""
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
        """min(loop delay/10, 5 us) (``config.defaults["models.dcqcn_max_dt"]``). At the paper's
        defaults the fastest linear mode is ~1.1e4 1/s (dt*|lambda| ~ 0.06 for RK4); measured
        against the adaptive reference (rtol 1e-10) the error is ~1e-9 of the queue swing at 5
        us (tests bound it). With the coalescing notification point also at most one packet
        time at the line rate: an idle notification point fires at the rate of marked packets
        m <= R_C, and m dt <= 1 keeps that transition resolved (0.2 us at 40 Gb/s, 1000 B).
        c(t - tau) is averaged over 2 dt: halving dt moved the cycle's mean queue by under 1 %
        (N = 20, 50 us: 59.4 vs 59.8 KB) and its period by under one 10 us bin."""
        dt = min(self.loop_delay / 10.0, config.defaults["models.dcqcn_max_dt"])
        if self.notification == "coalesce":
            dt = min(dt, self._pkt_bits / self.params.line_rate)
        return dt

    def _agents(self, duration, dt, x0, hotspot, record_dt, seed):
        from qcnmodel.models._dcqcn_agents import agents_dataset

        for name, value in (("x0", x0), ("hotspot", hotspot)):
            if value is not None:
                raise ValueError(f"{name}: not supported with method='agents' (it starts as a "
                                 "packet simulation does, at a constant capacity)")  # fmt: skip
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed: must be a whole number >= 0, got {seed!r}")
        duration = _positive(parse_time(duration, "duration"), "duration")
        rec = (_positive(parse_time(record_dt, "record_dt"), "record_dt") if record_dt is not None
               else duration / config.defaults["models.record_points"])  # fmt: skip
        step = None if dt is None else parse_time(dt, "dt")
        if step is not None and not 1e-9 <= step < math.inf:
            raise ValueError(f"dt: must be in [1 ns, inf) (the model's clock counts whole "
                             f"nanoseconds), got {dt!r}")  # fmt: skip
        return agents_dataset(self, duration, rec, seed=int(seed), dt=step)

    def simulate(self, duration, dt=None, method=None, x0=None, hotspot=None,
                 record_dt=None, rtol=None, seed=0):  # fmt: skip
        """Nonlinear trajectory of the mean field, or of every flow (``method="agents"``).

        Parameters
        ----------
        duration, dt, record_dt : float or str
            Simulated time, step (default :meth:`default_dt`; the agents' own if None) and
            output interval (default ``duration / config.defaults["models.record_points"]``), s.
        method : {"compiled", "reference", "jitcdde", "agents"}, optional
            The mean field by compiled RK4, adaptive SciPy DOP853 or jitcdde (symbolic rhs on
            the marking ramp, without the stage memory; raises if the queue leaves the ramp);
            or every one of the ``n_flows`` flows with the packet rules on a fluid queue
            (:mod:`._dcqcn_agents`; no ``x0`` or ``hotspot``: from an empty queue with every
            source at the line rate, as a packet simulation starts; ``seed`` >= 0 draws the
            marks). Default "agents" when ``trajectories="agents"``, else "compiled".
        x0 : dict, optional
            q (bytes), alpha, rate_target, rate_current (bit/s; scalars or per-flow arrays);
            missing keys take the fixed point.
        hotspot : tuple, optional
            ``(t_on, t_off, capacity_bps)``: the capacity in ``[t_on, t_off)``.
        rtol : float, optional
            Tolerance of "reference"/"jitcdde" (default ``models.reference_rtol``, 1e-8).

        Returns
        -------
        xarray.Dataset
            q in bytes, p, alpha, rate_target and rate_current in bit/s over ``time`` (s);
            per-flow variables have a ``flow`` dimension when ``per_flow``. With "agents": q,
            throughput, per-flow rate_current (bin means over ``record_dt``) and cnps.
        """
        if method is None:
            method = "agents" if self.trajectories == "agents" else "compiled"
        methods = ("compiled", "reference", "jitcdde", "agents")
        if not isinstance(method, str) or method not in methods:
            raise unknown_name("method", "method", method, methods, sort=False)
        if method == "agents":
            return self._agents(duration, dt, x0, hotspot, record_dt, seed)
        p = self.param_vector(hotspot)
        nf = int(p[eq.P_NF])
        bits = self._pkt_bits
        ps = self.params.packet_size
        try:
            xs = self._x_star
        except ValueError:
            xs = np.array([0.0, 0.0, p[eq.P_C] / p[eq.P_N], p[eq.P_C] / p[eq.P_N]])
        x_star = np.concatenate([[xs[0]], np.repeat(xs[1:], nf)])
        blocks = {"alpha": 1, "rate_target": 2, "rate_current": 3}
        layout = {"q": (0, ps)} | {
            key: (slice(1 + (k - 1) * nf, 1 + k * nf), 1.0 if key == "alpha" else bits)
            for key, k in blocks.items()
        }
        x = initial_state(x_star, x0, layout)
        lower = np.zeros_like(x)
        rhs, delays, scale = eq.DCQCN_RHS, [self.loop_delay], x_star
        coalesce = self.notification == "coalesce"
        if self.stage_memory or coalesce:  # y_i from 0: only its differences over a window enter
            x = np.concatenate([x, np.zeros(nf)])
            lower = np.concatenate([lower, np.full(nf, -np.inf)])
            scale = np.concatenate([x_star, np.ones(nf)])
            rhs = eq.DCQCN_RHS_MEM
            delays.append(self.loop_delay + self.params.fr_th * self.params.rate_timer)
        if coalesce:  # Z_i (cumulative CNPs) from 0; c(t - tau) from its last two steps
            x = np.concatenate([x, np.zeros(nf)])
            lower = np.concatenate([lower, np.zeros(nf)])
            scale = np.concatenate([scale, np.ones(nf)])
            rhs = eq.DCQCN_RHS_NP_MEM if self.stage_memory else eq.DCQCN_RHS_NP
            iv = self.params.cnp_interval
            p[eq.P_DELTA] = 2.0 * (parse_time(dt, "dt") if dt is not None else self.default_dt())
            delays += [self.loop_delay + iv, iv, iv + p[eq.P_DELTA]]

        def jit(t_eval, rtol):
            if hotspot is not None or self.per_flow or self.stage_memory or coalesce:
                raise ValueError(
                    "method='jitcdde' supports the symmetric model without hotspot, stage "
                    "memory or the coalescing notification point"
                )
            sysm = _system()
            subs = dict(zip(sysm.params, eq.param_values(p)))
            res = integrate_jitcdde(list(sysm.f), sysm.x, sysm.xd, subs, self.loop_delay, x,
                                    t_eval, rtol=rtol, atol=rtol)  # fmt: skip
            q = res.x[np.isfinite(res.x[:, 0]), 0]
            if np.any(q <= p[eq.P_KMIN]) or (self.ramp == "strict" and np.any(q > p[eq.P_KMAX])):
                raise ValueError(
                    "method='jitcdde' integrates the marking ramp only, and the queue left it: "
                    "use method='compiled' or a smaller perturbation"
                )
            return res

        res = integrate(rhs, x, delays, p, duration, method=method, dt=dt,
                        default_dt=self.default_dt(), record_dt=record_dt, rtol=rtol,
                        lower=lower, scale=scale, jitcdde=jit)  # fmt: skip
        xx = res.x
        marks = np.array([eq.marking(v, p) if np.isfinite(v) else np.nan for v in xx[:, 0]])
        per = ("time", "flow") if self.per_flow else ("time",)

        def sel(key):
            v = xx[:, layout[key][0]]
            return v if self.per_flow else v[:, 0]

        variables = {
            "q": ("time", xx[:, 0] * ps, {"units": "B"}),
            "p": ("time", marks),
            "alpha": (per, sel("alpha")),
            "rate_target": (per, sel("rate_target") * bits, {"units": "bit/s"}),
            "rate_current": (per, sel("rate_current") * bits, {"units": "bit/s"}),
        }
        return trajectory(res, variables, self, n_flows=self.n_flows, rtt=self.rtt,
                          cnp_lag=self.cnp_lag_s, stage_memory=int(self.stage_memory),
                          notification=self.notification)  # fmt: skip
