"""Drawing of protocol comparisons (:mod:`qcnmodel.studies.compare`): one column per protocol.

Three PNGs per comparison, as the decks lay them out: the hot queue (bin mean and maximum),
the throughput (hot port and aggregate delivered) and the per-flow rates (CR of the rate
limiters of the flows crossing the hot port; the line rate while a flow has no RL). Axes
share their y range across columns. Saved deterministically (fixed size and dpi, no
metadata timestamp).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["draw_comparison"]

_MAX_FLOWS = 10


def _save(fig, path: Path) -> None:
    fig.savefig(path, dpi=110, metadata={"Software": None})


def _hot_flows(r) -> list[str]:
    """Traced flows crossing the hot port (the deck's per-flow panels), at most 10."""
    ds = r.dataset
    names = [str(f) for f in ds["flow"].values]
    hot = ds.attrs.get("hot_port")
    if hot is None or "->" not in hot:
        return names[:_MAX_FLOWS]
    dst = hot.split("->")[-1]
    picked = [f for f in names if f.split("->")[-1] == dst]
    return (picked or names)[:_MAX_FLOWS]


def _figure(n_cols: int):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    width = max(4.0, 3.2 * n_cols)
    fig, axes = plt.subplots(1, n_cols, figsize=(width, 3.2), sharey=True, squeeze=False)
    return plt, fig, axes[0]


def _panels(cmp, path: Path, ylabel: str, title: str, draw, legend) -> Path:
    """One column per protocol: ``draw(ax, result, t)`` fills each, ``legend(axes)`` last."""
    plt, fig, axes = _figure(len(cmp.protocols))
    for ax, name in zip(axes, cmp.protocols):
        r = cmp.results[name]
        draw(ax, r, r.dataset["time"].values)
        ax.set_title(name)
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    legend(axes)
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def _draw_queue(ax, r, t):
    ds = r.dataset
    if "hot_queue_mean" in ds:
        ax.plot(t, ds["hot_queue_max"].values / 1e3, lw=0.6, color="0.6", label="max")
        ax.plot(t, ds["hot_queue_mean"].values / 1e3, lw=1.0, label="mean")


def _draw_throughput(ax, r, t):
    ds = r.dataset
    if "hot_port_throughput" in ds:
        ax.plot(t, ds["hot_port_throughput"].values / 1e9, lw=1.0, label="hot port")
    ax.plot(t, ds["delivered_throughput"].values / 1e9, lw=1.0, label="aggregate delivered")


def _draw_rates(ax, r, t):
    ds = r.dataset
    for f in _hot_flows(r):
        ax.plot(t, np.asarray(ds["cr"].sel(flow=f).values) / 1e9, lw=0.7, label=f)


def draw_comparison(cmp, out_dir, stem: str) -> list[tuple[Path, str]]:
    """Draw ``stem``_queue/_throughput/_rates.png into ``out_dir``; returns (path, caption)."""
    out = Path(out_dir)
    names = cmp.protocols
    label = f"{cmp.scenario}, seed {cmp.seed}"

    def rates_legend(axes):
        if cmp.results and _hot_flows(cmp.results[names[0]]):
            axes[-1].legend(loc="lower right", fontsize="xx-small", ncol=2)

    queue = _panels(
        cmp,
        out / f"{stem}_queue.png",
        "hot queue (KB)",
        f"Hot queue: {label}",
        _draw_queue,
        lambda axes: axes[0].legend(loc="upper right", fontsize="small"),
    )
    thr = _panels(
        cmp,
        out / f"{stem}_throughput.png",
        "throughput (Gb/s)",
        f"Throughput: {label}",
        _draw_throughput,
        lambda axes: axes[0].legend(loc="best", fontsize="small"),
    )
    rates = _panels(
        cmp,
        out / f"{stem}_rates.png",
        "RL rate CR (Gb/s)",
        f"Per-flow rates (flows to the hot port): {label}",
        _draw_rates,
        rates_legend,
    )
    return [
        (queue, f"{cmp.scenario}: hot queue per protocol ({', '.join(names)})"),
        (thr, f"{cmp.scenario}: hot-port and aggregate throughput per protocol"),
        (rates, f"{cmp.scenario}: rate-limiter rates of the hot flows per protocol"),
    ]
