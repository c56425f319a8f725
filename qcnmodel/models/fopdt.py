"""First-order lag plus delay (FOPDT) view of the QCN loop, derived with SymPy.

After the IBM Zurich deck "Toward a Scalable and Robust QCN": QCN as a control loop with a
sampling lag ``T`` and a delay ``tau``.  The slide's transfer function is
garbled, so the loop is rebuilt here from first principles.  Every step below
is a modelling hypothesis that the packet simulator has to confirm.

Derivation
----------
Units: queue ``q`` in bytes, rates in bytes/s (``C = capacity/8``), frame
size ``L_f`` in bytes, time in s.

1. **Queue** (integrator of the rate mismatch), ``N`` flows at rate ``R``::

       dq/dt = N*R - C            ->   dQ(s) = N/s * dR(s)

2. **Sensor** (PD law).  ``-Fb = (q - Qeq) + w*Qdelta`` and over one sampling
   interval ``Ts = L_f/(p*C)`` (one frame in ``1/p`` sampled, at the aggregate
   rate ``C``) ``Qdelta ~ Ts*dq/dt``, so ``-Fb(s) = (1 + s*w*Ts) dQ(s)``: a lead
   zero at ``1/(w*Ts)``.
3. **Quantiser**, linearised: ``qFb = F_s*(-Fb)/Fbmax`` with ``Fbmax =
   Qeq*(2w+1)`` mapped to full scale ``F_s = 2**fb_bits - 1`` (63); the floor
   is replaced by its slope ``F_s/Fbmax`` (its mean -1/2 LSB offset only moves
   the equilibrium queue, not the loop gain), saturation is ignored.
4. **Sampling lag**.  ``lag="first-order"``: ``1/(1 + s*T)`` with
   ``T = 1/(Ps*n*lambda)``; at the operating point ``n*lambda = C/L_f`` frames/s,
   so ``T = Ts``.  ``lag="zoh"``: the zero-order-hold equivalent
   ``exp(-s*Ts/2)`` (an extra delay, so the rational part equals the no-lag
   loop).  ``lag="none"``: no lag (the limit used for closed forms).  The
   first-order lag costs ``atan(w*Ts)`` of phase and lowers ``|L|``, the ZOH
   costs ``w*Ts/2`` at unchanged gain: already at first order in ``w*Ts`` the
   first-order lag costs twice the ZOH's phase. At the QCN crossover ``w_c*Ts`` is
   0.25 (N = 10) to 0.9 (N = 1), where they differ by several degrees (table below).
5. **Delay** ``exp(-s*tau)``, ``tau`` = RTT (CP -> RP -> CP).
6. **Reaction point**.  A flow at rate ``R`` is sampled at ``p*R/L_f``
   frames/s; each CNM cuts ``R`` by ``Gd*qFb*R``.  The self-increase moves ``R`` half-way to
   ``R_T`` once per byte-counter cycle of ``B`` frames (``B = bc_limit/L_f``), cycles completing
   at rate ``(p*R/L_f)/((1-p)^-B - 1)`` (as in the QCN fluid model, :mod:`qcnmodel.models.qcn`;
   timer and HAI omitted)::

       dR/dt = -(p*R/L_f)*Gd*qFb*R + (R_T - R)/2 * (p*R/L_f)/((1-p)^-B - 1)

   It is linearised (SymPy ``diff``) on the congested branch at the operating
   point ``R* = R_T* = C/N``, ``qFb* = 0`` (``q* = Qeq``), treating ``qFb`` as
   signed (a negative qFb stands for the self-increase above the set point)
   and ``R_T`` as constant::

       d(dR)/dt = -a*dR - b*dqFb,   a = (p*R*/L_f)/(2((1-p)^-B - 1)),
                                    b = p*Gd*R*^2/L_f

The open loop (negative feedback) is therefore::

    L(s) = K (1 + s*w*Ts) / (s (s + a)) * lag(s) * exp(-s*tau),
    K = N*b*F_s/Fbmax = p*Gd*C^2*F_s / (N*L_f*Qeq*(2w+1))   [1/s^2]

Numbers (802.1Qau defaults, a 10 Gb/s port, Ts = 120 us, RTT = 100 us; one flow at the
10 Gb/s line rate cannot congest that port, so N = 1 is a faster source, e.g. 40 Gb/s: the
loop depends on C and N, not on the line rate)::

    N    lag          w_c (rad/s)  PM (deg)  critical RTT (us)
    1    first-order  7602         -7.1       84
    1    zoh          9972         -10.5      82
    10   first-order  2060          7.3      162
    10   zoh          2094         14.0      217
    10   none         2094         21.2      277
    100  first-order   630          2.9      179

So in this view the critical RTT is of the order of the sampling lag Ts,
the scale of seed 000's claim "whenever delay exceeds sampling lag the loop
becomes unstable" (a claim for the simulator to test, not a rule).

Without congestion (``N`` flows at the line rate no faster than ``C``; :attr:`FOPDTModel.congested`)
there is no operating point on the congested branch: the queue stays empty, no CNM is sent
and every flow runs at the line rate. The loop is then open (zero gain: infinite margins, no
critical RTT, stable), as in the QCN fluid model, and :meth:`FOPDTModel.fixed_point` is that
idle port's.

Below MinRate (``C / N < min_rate``): a reaction point never sends slower than MinRate
(IEEE 802.1Qau), so N flows offer at least ``N min_rate > C`` whatever the feedback and the
port stays overloaded. There is no fair-share operating point: ``loop``, ``gains`` and
``fixed_point`` raise :class:`~qcnmodel.models._base.Overloaded`, which ``margins``, ``check``
and the summary read as "unstable at any RTT", as they read the QCN model's.

For the no-lag (and ZOH) form ``|L(jw)| = 1`` is a quadratic in ``w^2``, giving
the closed-form crossover of :meth:`FOPDTModel.closed_form`; the first-order
lag makes it a cubic (:meth:`FOPDTModel.crossover_equation`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from qcnmodel import config
from qcnmodel._errors import unknown_name
from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.models._base import (
    LoopModel,
    Overloaded,
    check_rtt_floor,
    port_congested,
    zero_gain,
)
from qcnmodel.params import QCNParams
from qcnmodel.units import parse_number, parse_rate, parse_time

__all__ = ["FOPDTModel", "LAGS"]

LAGS = ("first-order", "zoh", "none")

# symbols of the derivation (all positive reals except s)
S = sp.Symbol("s")
C, N, P, GD, LF, QEQ, W, FS, B, TAU = sp.symbols("C N p G_d L_f Q_eq w F_s B tau", positive=True)
_PARAM_SYMBOLS = (C, N, P, GD, LF, QEQ, W, FS, B)


@functools.cache
def _derive(lag: str) -> dict[str, Any]:
    """Symbolic derivation of the loop for one lag form (cached)."""
    r, rt, x = sp.symbols("R R_T x", real=True)
    r_star = C / N
    cycle_rate = (P * r / LF) / ((1 - P) ** (-B) - 1)
    f = -(P * r / LF) * GD * x * r + (rt - r) / 2 * cycle_rate
    op = {r: r_star, rt: r_star, x: 0}
    f_r = sp.simplify(sp.diff(f, r).subs(op))  # = -a
    f_x = sp.simplify(sp.diff(f, x).subs(op))  # = -b
    ts = LF / (P * C)
    gq = FS / (QEQ * (2 * W + 1))
    sensor = gq * (1 + S * W * ts)
    lag_tf = 1 / (1 + S * ts) if lag == "first-order" else sp.Integer(1)
    extra_delay = ts / 2 if lag == "zoh" else sp.Integer(0)
    plant = (N / S) * f_x / (S - f_r)
    rational = sp.simplify(-plant * sensor * lag_tf)
    num, den = sp.fraction(sp.factor(rational))
    num_c = sp.Poly(sp.expand(num), S).all_coeffs()
    den_c = sp.Poly(sp.expand(den), S).all_coeffs()
    return {
        "rational": rational,
        "loop": rational * sp.exp(-S * (TAU + extra_delay)),
        "a": -f_r,
        "b": -f_x,
        "K": sp.simplify(-f_x * N * gq),
        "Ts": ts,
        "extra_delay": extra_delay,
        "num_f": sp.lambdify(_PARAM_SYMBOLS, num_c, "numpy"),
        "den_f": sp.lambdify(_PARAM_SYMBOLS, den_c, "numpy"),
        "delay_f": sp.lambdify((*_PARAM_SYMBOLS, TAU), TAU + extra_delay, "numpy"),
    }


# reduced symbols: L(s) = K (1 + s*T_d) / (s (s + a)) * lag(s) * exp(-s*tau_L)
K_, A_, TD_, T_, TAUL_ = sp.symbols("K a T_d T tau_L", positive=True)


@functools.cache
def _reduced(lag: str) -> dict[str, Any]:
    """Reduced form of the loop, checked against the derivation."""
    d = _derive(lag)
    lag_tf = 1 / (1 + S * T_) if lag == "first-order" else sp.Integer(1)
    reduced = K_ * (1 + S * TD_) / (S * (S + A_)) * lag_tf
    definitions = {
        K_: d["K"],
        A_: d["a"],
        TD_: W * d["Ts"],
        T_: d["Ts"],
        TAUL_: TAU + d["extra_delay"],
    }
    # the derived loop must have exactly this structure
    assert sp.cancel(sp.together(reduced.subs(definitions) - d["rational"])) == 0
    return {"rational": reduced, "definitions": definitions}


@functools.cache
def _closed_form(lag: str) -> dict[str, Any]:
    """Crossover and margins in closed form (lag 'none' / 'zoh'), reduced symbols."""
    u = sp.Symbol("u", positive=True)  # u = w^2
    # |K(1 + j w T_d)|^2 = |j w (j w + a)|^2
    quad = sp.Poly(u * (u + A_**2) - K_**2 * (1 + u * TD_**2), u)
    _, b, c = quad.all_coeffs()  # u^2 + b u + c with c = -K^2 < 0
    # product of the roots is c < 0: exactly one positive root, the "+" one
    u_pos = (-b + sp.sqrt(b**2 - 4 * c)) / 2
    assert sp.simplify(quad.as_expr().subs(u, u_pos)) == 0
    wc = sp.sqrt(u_pos)
    pm_free = sp.pi / 2 + sp.atan(wc * TD_) - sp.atan(wc / A_)
    return {
        "crossover": wc,
        "phase_margin": pm_free - wc * TAUL_,
        "delay_margin": pm_free / wc - TAUL_,
        "critical_loop_delay": pm_free / wc,
    }


def _crossover_equation(lag: str):
    """|num(jw)|^2 - |den(jw)|^2 = 0 as a polynomial in u = w^2 (reduced symbols)."""
    u = sp.Symbol("u", positive=True)
    lag_mag2 = (1 + u * T_**2) if lag == "first-order" else 1
    return sp.Eq(K_**2 * (1 + u * TD_**2) - u * (u + A_**2) * lag_mag2, 0), u


@dataclass(frozen=True)
class FOPDTModel(LoopModel):
    """FOPDT (PD sensor + lag + delay) linear model of the QCN loop.

    Parameters
    ----------
    params : QCNParams
        QCN parameters (qeq, w, gd, fb_bits, frame_size, bc_limit, line_rate ...).
    rtt : float or str
        Loop delay CP -> RP -> CP (s, in [``params.cp_latency``, ``models.max_rtt``]: it
        contains the CP latency; unit strings accepted).
    n_flows : int
        Number of flows N >= 1 sharing the congestion point (at most ``models.max_flows``).
    capacity : float or str, optional
        CP service rate (bit/s); ``None`` -> ``params.line_rate``.
    lag : {"first-order", "zoh", "none"}
        Form of the sampling lag (module docstring, step 4).
    ps : float, optional
        Sampling probability in (0, 1]; ``None`` -> ``params.ps`` (table
        sampling: its first entry, the one in use near the set point).
    """

    params: QCNParams = dataclasses.field(default_factory=QCNParams)
    rtt: float = 100e-6
    n_flows: int = 10
    capacity: float | None = None
    lag: str = "first-order"
    ps: float | None = None

    def __post_init__(self) -> None:
        for f in ("rtt", "n_flows", "capacity", "ps"):  # numpy scalars -> Python
            if isinstance(getattr(self, f), np.generic):
                object.__setattr__(self, f, getattr(self, f).item())
        if not isinstance(self.params, QCNParams):
            raise ValueError("params: must be a QCNParams instance")
        rtt = parse_time(self.rtt, "rtt")
        rtt_max = config.defaults["models.max_rtt"]
        if not (0 <= rtt <= rtt_max):
            raise ValueError(f"rtt: must be in [0, {rtt_max:g}] s (models.max_rtt), "
                             f"got {self.rtt!r}")  # fmt: skip
        check_rtt_floor(self, rtt)
        n = parse_number(self.n_flows, "n_flows")
        n_max = config.defaults["models.max_flows"]
        if not (1 <= n <= n_max) or n != int(n):
            raise ValueError(f"n_flows: must be an integer in [1, {n_max:g}] "
                             f"(models.max_flows), got {self.n_flows!r}")  # fmt: skip
        cap = self.params.line_rate if self.capacity is None else self.capacity
        cap = parse_rate(cap, "capacity")
        if not np.isfinite(cap) or cap <= 0:
            raise ValueError(f"capacity: must be in (0, inf) bit/s, got {self.capacity!r}")
        ps = self.params.ps if self.ps is None else parse_number(self.ps, "ps")
        if not (0 < ps <= 1):
            raise ValueError(f"ps: must be in (0, 1], got {self.ps!r}")
        if self.lag not in LAGS:
            raise unknown_name("lag", "value", self.lag, LAGS, sort=False)
        object.__setattr__(self, "rtt", float(rtt))
        object.__setattr__(self, "n_flows", int(n))
        object.__setattr__(self, "capacity", float(cap))
        object.__setattr__(self, "ps", float(ps))

    # ---------------------------------------------------------------- protocol
    @property
    def name(self) -> str:
        """Short label."""
        return f"FOPDT[{self.lag}]"

    @property
    def congested(self) -> bool:
        """Whether N flows at the line rate exceed the capacity. Without congestion the
        queue stays empty, no CNM is sent and the loop is open (module docstring): the fixed
        point is the line rate and the loop gain is zero (infinite margins)."""
        return port_congested(self.n_flows, self.params.line_rate, self.capacity)

    def _check_held(self) -> None:
        """Raise :class:`Overloaded` where the fair share C/N is below MinRate (module
        docstring): the flows cannot slow down enough to hold the port."""
        floor = float(self.params.min_rate)
        share = self.capacity / self.n_flows
        if self.congested and share < floor * (1.0 - 1e-12):
            raise Overloaded(
                f"no equilibrium: the fair share C/N = {share:.4g} bit/s is below MinRate "
                f"({floor:.4g} bit/s), the slowest a reaction point sends, so {self.n_flows} "
                f"flows offer at least {self.n_flows * floor:.4g} bit/s to a {self.capacity:.4g}"
                " bit/s port and it stays overloaded: fewer flows or a lower min_rate hold it",
                floor / share,
            )

    @property
    def _arrival_rate(self) -> float:
        """Offered load at the port, bit/s: ``C`` when congested, else ``N`` line rates."""
        return min(self.capacity, self.n_flows * self.params.line_rate)

    @property
    def extra_delay(self) -> float:
        """Loop delay beyond the RTT, s: ``Ts/2`` for ``lag="zoh"``, else 0."""
        d = _derive(self.lag)
        v = self.values()
        return float(d["delay_f"](*[v[sym] for sym in _PARAM_SYMBOLS], 0.0))

    def values(self) -> dict[sp.Symbol, float]:
        """Numeric values of the symbols of :meth:`symbolic` (bytes, bytes/s, s)."""
        p = self.params
        return {
            C: self.capacity / 8.0,
            N: float(self.n_flows),
            P: self.ps,
            GD: p.gd,
            LF: float(p.frame_size),
            QEQ: p.qeq,
            W: p.w,
            FS: float(p.fb_full_scale),
            B: p.bc_limit / p.frame_size,
            TAU: self.rtt,
        }

    def symbolic(self) -> sp.Expr:
        """Open loop ``L(s)`` as a SymPy expression in ``s`` and the model symbols."""
        return _derive(self.lag)["loop"]

    def loop(self):
        """Linearised open loop with numbers substituted: a :class:`DelayedLoop`; without
        congestion (:attr:`congested`) the open loop ``L = 0``, a
        :class:`~qcnmodel.analysis.freqloop.FrequencyLoop` with ``G = 0``."""
        if not self.congested:
            from qcnmodel.analysis.freqloop import FrequencyLoop

            name = f"{self.name} N={self.n_flows} (no congestion: open loop)"
            return FrequencyLoop(zero_gain, self.rtt + self.extra_delay, name)
        self._check_held()
        d = _derive(self.lag)
        v = self.values()
        args = [v[sym] for sym in _PARAM_SYMBOLS]
        with np.errstate(all="ignore"):
            num = np.asarray(d["num_f"](*args), float)
            den = np.asarray(d["den_f"](*args), float)
            delay = float(d["delay_f"](*args, v[TAU]))
            num, den = num / den[0], den / den[0]
        if not (np.all(np.isfinite(num)) and np.all(np.isfinite(den)) and np.isfinite(delay)):
            p = self.params
            raise ValueError(
                f"no finite loop: the FOPDT loop's coefficients overflow at qeq = {p.qeq:g} B, "
                f"w = {p.w:g}, gd = {p.gd:g}, ps = {self.ps:g}, N = {self.n_flows}, "
                f"C = {self.capacity:g} bit/s (a set point or gain this far from the usual "
                "ones leaves no loop to analyse)"
            )
        return DelayedLoop(num, den, delay, name=self.name)

    def gains(self) -> dict[str, float]:
        """Numeric K (1/s^2), a (1/s), b (bytes/s^2), Ts (s) and the lead time w*Ts (s).

        Without congestion (:attr:`congested`) the loop is open: ``K``, ``a`` and ``b`` are
        0 and ``Ts`` is the sampling interval at the flows' offered load.
        """
        if not self.congested:
            ts = self.params.frame_size / (self.ps * self._arrival_rate / 8.0)
            return {"K": 0.0, "a": 0.0, "b": 0.0, "Ts": ts, "lead_time": self.params.w * ts}
        self._check_held()
        d = _derive(self.lag)
        v = self.values()
        out = {k: float(d[k].subs(v)) for k in ("K", "a", "b", "Ts")}
        out["lead_time"] = self.params.w * out["Ts"]
        return out

    def fixed_point(self) -> dict[str, float]:
        """Operating point: queue (bytes), per-flow and target rates (bit/s), feedback.

        Congested, the queue sits at ``Qeq`` and each flow at ``C/N``; without congestion
        (:attr:`congested`) the queue is empty, each flow at the line rate and the feedback
        ``Fb = Qeq`` sends no CNM (``qfb`` 0). ``sampling_interval`` is the mean time between
        samples at the offered load (s).
        """
        p = self.params
        interval = p.frame_size * 8 / (self.ps * self._arrival_rate)
        if not self.congested:
            return {"q": 0.0, "rate": p.line_rate, "target_rate": p.line_rate,
                    "fb": float(p.qeq), "qfb": 0.0, "sampling_interval": interval}  # fmt: skip
        self._check_held()
        rate = self.capacity / self.n_flows
        return {
            "q": float(p.qeq),
            "rate": rate,
            "target_rate": rate,
            "fb": 0.0,
            "qfb": 0.0,
            "sampling_interval": interval,
        }

    # ------------------------------------------------------------ closed forms
    def closed_form(self) -> dict[str, sp.Expr]:
        """Crossover (rad/s), phase margin (rad), delay margin (s) in closed form.

        Expressions are in the reduced symbols ``K, a, T_d, tau_L`` of
        ``L = K (1 + s T_d)/(s (s + a)) exp(-s tau_L)`` (``tau_L`` = rtt, plus
        ``Ts/2`` for the ZOH); :meth:`definitions` maps them to the physical
        symbols.  ``critical_loop_delay`` is the ``tau_L`` at which PM = 0.

        Raises
        ------
        NotImplementedError
            For ``lag="first-order"`` (crossover is a cubic in ``w^2``: see
            :meth:`crossover_equation`).
        """
        if self.lag == "first-order":
            raise NotImplementedError("closed form only for lag='none' or 'zoh'")
        return _closed_form(self.lag)

    def definitions(self) -> dict[sp.Symbol, sp.Expr]:
        """Reduced symbols (K, a, T_d, T, tau_L) in terms of the physical ones."""
        return _reduced(self.lag)["definitions"]

    def reduced_values(self) -> dict[sp.Symbol, float]:
        """Numeric values of the reduced symbols at this operating point."""
        v = self.values()
        return {k: float(e.subs(v)) for k, e in self.definitions().items()}

    def closed_form_values(self) -> dict[str, float]:
        """:meth:`closed_form` evaluated at this operating point, plus ``critical_rtt``.

        Without congestion (:attr:`congested`) the open loop has no crossover: ``crossover``
        NaN and the margins, critical loop delay and critical RTT infinite (as
        :func:`~qcnmodel.analysis.margins.margins` gives them).
        """
        if not self.congested:
            self.closed_form()  # the first-order lag has none: NotImplementedError
            return {"crossover": float("nan"), "phase_margin": float("inf"),
                    "delay_margin": float("inf"), "critical_loop_delay": float("inf"),
                    "critical_rtt": float("inf")}  # fmt: skip
        v = self.reduced_values()
        out = {k: float(e.subs(v)) for k, e in self.closed_form().items()}
        out["critical_rtt"] = out["critical_loop_delay"] - (v[TAUL_] - self.rtt)
        return out

    def crossover_equation(self):
        """``(Eq(..., 0), u)``: crossover condition ``|L(jw)| = 1`` as a polynomial in
        ``u = w^2``, in the reduced symbols (cubic for the first-order lag)."""
        return _crossover_equation(self.lag)

    # ------------------------------------------------------------- simulation
    def simulate(self, duration: float | str | None = None, pade_order: int = 10):
        """Linear closed-loop step response (the FOPDT model is linear).

        Parameters
        ----------
        duration : float or str, optional
            End time (s); default 15 crossover periods.
        pade_order : int
            Pade order for the delay (time domain only).

        Returns
        -------
        xarray.Dataset
            Variable ``y`` (response of ``L/(1+L)`` to a unit reference step)
            over coordinate ``time`` (s).
        """
        import xarray as xr

        t_end = None if duration is None else parse_time(duration, "duration")
        if t_end is not None and not (math.isfinite(t_end) and t_end > 0):
            raise ValueError(f"duration: the end time must be finite and > 0 s, got {duration!r}")
        r = self.loop().step_response(T=t_end, pade_order=pade_order)
        return xr.Dataset(
            {"y": ("time", r.output, {"units": "1", "long_name": "closed-loop step response"})},
            coords={"time": ("time", r.time, {"units": "s"})},
            attrs={"model": self.name, "pade_order": pade_order, "rtt": self.rtt},
        )
