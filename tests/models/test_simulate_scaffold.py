"""The fluid models' shared simulate(): unit strings, the output grid, x0 and method checks."""

import numpy as np
import pytest

from qcnmodel.models.dcqcn import DCQCNFluidModel
from qcnmodel.models.ecm import ECMFluidModel
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.models.qcn_classes import QCNClassesFluidModel

MODELS = {
    "qcn": lambda: QCNFluidModel(),
    "ecm": lambda: ECMFluidModel(),
    "dcqcn": lambda: DCQCNFluidModel(),
    "classes": lambda: QCNClassesFluidModel(),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_record_grid_is_exact_with_a_step_that_does_not_divide_it(name):
    # regression (ECM): a 3 us step and 1 ms records gave samples every 0.999 ms; the step is
    # now reduced to divide record_dt, as the other models did
    ds = MODELS[name]().simulate(duration="20ms", dt="3us", record_dt="1ms")
    t = ds.time.values
    assert t.size == 21 and t[-1] == pytest.approx(0.02, rel=1e-12)
    np.testing.assert_allclose(np.diff(t), 1e-3, rtol=1e-9)


@pytest.mark.parametrize("name", list(MODELS))
def test_unit_strings_for_duration_and_record_dt(name):
    # regression (QCN, DCQCN, classes): record_dt="1ms" raised TypeError (not parsed)
    a = MODELS[name]().simulate(duration="10ms", record_dt="1ms")
    b = MODELS[name]().simulate(duration=0.01, record_dt=1e-3)
    assert a.time.size == 11
    for v in a.data_vars:
        np.testing.assert_array_equal(a[v].values, b[v].values)


@pytest.mark.parametrize("name", list(MODELS))
def test_bad_arguments_name_the_field(name):
    m = MODELS[name]()
    with pytest.raises(ValueError, match="x0: unknown key 'qq'; did you mean 'q'"):
        m.simulate(0.01, x0={"qq": 0.0})
    with pytest.raises(ValueError, match="method: unknown method 'rk4'"):
        m.simulate(0.01, method="rk4")
    with pytest.raises(ValueError, match="duration: must be in"):
        m.simulate("0s")
    with pytest.raises(ValueError, match="record_dt: must be in"):
        m.simulate(0.01, record_dt=-1e-3)
    with pytest.raises(ValueError, match="dt: must be in"):
        m.simulate(0.01, dt="0us")
    with pytest.raises(ValueError, match="hotspot: expected"):
        m.simulate(0.01, hotspot=(0.0, 1.0))
    with pytest.raises(ValueError, match="hotspot capacity"):
        m.simulate(0.01, hotspot=(0.0, 1.0, "fast"))


def test_x0_values_reach_the_state_and_missing_keys_keep_the_fixed_point():
    m = QCNFluidModel(n_flows=10)
    fp = m.fixed_point()
    ds = m.simulate(0.001, x0={"q": 5000.0}, record_dt=1e-4)
    assert ds.q_fluid.values[0] == 5000.0
    assert ds.q.values[0] == 3000.0  # the port's: 3 whole frames, one of them in service
    assert ds.rate_current.values[0] == pytest.approx(fp["rate_current"], rel=1e-12)
    d = DCQCNFluidModel(n_flows=4, per_flow=True)
    rates = [1e9, 2e9, 3e9, 4e9]
    ds = d.simulate(0.001, x0={"rate_current": rates}, record_dt=1e-4)
    np.testing.assert_allclose(ds.rate_current.values[0], rates, rtol=1e-12)
