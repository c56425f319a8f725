"""Shared check: the class model's symbolic Jacobians against finite differences."""

import numpy as np

from qcnmodel.analysis.linearize import finite_difference_jacobian
from qcnmodel.models.qcn_classes import CLASSES_RHS


def assert_jacobians_match_finite_differences(m) -> None:
    """A0 and every per-class A_k of ``m`` equal central differences of the compiled rhs."""
    a0, ak = m.jacobians()
    x = m._state(m._symmetric._x_star)
    p = m.param_vector()

    def f(xx, xd):
        out = np.empty(x.size)
        CLASSES_RHS.jit(0.0, np.ascontiguousarray(xx), np.ascontiguousarray(xd), p, out)
        return out

    base = np.tile(x, (2, 1))
    fd0 = finite_difference_jacobian(lambda z: f(z, base), x, rel_step=1e-7)
    # central differences: ~1e-7 relative; 1e-5 of the matrix norm leaves margin
    np.testing.assert_allclose(a0, fd0, atol=1e-5 * np.abs(fd0).max())
    for k in range(2):

        def g(z, k=k):
            xd = base.copy()
            xd[k] = z
            return f(x, xd)

        fdk = finite_difference_jacobian(g, x, rel_step=1e-7)
        np.testing.assert_allclose(ak[k], fdk, atol=1e-5 * np.abs(fdk).max())
