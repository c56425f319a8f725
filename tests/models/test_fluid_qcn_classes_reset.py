"""Class model with the validation's improvements (CNM-only resets, CP sampling lag)."""

import numpy as np
import pytest

from qcnmodel.fluid_qcn import QCNFluidModel
from qcnmodel.fluid_qcn_classes import CLASSES_RHS, QCNClassesFluidModel
from qcnmodel.linearize import finite_difference_jacobian

KW = {"reset": "cnm", "sampling_lag": True, "capacity": 5e9}


def test_equal_rtt_classes_reduce_to_symmetric_model_with_cnm_resets():
    m = QCNClassesFluidModel(classes=((200e-6, 3), (200e-6, 7)), **KW)
    sym = QCNFluidModel(n_flows=10, rtt=200e-6, **KW)
    fp = m.fixed_point()
    assert fp["residual"] < 1e-9  # same scale and reason as test_fluid_qcn_classes
    assert fp["q"] == pytest.approx(sym.fixed_point()["q"], rel=1e-12)
    s = 1j * np.logspace(1, 5, 50)
    # same comparison and tolerance reason as test_fluid_qcn_classes (charpoly round-off)
    np.testing.assert_allclose(m.loop()(s), sym.loop()(s), rtol=1e-8)
    assert m.loop().delay == pytest.approx(sym.loop_delay)


def test_jacobians_match_finite_differences_with_cnm_resets():
    m = QCNClassesFluidModel(classes=((100e-6, 3), (800e-6, 7)), **KW)
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


def test_class_delays_include_the_sampling_lag():
    m = QCNClassesFluidModel(classes=((100e-6, 3), (800e-6, 7)), **KW)
    lag = m._symmetric.sampling_lag_s
    assert [t.delay for t in m.loop_terms()] == pytest.approx([100e-6 + lag, 800e-6 + lag])
    ds = m.simulate(0.02, record_dt=1e-3)
    np.testing.assert_allclose(ds.rtt.values, [100e-6, 800e-6])
