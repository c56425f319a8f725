"""Shared pieces of the loop models: operating-point checks, ``replace()`` routing, loop delay.

Every model (FOPDT, QCN/ECM/DCQCN fluid) is a frozen dataclass with a ``params`` field and
operating-point fields (``rtt``, ``n_flows``, and for some ``capacity`` and ``ps``). These
helpers validate those fields (unit strings accepted, errors naming the field and its range)
and route ``replace(**changes)`` between the model's own fields and ``params.replace``.
:class:`LoopModel` gives the single-RTT models ``replace``, ``extra_delay`` (the part of the
loop delay that is not the RTT, 0 unless the model adds a lag) and ``loop_delay``.

The fluid models' ``simulate()`` share one scaffold: :func:`initial_state` (the ``x0``
dictionary in SI units -> the state vector in model units), :func:`integrate` (unit strings
for ``duration``, ``dt`` and ``record_dt``, the output grid, the integrator of ``method``) and
:func:`trajectory` (the xarray Dataset). With the compiled integrator the step is reduced if
needed to divide ``record_dt`` (:func:`~qcnmodel.analysis.dde.step_for_record`), so every
method records on the same grid ``k * record_dt``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

import numpy as np

from qcnmodel import config
from qcnmodel._errors import unknown_name
from qcnmodel.units import parse_number, parse_rate, parse_time

__all__ = [
    "LoopModel",
    "NoStandingQueue",
    "NotCongested",
    "NotModelled",
    "Overloaded",
    "OPERATING_POINT",
    "check_operating_point",
    "check_rtt_floor",
    "hotspot_spec",
    "initial_state",
    "port_congested",
    "zero_gain",
    "time_grid",
    "integrate",
    "replace_model",
    "trajectory",
]

#: the operating-point fields a model may have (the rest are parameters or model options)
OPERATING_POINT = ("rtt", "n_flows", "capacity", "ps")


class NoStandingQueue(ValueError):
    """A model's mean field balances only below an empty queue: its feedback cuts the flows
    below their fair share even with the queue empty, so no equilibrium with a standing queue
    exists (the queue empties, or holds well below its set point, and the port can idle).
    It is a ValueError, the model's "no answer here": ``check`` names the flow count and
    the parameters, and its fix search does not recommend such a value."""


class NotCongested(ValueError):
    """No equilibrium because the port never congests: the flows at their line rate cannot
    fill it, so its queue stays empty and no feedback is sent. A ValueError for a model with
    no answer there; a surface reads it as the answer "not congested" (stable at any RTT)."""


class NotModelled(ValueError):
    """A valid parameter set that a model configuration does not follow (e.g. drift, or
    more counter stages than the packet-fidelity model tabulates): a ValueError naming the
    field, which the surfaces may answer with another configuration of the same model (the
    published equations) and say so."""


class Overloaded(ValueError):
    """No equilibrium because the port stays overloaded: even the strongest feedback the
    protocol sends leaves the flows above their fair share C/N, so the congested queue grows
    until frames are dropped or paused. It is a ValueError (the model has no operating point
    there) that a check reads as a verdict: the parameter set cannot hold that many flows
    (:func:`qcnmodel.analysis.overload.held_flows` finds how many it holds). ``ratio`` is
    the flows' stationary rate under that feedback over C/N (above 1)."""

    def __init__(self, message: str, ratio: float = float("nan")):
        super().__init__(message)
        self.ratio = float(ratio)


def check_operating_point(model, capacity: bool = False, ps: bool = False) -> None:
    """Validate and normalise ``model.rtt``, ``model.n_flows`` (and ``capacity``, ``ps``).

    ``rtt`` must be in (0, ``models.max_rtt``] s and at least the parameter set's
    ``cp_latency`` (:func:`check_rtt_floor`), ``n_flows`` a whole number in [1,
    ``models.max_flows``], ``capacity`` (when not
    None) in (0, inf) bit/s and ``ps`` (when not None) in (0, 1]. Values are parsed with the
    unit parsers and written back on the frozen dataclass.
    """
    rtt = parse_time(model.rtt, "rtt")
    rtt_max = config.defaults["models.max_rtt"]
    if not (0 < rtt <= rtt_max):
        raise ValueError(f"rtt: must be in (0, {rtt_max:g}] s (models.max_rtt), got {model.rtt!r}")
    check_rtt_floor(model, rtt)
    object.__setattr__(model, "rtt", rtt)
    n = model.n_flows
    try:
        whole = not isinstance(n, bool) and float(n).is_integer() and n >= 1
    except (TypeError, ValueError, OverflowError):
        whole = False
    n_max = config.defaults["models.max_flows"]
    if not whole or n > n_max:
        raise ValueError(f"n_flows: must be an integer in [1, {n_max}] (models.max_flows), "
                         f"got {n!r}")  # fmt: skip
    object.__setattr__(model, "n_flows", int(n))
    if capacity and model.capacity is not None:
        cap = parse_rate(model.capacity, "capacity")
        if not (cap > 0 and math.isfinite(cap)):
            raise ValueError(f"capacity: must be in (0, inf) bit/s, got {model.capacity!r}")
        object.__setattr__(model, "capacity", cap)
    if ps and model.ps is not None:
        p = parse_number(model.ps, "ps")
        if not (0 < p <= 1):
            raise ValueError(f"ps: must be in (0, 1], got {model.ps!r}")
        object.__setattr__(model, "ps", float(p))


def port_congested(n_flows: int, line_rate: float, capacity: float) -> bool:
    """Whether ``n_flows`` flows at the line rate (bit/s) exceed the port's ``capacity``
    (bit/s). Otherwise the port never congests: its queue stays empty, no feedback is sent,
    the loop is open (zero gain, infinite margins) and every flow runs at the line rate."""
    return n_flows * line_rate > capacity * (1.0 + 1e-12)


def zero_gain(s):
    """``G(s) = 0``: the loop of a port that never congests (:func:`port_congested`), for a
    :class:`~qcnmodel.analysis.freqloop.FrequencyLoop` (module-level: picklable)."""
    return np.zeros(np.shape(s), complex)


def check_rtt_floor(model, rtt: float) -> None:
    """Refuse an RTT (s) below the CP latency of ``model.params`` (``cp_latency``; 0 for a
    parameter set without one). The RTT is the whole loop delay CP -> RP -> CP, which
    contains the CP's latency (docs/validation.md: ``tau = 2 (d + L_sw) + 8 F / R_line +
    cp_latency``), so a shorter one is no operating point of that parameter set."""
    lat = float(getattr(getattr(model, "params", None), "cp_latency", 0.0) or 0.0)
    if rtt >= lat:
        return
    rtt_max = config.defaults["models.max_rtt"]
    if lat > rtt_max:
        raise ValueError(f"cp_latency: {lat:g} s exceeds the largest RTT a model takes, "
                         f"{rtt_max:g} s (models.max_rtt); the loop delay contains it")  # fmt: skip
    raise ValueError(f"rtt: must be in [{lat:g}, {rtt_max:g}] s: the loop delay contains the "
                     f"CP latency (cp_latency = {lat:g} s), got {rtt:g} s")  # fmt: skip


def replace_model(model, changes: dict):
    """A copy of ``model``: its own fields directly, any other name via ``params.replace``."""
    own = {f.name for f in dataclasses.fields(model)}
    mine = {k: v for k, v in changes.items() if k in own}
    other = {k: v for k, v in changes.items() if k not in own}
    if other:
        mine["params"] = mine.get("params", model.params).replace(**other)
    return dataclasses.replace(model, **mine)


class LoopModel:
    """Mixin of the single-RTT loop models (frozen dataclasses with ``rtt`` and ``params``).

    ``loop()`` of such a model has the delay :attr:`loop_delay` = ``rtt`` + :attr:`extra_delay`
    and a rational part that does not depend on the RTT (the tests check both for every model
    of the registry), so its critical RTT is its critical loop delay minus
    :attr:`extra_delay` (:func:`qcnmodel.analysis.margins.critical_rtt`).
    """

    __slots__ = ()

    @property
    def extra_delay(self) -> float:
        """Loop delay beyond the RTT, s (none here; models with a lag override it)."""
        return 0.0

    @property
    def loop_delay(self) -> float:
        """Delay of the model's loop, s: ``rtt`` + :attr:`extra_delay`."""
        return self.rtt + self.extra_delay

    def replace(self, **changes):
        """New model with fields changed; names that are not model fields (e.g. ``w``, ``qeq``,
        ``gd``) are applied to ``params`` (unit strings accepted)."""
        return replace_model(self, changes)


# ---------------------------------------------------------------------------- simulate()
def hotspot_spec(spec, packet_bits: float) -> tuple[float, float, float]:
    """``(t_on, t_off, capacity)`` of a simulation's hotspot ``(t_on, t_off, capacity_bps)``:
    times in s and the CP capacity during ``[t_on, t_off)`` in packets/s (unit strings
    accepted)."""
    try:
        t_on, t_off, cap = spec
    except (TypeError, ValueError):
        raise ValueError(f"hotspot: expected (t_on, t_off, capacity), got {spec!r}") from None
    return (
        parse_time(t_on, "hotspot start"),
        parse_time(t_off, "hotspot end"),
        parse_rate(cap, "hotspot capacity") / packet_bits,
    )


def initial_state(x_star: np.ndarray, x0: Mapping | None, layout: Mapping) -> np.ndarray:
    """The initial state (and constant history) of a simulation, in model units.

    Parameters
    ----------
    x_star : numpy.ndarray
        The state used for every key ``x0`` does not give (the fixed point, or the model's
        fallback when it has none), in model units.
    x0 : mapping, optional
        ``key -> value`` in SI units (a scalar, or one value per flow or class).
    layout : mapping
        ``key -> (index or slice into the state, SI units per model unit)``.

    Raises
    ------
    ValueError
        For a key not in ``layout`` (naming it and the allowed keys).
    """
    x = np.array(x_star, dtype=float)
    x0 = dict(x0 or {})
    for key in x0:
        if key not in layout:
            raise unknown_name("x0", "key", key, layout, sort=False)
    for key, (where, scale) in layout.items():
        if key in x0:
            x[where] = np.broadcast_to(np.asarray(x0[key], float) / scale, np.shape(x[where]))
    return x


def integrate(
    rhs,
    x: np.ndarray,
    delays,
    p: np.ndarray,
    duration,
    *,
    method: str,
    dt=None,
    default_dt: float,
    record_dt=None,
    rtol: float | None,
    lower: np.ndarray,
    scale: np.ndarray,
    jitcdde: Callable | None = None,
):
    """Integrate a fluid model's delay-differential equations: the shared part of ``simulate``.

    Parameters
    ----------
    rhs : CompiledRHS
        The model's compiled right-hand side.
    x, delays, p, lower : array_like
        Initial state, delays (s), parameter vector and lower bounds of the state.
    scale : array_like
        Typical magnitude of the state (the fixed point): the reference integrator's
        absolute tolerance is ``rtol * max(|scale|, 1)``.
    duration : float or str
        Simulated time (s, unit strings accepted).
    method : {"compiled", "reference", "jitcdde"}
        Compiled fixed-step RK4, SciPy's adaptive DOP853 on the same rhs, or jitcdde on the
        symbolic rhs (only where the model passes ``jitcdde``).
    dt : float or str, optional
        Step of the compiled integrator (default ``default_dt``), reduced if needed to divide
        ``record_dt``.
    record_dt : float or str, optional
        Output interval (default ``duration / config.defaults["models.record_points"]``,
        2000 intervals).
    rtol : float, optional
        Relative (and scaled absolute) tolerance of the adaptive integrators (default
        ``config.defaults["models.reference_rtol"]``, 1e-8).
    jitcdde : callable, optional
        ``jitcdde(t_eval, rtol) -> DDEResult``: the model's jitcdde run.

    Returns
    -------
    DDEResult
    """
    from qcnmodel.analysis.dde import integrate_fixed, integrate_reference, step_for_record

    duration = _positive(parse_time(duration, "duration"), "duration")
    if record_dt is None:
        record_dt = duration / float(config.defaults["models.record_points"])
    if rtol is None:
        rtol = config.defaults["models.reference_rtol"]
    record_dt = _positive(parse_time(record_dt, "record_dt"), "record_dt")
    methods = ("compiled", "reference") + (("jitcdde",) if jitcdde is not None else ())
    if method not in methods:
        raise unknown_name("method", "method", method, methods, sort=False)
    if method == "compiled":
        dt = default_dt if dt is None else _positive(parse_time(dt, "dt"), "dt")
        dt, stride = step_for_record(dt, record_dt)
        return integrate_fixed(rhs, x, delays, p, duration, dt, lower=lower, stride=stride)
    t_eval = np.linspace(0.0, duration, int(round(duration / record_dt)) + 1)
    if method == "reference":
        atol = rtol * np.maximum(np.abs(scale), 1.0)
        return integrate_reference(rhs, x, delays, p, duration, rtol=rtol, atol=atol,
                                   t_eval=t_eval, lower=lower)  # fmt: skip
    return jitcdde(t_eval, rtol)


def _positive(value: float, field: str) -> float:
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{field}: must be in (0, inf) s, got {value!r}")
    return value


def trajectory(res, variables: Mapping, model, coords: Mapping | None = None, **attrs):
    """The xarray Dataset of a simulation: ``variables`` (name -> (dims, values[, attrs]))
    over ``time`` (s), attributes ``model`` (the class name) and ``attrs``."""
    import xarray as xr

    return xr.Dataset(
        dict(variables),
        coords={"time": ("time", res.t, {"units": "s"}), **(coords or {})},
        attrs={"model": type(model).__name__, **attrs},
    )


def time_grid(duration, dt, record_dt, default_dt: float) -> tuple[float, float, float, int]:
    """(duration, dt, record_dt, stride) of a trajectory, checked: each in (0, inf) s (unit
    strings accepted; ``dt`` defaults to ``default_dt``, ``record_dt`` to ``duration /
    models.record_points``), the record interval a whole number ``stride`` of steps, at most
    ``models.max_records`` records and ``models.max_steps`` steps."""
    from qcnmodel import config
    from qcnmodel.units import parse_time

    duration = _positive(parse_time(duration, "duration"), "duration")
    dt = _positive(default_dt if dt is None else parse_time(dt, "dt"), "dt")
    record_dt = _positive(
        duration / float(config.defaults["models.record_points"])
        if record_dt is None
        else parse_time(record_dt, "record_dt"),
        "record_dt",
    )
    stride = max(1, int(round(record_dt / dt)))
    dt = record_dt / stride
    n_rec = duration / record_dt
    if n_rec > config.defaults["models.max_records"]:
        raise ValueError(
            f"record_dt: {record_dt:g} s gives {n_rec:.3g} records over {duration:g} s; "
            f"must be >= {duration / config.defaults['models.max_records']:.3g} s "
            f"(models.max_records = {config.defaults['models.max_records']})"
        )
    if n_rec * stride > config.defaults["models.max_steps"]:
        raise ValueError(
            f"dt: {dt:g} s needs {n_rec * stride:.3g} steps over {duration:g} s; must be >= "
            f"{duration / config.defaults['models.max_steps']:.3g} s "
            f"(models.max_steps = {config.defaults['models.max_steps']})"
        )
    return duration, dt, record_dt, stride
