"""The RTT boundary of a predicate: ladder then bisection (analysis.boundary)."""

import math

import pytest

from qcnmodel.analysis.boundary import first_unstable_rtt, trajectory_critical_rtt


@pytest.mark.parametrize("edge", [3.7e-6, 370e-6, 0.0123])
def test_finds_the_turn_within_the_tolerance(edge):
    calls = []

    def unstable(r):
        calls.append(r)
        return r >= edge

    got = first_unstable_rtt(unstable, 1e-6, 0.1, rel_tol=0.005)
    assert edge / 1.005 <= got <= edge * 1.005
    # a ladder of 1.5 from 1 us, then about log(1.5)/log(1.005) / ln 2 bisection steps
    assert len(calls) < 60


def test_ends_of_the_interval():
    assert math.isinf(first_unstable_rtt(lambda r: False, 1e-6, 1e-3))
    assert math.isnan(first_unstable_rtt(lambda r: True, 1e-6, 1e-3))
    # the last ladder rung is rtt_max itself
    assert first_unstable_rtt(lambda r: r >= 1e-3, 1e-6, 1e-3) == pytest.approx(1e-3, rel=0.006)


@pytest.mark.parametrize("lo,hi", [(0.0, 1e-3), (1e-3, 1e-4), (1e-6, math.inf), (-1.0, 1.0)])
def test_bad_interval_names_the_fields(lo, hi):
    with pytest.raises(ValueError, match="rtt_min, rtt_max"):
        first_unstable_rtt(lambda r: False, lo, hi)


class _Toy:
    """A model judged by its trajectories whose verdict turns at 250 us."""

    boundary_method = "trajectories"

    def __init__(self, rtt=1e-4):
        self.rtt = rtt

    def replace(self, rtt):
        return _Toy(rtt)

    def trajectory_unstable(self):
        return self.rtt > 250e-6


def test_trajectory_critical_rtt_and_the_one_home():
    from qcnmodel.analysis.margins import critical_rtt

    got = trajectory_critical_rtt(_Toy())
    assert got == pytest.approx(250e-6, rel=0.006)
    assert critical_rtt(_Toy()) == got  # critical_rtt answers with it for such models
