"""Packet-level confirmation of two operating points for the stability report.

The QCN packet-fidelity fluid model (the default) predicts a critical RTT for N flows sharing
one congestion point. Here the reference simulator runs the same situation at half that RTT
(predicted stable) and at twice it (predicted unstable), with two seeds each, and the hot
queue is classified.

Set-up: the single bottleneck of the validation suite
(:func:`qcnmodel.validation.network.bottleneck_for`): N greedy sources, one switch, one sink
whose switch egress port serves at ``capacity`` (the CP), unlimited switch memory, PAUSE off;
the link delays are set so that the CP -> RP -> CP loop delay equals the model's RTT (the
mapping is documented in that module). Queueing delay is not part of the loop delay: the CP
measures the queue as frames arrive.

Classification of the simulated hot queue over the second half of the run (bins of 20 us):
*steady* when it is empty (below one frame) in less than 5% of the bins and its standard
deviation is below half of Qeq; otherwise *oscillating* (sustained oscillation with
underflow). These are the report's criteria for a short confirmation, not a validation
tolerance; ``qcnmodel validate`` does the full comparison.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qcnmodel import config
from qcnmodel.params import QCNParams

__all__ = ["CONFIRM_COMMAND", "add_deferred", "add_section", "classify_queue", "deferred_notice",
           "run_points"]  # fmt: skip

#: the command that compiles the simulator and runs the report's confirmation (the CLI gives
#: the exact command line of the report instead)
CONFIRM_COMMAND = "qcnmodel report --confirm yes"


def classify_queue(q: np.ndarray, qeq: float, frame_size: float | None = None) -> dict:
    """Steady or oscillating, from a hot-queue trace (bytes) whose bins below one frame of
    ``frame_size`` bytes (default the detector's ``EMPTY_BYTES``) count as empty; see the
    module docstring."""
    from qcnmodel.analysis.timeseries import EMPTY_BYTES

    q = np.asarray(q, float)
    empty = float(np.mean(q < (EMPTY_BYTES if frame_size is None else frame_size)))
    std = float(np.std(q))
    steady = empty < 0.05 and std < 0.5 * qeq
    return {"mean": float(np.mean(q)), "std": std, "empty_fraction": empty,
            "verdict": "steady" if steady else "oscillating"}  # fmt: skip


def run_points(params: QCNParams, n_flows: int | None = None, capacity: float | None = None,
               variant: str | None = None):  # fmt: skip
    """Simulate at 0.5x and 2x the model's critical RTT; return rows and traces.

    ``n_flows``, ``capacity``, the seeds, the run length, the trace bin and the RTT factors
    default to ``studies.packet_*`` of :mod:`qcnmodel.config` (10 flows, 5 Gb/s, seeds 0 and
    1, 0.3 s, 20 us, 0.5 and 2)."""
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models import build_model
    from qcnmodel.sim import simulate
    from qcnmodel.validation.network import bottleneck_for

    cfg = config.defaults
    n_flows = cfg["studies.packet_flows"] if n_flows is None else n_flows
    capacity = cfg["studies.packet_capacity"] if capacity is None else capacity
    duration = cfg["studies.packet_duration"]
    model = build_model("qcn", params, variant, rtt=100e-6, n_flows=n_flows, capacity=capacity)
    crit = float(critical_rtt(model))
    rows, traces = [], []
    for factor in cfg["studies.packet_rtt_factors"]:
        rtt = factor * crit
        predicted = model.replace(rtt=rtt).loop().margins()
        for seed in cfg["studies.packet_seeds"]:
            res = simulate(
                bottleneck_for(params, n_flows, rtt, capacity),
                params=params,
                duration=duration,
                bin_width=cfg["studies.packet_bin_width"],
                seed=seed,
            )
            ds = res.dataset
            late = ds.hot_queue_mean.where(ds.time > duration / 2, drop=True).values
            c = classify_queue(late, params.qeq, params.frame_size)
            rows.append(
                {
                    "rtt_s": rtt,
                    "factor": factor,
                    "seed": seed,
                    "predicted_stable": bool(predicted.stable),
                    "phase_margin_deg": float(predicted.phase_margin_deg),
                    **c,
                    "agree": (c["verdict"] == "steady") == bool(predicted.stable),
                }
            )
            traces.append((factor, seed, ds.time.values, ds.hot_queue_mean.values))
    return crit, rows, traces


def add_section(doc, cfg, figdir: Path, bar=None) -> list[tuple[Path, str]]:
    """Run the two points and add the table, a figure and the verdict to ``doc``; return the
    figure as ``[(path, caption)]``."""
    import matplotlib.pyplot as plt

    from qcnmodel.studies.report_figures import save

    crit, rows, traces = run_points(cfg.params, variant=getattr(cfg, "variant", None),
                                    capacity=getattr(cfg, "capacity", None))  # fmt: skip
    name = ("QCN fluid model (published equations)" if getattr(cfg, "variant", None) == "paper"
            else "QCN packet-fidelity fluid model")  # fmt: skip
    if bar is not None:
        bar.update(1)
    d = config.defaults
    seeds = d["studies.packet_seeds"]
    doc.paragraph(
        f"{d['studies.packet_flows']} greedy sources (`qcnmodel.validation.network`) share a "
        f"{(getattr(cfg, 'capacity', None) or d['studies.packet_capacity']) / 1e9:g} Gb/s "
        "congestion point. The "
        f"{name}'s critical RTT there is {crit * 1e6:.4g} us; the "
        f"reference simulator runs at half and twice that RTT, seeds "
        f"{', '.join(map(str, seeds))}, for "
        f"{d['studies.packet_duration']:g} s, and "
        "the hot queue over the second half is classified as steady (empty < 5% of the time, "
        "standard deviation < Qeq/2) or oscillating."
    )
    doc.table(
        [
            "RTT (us)",
            "seed",
            "model PM (deg)",
            "model",
            "sim queue mean (B)",
            "sim std (B)",
            "sim empty",
            "sim",
            "agree",
        ],
        [
            [
                f"{r['rtt_s'] * 1e6:.4g}",
                r["seed"],
                r["phase_margin_deg"],
                "stable" if r["predicted_stable"] else "unstable",
                r["mean"],
                r["std"],
                f"{r['empty_fraction']:.1%}",
                r["verdict"],
                "pass" if r["agree"] else "fail",
            ]
            for r in rows
        ],
    )
    fig, ax = plt.subplots(figsize=(9, 4))
    for factor, seed, t, q in traces:
        if seed == seeds[0]:
            ax.plot(t * 1e3, q / 1e3, lw=0.8, label=f"RTT = {factor:g} x critical")
    ax.axhline(cfg.params.qeq / 1e3, color="0.5", lw=0.8)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("hot queue (KB)")
    ax.legend()
    ax.grid(True, alpha=0.3)
    path = save(fig, figdir / "packet_confirmation.png")
    n_agree = sum(r["agree"] for r in rows)
    caption = (f"Packet-level hot queue at half and twice the {name}'s "
               f"critical RTT (seed {seeds[0]}); {n_agree} of {len(rows)} runs agree with the "
               "model.")  # fmt: skip
    doc.figure(path, caption)
    if bar is not None:
        bar.update(1)
    return [(path, caption)]


def deferred_notice(left, command: str | None = None) -> str:
    """The one line on stderr when the report leaves parts out because their kernels are not
    compiled yet (``left``: ``"sim"``, the packet confirmation; ``"trajectories"``, the
    fluid model's nonlinear trajectories; see
    :func:`~qcnmodel.studies.report_tasks.resolve_auto`)."""
    from qcnmodel.sim.engines import COMPILE_ESTIMATE

    what = {"sim": (f"the packet simulator (once, about {COMPILE_ESTIMATE} on 2 cores)",
                    "its packet-level confirmation"),
            "trajectories": ("the fluid model's trajectory kernels (once, about 20 s of CPU)",
                             "the model's trajectories (its verdict is the linearised loop's "
                             "instead) and their figure")}  # fmt: skip
    parts = [what[k] for k in ("sim", "trajectories") if k in left]
    return (f"qcnmodel: not compiled yet: {' and '.join(p[0] for p in parts)}; this report "
            f"leaves out {' and '.join(p[1] for p in parts)} and says so; "
            f"`{command or CONFIRM_COMMAND}` compiles {'them' if len(parts) > 1 else 'it'} "
            "and runs everything")  # fmt: skip


def add_linearised_verdict(doc, command: str | None = None) -> None:
    """The note under the verdict when the model's trajectories are left out because their
    kernels are not compiled yet: the verdict is then the linearised loop's."""
    doc.paragraph(
        "Note: this verdict is the linearised loop's (phase margin, exact delay). The model's "
        "own boundary at a congested port is where the odds that a run of its trajectories "
        "oscillates pass one half, which the validation found closer to the packets (the "
        "validity domain below lists where the two part); their kernels are not compiled on "
        f"this machine yet (once, about 20 s of CPU). `{command or CONFIRM_COMMAND}` compiles "
        "them; once compiled, every report judges by them."
    )


def add_deferred(doc, command: str | None = None) -> None:
    """The report's packet-level section when the confirmation is left out because the
    simulator's kernel is not compiled yet: what is missing, why, and the command."""
    from qcnmodel.sim.engines import COMPILE_ESTIMATE

    lo, hi = config.defaults["studies.packet_rtt_factors"]
    doc.heading("Packet-level confirmation")
    doc.paragraph(
        "Not run: the packet simulator's kernel is not compiled on this machine yet (numba "
        f"compiles it once, about {COMPILE_ESTIMATE} on 2 cores, and keeps it in its cache), "
        "so this report leaves the confirmation out instead of waiting for it. The verdict "
        "above is the model's alone. The confirmation puts it to the packet simulator at "
        "0.8 x and 1.25 x the critical RTT of the worst N and at the worst point, and runs "
        f"two operating points at {lo:g} x and {hi:g} x the critical RTT of a reference N. "
        f"`{command or CONFIRM_COMMAND}` compiles the kernel and runs it; once the kernel is "
        "compiled, every report loads it from the cache and confirms by default."
    )
