"""Matched pairs, a quick subset (default suite): what the default (packet-fidelity) QCN model
gets right, and the disagreements of the published cycle-averaged equations that it closes.

Tolerances are those of :mod:`qcnmodel.validation.pairs` (each row states its source); the
tests assert the row verdicts, not thresholds of their own.
"""

import pytest

from qcnmodel.validation import pairs as P
from qcnmodel.validation.suite import BOUNDARY_GRID

DEFAULT = P.DEFAULT_VARIANT


def _row(rows, variant, quantity):
    (r,) = [r for r in rows if r.model_variant == variant and r.quantity.startswith(quantity)]
    return r


def test_the_default_variant_is_the_packet_fidelity_model():
    assert DEFAULT == "packet"
    assert P.model_of(DEFAULT, P.Case(10)).fidelity == "packet"


@pytest.fixture(scope="module")
def eq_rows():
    return P.check_equilibrium(P.Case(10), [DEFAULT, "paper"])


def test_equilibrium_queue_and_rate_match(eq_rows):
    assert _row(eq_rows, DEFAULT, "hot queue").passed
    assert _row(eq_rows, DEFAULT, "per-flow rate (mean").passed


def test_paper_equations_drain_the_queue(eq_rows):
    # finding: with the sampling probability as the counters' reset probability the start-up
    # cut is never undone; the simulated queue holds ~25 KB
    r = _row(eq_rows, "paper", "hot queue")
    assert not r.passed and r.model < 1500 and r.simulated > 12000


def test_timer_synchronised_oscillation_at_100_flows_is_predicted():
    rows = P.check_oscillation(P.Case(100), [DEFAULT, "paper"])
    r = _row(rows, DEFAULT, "stable /")
    assert r.passed and r.simulated != "stable"
    assert "linearised: oscillating" in r.note  # the linearisation predicts it, too


def test_recovery_after_a_hotspot():
    case = P.Case(1, 200e-6, 0.2e9, 1e9, "netfpga-1g")
    rows = P.check_recovery(case, (0.2, 1.2), 1.6, [DEFAULT, "paper"])
    assert _row(rows, DEFAULT, "recovery").passed
    assert _row(rows, "paper", "recovery").model == "never"


def test_linearised_boundary_at_ten_flows():
    # three simulated seeds, as the quick plan scans (at 566 us 6 of 9 seeds cycle, seed 0 not)
    rows = P.check_boundary(P.Case(10), [DEFAULT], BOUNDARY_GRID, bisect_steps=1,
                            seeds=(0, 1, 2))  # fmt: skip
    assert _row(rows, DEFAULT, "critical RTT").passed


def test_largest_flow_count_held_against_the_packets():
    # the quick plan's row: packets at N = 500, 600, 700 into a 5 Gb/s port bracket the
    # largest N held; the default model's equilibrium ends inside, the paper's does not
    from qcnmodel.validation.overload import QUICK_FRACTIONS, check_overload

    rows = check_overload(P.Case(10), [DEFAULT, "paper"], QUICK_FRACTIONS)
    assert _row(rows, DEFAULT, "largest N held").passed
    assert _row(rows, DEFAULT, "largest N held").simulated == "[500, 600)"
    assert not _row(rows, "paper", "largest N held").passed
