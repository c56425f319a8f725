"""ECM / BCN fluid model (delay-differential), after Jiang and Jain (INFOCOM 2007).

Sources: the ECM settings of the IBM Zurich deck ("Toward a Scalable and Robust QCN") and of
Teak Technologies' "More QCN Simulation Results"; J. Jiang, R. Jain, "Analysis of Backward
Congestion Notification (BCN) for Ethernet in Datacenter Applications" (INFOCOM 2007). The
fluid form follows the QCN fluid model's recipe (:mod:`qcnmodel.models.qcn`) with both
feedback signs.

N symmetric flows, all rate-limited by the CP (so all receive both feedback signs), rates in
packets/s of ``frame_size`` bytes, q in packets:

.. math::

    \\dot q &= N R(t) - C \\qquad (\\dot q = \\max(\\cdot, 0) \\text{ at } q \\le 0)\\\\
    Fb(t) &= -\\Bigl(q(t) - Q_{eq} + \\frac{w}{p\\,C}\\bigl(N R(t) - C\\bigr)\\Bigr)
        \\quad(\\text{clipped to } \\pm Fb_{max})\\\\
    \\dot R &= p\\,R(t-\\tau)\\,\\begin{cases}
        G_i R_u\\,\\sigma Fb(t-\\tau) & Fb(t-\\tau) > 0\\\\
        G_d\\,\\sigma Fb(t-\\tau)\\,R(t) & Fb(t-\\tau) < 0 \\end{cases}

With ECM_MAX on, Fb = -Fbmax whenever q >= Qmax. Reading: a sampled frame of the flow
reaches its RP at rate p R(t - tau) and carries the feedback computed at t - tau; sigma
converts Fb in packets to the gain scale (bytes for seed 004's raw-Fb gains, 2**bits - 1 per
Fbmax for seed 000's 8-bit gains). The positive-feedback policy of the simulator ("tagged":
only rate-limited flows) is modelled by assuming every flow is rate-limited; ECM(0,0) is not
modelled.

Fixed point: q* = Qeq, R* = C/N, Fb* = 0 (exact). The right-hand side has a kink there: the
slope of dR/dt in Fb is p R* sigma Gi Ru above and p R* sigma Gd R* below. ``branch``
selects the linearisation: ``"increase"``, ``"decrease"``, or ``"mean"`` (default; the
describing-function gain of a piecewise-linear element for a sinusoid centred on the kink is
the mean of the two slopes). Broken at Fb(t - tau), the open loop is exactly (A1 has rank one)

.. math::  L(s) = K \\frac{1 + s\\,w/(p C)}{s^2} e^{-s\\tau},\\qquad
    K = p\\,C\\,\\sigma\\,(a_+ G_i R_u + a_- G_d C/N),

a double integrator with the lead zero of the derivative term (:meth:`ECMFluidModel.loop_gain`
returns K and the lead time w/(pC); the tests pin the symbolic loop to it). With seed 004's
gains the increase slope dominates for N > 5 (ratio 0.1 C / (0.5 R*) = N/5).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from qcnmodel import config
from qcnmodel._errors import unknown_name
from qcnmodel.analysis.linearize import DelaySystem, LinearDDE
from qcnmodel.models import _ecm_eqs as eq
from qcnmodel.models._base import (
    LoopModel,
    NotCongested,
    check_operating_point,
    hotspot_spec,
    initial_state,
    integrate,
    port_congested,
    trajectory,
)
from qcnmodel.params.protocols import ECMParams

__all__ = ["ECMFluidModel"]

_BRANCH = {"increase": (1.0, 0.0), "decrease": (0.0, 1.0), "mean": (0.5, 0.5)}
_PARAM_ATTRS = ("fb_max", "fb_full", "gd_eff", "gi_eff", "psample", "qeq", "w", "r_unit")


@functools.lru_cache(maxsize=1)
def _system() -> DelaySystem:
    f, x, xd, syms, channel = eq.ecm_symbolic()
    return DelaySystem(f, x, xd, syms, channel=channel)


@dataclass(frozen=True)
class ECMFluidModel(LoopModel):
    """Symmetric ECM fluid model at one operating point (LoopModel protocol).

    Parameters
    ----------
    params : ECMParams, optional
        :class:`qcnmodel.params.protocols.ECMParams` (default: seed 004's set).
    rtt : float
        Loop delay tau, s (unit strings accepted).
    n_flows : int
        N >= 1.
    capacity : float, optional
        CP service rate, bit/s (default ``params.line_rate``).
    ps : float, optional
        Sampling probability (default ``params.psample``).
    branch : {"mean", "increase", "decrease"}
        Linearisation at the kink Fb* = 0 (module docstring).
    min_rate : bool
        Hold R >= params.r_min in the nonlinear simulation.
    """

    params: object = None
    rtt: float = 100e-6
    n_flows: int = 10
    capacity: float | None = None
    ps: float | None = None
    branch: str = "mean"
    min_rate: bool = True

    def __post_init__(self) -> None:
        if self.params is None:
            object.__setattr__(self, "params", ECMParams())
        if not all(hasattr(self.params, a) for a in _PARAM_ATTRS):
            raise ValueError(f"params: expected an ECMParams, got {type(self.params).__name__}")
        check_operating_point(self, capacity=True, ps=True)
        if self.branch not in _BRANCH:
            raise unknown_name("branch", "value", self.branch, _BRANCH, sort=False)
        if not isinstance(self.min_rate, (bool, np.bool_)):
            raise ValueError(f"min_rate: must be a bool, got {self.min_rate!r}")

    # ------------------------------------------------------------------ helpers
    @property
    def capacity_bps(self) -> float:
        return self.params.line_rate if self.capacity is None else self.capacity

    @property
    def p_sample(self) -> float:
        return self.params.psample if self.ps is None else self.ps

    @property
    def _pkt_bits(self) -> float:
        return 8.0 * self.params.frame_size

    def param_vector(self, hotspot=None) -> np.ndarray:
        """Parameter vector (packets, packets/s; layout in ``_fluid_ecm_eqs``)."""
        pr = self.params
        fr = float(pr.frame_size)
        bits = self._pkt_bits
        p = np.zeros(eq.N_PARAMS)
        p[eq.P_N] = self.n_flows
        p[eq.P_C] = self.capacity_bps / bits
        p[eq.P_QEQ] = pr.qeq / fr
        p[eq.P_W] = pr.w
        p[eq.P_PS] = self.p_sample
        p[eq.P_FBMAX] = pr.fb_max / fr
        p[eq.P_SCALE] = pr.fb_full / pr.fb_max * fr  # gain units per packet of Fb
        p[eq.P_GD] = pr.gd_eff
        p[eq.P_GIRU] = pr.gi_eff * pr.r_unit / bits
        p[eq.P_A_POS], p[eq.P_A_NEG] = _BRANCH[self.branch]
        p[eq.P_RMIN] = pr.r_min / bits
        p[eq.P_RLINE] = pr.line_rate / bits
        p[eq.P_QMAX] = pr.q_max / fr
        p[eq.P_ECMMAX] = float(pr.ecm_max)
        p[eq.P_MINRATE] = float(self.min_rate)
        p[eq.P_TON] = np.inf
        p[eq.P_TOFF] = np.inf
        p[eq.P_CHOT] = p[eq.P_C]
        p[eq.P_TAU] = self.rtt
        if hotspot is not None:
            p[eq.P_TON], p[eq.P_TOFF], p[eq.P_CHOT] = hotspot_spec(hotspot, bits)
        return p

    def system(self) -> DelaySystem:
        """The symbolic :class:`~qcnmodel.analysis.linearize.DelaySystem` (branch weights are
        parameters)."""
        return _system()

    # ------------------------------------------------------------------ equilibrium
    def _x_star(self) -> np.ndarray:
        p = self.param_vector()
        rate = p[eq.P_C] / p[eq.P_N]
        if not port_congested(1, p[eq.P_RLINE], rate):  # N x line rate <= C, as elsewhere
            raise NotCongested(
                f"no equilibrium: C/N = {rate * self._pkt_bits:g} bit/s is no less than the line "
                "rate (the flows cannot fill the CP; no congestion)"
            )
        if self.min_rate and rate < p[eq.P_RMIN]:
            raise ValueError(f"no equilibrium: C/N is below r_min = {self.params.r_min:g} bit/s")
        if self.params.ecm_max and p[eq.P_QEQ] >= p[eq.P_QMAX]:
            raise ValueError("no equilibrium: Qeq >= Qmax with ECM_MAX on")
        return np.array([p[eq.P_QEQ], rate])

    def fixed_point(self) -> dict:
        """Equilibrium: ``q`` (bytes) = Qeq, ``rate`` (bit/s) = C/N, ``fb`` = 0, ``residual``."""
        x = self._x_star()
        out = np.empty(2)
        p = self.param_vector()
        eq.ECM_RHS.jit(0.0, x, x[None, :].copy(), p, out)
        return {
            "q": x[0] * self.params.frame_size,
            "rate": x[1] * self._pkt_bits,
            "fb": 0.0,
            "residual": float(np.max(np.abs(out) / np.array([p[eq.P_C], x[1] * p[eq.P_C]]))),
        }

    # ------------------------------------------------------------------ linear analysis
    def linearise(self) -> LinearDDE:
        """:class:`~qcnmodel.analysis.linearize.LinearDDE` at the fixed point (packet units),
        with the equilibrium's feedback Fb* = 0 exactly (Jiang et al.'s BCN fluid model: at
        the equilibrium q = Qeq and N R = C, so the rate's own terms vanish and the loop is
        a double integrator)."""
        p = self.param_vector()
        return self.system().linearise(self._x_star(), p[: eq.N_SYM_PARAMS], self.rtt,
                                       channel_value=0.0)  # fmt: skip

    def loop(self):
        """Open loop L(s) = num/den e^{-s rtt}, broken at Fb(t - tau) (DelayedLoop)."""
        from qcnmodel.analysis.loop import DelayedLoop

        num, den, _ = self.linearise().open_loop()
        name = f"ECM fluid N={self.n_flows} rtt={self.rtt * 1e6:g}us ({self.branch})"
        return DelayedLoop(num, den, self.rtt, name)

    def loop_gain(self) -> tuple[float, float]:
        """Closed form (K, T_lead) of L(s) = K (1 + s T_lead) / s^2 e^{-s tau} (docstring)."""
        p = self.param_vector()
        a_pos, a_neg = _BRANCH[self.branch]
        r_star = p[eq.P_C] / p[eq.P_N]
        slope = a_pos * p[eq.P_GIRU] + a_neg * p[eq.P_GD] * r_star
        k = p[eq.P_PS] * p[eq.P_C] * p[eq.P_SCALE] * slope
        return k, p[eq.P_W] / (p[eq.P_PS] * p[eq.P_C])

    # ------------------------------------------------------------------ simulation
    def default_dt(self) -> float:
        """min(rtt/10, 10 us)."""
        return min(self.rtt / 10.0, config.defaults["models.max_dt"])

    def simulate(self, duration, dt=None, method="compiled", x0=None, hotspot=None,
                 record_dt=None, rtol=None):  # fmt: skip
        """Nonlinear trajectory (xarray Dataset: ``q`` in bytes, ``rate`` in bit/s).

        Parameters as :meth:`qcnmodel.models.qcn.QCNFluidModel.simulate`; ``x0`` keys ``q``
        (bytes) and ``rate`` (bit/s), default the fixed point (or the line rate without one).
        """
        p = self.param_vector(hotspot)
        fr = float(self.params.frame_size)
        bits = self._pkt_bits
        try:
            xs = self._x_star()
        except ValueError:
            xs = np.array([0.0, p[eq.P_RLINE]])
        x = initial_state(xs, x0, {"q": (0, fr), "rate": (1, bits)})
        lower = np.array([0.0, p[eq.P_RMIN] if self.min_rate else 0.0])
        res = integrate(eq.ECM_RHS, x, [self.rtt], p, duration, method=method, dt=dt,
                        default_dt=self.default_dt(), record_dt=record_dt, rtol=rtol,
                        lower=lower, scale=xs)  # fmt: skip
        variables = {
            "q": ("time", res.x[:, 0] * fr, {"units": "B"}),
            "rate": ("time", res.x[:, 1] * bits, {"units": "bit/s"}),
        }
        return trajectory(res, variables, self, n_flows=self.n_flows, rtt=self.rtt)
