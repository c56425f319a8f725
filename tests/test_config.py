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


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        # once: an infinite phase margin (an unstable loop looked stable)
        ("analysis.crossover_grid_per_decade", 0, "must be > 0, got 0"),
        ("analysis.crossover_grid_per_decade", 2.5, "expected a whole number"),
        ("sim.bin_width", float("nan"), "expected a finite number (SI units), got nan"),
        ("sim.bin_width", "100us", "expected a finite number (SI units), got '100us'"),
        ("sim.bin_widht", 1e-4, "unknown key 'sim.bin_widht'; did you mean 'sim.bin_width'"),
        ("analysis.map_rtt", (1e-5, 1e-4), "expected 3 values like"),
        ("analysis.trajectory_progress", 1, "expected True or False"),
        ("studies.check_search", {"zz": (1, 2)}, "unknown key 'zz'"),
        ("studies.sweep_chunk", 0, "must be > 0"),
    ],
)
def test_a_default_of_the_wrong_kind_is_refused_naming_the_key(key, value, needle):
    before = dict(config.defaults)
    with pytest.raises(ValueError) as info:
        config.defaults[key] = value
    assert needle in str(info.value) and str(info.value).startswith("config.defaults")
    assert dict(config.defaults) == before  # nothing changed
    with pytest.raises(ValueError, match="unknown key"):
        config.defaults.update({"nope": 1})


def test_defaults_of_the_right_kind_are_taken():
    for key, value in (
        ("studies.report_weights", (4.0,)),
        ("studies.sweep_chunk", None),
        ("studies.check_search", {"w": (2.0, 2.1)}),
        ("sim.bin_width", 2e-3),
    ):
        config.defaults[key] = value
        assert config.defaults[key] == value
    config.reset_defaults()


def test_defaults_cannot_be_bypassed_or_emptied():
    with pytest.raises(ValueError, match="must be > 0"):
        config.defaults |= {"analysis.crossover_grid_per_decade": 0}
    for remove in (lambda d: d.pop("sim.bin_width"), lambda d: d.clear(),
                   lambda d: d.__delitem__("sim.bin_width"), lambda d: d.popitem()):  # fmt: skip
        with pytest.raises(ValueError, match="a key cannot be removed"):
            remove(config.defaults)
    with pytest.raises(ValueError, match=r"needs lo <= hi"):
        config.defaults["analysis.map_rtt"] = (1e-3, 1e-6, 100)
    config.defaults |= {"sim.bin_width": 2e-3}
    assert config.defaults["sim.bin_width"] == 2e-3
    config.reset_defaults()
    assert config.defaults["sim.bin_width"] == 1e-3 and "analysis.map_rtt" in config.defaults
