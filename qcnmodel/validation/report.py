"""The validation report: Markdown + HTML (:class:`qcnmodel.document.Document`) and figures."""

from __future__ import annotations

import math
import re
from pathlib import Path

from qcnmodel.document import Document
from qcnmodel.validation import pairs as P
from qcnmodel.validation.findings import FINDINGS
from qcnmodel.validation.plots import deck_figure, pair_figure, rp_figure, save
from qcnmodel.validation.traces import Case, model_seeds

__all__ = ["write_report"]


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def _one_seed(variant: str, case: Case) -> str:
    """A pair figure's label of ``variant``: which of its seeds a stochastic model shows."""
    k = len(model_seeds(variant, case))
    return variant if k == 1 else f"{variant} (seed 0 of {k})"


def _cell(v, units=""):
    if isinstance(v, float):
        if not math.isfinite(v):
            return "n/a"
        if units == "s":
            return f"{v * 1e3:.3g} ms" if abs(v) < 1 else f"{v:.3g} s"
        return f"{v:.4g}"
    return "" if v is None else str(v)


def write_report(result, out_dir, figures_dir=None) -> tuple[Path, Path]:
    """Write ``validation.md``/``.html`` into ``out_dir`` and the figures (default
    ``out_dir/figures``)."""
    out = Path(out_dir)
    fig_dir = Path(figures_dir) if figures_dir else out / "figures"
    doc = Document("qcnmodel validation: models vs packet simulator")
    qd = result.default_rows("qcn")
    doc.paragraph(
        f"{'Quick' if result.quick else 'Full'} run: {len(result.rows)} comparisons, "
        f"{result.passed} passed, {result.failed} failed, of which "
        f"{result.failed - len(result.regressions)} are known disagreements (findings below) "
        f"and {len(result.regressions)} regressions ({result.wall_s:.0f} s). The default QCN "
        f"model (`{P.DEFAULT_VARIANT}`, the one every surface uses) passes "
        f"{sum(r.passed for r in qd)} of its {len(qd)} rows. Operating point unless a row "
        f"says otherwise: 802.1Qau defaults, {P.LINE / 1e9:g} Gb/s links, CP at "
        f"{P.CAPACITY / 1e9:g} Gb/s, greedy sources (2 C / N each), unlimited memory; RTT is "
        "the CP -> RP -> CP loop (`qcnmodel.validation.network`). QCN variants: `packet` = "
        "the reaction points as a renewal population with the CP's noisy sampled feedback "
        "for the analysis, every flow followed as a hybrid system for the trajectories "
        "(`QCNFluidModel(fidelity='packet')`, the default); `paper` = the cycle-averaged "
        "delay-differential equations after Alizadeh et al. (`fidelity='paper'`)."
    )
    dd = result.default_rows("dcqcn")
    if dd:
        doc.paragraph(
            f"The default DCQCN configuration (`{dd[0].model_variant}`: every flow followed "
            f"with the packet rules on a fluid queue in its trajectories, the fluid model's "
            f"linearisation for its margins) passes {sum(r.passed for r in dd)} of its "
            f"{len(dd)} rows (40 Gb/s, the CoNEXT 2016 parameters; `dcqcn-*` checks)."
        )
    doc.heading("Summary per model variant")
    variants = list(dict.fromkeys(r.label for r in result.rows))
    checks = list(dict.fromkeys(r.check for r in result.rows))
    summ = []
    for v in variants:
        cells = [v]
        for c in checks:
            rs = [r for r in result.rows if r.label == v and r.check == c]
            cells.append(f"{sum(r.passed for r in rs)}/{len(rs)}" if rs else "-")
        rs = [r for r in result.rows if r.label == v]
        cells.append(f"{sum(r.passed for r in rs)}/{len(rs)}")
        summ.append(cells)
    doc.table(["model variant"] + [f"{c} (passed/rows)" for c in checks] + ["all"], summ)
    doc.heading("Comparisons")
    hdr = ["check", "quantity", "parameters", "model variant", "model", "simulated", "error",
           "tolerance", "tolerance reason", "result", "note"]  # fmt: skip
    rows = [[r.check, r.quantity, r.parameters, r.label, _cell(r.model, r.units),
             _cell(r.simulated, r.units), _cell(r.error, r.units), _cell(r.tolerance, r.units),
             r.tolerance_reason,
             "pass" if r.passed else (f"known ({r.finding})" if r.finding else "FAIL"), r.note]
            for r in result.rows]  # fmt: skip
    doc.table(hdr, rows, left=4)
    doc.heading("Findings (where model and simulation disagree, and why)")
    doc.bullets([f"**{fid}.** {text}" for fid, text in FINDINGS.items()])
    doc.heading("Matched-pair traces")
    for case in (Case(10), Case(1, 500e-6), Case(100)):
        sim = P.sim_trace(case, P.DURATION, 0)
        mods = {_one_seed(v, case): P.model_trace(v, case, P.DURATION) for v in P.VARIANTS}
        name = f"validate_pair_n{case.n}_rtt{case.rtt * 1e6:g}us.png"
        path = save(pair_figure(sim, mods, case.label()), fig_dir / name)
        doc.figure(path, f"Hot queue and CP throughput, {case.label()}; a stochastic model "
                         "shows its first seed, its rows take the majority and the median of "
                         "all of them")  # fmt: skip
    # the recovery pair (same arguments and cache entries as check_recovery)
    case, hot, dur = Case(1, 200e-6, 0.2e9, 1e9, "netfpga-1g"), (0.2, 1.2), 1.6
    sim = P.sim_trace(case, dur, 0, 1e-3, "constant", hot)
    mods = {_one_seed(v, case): P.model_trace(v, case, dur, 1e-3, "constant", hot)
            for v in P.VARIANTS}  # fmt: skip
    path = save(pair_figure(sim, mods, "recovery: N=1, 1 Gb/s, hotspot 0.2 Gb/s 0.2-1.2 s"),
                fig_dir / "validate_recovery_netfpga_n1.png")  # fmt: skip
    doc.figure(path, "Recovery after the hotspot (netfpga-1g parameters, N = 1)")
    if result.default_rows("dcqcn"):
        from qcnmodel.validation.dcqcn_pairs import pair_traces

        sim, mods = pair_traces(20, 50e-6)
        title = "DCQCN: N=20, tau*=50 us, 40 Gb/s (no fixed point on the marking ramp)"
        path = save(pair_figure(sim, mods, title), fig_dir / "validate_dcqcn_pair_n20.png")
        doc.figure(path, "DCQCN relaxation cycle through Kmax, the last 20 ms of 0.15 s: the "
                         "simulator, the default (every flow followed, its first run) and "
                         "the mean field with the CNP lag and the stage memory (cold "
                         "start)")  # fmt: skip
    doc.heading("Seed decks")
    if result.observations:
        doc.table(["deck", "observation", "measured", "reproduced"],
                  [[o["deck"], o["observation"], o["measured"], o["reproduced"]]
                   for o in result.observations], left=4)  # fmt: skip
    for key, runs in result.deck_runs.items():
        if isinstance(runs, dict):  # the RP debugging trace
            doc.heading(key, 3)
            path = save(rp_figure(runs), fig_dir / "deck_netfpga-1g-rp-trace.png")
            doc.figure(path, runs["label"] + ": byte-counter stage, timer stage, TR, CR")
            continue
        doc.heading(key, 3)
        trs = []
        for r in runs:
            m = r.metrics
            trs.append(
                [
                    r.label,
                    r.osc.get("verdict", "-"),
                    _cell(r.osc.get("mean")),
                    _cell(r.osc.get("std")),
                    _cell(r.osc.get("early_std")),
                    _cell(m.get("hot_port_utilisation")),
                    _cell(m.get("recovery_time_s"), "s"),
                    _cell(m.get("jain_fairness")),
                ]
            )
            title = r.label
            rt = m.get("recovery_time_s")
            if rt is not None:
                title += f": recovery {rt * 1e3:.0f} ms"
                if r.label == "netfpga-1g n=1 rtt=100us":
                    title += " (deck: 179 ms hardware, 200 ms OMNeT++)"
            path = save(deck_figure(r, title), fig_dir / f"deck_{_slug(r.label)}.png")
            doc.figure(path, r.label)
        doc.paragraph(
            "Queue class, mean and std over the hotspot's second half (steady "
            "state); 'first-half std' covers the start-up transient."
        )
        doc.table(["run", "queue", "mean (B)", "std (B)", "first-half std (B)", "utilisation",
                   "recovery", "Jain"], trs)  # fmt: skip
    _protocol_observations(doc, result)
    return doc.write(out, "validation")


def _protocol_observations(doc, result) -> None:
    """The section "Deck observations by protocol"."""
    rows = getattr(result, "protocol_observations", None)
    if not rows:
        return
    from qcnmodel.validation import observations as PO

    doc.heading("Deck observations by protocol")
    counts: dict = {}
    for o in rows:
        counts[o["verdict"]] = counts.get(o["verdict"], 0) + 1
    doc.paragraph(
        f"Each sentence the decks report for S1, S3, S4, S9, S10 and S11 "
        f"(the IBM Zurich and Teak Technologies decks), judged on short packet-level runs "
        f"({result.protocol_observations_wall_s:.0f} s of wall time): "
        + ", ".join(f"{n} {v}" for v, n in counts.items())
        + ". Metrics (`qcnmodel.validation.obs_metrics`, thresholds fixed before the runs "
        "and not tuned): steady state = the hotspot's second half; oscillation = std of the "
        "hot queue (1 ms bin means) there; reaction time = hotspot start until the arrival "
        "rate at the hot port first falls below 2 x its service rate; underrun = fraction of "
        "1 ms bins (after the first 10 ms) with an empty hot queue while the port serves "
        "< 95 % of its rate; recovery = the simulator's recovery time. " + _first_para(PO)
    )
    hdr = ["id", "deck", "observation", "runs", "metric", "measured", "verdict", "note"]
    doc.table(hdr, [[o["oid"], o["deck"], o["observation"], o["runs"], o["metric"],
                     o["measured"], o["verdict"], o["note"]] for o in rows],
              left=len(hdr))  # fmt: skip


def _first_para(mod) -> str:
    """The reductions paragraph of the observations module's docstring, on one line."""
    doc = mod.__doc__ or ""
    for para in doc.split("\n\n"):
        if para.startswith("Reductions"):
            return " ".join(para.split())
    return ""
