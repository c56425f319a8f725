"""Plots of a simulation result (matplotlib; imported lazily by ``SimResult.plot``)."""

from __future__ import annotations

__all__ = ["plot_result"]


def plot_result(result, flows: int = 8, axes=None):
    """Hot queue, hot-port throughput and the first ``flows`` RLs' CR versus time.

    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    ds = result.dataset
    if axes is None:
        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 8))
    else:
        fig = axes[0].figure
    t = ds["time"].values
    if "hot_queue_mean" in ds:
        axes[0].plot(t, ds["hot_queue_mean"].values / 1e3, label="mean")
        axes[0].plot(t, ds["hot_queue_max"].values / 1e3, lw=0.6, label="max")
        axes[1].plot(t, ds["hot_port_throughput"].values / 1e9)
    axes[0].set_ylabel("hot queue (KB)")
    axes[0].legend(loc="upper right")
    axes[1].set_ylabel("hot port (Gb/s)")
    for name in ds["flow"].values[:flows]:
        axes[2].plot(t, ds["cr"].sel(flow=name).values / 1e9, lw=0.8, label=str(name))
    axes[2].set_ylabel("CR (Gb/s)")
    axes[2].set_xlabel("time (s)")
    if ds.sizes.get("flow", 0):
        axes[2].legend(loc="lower right", fontsize="x-small", ncol=2)
    fig.suptitle(f"{result.scenario} ({result.protocol}, seed {result.seed})")
    return fig
