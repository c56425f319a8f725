"""Bad inputs to the analysis surfaces name the field and its range (ValueError), before any
work: stability maps, critical RTT searches, delay sweeps, limit cycles, summaries and the
models' operating point."""

import math

import numpy as np
import pytest

import qcnmodel as qm
from qcnmodel import config


def _paper(**kw):
    base = dict(rtt=100e-6, n_flows=10, capacity=5e9, fidelity="paper")
    return qm.QCNFluidModel(qm.QCNParams(), **{**base, **kw})


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        (dict(x="nope"), "nope"),
        (dict(x_values=[math.nan]), "x_values"),
        (dict(x_values=[-1e-6]), "x_values"),
        (dict(y_values=[0]), "y_values"),
        (dict(x_values=["a"]), "x_values"),
    ],
)
def test_stability_map_refuses_a_grid_it_cannot_answer(kw, field):
    with pytest.raises(ValueError, match=field):
        qm.stability_map(_paper(), **kw)


def test_stability_map_bounds_the_grid_and_checks_the_model(monkeypatch):
    monkeypatch.setitem(config.defaults, "analysis.map_max_points", 10)
    with pytest.raises(ValueError, match="map_max_points"):
        qm.stability_map(_paper(), x_values=np.geomspace(1e-6, 1e-3, 4), y_values=[1, 2, 3])
    with pytest.raises(ValueError, match="model"):
        qm.stability_map(None)


def test_a_valid_small_map_still_runs():
    ds = qm.stability_map(_paper(), x_values=np.geomspace(1e-5, 1e-3, 4), y_values=[1, 10])
    assert ds.critical_rtt.shape == (2,)
    ds = qm.stability_map(_paper(), x="w", x_values=[1.0, 2.0], y_values=[10])
    assert ds.phase_margin_deg.shape == (1, 2)


@pytest.mark.parametrize(("lo", "hi"), [(1e-3, 1e-6), (-1.0, 1.0), (1e-6, math.nan), (0.0, 1.0)])
def test_critical_rtt_search_interval_is_checked(lo, hi):
    m = _paper()
    with pytest.raises(ValueError, match="rtt_min, rtt_max"):
        qm.critical_rtt(lambda r: m.replace(rtt=r).loop(), rtt_min=lo, rtt_max=hi)


def test_margins_over_delay_bounds_the_number_of_delays(monkeypatch):
    monkeypatch.setitem(config.defaults, "analysis.max_delays", 5)
    loop = qm.build_model("fopdt").loop()
    with pytest.raises(ValueError, match="max_delays"):
        qm.margins_over_delay(loop, np.linspace(0, 1e-3, 6))
    assert qm.margins_over_delay(loop, np.linspace(0, 1e-3, 5)).stable.shape == (5,)


@pytest.mark.parametrize("which", ["fopdt", "qcn"])  # a DelayedLoop and a FrequencyLoop
def test_margins_over_delay_takes_unit_strings_and_names_bad_delays(which):
    loop = qm.build_model(which, n_flows=10).loop()
    by_number = qm.margins_over_delay(loop, [10e-6, 100e-6]).phase_margin_deg
    by_string = qm.margins_over_delay(loop, ["10us", "100 us"]).phase_margin_deg
    assert np.array_equal(by_number, by_string)
    assert np.ndim(qm.margins_over_delay(loop, "50us").phase_margin_deg) == 0
    for bad, says in (([], "at least one delay"), (["abc"], "abc"), ([-1e-6], ">= 0"),
                      ([math.nan], "finite")):  # fmt: skip
        with pytest.raises(ValueError, match=f"taus: .*{says}"):
            qm.margins_over_delay(loop, bad)


@pytest.mark.parametrize("amps", [[-1.0, 2.0], [1e3], [math.nan, 1.0]])
def test_limit_cycle_amplitudes_are_checked(amps):
    m = qm.QCNFluidModel(qm.QCNParams(), rtt=500e-6, n_flows=1, capacity=5e9)
    with pytest.raises(ValueError, match="amplitudes"):
        qm.limit_cycle(m, amplitudes=amps)


def test_summary_names_a_missing_model():
    with pytest.raises(ValueError, match="model"):
        qm.summary(None)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        (dict(rtt=1e308), "rtt"),
        (dict(rtt=math.nan), "rtt"),
        (dict(n_flows=10**400), "n_flows"),
        (dict(n_flows=10**12), "n_flows"),
        (dict(n_flows=2.5), "n_flows"),
    ],
)
def test_operating_point_limits(kw, field):
    with pytest.raises(ValueError, match=field):
        _paper(**kw)


def test_the_largest_rtt_still_analyses():
    m = qm.build_model("fopdt").replace(rtt=config.defaults["models.max_rtt"])
    assert not qm.summary(m, fixed_point=False)["stable"]


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        (dict(rtt_min=-1e-6), "rtt_min"),
        (dict(rtt_min=0.0), "rtt_min"),
        (dict(rtt_max=math.nan), "rtt_max"),
        (dict(rtt_max=math.inf), "rtt_max"),
        (dict(rtt_min=1e-3, rtt_max=1e-6), "rtt_min, rtt_max"),
        (dict(rtt_min=1e-3, rtt_max=1e-3), "rtt_min, rtt_max"),
        (dict(xtol=-1.0), "xtol"),
        (dict(xtol=math.nan), "xtol"),
        (dict(rtol=0.0), "rtol"),
    ],
)
def test_critical_rtt_refuses_a_bad_search_on_every_path(kw, field):
    # the paper model's rational part does not depend on the RTT: the answer is exact and
    # the search arguments were not read at all, so bad ones passed unnoticed
    with pytest.raises(ValueError, match=field):
        qm.critical_rtt(_paper(), **kw)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: qm.critical_rtt(_paper(), rtt_min=[1e-6]), "rtt_min"),  # "1us" is a time
        (lambda: qm.margins_over_delay("abc", [1e-4]), "loop"),
        (lambda: qm.trajectory_critical_rtt(5), "model"),
        (lambda: qm.trajectory_critical_rtt("abc"), "model"),
        (lambda: qm.held_flows("abc", 10), "model"),
        (lambda: qm.critical_rtt("abc"), "model"),
    ],
)
def test_a_wrong_argument_type_is_a_type_error_naming_it(call, field):
    # these raised AttributeError ('str' object has no attribute ...) or a TypeError from
    # str.replace, naming nothing
    with pytest.raises(TypeError, match=field):
        call()


def test_times_at_the_analysis_edges_take_unit_strings():
    m = qm.build_model("fopdt", qm.QCNParams.preset("802.1qau"), rtt="100us")
    assert qm.critical_rtt(m, "1us", "10ms") == qm.critical_rtt(m, 1e-6, 1e-2)
    by_string = qm.stability_map(m, x_values=["10us", "100us"], y_values=[1, 10])
    by_number = qm.stability_map(m, x_values=[10e-6, 100e-6], y_values=[1, 10])
    assert np.array_equal(by_string.phase_margin_deg, by_number.phase_margin_deg)
    assert qm.DelayedLoop([1.0], [1.0, 1.0], delay="1ms").delay == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="rtt_min: cannot parse"):
        qm.critical_rtt(m, "soon", "1ms")
    with pytest.raises(ValueError, match="delay: expected a time"):
        qm.DelayedLoop([1.0], [1.0, 1.0], delay="later")


def test_a_python_control_system_becomes_a_delayed_loop_through_from_tf():
    import control

    from qcnmodel.analysis.loop import DelayedLoop

    g = control.tf([1e6], [1.0, 300.0, 0.0], name="g")
    direct = DelayedLoop([1e6], [1.0, 300.0, 0.0], 1e-4)
    for sys in (g, control.ss(g)):
        loop = DelayedLoop.from_tf(sys, "100us")
        assert loop.delay == 1e-4
        assert loop.margins().phase_margin_deg == pytest.approx(
            direct.margins().phase_margin_deg, rel=1e-9
        )
    with pytest.raises(ValueError, match="from_tf"):
        DelayedLoop(g, [1.0, 1.0], 1e-3)
    with pytest.raises(ValueError, match="continuous-time"):
        DelayedLoop.from_tf(control.tf([1.0], [1.0, 1.0], 0.1))


def test_a_zero_loop_gain_is_refused_with_its_reason():
    from qcnmodel.analysis.loop import DelayedLoop

    with pytest.raises(ValueError, match="num: the loop gain is zero"):
        DelayedLoop([0.0], [1.0, 1.0], 1e-3)


def test_a_map_axis_the_model_does_not_have_names_the_axis_and_the_model_arguments():
    """A typo in ``y`` named QCNParams and listed its fields only, not ``y`` nor the model's
    own arguments (n_flows, rtt, capacity), which are the usual axes."""
    with pytest.raises(ValueError, match=r"^y: 'nflows': .*the model's own arguments are rtt, "
                                         r"n_flows, capacity"):  # fmt: skip
        qm.stability_map(qm.FOPDTModel(), y="nflows", y_values=[1, 2], x_values=[50e-6])


def test_the_fopdt_step_response_names_its_duration_and_carries_units():
    m = qm.FOPDTModel()
    for bad in (-1, 0, "-5ms"):
        with pytest.raises(ValueError, match=r"^duration: the end time must be finite and > 0"):
            m.simulate(bad)
    ds = m.simulate("10ms")
    assert ds.time.attrs["units"] == "s" and ds.y.attrs["units"] == "1"
    assert ds.time.values[-1] == pytest.approx(10e-3)
