"""Fair allocations from routing matrices (qcnmodel.sim.fair).

The deck numbers (scenarios.md S6, S7, S9, S12) are checked with routing matrices written from
the placements scenarios.md gives; the scenario-level tests (issue 7) derive the same matrices
from the simulator topologies.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel.sim.fair import fairness_error, max_min_fair, proportional_fair

G = 1e9

# Parking lot (S12): links L1 (A->B), L2 (B->C), C->node 9; flows: 4 hot (1..4 -> 9),
# cold 5->7 (crosses L1), cold 6->8 (crosses L2). All 10 Gb/s, demands 10 Gb/s.
PARKING = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 0, 0]])


def test_parking_lot_max_min():
    x = max_min_fair(PARKING, [10 * G] * 3, [10 * G] * 6)
    np.testing.assert_allclose(x, 2 * G, rtol=1e-12)  # exact arithmetic up to rounding


def test_parking_lot_proportional():
    # Deck: 1.67 Gb/s per hot flow, 3.33 per cold flow; exact values 5/3 and 10/3.
    x = proportional_fair(PARKING, [10 * G] * 3, [10 * G] * 6)
    # rtol 1e-6: the dual solver's gradient tolerance (see proportional_fair).
    np.testing.assert_allclose(x, [5 / 3 * G] * 4 + [10 / 3 * G] * 2, rtol=1e-6)


def test_ig_hotspot():
    # S9: culprits 2..5 -> 6, victim 1 -> 7, demands 5 Gb/s. The deck's allocation (2.5 Gb/s per
    # culprit, 5 Gb/s for the victim) needs 15 Gb/s toward nodes 6 and 7 together, so those two
    # nodes cannot sit behind one shared 10 Gb/s link: they hang off the switch that the four
    # culprit paths and the victim path meet at. Links: edge1->core (culprit from node 2 and the
    # victim), core->node 6 (culprits), core->node 7 (victim).
    A = np.array(
        [
            [1, 0, 0, 0, 1],  # edge1 -> core
            [1, 1, 1, 1, 0],  # core -> node 6
            [0, 0, 0, 0, 1],  # core -> node 7
        ]
    )
    x = max_min_fair(A, [10 * G] * 3, [5 * G] * 5)
    np.testing.assert_allclose(x, [2.5 * G] * 4 + [5 * G], rtol=1e-12)
    # With a shared 10 Gb/s link toward both nodes the deck's numbers are not attainable.
    shared = np.vstack([A, np.ones((1, 5))])
    assert not np.allclose(max_min_fair(shared, [10 * G] * 4, [5 * G] * 5)[:4], 2.5 * G)


def test_dual_hotspots():
    # S6 light & heavy: 1,4,5,7 -> 8 and 2 -> 4, 9 Gb/s each; nodes 1, 2 on switch 1.
    A = np.array([[1, 0, 0, 0, 1], [1, 1, 1, 1, 0]])  # s1->s2, s2->node8
    x = max_min_fair(A, [10 * G] * 2, [9 * G] * 5)
    np.testing.assert_allclose(x, [2.5 * G] * 4 + [7.5 * G], rtol=1e-12)
    # S7 heavy & light: 1->8, 4->8, 2->4, 3->5, 6->7; nodes 1, 2, 3, 6 on switch 1.
    A = np.array([[1, 0, 1, 1, 1], [1, 1, 0, 0, 0]])
    x = max_min_fair(A, [10 * G] * 2, [9 * G] * 5)
    np.testing.assert_allclose(x, [2.5 * G, 7.5 * G, 2.5 * G, 2.5 * G, 2.5 * G], rtol=1e-12)


@st.composite
def problems(draw):
    n_links = draw(st.integers(1, 5))
    n_flows = draw(st.integers(1, 6))
    A = np.array(
        draw(
            st.lists(
                st.lists(st.integers(0, 1), min_size=n_flows, max_size=n_flows),
                min_size=n_links,
                max_size=n_links,
            )
        )
    )
    A[draw(st.integers(0, n_links - 1)), :] = 1  # every flow crosses at least one link
    c = np.array(draw(st.lists(st.floats(1.0, 10.0), min_size=n_links, max_size=n_links))) * G
    d = np.array(draw(st.lists(st.floats(0.5, 20.0), min_size=n_flows, max_size=n_flows))) * G
    return A, c, d


@settings(max_examples=60, deadline=None)
@given(problems())
def test_max_min_properties(prob):
    A, c, d = prob
    x = max_min_fair(A, c, d)
    tol = 1e-9 * G
    assert np.all(A @ x <= c + tol) and np.all(x <= d + tol) and np.all(x > 0)
    # Bottleneck characterisation: every flow is at its demand or crosses a saturated link on
    # which no other flow gets more.
    for j in range(A.shape[1]):
        if x[j] >= d[j] - tol:
            continue
        ok = any(
            A[l, j] and A[l] @ x >= c[l] - tol and x[j] >= x[A[l] == 1].max() - tol
            for l in range(A.shape[0])
        )
        assert ok, f"flow {j} has no bottleneck"


@settings(max_examples=40, deadline=None)
@given(problems())
def test_proportional_kkt(prob):
    A, c, d = prob
    x = proportional_fair(A, c, d)
    assert np.all(A @ x <= c * (1 + 1e-6)) and np.all(x <= d * (1 + 1e-9))
    # Optimality against any feasible direction: the objective sum(log x) cannot be improved by
    # moving toward the max-min point (a feasible allocation), to first order.
    y = max_min_fair(A, c, d)
    assert np.sum((y - x) / x) <= 1e-4 * len(x)  # first-order condition, solver tolerance


def test_bad_input():
    with pytest.raises(ValueError, match="capacity"):
        max_min_fair(PARKING, [10 * G, -1, 10 * G])
    with pytest.raises(ValueError, match="demand"):
        max_min_fair(PARKING, [10 * G] * 3, [1] * 5)
    with pytest.raises(ValueError, match="measured"):
        fairness_error([1, 2], [1, 2, 3])
    assert fairness_error([2.2 * G, 1.8 * G], [2 * G, 2 * G]) == pytest.approx(0.1)
