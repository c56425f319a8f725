"""Named simulator sweeps: a scenario list x a parameter grid with a preset and fixed settings.

:data:`NAMED_SWEEPS` holds the sweeps the decks describe as a set of runs rather than one
scenario; :func:`run_named_sweep` runs one through the generic sweep machinery
(:func:`qcnmodel.sweep.sweep` with :func:`qcnmodel.sweep_points.simulation_point`), and
:meth:`NamedSweep.commands` prints the equivalent ``qcnmodel sweep`` command lines.

* ``rtt-sweep`` (IBM Zurich, "Toward a Scalable and Robust QCN" (seed 000), "QCN w/
  non-negligible RTT and adaptive sampling"): the ``ibm-zurich`` preset carries Qeq 375 KB,
  8-bit Fb, R_AI 12 Mb/s and the drift (4 Mb/s every 20 ms); the runs use M = 1.5 MB/port,
  unlimited adapter input buffers, no PAUSE, hotspot 0.1 .. 1.0 s; swept are the per-link RTT
  (RP<->CP RTT = 2 x link RTT) and W, on the IG and OG hotspots.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NAMED_SWEEPS", "NamedSweep", "run_named_sweep"]


@dataclass(frozen=True)
class NamedSweep:
    """A named simulator sweep: scenarios x grid with a preset and fixed overrides."""

    name: str
    summary: str
    scenarios: tuple[str, ...]
    preset: str
    grid: dict = field(default_factory=dict)  #: parameter -> values (SI)
    sets: dict = field(default_factory=dict)  #: fixed scenario/QCN overrides (SI)
    duration: float | None = None

    def commands(self, out_prefix: str = "") -> list[str]:
        """Equivalent ``qcnmodel sweep`` command lines, one per scenario."""
        grid = " ".join(f"--grid {k}={','.join(f'{v:g}' for v in vals)}"
                        for k, vals in self.grid.items())  # fmt: skip
        sets = " ".join(f"--set {k}={v:g}" if isinstance(v, float) else f"--set {k}={v}"
                        for k, v in self.sets.items())  # fmt: skip
        dur = f" --duration {self.duration:g}s" if self.duration else ""
        return [
            f"qcnmodel sweep --scenario {s} --preset {self.preset} {grid} {sets}{dur} "
            f"--out {out_prefix}{self.name}-{s}.nc"
            for s in self.scenarios
        ]


#: name -> :class:`NamedSweep` (module docstring).
NAMED_SWEEPS: dict[str, NamedSweep] = {
    "rtt-sweep": NamedSweep(
        "rtt-sweep",
        "S14 stability sweep: per-link RTT 2us..1ms x W 2/8/32, IG and OG hotspots, ibm-zurich",
        ("ig-hotspot", "og-hotspot"),
        "ibm-zurich",
        grid={"rtt": [2e-6, 20e-6, 50e-6, 200e-6, 500e-6, 1e-3], "w": [2.0, 8.0, 32.0]},
        sets={
            "switch_memory": 1.5e6,
            "adapter_ib": "inf",
            "pause": False,
            "hotspot_start": 0.1,
            "hotspot_stop": 1.0,
        },  # fmt: skip
    ),
}


def run_named_sweep(name: str, scenario: str | None = None, **kw):
    """Run a :data:`NAMED_SWEEPS` entry with :func:`qcnmodel.sweep.sweep`.

    Parameters
    ----------
    name : str
        Sweep name (``"rtt-sweep"``).
    scenario : str, optional
        One of the sweep's scenarios (default: all of them).
    **kw
        ``grid`` (replaces swept values, e.g. a shorter RTT list), ``sets`` (merged),
        ``duration``, ``protocol``, and :func:`~qcnmodel.sweep.sweep` options (``n_jobs``,
        ``checkpoint``, ``progress``).

    Returns
    -------
    dict
        Scenario name -> xarray Dataset (dimensions = the grid's parameters).
    """
    from qcnmodel._errors import unknown_name
    from qcnmodel.studies.points import simulation_point
    from qcnmodel.studies.sweep import sweep

    if name not in NAMED_SWEEPS:
        raise unknown_name("sweep", "named sweep", name, NAMED_SWEEPS, sort=False)
    ns = NAMED_SWEEPS[name]
    if scenario is not None and scenario not in ns.scenarios:
        raise ValueError(f"scenario: {scenario!r} is not one of {', '.join(ns.scenarios)}")
    grid = {**ns.grid, **kw.pop("grid", {})}
    sets = {**ns.sets, **kw.pop("sets", {})}
    duration = kw.pop("duration", ns.duration)
    protocol = kw.pop("protocol", "qcn")
    out = {}
    for s in [scenario] if scenario else ns.scenarios:
        fixed = dict(scenario=s, protocol=protocol, preset=ns.preset, duration=duration,
                     sets=sets)  # fmt: skip
        out[s] = sweep(simulation_point, grid, fixed=fixed, **kw)
    return out
