"""Class model with the validation's improvements (CNM-only resets, CP sampling lag)."""

import numpy as np
import pytest
from _classes_jacobian import assert_jacobians_match_finite_differences

from qcnmodel.models.qcn_averaged import QCNAveragedModel
from qcnmodel.models.qcn_classes import QCNClassesFluidModel

KW = {"reset": "cnm", "sampling_lag": True, "capacity": 5e9}


def test_equal_rtt_classes_reduce_to_symmetric_model_with_cnm_resets():
    m = QCNClassesFluidModel(classes=((200e-6, 3), (200e-6, 7)), **KW)
    sym = QCNAveragedModel(n_flows=10, rtt=200e-6, **KW)
    fp = m.fixed_point()
    assert fp["residual"] < 1e-9  # same scale and reason as test_fluid_qcn_classes
    assert fp["q"] == pytest.approx(sym.fixed_point()["q"], rel=1e-12)
    s = 1j * np.logspace(1, 5, 50)
    # same comparison and tolerance reason as test_fluid_qcn_classes (charpoly round-off)
    np.testing.assert_allclose(m.loop()(s), sym.loop()(s), rtol=1e-8)
    assert m.loop().delay == pytest.approx(sym.loop_delay)


def test_jacobians_match_finite_differences_with_cnm_resets():
    m = QCNClassesFluidModel(classes=((100e-6, 3), (800e-6, 7)), **KW)
    assert_jacobians_match_finite_differences(m)


def test_class_delays_include_the_sampling_lag():
    m = QCNClassesFluidModel(classes=((100e-6, 3), (800e-6, 7)), **KW)
    lag = m._symmetric.sampling_lag_s
    assert [t.delay for t in m.loop_terms()] == pytest.approx([100e-6 + lag, 800e-6 + lag])
    ds = m.simulate(0.02, record_dt=1e-3)
    np.testing.assert_allclose(ds.rtt.values, [100e-6, 800e-6])
