"""`qcnmodel check --rate`: a congestion point slower than the line rate (a hotspot port)."""

import json

import pytest

from qcnmodel.cli import main
from qcnmodel.params import QCNParams
from qcnmodel.studies.check import CheckRanges, check_params


def test_a_slower_port_loads_one_flow_and_judges_it_by_its_trajectories():
    p = QCNParams.preset("802.1qau")
    at_line = check_params(p, CheckRanges(rtt=(20e-6, 1e-3), flows=(1, 1), n_rtt=12,
                                          n_flows=1), recommend=False)  # fmt: skip
    # at the line rate one flow cannot load the port: no loop, stable everywhere
    assert at_line.verdict == "stable" and at_line.critical_rtt_s[1] == float("inf")
    hot = check_params(p, CheckRanges(rtt=(20e-6, 1e-3), flows=(1, 1), n_rtt=12, n_flows=1,
                                      capacity=5e9), recommend=False)  # fmt: skip
    crit = hot.critical_rtt_s[1]
    assert 300e-6 < crit < 400e-6  # the single-flow boundary (packets: 367-400 us)
    assert hot.verdict == "unstable"  # the ranges reach beyond it
    assert any("judged by the model's trajectories" in n for n in hot.notes)
    assert "into a 5 Gb/s port" in hot.headline
    # the worst point is the one flow's, and the headline says what decided it
    assert hot.judged_flows == (1,) and hot.to_dict()["judged_by_trajectories"] == [1]
    assert "N = 1, RTT = 1 ms, judged by the model's trajectories" in hot.headline
    below = check_params(p, CheckRanges(rtt=(20e-6, 0.9 * crit), flows=(1, 1), n_rtt=12,
                                        n_flows=1, capacity=5e9), recommend=False)  # fmt: skip
    # stable by the trajectories although the linearised margin may be small
    assert all(below.critical_rtt_s[1] > r for r in (20e-6, 0.9 * crit))
    # stable by the trajectories: the linearised phase margin (below 30 deg here) does not
    # make it marginal
    assert below.verdict == "stable" and below.worst_phase_margin_deg < 30


def test_rate_from_the_file_and_the_flag(tmp_path, capsys):
    f = tmp_path / "hot.toml"
    f.write_text('preset = "802.1qau"\n[ranges]\nrtt = "20us..100us"\nflows = "10..10"\n'
                 'capacity = "5Gbps"\n')  # fmt: skip
    main(["check", str(f), "--json", "--no-recommend"])
    out = json.loads(capsys.readouterr().out)
    assert out["capacity_bps"] == 5e9 and "5 Gb/s port" in out["headline"]
    main(["check", str(f), "--json", "--no-recommend", "--rate", "2.5Gbps"])  # the flag wins
    assert json.loads(capsys.readouterr().out)["capacity_bps"] == 2.5e9


@pytest.mark.parametrize("rate", ["-3Gbps", "fast", "0"])
def test_a_bad_rate_exits_2_naming_the_field(rate, capsys):
    assert main(["check", "--preset", "802.1qau", "--rate", rate]) == 2
    assert "rate" in capsys.readouterr().err


def test_the_report_takes_the_port_rate_from_the_file_or_the_flag(tmp_path):
    import argparse

    from qcnmodel.cli.report import register, report_config

    f = tmp_path / "hot.toml"
    f.write_text('preset = "802.1qau"\n[ranges]\ncapacity = "5Gbps"\n')
    ap = argparse.ArgumentParser()
    register(ap.add_subparsers())
    cfg = report_config(ap.parse_args(["report", "--params", str(f)]))
    assert cfg.capacity == 5e9 and cfg.check_ranges().capacity == 5e9
    cfg = report_config(ap.parse_args(["report", "--params", str(f), "--rate", "2Gbps"]))
    assert cfg.capacity == 2e9
    assert report_config(ap.parse_args(["report"])).capacity is None  # the line rate


def test_the_report_refuses_to_confirm_a_port_faster_than_its_links(capsys):
    """The packet confirmation's port serves at most the sources' line rate: --confirm yes
    with --rate above it is refused before the analysis (it failed after it, losing the
    report); the default (auto) leaves the confirmation out and says so."""
    import argparse

    from qcnmodel.cli.report import register, report_config

    ap = argparse.ArgumentParser()
    register(ap.add_subparsers())
    with pytest.raises(ValueError, match=r"rate: .*\(0, 10\] Gb/s"):
        report_config(ap.parse_args(["report", "--rate", "15Gbps", "--confirm", "yes"]))
    cfg = report_config(ap.parse_args(["report", "--rate", "15Gbps"]))
    assert cfg.packet is False and cfg.capacity == 15e9
    assert "packet confirmation is left out" in capsys.readouterr().err
    assert report_config(ap.parse_args(["report", "--rate", "5Gbps"])).packet == "auto"


def test_a_map_marks_points_without_equilibrium_instead_of_failing():
    import numpy as np

    import qcnmodel as qm

    # 2000 flows at their rate floor (MinRate 5 Mb/s) alone offer twice a 5 Gb/s port: no
    # feedback level holds them (overloaded). 100 flows are held: the packets drain the
    # start's backlog by 1.2 s and hold about 150 KB (the model: 99 KB); the model once
    # refused there, from a cohort path that overflowed at the line rate
    m = qm.QCNFluidModel(capacity=5e9, ps=0.01)
    ds = qm.stability_map(m, x_values=np.array([1e-4, 2e-4]), y_values=[10, 100, 2000])
    assert ds.valid.sel(n_flows=[10, 100]).all() and not ds.valid.sel(n_flows=2000).any()


def test_the_confirmation_runs_at_the_port_rate(monkeypatch):
    import qcnmodel.validation.network as net
    from qcnmodel.studies.confirm import simulate_point

    seen = {}

    def spy(n, rtt, capacity, **kw):
        seen["capacity"] = capacity
        raise RuntimeError("stop here")

    monkeypatch.setattr(net, "bottleneck_spec", spy)
    with pytest.raises(RuntimeError, match="stop here"):
        simulate_point(QCNParams(), 0.1, 0, 2, 100e-6, capacity=5e9)
    assert seen["capacity"] == 5e9
    with pytest.raises(RuntimeError, match="stop here"):
        simulate_point(QCNParams(), 0.1, 0, 2, 100e-6)
    assert seen["capacity"] == QCNParams().line_rate


def test_confirm_says_which_points_the_trajectories_judge(tmp_path, capsys):
    code = main(["check", "--preset", "802.1qau", "--rate", "5Gbps", "--flows", "1", "--rtt",
                 "100us..600us", "--no-recommend", "--confirm", "0.6s", "--figure",
                 str(tmp_path / "c.png")])  # fmt: skip
    out = capsys.readouterr().out
    assert "model stable (trajectories; linearised PM" in out
    assert "AGREES" in out and code == 1  # unstable over the ranges, and the packets agree


def test_the_report_tables_say_which_boundary_and_what_a_missing_equilibrium_means():
    from types import SimpleNamespace

    import numpy as np
    import xarray as xr

    from qcnmodel.document import Document
    from qcnmodel.studies.report import ReportConfig, _critical_section

    crit = xr.DataArray([[[3.4e-4, np.nan]]], dims=("w", "ps", "n_flows"),
                        coords={"w": [2.0], "ps": [0.01], "n_flows": [1, 100]})  # fmt: skip
    verdicts = (SimpleNamespace(judged_flows=(1, 100), critical_rtt_s={1: 3.1e-4, 100: 2e-4}),
                None)  # fmt: skip
    texts = []
    for verdict in verdicts:
        cfg = ReportConfig(flows=(1, 100), weights=(2.0,), ps_values=(0.01,), capacity=5e9)
        doc = Document("t")
        _critical_section(doc, cfg, xr.Dataset({"critical_rtt": crit}), verdict)
        texts.append(doc.to_markdown())
    # the verdict's boundary (the trajectories') first, then the linearisation's grid
    assert "model, trajectories)" in texts[0] and "| 100 | 200 |" in texts[0]
    assert texts[0].index("trajectories)") < texts[0].index("of the linearised loop")
    assert "trajectories)" not in texts[1] and "of the linearised loop" in texts[1]
    assert all("n/a: the model has no equilibrium there" in t for t in texts)
