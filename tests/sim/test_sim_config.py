"""The simulator's tuning numbers come from ``config.defaults`` ("sim." keys), read at call time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel import config
from qcnmodel.sim import metrics, simulate


@pytest.fixture
def defaults():
    yield config.defaults
    config.reset_defaults()


def test_bin_width_and_traced_flows_defaults(defaults):
    over = {"n_nodes": 3, "hotspot_start": "2ms"}
    r = simulate("og-hotspot", duration="10ms", overrides=over)
    assert r.dataset.attrs["bin_width_s"] == 1e-3 and r.dataset.sizes["flow"] == 6
    defaults["sim.bin_width"] = 2e-3
    defaults["sim.max_traced_flows"] = 3
    r = simulate("og-hotspot", duration="10ms", overrides=over)
    assert r.dataset.attrs["bin_width_s"] == 2e-3 and r.dataset.sizes["time"] == 5
    assert r.dataset.sizes["flow"] == 2  # over the cap: the fairness and hotspot flows (to n1)
    # an explicit argument wins over the default
    r = simulate("og-hotspot", duration="10ms", overrides=over, bin_width="5ms")
    assert r.dataset.sizes["time"] == 2


def test_recovery_metric_defaults(defaults):
    t_end = np.arange(1, 101) * 1e-3  # 1 ms bins; the hotspot ends at 10 ms
    thr = np.clip((t_end - 0.0105) * 1e11, 0.0, 1e9)  # 0.5, 1.5, ... Gb/s/10 from 11 ms on
    rec = metrics.recovery_time(t_end, thr, 1e-3, 0.010, 1e9)
    assert rec == metrics.recovery_time(t_end, thr, 1e-3, 0.010, 1e9, tol=0.1, hold_s=10e-3)
    defaults["sim.recovery_tol"] = 0.5
    defaults["sim.recovery_hold"] = 1e-3
    # 1 ms hold: the first bin at >= 0.5 Gb/s ends at 16 ms (5.5e8), i.e. starts 5 ms after
    assert metrics.recovery_time(t_end, thr, 1e-3, 0.010, 1e9) == pytest.approx(5e-3)
    assert rec > 5e-3


def _recovery_by_definition(t_end, thr, bin_s, stop_s, target, tol, hold_s):
    """The metric's definition, window by window (quadratic; the reference)."""
    starts = t_end - bin_s
    first = int(np.searchsorted(starts, stop_s - 1e-12))
    hold = max(1, int(round(hold_s / bin_s)))
    for i in range(first, len(thr) - hold + 1):
        if float(np.mean(thr[i : i + hold])) >= (1.0 - tol) * target:
            return max(0.0, float(starts[i] - stop_s))
    return None


@settings(max_examples=300, deadline=None)
@given(
    levels=st.lists(st.sampled_from([0.0, 5e8, 9e8, 8.999999999e8, 1e9]), min_size=1,
                    max_size=120),
    stop=st.floats(0.0, 0.15), hold=st.integers(1, 25),
)  # fmt: skip
def test_recovery_time_equals_its_definition(levels, stop, hold):
    thr = np.array(levels)
    t_end = np.arange(1, len(thr) + 1) * 1e-3
    want = _recovery_by_definition(t_end, thr, 1e-3, stop, 1e9, 0.1, hold * 1e-3)
    got = metrics.recovery_time(t_end, thr, 1e-3, stop, 1e9, tol=0.1, hold_s=hold * 1e-3)
    assert got == want
