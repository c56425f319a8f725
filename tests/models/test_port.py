"""The packet port fed by the model's frames (qcnmodel.models._port)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel.models._ndd1 import waiting_frames
from qcnmodel.models._port import _frame_times, realised_queue

L = 1500.0
C = 10e9


def _constant(n, rate, duration, dt=50e-6):
    t = np.arange(0.0, duration + dt / 2, dt)
    return t, np.outer(t, np.full(n, rate / 8.0))


def test_one_flow_below_the_port_rate_never_waits():
    t, sent = _constant(1, 0.9 * C, 0.05)
    q, qm = realised_queue(t, sent, C, L, 10e-6, seed=3)
    assert np.all(q == 0.0) and np.all(qm == 0.0)


def test_paced_flows_collide_as_the_n_d_d_1_queue_says():
    # N flows at constant rates, load 0.9: the time mean of the bytes waiting, over phases
    # drawn by 40 seeds, against Roberts and Virtamo's mean (1.38 frames at N = 20). The
    # tolerance is four standard errors of that mean over the seeds (each seed's phases
    # give one periodic pattern).
    n, rho = 20, 0.9
    t, sent = _constant(n, rho * C / n, 0.02)
    means = [realised_queue(t, sent, C, L, 0.0, seed=s)[1][1:].mean() / L for s in range(40)]
    se = np.std(means, ddof=1) / np.sqrt(len(means))
    assert np.mean(means) == pytest.approx(float(waiting_frames(rho, n)), abs=4 * se)
    assert 0.0 < se < 0.2


def test_bin_means_are_the_time_average_of_the_bytes_waiting():
    n = 7
    t, sent = _constant(n, 1.05 * C / n, 0.01)  # overloaded: a backlog builds
    q, qm = realised_queue(t, sent, C, L, 0.0, seed=1)
    fine = np.linspace(0.0, 0.01, 1_000_001)  # every 10 ns
    qf, _ = realised_queue(fine, np.outer(fine, np.full(n, 1.05 * C / n / 8.0)), C, L, 0.0,
                           seed=1)  # fmt: skip
    # the mean over each 50 us interval of the queue sampled every 10 ns: each of the about
    # 88 arrivals and service starts in an interval moves that mean by at most L * 10 ns /
    # 50 us, 26 B in all
    coarse = qf[1:].reshape(len(t) - 1, -1).mean(axis=1)
    np.testing.assert_allclose(qm[1:], coarse, rtol=0, atol=88 * L * 10e-9 / 50e-6)
    # the backlog grows at 5 % of the port's rate
    assert q[-1] == pytest.approx(0.05 * C / 8 * 0.01, abs=2 * n * L)


def test_the_hotspot_window_slows_the_port_and_the_backlog_starts_whole():
    t, sent = _constant(4, 0.8 * C / 4, 0.01)
    q, _ = realised_queue(t, sent, C, L, 0.0, seed=0, q0=4 * L, hot=(0.002, 0.004, 0.5 * C))
    assert q[0] == 3 * L  # four frames at 0, the first in service
    inside = (t > 0.0025) & (t <= 0.004)
    after = t > 0.007
    assert q[inside].max() > 20 * L  # 0.8 C into 0.5 C: the queue grows
    assert q[after].max() <= 4 * L  # and drains after the window


def test_the_seed_draws_the_phases():
    t, sent = _constant(10, 0.095 * C, 0.005)
    a = realised_queue(t, sent, C, L, 0.0, seed=5)[0]
    b = realised_queue(t, sent, C, L, 0.0, seed=5)[0]
    c = realised_queue(t, sent, C, L, 0.0, seed=6)[0]
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_past_its_frame_budget_a_trajectory_reports_the_mean_collision_queue(monkeypatch):
    from qcnmodel import config
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.params import QCNParams

    m = QCNFluidModel(QCNParams(), rtt=200e-6, n_flows=10, capacity=5e9)
    full = m.simulate(0.05, start="idle", offered=1e9, record_dt=50e-6, seed=1)
    monkeypatch.setitem(config.defaults, "models.max_port_frames", 1000)
    with pytest.warns(RuntimeWarning, match="models.max_port_frames"):
        capped = m.simulate(0.05, start="idle", offered=1e9, record_dt=50e-6, seed=1)
    assert "q_mean" in full and "q_mean" not in capped  # 20 000 frames > 1000
    np.testing.assert_array_equal(full.q_fluid.values, capped.q_fluid.values)
    assert np.all(capped.q.values >= capped.q_fluid.values)  # max(backlog, collision mean)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 12),
    n_rec=st.integers(2, 30),
    scale=st.floats(1e4, 3e6),  # bytes a flow sends per record interval, at most
    backlog=st.integers(0, 50),
    data=st.data(),
)
def test_frame_arrivals_are_every_boundary_crossed_in_time_order(n, n_rec, scale, backlog, data):
    """Each flow's whole-frame boundaries (j - phase) * L crossed by its bytes, placed in time
    by linear interpolation between the records and delayed by the forward delay, after the
    backlog's frames at 0: the sorted union computed here by brute force. Up to 2000 frames a
    flow per interval, so the sort's buffers must grow past their first size."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    t = np.concatenate(([0.0], np.cumsum(rng.uniform(1e-6, 1e-3, n_rec - 1))))
    steps = rng.uniform(0.0, scale, (n_rec - 1, n)) * (rng.uniform(size=(n_rec - 1, n)) > 0.2)
    sent = np.vstack((rng.uniform(0.0, 1e5, (1, n)), np.zeros((n_rec - 1, n))))
    sent[1:] = sent[0] + np.cumsum(steps, axis=0)
    phase, fwd = rng.uniform(0.0, 1.0, n), 20e-6
    want = [np.zeros(backlog)]
    for i in range(n):
        j = np.arange(
            np.floor(sent[0, i] / L + phase[i]) + 1, np.floor(sent[-1, i] / L + phase[i]) + 1
        )
        b = (j - phase[i]) * L
        k = np.clip(np.searchsorted(sent[:, i], b, side="left"), 1, n_rec - 1)
        s0, s1 = sent[k - 1, i], sent[k, i]
        want.append(t[k - 1] + (t[k] - t[k - 1]) * (b - s0) / (s1 - s0) + fwd)
    want = np.sort(np.concatenate(want))
    got = _frame_times(t, np.ascontiguousarray(sent), L, fwd, phase, backlog)
    assert np.all(np.diff(got) >= 0)
    assert got.shape == want.shape
    # a boundary within rounding (1e-9 B) of a record lands in the interval either side: same time
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
