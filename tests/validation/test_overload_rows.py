"""The packets' side of the largest-N-held rows: when a run counts as overloaded."""

import numpy as np
import pytest

from qcnmodel.validation.overload import _bracket, climbs

QEQ = 26000.0
T = np.arange(0.0, 3.0, 1e-3)


def test_a_held_queue_swinging_about_a_level_is_not_overloaded():
    # like 1000 flows into 10 Gb/s: swings of about 0.8 MB, empty now and then, a trend of
    # +24 to +70 KB over the second half (more than Qeq) from where the swings fall
    q = 400e3 + 500e3 * np.sin(2 * np.pi * T / 0.05) + 60e3 * T
    bad, drift = climbs(T, np.clip(q, 0, None), QEQ)
    assert drift > QEQ and not bad


def test_a_queue_that_climbs_and_never_idles_is_overloaded():
    q = 150e6 + 30e6 * T + 200e3 * np.sin(2 * np.pi * T / 0.02)
    bad, drift = climbs(T, q, QEQ)
    assert bad and drift == pytest.approx(45e6, rel=0.01)


def test_a_draining_backlog_is_held():
    q = 190e6 - 45e6 * T
    bad, drift = climbs(T, q, QEQ)
    assert not bad and drift < 0


def test_too_short_a_trace_says_nothing():
    assert climbs([0.0], [1e9], QEQ) == (False, 0.0)
    assert climbs([], [], QEQ) == (False, 0.0)


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([(400, False), (500, False), (600, True), (700, True)], (500, 600)),
        ([(400, True), (500, False), (600, True)], (None, 400)),
        ([(400, False), (500, False)], (500, None)),
        ([(400, False), (500, True), (600, False), (700, True)], (400, 500)),
    ],
)
def test_the_grid_bracket_is_the_first_overloaded_count(flags, expected):
    assert _bracket(flags) == expected


def test_confirm_reads_an_overloaded_point_by_the_climb():
    from qcnmodel.studies.confirm import OVERLOAD, _agrees

    pt = {"judged_by": OVERLOAD, "stable": False}
    climbing = {"verdict": "drifting", "time_s": T, "queue_bytes": 150e6 + 30e6 * T}
    draining = {"verdict": "drifting", "time_s": T, "queue_bytes": 190e6 - 45e6 * T}
    assert _agrees(pt, climbing, QEQ)
    assert not _agrees(pt, draining, QEQ)  # "drifting" is not stable, yet the port is held
