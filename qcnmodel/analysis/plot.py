"""Plots of loops, step responses and stability maps (matplotlib; plotting only).

All numbers come from :mod:`qcnmodel.analysis.loop`, :mod:`qcnmodel.analysis.margins` and
:mod:`qcnmodel.analysis.stability`; nothing is computed here beyond what a plot needs.
Every function returns the matplotlib ``Figure``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["plot_bode", "plot_nyquist", "plot_stability_map", "plot_step",
           "plot_unstable_fraction"]  # fmt: skip

#: axis labels in words for the coordinates and variables of a stability map
_LABELS = {
    "rtt": ("round-trip time RTT", "us", 1e6),
    "n_flows": ("number of flows N", "", 1.0),
    "w": ("feedback weight W", "", 1.0),
    "ps": ("sampling probability Ps", "", 1.0),
    "gd": ("decrease gain Gd", "", 1.0),
    "capacity": ("bottleneck capacity C", "Gb/s", 1e-9),
    "phase_margin_deg": ("phase margin", "deg", 1.0),
    "gain_margin_db": ("gain margin", "dB", 1.0),
    "delay_margin_s": ("delay margin", "us", 1e6),
    "critical_rtt": ("critical RTT", "us", 1e6),
}


def _label(ds, name: str) -> tuple[str, float]:
    """(axis label in words with its unit, scale applied to the values)."""
    words, unit, scale = _LABELS.get(name, (name, ds[name].attrs.get("units", ""), 1.0))
    return (f"{words} ({unit})" if unit else words), scale


def _wrap_deg(x):
    """Degrees wrapped to (-180, 180]."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(x), 180.0 - np.remainder(180.0 - x, 360.0), x)


def _fig_axes(ax, n: int = 1, **kw):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, axes = plt.subplots(n, 1, squeeze=False, **kw)
        axes = list(axes[:, 0])
        return fig, axes if n > 1 else axes[0]
    axes = list(np.atleast_1d(ax))
    if len(axes) != n:
        raise ValueError(f"ax must hold {n} axes")
    return axes[0].figure, axes if n > 1 else axes[0]


def plot_bode(loop, ax=None, omega=None, show_margins: bool = True):
    """Bode plot of ``L(jw)`` with the exact delay.

    Parameters
    ----------
    loop : DelayedLoop
    ax : pair of Axes, optional
        (magnitude, phase) axes; new figure if omitted.
    omega : array_like, optional
        Frequencies (rad/s); default ``loop.default_omega()``.
    show_margins : bool
        Mark gain and phase crossovers and annotate the margins.

    Notes
    -----
    Values come from ``loop.frequency_response(omega)`` (an FRD of exact
    values); the phase is the exact continuous phase ``arg G(jw) - w*tau``
    rather than an unwrapped grid, so it is right however fast the delay turns.
    """
    from qcnmodel.analysis._rational import Rational

    fig, (ax_m, ax_p) = _fig_axes(ax, 2, sharex=True, figsize=(7, 6))
    frd = loop.frequency_response(omega)
    w = np.asarray(frd.omega)
    resp = np.asarray(frd.frdata).reshape(-1)
    if hasattr(loop, "num"):
        phase = np.degrees(Rational(loop.num, loop.den).phase(w) - w * loop.delay)
    else:  # a loop known by its frequency response: the continuous phase of its values
        phase = np.degrees(np.unwrap(np.angle(resp)))
    label = loop.name or None
    ax_m.semilogx(w, 20 * np.log10(np.abs(resp)), label=label)
    ax_p.semilogx(w, phase, label=label)
    ax_m.axhline(0, color="0.6", lw=0.8)
    ax_p.axhline(-180, color="0.6", lw=0.8)
    # the delay drives the phase to -infinity; keep the informative range
    ax_p.set_ylim(max(phase.min(), -720.0) - 10, phase.max() + 10)
    if show_margins:
        m = loop.margins()
        if np.isfinite(m.crossover_rad_s):
            ax_m.axvline(m.crossover_rad_s, color="C3", ls="--", lw=0.8)
            ax_p.axvline(m.crossover_rad_s, color="C3", ls="--", lw=0.8)
        if np.isfinite(m.phase_crossover_rad_s):
            ax_m.axvline(m.phase_crossover_rad_s, color="C2", ls=":", lw=0.8)
            ax_p.axvline(m.phase_crossover_rad_s, color="C2", ls=":", lw=0.8)
        ax_m.set_title(
            f"{loop.name + ': ' if loop.name else ''}GM {m.gain_margin_db:.1f} dB, "
            f"PM {m.phase_margin_deg:.1f} deg, delay margin {m.delay_margin_s:.3g} s",
            fontsize=9,
        )
    ax_m.set_ylabel("|L| (dB)")
    ax_p.set_ylabel("arg L (deg)")
    ax_p.set_xlabel("frequency (rad/s)")
    ax_m.grid(True, which="both", alpha=0.3)
    ax_p.grid(True, which="both", alpha=0.3)
    return fig


def plot_nyquist(loop, ax=None, radius: float = 3.0):
    """Nyquist plot along the indented contour, with -1 and the encirclement count.

    Parameters
    ----------
    loop : DelayedLoop
    ax : Axes, optional
    radius : float
        Half-width of the view around the origin (the integrator's large arc is
        clipped by the axes limits).
    """
    from qcnmodel.analysis.margins import nyquist_contour, nyquist_count

    fig, ax = _fig_axes(ax, 1, figsize=(6, 6))
    _, values = nyquist_contour(loop)
    (line,) = ax.plot(values.real, values.imag, lw=1.2, label="L(jw), w > 0")
    ax.plot(values.real, -values.imag, lw=1.0, ls="--", color=line.get_color(),
            label="L(jw), w < 0 (mirror)")  # fmt: skip
    mag = np.abs(values)
    inside = np.nonzero((mag < 0.9 * radius) & (mag > 0.4))[0]
    n = len(values)
    picks = (
        [inside[len(inside) // 3], inside[2 * len(inside) // 3]]
        if len(inside) > 8
        else [n // 3, 2 * n // 3]
    )
    for i in picks:  # direction of travel: increasing frequency (solid), decreasing (mirror)
        if i + 1 < n:
            for sign in (1, -1):
                a, b = values[i], values[i + 1]
                ax.annotate(
                    "",
                    xy=(b.real, sign * b.imag) if sign > 0 else (a.real, -a.imag),
                    xytext=(a.real, sign * a.imag) if sign > 0 else (b.real, -b.imag),
                    arrowprops={"arrowstyle": "-|>", "color": line.get_color(), "lw": 1.2},
                )
    ax.plot([-1], [0], "x", color="C3", ms=9, mew=2, label="critical point -1")
    theta = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(theta), np.sin(theta), color="0.7", lw=0.6, label="unit circle |L| = 1")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.axvline(0, color="0.6", lw=0.6)
    c = nyquist_count(loop)
    ax.set_title(
        f"{'STABLE' if c.stable else 'UNSTABLE'}: {c.encirclements_cw} clockwise "
        f"encirclement{'s' if c.encirclements_cw != 1 else ''} of -1\n"
        f"(open-loop unstable poles P = {c.open_loop_rhp_poles}, closed-loop Z = "
        f"{c.closed_loop_rhp_poles})",
        fontsize=9,
        color="k" if c.stable else "C3",
    )
    ax.legend(fontsize=7, loc="lower right")
    ax.set_xlim(-radius, radius)
    ax.set_ylim(-radius, radius)
    ax.set_aspect("equal")
    ax.set_xlabel("Re L(jw)")
    ax.set_ylabel("Im L(jw)")
    return fig


def plot_step(responses, ax=None, pade_order: int | None = None):
    """Closed-loop step responses.

    Parameters
    ----------
    responses : StepResponse, DelayedLoop or a sequence of them
        Loops are simulated with ``step_response(pade_order=pade_order)``.
    ax : Axes, optional
    pade_order : int, optional
        Default ``config.defaults["analysis.pade_order"]``.
    """
    fig, ax = _fig_axes(ax, 1, figsize=(7, 4))
    if not isinstance(responses, (list, tuple)):
        responses = [responses]
    for r in responses:
        if hasattr(r, "step_response"):  # a loop: simulate it
            r = r.step_response(pade_order=pade_order)
        how = f"Pade {r.pade_order}" if r.pade_order else "exact delay"
        label = f"{r.name or 'loop'} ({how})"
        ax.plot(r.time, r.output, label=label)
    ax.axhline(1.0, color="0.6", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("y / r")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    return fig


def plot_stability_map(ds, var: str = "phase_margin_deg", ax=None, cmap: str = "RdBu"):
    """Colour map of one variable of a :func:`~qcnmodel.analysis.stability.stability_map`.

    Parameters
    ----------
    ds : xarray.Dataset
    var : str
        Variable to colour (default phase margin).
    ax : Axes, optional
    cmap : str

    Notes
    -----
    Axes are labelled in words with units (RTT in us). Log x axis when x is ``rtt``; phase
    margins are shown wrapped to (-180, 180] deg (the analysis keeps the unwrapped value,
    which falls linearly with the delay); the stability boundary is the zero contour of the
    unwrapped ``phase_margin_deg`` (black), and the boundary of the argument principle's
    ``stable`` flag is its 0.5 contour (dashed). Points whose loop never reaches 0 dB (an
    infinite phase margin: among them a port that its flows cannot congest, an open loop)
    are drawn hatched in the colour of the most stable margin, and named in the legend;
    points without a value (NaN: no operating point) stay blank.
    """
    fig, ax = _fig_axes(ax, 1, figsize=(7, 5))
    y, x = ds[var].dims
    xlabel, xscale = _label(ds, x)
    ylabel, yscale = _label(ds, y)
    vlabel, vscale = _label(ds, var)
    xs, ys = ds[x].values * xscale, ds[y].values * yscale
    z = np.asarray(ds[var].values, float) * vscale
    no_crossover = np.isposinf(z) if var == "phase_margin_deg" else np.zeros(z.shape, bool)
    kw = {}
    if var == "phase_margin_deg":
        # wrapped for display (the boundary below uses the unwrapped margin); symmetric
        # around 0 and saturating at +-90 deg so that the boundary region stays readable
        z = np.where(no_crossover, 90.0, _wrap_deg(z))
        vlabel = "phase margin (deg, wrapped to (-180, 180])"
        kw = {"vmin": -90.0, "vmax": 90.0}
    mesh = ax.pcolormesh(xs, ys, np.ma.masked_invalid(z), shading="nearest", cmap=cmap, **kw)
    cb = fig.colorbar(mesh, ax=ax)
    cb.set_label(vlabel)
    if no_crossover.any():
        _hatch_cells(ax, xs, ys, no_crossover, mesh.cmap(1.0))
    if xs.size > 1 and ys.size > 1:
        if "phase_margin_deg" in ds:
            pm = np.asarray(ds["phase_margin_deg"].values, float)
            if np.isfinite(pm).any() and np.nanmin(pm) < 0 < np.nanmax(pm):  # no NaN map
                ax.contour(xs, ys, pm, levels=[0.0], colors="k", linewidths=1.5)
        if "stable" in ds:
            st = np.asarray(ds["stable"].values, float)
            if 0 < st.mean() < 1:
                ax.contour(xs, ys, st, levels=[0.5], colors="k", linestyles="--", linewidths=0.8)
    if x == "rtt":
        ax.set_xscale("log")
    if y == "n_flows" and ys.size > 1 and ys.min() > 0 and ys.max() / ys.min() > 20:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(str(ds.attrs.get("model", "")), fontsize=9)
    return fig


def _hatch_cells(ax, xs, ys, cells, colour) -> None:
    """Hatch the map's ``cells`` (rows y, columns x) and name them in the legend."""
    from matplotlib.patches import Patch, Rectangle

    def edges(v):
        if v.size == 1:
            return np.array([v[0] * 0.9, v[0] * 1.1]) if v[0] else np.array([-0.5, 0.5])
        mid = (v[1:] + v[:-1]) / 2.0
        return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])

    ex, ey = edges(np.asarray(xs, float)), edges(np.asarray(ys, float))
    for i, j in zip(*np.nonzero(cells)):
        ax.add_patch(Rectangle((ex[j], ey[i]), ex[j + 1] - ex[j], ey[i + 1] - ey[i], fill=False,
                               hatch="//", edgecolor="0.35", linewidth=0.0))  # fmt: skip
    label = "no 0 dB crossover (infinite margin; e.g. a port its flows cannot congest)"
    ax.legend(handles=[Patch(facecolor=colour, hatch="//", edgecolor="0.35", label=label)],
              fontsize=7, loc="upper left")  # fmt: skip


def plot_unstable_fraction(da, ax=None, label: str | None = None):
    """The odds of a run oscillating over RTT, from
    :func:`~qcnmodel.analysis.boundary.unstable_fraction` (one or several curves).

    Parameters
    ----------
    da : xarray.DataArray
        ``unstable_fraction`` over ``rtt``.
    ax : Axes, optional
        Draw into these axes (e.g. to compare flow counts, or a packet run's fractions).
    label : str, optional
        Legend entry of the curve (default ``"N seeds"``).

    Notes
    -----
    Log RTT axis in us; the dashed line at one half is where the majority verdict turns.
    """
    fig, ax = _fig_axes(ax, 1, figsize=(6, 3.5))
    seeds = da.attrs.get("seeds", "?")
    ax.plot(da["rtt"].values * 1e6, da.values, marker="o", label=label or f"{seeds} seeds")
    ax.axhline(0.5, color="k", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("round-trip time RTT (us)")
    ax.set_ylabel("runs unstable (fraction)")
    ax.legend(fontsize=8)
    return fig
