"""Point functions for :func:`qcnmodel.studies.sweep.sweep`: one analytical or simulated grid point.

They are top-level functions of plain arguments so that joblib and dask can ship them to
worker processes. Grid values arrive already parsed (SI numbers).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "analysis_point",
    "check_grid",
    "check_simulation_point",
    "point_model",
    "simulation_point",
    "value_parser",
    "SIM_KEYS",
]

#: Scalars of the simulation summary kept in a sweep.
SIM_KEYS = (
    "hot_queue_mean_bytes",
    "hot_queue_max_bytes",
    "hot_port_utilisation",
    "jain_fairness",
    "recovery_time_s",
    "frames_sent",
    "frames_delivered",
    "frames_dropped",
    "pause_frames",
    "cnms",
    "events",
)

_MODEL_FIELDS = {"rtt": "time", "n_flows": "int", "capacity": "rate", "ps": "number"}


def value_parser(name: str, scenario: str | None = None):
    """The unit parser for a swept parameter name (``parser(value, field) -> float``)."""
    from qcnmodel.params._validate import check_choice, parse_bool
    from qcnmodel.params.qcn import _BOOL, _CHOICES, _NUMERIC
    from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

    kinds = {"time": parse_time, "rate": parse_rate, "size": parse_size, "number": parse_number}

    def integer(value, field, low=0):
        x = parse_number(value, field)
        if x != int(x) or x < low:
            hint = ("" if not isinstance(value, float) or x < low else
                    " (a point of the range lo..hi:n, spaced linearly: choose n so that the "
                    "points are whole, or give a list)")  # fmt: skip
            raise ValueError(f"{field}: expected a whole number >= {low}, got {value!r}{hint}")
        return int(x)

    kinds["int"] = lambda value, field: integer(value, field, low=1)  # n_flows
    if name == "seed":
        return integer
    if scenario is not None:
        from qcnmodel.sim.scenarios import get_scenario

        for p in get_scenario(scenario).params:
            if p.name == name:
                if p.kind in kinds:  # the scenario's own parser: its range in the message
                    return lambda v, f, p=p: p.parse(v)
                return lambda v, f: v
    if name in _MODEL_FIELDS:
        return kinds[_MODEL_FIELDS[name]]
    from qcnmodel.params.dcqcn import _NUMERIC as _DCQCN

    field = name.split(".", 1)[1] if name.startswith(("proto.", "model.")) else name
    for table in (_NUMERIC, _DCQCN):
        if field in table:
            return table[field][0]
    if name in _BOOL:
        return parse_bool
    if name in _CHOICES:
        allowed = _CHOICES[name]

        def choice(value, field):
            value = str(value).strip()
            check_choice(field, value, allowed)
            return value

        return choice
    return _any_unit


def _any_unit(value, field):
    """A number, or a time, rate or size with its unit (a protocol's own field, whose kind
    its parameter class checks when the point is made)."""
    from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

    try:
        return parse_number(value, field)
    except ValueError as first:
        for parse in (parse_time, parse_rate, parse_size):
            try:
                return parse(value, field)
            except ValueError:
                continue
        raise first from None


def _num(v):
    if isinstance(v, bool) or v is None:
        return v
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x


def analysis_point(
    model: str,
    preset: str | None,
    sets: dict[str, Any],
    params: dict[str, Any] | None = None,
    variant: str | None = None,
    **point,
) -> dict:
    """Margins of one linearised model at one grid point.

    Parameters
    ----------
    model : str
        A model of :data:`qcnmodel.models.MODELS` (``fopdt``, ``qcn``, ``dcqcn``, ``ecm``).
    preset : str or None
        Parameter preset of the model (ignored by models whose parameters have no presets).
    sets : dict
        Fixed overrides (``--set``), parameter-set or model fields (``fixed_point`` is read
        as the DCQCN model's ``fixed_point_method``).
    params : dict, optional
        A full parameter set as field values (e.g. a TOML file's), instead of the preset.
    variant : str, optional
        A named configuration of the model.
    **point
        The swept values (e.g. ``rtt``, ``n_flows``, ``w``, ``ps``, ``gd``, ``qeq``).

    Returns
    -------
    dict
        ``valid`` (False where the model has no equilibrium and nothing else judges it), and
        the margins and critical RTT of :func:`qcnmodel.models.summary.summary` (NaN margins
        where trajectories that need no fixed point judge a point without one), with its
        ``boundary_method`` and ``overloaded`` (the flows' rate over C/N at full feedback
        where the port stays overloaded, else NaN).
    """
    from qcnmodel.models.summary import summary

    try:
        m = point_model(model, preset, sets, params, variant, **point)
        s = summary(m, fixed_point=False)
    except ValueError as exc:
        if "equilibrium" in str(exc):
            return {"valid": False}
        raise
    keys = ("phase_margin_deg", "gain_margin_db", "delay_margin_s", "crossover_rad_s",
            "critical_rtt_s", "stable", "boundary_method")  # fmt: skip
    # how the point was judged ("overload": unstable at every RTT, with the flows' rate over
    # C/N at full feedback in "overloaded"; NaN elsewhere)
    return {"valid": True, **{k: s[k] for k in keys}, "overloaded": s.get("overloaded", math.nan)}


def point_model(
    model: str,
    preset: str | None,
    sets: dict[str, Any],
    params: dict[str, Any] | None = None,
    variant: str | None = None,
    **point,
):
    """The model of one grid point of :func:`analysis_point` (same arguments)."""
    from qcnmodel.models import build_model, get_model

    spec = get_model(model)
    merged = {**sets, **point}
    if "fixed_point" in merged:
        merged["fixed_point_method"] = merged.pop("fixed_point")
    if params is not None:
        base = spec.params_cls(**params)
    else:
        base = preset if hasattr(spec.params_cls, "preset") else None
    return build_model(model, base, variant, **merged)


def operating_point(model, swept) -> dict:
    """The operating point a model sweep holds fixed: ``n_flows``, ``rtt_s`` and the port
    capacity ``capacity_bps`` of ``model`` (a grid point's model), leaving out the names in
    ``swept`` (``rtt``, ``n_flows``, ``capacity``) and the values the model does not have."""
    cap = getattr(model, "capacity_bps", None)
    if cap is None:
        cap = getattr(model, "capacity", None)
    if cap is None:  # the models' default: the port serves at the line rate
        cap = getattr(getattr(model, "params", None), "line_rate", None)
    values = {"n_flows": getattr(model, "n_flows", None), "rtt": getattr(model, "rtt", None),
              "capacity": cap}  # fmt: skip
    names = {"n_flows": "n_flows", "rtt": "rtt_s", "capacity": "capacity_bps"}
    out = {}
    for key, value in values.items():
        if key not in swept and value is not None:
            out[names[key]] = int(value) if key == "n_flows" else float(value)
    return out


def simulation_point(
    scenario: str,
    protocol: str,
    preset: str | None,
    duration: float | None,
    sets: dict[str, Any],
    params: dict[str, Any] | None = None,
    **point,
) -> dict:
    """Summary scalars of one packet-level run (``seed`` may be one of the swept names).

    ``params`` (QCN parameter field values, e.g. a TOML file's) replaces the preset."""
    from qcnmodel.params import QCNParams
    from qcnmodel.sim import simulate

    merged = {**sets, **point}
    seed = int(merged.pop("seed", 0))
    res = simulate(
        scenario,
        protocol=protocol,
        params=preset if params is None else QCNParams(**params),
        duration=duration,
        seed=seed,
        overrides=merged,
        trace=False,
    )
    summary = res.summary()
    out = {}
    for key in SIM_KEYS:
        v = _num(summary.get(key))
        out[key] = math.nan if v is None else v
    return out


def check_simulation_point(scenario, protocol, preset, duration, sets, params=None,
                           **point) -> None:  # fmt: skip
    """Check one point of :func:`simulation_point` (same arguments) without running it."""
    from qcnmodel.params import QCNParams
    from qcnmodel.sim.api import check_inputs
    from qcnmodel.sim.protocols.registry import check_settings_read
    from qcnmodel.sim.scenarios import get_scenario

    merged = {**sets, **point}
    seed = merged.pop("seed", 0)
    check_settings_read(get_scenario(scenario) if isinstance(scenario, str) else None, merged,
                        protocol)  # fmt: skip
    check_inputs(scenario, protocol, preset if params is None else QCNParams(**params),
                 duration, seed, merged)  # fmt: skip


def check_grid(check, fixed: dict, grid: dict) -> None:
    """Call ``check(**fixed, **point)`` on every value of every axis of ``grid`` (the other
    axes at their first value), so that a bad value fails before any point is computed. A
    model without an equilibrium at a value is a valid point (``valid = False``), not an
    error."""
    first = {k: v[0] for k, v in grid.items()}
    for name, values in grid.items():
        for v in dict.fromkeys(values):
            try:
                check(**fixed, **{**first, name: v})
            except ValueError as exc:
                if "equilibrium" not in str(exc):
                    raise


def _warm_simulator(scenario="og-hotspot", protocol="qcn", preset=None, duration=None,
                    sets=None, params=None, **_) -> None:  # fmt: skip
    """Load the simulator and the compiled kernel of this sweep's protocol before the sweep's
    workers start (a 0.1 ms run of its scenario; a 2-node og-hotspot if that is refused)."""
    from qcnmodel.params import QCNParams
    from qcnmodel.sim import simulate

    qcn = preset if params is None else QCNParams(**params)
    try:
        simulate(scenario, protocol=protocol, params=qcn, duration=1e-4, bin_width=1e-4,
                 overrides={k: v for k, v in (sets or {}).items()}, trace=False)  # fmt: skip
    except ValueError:
        simulate("og-hotspot", protocol=protocol, duration=1e-4, bin_width=1e-4,
                 overrides={"n_nodes": 2}, trace=False)  # fmt: skip


#: called once before a parallel sweep forks its workers (:func:`qcnmodel.studies.sweep.sweep`)
simulation_point.warm_up = _warm_simulator
