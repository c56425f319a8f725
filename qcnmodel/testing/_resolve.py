"""Inputs of the assertions: parameter sets, networks, operating points and models.

* :func:`as_params`: a :class:`~qcnmodel.params.QCNParams`, a preset name or a TOML file;
  :func:`file_capacity`: the congestion point's rate a parameter file's ``[ranges]`` table
  names, read as ``qcnmodel check`` reads it; :func:`params_file`: a parameter file's path
  checked to be a regular file.
* :func:`as_spec`: a scenario name (:data:`qcnmodel.sim.scenarios.SCENARIOS`), a topology file
  (:mod:`qcnmodel.sim.topology`) or a :class:`~qcnmodel.sim.network.NetworkSpec`.
* :func:`operating_point`: the loop a fluid model sees in a network: the flows through the
  congestion point (the first hotspot's monitored port), its service rate and the flows' mean
  loop delay CP -> RP -> CP, computed as in :mod:`qcnmodel.validation.network` (one-way
  propagation and switch latencies up to the CP counted twice, plus the serialisation of the
  data frame on every hop before the CP, plus ``cp_latency``; the small CNM frame's own
  serialisation is not counted).
* :func:`with_rtt`: the same network with every link's propagation delay scaled so that the
  mean loop delay of those flows is a given RTT.
* :func:`as_model`: a registry name, a model class or a model object at that operating point.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qcnmodel.params import QCNParams, load_params
from qcnmodel.units import parse_rate, parse_time

__all__ = ["OperatingPoint", "as_model", "as_params", "as_spec", "file_capacity", "forget_files",
           "operating_point", "params_file", "remember_file", "run_overrides",
           "with_rtt"]  # fmt: skip


def _is_file_name(params) -> bool:
    return isinstance(params, Path) or (isinstance(params, str) and params.endswith(".toml"))


def params_file(path, field: str = "params") -> Path:
    """``path`` as a Path, refused unless it is a regular file (read without blocking).

    Parameters
    ----------
    path : str or Path
        The parameter file.
    field : str
        The name the messages give the value (an argument or an option).

    Raises
    ------
    ValueError
        No such file, a directory, a device (``/dev/zero`` reads without end) or a named pipe
        (opening it waits for a writer); the message names ``field`` and the path.
    """
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise ValueError(f"{field}: no such parameter file {str(p)!r}") from None
    except OSError as exc:
        raise ValueError(f"{field}: cannot read {str(p)!r} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise ValueError(f"{field}: {str(p)!r} is a directory, not a parameter file")
    if not stat.S_ISREG(mode):
        kind = ("device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                "named pipe (FIFO)" if stat.S_ISFIFO(mode) else "special file")  # fmt: skip
        raise ValueError(f"{field}: {str(p)!r} is a {kind}, not a regular file")
    return p


#: id -> (QCNParams, file): parameter sets loaded from a file for the ``qcn_params`` fixture
_FROM_FILE: dict[int, tuple[QCNParams, Path]] = {}


def remember_file(params: QCNParams, path) -> QCNParams:
    """Record that the object ``params`` was loaded from ``path`` (the ``qcn_params``
    fixture does), so that :func:`file_capacity` of that very object reads the file's
    ``[ranges]`` table; a copy (``replace``) or an equal object is not the file's."""
    _FROM_FILE[id(params)] = (params, Path(path))
    return params


def forget_files() -> None:
    """Forget every :func:`remember_file` record (the plugin does at the end of a session)."""
    _FROM_FILE.clear()


def file_capacity(params) -> float | None:
    """The ``capacity`` of a parameter file's ``[ranges]`` table (bit/s), None without one.

    The table is read and validated by the parser of ``qcnmodel check``, so a file is judged
    at the rate ``check`` judges it at, and a table ``check`` refuses is refused here with
    the same message. Its ``rtt``, ``flows`` and ``pm_threshold`` are validated, not used:
    the assertions judge the operating points they are given.

    Parameters
    ----------
    params : QCNParams, str or Path
        Anything :func:`as_params` takes; only a file, or the object loaded from one by the
        ``qcn_params`` fixture (:func:`remember_file`), has a table.

    Raises
    ------
    ValueError
        A bad ``[ranges]`` table (the message names the file, the line and the field).
    """
    known = _FROM_FILE.get(id(params))
    if known is not None and known[0] is params:
        params = known[1]
    if not _is_file_name(params):
        return None
    from qcnmodel.cli.check import parse_ranges
    from qcnmodel.params.qcn import _read_bounded, loads_toml

    path = params_file(params)
    text = _read_bounded(path).decode("utf-8-sig")
    table = loads_toml(text, path).get("ranges", {})
    if not isinstance(table, dict) or not table:
        return None
    return parse_ranges(None, None, None, table=table, path=path, text=text).capacity


def as_params(params) -> QCNParams:
    """``params`` as QCNParams: an instance, a preset name, or the path of a TOML file.

    Raises
    ------
    ValueError
        Unknown preset or a bad file (the message names the file, field and line).
    """
    if params is None:
        return QCNParams.preset("802.1qau")
    if isinstance(params, QCNParams):
        return params
    if _is_file_name(params):
        return load_params(params_file(params), extra_tables=("ranges",))
    if isinstance(params, str):
        return QCNParams.preset(params)
    raise ValueError(
        f"params: expected QCNParams, a preset name or a .toml file, got {type(params).__name__}"
    )


def as_spec(scenario, overrides: dict | None = None, protocol: str = "qcn"):
    """``(spec, label, preset, duration)`` of a scenario name, topology file or NetworkSpec.

    ``preset`` and ``duration`` are the scenario's or file's defaults (None for a bare spec).
    ``overrides`` holds scenario parameters (for a name) and is routed like
    :func:`qcnmodel.simulate` does; the other keys are ignored here.
    """
    from qcnmodel.sim.network import NetworkSpec

    if isinstance(scenario, NetworkSpec):
        return scenario, scenario.name, None, None
    if isinstance(scenario, Path) or (isinstance(scenario, str) and scenario.endswith(".toml")):
        from qcnmodel.sim.topology import read_topology

        topo = read_topology(scenario)
        return topo.spec, Path(scenario).name, topo.preset, topo.duration
    if isinstance(scenario, str):
        from qcnmodel.sim.protocols.registry import split_overrides
        from qcnmodel.sim.scenarios import get_scenario

        sc = get_scenario(scenario)
        s_over, _, _ = split_overrides(sc, dict(overrides or {}), protocol)
        return sc.build(s_over), scenario, sc.preset, sc.duration
    raise ValueError(
        "scenario: expected a scenario name, a topology file (.toml) or a NetworkSpec, got "
        f"{type(scenario).__name__}"
    )


def run_overrides(scenario, overrides: dict | None, protocol: str = "qcn") -> dict:
    """The ``overrides`` that are not scenario parameters (QCNParams and protocol settings):
    those a run of the built spec still needs."""
    if not overrides:
        return {}
    from qcnmodel.sim.protocols.registry import split_overrides

    sc = None
    if isinstance(scenario, str) and not scenario.endswith(".toml"):
        from qcnmodel.sim.scenarios import get_scenario

        sc = get_scenario(scenario)
    _, q_over, p_over = split_overrides(sc, dict(overrides), protocol)
    return {**{"qcn." + k: v for k, v in q_over.items()},
            **{"proto." + k: v for k, v in p_over.items()}}  # fmt: skip


@dataclass(frozen=True)
class OperatingPoint:
    """The loop seen by the flows through a network's congestion point."""

    n_flows: int  #: flows whose path crosses the CP
    capacity: float  #: CP service rate during the hotspot, bit/s
    rtt: float  #: mean loop delay CP -> RP -> CP of those flows, s
    line_rate: float  #: fastest source adapter rate, bit/s
    window: tuple  #: the hotspot interval [start, stop), s
    cp: str  #: name of the CP port


def _loop_parts(net, f: int, cp: int) -> tuple[float, float]:
    """(fixed part, propagation part) of flow ``f``'s loop delay to port ``cp``, s."""
    ports = net.path_ports(f)
    before = ports[: ports.index(cp)]
    prop = sum(float(net.port_prop_ns[p]) for p in before) / 1e9
    lat = sum(float(net.node_latency_ns[net.port_dst[p]]) for p in before) / 1e9
    ser = sum(8.0 * net.frame_size / float(net.port_rate[p]) for p in before)
    return 2.0 * lat + ser, 2.0 * prop


def operating_point(spec, params: QCNParams | None = None) -> OperatingPoint:
    """The operating point of ``spec`` (module docstring).

    Raises
    ------
    ValueError
        The network has no hotspot (no congestion point) or no flow crosses it.
    """
    from qcnmodel.sim.network import compile_network

    net = compile_network(spec)
    if not len(net.hs_monitor):
        raise ValueError(f"scenario: network {spec.name!r} has no hotspot (no congestion point)")
    cp = int(net.hs_monitor[0])
    flows = [int(f) for f in net.hot_flows if cp in net.path_ports(int(f))]
    if not flows:
        raise ValueError(f"scenario: no flow of {spec.name!r} crosses {net.port_name(cp)}")
    cp_lat = params.cp_latency if params is not None else 0.0
    parts = np.array([_loop_parts(net, f, cp) for f in flows])
    hs = spec.hotspots[0]
    return OperatingPoint(
        n_flows=len(flows),
        capacity=min(float(hs.rate), float(net.port_rate[cp])),
        rtt=float(parts.sum(axis=1).mean()) + cp_lat,
        line_rate=float(np.max(net.port_rate[net.host_port])),
        window=(float(hs.start), float(hs.stop)),
        cp=net.port_name(cp),
    )


def with_rtt(spec, rtt: float, params: QCNParams | None = None):
    """``spec`` with every link delay scaled so that the CP flows' mean loop delay is ``rtt``.

    Raises
    ------
    ValueError
        ``rtt`` below the part of the loop delay that is not propagation (latencies and
        serialisation), or a network without propagation delay to scale.
    """
    from qcnmodel.sim.network import compile_network

    rtt = parse_time(rtt, "rtt")
    net = compile_network(spec)
    cp = int(net.hs_monitor[0]) if len(net.hs_monitor) else -1
    flows = [int(f) for f in net.hot_flows if cp in net.path_ports(int(f))]
    if not flows:
        raise ValueError(f"scenario: no flow of {spec.name!r} crosses a congestion point")
    parts = np.array([_loop_parts(net, f, cp) for f in flows]).mean(axis=0)
    fixed = parts[0] + (params.cp_latency if params is not None else 0.0)
    if parts[1] <= 0:
        raise ValueError(f"rtt: network {spec.name!r} has no link delay to scale")
    k = (rtt - fixed) / parts[1]
    if not (k > 0 and math.isfinite(k)):
        raise ValueError(
            f"rtt: {rtt:g} s is not above the loop delay without propagation, {fixed:g} s "
            "(serialisation + switch latencies + CP latency)"
        )
    links = tuple(dataclasses.replace(li, delay=li.delay * k) for li in spec.links)
    return dataclasses.replace(spec, links=links)


def _fields(obj) -> set[str]:
    if dataclasses.is_dataclass(obj):
        return {f.name for f in dataclasses.fields(obj)}
    try:
        return set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return set()


def as_model(model, params=None, **point):
    """``model`` at the operating point ``point`` (``rtt``, ``n_flows``, ``capacity``).

    Parameters
    ----------
    model : str, class or LoopModel
        A name of :data:`qcnmodel.models.MODELS` (built with ``params``), a model class
        (called with ``params`` and the operating-point fields it accepts), or a model object
        following the loop-model protocol (``loop()``, ``replace(**changes)``; its own
        parameters are kept and the operating-point fields it has are replaced).
    params : QCNParams, preset name or TOML file, optional
        Parameters of a model built from a name or a class.
    **point
        Operating-point values; a value of None, or a field the model does not have, is left
        out.

    Raises
    ------
    ValueError
        Unknown model name or a bad value (from the model).
    TypeError
        ``model`` is none of the above.
    """
    if isinstance(model, str):
        from qcnmodel.models import build_model, get_model

        spec = get_model(model)
        have = spec.model_fields()
        kw = {k: v for k, v in point.items() if v is not None and k in have}
        p = params if params is None or not isinstance(params, (str, Path)) else params
        if isinstance(p, Path) or (isinstance(p, str) and p.endswith(".toml")):
            p = as_params(p)
        return build_model(model, p, **kw)
    if isinstance(model, type):
        have = _fields(model)
        kw = {k: v for k, v in point.items() if v is not None and k in have}
        if "params" in have:
            kw["params"] = as_params(params)
        return model(**kw)
    if hasattr(model, "loop") and hasattr(model, "replace"):
        have = _fields(model) or {k for k in point if hasattr(model, k)}
        kw = {k: v for k, v in point.items() if v is not None and k in have}
        return model.replace(**kw) if kw else model
    raise TypeError(
        "model: expected a model name, a model class or a loop model (an object with loop() "
        f"and replace()), got {type(model).__name__}"
    )


def capacity_of(value, line_rate: float, from_file: float | None = None) -> float:
    """``value`` (bit/s, unit strings accepted); when None, the parameter file's own capacity
    ``from_file`` (:func:`file_capacity`), else half the line rate."""
    if value is None:
        return 0.5 * line_rate if from_file is None else float(from_file)
    cap = parse_rate(value, "capacity")
    if not (cap > 0 and math.isfinite(cap)):
        raise ValueError(f"capacity: must be in (0, inf) bit/s, got {value!r}")
    return cap
