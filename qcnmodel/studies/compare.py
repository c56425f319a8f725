"""Protocol comparisons on one scenario (``qcnmodel compare``).

:func:`compare` runs several protocols of :mod:`qcnmodel.sim.protocols` on the same scenario,
duration and seed, and returns a :class:`Comparison` (the :class:`~qcnmodel.sim.api.SimResult`
of each protocol and a summary table: mean and peak hot queue, drops, hot-port utilisation,
Jain fairness, recovery time). Drawing is in :mod:`qcnmodel.studies.compare_plots`. The figure group
``compare`` (``qcnmodel figures``) draws the OG and IG hotspots with qcn, ecm and qcn-sonar.

``--set`` keys are shared: a key applies to every protocol that accepts it (scenario
parameter, protocol parameter or QCN parameter); a key no protocol accepts is an error naming
it. The same seed gives every protocol the same traffic (the traffic streams do not depend on
the protocol), so the runs differ only by congestion management.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qcnmodel.studies.figures import register

__all__ = ["COLUMNS", "Comparison", "compare", "summary_markdown"]

#: summary columns: (key in SimResult.summary(), header, scale, format)
COLUMNS = (
    ("hot_queue_mean_bytes", "mean queue (KB)", 1e-3, "{:.1f}"),
    ("hot_queue_max_bytes", "peak queue (KB)", 1e-3, "{:.1f}"),
    ("frames_dropped", "drops (frames)", 1, "{:,.0f}"),
    ("hot_port_utilisation", "utilisation", 1, "{:.3f}"),
    ("jain_fairness", "Jain fairness", 1, "{:.3f}"),
    ("recovery_time_s", "recovery (ms)", 1e3, "{:.1f}"),
    ("cnms", "messages", 1, "{:,.0f}"),
)


@dataclass
class Comparison:
    """Runs of several protocols on one scenario (same seed and duration)."""

    scenario: str
    seed: int
    duration: float
    results: dict = field(default_factory=dict)  # protocol name -> SimResult

    @property
    def protocols(self) -> list[str]:
        return list(self.results)

    def table(self) -> list[dict]:
        """One row per protocol: ``protocol`` and the :data:`COLUMNS` keys (raw SI values)."""
        rows = []
        for name, r in self.results.items():
            s = r.summary()
            rows.append({"protocol": name, **{k: s.get(k) for k, *_ in COLUMNS}})
        return rows


def _accept(sc, protocol: str, key: str, value) -> None:
    """Raise the ValueError (naming ``key``) with which ``simulate`` refuses the setting for
    ``protocol``: an unknown name, or a QCN parameter the protocol does not read."""
    from qcnmodel.sim.protocols.registry import check_settings_read, split_overrides

    split_overrides(sc, {key: value}, protocol)
    check_settings_read(sc, {key: value}, protocol)


def _route(scenario, protocol: str, overrides: dict) -> dict:
    """The subset of ``overrides`` that ``protocol`` accepts and reads on ``scenario``."""
    from qcnmodel.sim.scenarios import get_scenario

    sc = get_scenario(scenario) if isinstance(scenario, str) else None
    mine = {}
    for k, v in overrides.items():
        try:
            _accept(sc, protocol, k, v)
        except ValueError:
            continue
        mine[k] = v
    return mine


def compare(
    scenario,
    protocols,
    duration=None,
    seed: int = 0,
    overrides: dict | None = None,
    params=None,
    bin_width="1ms",
    progress: bool = False,
) -> Comparison:
    """Run ``protocols`` on ``scenario`` with the same seed and duration.

    Parameters
    ----------
    scenario : str or NetworkSpec
    protocols : sequence of str or a comma-separated str
        Protocol names (:data:`qcnmodel.sim.protocols.PROTOCOLS`).
    duration, seed, params, bin_width : as :func:`qcnmodel.sim.simulate`
    overrides : dict, optional
        ``--set`` keys; each applies to the protocols that accept it.
    progress : bool
        One line per run on stderr.

    Raises
    ------
    ValueError
        Unknown protocol (named), an empty list, or a key no protocol accepts (named).
    """
    from qcnmodel.sim.api import simulate
    from qcnmodel.sim.protocols.registry import protocol_name
    from qcnmodel.sim.scenarios import get_scenario

    if isinstance(protocols, str):
        protocols = [p.strip() for p in protocols.split(",") if p.strip()]
    protocols = list(dict.fromkeys(protocol_name(p, "protocols") for p in protocols))
    if not protocols:
        raise ValueError("protocols: at least one protocol is needed")
    overrides = dict(overrides or {})
    routed = {p: _route(scenario, p, overrides) for p in protocols}
    used = set().union(*(set(r) for r in routed.values()))
    for k in overrides:
        if k not in used:  # no protocol reads it: the first protocol's error names the key
            sc = get_scenario(scenario) if isinstance(scenario, str) else None
            try:
                _accept(sc, protocols[0], k, overrides[k])
            except ValueError as exc:
                if len(protocols) == 1:
                    raise
                raise ValueError(f"{k}: none of the protocols {', '.join(protocols)} reads "
                                 f"it (it would change nothing); for {protocols[0]}: "
                                 f"{exc}") from None  # fmt: skip
    cmp = None
    for p in protocols:
        if progress:
            import sys

            print(f"compare: {p} ...", file=sys.stderr, flush=True)
        r = simulate(scenario, protocol=p, params=params, duration=duration, seed=seed,
                     overrides=routed[p], bin_width=bin_width)  # fmt: skip
        if cmp is None:
            cmp = Comparison(r.scenario, r.seed, r.duration)
        cmp.results[p] = r
    return cmp


def _fmt(value, scale, fmt) -> str:
    if value is None:
        return "-"
    return fmt.format(value * scale)


def summary_markdown(cmp: Comparison) -> str:
    """The summary table as Markdown (one row per protocol)."""
    head = "| protocol | " + " | ".join(h for _, h, _, _ in COLUMNS) + " |"
    sep = "|---|" + "---:|" * len(COLUMNS)
    lines = [
        f"# {cmp.scenario}: {', '.join(cmp.protocols)}",
        "",
        f"Seed {cmp.seed}, {cmp.duration:g} s simulated; hot-port metrics over the measurement "
        "window (recovery: '-' when the hotspot does not end in the run or never recovers).",
        "",
        head,
        sep,
    ]
    for row in cmp.table():
        cells = [_fmt(row[k], s, f) for k, _, s, f in COLUMNS]
        lines.append(f"| {row['protocol']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write(cmp: Comparison, out_dir, stem: str | None = None) -> list[tuple[Path, str]]:
    """Write the PNGs and ``<stem>_summary.md`` into ``out_dir``; returns (path, caption).

    The files appear together or not at all (:func:`qcnmodel._io.atomic_dir`): an
    interrupted write leaves ``out_dir`` as it was."""
    from qcnmodel._io import atomic_dir
    from qcnmodel.studies.compare_plots import draw_comparison

    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = stem or f"compare_{cmp.scenario}"
    with atomic_dir(out) as tmp:
        figs = draw_comparison(cmp, tmp, stem)
        md = tmp / f"{stem}_summary.md"
        md.write_text(summary_markdown(cmp))
        written = [*figs, (md, f"{cmp.scenario}: summary table of {', '.join(cmp.protocols)}")]
    return [(out / Path(p).relative_to(tmp), caption) for p, caption in written]


#: figure group: scenario -> (duration, overrides); short runs, seed 1
_GROUP_RUNS = {
    "og-hotspot": ("0.5s", {"hotspot_start": "50ms", "hotspot_stop": "300ms"}),
    "ig-hotspot": ("0.5s", {"hotspot_start": "50ms", "hotspot_stop": "300ms"}),
}
_GROUP_PROTOCOLS = ("qcn", "ecm", "qcn-sonar")


@register("compare")
def draw(out_dir) -> list[tuple[Path, str]]:
    """OG and IG hotspot comparisons of qcn, ecm and qcn-sonar (0.5 s runs, seed 1)."""
    out = []
    for scen, (dur, over) in _GROUP_RUNS.items():
        cmp = compare(scen, _GROUP_PROTOCOLS, duration=dur, seed=1, overrides=over)
        out += write(cmp, out_dir, f"compare_{scen}")
    return out
