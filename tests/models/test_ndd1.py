"""The N*D/D/1 waiting queue of paced flows (models._ndd1) against a direct computation."""

import numpy as np
import pytest

from qcnmodel.models._ndd1 import observed_queue, waiting_frames


def _lindley_waiting(n, rho, periods, rng):
    """Time-average number of frames waiting (not in service) at a unit-rate server fed by n
    flows with period n/rho and uniform random phases: unfinished work U(t) integrated
    exactly between arrivals, minus the in-service residual (mean rho/2 per unit time)."""
    d = n / rho
    phases = rng.uniform(0.0, d, n)
    t = np.sort((phases[:, None] + d * np.arange(periods)[None, :]).ravel())
    u, area = 0.0, 0.0
    for gap in np.diff(t):
        u += 1.0  # one frame of work arrives
        served = min(u, gap)
        area += u * served - served**2 / 2.0  # U falls linearly while busy
        u -= served
    total = t[-1] - t[0]
    return area / total - rho / 2.0


@pytest.mark.parametrize("n,rho", [(3, 0.9), (10, 0.8), (20, 0.95)])
def test_the_formula_matches_a_direct_computation(n, rho):
    rng = np.random.default_rng(7)
    runs = [_lindley_waiting(n, rho, 400, rng) for _ in range(40)]
    mean, se = np.mean(runs), np.std(runs, ddof=1) / np.sqrt(len(runs))
    # the table interpolates on 101 loads and integrates on 600 points: within 2 %
    assert abs(waiting_frames(rho, n) - mean) <= 4 * se + 0.02 * mean


def test_one_flow_never_waits_and_the_queue_grows_with_load_and_flows():
    assert np.all(waiting_frames(np.linspace(0, 1.5, 16), 1) == 0.0)
    w = waiting_frames(np.linspace(0.1, 1.0, 10), 20)
    assert np.all(np.diff(w) > 0)
    assert waiting_frames(0.9, 10) < waiting_frames(0.9, 20) < waiting_frames(0.9, 100)
    # the Brownian-bridge form beyond 200 flows joins the exact sum near full load
    assert waiting_frames(1.0, 201) == pytest.approx(waiting_frames(1.0, 200), rel=0.06)


def test_observed_queue_is_the_backlog_or_the_collisions():
    t = np.arange(6) * 1e-4
    q = np.array([0.0, 0.0, 5e3, 5e4, 0.0, 0.0])
    rate = np.full(6, 0.45e9)  # 10 flows at 4.5 Gb/s into 5 Gb/s: load 0.9
    got = observed_queue(t, q, rate, 10, 5e9, 0.0, 0.45e9, 1500.0)
    floor = waiting_frames(0.9, 10) * 1500.0
    assert got.tolist() == [floor, floor, 5e3, 5e4, floor, floor]
    # a hotspot at 4.5 Gb/s makes the same arrivals a full load
    hot = observed_queue(t, q, rate, 10, 5e9, 0.0, 0.45e9, 1500.0, hot=(0.0, 1.0, 4.5e9))
    assert hot[0] == pytest.approx(waiting_frames(1.0, 10) * 1500.0)
    # the arrivals reach the port one forward delay after they are sent; before, rate0
    late = observed_queue(t, np.zeros(6), rate, 10, 5e9, 2.5e-4, 0.0, 1500.0)
    assert late[:3].tolist() == [0.0, 0.0, 0.0] and late[3] == pytest.approx(floor)
