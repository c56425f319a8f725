"""Figures of the validation report (plotting only; the data come from :mod:`.pairs` and
:mod:`.decks`). Saved deterministically: ``dpi=110, metadata={"Software": None}``."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["deck_figure", "pair_figure", "rp_figure", "save"]


def save(fig, path: Path) -> Path:
    """Save deterministically and close."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def deck_figure(run, title: str):
    """Deck-style three panels: hot queue, hot-port throughput, per-flow rates vs time."""
    fig, ax = plt.subplots(3, 1, figsize=(7.5, 7.0), sharex=True)
    ax[0].plot(run.t, run.q / 1e3, lw=0.7)
    ax[0].set_ylabel("hot queue (KB)")
    ax[1].plot(run.t, run.thr / 1e9, lw=0.7)
    ax[1].set_ylabel("hot-port throughput (Gb/s)")
    ft = np.asarray(run.flow_thr)
    k = max(1, int(round(10e-3 / max(run.t[1] - run.t[0], 1e-9))))  # 10 ms mean
    kern = np.ones(k) / k
    for i in range(min(ft.shape[0], 12)):
        norm = np.convolve(np.ones(ft.shape[1]), kern, mode="same")  # exact mean at the ends
        ax[2].plot(run.t, np.convolve(ft[i], kern, mode="same") / norm / 1e9, lw=0.6)
    ax[2].set_ylabel("per-flow rate (Gb/s, 10 ms)")
    ax[2].set_xlabel("time (s)")
    ax[0].set_title(title, fontsize=10)
    for a in ax:
        a.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def pair_figure(sim, models: dict, title: str):
    """Matched pair: hot queue and CP throughput, simulator vs model variants."""
    fig, ax = plt.subplots(2, 1, figsize=(7.5, 5.0), sharex=True)
    ax[0].plot(sim.t, sim.q / 1e3, lw=0.6, color="0.4", label="simulator")
    ax[1].plot(sim.t, sim.thr / 1e9, lw=0.6, color="0.4", label="simulator")
    for name, tr in models.items():
        ax[0].plot(tr.t, tr.q / 1e3, lw=1.0, label=f"model {name}")
        ax[1].plot(tr.t, tr.thr / 1e9, lw=1.0, label=f"model {name}")
    ax[0].set_ylabel("hot queue (KB)")
    ax[1].set_ylabel("CP throughput (Gb/s)")
    ax[1].set_xlabel("time (s)")
    ax[0].legend(fontsize=7, loc="upper right")
    ax[0].set_title(title, fontsize=10)
    for a in ax:
        a.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def rp_figure(tr: dict):
    """The deck's RP debugging trace: stages and rates of one RP."""
    fig, ax = plt.subplots(2, 1, figsize=(7.5, 5.0), sharex=True)
    ax[0].step(tr["t"], tr["bc_stage"], where="post", lw=0.8, label="byte-counter stage")
    ax[0].step(tr["t"], tr["t_stage"], where="post", lw=0.8, label="timer stage")
    ax[0].set_ylabel("stage")
    ax[0].legend(fontsize=7)
    ax[1].plot(tr["t"], tr["tr"] / 1e6, lw=0.8, label="TR")
    ax[1].plot(tr["t"], tr["cr"] / 1e6, lw=0.8, label="CR")
    ax[1].set_ylabel("rate (Mb/s)")
    ax[1].set_xlabel("time (s)")
    ax[1].legend(fontsize=7)
    ax[0].set_title(tr["label"], fontsize=10)
    for a in ax:
        a.grid(alpha=0.3)
    fig.tight_layout()
    return fig
