"""The parts of the stability report that can run apart (private helper of
:mod:`qcnmodel.studies.report`).

* :func:`settled`: the report's configuration as the check will settle it (the published
  equations where the packet-fidelity model does not cover the parameter set), known before
  the check runs;
* :func:`resolve_auto`: whether the packet confirmation runs and the nonlinear trajectories
  are drawn (``"auto"``: only when their kernels are already compiled);
* :func:`compiled_parts` and :func:`family`: what the report runs compiled, for the one line
  on stderr of :mod:`qcnmodel.studies.compiling` and the simulator compiled in the background;
* :class:`Tasks`: the model's figures, the representative points and the grid's (W, Ps)
  blocks, which do not need the check, queued on a forked worker while this process runs the
  check (:func:`workers`: one when a core is free). A worker runs the same code on the same
  inputs as this process would, so the results are bit for bit those of a sequential run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from qcnmodel.studies.report import ReportConfig

__all__ = ["Tasks", "compiled_parts", "family", "resolve_auto", "settled", "warm_cohorts",
           "workers"]  # fmt: skip


def settled(cfg: ReportConfig) -> ReportConfig:
    """``cfg`` as the check will settle it: the published equations (``variant="paper"``)
    when the packet-fidelity model does not cover the parameter set (as
    :func:`~qcnmodel.studies.check.check_params` falls back)."""
    from qcnmodel.studies.verdict import qcn_or_paper

    if cfg.variant is not None or qcn_or_paper(cfg.params)[1] is None:
        return cfg
    return dataclasses.replace(cfg, variant="paper")


def family(params) -> str:
    """The simulator family of the report's packet runs (QCN on, no other protocol)."""
    from qcnmodel.studies.compiling import sim_family

    return sim_family(params)


def resolve_auto(cfg: ReportConfig) -> tuple[ReportConfig, list[str]]:
    """``cfg`` with ``packet`` and ``trajectories`` settled to True or False, and what
    ``"auto"`` left out only because it is not compiled yet (``"sim"``, ``"trajectories"``).

    ``packet="auto"`` runs the packet confirmation when the kernel of the report's simulator
    family is compiled in this process or in numba's cache (it then loads in seconds), as
    ``packet=True`` does; otherwise it is left out (compiling the kernel takes about a minute
    on 2 cores, once). ``trajectories="auto"`` draws the nonlinear trajectories of the
    packet-fidelity model when its trajectory kernels are compiled (about 20 s of CPU
    otherwise); the published equations' trajectories are always drawn. The report says
    what was left out and how to run it. True and False are kept as given."""
    from qcnmodel.studies import compiling

    left = []
    if cfg.packet == "auto":
        ready = compiling.sim_ready(family(cfg.params))
        cfg = dataclasses.replace(cfg, packet=ready)
        left += [] if ready else ["sim"]
    if cfg.trajectories == "auto":
        ready = not _packet_fidelity(settled(cfg)) or compiling.trajectories_ready()
        cfg = dataclasses.replace(cfg, trajectories=ready)
        left += [] if ready else ["trajectories"]
    return cfg, left


def _packet_fidelity(cfg: ReportConfig) -> bool:
    from qcnmodel.models import build_model

    return getattr(build_model("qcn", cfg.params, cfg.variant), "fidelity", "") == "packet"


def compiled_parts(cfg: ReportConfig) -> list[str]:
    """What the report runs compiled (:mod:`qcnmodel.studies.compiling` names)."""
    fluid = ["loop", "fluid"] if cfg.trajectories else ["loop"]
    return (fluid if _packet_fidelity(cfg) else []) + (["sim"] if cfg.packet else [])


def warm_cohorts(cfg: ReportConfig) -> None:
    """Compile (or load) the packet-fidelity model's cohort kernel in this process: its
    equilibrium at the reference point (10 flows, 100 us) runs it. Called before a worker is
    forked on a first run, so that the worker inherits it instead of compiling it at the same
    time (about 2.5 s of CPU each)."""
    from qcnmodel.models import build_model

    build_model("qcn", cfg.params, cfg.variant, rtt=100e-6, n_flows=10).fixed_point()


def workers(cfg: ReportConfig, bg) -> int:
    """Forked workers for the parallel parts: one when a core is left besides this process
    and the background compilation, else none. ``cfg.jobs`` counts the processes; by default
    (None or -1) the cores this process may use (``os.sched_getaffinity``), not only the idle
    ones: the parts are a bounded amount of work that time-shares a busy core with no loss,
    whereas the one-minute load average still counts a run that has just ended. While the
    simulator compiles in the background (the longest part of a first run) no worker is
    forked on 2 cores: it would slow that compilation down."""
    import multiprocessing as mp

    from qcnmodel.studies.sweep import usable_cores

    if "fork" not in mp.get_all_start_methods():  # pragma: no cover - not POSIX
        return 0
    jobs = usable_cores() if cfg.jobs in (None, -1) else int(cfg.jobs)
    return 1 if jobs - 1 - (bg is not None) >= 1 else 0


def _run_task(cfg: ReportConfig, figdir: Path, kind: str, arg):
    """One independent part of the report (in a worker or here)."""
    from qcnmodel.studies.report import _grid_block, _point_rows

    if kind == "grid":
        return _grid_block(cfg, *arg)
    if kind == "points":
        return _point_rows(cfg)
    from qcnmodel.studies import report_figures

    return report_figures.draw_models(cfg, figdir, progress=False)


class Tasks:
    """The parts of the report that do not need the check (the model's figures, the
    representative points, the grid's (W, Ps) blocks), queued on forked workers before the
    check starts. :meth:`collect` runs here whatever no worker has started yet. Points judged
    by the model's trajectories are left to this process, after the check: their critical
    RTTs are mostly the check's."""

    def __init__(self, cfg: ReportConfig, figdir: Path, workers: int):
        self.cfg, self.figdir, self.pool, self.futs = cfg, figdir, None, {}
        if workers < 1:
            return
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        from qcnmodel.studies.sweep import _ignore_sigint

        # the points judged by trajectories wait for the check: its critical RTTs (N = 100
        # among them, the costliest) are then in this process's memo
        keys = [("models", None)] + ([] if cfg.trajectories else [("points", None)])
        keys += [("grid", (w, ps)) for w in cfg.weights for ps in cfg.ps_values]
        self.pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"),
                                        initializer=_ignore_sigint)  # fmt: skip
        self.futs = {k: self.pool.submit(_run_task, cfg, figdir, *k) for k in keys}

    def collect(self, cfg: ReportConfig) -> dict:
        """``key -> result`` of every part, for ``cfg`` (empty when the check settled on
        another configuration than the one queued: the caller computes everything)."""
        if cfg != self.cfg:
            self.close()
            return {}
        out = {}
        keys = list(self.futs)
        while keys and self.futs[keys[-1]].cancel():  # not started: run it here
            key = keys.pop()
            out[key] = _run_task(cfg, self.figdir, *key)
        for key in keys:
            try:
                out[key] = self.futs[key].result()
            except Exception:  # the worker could not run it (e.g. a lost worker): run it here,
                out[key] = _run_task(cfg, self.figdir, *key)  # which raises a real error again
        return out

    def close(self) -> None:
        """Stop the workers (those still running on an error or Ctrl-C are terminated)."""
        if self.pool is None:
            return
        futs = list(self.futs.values())
        if any(not f.done() for f in futs):
            from qcnmodel.studies._pool import abandon

            abandon(self.pool, futs)
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = None
