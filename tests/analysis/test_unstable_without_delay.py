"""A loop unstable already without delay has no critical delay to report unless its margin
ran out before delay 0: NaN, not a positive delay (nor inf) that reads as a stable range.

Each loop's instability at delay 0 is checked here independently, from the roots of the
delay-free closed loop's characteristic polynomial ``den + num`` (numpy), not by the code
under test.
"""

import numpy as np
import pytest

from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.analysis.margins import critical_delay, critical_rtt, margins_over_delay


def rhp_roots(num, den) -> int:
    return int(np.sum(np.roots(np.polyadd(den, num)).real > 0))


# L(s) = 100 (s + 10) / ((s - 50)(s + 40)): den + num = s^2 + 90 s - 1000, one root in the
# RHP; |L(jw)| = 1 at w^2 = (5900 -+ 4776)/2, i.e. w = 23.7 and 73.1 rad/s
TWO_CROSSOVERS = (100 * np.poly([-10.0]), np.poly([50.0, -40.0]))
# L(s) = 1.5 / ((s - 1)(s + 2)): |L| < 1 everywhere (|(jw - 1)(jw + 2)| >= 2), no crossover;
# den + num = s^2 + s - 0.5, one root in the RHP
NO_CROSSOVER = (np.array([1.5]), np.poly([1.0, -2.0]))


def test_two_crossovers_unstable_at_delay_zero_give_no_critical_delay():
    num, den = TWO_CROSSOVERS
    assert rhp_roots(num, den) == 1
    m = DelayedLoop(num, den, 0.0).margins()
    w = np.sqrt((5900 - np.sqrt(5900**2 - 12e6)) / 2), np.sqrt((5900 + np.sqrt(5900**2 - 12e6)) / 2)
    assert min(abs(m.crossover_rad_s - x) for x in w) < 1e-6 * m.crossover_rad_s
    assert not m.stable
    assert m.phase_margin_deg > 0  # the crossover's own margin is positive ...
    assert np.isnan(m.critical_delay_s) and np.isnan(m.delay_margin_s)  # ... but no range
    assert np.isnan(critical_delay(DelayedLoop(num, den, 1e-3)))


def test_no_crossover_and_unstable_is_nan_not_inf():
    num, den = NO_CROSSOVER
    assert rhp_roots(num, den) == 1
    m = margins_over_delay(DelayedLoop(num, den, 0.0), [0.0, 1e-3])
    assert not np.any(m.stable)
    assert np.all(np.isnan(m.critical_delay_s))
    assert np.isnan(critical_rtt(DelayedLoop(num, den, 0.0)))


def test_a_stable_loop_keeps_its_critical_delay():
    # L(s) = 2 / (s (s + 1)): crossover w^2 (w^2 + 1) = 4, PM = 180 - 90 - atan(w) deg
    num, den = np.array([2.0]), np.poly([0.0, -1.0])
    w = np.sqrt((-1 + np.sqrt(17)) / 2)
    pm = np.pi / 2 - np.arctan(w)
    assert critical_delay(DelayedLoop(num, den, 0.0)) == pytest.approx(pm / w, rel=1e-9)
    # no crossover and stable: inf, as before
    assert critical_delay(DelayedLoop(np.array([0.5]), np.poly([-1.0]), 0.0)) == np.inf


def test_the_search_path_counts_a_loop_unstable_through_another_crossover_as_lost():
    # critical_rtt of an rtt -> loop factory searches the RTT; it followed the phase margin
    # alone, which stays positive at small delays for this loop unstable at every delay
    num, den = TWO_CROSSOVERS
    assert np.isnan(critical_rtt(lambda r: DelayedLoop(num, den, r), 1e-6, 1.0))
    # a stable loop's search still finds its critical delay (exact value as above)
    num, den = np.array([2.0]), np.poly([0.0, -1.0])
    w = np.sqrt((-1 + np.sqrt(17)) / 2)
    found = critical_rtt(lambda r: DelayedLoop(num, den, r), 1e-6, 100.0)
    assert found == pytest.approx((np.pi / 2 - np.arctan(w)) / w, rel=1e-8)


def test_check_says_there_is_no_delay_margin_where_a_loop_is_unstable_without_delay(
    monkeypatch,
):
    # the lowest delay margin over the grid ignored NaN and could read inf or a positive
    # figure; the default model's loop is replaced by TWO_CROSSOVERS (unstable without delay,
    # above) at each point's RTT, so that check's own reading of it is what is tested
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.params import QCNParams
    from qcnmodel.studies.check import CheckRanges, check_params
    from qcnmodel.studies.check_text import render

    num, den = TWO_CROSSOVERS
    monkeypatch.setattr(QCNFluidModel, "loop", lambda self: DelayedLoop(num, den, self.rtt))
    ranges = CheckRanges(rtt=(1e-4, 1e-4), flows=(10, 10))
    r = check_params(QCNParams.preset("802.1qau"), ranges, recommend=False,
                     boundary="linearisation")  # fmt: skip
    assert np.isnan(r.worst_delay_margin_s)
    text = render(r, ranges, "test")
    assert "lowest delay margin  none: a linearised loop is unstable already without delay" in text
