"""The trajectory verdict of a slow loop (a small fair rate C/N): its runs hold the loop's own
cycles, a queue that keeps trending is not stable, and a loop too slow for the longest run
allowed is judged by its linearisation."""

import numpy as np
import pytest
import xarray as xr

import qcnmodel as qm
from qcnmodel import config
from qcnmodel.analysis.boundary import WINDOW_RTTS, search_interval
from qcnmodel.models import _verdict_run as vr

P = qm.QCNParams()  # the 802.1Qau defaults: 1 % base sampling, 150 KB byte counter, 15 ms timer


def _model(rate, n, rtt):
    return qm.QCNFluidModel(P, rtt=rtt, n_flows=n, capacity=rate)


def test_loop_cycle_from_the_parameters():
    # a flow's sampling interval 1500 B x 8 / (1 % x C/N) = 150 KB x 8 / (C/N), exactly
    assert vr.loop_cycle(_model(10e9, 10, 100e-6)) == pytest.approx(1.2e-3, rel=1e-12)
    assert vr.loop_cycle(_model(100e6, 10, 30e-3)) == pytest.approx(0.12, rel=1e-12)


@pytest.mark.parametrize("rate, n", [(10e9, 1), (10e9, 10), (10e9, 40), (10e9, 100),
                                     (10e9, 125), (5e9, 10), (5e9, 100), (1e9, 10)])  # fmt: skip
def test_fast_loops_keep_the_shipped_run(rate, n):
    run = config.defaults["models.verdict_run"]
    m = _model(rate, n, 300e-6)
    assert m.verdict_run == (run["duration"], run["settle"])
    assert m.boundary_method == ("trajectories" if m.congested else "linearisation")


def test_slow_loop_runs_hold_its_cycles():
    m = _model(100e6, 10, 30e-3)
    duration, settle = m.verdict_run
    # 10 cycles of 0.12 s in the analysed part, the shipped run's proportions
    assert duration - settle == pytest.approx(10 * 0.12, rel=1e-12)
    assert settle / duration == pytest.approx(0.5, rel=1e-12)
    # ... so the trajectories are searched up to the RTTs that window holds 10 times
    assert search_interval(m)[1] > 30e-3
    assert search_interval(m)[1] >= min(0.1, (duration - settle) / WINDOW_RTTS) * (1 - 1e-12)


def test_slow_loop_past_the_longest_run_is_linearised(monkeypatch):
    run = {**config.defaults["models.verdict_run"], "max_duration": 2.0}  # needs 2.4 s
    monkeypatch.setitem(config.defaults, "models.verdict_run", run)
    m = _model(100e6, 10, 30e-3)
    assert not vr.fits(m)
    assert m.boundary_method == "linearisation"


class _Ramp:
    """A stand-in model whose queue climbs linearly (bytes per second) from the start, or
    drains from a backlog until ``until`` s and then holds Qeq."""

    def __init__(self, slope, until=None):
        self.slope, self.until, self.calls = slope, until, []
        self.params, self.n_flows, self.capacity_bps = P, 10, 10e9

    def simulate(self, duration, record_dt, **_):
        self.calls.append(duration)
        t = np.arange(0.0, duration + record_dt / 2, record_dt)
        if self.until is None:
            q = P.qeq + self.slope * t
        else:
            q = P.qeq + np.maximum(self.slope * (t - self.until), 0.0)
        return xr.Dataset({"q": ("time", q)}, coords={"time": t})


def test_a_climbing_queue_is_not_stable():
    # +1 MB/s: across the 0.3 s analysed part the queue climbs by 300 KB, 11 x Qeq, with
    # no swing for the detector: it read "stable"
    assert list(vr.seed_verdicts(_Ramp(1e6), seeds=1)) == ["drifting"]
    assert vr.majority_unstable(_Ramp(1e6), seeds=1)


def test_a_draining_start_is_run_longer():
    # a backlog draining at 1 MB/s until 0.9 s: the shipped run (0.3-0.6 s) still sees it
    # drain, twice that (0.6-1.2 s) too, four times (1.2-2.4 s) sees Qeq held
    model = _Ramp(-1e6, until=0.9)
    assert list(vr.seed_verdicts(model, seeds=1)) == ["stable"]
    assert model.calls == [0.6, 1.2, 2.4]
    # ... and one still draining at the longest run allowed is not stable
    model = _Ramp(-1e6, until=100.0)
    assert list(vr.seed_verdicts(model, seeds=1)) == ["drifting"]
    assert max(model.calls) <= config.defaults["models.verdict_run"]["max_duration"]


def test_slow_port_does_not_hold_its_queue_at_30ms():
    # 802.1Qau defaults, 10 flows at a 0.1 Gb/s port: packets of 30 s hold megabytes
    # against Qeq = 26 KB; the 0.6 s runs saw the start-up backlog and read "stable"
    m = _model(100e6, 10, 30e-3)
    k, n = m.trajectory_odds(9, None)
    assert 2 * k > n


def test_slow_port_holds_its_queue_at_1ms():
    # ... while at 1 ms the packets hold their queue (and the longer runs see it)
    assert not _model(100e6, 10, 1e-3).trajectory_unstable()
