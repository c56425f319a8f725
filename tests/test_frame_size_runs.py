"""Packet runs that stand for a parameter set use its frame size and CP latency, and an empty
bin is one frame of that size (the check's confirmation, the report's packet points, the
validation's traces, the oscillation detector)."""

import numpy as np
import pytest

from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams


def _spy(monkeypatch):
    import qcnmodel.validation.network as net

    seen = {}

    def spy(*args, **kw):
        seen.update(kw)
        raise RuntimeError("stop here")

    monkeypatch.setattr(net, "bottleneck_spec", spy)
    return seen


def test_the_bottleneck_of_a_parameter_set_keeps_its_loop_delay():
    from qcnmodel.validation.network import bottleneck_for, min_loop_delay

    def delay(p):
        spec = bottleneck_for(p, 2, 50e-6)
        assert spec.frame_size == p.frame_size
        return next(link.delay for link in spec.links if link.a == "s1")

    plain, late = QCNParams(), QCNParams(cp_latency=5e-6)
    # the loop delay (the RTT) includes the CP latency: the links are shorter by half of it
    assert delay(plain) - delay(late) == pytest.approx(2.5e-6, rel=1e-12)
    assert delay(QCNParams(frame_size=9000)) == pytest.approx((50e-6 - 7.2e-6) / 2, rel=1e-12)
    assert min_loop_delay(10e9, 9000, cp_latency=5e-6) == pytest.approx(12.2e-6)


def test_the_confirmation_runs_at_the_parameter_sets_frame_size(monkeypatch):
    from qcnmodel.studies.confirm import simulate_point

    seen = _spy(monkeypatch)
    with pytest.raises(RuntimeError, match="stop here"):
        simulate_point(QCNParams(frame_size=9000), 0.1, 0, 2, 100e-6)
    assert seen["frame_size"] == 9000


def test_the_reports_packet_points_run_at_the_parameter_sets_frame_size(monkeypatch):
    import qcnmodel.analysis.margins as margins
    from qcnmodel.studies.report_packet import run_points

    monkeypatch.setattr(margins, "critical_rtt", lambda model: 100e-6)
    seen = _spy(monkeypatch)
    with pytest.raises(RuntimeError, match="stop here"):
        run_points(QCNParams(frame_size=4000))
    assert seen["frame_size"] == 4000


def test_the_validation_traces_run_at_the_cases_frame_size(monkeypatch):
    import qcnmodel.validation.traces as traces

    seen = _spy(monkeypatch)
    with pytest.raises(RuntimeError, match="stop here"):
        traces.sim_trace(traces.Case(2, changes=(("frame_size", 9000),)), 0.01)
    assert seen["frame_size"] == 9000


def test_jumbo_frames_at_the_default_set_point_empty_the_queue():
    """IEEE 802.1Qau's Qeq of 26 KB is under three 9000-B frames: 4 flows at 10 Gb/s hold
    the queue near empty (measured: 98 % of the analysed 50 us bins below one frame), where
    1500-B frames hold it at about Qeq. Before the frame size reached the confirmation's
    runs, both ran 1500-B frames and read stable."""
    from qcnmodel.studies.confirm import simulate_point

    small = simulate_point(QCNParams(frame_size=1500), 0.2, 0, 4, 100e-6)
    jumbo = simulate_point(QCNParams(frame_size=9000), 0.2, 0, 4, 100e-6)
    assert small["verdict"] == "stable" and small["mean"] > 0.5 * QCNParams().qeq
    # within one frame of empty: no standing queue ("idle", read as not stable)
    assert jumbo["verdict"] == "idle" and jumbo["mean"] < 9000


def test_an_empty_bin_is_one_frame_of_the_given_size():
    from qcnmodel.analysis.timeseries import oscillation

    rng = np.random.default_rng(0)
    q = 5000.0 + 200.0 * rng.standard_normal(2000)  # steady, under one jumbo frame
    assert oscillation(q, 50e-6, 26000.0)["verdict"] == "stable"  # 1500-B frames
    held = oscillation(q, 50e-6, 26000.0, empty=9000.0)
    assert held["verdict"] == "idle" and held["underflow"] == 1.0  # std 200 B: no cycle


def test_a_confirmation_point_below_the_shortest_loop_is_not_simulated():
    """9000-B frames at 10 Gb/s take 7.2 us to serialise: a checked RTT of 5 us cannot be
    built as a packet network; the point is listed as not simulated, with the reason, instead
    of failing the check."""
    from qcnmodel.studies.check import CheckRanges, check_params
    from qcnmodel.studies.confirm import confirm_points

    p = QCNParams(frame_size=9000, qeq=100000.0)
    ranges = CheckRanges(rtt=(2e-6, 5e-6), flows=(2, 2), n_rtt=4, n_flows=1)
    result = check_params(p, ranges, recommend=False)
    points = confirm_points(result, ranges, QCNFluidModel(p, rtt=5e-6, n_flows=2))
    small = [pt for pt in points if pt["rtt_s"] < 7.2e-6]
    assert small and all("shortest loop delay, 7.2 us" in pt["skip"] for pt in small)
    assert all(pt["skip"] is None for pt in points if pt["rtt_s"] > 7.2e-6)
