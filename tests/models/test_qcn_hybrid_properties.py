"""Invariants of the hybrid QCN model (the packet model's trajectories), over random inputs.

Every trajectory, whatever the flows, loop delay, capacity, offer, source buffer, hotspot and
seed: the queue is never negative; each flow's bytes only grow and never exceed what was
offered to it; the queue lies between what the flows sent one forward delay earlier minus
what the port could serve and what they sent then (bytes conserved through the loop); the
mean rate limiter stays within [MinRate, line rate]; and the compiled kernel equals the
readable twin bit for bit below 8 flows.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel.models._qcn_hybrid import integrate
from qcnmodel.params import QCNParams

LINE = 10e9
DT = 50e-6
DURATION = 0.02


@st.composite
def runs(draw):
    n = draw(st.integers(1, 12))
    rtt = draw(st.floats(20e-6, 1e-3))
    capacity = draw(st.sampled_from([1e9, 5e9, 10e9]))
    offered = draw(st.floats(0.05, 1.0)) * LINE
    buffer = draw(st.sampled_from([0.0, 15e3, 1.5e6]))
    hotspot = draw(st.sampled_from([None, (0.005, 0.012, capacity / 4)]))
    seed = draw(st.integers(0, 2**31))
    return n, rtt, capacity, offered, buffer, hotspot, seed


def _served(t, capacity, hotspot):
    """The most the port can serve from 0 to each of ``t`` (bytes)."""
    full = capacity * t
    if hotspot is not None:
        on, off, c_hot = hotspot
        inside = np.clip(t, on, off) - on
        full = full - (capacity - c_hot) * inside
    return full / 8.0


@settings(max_examples=25, deadline=None)
@given(runs())
def test_hybrid_trajectory_invariants(run):
    n, rtt, capacity, offered, buffer, hotspot, seed = run
    p = QCNParams(line_rate=LINE)
    rec, sent = integrate(p, n, rtt, capacity, offered, DURATION, DT, hotspot, seed,
                          per_flow=True, source_buffer=buffer)  # fmt: skip
    t, q = rec[:, 0], rec[:, 1]
    assert np.all(q >= 0.0)
    # each flow's bytes never decrease and never exceed its offer (rounding: 1e-9 relative)
    assert np.all(np.diff(sent, axis=0) >= -1e-6)
    assert np.all(sent <= (offered / 8.0) * t[:, None] * (1 + 1e-9) + 1e-6)
    # conservation through the forward half of the loop: at record k the port has received
    # what the flows sent up to t_k - rtt/2, bracketed by the records around that instant
    total = sent.sum(axis=1)
    lag = t - 0.5 * rtt
    lo_idx = np.clip(np.floor(lag / DT + 1e-9).astype(int), 0, len(t) - 1)
    hi_idx = np.clip(np.ceil(lag / DT - 1e-9).astype(int), 0, len(t) - 1)
    received_lo = np.where(lag > 0, total[lo_idx], 0.0)
    received_hi = np.where(lag > 0, total[hi_idx], 0.0)
    tol = 1e-6 * max(1.0, total[-1])
    assert np.all(q <= received_hi + tol)
    assert np.all(q >= received_lo - _served(t, capacity, hotspot) - tol)
    # the mean current rate stays within the rate limiter's bounds
    assert np.all(rec[:, 3] >= p.min_rate * (1 - 1e-12)) and np.all(rec[:, 3] <= LINE)


@settings(max_examples=10, deadline=None)
@given(runs())
def test_kernel_equals_twin_below_eight_flows(run):
    n, rtt, capacity, offered, buffer, hotspot, seed = run
    n = min(n, 7)
    p = QCNParams(line_rate=LINE)
    args = (p, n, rtt, capacity, offered, DURATION, DT, hotspot, seed)
    a, sa = integrate(*args, per_flow=True, source_buffer=buffer)
    b, sb = integrate(*args, per_flow=True, source_buffer=buffer, compiled=False)
    assert np.array_equal(a, b) and np.array_equal(sa, sb)
