"""Open loops with an exact transport delay: ``L(s) = num(s)/den(s) * exp(-s*delay)``.

python-control 0.10 has no delay element.  :class:`DelayedLoop` keeps the delay
exact for everything in the frequency domain (values, FRD, margins, Nyquist)
and uses a Pade approximant only for time-domain simulation of the linear
loop (:meth:`DelayedLoop.step_response`), where the order must be chosen high
enough that the result does not move.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import control
import numpy as np

from qcnmodel import config
from qcnmodel.analysis._args import time_or_none
from qcnmodel.analysis._rational import Rational
from qcnmodel.analysis.margins import Margins, margins, nyquist_count

__all__ = ["DelayedLoop", "StepResponse"]


def control_name(name: str | None) -> str | None:
    """A loop's name as python-control accepts it (no '.'; decimal points become ',')."""
    return name.replace(".", ",") if name else None


def _as_poly(x, field: str) -> np.ndarray:
    if isinstance(x, control.LTI):
        raise ValueError(f"{field}: expected polynomial coefficients, got a python-control "
                         f"{type(x).__name__}; use DelayedLoop.from_tf(sys, delay)")  # fmt: skip
    a = np.atleast_1d(np.asarray(x, dtype=float))
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{field} must be a non-empty 1-D coefficient array")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{field} must contain finite numbers")
    a = np.trim_zeros(a, "f")
    return a if a.size else np.zeros(1)


def _scale_poly(p: np.ndarray, w0: float) -> np.ndarray:
    """Coefficients of p(w0*x) in x (highest power first)."""
    n = len(p) - 1
    return p * w0 ** np.arange(n, -1, -1, dtype=float)


def _pade_ss(tau: float, order: int) -> control.StateSpace:
    """Pade approximant of ``exp(-s*tau)`` as a series of real all-pass sections.

    The [n/n] approximant is all-pass: its zeros mirror its poles.  Poles come
    from the order-n denominator at unit delay (scaled by ``1/tau``) and are
    realised as first/second-order sections with unit DC gain, which stays
    well conditioned where the expanded polynomial (coefficients spanning
    ``tau**n/n!``) does not.
    """
    _, den = control.pade(1.0, order)
    poles = np.roots(den) / tau
    sys = control.ss([], [], [], [[1.0]])
    for p in poles[poles.imag >= 0]:
        if abs(p.imag) <= 1e-12 * abs(p):
            sec = control.tf([-1.0, -p.real], [1.0, -p.real])  # -(s + p)/(s - p), DC 1
        else:
            a, b = -2 * p.real, abs(p) ** 2
            sec = control.tf([1.0, -a, b], [1.0, a, b])  # zeros mirror poles
        sys = control.series(sys, control.ss(sec))
    return sys


@dataclass(frozen=True)
class StepResponse:
    """Closed-loop unit step response ``y/r`` of ``L/(1+L)``.

    Attributes
    ----------
    time : ndarray
        Time points (s).
    output : ndarray
        Output ``y(t)`` for a unit step in the reference.
    name : str
        Name of the loop.
    pade_order : int
        Order of the Pade approximant of the delay.
    """

    time: np.ndarray
    output: np.ndarray
    name: str = ""
    pade_order: int = 0


@dataclass(frozen=True, eq=False)
class DelayedLoop:
    """Rational loop times an exact delay.

    Parameters
    ----------
    num, den : array_like
        Polynomial coefficients of numerator and denominator, highest power
        first (converted to 1-D float arrays, leading zeros dropped).
    delay : float
        Transport delay (s), >= 0.
    name : str
        Label used in plots.
    """

    num: np.ndarray
    den: np.ndarray
    delay: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        num = _as_poly(self.num, "num")
        den = _as_poly(self.den, "den")
        if not np.any(den):
            raise ValueError("den must not be identically zero")
        if not np.any(num):
            raise ValueError("num: the loop gain is zero (an open loop, whose margins are "
                             "infinite): a DelayedLoop needs a non-zero numerator")  # fmt: skip
        try:
            delay = float(time_or_none(self.delay, "delay"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"delay: expected a time (s, or a string such as '1ms'), got "
                             f"{self.delay!r} ({exc})") from None  # fmt: skip
        if not np.isfinite(delay) or delay < 0:
            raise ValueError(f"delay must be finite and >= 0 (got {self.delay!r})")
        if len(num) > len(den):
            raise ValueError("loop must be proper: len(num) <= len(den)")
        object.__setattr__(self, "num", num)
        object.__setattr__(self, "den", den)
        object.__setattr__(self, "delay", delay)
        object.__setattr__(self, "name", str(self.name))

    @classmethod
    def from_tf(cls, sys, delay=0.0, name: str | None = None) -> DelayedLoop:
        """The loop ``sys * exp(-s*delay)`` of a SISO python-control transfer function.

        Parameters
        ----------
        sys : control.TransferFunction or control.StateSpace
            Continuous-time, one input and one output.
        delay : float or str
            Transport delay (s, or a string such as ``"1ms"``).
        name : str, optional
            Label (default the system's name).

        Raises
        ------
        ValueError
            A discrete-time or MIMO system.
        """
        if not isinstance(sys, control.LTI):
            raise ValueError(f"sys: expected a python-control system, got {type(sys).__name__}")
        if sys.ninputs != 1 or sys.noutputs != 1 or not sys.isctime(strict=False) or sys.dt:
            raise ValueError("sys: must be a continuous-time system with one input and one output")
        tf = control.tf(sys)
        return cls(np.asarray(tf.num[0][0], float), np.asarray(tf.den[0][0], float), delay,
                   sys.name if name is None else name)  # fmt: skip

    # ------------------------------------------------------------------ values
    def __call__(self, s):
        """Exact value ``num(s)/den(s)*exp(-s*delay)`` (complex, array-aware)."""
        s = np.asarray(s, dtype=complex)
        return np.polyval(self.num, s) / np.polyval(self.den, s) * np.exp(-s * self.delay)

    def rational(self) -> control.TransferFunction:
        """Delay-free rational part as a python-control TransferFunction.

        Returns
        -------
        control.TransferFunction
            ``num(s)/den(s)``, named after the loop ('.' in the name becomes ',').
        """
        return control.tf(self.num, self.den, name=control_name(self.name))

    def with_delay(self, tau: float) -> DelayedLoop:
        """Same rational part with delay ``tau`` (s).

        Parameters
        ----------
        tau : float or str
            The new delay, s, finite and >= 0 (unit strings such as ``"50us"`` accepted).

        Returns
        -------
        DelayedLoop
            A new loop with the same ``num``, ``den`` and ``name``.

        Raises
        ------
        ValueError
            For a delay that is not a time, negative or not finite.
        """
        return dataclasses.replace(self, delay=tau)

    def default_omega(self, per_decade: int | None = None) -> np.ndarray:
        """Log-spaced frequencies (rad/s) spanning poles, zeros and crossovers.

        Parameters
        ----------
        per_decade : int, optional
            Points per decade (default
            ``config.defaults["analysis.frequency_points_per_decade"]``); raised where the
            delay needs more.

        Returns
        -------
        numpy.ndarray
            Two decades beyond the extreme corner frequencies, and dense enough that the delay
            rotates the phase by less than 22.5 deg per step up to the top frequency (which,
            with a delay, is limited to ``max(10*corner, 200/delay)``); at most 20001 points.
        """
        c = Rational(self.num, self.den).corners()
        lo, hi = c.min() / 100, c.max() * 100
        if self.delay > 0:
            hi = min(hi, max(c.max() * 10, 200 / self.delay))
        decades = np.log10(hi / lo)
        if per_decade is None:
            per_decade = config.defaults["analysis.frequency_points_per_decade"]
        n = decades * per_decade
        if self.delay > 0:  # step in w*delay below pi/8 at the top frequency
            n = max(n, decades * np.log(10) * hi * self.delay / (np.pi / 8))
        return np.logspace(np.log10(lo), np.log10(hi), int(min(np.ceil(n), 20000)) + 1)

    def frequency_response(self, omega=None) -> control.FrequencyResponseData:
        """FRD built from exact values ``L(jw)`` (delay included).

        Parameters
        ----------
        omega : array_like, optional
            Frequencies (rad/s); default :meth:`default_omega`.

        Returns
        -------
        control.FrequencyResponseData
            The values ``L(jw)`` at ``omega``, named after the loop.
        """
        w = self.default_omega() if omega is None else _grid(omega, "omega", "rad/s")
        return control.frd(self(1j * w), w, name=control_name(self.name))

    # ----------------------------------------------------------------- margins
    def margins(self) -> Margins:
        """Stability margins with the exact delay (see :mod:`qcnmodel.analysis.margins`).

        Returns
        -------
        Margins
            Scalar gain and phase margins, crossovers, delay margin, critical delay (s) and
            closed-loop stability (:func:`qcnmodel.analysis.margins.margins`).
        """
        return margins(self)

    def nyquist_count(self):
        """Encirclement count of -1 (see :func:`qcnmodel.analysis.margins.nyquist_count`).

        Returns
        -------
        NyquistCount
            Clockwise encirclements ``N``, open-loop right-half-plane poles ``P`` and
            ``Z = N + P`` unstable closed-loop roots (``.stable`` when ``Z == 0``).
        """
        return nyquist_count(self)

    # ------------------------------------------------------------- time domain
    def pade(self, order: int = 10) -> control.TransferFunction:
        """Rational part times a Pade approximant of the delay (time domain only).

        Parameters
        ----------
        order : int
            Order of the Pade approximant (default 10); unused without a delay.

        Returns
        -------
        control.TransferFunction
            ``num/den`` times the ``[order/order]`` approximant of ``exp(-s*delay)``.

        Notes
        -----
        The expanded approximant is ill-conditioned for high orders at small delays;
        :meth:`step_response` scales time and realises it in all-pass sections instead.
        """
        order = _pade_order(order, "order")
        num_d, den_d = control.pade(self.delay, order) if self.delay > 0 else ([1], [1])
        return self.rational() * control.tf(num_d, den_d)

    def _time_scale(self) -> float:
        m = margins(self) if len(self.den) > 1 else None
        if m is not None and np.isfinite(m.crossover_rad_s):
            return float(m.crossover_rad_s)
        return float(Rational(self.num, self.den).corners().min())

    def step_response(self, T=None, pade_order: int | None = None) -> StepResponse:
        """Closed-loop unit step response of ``L/(1+L)`` (unity negative feedback).

        Parameters
        ----------
        T : array_like or float, optional
            Time points (s), or the end time; default ``analysis.step_periods`` (15)
            periods of the crossover frequency; ``analysis.step_points`` (3000) points
            (:mod:`qcnmodel.config`).
        pade_order : int, optional
            Order of the Pade approximant of the delay (default ``analysis.pade_order``, 10).

        Returns
        -------
        StepResponse
            The time points (s), the output ``y(t)``, the loop's name and the Pade order.

        Notes
        -----
        The loop is simulated in time scaled by the crossover frequency ``w0``
        (``s = w0*x``) so that the coefficients of the Pade approximant of the
        scaled delay ``w0*delay`` stay O(1) (orders 10+ of ``exp(-s*tau)`` with
        tau ~ 1e-4 s are otherwise numerically singular).
        """
        cfg = config.defaults
        pade_order = _pade_order(cfg["analysis.pade_order"] if pade_order is None
                                 else pade_order, "pade_order")  # fmt: skip
        points = cfg["analysis.step_points"]
        if T is not None and (np.ndim(T) == 0 or isinstance(T, str)):
            end = time_or_none(T, "T")
            if not end > 0:
                raise ValueError(f"T: the end time must be > 0 s, got {T!r}")
        elif T is not None:
            t = _grid(T, "T", "s")
            if t.size < 2 or np.any(np.diff(t) <= 0):
                raise ValueError("T: time points must increase (at least two)")
        w0 = self._time_scale()
        if T is None:
            t = np.linspace(0.0, cfg["analysis.step_periods"] * 2 * np.pi / w0, points)
        elif np.ndim(T) == 0 or isinstance(T, str):
            t = np.linspace(0.0, end, points)
        g = control.ss(control.tf(_scale_poly(self.num, w0), _scale_poly(self.den, w0)))
        if self.delay > 0:
            g = control.series(_pade_ss(self.delay * w0, int(pade_order)), g)
        closed = control.feedback(g, 1)
        resp = control.step_response(closed, t * w0)
        y = np.asarray(resp.outputs).reshape(-1)
        return StepResponse(time=t, output=y, name=self.name, pade_order=int(pade_order))

    # ---------------------------------------------------------------- plotting
    def plot_bode(self, ax=None, **kw):
        """Bode plot with the exact delay (see :func:`qcnmodel.analysis.plot.plot_bode`).

        Parameters
        ----------
        ax : pair of matplotlib Axes, optional
            (magnitude, phase) axes; a new figure if omitted.
        **kw
            ``omega`` (frequencies, rad/s; default :meth:`default_omega`) and
            ``show_margins`` (bool, default True: mark the gain and phase crossovers and
            give the margins in the title).

        Returns
        -------
        matplotlib.figure.Figure
            Magnitude (dB) and the exact continuous phase (deg) against frequency (rad/s).
        """
        from qcnmodel.analysis.plot import plot_bode

        return plot_bode(self, ax=ax, **kw)

    def plot_nyquist(self, ax=None, **kw):
        """Nyquist plot (see :func:`qcnmodel.analysis.plot.plot_nyquist`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            A new figure if omitted.
        **kw
            ``radius`` (float, default 3): half-width of the view around the origin.

        Returns
        -------
        matplotlib.figure.Figure
            ``L`` along the indented contour and its mirror, -1, the unit circle and the
            encirclement count (stable or not) in the title.
        """
        from qcnmodel.analysis.plot import plot_nyquist

        return plot_nyquist(self, ax=ax, **kw)

    def __repr__(self) -> str:
        return (
            f"DelayedLoop(num={self.num.tolist()}, den={self.den.tolist()}, "
            f"delay={self.delay!r}, name={self.name!r})"
        )


#: the highest Pade order: python-control's approximant divides by zero from about 60
MAX_PADE_ORDER = 40


def _pade_order(order, field: str) -> int:
    """A Pade order: a whole number in [0, :data:`MAX_PADE_ORDER`], else a ValueError."""
    ok = isinstance(order, (int, np.integer, float)) and not isinstance(order, bool)
    if not (ok and float(order).is_integer() and 0 <= order <= MAX_PADE_ORDER):
        raise ValueError(f"{field}: a Pade order must be a whole number in [0, "
                         f"{MAX_PADE_ORDER}], got {order!r}")  # fmt: skip
    return int(order)


def _grid(values, field: str, unit: str) -> np.ndarray:
    """Finite values >= 0 (frequencies or times), at most ``analysis.max_delays`` of them."""
    try:
        x = np.asarray(values, float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{field}: expected numbers in {unit}, got {values!r}") from None
    if x.size == 0 or x.size > config.defaults["analysis.max_delays"]:
        raise ValueError(f"{field}: expected 1 to {config.defaults['analysis.max_delays']} "
                         f"values (analysis.max_delays), got {x.size}")  # fmt: skip
    if not np.all(np.isfinite(x) & (x >= 0)):
        raise ValueError(f"{field}: values must be finite and >= 0 {unit}")
    return x
