"""The stability report for a QCN parameter set (``qcnmodel report``).

On the 802.1Qau defaults (or any :class:`~qcnmodel.params.QCNParams`) it computes, with no
network access:

* a headline verdict first (:func:`qcnmodel.studies.check.check_params` over the report's
  ranges: stable or not, the model, the worst point, the binding constraint and the fix);
* margins of the linearised QCN loop (the packet-fidelity model, the default) and of the FOPDT
  view (:mod:`qcnmodel.models`) at representative operating points, with the exact delay;
* the full margins grid over RTT (2 us .. 1 ms) x N (1 .. 100) x W (2, 8, 32) x Ps (1 .. 10%),
  saved as ``margins.nc`` (xarray/netCDF), and the critical RTT per (N, W, Ps);
* the worst case over the ranges and a check of the IBM Zurich deck's claim "whenever delay exceeds
  sampling lag the loop becomes unstable";
* Bode, Nyquist and step figures, a stability map and critical-RTT curves;
* a short packet-level confirmation with the reference simulator, when ``packet=True``: the
  headline verdict at 0.8 x and 1.25 x the critical RTT of the worst N and at the worst point
  (as ``qcnmodel check --confirm``, in parallel), and two operating points around the
  critical RTT at a reference N. ``packet="auto"`` (``qcnmodel report``'s default) runs it
  only when the simulator's kernel is already compiled: on a fresh install the report leaves
  it out rather than compile the kernel for 10-20 s, and says so, with the command
  that compiles it and confirms. ``trajectories="auto"`` does the same for the figure of the
  fluid model's nonlinear trajectories (its trajectory kernels: about 20 s of CPU, once).

The numbers are computed here; :mod:`qcnmodel.studies.report_figures` draws, and
:class:`~qcnmodel.document.Document` writes Markdown and a self-contained HTML page.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from qcnmodel import config
from qcnmodel._io import atomic_dir, moved_paths
from qcnmodel._netcdf import write_netcdf
from qcnmodel.params import QCNParams
from qcnmodel.studies.report_worst import claim_section as _claim_section
from qcnmodel.studies.report_worst import worst_case_section as _worst_case_section

__all__ = ["ReportConfig", "compute_margins_grid", "write_report"]


def _default(key: str):
    return field(default_factory=lambda: config.defaults[key])


@dataclass(frozen=True)
class ReportConfig:
    """What the report covers: the parameter set (default 802.1Qau), the RTT x N x W x Ps grid
    and the representative points (defaults: ``studies.report_*`` of :mod:`qcnmodel.config`,
    read when the object is made). ``packet``: run the packet confirmation (True), leave it
    out (False), or run it only when the simulator's kernel is already compiled (``"auto"``;
    :func:`~qcnmodel.studies.report_tasks.resolve_auto`); ``trajectories``: draw the
    nonlinear trajectories of the fluid model (True, False, or ``"auto"``: when the
    packet-fidelity model's trajectory kernels are already compiled). ``confirm_duration`` (s,
    default: the confirmation's automatic run length) sets the packet confirmation of the
    headline verdict; ``jobs`` (processes, -1 the same as None) its runs in parallel
    (default the cores actually free), and whether a forked worker computes the grid, the
    points and the model's figures while the check runs (with 2 or more; default the cores
    of the machine; see
    :func:`~qcnmodel.studies.report_tasks.workers`). The numbers do not depend on it."""

    params: QCNParams = field(default_factory=QCNParams)
    preset: str = "802.1qau"
    rtt_min: float = field(default_factory=lambda: config.defaults["studies.report_rtt"][0])
    rtt_max: float = field(default_factory=lambda: config.defaults["studies.report_rtt"][1])
    n_rtt: int = _default("studies.report_n_rtt")
    flows: tuple[int, ...] = _default("studies.report_flows")
    weights: tuple[float, ...] = _default("studies.report_weights")
    ps_values: tuple[float, ...] = _default("studies.report_ps")
    point_rtts: tuple[float, ...] = _default("studies.report_point_rtts")
    point_flows: tuple[int, ...] = _default("studies.report_point_flows")
    packet: bool | str = True
    trajectories: bool | str = True
    recommend: bool = True
    pm_threshold: float = _default("studies.check_pm_threshold")
    variant: str | None = None
    confirm_duration: float | None = None
    jobs: int | None = None
    capacity: float | None = None

    def __post_init__(self) -> None:
        if self.capacity is not None and not (0 < self.capacity < np.inf):
            raise ValueError(f"rate: the port's capacity must be in (0, inf) bit/s, got "
                             f"{self.capacity!r}")  # fmt: skip
        if not (0 < self.rtt_min < self.rtt_max):
            raise ValueError(
                f"rtt range: need 0 < rtt_min < rtt_max, got {self.rtt_min}, {self.rtt_max}"
            )
        for name in ("packet", "trajectories"):
            value = getattr(self, name)
            if not (isinstance(value, bool) or value == "auto"):
                raise ValueError(f"{name}: expected True, False or 'auto', got {value!r}")
        if self.n_rtt < 2:
            raise ValueError(f"n_rtt: need at least 2 RTT points, got {self.n_rtt}")
        if any(n < 1 for n in self.flows):
            raise ValueError("flows: every N must be >= 1")
        if any(not (0 < p <= 1) for p in self.ps_values):
            raise ValueError("ps_values: every Ps must be in (0, 1]")
        if self.confirm_duration is not None:
            from qcnmodel.studies.confirm import check_duration

            check_duration(self.confirm_duration)
        if self.jobs is not None and (isinstance(self.jobs, bool) or not isinstance(self.jobs, int)
                                      or not (self.jobs >= 1 or self.jobs == -1)):  # fmt: skip
            raise ValueError(f"jobs: expected a whole number >= 1 or -1, got {self.jobs!r}")

    @property
    def rtts(self) -> np.ndarray:
        """Log-spaced RTT grid (s)."""
        return np.geomspace(self.rtt_min, self.rtt_max, self.n_rtt)

    def check_ranges(self):
        """The ranges of the headline verdict (:class:`~qcnmodel.studies.check.CheckRanges`):
        the report's RTT range and grid, its flow range with as many flow counts."""
        from qcnmodel.studies.check import CheckRanges

        return CheckRanges(rtt=(self.rtt_min, self.rtt_max),
                           flows=(int(min(self.flows)), int(max(self.flows))),
                           n_rtt=self.n_rtt, n_flows=len(self.flows),
                           pm_threshold=self.pm_threshold, capacity=self.capacity)  # fmt: skip


#: the margins the report keeps per grid point (and ``critical_rtt`` per row)
_GRID_VARS = ["phase_margin_deg", "gain_margin_db", "delay_margin_s", "stable", "valid",
              "critical_rtt"]  # fmt: skip


def _grid_base(cfg: ReportConfig):
    from qcnmodel.models import build_model

    return build_model("qcn", cfg.params, cfg.variant, rtt=cfg.point_rtts[0],
                       n_flows=cfg.point_flows[0], capacity=cfg.capacity)  # fmt: skip


def _grid_block(cfg: ReportConfig, w: float, ps: float, base=None) -> xr.Dataset:
    """The margins over RTT x N at one (W, Ps), with a ``ps`` dimension of length 1."""
    from qcnmodel.analysis.stability import stability_map

    base = _grid_base(cfg) if base is None else base
    ds = stability_map(base.replace(w=float(w), ps=float(ps)), x="rtt", x_values=cfg.rtts,
                       y="n_flows", y_values=np.asarray(cfg.flows),
                       method="linearisation")  # fmt: skip
    return ds[_GRID_VARS].expand_dims(ps=[float(ps)])


def compute_margins_grid(cfg: ReportConfig, progress=None, blocks=None) -> xr.Dataset:
    """Margins of the QCN loop (the default, packet-fidelity model) over RTT x N x W x Ps.

    Parameters
    ----------
    cfg : ReportConfig
        The grid.
    progress : tqdm, optional
        Advanced once per (W, Ps).
    blocks : dict, optional
        ``(W, Ps) -> dataset`` already computed (e.g. by another process) by the same code.

    Returns
    -------
    xarray.Dataset
        ``phase_margin_deg``, ``gain_margin_db``, ``delay_margin_s``, ``stable`` and
        ``valid`` (False where the model has no equilibrium; the margins are NaN there) over
        ``(w, ps, n_flows, rtt)``, and ``critical_rtt`` over ``(w, ps, n_flows)``. The sampling
        probability is fixed at each ``ps``: it replaces the parameter set's sampling table
        where the set has one.
    """
    from qcnmodel.studies.verdict import model_label

    base = _grid_base(cfg)
    blocks = blocks or {}
    rows = []
    for w in cfg.weights:
        row = []
        for ps in cfg.ps_values:
            block = blocks.get((w, ps))
            row.append(_grid_block(cfg, w, ps, base) if block is None else block)
            if progress is not None:
                progress.update(1)
        rows.append(xr.concat(row, dim="ps").expand_dims(w=[float(w)]))
    grid = xr.concat(rows, dim="w")
    grid.attrs = {
        "model": f"{model_label(base)[2]} (linearised, exact delay)",
        "preset": cfg.preset,
        "params_toml": cfg.params.to_toml(),
    }
    return grid


def _point_rows(cfg: ReportConfig) -> list:
    from qcnmodel.models import build_model
    from qcnmodel.models.summary import summary

    rows = []
    for N in cfg.point_flows:
        for rtt in cfg.point_rtts:
            for name, key in ((_qcn_name(cfg), "qcn"), ("FOPDT", "fopdt")):
                var = cfg.variant if key == "qcn" else None
                s = summary(build_model(key, cfg.params, var, rtt=rtt, n_flows=N,
                                        capacity=cfg.capacity), fixed_point=False,
                            method=_method(cfg))  # fmt: skip
                rows.append(
                    [name, N, f"{rtt * 1e6:g}", s["phase_margin_deg"], s["gain_margin_db"],
                     s["delay_margin_s"] * 1e6, s["critical_rtt_s"] * 1e6,
                     "stable" if s["stable"] else "UNSTABLE"]
                )  # fmt: skip
    return rows


def _method(cfg: ReportConfig) -> str:
    """How the verdict and the points judge the model: its own boundary method when its
    trajectories run, else the linearisation (not compiled yet, ``trajectories="auto"``)."""
    return "model" if cfg.trajectories else "linearisation"


def _qcn_name(cfg: ReportConfig) -> str:
    return "published-equations" if cfg.variant == "paper" else "QCN packet-fidelity"


def write_report(out_dir: str | Path, cfg: ReportConfig | None = None, progress: bool = True,
                 command: str | None = None):  # fmt: skip
    """Compute everything and write ``report.md``, ``report.html``, figures and ``margins.nc``.

    A first run compiles numba code (one line on stderr says what, once): the packet
    simulator then compiles in a forked process while this one analyses the model. With a
    core to spare (``cfg.jobs``) and nothing compiling in the background, the margins grid,
    the representative points and the model's figures are computed in a forked worker while
    this process runs the check. Either way every number is that of a sequential run, bit
    for bit (the same code on the same inputs).

    Parameters
    ----------
    out_dir : str or Path
        Output directory (created). The report is written into a temporary folder beside
        it and moved in once complete: an interrupted run leaves ``out_dir`` as it was.
    cfg : ReportConfig, optional
        Ranges and parameter set (default: the 802.1Qau defaults and the configured ranges).
    progress : bool
        Show a progress bar on stderr.
    command : str, optional
        The command line that runs this report with everything, named when ``"auto"`` (of
        ``cfg.packet`` or ``cfg.trajectories``) leaves a part out because it is not compiled
        yet (default :data:`~qcnmodel.studies.report_packet.CONFIRM_COMMAND`).

    Returns
    -------
    dict
        Paths of the written files and the headline numbers; ``packet`` and
        ``trajectories``: ``"run"``, ``"off"`` or ``"not compiled"`` (left out by
        ``"auto"``).
    """
    from qcnmodel.studies.report_tasks import resolve_auto

    cfg, deferred = resolve_auto(cfg or ReportConfig())
    with atomic_dir(out_dir) as tmp:
        paths = _compute_and_write(tmp, cfg, deferred, progress, command)
    return moved_paths(paths, tmp, Path(out_dir))


def _compute_and_write(out: Path, cfg, deferred, progress: bool, command: str | None) -> dict:
    """:func:`write_report` into the (temporary) folder ``out``."""
    from qcnmodel.studies import compiling
    from qcnmodel.studies.report_tasks import (
        Tasks,
        compiled_parts,
        family,
        settled,
        warm_cohorts,
        workers,
    )

    (out / "figures").mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if deferred:
        import sys

        from qcnmodel.studies.report_packet import deferred_notice

        print(deferred_notice(deferred, command), file=sys.stderr, flush=True)
    planned = settled(cfg)
    bg = compiling.compile_in_background(family(cfg.params)) if cfg.packet else None
    todo = compiling.announce_all(compiled_parts(planned), background=bg is not None)
    tasks = None
    try:
        n_workers = workers(cfg, bg)
        if "loop" in todo and n_workers:  # compile the cohort kernel here, once, before the
            warm_cohorts(planned)  # worker is forked (else both processes compile it)
        tasks = Tasks(planned, out / "figures", n_workers)
        return _write(out, cfg, tasks, bg, progress, t0, deferred, command)
    finally:
        if tasks is not None:
            tasks.close()
        if bg is not None:
            bg.close()


def _write(out: Path, cfg: ReportConfig, tasks, bg, progress: bool, t0: float,
           deferred=(), command: str | None = None) -> dict:  # fmt: skip
    """The report's sections in order (:func:`write_report`): ``tasks`` holds the parts
    queued on a worker, ``bg`` the simulator's background compilation (or None);
    ``deferred``: the parts left out because they are not compiled (``"sim"``,
    ``"trajectories"``; ``command`` runs them)."""
    from tqdm.auto import tqdm

    from qcnmodel.document import Document
    from qcnmodel.studies import report_figures, report_packet, report_tasks
    from qcnmodel.studies.check import check_params, check_steps

    figdir = out / "figures"
    ranges = cfg.check_ranges()
    n_check = check_steps(cfg.params, ranges, cfg.recommend)
    n_steps = n_check + len(cfg.weights) * len(cfg.ps_values) + 6 + (2 if cfg.packet else 0)
    bar = tqdm(total=n_steps, desc="report", unit="step", disable=not progress)

    doc = Document(f"QCN stability report: {cfg.preset} parameters")
    verdict = check_params(cfg.params, ranges, recommend=cfg.recommend, progress=bar,
                           variant=cfg.variant, boundary=_method(cfg), jobs=cfg.jobs)  # fmt: skip
    if verdict.fallback:  # outside the packet-fidelity model's domain: the paper's, as said
        cfg = dataclasses.replace(cfg, variant=verdict.model_variant)
    done = tasks.collect(cfg)  # what the workers computed meanwhile (or this process now)
    _headline(doc, verdict)  # 0. the verdict, first (the linearised loop's, say so)
    if "trajectories" in deferred and report_tasks._packet_fidelity(cfg):
        report_packet.add_linearised_verdict(doc, command)
    _validity_section(doc, verdict, cfg.packet)
    _intro(doc, cfg, verdict)
    _points_section(doc, cfg, done.get(("points", None)))  # 1. representative points
    bar.update(1)
    blocks = {k[1]: v for k, v in done.items() if k[0] == "grid"}
    grid = compute_margins_grid(cfg, progress=bar, blocks=blocks)  # 2. the full grid
    grid_path = out / "margins.nc"
    write_netcdf(grid, grid_path, engine="h5netcdf")
    _critical_section(doc, cfg, grid, verdict)
    _worst_case_section(doc, cfg, grid)  # 3. worst case and the IBM deck's claim
    _claim_section(doc, cfg, verdict)
    bar.update(1)
    figs = done.get(("models", None))  # 4. figures
    if figs is None:
        figs = report_figures.draw_models(cfg, figdir, progress=progress)
    figs = figs + report_figures.draw_maps(cfg, grid, figdir)
    bar.update(3)
    doc.heading("Figures")
    for path, caption in figs:
        doc.figure(path, caption)
    if "trajectories" in deferred:
        report_figures.add_not_drawn(doc, command)
    bar.update(1)
    if cfg.packet:
        if bg is not None:
            bg.wait()  # the simulator compiled meanwhile: load it from the cache
        doc.heading("Packet-level confirmation")
        report_figures.announce_compile("sim", progress)
        figs += _confirm_section(doc, cfg, verdict, ranges, figdir)
        figs += report_packet.add_section(doc, cfg, figdir, bar)
    elif "sim" in deferred:
        report_packet.add_deferred(doc, command)
    doc.paragraph(f"Computed in {time.perf_counter() - t0:.1f} s.")
    md, page = doc.write(out, "report")
    bar.close()
    return {
        "markdown": str(md),
        "html": str(page),
        "margins": str(grid_path),
        "figures": [str(f) for f, _ in figs],
        "verdict": verdict.verdict,
        "headline": verdict.headline,
        **{
            k: "run" if getattr(cfg, k) else "not compiled" if left in deferred else "off"
            for k, left in (("packet", "sim"), ("trajectories", "trajectories"))
        },
    }


def _confirm_section(doc, cfg: ReportConfig, verdict, ranges, figdir):
    """The headline verdict put to the packet simulator (as ``qcnmodel check --confirm``):
    0.8 x and 1.25 x the critical RTT of the worst N and the worst point, in parallel."""
    from qcnmodel.models import build_model
    from qcnmodel.studies.confirm import confirm_verdict, model_word, outcome
    from qcnmodel.studies.confirm_view import describe, packet_word, plot_confirmation
    from qcnmodel.studies.verdict import wrap_phase

    conf = confirm_verdict(cfg.params, verdict, ranges,
                           build_model("qcn", cfg.params, cfg.variant, capacity=cfg.capacity),
                           duration=cfg.confirm_duration, jobs=cfg.jobs)  # fmt: skip
    n_agree = sum(outcome(r) == "agree" for r in conf["rows"])
    doc.paragraph(describe(conf, cfg.confirm_duration is None))
    doc.table(["point", "N", "RTT (us)", "model", "model PM (deg)", "packets",
               "queue std (KB)", "trend (KB)", "empty", "agree"],
              [[r["role"], r["n_flows"], f"{r['rtt_s'] * 1e6:.4g}",
                model_word(r), f"{wrap_phase(r['phase_margin_deg']):.1f}", packet_word(r),
                r["std"] / 1e3, f"{r['drift'] / 1e3:+.3g}", f"{r['underflow']:.0%}",
                {"agree": "yes", "DISAGREE": "NO"}.get(outcome(r), outcome(r))]
               for r in conf["rows"]])  # fmt: skip
    path = plot_confirmation(conf, cfg.params.qeq, figdir / "verdict_confirmation.png")
    caption = ("Hot queue of the packet runs across the predicted boundary of the worst N "
               f"and at the worst point; {n_agree} of {len(conf['rows'])} agree with the "
               "model.")  # fmt: skip
    doc.figure(path, caption)
    return [(path, caption)]


def _headline(doc, verdict) -> None:
    """The one-paragraph verdict and the fields without effect (the report's first screen)."""
    doc.heading("Verdict")
    doc.paragraph(verdict.headline)
    for note in verdict.notes:
        doc.paragraph(f"Note: {note}.")


def _validity_section(doc, verdict, packet: bool = True) -> None:
    """Where the verdict's model is not confirmed by the packets: the regions of its validity
    domain that the ranges reach, each with the validation's mechanism (``packet``: whether
    this report runs the packet confirmation)."""
    doc.heading("Validity domain")
    if not verdict.validity:
        doc.paragraph("The ranges lie inside the domain where `qcnmodel validate` confirms "
                      "the model against the packet simulator.")  # fmt: skip
        return
    doc.paragraph(
        "Parts of the ranges lie where `qcnmodel validate` found the model and the packet "
        "simulator apart; the verdict there is the model's, not confirmed (the packet-level "
        + ("confirmation below tests the boundary):" if packet
           else "confirmation tests the boundary; it is not run in this report):")
    )  # fmt: skip
    doc.table(["region", "what the validation found", "mechanism"],
              [[v["where"], v["effect"], f"{v['finding']}: {v['mechanism']}"]
               for v in verdict.validity])  # fmt: skip


def _intro(doc, cfg: ReportConfig, verdict) -> None:
    from qcnmodel import __version__

    p = cfg.params
    doc.paragraph(
        f"Generated by qcnmodel {__version__}. Models: the {verdict.model_label} (`--model "
        f"{verdict.model} --variant {verdict.model_variant}`: the reaction points of IEEE "
        "802.1Qau-2010 as a renewal population whose byte-counter and timer cycles end at "
        "jittered ages after each CNM, with the congestion point's sampled feedback, its "
        "trajectories following every flow; the model the packet simulator validates, "
        "`qcnmodel validate`), linearised at its equilibrium, and the "
        "first-order-lag-plus-delay view of the IBM Zurich deck "
        '"Toward a Scalable and Robust QCN". The published cycle-averaged equations '
        '(Alizadeh et al., "Data center transport mechanisms: congestion control theory and '
        'IEEE standardization", Allerton 2008) are the alternative `--variant paper`. All '
        "margins use the exact delay e^(-s*RTT) (no Pade approximant); `stable` is the "
        "Nyquist (argument-principle) verdict, not just the sign of the phase margin; phase "
        "margins in text and figures are wrapped to (-180, 180] deg."
    )
    doc.heading("Parameters")
    doc.table(
        ["field", "value"],
        [["line rate", f"{p.line_rate / 1e9:g} Gb/s"],
         ["congestion point C", f"{_capacity(cfg) / 1e9:g} Gb/s"], ["Qeq", f"{p.qeq:g} B"],
         ["w", p.w],
         ["Gd", p.gd], ["Ps (base)", p.ps], ["BC_LIMIT", f"{p.bc_limit:g} B"],
         ["timer T", f"{p.timer * 1e3:g} ms"], ["R_AI", f"{p.r_ai / 1e6:g} Mb/s"],
         ["R_HAI", f"{p.r_hai / 1e6:g} Mb/s"], ["FR_TH", p.fr_th],
         ["MIN_RATE", f"{p.min_rate / 1e6:g} Mb/s"], ["Fb bits", p.fb_bits]],
    )  # fmt: skip


def _points_section(doc, cfg: ReportConfig, rows=None) -> None:
    doc.heading("Margins at representative operating points")
    linear = "Delay margin = phase margin / crossover frequency (of the linearised loop); "
    if _method(cfg) == "model" and cfg.variant != "paper":  # the trajectories judge QCN
        linear += (
            f"the FOPDT rows' critical RTT is RTT + delay margin. The {_qcn_name(cfg)} rows' "
            "critical RTT and verdict are the model's trajectories' (the RTT where the odds "
            "that a run from idle oscillates or underflows pass one half); its linearised "
            "loop's critical RTT, with the parameter set's own sampling, is RTT + delay margin."
        )
    else:
        linear += "critical RTT = RTT + delay margin."
    doc.paragraph(
        "N flows share one congestion point of capacity C; RTT is the loop delay "
        "(CP -> RP -> CP). " + linear
    )
    doc.table(
        ["model", "N", "RTT (us)", "PM (deg)", "GM (dB)", "delay margin (us)",
         "critical RTT (us)", "verdict"], _point_rows(cfg) if rows is None else rows, left=1,
    )  # fmt: skip


def _critical_section(doc, cfg: ReportConfig, grid, verdict=None) -> None:
    judged = getattr(verdict, "judged_flows", ())
    if judged:
        doc.heading(f"Critical RTT of the QCN loop ({_qcn_name(cfg)} model, trajectories)")
        bands = getattr(verdict, "stable_bands", {})
        doc.paragraph("The verdict's critical RTT per N: where the odds that a run of the "
                      "model's trajectories from idle oscillates or underflows pass one half "
                      "(the phase margin does not decide); where they are unstable from the "
                      "smallest RTT checked, the band above it where they are stable.")  # fmt: skip
        doc.table(["N", "critical RTT (us)", "stable band (us)"],
                  [[n, c * 1e6, f"{b[0] * 1e6:.4g} .. {b[1] * 1e6:.4g}" if (b := bands.get(n))
                    else ""] for n, c in verdict.critical_rtt_s.items()])  # fmt: skip
    crit = grid["critical_rtt"]
    own_w, own_ps, sampling = _fixed_ps(cfg)
    doc.heading(f"Critical RTT of the linearised loop ({_qcn_name(cfg)} model, fixed Ps)")
    doc.paragraph(
        f"Largest RTT with a positive phase margin, in microseconds, over N (rows) and the "
        f"feedback weight W at Ps = {cfg.ps_values[0]:.0%} (left) and over Ps at "
        f"W = {cfg.weights[0]:g} (right). {sampling} The full grid (RTT "
        f"{cfg.rtt_min * 1e6:g} us .. {cfg.rtt_max * 1e3:g} ms x N x W x Ps) is in `margins.nc`."
        + (" These are the mean field's linearisation, the sensitivity to W and Ps at a cost "
           "that a grid allows; the verdict's critical RTT is the trajectories' (above), and "
           "the validity domain says where the two part." if judged else "")
    )  # fmt: skip
    header = (["N"] + [f"W={w:g}" + "*" * (w in own_w) for w in cfg.weights]
              + [f"Ps={ps:.0%}" + "*" * (ps in own_ps) for ps in cfg.ps_values])  # fmt: skip
    crit_rows = []
    for n in cfg.flows:
        r = [n]
        r += [float(crit.sel(w=w, ps=cfg.ps_values[0], n_flows=n)) * 1e6 for w in cfg.weights]
        r += [float(crit.sel(w=cfg.weights[0], ps=ps, n_flows=n)) * 1e6 for ps in cfg.ps_values]
        crit_rows.append(r)
    doc.table(header, crit_rows)
    if np.isnan([v for r in crit_rows for v in r[1:]]).any():
        doc.paragraph(
            "n/a: the model has no equilibrium there (no feedback level holds the "
            "flows at their fair share, or only one below an empty queue, where its "
            "noisy feedback cuts the flows below C/N): no margin is defined."
        )


def _fixed_ps(cfg: ReportConfig) -> tuple[set, set, str]:
    """The columns of the linearised loop's critical-RTT tables that are the parameter set's
    own point (W in the left table, Ps in the right; none where the model samples by the set's
    table), and the sentence that says the grid fixes the sampling probability."""
    p = cfg.params
    if p.sampling == "table" and cfg.variant != "paper":  # the published equations: fixed
        return set(), set(), (
            "Ps is fixed throughout this grid: it replaces the parameter set's sampling table "
            "(IEEE 802.1Qau's, whose sampling probability follows the queue's feedback level; "
            f"Ps = {p.ps:.3g} is its first entry), so no column is the parameter set's own "
            "loop, whose linearised critical RTT is RTT + delay margin in the representative "
            "points and the figures' captions.")  # fmt: skip
    left = cfg.ps_values[0]
    own_w = {w for w in cfg.weights if np.isclose(left, p.ps) and np.isclose(w, p.w)}
    own_ps = {ps for ps in cfg.ps_values
              if np.isclose(cfg.weights[0], p.w) and np.isclose(ps, p.ps)}  # fmt: skip
    how = "the parameter set samples" if p.sampling == "fixed" else "the published equations sample"
    where = ("the columns marked * are the parameter set's own point" if own_w or own_ps
             else "no column is the parameter set's own point")  # fmt: skip
    return own_w, own_ps, (f"Ps is fixed throughout this grid, as {how} (Ps = {p.ps:.3g}, "
                           f"W = {p.w:g}): {where}.")  # fmt: skip


def _capacity(cfg: ReportConfig) -> float:
    """The congestion point's service rate (bit/s): the config's, else the line rate."""
    return cfg.params.line_rate if cfg.capacity is None else cfg.capacity
