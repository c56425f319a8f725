"""Plot of a harmonic-balance scan (drawing only; the numbers come from
:func:`qcnmodel.models.limit_cycle.limit_cycle`)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_harmonic_balance"]


def plot_harmonic_balance(cycle, ax=None):
    """Loop gain at the -180 deg crossing and that crossing's period against the Fb amplitude.

    Parameters
    ----------
    cycle : LimitCycle
    ax : sequence of two Axes, optional
    """
    import matplotlib.pyplot as plt

    if getattr(cycle, "method", "") == "trajectory":
        return _plot_trajectory(cycle, ax)
    if ax is None:
        fig, ax = plt.subplots(2, 1, figsize=(6.5, 5.5), sharex=True)
    else:
        fig = ax[0].figure
    a = np.asarray(cycle.amplitudes) / 1e3
    ax[0].loglog(a, cycle.gains, lw=1.4, label="|L_A| at its -180 deg crossing")
    ax[0].axhline(1.0, color="0.5", lw=0.8, ls="--", label="gain 1 (harmonic balance)")
    with np.errstate(divide="ignore", invalid="ignore"):
        ax[1].semilogx(a, 2 * np.pi / np.asarray(cycle.frequencies) * 1e3, lw=1.4)
    if cycle.exists:
        for x in ax:
            x.axvline(cycle.amplitude_fb_bytes / 1e3, color="C3", lw=0.8)
        ax[0].plot([cycle.amplitude_fb_bytes / 1e3], [1.0], "o", color="C3",
                   label=f"limit cycle: period {cycle.period_s * 1e3:.2f} ms, queue amplitude "
                   f"{cycle.amplitude_queue_bytes / 1e3:.1f} KB")  # fmt: skip
    ax[0].set_ylabel("loop gain at -180 deg")
    ax[1].set_ylabel("period at -180 deg (ms)")
    ax[1].set_xlabel("amplitude of Fb (KB)")
    title = "harmonic balance: " + (
        "limit cycle" + (" (the queue empties)" if cycle.empties_queue else "")
        if cycle.exists else "no limit cycle in the range")  # fmt: skip
    ax[0].set_title(title, fontsize=10)
    ax[0].legend(fontsize=7)
    for x in ax:
        x.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def _plot_trajectory(cycle, ax=None):
    """The queue of the model's own trajectory and the measured cycle."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3.2))
    else:
        ax = ax[0] if np.ndim(ax) else ax
        fig = ax.figure
    ds = cycle.trace
    ax.plot(ds.time.values * 1e3, ds.q.values / 1e3, lw=0.9, label="model queue")
    ax.axhline(cycle.mean_queue_bytes / 1e3, color="0.5", lw=0.8, ls="--",
               label="equilibrium queue")  # fmt: skip
    if cycle.exists:
        title = (f"limit cycle (model trajectory): period {cycle.period_s * 1e3:.2f} ms, "
                 f"amplitude {cycle.amplitude_queue_bytes / 1e3:.1f} KB")  # fmt: skip
    else:
        title = "the model's trajectory settles: no limit cycle"
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("queue (KB)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
