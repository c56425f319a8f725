"""Roots bracketed on a table and refined together (qcnmodel.analysis._roots): brentq's
tolerance, also where the function's noise exceeds it, and the table's first estimate."""

import numpy as np
import pytest

from qcnmodel.analysis._roots import refine_roots, table_guess


def test_refine_roots_keeps_brentqs_tolerance_on_a_noisy_function():
    # roots of a smooth function under deterministic noise of 1e-9, above the tolerance:
    # each answer still has a sign change of the function within xtol + rtol x of it
    rng = np.random.default_rng(0)
    roots = rng.uniform(1.0, 2.0, 40)
    seen = [[] for _ in roots]

    def f(x, idx):
        v = np.tanh(x - roots[idx]) + 1e-9 * np.sin(1e12 * x)
        for k, xk, vk in zip(idx, x, v):
            seen[k].append((xk, vk))
        return v, x.astype(complex)

    everyone = np.arange(roots.size)
    lo, hi = roots - 0.03, roots + 0.05
    flo, fhi = f(lo, everyone)[0], f(hi, everyone)[0]
    x, payload, calls = refine_roots(f, lo, hi, flo, fhi, 0.5 * (lo + hi), 2e-12, 1e-12)
    for k, xk in enumerate(x):
        near = [v for xs, v in seen[k] if abs(xs - xk) <= 2e-12 + 1e-12 * xk]
        assert min(near) < 0 < max(near) or 0.0 in near
    assert np.all(np.abs(x - roots) < 1e-8)  # the noise's reach: 1e-9 / slope 1, and some
    assert np.array_equal(payload.real, x)
    assert calls < 80


@pytest.mark.parametrize("n_nodes", [3, 421])
def test_table_guess_interpolates_inside_the_bracket(n_nodes):
    x = np.geomspace(0.1, 10.0, n_nodes)
    f = np.log(x) - np.log(np.array([0.5, 2.0, 7.0]))[:, None]
    i = np.array([np.searchsorted(x, r) - 1 for r in (0.5, 2.0, 7.0)])
    guess = table_guess(x, f, i)
    assert np.all((guess > x[i]) & (guess < x[i + 1]))
    if n_nodes > 4:  # cubic through four nodes 1.1 % apart: about 1e-8 relative
        np.testing.assert_allclose(guess, [0.5, 2.0, 7.0], rtol=1e-7)
