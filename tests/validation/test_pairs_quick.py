"""Matched pairs, quick subset (default suite, ~20 s): the comparisons the improved fluid
model passes, and the models.md disagreements that motivated the improvements (findings).

Tolerances are those of :mod:`qcnmodel.validation.pairs` (each row states its source); the
tests assert the row verdicts, not their own thresholds.
"""

import pytest

from qcnmodel.params import QCNParams
from qcnmodel.validation import pairs as P
from qcnmodel.validation.suite import BOUNDARY_GRID

BEST = "reset=cnm+lag"  # CNM-only counter resets + the CP's zero-order-hold lag
FULL = "reset=cnm+lag+enq+timer+hai"


def _row(rows, variant, quantity):
    (r,) = [r for r in rows if r.model_variant == variant and r.quantity.startswith(quantity)]
    return r


@pytest.fixture(scope="module")
def eq_rows():
    return P.check_equilibrium(10, 100e-6, ["models.md", "reset=cnm", BEST])


def test_equilibrium_queue_and_mean_rate_match_with_cnm_resets(eq_rows):
    for v in ("reset=cnm", BEST):
        assert _row(eq_rows, v, "hot queue").passed
        assert _row(eq_rows, v, "per-flow rate (mean").passed


def test_models_md_variant_drains_the_queue(eq_rows):
    # finding: with p as the reset probability the start-up cut is never undone; the
    # simulated queue holds ~25 KB
    r = _row(eq_rows, "models.md", "hot queue")
    assert not r.passed
    assert r.model < 1500 and r.simulated > QCNParams().qeq / 2


@pytest.mark.parametrize("n, rtt, verdict", [(10, 100e-6, "stable"), (1, 500e-6, "underflow")])
def test_oscillation_class_matches(n, rtt, verdict):
    rows = P.check_oscillation(n, rtt, [BEST])
    r = _row(rows, BEST, "stable")
    assert r.simulated == verdict
    assert r.passed


def test_stability_boundary_n1_within_simulated_bracket():
    # quick scan: one bisection step (bracket [283, 400] us at seed 0)
    rows = P.check_boundary(1, ["models.md", BEST], BOUNDARY_GRID, bisect_steps=1)
    assert _row(rows, BEST, "critical RTT").passed


def test_recovery_needs_timer_and_hai():
    rows = P.check_recovery(1, 200e-6, 1e9, 0.2e9, (0.2, 1.2), 1.6, "netfpga-1g", [BEST, FULL])
    # finding: byte-counter cycles alone (AI 0.5 Mb/s per 75 KB at 0.2 Gb/s) do not recover
    # within the run; with the timer and HAI the model recovers within tolerance
    assert _row(rows, BEST, "recovery").model == "never"
    assert _row(rows, FULL, "recovery").passed
