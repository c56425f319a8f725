"""QCN cycle-averaged fluid model (delay-differential), after Alizadeh et al. -- a reconstruction.

Sources: Alizadeh et al., "Data Center Transport Mechanisms: Congestion Control Theory and
IEEE Standardization" (Allerton 2008) and "Stability Analysis of QCN: The Averaging Principle"
(SIGMETRICS 2011). The full texts were not available: the equations are reconstructed from the
reaction-point rules of IEEE 802.1Qau and from the DCQCN fluid model that descends from them
(Zhu et al., CoNEXT 2016). Every term is a hypothesis to be checked against the packet-level
simulator.

Equations (N symmetric flows, rates in packets/s of ``frame_size`` bytes, q in packets):

.. math::

    \\dot q &= N R_C(t) - C \\qquad (\\dot q = \\max(\\cdot, 0) \\text{ at } q \\le 0)\\\\
    Fb(t) &= -\\Bigl(q(t) - Q_{eq} + \\frac{w}{p\\,C}\\bigl(N R_C(t) - C\\bigr)\\Bigr)\\\\
    \\dot R_C &= -G_d\\,u(t-\\tau)\\,R_C(t)\\,R_C(t-\\tau)\\,p\\,1\\{Fb(t-\\tau)<0\\}
        + \\frac{R_T - R_C}{2}\\,R_C(t-\\tau)\\,\\frac{p}{(1-p)^{-B} - 1}\\\\
    \\dot R_T &= -(R_T - R_C)\\,R_C(t-\\tau)\\,p\\,1\\{Fb(t-\\tau)<0\\}
        + R_{AI}\\,R_C(t-\\tau)\\,\\frac{p\\,(1-p)^{FB}}{(1-p)^{-B} - 1}

**The feedback scale.** The RP multiplies Gd by the *quantised* feedback qFb in 0..63, not by
|Fb| in bytes. The model therefore uses :math:`u = \\min(|Fb|, Fb_{max}) \\cdot
FS / Fb_{max}` with :math:`Fb_{max} = Q_{eq}(2w+1)` and FS = 2**fb_bits - 1 = 63: the
continuous feedback on the protocol's scale, capped at full scale. The cut per CNM is
``min(Gd*u, min_dec)``. The linearisation uses the very same u.

Switches (all off by default = the equations above):

* ``quantise``: ``"smooth"`` uses the dither average of the floor quantiser,
  ``max(u - 1/2, 0)``; ``"floor"`` the exact ``floor(u)`` in the nonlinear simulation (it is
  linearised as ``"smooth"``, the floor having zero derivative almost everywhere).
* ``sampling="table"``: p is the 802.1Qau sampling-table entry ``frame_size / table[floor(u) >>
  3]`` (read at the CP, so delayed like Fb); the w-term of Fb keeps the base p (``ps``). The
  table is piecewise constant, so it does not enter the linearisation except through the fixed
  point.
* ``timer``: the RP timer adds cycles of period T (the DCQCN fluid model's form, Zhu et al.):
  the averaging term gains :math:`R_C(t-\\tau) p / ((1-p)^{-T R_C(t-\\tau)} - 1)` and the
  increase term the same factor times :math:`R_{AI}(1-p)^{F T R_C(t-\\tau)}`.
* ``halving``: AI-stage cycles are half as long (B/2, T/2) -- only the R_AI terms use the
  halved length; the averaging terms keep the full length (approximation).
* ``hai`` (needs ``timer``): while both counters are past F -- probability
  :math:`(1-p)^{F \\max(B, T R_C)}` -- each cycle end adds R_HAI instead of R_AI (the HAI
  index i is taken as 1: a rough reconstruction).
* ``min_rate``: R_C is held at or above params.min_rate. R_C never exceeds the line rate:
  a port that N flows at the line rate cannot congest has no equilibrium on the congested
  branch; ``fixed_point`` gives its empty queue and ``loop()`` the open loop, as the other
  models do.
* ``reset="cnm"`` (validation finding; default ``"sample"`` = the equations above):
  in the real RP only a CNM resets the byte counter and the timer, and a CNM is sent only when
  Fb < 0 (a sampled frame with Fb >= 0 sends nothing). The per-packet reset probability in
  every cycle term is therefore :math:`p_c = p \\sigma(Fb(t-\\tau))` instead of p, with
  :math:`\\sigma(Fb) = 1/(1 + e^{Fb/\\delta})` a smoothed 1{Fb < 0} (also used in the cut and
  the TR reset). With Fb >= 0 a cycle then ends every B packets (``cycle_rate -> 1/B``) and
  AI/HAI follow, which is what the packet simulator shows after a rate dip; with ``"sample"``
  the model's increase stalls at p (1-p)^(F B) / ((1-p)^-B - 1) and an emptied queue stays
  empty for hundreds of ms. ``reset_width`` delta (bytes; default (1 + w) frame_size, the
  granularity of Fb: Q and Qold move in whole frames) sets how sharp the switch is; the
  linearisation sees its slope at Fb*, a feedback path the base model lacks.
* ``sampling_lag`` (validation finding): the CP computes Fb only at samples, on average every
  :math:`T_s = 1/(p C)` (packets), and holds it in between; Qdelta is a backward difference over
  the last interval. Both act like a zero-order hold, :math:`e^{-s T_s/2}` (the ZOH equivalent
  of the FOPDT view's sampling lag, :mod:`qcnmodel.models.fopdt`). With the switch on, the delay
  used everywhere (simulation, linearisation, ``loop()``) is :attr:`loop_delay` = rtt + Ts/2 (p
  the equilibrium's sampling probability at the RP); ``loop().margins().critical_delay_s`` is
  then a loop delay, and :func:`qcnmodel.analysis.margins.critical_rtt` subtracts
  :attr:`sampling_lag_s` (:attr:`extra_delay`) for the critical RTT.
* ``stage_memory`` (validation finding, needs ``reset="cnm"``): the stage factors
  :math:`(1-p_c)^{F B}` (and the timer/HAI ones) are the stationary probability that the last
  F cycles saw no CNM. They have no memory: when CNMs stop they jump to 1 and AI/HAI start at
  once, skipping the 5 fast-recovery cycles. The switch adds a 4th state, the mean age A (s)
  since the last CNM, :math:`\\dot A = 1 - A R_C(t-\\tau) p \\sigma(Fb(t-\\tau))`, and
  the stage factors use the effective reset probability :math:`1/(R_C(t-\\tau) A)`: equal
  to :math:`p_c` at equilibrium (same fixed point), growing towards 1 only about F cycles
  after the last CNM. The states become (q, R_C, R_T, A); ``simulate`` adds ``age``.
* ``enqueue_offset`` (validation finding, bytes): the CP reads Q on arrival *after* enqueue (the
  802.1Qau congestion point samples on arrival), so with well-mixed arrivals the queue it
  samples is the time-average queue plus the arriving frame. Fb is computed on q + offset; the
  equilibrium time-average queue moves down by the offset (one frame: Qeq - 1500 B), the loop
  gain is unchanged. A single paced flow phase-locks with the service and sees less (0 .. 1
  frame).

Linearisation: the loop is broken at the CP feedback Fb(t - tau) (see
:mod:`qcnmodel.analysis.linearize`). In the base model the delayed rate only multiplies terms
that vanish at equilibrium, so A1 has rank one and L(s) is exact. With ``timer`` the delayed
rate also sets the timer-cycle rate; that direct path is treated as undelayed in ``loop()``
(``neglected`` reports its relative size; :meth:`LinearDDE.characteristic` stays exact).

Equilibrium caveat. With B = 100 frames and p = 1% the additive-increase drive
(1-p)^(F B) = 0.0066 is weak, so at the 802.1Qau defaults the equilibrium sits only ~1.4 B
(N = 10; ~15 B at N = 100) above Qeq, i.e. that close to the Fb = 0 switching surface. The
linearisation describes perturbations smaller than |Fb*| only; larger ones are governed by the
switching (e.g. a ~10 B residual oscillation at rtt = 200 us although PM = +8 deg). At Ps >= 3 %
(B = 100, F = 5) the drive falls below 1e-6 and |Fb*| below 1e-9 Qeq, where q* is Qeq to
rounding: the model then has no equilibrium off the surface (ValueError).

QCNParams fields not used by the fluid model: ``quantiser`` (only floor-like quantisation, via
``quantise``), ``sampling`` (the model's own ``sampling`` switch, default "fixed"),
``cycle_halving`` (use ``halving``), ``jitter``, ``tr_div8``, ``hai_index``, ``timer_mode``,
``bc_reload_on_cnm``, ``cnm_requires_qfb_positive``, ``drift_*``; ``cp_latency`` should be
added to ``rtt`` by the caller.

Numerics: p/((1-p)^(-x) - 1) is computed as p e^y / -expm1(y), y = x*log1p(-p) (no overflow).
The tempting form -p/expm1(x*log1p(-p)) = p/(1-(1-p)^x) is the wanted quantity divided
by (1-p)^x (0.37 for p = 1%, x = B = 100); the tests pin the form used here against 50-digit
arithmetic.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from qcnmodel import config
from qcnmodel.analysis.dde import integrate_jitcdde
from qcnmodel.analysis.linearize import DelaySystem, LinearDDE
from qcnmodel.models import _qcn_eqs as eq
from qcnmodel.models._base import (
    LoopModel,
    check_operating_point,
    hotspot_spec,
    initial_state,
    integrate,
    port_congested,
    trajectory,
    zero_gain,
)
from qcnmodel.models._qcn_averaged_eq import analytic_fixed_point
from qcnmodel.params import QCNParams
from qcnmodel.params._validate import check_choice
from qcnmodel.units import parse_number

__all__ = ["QCNAveragedModel"]

_QUANT = {False: eq.QUANT_NONE, "none": eq.QUANT_NONE, True: eq.QUANT_SMOOTH,
          "smooth": eq.QUANT_SMOOTH, "floor": eq.QUANT_FLOOR}  # fmt: skip


@functools.lru_cache(maxsize=32)
def _system(
    timer: bool, hai: bool, quant: int, halving: bool, reset: bool = False, memory: bool = False
) -> DelaySystem:
    f, x, xd, syms, channel = eq.qcn_symbolic(timer, hai, quant, halving, reset, memory)
    return DelaySystem(f, x, xd, syms, channel=channel)


@dataclass(frozen=True)
class QCNAveragedModel(LoopModel):
    """Symmetric QCN fluid model at one operating point (LoopModel protocol).

    Parameters
    ----------
    params : QCNParams
        Protocol parameters (Qeq, w, Gd, BC_LIMIT, R_AI, ...).
    rtt : float
        Loop delay tau (CP -> RP -> CP), s; > 0. Unit strings accepted ("100us").
    n_flows : int
        Number of flows N >= 1.
    capacity : float, optional
        CP service rate in bit/s (default ``params.line_rate``).
    ps : float, optional
        Sampling probability in (0, 1] (default ``params.ps``).
    timer, hai, halving, min_rate : bool
        Model switches (module docstring).
    sampling : {"fixed", "table"}
        Fixed p or the 802.1Qau sampling table.
    quantise : {False, "smooth", "floor"}
        Feedback quantisation (True means "smooth").
    reset : {"sample", "cnm"}
        What resets the RP counters in the cycle terms: every sample (the reconstructed
        equations) or only CNMs, i.e. samples with Fb < 0 (module docstring).
    reset_width : float, optional
        Width delta (bytes) of the smoothed indicator with ``reset="cnm"``
        (default (1 + w) * frame_size).
    sampling_lag : bool
        Add the CP's zero-order-hold lag Ts/2 to the loop delay (module docstring).
    enqueue_offset : float
        Bytes by which the queue the CP reads exceeds the model's (time-average) queue
        (module docstring; 0 = none, ``frame_size`` = read after enqueue, well mixed).
    stage_memory : bool
        A 4th state, the mean age since the last CNM, gives the stage factors a memory
        (module docstring; needs ``reset="cnm"``).
    """

    params: QCNParams = field(default_factory=QCNParams)
    rtt: float = 100e-6
    n_flows: int = 10
    capacity: float | None = None
    ps: float | None = None
    timer: bool = False
    hai: bool = False
    sampling: str = "fixed"
    quantise: bool | str = False
    halving: bool = False
    min_rate: bool = False
    reset: str = "sample"
    reset_width: float | None = None
    sampling_lag: bool = False
    enqueue_offset: float = 0.0
    stage_memory: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.params, QCNParams):
            raise ValueError(f"params: expected a QCNParams, got {type(self.params).__name__}")
        check_operating_point(self, capacity=True, ps=True)
        check_choice("sampling", self.sampling, ("fixed", "table"))
        if self.quantise not in _QUANT:
            raise ValueError(
                f"quantise: must be False, True, 'smooth' or 'floor', got {self.quantise!r}"
            )
        off = parse_number(self.enqueue_offset, "enqueue_offset")
        if not (0 <= off < self.params.qeq):
            raise ValueError(f"enqueue_offset: must be in [0, qeq) bytes, got {off!r}")
        object.__setattr__(self, "enqueue_offset", float(off))
        for name in ("timer", "hai", "halving", "min_rate", "sampling_lag", "stage_memory"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name}: must be a bool, got {getattr(self, name)!r}")
        check_choice("reset", self.reset, ("sample", "cnm"))
        if self.reset_width is not None:
            rw = parse_number(self.reset_width, "reset_width")
            if not (rw > 0 and math.isfinite(rw)):
                raise ValueError(f"reset_width: must be in (0, inf) bytes, got {rw!r}")
            object.__setattr__(self, "reset_width", float(rw))
        if self.stage_memory and self.reset != "cnm":
            raise ValueError("stage_memory: needs reset='cnm' (the age counts from CNMs)")
        if self.hai and not self.timer:
            raise ValueError("hai: hyperactive increase needs both counters (set timer=True)")

    # ------------------------------------------------------------------ helpers
    @property
    def capacity_bps(self) -> float:
        """CP service rate in bit/s (``capacity`` or ``params.line_rate``)."""
        return self.params.line_rate if self.capacity is None else self.capacity

    @property
    def congested(self) -> bool:
        """Whether the flows at the line rate exceed the port's capacity
        (:func:`~qcnmodel.models._base.port_congested`). Otherwise the queue stays empty, no
        CNM is sent, every flow runs at the line rate and the loop is open."""
        return port_congested(self.n_flows, self.params.line_rate, self.capacity_bps)

    @property
    def p_sample(self) -> float:
        """Base sampling probability (``ps`` or ``params.ps``)."""
        return self.params.ps if self.ps is None else self.ps

    @property
    def _pkt_bits(self) -> float:
        return 8.0 * self.params.frame_size

    @property
    def sampling_lag_s(self) -> float:
        """Ts/2 in s if ``sampling_lag`` (Ts = frame_size*8 / (p C), base p), else 0."""
        if not self.sampling_lag:
            return 0.0
        return 0.5 * self._pkt_bits / (self.p_sample * self.capacity_bps)

    @property
    def extra_delay(self) -> float:
        """Loop delay beyond the RTT, s: :attr:`sampling_lag_s` (the loop delay is
        :attr:`loop_delay` = rtt + sampling_lag_s)."""
        return self.sampling_lag_s

    @property
    def reset_width_bytes(self) -> float:
        """Width of the smoothed reset indicator, bytes (``reset="cnm"``)."""
        if self.reset_width is not None:
            return self.reset_width
        return (1.0 + self.params.w) * self.params.frame_size

    def param_vector(self, hotspot=None) -> np.ndarray:
        """Parameter vector of the equations (packets, packets/s; layout in models._qcn_eqs)."""
        pr = self.params
        fr = float(pr.frame_size)
        bits = self._pkt_bits
        p = np.zeros(eq.N_PARAMS)
        p[eq.P_N] = self.n_flows
        p[eq.P_C] = self.capacity_bps / bits
        p[eq.P_QEQ] = (pr.qeq - self.enqueue_offset) / fr  # Fb's reference for the mean q
        p[eq.P_W] = pr.w
        p[eq.P_PS] = self.p_sample
        p[eq.P_FBMAX] = pr.fb_max / fr
        p[eq.P_FS] = pr.fb_full_scale
        p[eq.P_GD] = pr.gd
        p[eq.P_MINDEC] = pr.min_dec
        p[eq.P_B] = pr.bc_limit / fr
        p[eq.P_F] = pr.fr_th
        p[eq.P_RAI] = pr.r_ai / bits
        p[eq.P_RHAI] = pr.r_hai / bits
        p[eq.P_T] = pr.timer
        p[eq.P_RMIN] = pr.min_rate / bits
        p[eq.P_RLINE] = pr.line_rate / bits
        p[eq.P_TIMER] = float(self.timer)
        p[eq.P_HAI] = float(self.hai)
        p[eq.P_TABLE] = float(self.sampling == "table")
        p[eq.P_QUANT] = _QUANT[self.quantise]
        p[eq.P_HALVE] = float(self.halving)
        p[eq.P_MINRATE] = float(self.min_rate)
        p[eq.P_TAB0 : eq.P_TAB0 + 8] = np.minimum(1.0, fr / pr.sample_table())
        p[eq.P_TON] = np.inf
        p[eq.P_TOFF] = np.inf
        p[eq.P_CHOT] = p[eq.P_C]
        p[eq.P_TAU] = self.loop_delay
        p[eq.P_RESET] = 2.0 if self.stage_memory else float(self.reset == "cnm")
        p[eq.P_RWIDTH] = self.reset_width_bytes / fr
        eq.precompute(p)
        if hotspot is not None:
            p[eq.P_TON], p[eq.P_TOFF], p[eq.P_CHOT] = hotspot_spec(hotspot, bits)
        return p

    def system(self) -> DelaySystem:
        """The symbolic :class:`~qcnmodel.analysis.linearize.DelaySystem` of this model's
        switches."""
        quant = _QUANT[self.quantise]
        quant = eq.QUANT_SMOOTH if quant == eq.QUANT_FLOOR else quant
        return _system(
            self.timer, self.hai, quant, self.halving, self.reset == "cnm", self.stage_memory
        )

    def rhs_symbolic(self):
        """SymPy form (f, x, xd, params, channel) on the congested interior branch; see
        ``models._qcn_eqs.qcn_symbolic``. Parameter values: :meth:`symbolic_param_values`."""
        return eq.qcn_symbolic(
            self.timer,
            self.hai,
            _QUANT[self.quantise],
            self.halving,
            self.reset == "cnm",
            self.stage_memory,
        )

    def symbolic_param_values(self) -> np.ndarray:
        """Numeric values of the symbolic parameters (packet units), at the equilibrium's
        sampling probability."""
        p = self.param_vector()
        vals = np.r_[p[: eq.N_SYM_PARAMS - 1], self._p_rp]
        if self.reset == "cnm":
            vals = np.r_[vals, p[eq.P_RWIDTH]]
        return vals

    # ------------------------------------------------------------------ equilibrium
    @functools.cached_property
    def _x_star(self) -> np.ndarray:
        if not self.congested:
            raise ValueError(
                f"no equilibrium on the congested branch: {self.n_flows} flow(s) at the line "
                f"rate ({self.params.line_rate:g} bit/s) do not exceed the port's capacity "
                f"({self.capacity_bps:g} bit/s); the queue stays empty and the loop is open"
            )
        p = self.param_vector()
        guess, p_rp = analytic_fixed_point(self, p)
        self.__dict__["_p_rp"] = p_rp
        if self.stage_memory:  # mean age = 1 / CNM rate
            ind, _, ps, _ = eq.cp_signals(guess[0], guess[1], p[eq.P_C], p)
            guess = np.r_[guess, 1.0 / (guess[1] * ps * ind)]
        x = self.system().fixed_point(self.symbolic_param_values(), guess)
        if np.max(self._residual(x)) > 1e-9:
            raise RuntimeError(f"fixed point check failed: residual {self._residual(x)}")
        return x

    def _residual(self, x) -> np.ndarray:
        """|f(x, x)| of the compiled rhs, relative to C (queue) and R_C* C (rates).

        With ``quantise="floor"`` the dither-averaged ("smooth") rhs is used: the floor model
        has a piecewise-constant cut and in general no exact equilibrium (it chatters around
        the smooth one).
        """
        p = self.param_vector()
        if p[eq.P_QUANT] == eq.QUANT_FLOOR:
            p[eq.P_QUANT] = eq.QUANT_SMOOTH
        x = np.ascontiguousarray(x, dtype=float)
        out = np.empty(len(x))
        eq.QCN_RHS.jit(0.0, x, x[None, :].copy(), p, out)
        scale = np.array([p[eq.P_C], x[1] * p[eq.P_C], x[1] * p[eq.P_C], 1.0][: len(x)])
        return np.abs(out) / scale

    @property
    def _p_rp(self) -> float:
        if "_p_rp" not in self.__dict__:
            _ = self._x_star
        return self.__dict__["_p_rp"]

    def fixed_point(self) -> dict:
        """Equilibrium in SI units.

        Returns
        -------
        dict
            ``q`` (bytes), ``rate_current``, ``rate_target`` (bit/s), ``fb`` (bytes, Fb < 0),
            ``u`` (feedback on the 0..FS scale), ``ps`` (sampling probability at the RP),
            ``residual`` (max |f(x*, x*)| relative to C and R_C*C); with ``stage_memory``
            also ``age`` (s, mean time since the last CNM = 1 / CNM rate). Without congestion
            (:attr:`congested`) the queue is empty, both rates are the line rate, ``fb`` is
            Qeq less the enqueue offset (no CNM: ``u`` 0), ``age`` is infinite and the
            residual 0.
        """
        if not self.congested:
            line = float(self.params.line_rate)
            extra = {"age": math.inf} if self.stage_memory else {}
            return extra | {"q": 0.0, "rate_current": line, "rate_target": line,
                            "fb": float(self.params.qeq - self.enqueue_offset), "u": 0.0,
                            "ps": float(self.p_sample), "residual": 0.0}  # fmt: skip
        x = self._x_star
        p = self.param_vector()
        fr = float(self.params.frame_size)
        ind, u, ps, _ = eq.cp_signals(x[0], x[1], p[eq.P_C], p)
        extra = {"age": float(x[3])} if self.stage_memory else {}
        return extra | {
            "q": x[0] * fr,
            "rate_current": x[1] * self._pkt_bits,
            "rate_target": x[2] * self._pkt_bits,
            "fb": -(x[0] * fr + self.enqueue_offset - self.params.qeq),
            "u": u,
            "ps": ps,
            "residual": float(np.max(self._residual(x))),
        }

    # ------------------------------------------------------------------ linear analysis
    def linearise(self) -> LinearDDE:
        """:class:`~qcnmodel.analysis.linearize.LinearDDE` at the fixed point (packet units)."""
        return self.system().linearise(self._x_star, self.symbolic_param_values(), self.loop_delay)

    def loop(self):
        """Open loop L(s) = num/den e^{-s rtt} broken at the CP feedback (DelayedLoop);
        without congestion (:attr:`congested`) ``L = 0``, a
        :class:`~qcnmodel.analysis.freqloop.FrequencyLoop` with ``G = 0``."""
        from qcnmodel.analysis.loop import DelayedLoop

        name = f"QCN fluid N={self.n_flows} rtt={self.rtt * 1e6:g}us"
        if not self.congested:
            from qcnmodel.analysis.freqloop import FrequencyLoop

            return FrequencyLoop(zero_gain, self.loop_delay, f"{name} (no congestion: open loop)")
        num, den, _ = self.linearise().open_loop()
        return DelayedLoop(num, den, self.loop_delay, name)

    def symbolic_loop(self):
        """SymPy (num, den) polynomials in s; symbols are the states and parameters."""
        return self.system().symbolic_loop()

    # ------------------------------------------------------------------ simulation
    @staticmethod
    def _branch_fb(x, p):
        """Fb (packets) along a trajectory (rows of x), with the model's base p."""
        fb = -(x[:, 0] - p[eq.P_QEQ] + p[eq.P_W] / (p[eq.P_PS] * p[eq.P_C])
               * (p[eq.P_N] * x[:, 1] - p[eq.P_C]))  # fmt: skip
        return fb

    def default_dt(self) -> float:
        """Integration step: min(rtt/10, 10 us).

        At the 802.1Qau defaults the fastest linear mode is ~1.5e3 rad/s and the phase
        crossover ~1.3e4 rad/s, so 10 us is > 40 steps per period of the fastest oscillation;
        the test suite bounds the difference to the adaptive reference (tests/models).
        """
        return min(self.loop_delay / 10.0, config.defaults["models.max_dt"])

    def simulate(
        self,
        duration,
        dt=None,
        method: str = "compiled",
        x0=None,
        hotspot=None,
        record_dt=None,
        rtol: float | None = None,
    ):
        """Nonlinear trajectory of the delay-differential equations.

        Parameters
        ----------
        duration : float or str
            Simulated time, s (unit strings accepted, as for ``dt`` and ``record_dt``).
        dt : float or str, optional
            Fixed step of the compiled integrator (default :meth:`default_dt`), reduced if
            needed to divide ``record_dt`` (all methods then share the output grid).
        method : {"compiled", "reference", "jitcdde"}
            Compiled RK4 (fast), adaptive SciPy DOP853 on the same rhs (accuracy reference),
            or jitcdde on the symbolic rhs (independent check; congested branch only: raises
            ValueError if Fb(t - rtt) >= 0 anywhere; no hotspot; the first output samples,
            up to ~rtt, are NaN).
        x0 : dict, optional
            Initial state (and constant history): keys ``q`` (bytes), ``rate_current``,
            ``rate_target`` (bit/s), with ``stage_memory`` also ``age`` (s); missing keys take
            the fixed-point value (or the line rate if there is no fixed point).
        hotspot : tuple, optional
            ``(t_on, t_off, capacity_bps)``: CP capacity during ``[t_on, t_off)``.
        record_dt : float or str, optional
            Output sampling interval (default: 2000 intervals over ``duration``).
        rtol : float, optional
            Relative (and scaled absolute) tolerance of the reference integrators (default
            ``config.defaults["models.reference_rtol"]``, 1e-8).

        Returns
        -------
        xarray.Dataset
            Variables ``q`` (bytes), ``rate_current``, ``rate_target`` (bit/s) over ``time`` (s).
        """
        p = self.param_vector(hotspot)
        fr = float(self.params.frame_size)
        bits = self._pkt_bits
        try:  # without congestion (or an interior equilibrium): from the line rate
            xs = self._x_star
        except (ValueError, RuntimeError):
            xs = np.array([0.0, p[eq.P_RLINE], p[eq.P_RLINE], 1.0][: 4 if self.stage_memory else 3])
        if x0 and "age" in x0 and not self.stage_memory:
            raise ValueError("x0: 'age' needs stage_memory=True")
        layout = {"q": (0, fr), "rate_current": (1, bits), "rate_target": (2, bits)}
        if self.stage_memory:
            layout["age"] = (3, 1.0)
        x = initial_state(xs, x0, layout)
        lower = np.array([0.0, p[eq.P_RMIN] if self.min_rate else 0.0, 0.0, 0.0][: len(x)])

        def jit(t_eval, rtol):
            if hotspot is not None:
                raise ValueError("hotspot: not supported with method='jitcdde'")
            sysm = self.system()
            subs = dict(zip(sysm.params, self.symbolic_param_values()))
            res = integrate_jitcdde(list(sysm.f), sysm.x, sysm.xd, subs, self.loop_delay, x,
                                    t_eval, rtol=rtol, atol=rtol)  # fmt: skip
            ok = np.isfinite(res.x[:, 0])
            if np.any(self._branch_fb(res.x[ok], p) >= 0):
                raise ValueError(
                    "method='jitcdde' integrates the congested branch only, and the trajectory "
                    "reached Fb >= 0: use method='compiled' or a smaller perturbation"
                )
            return res

        res = integrate(eq.QCN_RHS, x, [self.loop_delay], p, duration, method=method, dt=dt,
                        default_dt=self.default_dt(), record_dt=record_dt, rtol=rtol,
                        lower=lower, scale=xs, jitcdde=jit)  # fmt: skip
        variables = {
            "q": ("time", res.x[:, 0] * fr, {"units": "B"}),
            "rate_current": ("time", res.x[:, 1] * bits, {"units": "bit/s"}),
            "rate_target": ("time", res.x[:, 2] * bits, {"units": "bit/s"}),
        }
        if self.stage_memory:
            variables["age"] = ("time", res.x[:, 3], {"units": "s"})
        return trajectory(res, variables, self, n_flows=self.n_flows, rtt=self.rtt)
