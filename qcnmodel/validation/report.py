"""The validation report: Markdown + HTML (:class:`qcnmodel.document.Document`) and figures."""

from __future__ import annotations

import math
import re
from pathlib import Path

from qcnmodel.document import Document
from qcnmodel.validation import pairs as P
from qcnmodel.validation.plots import deck_figure, pair_figure, rp_figure, save

__all__ = ["FINDINGS", "write_report"]

#: Where model and simulation disagree and why (issue 4). The mechanisms are stated here; the
#: numbers quoted are from the full run when this was written (the rows of every run carry
#: the current values).
FINDINGS = [
    "1. Counter resets (models.md §2 as written). The increase terms use the sampling "
    "probability p as the reset probability, as if every sample reset the byte counter and "
    "the timer; in the RP only CNMs do, and a sample with Fb >= 0 sends none. The models.md "
    "equilibrium then sits ~3 B above Qeq (N = 10), on the switching surface, and a rate dip "
    "stalls the increase at p (1-p)^(F B) / ((1-p)^-B - 1): after a 5 % dip the queue is empty "
    "for 47 ms and back within 10 % of Qeq after 86 ms (N = 10, C = 5 Gb/s); after the start-up "
    "cut it never recovers (time-mean queue 0 vs 24.5 KB simulated). Improvement "
    "`reset='cnm'`: reset probability p sigma(Fb(t - tau)) (logistic, width (1 + w) frames); "
    "empty 7 ms, back in 25 ms; the equilibrium queue matches at N = 1, 10, 100 and the "
    "flow-mean rate at N = 1, 10.",
    "2. Sampling lag. The CP feeds back only at samples (every Ts = 8 F / (p C) = 240 us at "
    "5 Gb/s) and Qdelta is a difference over Ts: a zero-order hold, delay Ts/2, that the fluid "
    "model lacks. Critical RTT N = 1: models.md 278 us, reset=cnm 480 us, reset=cnm+lag "
    "360 us, simulated [367, 400] us (3 seeds); N = 10: 540, 693, 573 us vs [519, 566] us. "
    "Improvement `sampling_lag=True` (loop delay rtt + Ts/2). The models.md model lands near "
    "the N = 10 boundary only because its two omissions partly cancel. The reset indicator's "
    "width delta matters at N >= 10 (N = 10: 480 .. 612 us for delta/4 .. 4 delta; table "
    "below); delta = (1 + w) frames was fixed before the comparison.",
    "3. Recovery needs the timer and HAI, and the stage memory. Byte-counter AI alone (0.5 Mb/s "
    "per 75 KB at 0.2 Gb/s) does not recover within 0.4 s; with timer + HAI + halving the "
    "model recovers in 168 ms vs 190 ms simulated (netfpga-1g, N = 1). At N = 8 (120 vs "
    "177 ms) and at 10 Gb/s, N = 10 (27 vs 79 ms) the model is too fast: its stage is "
    "memoryless ((1 - p_c)^(F B) -> 1 as soon as CNMs stop), so it skips the 5 fast-recovery "
    "cycles (5 x 25 ms timer at N = 8). Tried: `stage_memory=True`, a 4th state A = mean age "
    "since the last CNM, dA/dt = 1 - A lambda_c, the stage factors using the effective reset "
    "probability 1/(R_C A) (same equilibrium). It fixes the 10 Gb/s case (83 vs 79 ms) but "
    "overshoots at 1 Gb/s (N = 1: 348 vs 190 ms; N = 8: 277 vs 177 ms): the exponential-age "
    "closure P(age > a) = exp(-a/A) rises too slowly once the age is deterministic (no CNMs); "
    "a sharper closure (Erlang) is the next step. Reported as its own variant (`+mem`).",
    "4. N = 100. The simulated queue oscillates at every RTT scanned (period ~17.7 ms, std "
    "~44 KB, underflow; utilisation 0.96) while the linearised loop is stable (PM 7-9 deg at "
    "100 us). With the RP timer disabled the ACF peak drops from 0.83 to 0.23 (experiment "
    "with timer = 100 s): the cycles are timer-synchronised. Per flow a CNM arrives only every "
    "1/(p R) ~ 24 ms and a timer cycle every 15 ms: longer than the loop's period, so the "
    "fluid averaging over cycles does not hold. The timer+HAI variant diverges at N = 100 "
    "(HAI steps of 50 Mb/s applied as a mean rate; index i = 1): that HAI model is too rough.",
    "5. Heterogeneous flows. Simulated per-flow rates stay unequal at N = 10: 0.77 .. 1.38 of "
    "C/N averaged over 1.5 s (Jain 0.93-0.97 over 1 s for seeds 0-2; a different flow leads "
    "in each seed, so no index bias): fairness converges slowly. The symmetric model has one "
    "rate for all flows, so the worst-flow rows fail; a class model with per-class rates "
    "would be needed.",
    "7. Queue read after enqueue. The simulated mean queue sits 0.2-1.5 KB *below* Qeq while "
    "every model puts it above (by |Fb*|). The CP reads Q on arrival after enqueue "
    "(qcn-algorithm.md §1.1), so with well-mixed arrivals it samples the mean queue plus the "
    "arriving frame. Improvement `enqueue_offset=1500` (Fb on q + 1 frame): N = 10 error "
    "1.7 KB -> 0.25 KB (100 us) and 1.5 KB -> 0.02 KB (50 us); at N = 1 the single paced flow "
    "phase-locks with the service and sees only ~0.2 KB, so the offset overshoots there "
    "(-1.3 KB, still within one quantisation step).",
    "6. Oscillation periods: same class (stable / oscillating / underflow) in most pairs, but "
    "the nonlinear fluid limit cycles have periods 1.5-4x the simulated ones; the linearised "
    "phase-crossover period is not a better predictor. Open.",
]


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


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
    doc = Document("qcnmodel validation: fluid model vs packet simulator")
    doc.paragraph(
        f"{'Quick' if result.quick else 'Full'} run: {len(result.rows)} comparisons, "
        f"{result.passed} passed, {result.failed} failed ({result.wall_s:.0f} s). Operating "
        f"point: 802.1Qau defaults, {P.LINE / 1e9:g} Gb/s links, CP at "
        f"{P.CAPACITY / 1e9:g} Gb/s, greedy sources (2 C / N each), unlimited memory; RTT is the "
        "CP -> RP -> CP loop (`qcnmodel.validation.network`). Model variants: "
        + "; ".join(f"`{k}` = {v or 'models.md §2'}" for k, v in P.VARIANTS.items())
        + "."
    )
    doc.heading("Summary per model variant")
    variants = list(dict.fromkeys(r.model_variant for r in result.rows))
    checks = list(dict.fromkeys(r.check for r in result.rows))
    summ = []
    for v in variants:
        cells = [v]
        for c in checks:
            rs = [r for r in result.rows if r.model_variant == v and r.check == c]
            cells.append(f"{sum(r.passed for r in rs)}/{len(rs)}" if rs else "-")
        summ.append(cells)
    doc.table(["model variant"] + [f"{c} (passed/rows)" for c in checks], summ)
    doc.heading("Comparisons")
    hdr = ["check", "quantity", "parameters", "model variant", "model", "simulated", "error",
           "tolerance", "tolerance reason", "result", "note"]  # fmt: skip
    rows = [[r.check, r.quantity, r.parameters, r.model_variant, _cell(r.model, r.units),
             _cell(r.simulated, r.units), _cell(r.error, r.units), _cell(r.tolerance, r.units),
             r.tolerance_reason, "pass" if r.passed else "fail", r.note]
            for r in result.rows]  # fmt: skip
    doc.table(hdr, rows, left=4)
    doc.heading("Findings (where model and simulation disagree, and why)")
    doc.bullets(FINDINGS)
    sens = P.reset_width_sensitivity()
    doc.paragraph(
        "Sensitivity of the `reset=cnm+lag` critical RTT (us) to the reset-indicator width "
        "delta (fixed a priori at (1 + w) frames = 4500 B, not fitted):"
    )
    doc.table(["N"] + [f"delta x {f:g}" for f in sens["factors"]],
              [[n] + [f"{v * 1e6:.0f}" for v in vals]
               for n, vals in sens["critical_rtt"].items()])  # fmt: skip
    doc.heading("Matched-pair traces")
    for n, rtt in [(10, 100e-6), (1, 500e-6), (100, 100e-6)]:
        sim = P.sim_trace(n, rtt, duration=P.DURATION, seed=0)
        mods = {v: P.model_trace(v, n, rtt, duration=P.DURATION) for v in P.VARIANTS}
        path = save(pair_figure(sim, mods, f"N={n}, RTT={rtt * 1e6:g} us, C=5 Gb/s"),
                    fig_dir / f"validate_pair_n{n}_rtt{rtt * 1e6:g}us.png")  # fmt: skip
        doc.figure(path, f"Hot queue and CP throughput, N={n}, RTT={rtt * 1e6:g} us")
    # same arguments (and cache entry) as check_recovery: n, rtt, capacity, line, duration, seed
    rec = (1, 200e-6, 0.2e9, 1e9, 1.6, 0, 1e-3, "constant", (0.2, 1.2), "netfpga-1g")
    sim = P.sim_trace(*rec)
    mods = {v: P.model_trace(v, 1, 200e-6, 0.2e9, 1e9, 1.6, 1e-3, "constant", (0.2, 1.2),
                             "netfpga-1g") for v in P.VARIANTS}  # fmt: skip
    path = save(pair_figure(sim, mods, "recovery: N=1, 1 Gb/s, hotspot 0.2 Gb/s 0.2-1.2 s"),
                fig_dir / "validate_recovery_netfpga_n1.png")  # fmt: skip
    doc.figure(path, "Recovery after the hotspot (netfpga-1g parameters, N = 1)")
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
    """The section "Deck observations by protocol" (issue 5, item 5)."""
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
        f"(`shared/reference/scenarios.md`), judged on short packet-level runs "
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
