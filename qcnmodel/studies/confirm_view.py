"""What a packet confirmation (:mod:`.confirm`) says: its paragraph in the report, the
packets' verdict in words, and the figure of its traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qcnmodel.studies.confirm import (
    MAX_DURATION,
    SETTLE_TAUS,
    outcome,
    trajectory_run,
)

__all__ = ["describe", "packet_word", "plot_confirmation"]


def describe(confirmation: dict, auto: bool = True) -> str:
    """One paragraph saying what the confirmation ran and what it found (the report's).

    It names the points that were simulated by their roles (N, RTT), the congestion point's
    rate the packets ran at (``capacity_bps``, against the sources' line rate; not said by a
    confirmation saved without it), the points that were not simulated with their reasons,
    and why any point is inconclusive. ``auto``: the run length was chosen automatically
    (:func:`~qcnmodel.studies.confirm.auto_duration`).
    """
    rows = confirmation["rows"]
    n_agree = sum(outcome(r) == "agree" for r in rows)
    n_bad = sum(outcome(r) == "DISAGREE" for r in rows)
    many = max((r.get("runs", 1) for r in rows), default=1)
    found = (f"; the packets contradict the model at {n_bad} point{'s' if n_bad > 1 else ''}"
             if n_bad else ", so the packets confirm the model" if n_agree == len(rows)
             else "; the others are inconclusive")  # fmt: skip
    run, settle = trajectory_run()
    skipped = confirmation.get("skipped", [])
    return (
        f"The verdict above, put to the packet simulator{_port_words(confirmation)} "
        f"({confirmation['duration_s']:.3g} s per run, the second half analysed by the "
        f"oscillation detector) at {_points_words(rows)}: {n_agree} of {len(rows)} "
        + ("point agrees" if len(rows) == 1 else "points agree") + f"{found}."
        + "".join(f" Not simulated: the {r['role']} (N = {r['n_flows']}, RTT = "
                  f"{r['rtt_s'] * 1e6:.4g} us), {r['reason']}." for r in skipped)
        + (f" Where the model's trajectories judge, its verdict is the majority of {many} "
           f"runs from idle, so the packets run {many} times there (seeds "
           f"{confirmation['seed']}-{confirmation['seed'] + many - 1}) and their majority is "
           f"compared; such a point is conclusive when the analysed half starts no earlier "
           f"than the model judges its own runs ({settle:g} s into {run:g} s, stretched in "
           f"proportion where the loop's slowest cycle needs longer runs)."
           if many > 1 else "")
        + ((" Elsewhere each" if many > 1 else " Each") + " run is long enough for its first "
           "half to hold " if auto else " The run length is set; "
           + ("elsewhere a" if many > 1 else "a") + " point is conclusive when the first half "
           "holds ")
        + f"{SETTLE_TAUS:g} time constants of the slowest point's mode (from the model's "
        f"closed-loop pole at the gain crossover; at most {MAX_DURATION:g} s); a point whose "
        "mode the run cannot hold is inconclusive, and so is one whose queue shows no regime "
        "(still draining its start-up backlog, or an idle port)."
        + "".join(f" At the {r['role']}: inconclusive, {r['open_reason']}."
                  for r in rows if r.get("open_reason") and outcome(r) == "inconclusive")
        + "".join(f" At the {r['role']}: {r['note']}." for r in rows if r.get("note"))
    )  # fmt: skip


def _points_words(rows: list[dict]) -> str:
    """The simulated points by role: ``the worst point of the ranges (N = 10, RTT = 100 us)``,
    joined with commas and a final "and"."""
    parts = [f"the {r['role']} (N = {r['n_flows']}, RTT = {r['rtt_s'] * 1e6:.4g} us)"
             for r in rows]  # fmt: skip
    if len(parts) <= 1:
        return "".join(parts) or "no point"
    return "; ".join(parts[:-1]) + "; and " + parts[-1]


def _port_words(confirmation: dict) -> str:
    """Where the packets' congestion point served: the sources' line rate, or a slower port
    (``--rate``); empty for a confirmation saved without its rate."""
    cap, line = confirmation.get("capacity_bps"), confirmation.get("line_rate_bps")
    if cap is None:
        return ""
    if line is not None and np.isclose(cap, line, rtol=1e-12, atol=0):
        return f" with the congestion point at the sources' line rate, {cap / 1e9:.4g} Gb/s"
    below = f", below the sources' line rate of {line / 1e9:.4g} Gb/s" if line else ""
    return f" with the congestion point serving at {cap / 1e9:.4g} Gb/s{below}"


def packet_word(row: dict) -> str:
    """The packets' verdict at a row, with the count of unstable runs when there are several
    (e.g. ``oscillating (6 of 9 runs unstable; seed 2 shown)``)."""
    if row.get("runs", 1) <= 1:
        return row["verdict"]
    if row.get("packets_climb"):  # the climbing runs are what makes the row not stable
        n = row["runs_unstable"] + row["runs_climbing"]
        return (
            f"{row['verdict']} ({n} of {row['runs']} runs not stable, "
            f"{row['runs_climbing']} of them climbing; seed {row['shown_seed']} shown)"
        )
    return (f"{row['verdict']} ({row['runs_unstable']} of {row['runs']} runs unstable; "
            f"seed {row['shown_seed']} shown)")  # fmt: skip


def plot_confirmation(confirmation: dict, qeq: float, path):
    """Hot-queue traces of the confirmation runs, one panel per point, with the model's and
    the packets' verdicts in each title (the y axis fits the analysed second half, so the
    start-up transient may be clipped); saved deterministically and atomically to
    ``path``."""
    import matplotlib.pyplot as plt

    from qcnmodel._io import atomic_path
    from qcnmodel.studies.report_figures import save

    rows = confirmation["rows"]
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 3.0 * len(rows)), squeeze=False,
                             sharex=True)  # fmt: skip
    for ax, r in zip(axes[:, 0], rows):
        ax.plot(r["time_s"] * 1e3, r["queue_bytes"] / 1e3, lw=0.7, color="k")
        ax.axhline(qeq / 1e3, color="0.5", ls=":", lw=0.8, label="Qeq")
        ax.axvspan(confirmation["duration_s"] / 2 * 1e3, confirmation["duration_s"] * 1e3,
                   color="C0", alpha=0.07, label="analysed")  # fmt: skip
        model = "stable" if r["predicted_stable"] else "unstable"
        ax.set_title(f"{r['role']}: N = {r['n_flows']}, RTT = {r['rtt_s'] * 1e6:.4g} us\nmodel "
                     f"{model}, packets {packet_word(r)}: {outcome(r)}",
                     fontsize=9, color="C3" if outcome(r) == "DISAGREE" else "k")  # fmt: skip
        late = r["queue_bytes"][r["time_s"] > confirmation["duration_s"] / 2]
        top = max(float(np.max(late)) if late.size else 0.0, 2 * qeq) * 1.15 / 1e3
        ax.set_ylim(0, top)  # the analysed half; the start-up transient may be clipped
        ax.set_ylabel("hot queue (KB)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        save(fig, tmp)
    return Path(path)
