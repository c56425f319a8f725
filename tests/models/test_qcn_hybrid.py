"""The single-flow hybrid model (the packet-fidelity model's trajectories at N = 1)."""

import numpy as np
import pytest

from qcnmodel.analysis.timeseries import oscillation
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams

C, LINE = 5e9, 10e9


def _run(rtt, duration, record_dt, seed=0, jitter=0.15, **kw):
    p = QCNParams(jitter=jitter)
    m = QCNFluidModel(p, rtt=rtt, n_flows=1, capacity=C)
    return m.simulate(duration, start="idle", offered=LINE, record_dt=record_dt, seed=seed, **kw)


def test_first_sample_and_first_cut_happen_where_the_standard_puts_them():
    # jitter 0; loop delay rtt + half a frame gap at C (1.2 us) = 100 us, 50 us each way.
    ds = _run(98.8e-6, 260e-6, 10e-6, jitter=0.0)
    t = ds.time.values
    q = dict(zip(np.round(t * 1e6).astype(int), ds.q.values))
    rate = dict(zip(np.round(t * 1e6).astype(int), ds.rate_sent.values))
    # the first frames reach the CP at 50 us; the queue then grows at 10 - 5 Gb/s
    assert q[50] == 0.0
    assert q[150] == pytest.approx(100e-6 * (LINE - C) / 8, rel=1e-9)
    # first sample after 150 KB of arrivals (the table's first interval) at 170 us: Fb is
    # far below -Fbmax, so qFb = 63 and the cut is max(1 - 63/128, 1 - 0.5) = 65/128; it
    # reaches the reaction point 50 us later (220 us)
    assert rate[210] == LINE
    assert rate[230] == pytest.approx(LINE * 65 / 128, rel=1e-12)


def test_same_seed_same_trajectory_and_the_seed_matters():
    a = _run(300e-6, 0.05, 50e-6, seed=3)
    b = _run(300e-6, 0.05, 50e-6, seed=3)
    c = _run(300e-6, 0.05, 50e-6, seed=4)
    assert np.array_equal(a.q.values, b.q.values)
    assert not np.array_equal(a.q.values, c.q.values)
    assert a.attrs["model"] == "QCNPacketModel (single-flow hybrid)"


def test_trajectory_respects_the_bounds():
    p = QCNParams()
    ds = _run(500e-6, 0.3, 50e-6)
    assert (ds.q.values >= 0).all()
    cr = ds.rate_current.values
    assert (cr >= p.min_rate).all() and (cr <= LINE).all()
    assert (ds.rate_sent.values <= LINE).all()


@pytest.mark.parametrize(("rtt", "verdict_stable"), [(200e-6, True), (500e-6, False)])
def test_single_flow_boundary_lies_between_the_simulated_points(rtt, verdict_stable):
    # the packet simulator (qcnmodel validate, 3 seeds): N = 1 at 5 Gb/s is stable at
    # 367 us and oscillates at 400 us; the mean field's trajectories stay stable to 436 us
    ds = _run(rtt, 0.6, 50e-6, seed=0)
    q = ds.q.values[6000:]
    assert (oscillation(q, 50e-6, QCNParams().qeq)["verdict"] == "stable") is verdict_stable


def test_bad_seed_names_the_field():
    with pytest.raises(ValueError, match="seed"):
        _run(100e-6, 0.01, 50e-6, seed=-1)
