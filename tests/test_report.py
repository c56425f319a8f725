"""`qcnmodel report` writes a self-contained HTML report, Markdown, figures and the grid."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from qcnmodel.params import QCNParams
from qcnmodel.studies.report import ReportConfig, compute_margins_grid, write_report


def small_config(**kw):
    kw.setdefault("recommend", False)  # the fix search is tested in test_check.py
    kw = {"n_rtt": 12, "flows": (1, 10, 100), "weights": (2.0, 8.0), "ps_values": (0.01, 0.05),
          **kw}  # fmt: skip
    return ReportConfig(packet=False, **kw)


def test_grid_matches_single_point_margins():
    cfg = small_config()
    grid = compute_margins_grid(cfg)
    assert grid["phase_margin_deg"].dims == ("w", "ps", "n_flows", "rtt")
    # One grid point recomputed from scratch through the public model API.
    from qcnmodel.models.qcn import QCNFluidModel

    rtt = float(grid.rtt[5])
    m = QCNFluidModel(QCNParams().replace(w=8.0), rtt=rtt, n_flows=10, ps=0.05).loop().margins()
    got = float(grid["phase_margin_deg"].sel(w=8.0, ps=0.05, n_flows=10, rtt=rtt))
    assert got == pytest.approx(m.phase_margin_deg, rel=1e-9, abs=1e-9)  # same arithmetic


def test_write_report(tmp_path):
    from qcnmodel.studies.check import check_params

    cfg = small_config()
    paths = write_report(tmp_path / "rep", cfg, progress=False)
    html = (tmp_path / "rep" / "report.html").read_text()
    md = (tmp_path / "rep" / "report.md").read_text()
    assert html.count("data:image/png;base64,") == len(paths["figures"]) >= 5
    for needle in ("Critical RTT", "Worst case", "sampling lag", "Margins at representative"):
        assert needle in md
    # the verdict opens the report, names the model, and is the check's over the same ranges
    first = md.split("## Verdict", 1)[1].strip().split("\n")[0]
    assert md.index("## Verdict") < md.index("## Parameters")
    assert first == check_params(cfg.params, cfg.check_ranges(), recommend=False).headline
    assert "QCN packet-fidelity fluid model" in first
    # the validity domain follows the verdict, with each reached region's finding
    assert md.index("## Verdict") < md.index("## Validity domain") < md.index("## Parameters")
    verdict = check_params(cfg.params, cfg.check_ranges(), recommend=False)
    for v in verdict.validity:
        assert v["where"] in md and v["finding"] in md
    grid = xr.open_dataset(paths["margins"], engine="h5netcdf")
    # N = 1 at the line rate has no congestion (open loop: infinite critical RTT); N = 100 is
    # unstable at every RTT (negative); a point is undefined (n/a) exactly where the model
    # has no equilibrium with a standing queue
    from qcnmodel.models.qcn import QCNFluidModel

    crit = grid["critical_rtt"]
    for w in crit.w.values:
        for ps in crit.ps.values:
            for n in crit.n_flows.values:
                v = float(crit.sel(w=w, ps=ps, n_flows=n))
                m = QCNFluidModel(cfg.params.replace(w=float(w)), n_flows=int(n), ps=float(ps))
                if np.isnan(v):
                    with pytest.raises(ValueError, match="standing queue"):
                        m.fixed_point()
                else:
                    m.fixed_point()
    assert "packet-fidelity" in grid.attrs["model"]
    grid.close()
    # written in a temporary folder beside it, then moved in: the paths are the folder's own
    rep = (tmp_path / "rep").resolve()
    for p in (paths["markdown"], paths["html"], paths["margins"], *paths["figures"]):
        assert Path(p).resolve().parent in (rep, rep / "figures") and Path(p).exists(), p
    assert sorted(q.name for q in tmp_path.iterdir()) == ["rep"]


def test_an_interrupted_report_leaves_its_folder_as_it_was(tmp_path, monkeypatch):
    """Ctrl-C while the report writes (here after its grid and figures): no report folder,
    no temporary folder; into an existing folder, its files stay as they were."""
    import qcnmodel.studies.report as report

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "_claim_section", interrupt)
    # a smaller report (one W and Ps, two N, one point): the folder's fate does not depend on
    # its size, and the interrupt still comes after the grid is written into it
    cfg = small_config(n_rtt=6, flows=(1, 10), weights=(2.0,), ps_values=(0.01,),
                       point_flows=(10,), point_rtts=(100e-6,))  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        write_report(tmp_path / "rep", cfg, progress=False)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.md").write_text("earlier report")
    with pytest.raises(KeyboardInterrupt):
        write_report(tmp_path / "old", cfg, progress=False)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["old"]
    assert [q.name for q in (tmp_path / "old").iterdir()] == ["report.md"]
    assert (tmp_path / "old" / "report.md").read_text() == "earlier report"


@pytest.mark.slow  # a whole report through the CLI, ~15 s
def test_report_figure_count_matches_the_cli(tmp_path, capsys, monkeypatch):
    # the CLI's "N figures" line counts what the report embeds
    from qcnmodel.cli import main
    from qcnmodel.studies import report as report_mod

    monkeypatch.setattr(report_mod, "ReportConfig", lambda **kw: small_config(
        **{k: v for k, v in kw.items() if k in ("params", "preset")}))  # fmt: skip
    assert main(["report", "--out", str(tmp_path / "r"), "--quiet", "--no-packet"]) == 0
    out = capsys.readouterr().out
    html = (tmp_path / "r" / "report.html").read_text()
    assert f"and {html.count('data:image/png;base64,')} figures" in out


@pytest.mark.slow  # two reports, ~35 s
def test_figures_are_deterministic_and_the_parallel_report_equals_the_sequential(tmp_path):
    # jobs=2 computes the grid, the points and the model's figures in a forked worker while
    # the check runs: every byte must be that of the sequential report
    a = write_report(tmp_path / "a", small_config(jobs=1), progress=False)
    b = write_report(tmp_path / "b", small_config(jobs=2), progress=False)
    assert [f.rsplit("/", 1)[1] for f in a["figures"]] == [f.rsplit("/", 1)[1]
                                                          for f in b["figures"]]  # fmt: skip
    for fa, fb in zip(a["figures"], b["figures"]):
        assert open(fa, "rb").read() == open(fb, "rb").read(), fa

    def text(paths):
        lines = open(paths["markdown"]).read().splitlines()
        return [ln for ln in lines if not ln.startswith("Computed in")]

    assert text(a) == text(b)
    assert open(a["margins"], "rb").read() == open(b["margins"], "rb").read()


def test_tasks_in_a_worker_equal_this_process(tmp_path):
    # the worker's grid block and representative points are those this process computes
    from qcnmodel.studies.report import _grid_block, _point_rows
    from qcnmodel.studies.report_tasks import Tasks

    cfg = dataclasses.replace(small_config(jobs=2), weights=(8.0,), ps_values=(0.05,),
                              flows=(10,), point_flows=(10,), point_rtts=(1e-4,),
                              trajectories=False)  # fmt: skip
    # points judged by trajectories wait for the check (its critical RTTs are then memoised)
    judged = Tasks(dataclasses.replace(cfg, trajectories=True), tmp_path, workers=1)
    try:
        assert ("points", None) not in judged.futs and ("models", None) in judged.futs
    finally:
        judged.close()
    tasks = Tasks(cfg, tmp_path, workers=1)
    try:
        tasks.futs.pop(("models", None)).cancel()  # figures: tested with the whole report
        done = tasks.collect(cfg)
    finally:
        tasks.close()
    assert set(done) == {("points", None), ("grid", (8.0, 0.05))}
    assert done[("points", None)] == _point_rows(cfg)
    assert done[("grid", (8.0, 0.05))].identical(_grid_block(cfg, 8.0, 0.05))
    # a check that settles on another configuration discards the queued results
    other = Tasks(cfg, tmp_path, workers=0)
    assert other.collect(dataclasses.replace(cfg, variant="paper")) == {}


def test_a_part_the_worker_could_not_run_is_run_here(tmp_path):
    # e.g. an argument that does not pickle, or a lost worker: the part is computed here
    from concurrent.futures import Future

    from qcnmodel.studies.report import _point_rows
    from qcnmodel.studies.report_tasks import Tasks

    cfg = dataclasses.replace(small_config(), point_flows=(10,), point_rtts=(1e-4,))
    tasks = Tasks(cfg, tmp_path, workers=0)
    lost = Future()
    lost.set_running_or_notify_cancel()
    lost.set_exception(RuntimeError("worker lost"))
    tasks.futs = {("points", None): lost}
    assert tasks.collect(cfg) == {("points", None): _point_rows(cfg)}


def test_worker_count(monkeypatch):
    # one worker when a core is left besides this process and a background compilation
    import os

    from qcnmodel.studies.report_tasks import workers

    bg = object()
    assert workers(small_config(jobs=1), None) == 0
    assert workers(small_config(jobs=2), None) == 1
    assert workers(small_config(jobs=2), bg) == 0  # the compilation keeps the second core
    assert workers(small_config(jobs=3), bg) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})  # default: the cores
    assert workers(small_config(), None) == 1 and workers(small_config(jobs=-1), bg) == 0
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert workers(small_config(), None) == 0


def test_settled_config_predicts_the_checks_fallback():
    from qcnmodel.studies.report_tasks import compiled_parts, settled

    cfg = small_config()
    assert settled(cfg) is cfg and compiled_parts(cfg) == ["loop", "fluid"]
    drift = small_config(params=QCNParams().replace(drift_period=1e-3))  # not packet fidelity
    assert settled(drift).variant == "paper"
    assert compiled_parts(settled(drift)) == []
    assert compiled_parts(dataclasses.replace(cfg, packet=True)) == ["loop", "fluid", "sim"]


def test_bad_config():
    with pytest.raises(ValueError, match="rtt"):
        ReportConfig(rtt_min=1e-3, rtt_max=1e-6)
    with pytest.raises(ValueError, match="ps_values"):
        ReportConfig(ps_values=(0.0,))


def test_compilation_is_announced_once_on_stderr(capsys, monkeypatch):
    from qcnmodel.studies import compiling

    monkeypatch.setattr(compiling, "_ANNOUNCED", set())
    monkeypatch.setattr(compiling, "_ready", lambda what: False)
    compiling.announce_compile("sim")
    compiling.announce_compile("sim")  # named already: not again
    compiling.announce_compile("fluid", enabled=False)  # --quiet: nothing
    err = capsys.readouterr().err
    assert err.count("compiling") == 1 and "the packet simulator" in err
    monkeypatch.setattr(compiling, "_ready", lambda what: True)
    compiling.announce_compile("loop")  # already compiled or cached: nothing
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="what"):
        compiling.announce_compile("kernel")


def test_one_line_names_everything_the_report_compiles(capsys, monkeypatch):
    from qcnmodel.studies import compiling

    monkeypatch.setattr(compiling, "_ANNOUNCED", set())
    monkeypatch.setattr(compiling, "_ready", lambda what: what == "loop")
    assert compiling.announce_all(["loop", "fluid", "sim"], background=True) == ["fluid", "sim"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("qcnmodel: compiling")
    assert "trajectory kernel and the packet simulator" in err[0] and "once" in err[0]
    assert "background" in err[0] and "cohort kernel" not in err[0]
    compiling.announce_compile("sim")  # named by that line: silent later
    assert compiling.announce_all(["fluid", "sim"]) == []
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="what"):
        compiling.pending(["kernel"])


def test_cache_state_is_read_from_numba(tmp_path, monkeypatch):
    # a dispatcher never compiled and absent from an empty cache is not ready
    import numba

    from qcnmodel.studies import compiling

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))  # read per function

    @numba.njit(cache=True)
    def twice(x):
        return 2 * x

    assert not compiling._cached(twice)
    twice(1)  # compiles and saves into the cache
    assert compiling._cached(twice)


def test_background_compilation_waits_and_loads(monkeypatch):
    # the forked process runs the compilation; wait() joins it and loads the kernel here
    from qcnmodel.sim.kernel import loop
    from qcnmodel.studies import compiling

    loaded = []
    monkeypatch.setattr(compiling, "_compile_sim", lambda family: None)
    monkeypatch.setattr(loop, "warm_up", lambda family="qcn": loaded.append(family) or 0.0)
    bg = compiling.Background("qcn")
    bg.wait()
    assert bg.proc.exitcode == 0 and loaded == ["qcn"]
    bg.close()
    monkeypatch.setattr(compiling, "_ready", lambda what, family="qcn": True)
    assert compiling.compile_in_background("qcn") is None  # nothing to compile


def test_report_confirms_its_headline_boundary(tmp_path):
    # the headline verdict is put to the packets as `check --confirm` does: both sides of the
    # worst N's critical RTT and the worst point, a table row and a figure panel each (a
    # tiny run: the wiring, not the model)
    from types import SimpleNamespace

    from qcnmodel.document import Document
    from qcnmodel.studies.report import _confirm_section

    cfg = dataclasses.replace(small_config(confirm_duration=0.03, jobs=2), flows=(4, 10))
    # the check's critical RTTs at N = 4 and 10 (printed by critical_rtt: 503 and 315.5 us)
    # and its worst point over these ranges
    verdict = SimpleNamespace(critical_rtt_s={4: 503.0e-6, 10: 315.5e-6},
                              worst_point={"n_flows": 10, "rtt_s": 1e-3})  # fmt: skip
    doc = Document("t")
    figs = _confirm_section(doc, cfg, verdict, cfg.check_ranges(), tmp_path)
    md = doc.to_markdown()
    for factor in ("0.8", "1.25"):
        assert f"| {factor} x critical RTT at the worst N = 10 (315.5 us) |" in md
    assert "| worst point of the ranges | 10 | 1000 |" in md
    # the paragraph names the points run by their roles (not a fixed sentence about them)
    assert "at the 0.8 x critical RTT at the worst N = 10 (315.5 us) (N = 10, RTT = 252.4 us)" in md
    assert md.count("| yes |") + md.count("| NO |") + md.count("| inconclusive |") == 3
    assert len(figs) == 1 and figs[0][0].read_bytes()[:4] == b"\x89PNG"


def test_report_confirmation_options_are_checked():
    with pytest.raises(ValueError, match="confirm: run length"):
        ReportConfig(confirm_duration=0.0)
    with pytest.raises(ValueError, match="jobs"):
        ReportConfig(jobs=0)


def test_report_jobs_option(capsys):
    from qcnmodel.cli import build_parser, main
    from qcnmodel.cli.report import report_config

    assert report_config(build_parser().parse_args(["report", "--jobs", "2"])).jobs == 2
    assert report_config(build_parser().parse_args(["report"])).jobs is None
    assert main(["report", "--jobs", "0"]) == 2
    assert "jobs" in capsys.readouterr().err


@pytest.mark.slow  # a whole report (~30 s on a slow 2-core machine)
def test_a_report_over_flow_counts_unstable_or_overloaded_everywhere(tmp_path):
    # N = 600 is unstable at every RTT in the linearised loop (no positive critical RTT) and
    # N = 2000 is overloaded (no equilibrium): the report still answers, drawing its loop
    # figures at the held flow count and saying where the critical RTT is missing
    cfg = ReportConfig(n_rtt=8, flows=(600, 2000), weights=(2.0,), ps_values=(0.01,),
                       packet=False, recommend=False)  # fmt: skip
    paths = write_report(tmp_path / "rep", cfg, progress=False)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "UNSTABLE" in md and "N = 2000, where the feedback cannot hold the flows" in md
    assert "linearised critical RTT none: unstable at every RTT at N = 600" in md
    assert "3 x the reference RTT" in md
    assert len(paths["figures"]) >= 4


def test_the_trajectories_table_gives_a_stable_band():
    # a flow count whose runs cycle from the smallest RTT checked has no critical RTT; the
    # check's band above it, where they are stable, gets its own column
    from types import SimpleNamespace

    from qcnmodel.document import Document
    from qcnmodel.studies.report import _critical_section

    cfg = small_config()
    verdict = SimpleNamespace(judged_flows=(10, 100), critical_rtt_s={10: 5e-4, 100: np.nan},
                              stable_bands={100: (1.8e-4, 5.1e-4)})  # fmt: skip
    doc = Document("t")
    _critical_section(doc, cfg, compute_margins_grid(cfg), verdict)
    md = doc.to_markdown()
    assert "| N | critical RTT (us) | stable band (us) |" in md
    assert "| 100 | n/a | 180 .. 510 |" in md and "| 10 | 500 |  |" in md


def test_points_section_says_whose_critical_rtt_each_row_gives():
    # the QCN rows' critical RTT is the trajectories' when they judge, not RTT + delay margin
    from qcnmodel.document import Document
    from qcnmodel.studies.report import _points_section

    def text(**kw):
        doc = Document("t")
        _points_section(doc, ReportConfig(**kw), rows=[])
        return doc.to_markdown()

    judged = text(trajectories=True)
    assert "rows' critical RTT and verdict are the model's trajectories'" in judged
    assert "critical RTT = RTT + delay margin" not in judged
    for kw in ({"trajectories": False}, {"variant": "paper"}):
        assert "critical RTT = RTT + delay margin." in text(**kw)


def test_the_figures_reference_rtt_lies_in_the_reports_range():
    # Bode, Nyquist and step figures were drawn at 100 us for a report over 10-20 us
    from qcnmodel.studies.report_figures import _names

    assert _names(ReportConfig())[1]["rtt"] == 100e-6  # the default range holds it
    ref = _names(ReportConfig(rtt_min=10e-6, rtt_max=20e-6))[1]
    assert ref["rtt"] == pytest.approx((10e-6 * 20e-6) ** 0.5)
