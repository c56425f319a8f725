"""The validation suite: which matched pairs and deck runs ``--quick`` and the full run do."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from qcnmodel.validation import decks
from qcnmodel.validation import pairs as P

__all__ = ["ValidationResult", "plan", "run_validation"]

#: per-link loop RTT scan for the boundary checks (s)
BOUNDARY_GRID = (50e-6, 100e-6, 200e-6, 400e-6, 800e-6, 1600e-6)


@dataclass
class ValidationResult:
    """Rows of all comparisons, the deck runs and their observations."""

    rows: list
    deck_runs: dict = field(default_factory=dict)
    observations: list = field(default_factory=list)
    wall_s: float = 0.0
    quick: bool = True
    #: deck observations by protocol (:mod:`.observations`): dicts of Observation fields
    protocol_observations: list = field(default_factory=list)
    protocol_observations_wall_s: float = 0.0

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.rows)

    @property
    def failed(self) -> int:
        return len(self.rows) - self.passed

    def to_json(self) -> dict:
        return {"checks": len(self.rows), "passed": self.passed, "failed": self.failed,
                "quick": self.quick, "wall_s": self.wall_s,
                "rows": [r.as_dict() for r in self.rows],
                "observations": self.observations,
                "protocol_observations": self.protocol_observations}  # fmt: skip


def plan(quick: bool) -> list[tuple[str, tuple, dict]]:
    """(function name, args, kwargs) of every matched-pair check."""
    v = list(P.VARIANTS)
    eq_pts = [(10, 100e-6)] if quick else [(1, 100e-6), (10, 100e-6), (10, 50e-6), (100, 100e-6)]
    osc_pts = ([(10, 100e-6), (1, 500e-6), (100, 100e-6)] if quick else
               [(1, 100e-6), (1, 500e-6), (10, 100e-6), (10, 500e-6), (10, 1000e-6),
                (100, 100e-6), (100, 500e-6)])  # fmt: skip
    ns = (1, 10) if quick else (1, 10, 100)
    steps = 1 if quick else 3
    out = [("check_equilibrium", pt, {"variants": v}) for pt in eq_pts]
    out += [("check_oscillation", pt, {"variants": v}) for pt in osc_pts]
    seeds = (0,) if quick else (0, 1, 2)
    out += [("check_boundary", (n,), {"variants": v, "grid": BOUNDARY_GRID,
                                      "bisect_steps": steps, "seeds": seeds})
            for n in ns]  # fmt: skip
    rec = [(1, 200e-6, 1e9, 0.2e9, (0.2, 1.2), 1.6, "netfpga-1g")]
    if not quick:
        rec += [(8, 200e-6, 1e9, 0.2e9, (0.2, 1.2), 1.6, "netfpga-1g"),
                (10, 20e-6, 10e9, 1e9, (0.1, 0.6), 1.0, "802.1qau")]  # fmt: skip
    out += [("check_recovery", r, {"variants": v}) for r in rec]
    out.append(("check_rtt_classes", (), {"seeds": (0, 1) if quick else (0, 1, 2, 3)}))
    return out


def run_validation(quick: bool = True, progress: bool = False, decks_too: bool = True,
                   protocol_observations: bool | None = None):  # fmt: skip
    """Run the matched pairs (and the seed-deck runs) and collect the rows.

    ``protocol_observations`` (default: the full run with the decks) adds the deck
    observations by protocol (:mod:`qcnmodel.validation.observations`, about a minute).
    """
    if protocol_observations is None:
        protocol_observations = decks_too and not quick
    t0 = time.perf_counter()
    steps = plan(quick)
    deck_fns = [("netfpga", decks.netfpga_runs), ("netfpga-rp", decks.netfpga_rp_trace),
                ("stanford", decks.stanford_runs),
                ("rtt-sweep", decks.rtt_sweep_runs)] if decks_too else []  # fmt: skip
    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=len(steps) + len(deck_fns), desc="validate", file=sys.stderr)
    rows = []
    for name, args, kw in steps:
        rows += getattr(P, name)(*args, **kw)
        if bar is not None:
            bar.update(1)
    runs = {}
    for key, fn in deck_fns:
        runs[key] = fn(quick)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    obs = decks.observations(runs.get("netfpga", []), runs.get("stanford", []),
                             runs.get("rtt-sweep", [])) if decks_too else []  # fmt: skip
    if "netfpga-rp" in runs:
        obs.append({"deck": "001", "observation": "the deck traces byte-counter stage, timer "
                    "stage, TR and CR of one of two RPs at 200 us RTT",
                    "measured": "figure deck_netfpga-1g-rp-trace.png",
                    "reproduced": "figure only (the deck's plot is not in the OCR)"})  # fmt: skip
    ten = [r for r in rows if r.check == "recovery" and "line=10 Gb/s" in r.parameters]
    if ten:
        ts = ten[0].simulated
        obs.append({"deck": "001", "observation": "recovery 80 ms at 10 Gb/s (earlier talks)",
                    "measured": f"{ts * 1e3:.0f} ms (matched pair: N=10, 10 Gb/s, 1 Gb/s hotspot,"
                    f" RTT 20 us)" if isinstance(ts, float) else str(ts),
                    "reproduced": "yes" if isinstance(ts, float) and abs(ts - 0.08) <= 0.15 * 0.08
                    else "no"})  # fmt: skip
    pobs, pwall = [], 0.0
    if protocol_observations:
        from qcnmodel.validation import observations as PO

        got = PO.run_observations(progress=progress)
        pobs = [o.as_dict() for o in PO.evaluate(got["traces"])]
        pwall = got["wall_s"]
    return ValidationResult(rows, runs, obs, time.perf_counter() - t0, quick, pobs, pwall)
