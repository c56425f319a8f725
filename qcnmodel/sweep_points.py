"""Point functions for :func:`qcnmodel.sweep.sweep`: one analytical or simulated grid point.

They are top-level functions of plain arguments so that joblib and dask can ship them to
worker processes. Grid values arrive already parsed (SI numbers).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

__all__ = ["analysis_point", "simulation_point", "value_parser", "SIM_KEYS"]

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
    from qcnmodel.params import _NUMERIC
    from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

    kinds = {"time": parse_time, "rate": parse_rate, "size": parse_size, "number": parse_number}

    def integer(value, field):
        x = parse_number(value, field)
        if x != int(x) or x < 0:
            raise ValueError(f"{field}: expected a whole number, got {value!r}")
        return int(x)

    kinds["int"] = integer
    if name == "seed":
        return integer
    if scenario is not None:
        from qcnmodel.sim.scenarios import get_scenario

        for p in get_scenario(scenario).params:
            if p.name == name:
                if p.kind in kinds:
                    return kinds[p.kind]
                return lambda v, f: v
    if name in _MODEL_FIELDS:
        return kinds[_MODEL_FIELDS[name]]
    if name in _NUMERIC:
        return _NUMERIC[name][0]
    return parse_number


def _num(v):
    if isinstance(v, bool) or v is None:
        return v
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x


def analysis_point(model: str, preset: str, sets: dict[str, Any], **point) -> dict:
    """Margins of one linearised model at one grid point.

    Parameters
    ----------
    model : {"fopdt", "qcn", "dcqcn"}
    preset : str
        QCN parameter preset (ignored for dcqcn).
    sets : dict
        Fixed overrides (``--set``), parameter-set or model fields.
    **point
        The swept values (e.g. ``rtt``, ``n_flows``, ``w``, ``ps``, ``gd``, ``qeq``).
    """
    from argparse import Namespace

    from qcnmodel.cli.margins import build_model
    from qcnmodel.margins import critical_rtt

    merged = {**sets, **point}
    args = Namespace(
        model=model,
        preset=None if model == "dcqcn" else preset,
        params=None,
        rtt=merged.pop("rtt", None),
        flows=merged.pop("n_flows", None),
        w=None,
        ps=None,
        rate=merged.pop("capacity", None),
        fixed_point=merged.pop("fixed_point", "exact"),
        linearisation=merged.pop("linearisation", "exact"),
        set=[f"{k}={v}" for k, v in merged.items()],
    )
    if model == "dcqcn" and "ps" in point:
        raise ValueError("ps: not a DCQCN parameter (use pmax)")
    try:
        m = build_model(args)
        loop = m.loop()
    except ValueError as exc:
        if "equilibrium" in str(exc):
            return {"valid": False}
        raise
    mg = loop.margins()
    return {
        "valid": True,
        "phase_margin_deg": float(mg.phase_margin_deg),
        "gain_margin_db": float(mg.gain_margin_db),
        "delay_margin_s": float(mg.delay_margin_s),
        "crossover_rad_s": float(mg.crossover_rad_s),
        "critical_rtt_s": float(critical_rtt(loop)),
        "stable": bool(mg.stable),
    }


def simulation_point(
    scenario: str,
    protocol: str,
    preset: str | None,
    duration: float | None,
    sets: dict[str, Any],
    **point,
) -> dict:
    """Summary scalars of one packet-level run (``seed`` may be one of the swept names)."""
    from qcnmodel.sim import simulate

    merged = {**sets, **point}
    seed = int(merged.pop("seed", 0))
    res = simulate(
        scenario,
        protocol=protocol,
        params=preset,
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


def _fields(obj) -> set[str]:  # pragma: no cover - helper for error messages
    return {f.name for f in dataclasses.fields(obj)}
