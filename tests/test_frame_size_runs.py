"""Packet runs that stand for a parameter set use its frame size, and an empty bin is one
frame of that size (the check's confirmation, the report's packet points, the validation's
traces, the oscillation detector)."""

import numpy as np
import pytest

from qcnmodel.params import QCNParams


def _spy(monkeypatch):
    import qcnmodel.validation.network as net

    seen = {}

    def spy(*args, **kw):
        seen.update(kw)
        raise RuntimeError("stop here")

    monkeypatch.setattr(net, "bottleneck_spec", spy)
    return seen


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

    seen = {}

    def spy(*args, **kw):
        seen.update(kw)
        raise RuntimeError("stop here")

    monkeypatch.setattr(traces, "bottleneck_spec", spy)
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
    assert jumbo["verdict"] == "underflow" and jumbo["mean"] < 9000


def test_an_empty_bin_is_one_frame_of_the_given_size():
    from qcnmodel.analysis.timeseries import oscillation

    rng = np.random.default_rng(0)
    q = 5000.0 + 200.0 * rng.standard_normal(2000)  # steady, under one jumbo frame
    assert oscillation(q, 50e-6, 26000.0)["verdict"] == "stable"  # 1500-B frames
    held = oscillation(q, 50e-6, 26000.0, empty=9000.0)
    assert held["verdict"] == "underflow" and held["underflow"] == 1.0
