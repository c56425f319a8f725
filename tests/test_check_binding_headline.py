"""The reason ``qcnmodel check`` gives for a flow count unstable over the whole RTT range.

A flow count judged by the model's trajectories is unstable from the range's start for one of
two reasons: its runs oscillate already at the smallest RTT they are run at (no critical RTT,
``nan``), or its critical RTT lies below the range's start (its runs are stable below it, at
RTTs the range does not reach). The results are constructed (the critical RTTs of the
NetFPGA parameter set at a 0.2 Gb/s port over 50 us .. 5 ms: N = 7 at 45.73 us, N = 5 and 8
none), so the text alone is under test.
"""

import dataclasses
import math

from qcnmodel import config
from qcnmodel.studies.check import CheckRanges, CheckResult
from qcnmodel.studies.verdict import headline


def _result(critical: dict, worst: int, rtts=(50e-6, 5e-3)) -> tuple:
    ranges = CheckRanges(rtt=rtts, flows=(min(critical), max(critical)))
    r = CheckResult(verdict="unstable", pm_threshold_deg=30.0, worst_phase_margin_deg=-20.0,
                    worst_gain_margin_db=-3.0, worst_delay_margin_s=math.nan,
                    worst_point={"n_flows": worst, "rtt_s": rtts[0]},
                    critical_rtt_s=critical, model_label="M",
                    judged_flows=tuple(critical))  # fmt: skip
    return dataclasses.replace(r, headline=headline(r, ranges)), ranges


def _binding(h: str) -> str:
    return h.split("Binding constraint: ")[1]


def test_a_critical_rtt_below_the_range_is_not_called_an_oscillation_at_its_start():
    r, _ = _result({4: 2e-3, 5: math.nan, 7: 45.73e-6, 8: math.nan}, worst=5)
    binding = _binding(r.headline)
    start = config.defaults["analysis.trajectory_rtt_search"][0]  # where the runs begin
    assert binding.startswith(
        f"at N = 5, 8 the model's trajectories have no critical RTT: their runs are unstable "
        f"(they oscillate, empty the port or never settle) already at {start * 1e6:.3g} us, the "
        "smallest RTT they are run at"
    )
    assert ("the critical RTT of the model's trajectories lies below the smallest RTT "
            "checked (50 us): 45.7 us at N = 7.") in binding  # fmt: skip
    assert "N = 5, 7, 8" not in binding and "already at 50 us" not in binding


def test_only_a_critical_rtt_below_the_range():
    r, _ = _result({7: 45.73e-6, 9: 30e-6}, worst=9)
    assert _binding(r.headline) == ("the critical RTT of the model's trajectories lies "
                                    "below the smallest RTT checked (50 us): 45.7 us at "
                                    "N = 7, 30 us at N = 9.")  # fmt: skip
    assert "oscillate" not in _binding(r.headline)


def test_no_critical_rtt_names_the_smallest_rtt_run_not_the_range_start():
    # the runs start at 20 us whatever the range: a range from 50 us did not run there
    r, _ = _result({5: math.nan}, worst=5)
    start = config.defaults["analysis.trajectory_rtt_search"][0]
    assert (
        f"their runs are unstable (they oscillate, empty the port or never settle) already "
        f"at {start * 1e6:.3g} us, the smallest RTT they are run at"
    ) in _binding(r.headline)
