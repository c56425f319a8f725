"""`qcnmodel check`: a fix the model's trajectories reject at its linearised size is continued
along its field to the smallest change they accept.

The fix search sizes a change by the linearised loop's phase-margin threshold. Where the
trajectories judge the flow counts, that threshold is not what the verdict asks for: a small
threshold sized a change the trajectories rejected and the check offered no fix, while a
larger threshold offered one they accept. The trajectories' verdict is replaced here by a
toy (oscillating while w is below a bound), so no trajectory is run.
"""

import pytest

from qcnmodel.params import QCNParams
from qcnmodel.studies.check import CheckRanges, check_params

W_NEEDED = 6.0  # the toy's trajectories oscillate below this w


@pytest.fixture
def toy_trajectories(monkeypatch):
    """The packet-fidelity model's trajectories replaced by a toy: unstable at N = 1 while
    w < W_NEEDED, a critical RTT of 100 us at every judged flow count; returns the list of
    the w values whose trajectories were judged."""
    from qcnmodel.models.qcn_packet import QCNPacketModel
    from qcnmodel.studies import boundaries

    judged_w = []

    def unstable(self, seeds=None):
        judged_w.append(float(self.params.w))
        return self.n_flows == 1 and self.params.w < W_NEEDED

    monkeypatch.setattr(QCNPacketModel, "trajectory_unstable", unstable)

    def boundaries_of(models, jobs=None, progress=None):
        return [(100e-6, None)] * len(models)

    monkeypatch.setattr(boundaries, "trajectory_boundaries", boundaries_of)
    return judged_w


def test_a_fix_the_trajectories_reject_is_continued_to_one_they_accept(
    monkeypatch, toy_trajectories
):
    # 802.1Qau defaults into a 5 Gb/s port, N 1 .. 10, RTT 20 .. 600 us: every flow count is
    # judged by the trajectories. A phase-margin threshold of 10 deg sizes w = 4.757, which
    # the (toy) trajectories reject at N = 1; the check once offered no fix here ("stabilises
    # the linearised loop only") though a larger w is one
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "studies.check_search", {"w": (0.25, 64.0)})
    ranges = CheckRanges(rtt=(20e-6, 600e-6), flows=(1, 10), n_rtt=4, n_flows=3,
                         pm_threshold=10.0, capacity=5e9)  # fmt: skip
    res = check_params(QCNParams(), ranges, jobs=1)
    assert res.verdict == "unstable" and set(res.judged_flows) == {1, 3, 10}
    fix = res.fix
    assert fix["field"] == "w" and fix["trajectories_unstable_n"] == []
    assert fix["sized_by"] == "trajectories" and fix["linearised_unstable_n"] == [1]
    lin = fix["linearised_value"]
    assert lin < W_NEEDED <= fix["value"] < 64.0
    # the smallest of the values tried: the one log-bisection step below it is rejected
    assert any(lin < w < W_NEEDED for w in toy_trajectories)
    h = res.headline
    assert f"Fix: set w = {fix['value']:.4g} in [qcn]" in h and "only" not in h
    assert "are stable at every N; the change is sized by them: at w = " in h
    assert "still oscillate at N = 1" in h
    # a bounded cost: at most six values of w put to the trajectories
    assert len(set(toy_trajectories)) <= 6


def test_the_continuation_is_bounded_and_falls_back_when_nothing_is_accepted(monkeypatch):
    # toy model and linearised verdict: only the trajectories' answer and the values tried
    from qcnmodel.studies import _fix_sizing

    class Toy:
        def __init__(self, params):
            self.params = params

        def replace(self, params):
            return Toy(params)

    tried = []

    def unstable_at(model, judged, rtt):
        tried.append((float(model.params.w), float(model.params.gd)))
        bad = model.params.w < need and model.params.gd < 1 / 64
        return [int(n) for n in judged if n == 4 and bad]

    monkeypatch.setattr(_fix_sizing, "unstable_at", unstable_at)
    monkeypatch.setattr(_fix_sizing, "scan", lambda model, ranges, method: {})
    monkeypatch.setattr(_fix_sizing, "_verdict_of",
                        lambda table, thr, judged=(): ("stable", 20.0, 4, 0))  # fmt: skip
    ranges = CheckRanges(rtt=(20e-6, 600e-6), flows=(1, 10), n_rtt=4, n_flows=3)
    point = {"n_flows": 4, "rtt_s": 600e-6}
    w = {"field": "w", "table": "qcn", "current": 2.0, "value": 4.0,
         "worst_phase_margin_deg": 31.0, "worst_point": point, "untested": ""}  # fmt: skip
    gd = {**w, "field": "gd", "current": 1 / 128, "value": 1 / 32}  # a 4x change
    base = Toy(QCNParams())

    need = 5.0  # accepted between the linearised value and the first rung
    out = _fix_sizing.put_to_trajectories([w, gd], base, (1, 4), ranges)
    assert [f["field"] for f in out] == ["w", "gd"]
    assert 5.0 <= out[0]["value"] < 4.0 * 16 ** (1 / 3)  # the first rung, bisected twice
    assert out[0]["sized_by"] == "trajectories" and out[0]["linearised_value"] == 4.0
    assert out[1] is gd  # a larger change than the accepted one: not put to them
    assert len({t for t in tried}) <= 1 + 3 + 2

    tried.clear()
    need = 1e9  # nothing up to the end of w's search (64): the gd fix is tried, and accepted
    out = _fix_sizing.put_to_trajectories([w, gd], base, (1, 4), ranges)
    assert [f["field"] for f in out] == ["gd", "w"]
    assert out[0]["trajectories_unstable_n"] == [] and "sized_by" not in out[0]
    assert out[1]["value"] == 4.0 and out[1]["trajectories_unstable_n"] == [4]
    assert out[1]["trajectories_searched_to"] == 64.0
    assert len(tried) == 1 + 3 + 1  # w: its value and three rungs (N = 4 first); gd: once

    tried.clear()
    out = _fix_sizing.put_to_trajectories([w], base, (1, 4), ranges)
    text = _fix_sizing.fix_sentence(out[0], 30.0)
    assert text.startswith("A change that stabilises the linearised loop only: set w = 4 ")
    assert "still oscillate at N = 4; of 3 values of w further out, up to 64" in text
