"""Generic linearisation machinery on systems with known answers."""

import numpy as np
import pytest
import sympy as sp

from qcnmodel.analysis.linearize import (
    DelaySystem,
    charpoly_batch,
    finite_difference_jacobian,
    open_loop,
)


def test_charpoly_batch_matches_numpy():
    rng = np.random.default_rng(1)
    mats = rng.normal(size=(20, 4, 4))
    got = charpoly_batch(mats)
    for m, c in zip(mats, got):
        # np.poly goes through eigenvalues: agreement to ~1e-12 for O(1) entries
        np.testing.assert_allclose(c, np.poly(m), atol=1e-10)
    # a structurally singular matrix has an exactly zero constant term
    sing = np.array([[0.0, 1.0], [0.0, -3.0]])
    assert charpoly_batch(sing)[-1] == 0.0


def test_scalar_delay_loop_closed_form():
    # x' = -a x + b - k x(t - tau): fixed point b/(a+k); L(s) = k/(s + a) e^{-s tau}
    x, xd = sp.symbols("x x_d")
    a, b, k = sp.symbols("a b k", positive=True)
    sysm = DelaySystem([-a * x + b - k * xd], [x], [xd], [a, b, k])
    pv = [2.0, 3.0, 5.0]
    xs = sysm.fixed_point(pv, [1.0])
    assert xs[0] == pytest.approx(3.0 / 7.0, rel=1e-12)
    lin = sysm.linearise(xs, pv, 0.1)
    num, den, neglected = lin.open_loop()
    np.testing.assert_allclose(np.trim_zeros(num, "f"), [5.0])
    np.testing.assert_allclose(den, [1.0, 2.0])
    num_s, den_s = sysm.symbolic_loop()
    assert sp.simplify(num_s.as_expr() - k) == 0
    assert sp.simplify(den_s.as_expr() - (sp.Symbol("s") + a)) == 0


def test_rank_two_needs_channel_and_channel_split_is_exact():
    # x' = -x - y(t-tau)/2 + c, y' = -2y + 0.3 x(t-tau): two independent delayed paths
    x, y, xd, yd = sp.symbols("x y x_d y_d")
    c = sp.Symbol("c")
    f = [-x - 0.5 * yd + c, -2 * y + 0.3 * xd]
    sysm = DelaySystem(f, [x, y], [xd, yd], [c])
    lin = sysm.linearise([1.0, 0.15], [1.075], 0.2)
    assert lin.rank_a1() == 2
    with pytest.raises(ValueError, match="rank"):
        lin.open_loop()
    # with a channel y_d -> h: the direct x_d path is moved (and reported)
    h = sp.Symbol("h")
    sysm2 = DelaySystem([-x - 0.5 * h + c, -2 * y + 0.3 * xd], [x, y], [xd, yd], [c], (h, yd))
    lin2 = sysm2.linearise([1.0, 0.15], [1.075], 0.2)
    np.testing.assert_allclose(lin2.a1, lin.a1)
    num, den, neglected = lin2.open_loop()
    assert neglected == pytest.approx(0.3 / np.hypot(0.5, 0.3))


def test_vectorised_jacobians_match_pointwise():
    x, xd = sp.symbols("x x_d")
    a, k = sp.symbols("a k")
    sysm = DelaySystem([-a * x**2 - k * xd * x], [x], [xd], [a, k])
    xs = np.array([0.5, 1.0, 2.0])
    ks = np.array([1.0, 2.0, 3.0])
    a0, a1 = sysm.jacobians([xs], [1.5, ks])
    for i in range(3):
        b0, b1 = sysm.jacobians([xs[i]], [1.5, ks[i]])
        np.testing.assert_allclose(a0[i], b0)
        np.testing.assert_allclose(a1[i], b1)
    num, den, _ = open_loop(a0, a1)
    assert num.shape == (3, 2) and den.shape == (3, 2)


def test_finite_difference_jacobian_exact_for_quadratic():
    def f(z):
        return np.array([z[0] ** 2 + 3 * z[1], z[0] * z[1]])

    # central differences are exact for quadratics up to round-off
    jac = finite_difference_jacobian(f, np.array([2.0, -1.0]))
    np.testing.assert_allclose(jac, [[4.0, 3.0], [-1.0, 2.0]], atol=1e-7)
