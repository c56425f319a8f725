"""The memo of stable bands keys a band by the search interval it was found in: a band found
under one interval is not returned under another in the same process."""

from qcnmodel import config
from qcnmodel.analysis import boundary
from qcnmodel.models import build_model


def test_a_band_is_searched_again_under_another_interval(monkeypatch):
    found = []

    def band_on(model, cand):  # stands in for the runs: records the candidates it got
        found.append((cand[0], cand[-1]))
        return (cand[0], cand[-1])

    monkeypatch.setattr(boundary, "_band_on", band_on)
    monkeypatch.setattr(boundary, "_MEMO", {})
    model = build_model("dcqcn", rtt=50e-6, n_flows=10)
    monkeypatch.setitem(config.defaults, "analysis.runs_rtt_search", (5e-6, 1e-3))
    wide = boundary.stable_band(model)
    assert boundary.stable_band(model) == wide and len(found) == 1  # memoised
    monkeypatch.setitem(config.defaults, "analysis.runs_rtt_search", (20e-6, 200e-6))
    short = boundary.stable_band(model)
    assert len(found) == 2 and short != wide and short[1] <= 200e-6
