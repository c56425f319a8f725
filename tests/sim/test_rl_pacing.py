"""A rate limiter sends at CR in the long run: its spacing is whole ns, and the remainder of
each rounding is carried to the next frame (as a token bucket keeps its fractional credit).
Rounding each spacing alone sends every CR within half a ns per frame of the port's own
rate at exactly that rate: one QCN flow then holds its queue frozen in the quantiser's dead
zone, which the rules do not do."""

from __future__ import annotations

import numpy as np
import pytest

from qcnmodel.sim.kernel.pacing import RL_CARRY_UNIT, rl_spacing

FRAME = 1500


@pytest.mark.parametrize("cr", [10.0016e9, 9.9961e9, 1234.5e6, 40e9 / 3, 5e9, 100e6])
def test_spacing_keeps_the_rate_exact(cr):
    exact = FRAME * 8e9 / cr  # ns per frame at CR
    carry, total = np.int64(0), 0
    for k in range(1, 20_001):
        gap, carry = rl_spacing(FRAME, cr, carry)
        assert abs(gap - exact) < 1.0  # every spacing within a ns of the exact one
        total += int(gap)
        # the frames' starts stay within half a ns (plus the carry's resolution) of k * exact
        assert abs(total - k * exact) <= 0.5 + 2 * RL_CARRY_UNIT + 1e-9 * k * exact


def test_rounding_alone_would_snap_to_the_port_rate():
    # 10.0016 Gb/s: 1199.81 ns per frame; rounded alone, 1200 ns, i.e. exactly 10 Gb/s
    cr = 10.0016e9
    assert round(FRAME * 8e9 / cr) == 1200
    carry, total = np.int64(0), 0
    for _ in range(10_000):
        gap, carry = rl_spacing(FRAME, cr, carry)
        total += int(gap)
    rate = 10_000 * FRAME * 8e9 / total
    assert rate == pytest.approx(cr, rel=1e-7)  # not 10e9 (a relative 1.6e-4 away)


def test_one_flow_into_a_slower_port_does_not_freeze():
    """A 40 Gb/s source into a 10 Gb/s port, RTT 168 us: with each spacing rounded alone the
    flow's CR settled within 0.04 % of 10 Gb/s, sent at exactly 10 Gb/s, and the queue stood
    still (std below 50 B from 0.3 s; measured); its CNMs, all in the dead zone (qFb = 0),
    restarted its counters before any increase."""
    from qcnmodel.sim.api import simulate
    from qcnmodel.validation.network import bottleneck_spec

    r = simulate(bottleneck_spec(1, 168e-6, 10e9, 40e9), duration=0.6, seed=0,
                 bin_width=50e-6)  # fmt: skip
    q = r.dataset.hot_queue_mean.values[6000:]
    assert q.std() > 1000.0  # bytes: the single flow's cycle of cuts and recoveries
