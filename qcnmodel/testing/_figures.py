"""The figures of :mod:`qcnmodel.testing.stability`'s assertions (saved where
:mod:`qcnmodel.testing.report` keeps them)."""

from __future__ import annotations

import math

from qcnmodel.testing import report

__all__ = ["boundary_figure", "stable_figure"]


def stable_figure(points, traces, qeq) -> str:
    """The model's phase margins of ``assert_stable``'s points and the packets' CP queue
    traces (the unstable runs first); the saved figure's path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ncol = 2 if traces else 1
    fig, axes = plt.subplots(1, ncol, figsize=(5.5 * ncol, 3.6), squeeze=False)
    ax = axes[0, 0]
    for n in sorted({pt["n"] for pt in points}):
        pts = [pt for pt in points if pt["n"] == n]
        x = [pt["rtt"] * 1e6 for pt in pts]
        ax.plot(x, [pt["pm"] for pt in pts], "-", label=f"N={n}")
        for xi, pt in zip(x, pts):
            ax.plot(xi, pt["pm"], "o" if pt["model"] else "x", color="k")
    ax.axhline(0, color="r", lw=0.8)
    ax.set(xlabel="RTT (us)", ylabel="phase margin (deg)", title="model (o stable, x unstable)")
    ax.legend(fontsize=8)
    if traces:
        ax = axes[0, 1]
        traces = sorted(traces, key=lambda tr: tr[3])  # the unstable runs first
        for label, t, q, ok, _ in traces[:8]:
            ax.plot(t, q / 1e3, lw=0.7, label=label + ("" if ok else " UNSTABLE"))
        ax.axhline(qeq / 1e3, color="k", ls=":", lw=0.8)
        for settle in sorted({tr[4] for tr in traces[:8]}):
            ax.axvline(settle, color="grey", ls="--", lw=0.8)
        tops = [float(q[t > st].max()) for _, t, q, _, st in traces[:8] if (t > st).any()]
        if tops:
            ax.set_ylim(0, 1.2 * max(tops) / 1e3)
        ax.set(xlabel="time (s)", ylabel="CP queue (KB, bin mean)", title="packets")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return report.save_figure(fig, "assert_stable")


def boundary_figure(pts, runs, crit, lo, hi, tol, qeq, t0, title, band=None) -> str:
    """The simulated points of ``assert_boundary_matches`` against the model's critical RTT
    (or stable band) and the widened bracket, and their CP queue traces; the saved figure's
    path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for r, u in pts:
        a1.plot(r * 1e6, 1 if u else 0, "x" if u else "o", color="r" if u else "g")
    if math.isfinite(crit):
        a1.axvline(crit * 1e6, color="k", label="model critical RTT")
    if band is not None:
        for x, what in zip(band, ("start", "end")):
            if math.isfinite(x):
                a1.axvline(x * 1e6, color="k", ls="--" if what == "start" else "-",
                           label=f"model stable band's {what}")  # fmt: skip
    hi_f = hi if math.isfinite(hi) else max(r for r, _ in pts)
    a1.axvspan((1 - tol) * lo * 1e6, (1 + tol) * hi_f * 1e6, color="b", alpha=0.1,
               label="simulated bracket +- tolerance")  # fmt: skip
    a1.set(xlabel="RTT (us)", yticks=[0, 1], yticklabels=["stable", "oscillating"])
    a1.legend(fontsize=7)
    for r in sorted(runs):
        t, q, v = runs[r]
        a2.plot(t, q / 1e3, lw=0.6, label=f"{r * 1e6:.0f} us: {v['verdict']}")
    a2.axhline(qeq / 1e3, color="k", ls=":", lw=0.8)
    a2.axvline(t0, color="grey", ls="--", lw=0.8)
    tops = [float(q[t > t0].max()) for t, q, _ in runs.values() if (t > t0).any()]
    if tops:  # the analysis window, not the start-up transient, sets the scale
        a2.set_ylim(0, 1.2 * max(tops) / 1e3)
    a2.set(xlabel="time (s)", ylabel="CP queue (KB, bin mean)")
    a2.legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return report.save_figure(fig, "assert_boundary_matches")
