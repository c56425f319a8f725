"""``assert_trace_close`` with a binned trace (a packet run) as the first trace: its values
are bin means, compared bin by bin, so a run compared with itself differs by exactly 0.

Expected values are bin means worked out by hand on synthetic step traces, and the run's
own number of bins; none comes from the assertion under test.
"""

import numpy as np
import pytest
import xarray as xr

from qcnmodel import testing as qt
from qcnmodel.testing import report


@pytest.fixture(scope="module")
def run10():
    return qt.simulate("og-hotspot", duration="10ms", seed=1)


@pytest.mark.parametrize("metric", ["mean", "rms", "max"])
@pytest.mark.parametrize("quantity", ["queue", "rate", "throughput"])
def test_a_packet_run_is_identical_to_itself_on_every_bin(run10, quantity, metric):
    qt.assert_trace_close(run10, run10, quantity, tolerance=0, metric=metric)
    numbers = report.records()[-1].numbers
    assert numbers[f"error ({metric})"] == 0.0
    assert numbers["bins"] == run10.dataset.sizes["time"]  # the first bin counts too
    qt.assert_trace_close(run10.dataset, run10, quantity, tolerance=0, metric=metric)


def _binned(width, values):
    t = width * np.arange(1, len(values) + 1)
    ds = xr.Dataset({"hot_queue_mean": ("time", np.asarray(values, float))},
                    coords={"time": t}, attrs={"bin_width_s": width})  # fmt: skip
    return ds


def test_a_binned_first_trace_is_averaged_over_coarser_bins_as_steps():
    # 1 ms bins holding 0, 10, 20, ... 90; on 2 ms bins their means are 5, 25, 45, 65, 85
    fine = _binned(1e-3, 10.0 * np.arange(10))
    ts = 2e-3 * np.arange(1, 6)
    qt.assert_trace_close(fine, (ts, [5.0, 25.0, 45.0, 65.0, 85.0]), tolerance=1e-12,
                          metric="max")  # fmt: skip
    assert report.records()[-1].numbers["bins"] == 5
    with pytest.raises(AssertionError):  # the bins' ends (10, 30, ...) are not their means
        qt.assert_trace_close(fine, (ts, [10.0, 30.0, 50.0, 70.0, 90.0]), tolerance=0.01,
                              metric="max")  # fmt: skip


def test_tolerance_that_is_not_a_number_names_the_argument():
    ts = np.arange(1, 11) * 1e-3
    tr = (ts, ts)
    for bad in ("abc%", "%", "", True, None):
        with pytest.raises(ValueError, match=r"tolerance: must be a finite number >= 0"):
            qt.assert_trace_close(tr, tr, tolerance=bad)
    with pytest.raises(ValueError, match=r"atol: must be"):
        qt.assert_trace_close(tr, tr, atol="x")
