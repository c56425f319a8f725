"""Figures of the stability report (drawing only; the numbers come from qcnmodel.studies.report).

Every figure is saved as PNG with fixed size, dpi and no timestamp metadata, so that a rerun
writes the same bytes.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from qcnmodel.studies.compiling import announce_compile

__all__ = ["add_not_drawn", "announce_compile", "draw_all", "draw_maps", "draw_models", "save"]

#: the names of the QCN model in titles and captions (set by :func:`draw_all`)
_NAME = {"loop": "QCN packet-fidelity loop", "model": "QCN packet-fidelity fluid model"}


def save(fig, path: Path) -> Path:
    """Save a figure deterministically (no software/date metadata) and close it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def draw_all(cfg, grid, figdir: Path, progress: bool = False) -> list[tuple[Path, str]]:
    """Draw the report's figures into ``figdir``; return ``(path, caption)`` pairs
    (``progress``: say on stderr when a numba compilation starts)."""
    return draw_models(cfg, figdir, progress) + draw_maps(cfg, grid, figdir)


def _names(cfg):
    """Set the QCN model's names in titles and captions (published equations or packet
    fidelity); returns the fluid model at the first choice of reference point and that
    point (:func:`_reference` moves it to a flow count the feedback holds)."""
    from qcnmodel.models import build_model

    flows = [int(n) for n in cfg.flows]
    # 100 us where the report's RTT range holds it, else the range's geometric middle
    rtt = 100e-6 if cfg.rtt_min <= 100e-6 <= cfg.rtt_max else math.sqrt(cfg.rtt_min * cfg.rtt_max)
    ref = {"n": 10 if 10 in flows else flows[len(flows) // 2], "rtt": rtt}
    fluid = build_model("qcn", cfg.params, cfg.variant, rtt=ref["rtt"], n_flows=ref["n"],
                        capacity=cfg.capacity)  # fmt: skip
    paper = fluid.fidelity == "paper"
    _NAME["loop"] = "QCN loop (published equations)" if paper else "QCN packet-fidelity loop"
    _NAME["model"] = ("QCN fluid model (published equations)" if paper
                      else "QCN packet-fidelity fluid model")  # fmt: skip
    return fluid, ref


def draw_models(cfg, figdir: Path, progress: bool = False) -> list[tuple[Path, str]]:
    """The figures of the models at the reference point (Bode, Nyquist, step responses,
    nonlinear trajectories unless ``cfg.trajectories`` is false); they do not need the
    margins grid."""
    import matplotlib

    matplotlib.use("Agg", force=False)

    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models import build_model

    fluid, ref = _reference(cfg, *_names(cfg))
    if fluid is None:  # every flow count of the ranges is overloaded: no loop to draw
        return []
    fop = build_model("fopdt", cfg.params, rtt=ref["rtt"], n_flows=ref["n"],
                      capacity=cfg.capacity)  # fmt: skip
    loop = fluid.loop()  # one tabulation of the loop at the reference point, shared
    lin = float(critical_rtt(fluid, loop=loop, method="linearisation"))  # where PM = 0
    out = [_bode(loop, ref, figdir), _nyquist(fluid, loop, ref, lin, figdir),
           _step(loop, fop, figdir)]  # fmt: skip
    if getattr(cfg, "trajectories", True):
        announce_compile("fluid", progress)
        crit = float(critical_rtt(fluid, loop=loop))  # the model's own boundary
        out.append(_nonlinear(fluid, ref, crit, cfg.params.qeq, figdir))
    return out


def _reference(cfg, fluid, ref):
    """``(fluid, ref)`` at the flow count of ``cfg.flows`` nearest ``ref["n"]`` that the
    feedback holds (an overloaded port has no loop to draw); ``(None, ref)`` when none
    does."""
    from qcnmodel.analysis.overload import has_operating_point

    for n in sorted((int(m) for m in cfg.flows), key=lambda m: (abs(m - ref["n"]), m)):
        model = fluid.replace(n_flows=n)
        if has_operating_point(model):
            return model, {**ref, "n": n}
    return None, ref


def add_not_drawn(doc, command: str | None = None) -> None:
    """The note in the Figures section when the nonlinear trajectories are left out because
    the fluid model's trajectory kernels are not compiled yet (``trajectories="auto"``)."""
    from qcnmodel.studies.report_packet import CONFIRM_COMMAND

    doc.paragraph(
        "Not drawn: the nonlinear trajectories of the fluid model (the queue displaced from "
        "its equilibrium below and above the critical RTT, and the start of a packet run). "
        "They run the model's trajectory kernels, which numba has not compiled on this "
        "machine yet (once, about 20 s of CPU); this report leaves them out instead of "
        f"waiting. `{command or CONFIRM_COMMAND}` compiles them and draws the figure; once "
        "compiled, every report draws it."
    )


def draw_maps(cfg, grid, figdir: Path) -> list[tuple[Path, str]]:
    """The figures of the margins grid (the stability map and the critical-RTT curves)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    _names(cfg)
    return _maps(cfg, grid, figdir)


def _bode(loop, ref, figdir):
    from qcnmodel.analysis.plot import plot_bode

    wc = float(loop.margins().crossover_rad_s)
    fig = plot_bode(loop, omega=np.geomspace(wc / 1e3, wc * 30, 2000))
    fig.suptitle(f"{_NAME['loop']}, N={ref['n']}, RTT={ref['rtt'] * 1e6:g} us")
    return (
        save(fig, figdir / "bode.png"),
        f"Bode plot of the linearised {_NAME['loop']} (N = {ref['n']}, RTT = "
        f"{ref['rtt'] * 1e6:g} us), exact delay; margins marked.",
    )


def _nyquist(fluid, loop, ref, crit, figdir):
    import matplotlib.pyplot as plt

    from qcnmodel.analysis.plot import plot_nyquist

    _, rtt_bad, said = _around(crit, ref["rtt"])  # the reference RTT, then above
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    plot_nyquist(loop, ax=axes[0])
    plot_nyquist(fluid.replace(rtt=rtt_bad).loop(), ax=axes[1])
    for ax, what in ((axes[0], f"RTT {ref['rtt'] * 1e6:g} us"),
                     (axes[1], f"RTT {rtt_bad * 1e6:.0f} us = {said[1]}")):  # fmt: skip
        ax.set_title(f"{what}, N = {ref['n']} flows\n{ax.get_title()}", fontsize=9,
                     color=ax.title.get_color())  # fmt: skip
    return (
        save(fig, figdir / "nyquist.png"),
        f"Nyquist plots of the {_NAME['loop']} at {ref['rtt'] * 1e6:g} us and {said[1]} "
        f"(linearised critical RTT {_rtt_words(crit)} at N = {ref['n']}); arrows show "
        "increasing frequency, the verdict and the encirclement count of -1 are in each "
        "title; the contour indents around the integrator at s = 0.",
    )


def _around(crit: float, ref_rtt: float) -> tuple[float, float, tuple]:
    """(RTT below, RTT above, their words) to draw a loop on both sides of its critical RTT
    ``crit``: 0.5 x and 1.5 x it; without a positive, finite one (unstable at every RTT,
    or stable at every one) the reference RTT and 3 x it."""
    if 0 < crit < np.inf:
        return 0.5 * crit, 1.5 * crit, ("0.5 x the critical RTT", "1.5 x critical")
    return ref_rtt, 3.0 * ref_rtt, ("the reference RTT", "3 x the reference RTT")


def _rtt_words(crit: float) -> str:
    """A critical RTT for a caption: in us, or what its absence means."""
    if 0 < crit < np.inf:
        return f"{crit * 1e6:.0f} us"
    return "none: stable at every RTT" if crit == np.inf else "none: unstable at every RTT"


def _step(loop, fop, figdir):
    import matplotlib.pyplot as plt

    from qcnmodel.analysis.plot import plot_step

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, lp, title in ((axes[0], loop, f"linearised {_NAME['loop']}"),
                          (axes[1], fop.loop(), "FOPDT view")):  # fmt: skip
        try:
            plot_step([lp.step_response()], ax=ax)
        except ValueError:  # an unstable closed loop has no step response: say so
            ax.text(0.5, 0.5, "closed loop unstable at this point:\nno step response",
                    ha="center", va="center", transform=ax.transAxes)  # fmt: skip
        ax.set_title(title)
    return (
        save(fig, figdir / "step.png"),
        f"Closed-loop step responses of the linearised loops: the {_NAME['model']} and the "
        "FOPDT view.",
    )


def _nonlinear(fluid, ref, crit, qeq, figdir):
    import matplotlib.pyplot as plt

    rtt_ok, rtt_bad, said = _around(crit, ref["rtt"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    amp = {}
    for rtt, style in ((rtt_ok, "-"), (rtt_bad, "--")):
        m = fluid.replace(rtt=rtt)
        q0 = float(m.fixed_point()["q"])
        # around the equilibrium: the model the loop linearises (the packet fidelity's
        # population of cohorts; its per-flow trajectories add their own sampling ripple)
        how = {"method": "cohorts"} if m.fidelity == "packet" else {}
        small = m.simulate(0.1, x0={"q": q0 + 0.05 * qeq}, **how)
        dq = small.q - q0
        late = np.abs(dq.where(small.time > 0.08, drop=True)).max()
        early = np.abs(dq.where(small.time < 0.02, drop=True)).max()
        amp[rtt] = (float(early), float(late))
        axes[0].plot(small.time * 1e3, dq / 1e3, style, label=f"RTT {rtt * 1e6:.0f} us")
        if m.fidelity == "packet":
            big = m.simulate(0.1, start="idle")
        else:  # the paper's equations: empty queue, every source at the line rate
            line = m.params.line_rate
            big = m.simulate(0.1, x0={"q": 0.0, "rate_current": line, "rate_target": line})
        axes[1].plot(big.time * 1e3, big.q / 1e3, style, label=f"RTT {rtt * 1e6:.0f} us")
    axes[0].set_ylabel("queue minus its equilibrium (KB)")
    axes[0].set_title("queue displaced by 5% of Qeq at t = 0")
    axes[1].axhline(qeq / 1e3, color="0.5", lw=0.8, label="Qeq")
    axes[1].set_ylabel("queue (KB)")
    axes[1].set_title("start of a packet run (empty queue); axis clipped at 4 Qeq")
    axes[1].set_ylim(0, 4 * qeq / 1e3)
    for ax in axes:
        ax.set_xlabel("time (ms)")
        ax.legend()
        ax.grid(True, alpha=0.3)
    (e1, l1), (e2, l2) = amp[rtt_ok], amp[rtt_bad]
    return (
        save(fig, figdir / "nonlinear.png"),
        f"Nonlinear trajectories of the {_NAME['model']} (N = {ref['n']}). "
        f"Left: after the queue is displaced by 5% of Qeq the largest deviation is {e1:.3g} B "
        f"in the first 20 ms and {l1:.3g} B after 80 ms at {said[0]}, against "
        f"{e2:.3g} B and {l2:.3g} B at {said[1]} (critical RTT {_rtt_words(crit)}, the one "
        "the verdict uses; the "
        "displaced queue of the packet fidelity is its population of cohorts). Right: the "
        "start of a "
        "packet run (empty queue; idle rate limiters, every flow followed, or every source at "
        "the line rate for the published equations).",
    )


def _maps(cfg, grid, figdir):
    """The stability map and the critical-RTT curves over N, W and Ps."""
    import matplotlib.pyplot as plt

    from qcnmodel.analysis.plot import plot_stability_map

    w0 = cfg.params.w if cfg.params.w in cfg.weights else cfg.weights[0]
    ps0 = cfg.ps_values[0]
    fig = plot_stability_map(grid.sel(w=w0, ps=ps0))
    fig.axes[0].set_title(f"phase margin (deg), W = {w0:g}, Ps = {ps0:.0%}")
    out = [
        (
            save(fig, figdir / "stability_map.png"),
            f"Stability map of the {_NAME['loop']} over RTT and the number of flows "
            f"(W = {w0:g}, fixed sampling Ps = {ps0:.0%}); phase margins wrapped to "
            "(-180, 180] deg; the black line is the zero-phase-margin boundary; hatched: no "
            "0 dB crossover (e.g. a port its flows cannot congest).",
        )
    ]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for w in cfg.weights:
        c = grid["critical_rtt"].sel(w=w, ps=ps0)
        axes[0].loglog(c.n_flows, c * 1e6, "o-", label=f"W={w:g}")
    for ps in cfg.ps_values:
        c = grid["critical_rtt"].sel(w=w0, ps=ps)
        axes[1].loglog(c.n_flows, c * 1e6, "o-", label=f"Ps={ps:.0%}")
    for ax, title in zip(axes, (f"Ps={ps0:.0%}", f"W={w0:g}")):
        ax.set_xlabel("number of flows N")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("critical RTT (us)")
    out.append(
        (
            save(fig, figdir / "critical_rtt.png"),
            f"Critical RTT of the {_NAME['loop']} against the number of flows, for "
            "each feedback weight W and sampling probability Ps (no point: unstable at every "
            "RTT, or no congestion).",
        )
    )
    return out
