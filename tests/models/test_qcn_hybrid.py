"""The hybrid model: the packet-fidelity model's trajectories, flow by flow (method="agents")."""

import numpy as np
import pytest

from qcnmodel.analysis.timeseries import oscillation
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams

C, LINE = 5e9, 10e9


def _run(rtt, duration, record_dt, seed=0, jitter=0.15, n=1, **kw):
    p = QCNParams(jitter=jitter)
    m = QCNFluidModel(p, rtt=rtt, n_flows=n, capacity=C)
    return m.simulate(
        duration, start="idle", offered=min(LINE, 2 * C / n), record_dt=record_dt, seed=seed, **kw
    )


def test_first_sample_and_first_cut_happen_where_the_standard_puts_them():
    # jitter 0; loop delay rtt + half a frame gap at C (1.2 us) = 100 us, 50 us each way.
    ds = _run(98.8e-6, 260e-6, 10e-6, jitter=0.0)
    t = ds.time.values
    q = dict(zip(np.round(t * 1e6).astype(int), ds.q_fluid.values))
    rate = dict(zip(np.round(t * 1e6).astype(int), ds.rate_sent.values))
    # the first frames reach the CP at 50 us; the fluid queue then grows at 10 - 5 Gb/s
    # (the port's queue, ``q``, holds it in whole frames)
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
    assert a.attrs["method"] == "agents" and a.attrs["seed"] == 3


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


def test_bytes_are_conserved_between_the_flows_and_the_queue():
    # what the flows sent one forward delay ago = what the port served + the queue; with the
    # queue never empty after the start, the port served C the whole time since it filled
    rtt, dt = 100e-6, 50e-6
    ds = _run(rtt, 0.05, dt, n=10)
    sent = ds.bytes_sent.values.sum(axis=1)
    assert np.all(np.diff(sent) >= 0)
    # per record, the total of the flows' bytes equals the mean rate's integral (trapezoid
    # is exact for a piecewise-constant rate only at its breakpoints: compare the ends)
    t = ds.time.values
    assert sent[-1] == pytest.approx(np.sum(ds.bytes_sent.values[-1]), rel=1e-12)
    assert sent[-1] <= 10 * 1e9 / 8 * t[-1] * (1 + 1e-12)  # no flow above its offered rate
    q = ds.q.values
    assert (q >= 0).all() and q.max() > 0


def test_many_flows_share_the_port_and_samples_spread_over_them():
    ds = _run(100e-6, 0.6, 50e-6, n=10)
    w = ds.time.values >= 0.3
    b = ds.bytes_sent.values
    rates = (b[-1] - b[w][0]) * 8 / (ds.time.values[-1] - ds.time.values[w][0])
    # the port is shared: the flows together send C within the queue's change over the
    # window (< 5 %), each between the rate floor and its offered rate
    assert rates.sum() == pytest.approx(C, rel=0.05)
    assert (rates > QCNParams().min_rate).all() and (rates <= 2 * C / 10).all()


def test_cohorts_remain_available_and_method_is_checked():
    m = QCNFluidModel(QCNParams(), rtt=100e-6, n_flows=10, capacity=C)
    ds = m.simulate(0.01, start="idle", offered=LINE, method="cohorts")
    assert ds.attrs["method"] == "cohorts"
    with pytest.raises(ValueError, match="method"):
        m.simulate(0.01, method="bogus")


@pytest.mark.parametrize(("n", "start"), [(1, "idle"), (3, "idle"), (7, "equilibrium")])
def test_compiled_kernel_equals_the_readable_twin(n, start):
    # bit for bit below 8 flows (numpy sums 8 or more numbers pairwise, the kernel in order)
    from qcnmodel.models._qcn_hybrid import integrate

    p = QCNParams()
    kw = dict(hotspot=(0.05, 0.1, 2e9), seed=5, start=start, q0=20e3 if n == 7 else 0.0,
              per_flow=True)  # fmt: skip
    a, sa = integrate(p, n, 300e-6, C, min(LINE, 2 * C / n), 0.15, 50e-6, compiled=True, **kw)
    b, sb = integrate(p, n, 300e-6, C, min(LINE, 2 * C / n), 0.15, 50e-6, compiled=False, **kw)
    assert np.array_equal(a, b) and np.array_equal(sa, sb)
    assert a[-1, 0] == pytest.approx(0.15)


def test_compiled_kernel_agrees_with_the_twin_to_rounding_at_many_flows():
    from qcnmodel.models._qcn_hybrid import integrate

    p = QCNParams()
    a, _ = integrate(p, 20, 100e-6, C, 2 * C / 20, 0.1, 50e-6, seed=1, compiled=True)
    b, _ = integrate(p, 20, 100e-6, C, 2 * C / 20, 0.1, 50e-6, seed=1, compiled=False)
    assert np.allclose(a, b, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("compiled", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_no_stall_when_the_clock_cannot_resolve_the_next_sample(compiled):
    # 25 flows at 200 Gb/s, nothing fed back for 13 ms: 5 Tb/s reach the CP, and at
    # t = 1/64 s a sample that is 1e-6 B away lies closer than the clock resolves (the step
    # to it rounds to zero). The solver stalled there; the sample is now due at once. (The
    # readable twin takes 15 s for its 40 000 samples: slow suite.)
    from qcnmodel.models._qcn_hybrid import integrate

    p = QCNParams(line_rate=200e9)
    rec, _ = integrate(p, 25, 12.97e-3, 10e9, 200e9, 0.016, 1e-3, seed=0, compiled=compiled)
    assert rec[-1, 0] == pytest.approx(0.016)
    # no rate change reaches the CP before 3/2 of the loop delay (19.5 ms): from 6.5 ms on, it
    # holds what arrives beyond the 10 Gb/s it serves
    t_in = 0.016 - 12.97e-3 / 2
    assert rec[-1, 1] == pytest.approx((25 * 200e9 - 10e9) * t_in / 8, rel=1e-9)


def _recovery(buffer, n=8, seed=1):
    """netfpga-1g hotspot (1 Gb/s links, CP at 0.2 Gb/s for 1 s) with constant-rate sources."""
    from qcnmodel.models._qcn_hybrid import integrate

    p = QCNParams.preset("netfpga-1g").replace(line_rate=1e9)
    return integrate(p, n, 200e-6, 1e9, 1e9 / n, 1.6, 1e-3, (0.2, 1.2, 0.2e9), seed=seed,
                     per_flow=True, source_buffer=buffer)  # fmt: skip


def test_without_a_source_buffer_no_flow_sends_above_its_offered_rate():
    rec, sent = _recovery(0.0)
    rates = np.diff(sent, axis=0) * 8 / 1e-3
    assert rates.max() <= 1e9 / 8 * (1 + 1e-9)


def test_a_backlogged_source_sends_above_its_offered_rate_and_never_more_than_offered():
    rec, sent = _recovery(1.5e6)
    rates = np.diff(sent, axis=0) * 8 / 1e-3
    # after the hotspot some flow drains its backlog faster than it is offered
    assert rates[1250:].max() > 1.05 * 1e9 / 8
    # what a source sends never exceeds what was offered to it: offered x t at every record
    t = rec[:, 0]
    assert np.all(sent <= (1e9 / 8 / 8) * t[:, None] + 1e-6)
    # and falls short of it by at most the buffer plus what the buffer refused, which is zero
    # while a flow has never been held back: before the hotspot every flow sends its offer
    assert np.allclose(sent[150], (1e9 / 8 / 8) * t[150], rtol=1e-9)


def test_compiled_kernel_equals_the_twin_with_source_buffers():
    from qcnmodel.models._qcn_hybrid import integrate

    p = QCNParams.preset("netfpga-1g").replace(line_rate=1e9)
    args = (p, 4, 200e-6, 1e9, 0.25e9, 1.6, 1e-3, (0.2, 1.2, 0.2e9))
    a, sa = integrate(*args, seed=2, per_flow=True, source_buffer=1.5e6)
    b, sb = integrate(*args, seed=2, per_flow=True, source_buffer=1.5e6, compiled=False)
    assert np.array_equal(a, b) and np.array_equal(sa, sb)


def test_bad_source_buffer_names_the_field():
    m = QCNFluidModel(QCNParams(), rtt=100e-6, n_flows=2, capacity=C)
    with pytest.raises(ValueError, match="source_buffer"):
        m.simulate(0.01, source_buffer=-1.0)
    with pytest.raises(ValueError, match="source_buffer"):
        m.simulate(0.01, method="cohorts", source_buffer="1.5 MB")


def test_frame_noise_has_the_frames_variance_and_the_kernel_equals_the_twin():
    from qcnmodel.models._qcn_hybrid import frame_noise, integrate

    for n in (1, 10, 100):
        z = np.array([frame_noise(5, np.int64(k), n, 1500.0) for k in range(20000)])
        # variance n/12 frames^2; the sample variance of 20000 draws is within 3 %
        assert np.var(z) / (n / 12 * 1500.0**2) == pytest.approx(1.0, abs=0.03)
        assert abs(np.mean(z)) < 4 * np.sqrt(n / 12 / 20000) * 1500.0
    p = QCNParams()
    for n in (1, 5):
        kw = dict(seed=3, noise=True)
        a, _ = integrate(p, n, 300e-6, 5e9, 10e9, 0.05, 50e-6, **kw)
        b, _ = integrate(p, n, 300e-6, 5e9, 10e9, 0.05, 50e-6, compiled=False, **kw)
        c, _ = integrate(p, n, 300e-6, 5e9, 10e9, 0.05, 50e-6, seed=3)
        assert np.array_equal(a, b)
        assert not np.array_equal(a, c)  # the noise reaches the CP's decisions


def test_the_queue_reported_is_the_port_fed_by_the_flows_frames():
    m = QCNFluidModel(QCNParams(), rtt=200e-6, n_flows=10, capacity=5e9)
    ds = m.simulate(0.2, start="idle", offered=1e9, record_dt=50e-6, seed=1)
    q, qf, qm = ds.q.values, ds.q_fluid.values, ds.q_mean.values
    assert np.all(q >= 0.0) and np.all(np.mod(q, 1500.0) == 0.0)  # whole frames waiting
    # by work conservation the port holds the fluid backlog give or take each flow's frame
    # phase (one frame per flow) and the frames that collided before the backlog began
    # (at most one per flow)
    assert np.all(np.abs(q - qf) <= 2 * 10 * 1500.0)
    # where the fluid queue is empty the frames still collide at times (N*D/D/1)
    empty = qf == 0.0
    assert empty.any() and np.any(q[empty] > 0.0) and np.any(qm[1:][empty[1:]] > 0.0)
    one = QCNFluidModel(QCNParams(), rtt=200e-6, n_flows=1, capacity=5e9)
    d1 = one.simulate(0.1, start="idle", record_dt=50e-6)
    # one flow's frames never collide: its queue is its backlog in whole frames, give or
    # take the frame arriving and the one in service
    assert np.all(np.abs(d1.q.values - d1.q_fluid.values) <= 2 * 1500.0)


@pytest.mark.parametrize("kw,msg", [({"frame_noise": "yes"}, "frame_noise: must be True or False"),
                                    ({"frame_noise": True, "method": "cohorts"},
                                     "frame_noise: only method='agents'")])  # fmt: skip
def test_frame_noise_refuses_what_it_cannot_do(kw, msg):
    m = QCNFluidModel(QCNParams(), n_flows=2, capacity=5e9)
    with pytest.raises(ValueError, match=msg):
        m.simulate(0.01, **kw)
