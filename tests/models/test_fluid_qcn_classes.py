"""N-class QCN fluid model (classes with their own RTTs)."""

import numpy as np
import pytest
from _classes_jacobian import assert_jacobians_match_finite_differences

from qcnmodel.models.qcn_averaged import QCNAveragedModel
from qcnmodel.models.qcn_classes import QCNClassesFluidModel
from qcnmodel.params import QCNParams

SHORT_BC = QCNParams(bc_limit=15000)  # equilibrium well inside the congested region


def test_equal_rtt_classes_reduce_to_symmetric_model():
    m = QCNClassesFluidModel(params=SHORT_BC, classes=((200e-6, 3), (200e-6, 7)))
    sym = QCNAveragedModel(params=SHORT_BC, n_flows=10, rtt=200e-6)
    fp = m.fixed_point()
    assert fp["residual"] < 1e-9  # same scale and reason as the symmetric test
    assert fp["q"] == pytest.approx(sym.fixed_point()["q"], rel=1e-12)
    s = 1j * np.logspace(1, 5, 50)
    # the 5-state loop equals the 3-state one up to pole-zero cancellations: values agree
    # to round-off of the charpoly coefficients (~1e-12 relative)
    np.testing.assert_allclose(m.loop()(s), sym.loop()(s), rtol=1e-8)


@pytest.mark.parametrize("timer", [False, True])
def test_jacobians_match_finite_differences(timer):
    m = QCNClassesFluidModel(params=SHORT_BC, classes=((100e-6, 3), (800e-6, 7)), timer=timer)
    assert_jacobians_match_finite_differences(m)


def test_mixed_rtts_multi_delay_loop_and_convergence():
    m = QCNClassesFluidModel(params=SHORT_BC, classes=((100e-6, 3), (800e-6, 7)))
    with pytest.raises(ValueError, match="multi-delay"):
        m.loop()
    w = np.logspace(1, 5, 20000)
    lv = m.loop_value(1j * w)
    i = np.argmin(np.abs(np.abs(lv) - 1))
    pm = 180 + np.degrees(np.angle(lv[i]))
    assert pm > 10  # measured 19 deg: the loop is stable
    fp = m.fixed_point()
    ds = m.simulate(0.3, x0={"q": fp["q"] + 1000.0}, record_dt=1e-4)
    # the perturbation (1000 B) decays; 1 B after 0.3 s (measured 1e-5 B)
    assert abs(float(ds.q[-1]) - fp["q"]) < 1.0
    np.testing.assert_allclose(ds.rate_current.values[-1], fp["rate_current"], rtol=1e-5)


def test_compiled_matches_reference():
    m = QCNClassesFluidModel(params=SHORT_BC, classes=((100e-6, 3), (400e-6, 7)))
    fp = m.fixed_point()
    kw = dict(duration=0.02, x0={"q": 1.5 * fp["q"]}, record_dt=1e-4)
    ref = m.simulate(method="reference", rtol=1e-10, **kw)
    fix = m.simulate(**kw)
    # same reasoning and bounds as the symmetric model's test
    assert np.max(np.abs(fix.q.values - ref.q.values)) < 2e-4 * np.ptp(ref.q.values)
    err = np.abs(fix.rate_current.values - ref.rate_current.values)
    assert np.max(err) < 2e-5 * fp["rate_current"][0]


@pytest.mark.parametrize(
    "classes, field",
    [
        ((), "classes"),
        (((100e-6,),), "classes"),
        (((-1e-6, 3),), r"classes\[0\].rtt"),
        (((1e-4, 3), (1e-4, 0)), r"classes\[1\].n_flows"),
    ],
)
def test_bad_classes_raise(classes, field):
    with pytest.raises(ValueError, match=field):
        QCNClassesFluidModel(classes=classes)
