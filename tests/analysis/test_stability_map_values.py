"""Stability-map axes read their values as every other surface does: numbers in SI units or
unit strings, parsed by the model's own parameter parsers, each value once.

The expected coordinates are the SI values of the strings given (26 KB = 26000 B, 100 us =
1e-4 s), not outputs of the code under test.
"""

import numpy as np
import pytest

import qcnmodel as qm
from qcnmodel.analysis.stability import stability_map
from qcnmodel.models.fopdt import FOPDTModel
from qcnmodel.params import QCNParams

MODEL = FOPDTModel(QCNParams())


def test_unit_strings_become_si_numbers():
    ds = stability_map(MODEL, y="w", y_values=["2", "8"], x_values=[1e-4, 2e-4])
    assert ds["w"].dtype == float and list(ds["w"].values) == [2.0, 8.0]
    assert ds.sel(w=2)["phase_margin_deg"].shape == (2,)  # selectable by number
    ds = stability_map(MODEL, y="qeq", y_values=["26KB", "52KB"], x_values=["100us", "200us"])
    assert list(ds["qeq"].values) == [26000.0, 52000.0]
    assert list(ds["rtt"].values) == pytest.approx([1e-4, 2e-4], rel=1e-12)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"y_values": [1, 1]}, "y_values: n_flows = 1 is given 2 times"),
        ({"y": "qeq", "y_values": ["26KB", 26000]}, "y_values: qeq = 26000 is given 2 times"),
        ({"x_values": ["1ms", "1000us"]}, "x_values: rtt = 0.001 is given 2 times"),
        ({"y": "qeq", "y_values": ["-5KB"]}, r"y_values: qeq: .*outside the allowed range"),
        ({"y_values": [1, 2.5]}, "y_values: n_flows must be whole numbers"),
    ],
)
def test_bad_axes_are_refused_naming_the_argument(kw, message):
    with pytest.raises(ValueError, match=message):
        stability_map(MODEL, **{"x_values": [1e-4], **kw})


def test_numbers_are_kept():
    ds = stability_map(MODEL, y_values=np.array([2, 10]), x_values=np.array([1e-4]))
    assert list(ds["n_flows"].values) == [2, 10]


@pytest.mark.parametrize(
    "build, y, ys",
    [
        # the CP's sampling lag Ts/2 = frame / (2 Ps C) changes along Ps and the capacity
        (lambda P: qm.QCNFluidModel(P, rtt="100us", n_flows=10, fidelity="paper",
                                    sampling_lag=True), "ps", [0.002, 0.01, 0.02]),
        (lambda P: qm.QCNFluidModel(P, rtt="100us", n_flows=10, fidelity="paper",
                                    sampling_lag=True), "capacity", [2.5e9, 10e9, 40e9]),
        (lambda P: qm.build_model("fopdt", P, variant="zoh", rtt="100us", capacity="40Gbps"),
         "ps", [0.01, 0.04]),
    ],
)  # fmt: skip
def test_each_row_of_an_rtt_map_has_its_own_loop_delay(build, y, ys):
    # the map over the RTT evaluates one loop per row at the delays rtt + extra delay: that
    # extra delay is the row's own, so every point equals the margins of the model there
    model = build(qm.QCNParams.preset("802.1qau"))
    rtts = [50e-6, 100e-6, 200e-6]
    ds = qm.stability_map(model, x="rtt", x_values=rtts, y=y, y_values=ys, method="linearisation")
    for yv in ys:
        for rtt in rtts:
            m = model.replace(**{y: yv, "rtt": rtt}).loop().margins()
            got = ds.sel({y: yv, "rtt": rtt})
            assert float(got.phase_margin_deg) == pytest.approx(m.phase_margin_deg, abs=1e-6)
            assert bool(got.stable) == bool(m.stable)
        crit = qm.critical_rtt(model.replace(**{y: yv}), method="linearisation")
        assert float(ds.critical_rtt.sel({y: yv})) == pytest.approx(crit, rel=1e-6)
