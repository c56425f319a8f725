"""`qcnmodel report` writes a self-contained HTML report, Markdown, figures and the grid."""

import dataclasses

import numpy as np
import pytest
import xarray as xr

from qcnmodel.params import QCNParams
from qcnmodel.studies.report import ReportConfig, compute_margins_grid, write_report


def small_config(**kw):
    kw.setdefault("recommend", False)  # the fix search is tested in test_check.py
    return ReportConfig(
        n_rtt=12, flows=(1, 10, 100), weights=(2.0, 8.0), ps_values=(0.01, 0.05), packet=False, **kw
    )


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
    # unstable at every RTT (negative); no point is left undefined
    assert not np.isnan(grid["critical_rtt"].values).any()
    assert "packet-fidelity" in grid.attrs["model"]
    grid.close()


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
def test_figures_are_deterministic(tmp_path):
    a = write_report(tmp_path / "a", small_config(), progress=False)
    b = write_report(tmp_path / "b", small_config(), progress=False)
    for fa, fb in zip(a["figures"], b["figures"]):
        assert open(fa, "rb").read() == open(fb, "rb").read(), fa


def test_bad_config():
    with pytest.raises(ValueError, match="rtt"):
        ReportConfig(rtt_min=1e-3, rtt_max=1e-6)
    with pytest.raises(ValueError, match="ps_values"):
        ReportConfig(ps_values=(0.0,))


def test_compilation_is_announced_once_on_stderr(capsys, monkeypatch):
    from qcnmodel.studies import compiling

    monkeypatch.setattr(compiling, "_ready", lambda what: False)
    compiling.announce_compile("sim")
    compiling.announce_compile("fluid", enabled=False)  # --quiet: nothing
    err = capsys.readouterr().err
    assert err.count("compiling") == 1 and "the packet simulator" in err
    monkeypatch.setattr(compiling, "_ready", lambda what: True)
    compiling.announce_compile("loop")  # already compiled in this process: nothing
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="what"):
        compiling.announce_compile("kernel")


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
    assert "at 0.8 x and 1.25 x the model's critical RTT for the worst N" in md
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
