"""DCQCN's stability boundary from its every-flow runs: margins, sweeps and maps judge the
registry's default (``packet``) by its runs, as they judge the packet-fidelity QCN model by
its trajectories.

The expected classes are the packet simulator's at the same points (the validation's matched
pairs: no cycle through Kmax at N = 2-6, a cycle from N = 8, at 25-100 us and 40 Gb/s),
taken from a packet run in the test where it is cheap, not from the code under test.
"""

import math

import numpy as np
import pytest

from qcnmodel import config
from qcnmodel.analysis.stability import stability_map
from qcnmodel.models import build_model
from qcnmodel.models.dcqcn_runs import run_length
from qcnmodel.models.summary import summary
from qcnmodel.studies.points import analysis_point


@pytest.fixture
def short_search(monkeypatch):
    """The runs' RTT search over 20-200 us (the validated 25-100 us and one ladder rung
    beyond), so that a search costs a few runs per rung, not the whole data-centre range."""
    monkeypatch.setitem(config.defaults, "analysis.runs_rtt_search", (20e-6, 200e-6))


def test_run_length_is_the_configured_one_on_the_validated_grid_and_stretches_beyond():
    for rtt in (25e-6, 100e-6, 125e-6):  # the validation's grid: 0.15 s, 50 ms settling
        assert run_length(build_model("dcqcn", rtt=rtt, n_flows=4)) == pytest.approx((0.15, 0.05))
    # 50 RTTs of settling and 400 of window at least (config "models.dcqcn_run")
    assert run_length(build_model("dcqcn", rtt=500e-6)) == pytest.approx((0.25, 0.05))
    assert run_length(build_model("dcqcn", rtt=2e-3)) == pytest.approx((0.9, 0.1))


def test_the_default_is_judged_by_its_runs_the_mean_field_by_its_linearisation(monkeypatch):
    assert build_model("dcqcn", n_flows=10).boundary_method == "trajectories"
    mf = build_model("dcqcn", None, "cnp-lag+stage-memory", n_flows=10)
    assert mf.boundary_method == "linearisation"
    monkeypatch.setitem(config.defaults, "analysis.trajectory_max_flows", 5)
    assert build_model("dcqcn", n_flows=10).boundary_method == "linearisation"


def test_odds_stop_early_when_the_first_runs_agree():
    m = build_model("dcqcn", rtt=50e-6, n_flows=20)  # cycles through Kmax in every run
    assert m.trajectory_odds(9, 3) == (3, 3)
    assert m.trajectory_verdicts(2) == ("cycles", "cycles")
    assert m.trajectory_unstable(3)


@pytest.mark.parametrize("n", [4, 10, 20])
def test_sweep_point_agrees_with_the_packets(n, short_search):
    """N = 4 shows no cycle at 50 us, N = 10 and 20 cycle through Kmax (N = 20 past the
    marking ramp, where the mean field has no fixed point: still judged, NaN margins)."""
    from qcnmodel.validation.dcqcn_pairs import sim_point

    sim = sim_point(n, 50e-6)
    out = analysis_point("dcqcn", None, {}, rtt=50e-6, n_flows=n)
    assert out["valid"] and out["stable"] == (not sim["cliff_cycle"])
    assert math.isnan(out["phase_margin_deg"]) == (n == 20)
    if out["stable"]:
        assert out["critical_rtt_s"] > 50e-6
    # the mean field alone has no verdict past the ramp
    mf = analysis_point("dcqcn", None, {}, variant="cnp-lag+stage-memory", rtt=50e-6, n_flows=n)
    assert mf["valid"] == (n != 20)


def test_summary_past_the_ramp(short_search):
    s = summary(build_model("dcqcn", rtt=50e-6, n_flows=20))
    assert "marking ramp" in s["no_fixed_point"] and s["fixed_point"] == {}
    assert s["boundary_method"] == "trajectories" and s["stable"] is False
    assert math.isnan(s["critical_rtt_s"])  # unstable from the search's start (20 us)
    with pytest.raises(ValueError, match="marking ramp"):
        summary(build_model("dcqcn", None, "cnp-lag+stage-memory", rtt=50e-6, n_flows=20))


def test_stability_map_judges_by_the_runs(short_search):
    """Rows N = 4 and 20 over 25-100 us: the packets show no cycle at N = 4 and cycle at
    N = 20 at every one of these RTTs (the validation's grid)."""
    m = build_model("dcqcn", n_flows=10)
    ds = stability_map(m, x_values=[25e-6, 50e-6, 100e-6], y_values=[4, 20])
    assert ds["valid"].values.all()
    assert ds["stable"].sel(n_flows=4).values.all() and not ds["stable"].sel(n_flows=20).any()
    assert np.isnan(ds["phase_margin_deg"].sel(n_flows=20)).all()
    crit = ds["critical_rtt"].values
    assert crit[0] > 100e-6 and math.isnan(crit[1])
