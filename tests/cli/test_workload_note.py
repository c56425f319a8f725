"""``check`` and ``report`` say on stderr, before they start, how long a grid of many flow
counts may take: each flow count up to the trajectories' limit is a search of runs, and a
grid of hundreds ran for hours without a word."""

from __future__ import annotations

import numpy as np
import pytest

from qcnmodel.cli.check import NOTE_FLOW_COUNTS, workload_note
from qcnmodel.studies.check import CheckRanges


def test_the_default_grid_is_not_announced(capsys):
    assert workload_note(CheckRanges().flow_grid(), jobs=2) is None  # 12 counts
    assert capsys.readouterr().err == ""


def test_a_grid_of_hundreds_of_counts_is_announced_with_a_range_of_minutes(capsys):
    flows = CheckRanges(flows=(1, 100000), n_flows=1000).flow_grid()
    n = int(np.sum(flows <= 200))  # the trajectories' limit, config's default
    line = workload_note(flows, jobs=2)
    assert capsys.readouterr().err.strip() == line
    lo, hi = n * 5 / 2 / 60, n * 60 / 2 / 60  # 5-60 s of CPU per count, on 2 workers
    assert f"{n} flow counts (up to N = 200)" in line
    assert f"roughly {lo:.0f}-{hi:.0f} minutes on 2 workers" in line and "--flows" in line


@pytest.mark.parametrize("extra", [0, 1])
def test_the_note_starts_past_its_threshold(extra):
    flows = list(range(1, NOTE_FLOW_COUNTS + 1 + extra))
    assert (workload_note(flows, jobs=1) is not None) == bool(extra)


def test_check_says_it_before_the_analysis(monkeypatch, capsys):
    import qcnmodel.studies.check as check

    def stop(*a, **k):
        raise KeyboardInterrupt  # the analysis would start here

    monkeypatch.setattr(check, "check_params", stop)
    from qcnmodel.cli import main

    code = main(["check", "--preset", "802.1qau", "--jobs", "1", "--rtt", "100us",
                 "--flows", "1..200:100"])  # fmt: skip
    assert code == 130
    assert "flow counts (up to N = 200) are judged" in capsys.readouterr().err
