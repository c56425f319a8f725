"""DDE integrators: compiled fixed-step RK4 against closed forms and the adaptive reference."""

import math

import numpy as np
import pytest
from _dde_cases import LINEAR_SCALAR, TWO_DELAYS

from qcnmodel.analysis.dde import integrate_fixed, integrate_reference


def exact_scalar(t: float) -> float:
    """Method-of-steps closed form of x' = -x(t-1), x = 1 for t <= 0."""
    k = math.floor(t) + 1
    return sum((-1) ** j * (t - (j - 1)) ** j / math.factorial(j) for j in range(k + 1))


def test_closed_form_delay_multiple_of_step():
    res = integrate_fixed(LINEAR_SCALAR, [1.0], [1.0], [1.0], 5.0, 0.01)
    # the solution is a polynomial of degree <= 5 on each unit interval and the history
    # interpolant is exact at grid points; RK4 error O(dt^4) ~ 1e-8 with margin
    assert res.x[-1, 0] == pytest.approx(exact_scalar(5.0), abs=1e-7)


def test_closed_form_delay_not_multiple_of_step():
    # dt = 1/30.5: the delayed times fall between grid points, so the cubic Hermite history
    # is exercised; its O(dt^4) local error gives ~1e-6 at this step
    dt = 1.0 / 30.5
    res = integrate_fixed(LINEAR_SCALAR, [1.0], [1.0], [1.0], 5.0 - 5.0 % dt, dt)
    assert res.x[-1, 0] == pytest.approx(exact_scalar(res.t[-1]), abs=1e-5)


def test_reference_matches_closed_form():
    res = integrate_reference(LINEAR_SCALAR, [1.0], [1.0], [1.0], 5.0, t_eval=[5.0])
    # DOP853 at rtol = atol = 1e-9
    assert res.x[-1, 0] == pytest.approx(exact_scalar(5.0), abs=1e-7)


def test_compiled_vs_reference_two_delays():
    x0 = [1.0, -0.5]
    delays = [0.7, 1.3]
    t = np.linspace(0, 10, 101)
    ref = integrate_reference(TWO_DELAYS, x0, delays, [0.0], 10.0, t_eval=t)
    fix = integrate_fixed(TWO_DELAYS, x0, delays, [0.0], 10.0, 0.01, stride=10)
    # smooth right-hand side, dt = 0.01 on an O(1) time scale: RK4 + Hermite history is
    # accurate to ~1e-8; 1e-6 leaves room for the history's kinks at multiples of the delays
    np.testing.assert_allclose(fix.x, ref.x, atol=1e-6)


def test_lower_bound_and_step_checks():
    res = integrate_fixed(LINEAR_SCALAR, [1.0], [1.0], [1.0], 3.0, 0.01, lower=[0.0])
    assert res.x.min() >= 0.0  # unconstrained solution goes negative at t ~ 1.9
    with pytest.raises(ValueError, match="dt"):
        integrate_fixed(LINEAR_SCALAR, [1.0], [1.0], [1.0], 1.0, 0.6)
