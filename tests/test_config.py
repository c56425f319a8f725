"""config.defaults: the tuning numbers of the analysis, models and studies are read at call time."""

import pytest

import qcnmodel as qm
from qcnmodel import config
from qcnmodel.analysis.stability import stability_map
from qcnmodel.models.fopdt import FOPDTModel
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.studies.check import CheckRanges
from qcnmodel.studies.report import ReportConfig


@pytest.fixture(autouse=True)
def _restore():
    yield
    config.reset_defaults()


def test_front_door_exposes_the_same_dict():
    assert qm.config is config and "analysis.map_rtt" in qm.config.defaults


def test_defaults_are_read_when_called():
    config.defaults["analysis.map_rtt"] = (1e-5, 1e-4, 3)
    config.defaults["analysis.map_max_flows"] = 2
    ds = stability_map(FOPDTModel())
    assert ds.sizes == {"n_flows": 2, "rtt": 3}
    config.defaults["studies.check_n_rtt"] = 7
    config.defaults["studies.report_weights"] = (4.0,)
    assert CheckRanges().n_rtt == 7 and ReportConfig().weights == (4.0,)
    config.defaults["models.record_points"] = 10
    assert QCNFluidModel().simulate(0.01).time.size == 11


def test_reset_restores_the_shipped_values():
    config.defaults["studies.check_n_rtt"] = 7
    config.reset_defaults()
    assert CheckRanges().n_rtt == 60
