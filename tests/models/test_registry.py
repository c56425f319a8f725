"""The model registry: build by name and variant, identify, summary, the loop-delay contract."""

import math

import pytest

from qcnmodel.analysis.margins import critical_rtt, rtt_offset
from qcnmodel.models import MODELS, build_model, get_model, identify
from qcnmodel.models.summary import summary
from qcnmodel.params import DCQCNParams, ECMParams, QCNParams


def _search(model):
    """Critical RTT by bracketing PM(rtt) of the rebuilt loop: no use of the extra delay."""
    return critical_rtt(lambda r: model.replace(rtt=r).loop(), rtt_min=1e-6, rtt_max=1e-2)


@pytest.mark.parametrize("name", list(MODELS))
def test_every_variant_builds_and_is_identified(name):
    spec = MODELS[name]
    assert identify(build_model(name)) == (name, spec.default_variant)
    for variant in spec.variants:
        assert identify(build_model(name, variant=variant)) == (name, variant)


@pytest.mark.parametrize(
    ("name", "variant"), [(n, v) for n, s in MODELS.items() for v in s.variants]
)
def test_loop_delay_is_rtt_plus_extra_delay_and_rational_part_is_rtt_free(name, variant):
    # the contract that lets critical_rtt subtract extra_delay instead of searching: the loop
    # delay is the RTT plus extra_delay, and the loop's part without the delay is the same at
    # every RTT, or depends on the loop delay alone (DCQCN's direct delayed-rate paths), the
    # loop then computing its margins delay by delay
    model = build_model(name, variant=variant, n_flows=10)
    assert model.loop().delay == pytest.approx(model.rtt + model.extra_delay, rel=1e-12)
    if getattr(model.loop(), "g_delay", False):
        # the subtraction agrees with a search over the RTT itself
        search = critical_rtt(lambda r: model.replace(rtt=r).loop(), 1e-6, 1e-2)
        assert critical_rtt(model, method="linearisation") == pytest.approx(search, rel=1e-8)
        return
    offset = rtt_offset(model)  # measured: two loops at RTT 1 us and 1 ms
    assert offset is not None
    assert offset == pytest.approx(model.extra_delay, rel=1e-9, abs=1e-15)


def test_fopdt_zoh_extra_delay_is_half_the_sampling_interval():
    model = build_model("fopdt", variant="zoh")
    assert model.extra_delay == pytest.approx(model.gains()["Ts"] / 2, rel=1e-12)
    assert build_model("fopdt").extra_delay == 0.0


@pytest.mark.parametrize(
    ("name", "variant", "settings"),
    [
        ("fopdt", "zoh", {}),
        ("qcn", "paper", {"sampling_lag": True}),
        ("qcn", "paper", {"reset": "cnm", "sampling_lag": True}),
        ("qcn", "paper", {}),
        ("dcqcn", "exact", {"rtt": "50us"}),
        ("ecm", "mean", {}),
    ],
)
def test_critical_rtt_is_where_the_phase_margin_of_the_rtt_vanishes(name, variant, settings):
    model = build_model(name, variant=variant, **settings)
    crit = critical_rtt(model)
    # brentq xtol 1e-12 s, rtol 1e-10 on a smooth PM(rtt)
    assert crit == pytest.approx(_search(model), rel=1e-8)
    assert summary(model)["critical_rtt_s"] == crit


def test_critical_rtt_of_the_packet_model_is_where_its_phase_margin_vanishes():
    # the search costs a loop per RTT: check the sign change around the value instead
    model = build_model("qcn", variant="packet", n_flows=10, capacity=5e9)
    crit = critical_rtt(model, method="linearisation")
    assert 1e-4 < crit < 2e-3 and summary(model)["critical_rtt_linearised_s"] == crit
    # the model's own boundary (the surfaces') is its trajectories'
    assert summary(model)["critical_rtt_s"] == critical_rtt(model) != crit
    assert model.replace(rtt=0.99 * crit).loop().margins().phase_margin_deg > 0
    assert model.replace(rtt=1.01 * crit).loop().margins().phase_margin_deg < 0


def test_build_model_routes_parameters_options_and_operating_point():
    m = build_model("qcn", "stanford-baseline", variant="paper", rtt="200us", n_flows="3", w=8,
                    **{"model.timer": "true", "model.hai": "on"})  # fmt: skip
    assert m.params == QCNParams.preset("stanford-baseline").replace(w=8)
    assert (m.rtt, m.n_flows, m.timer, m.hai) == (200e-6, 3, True, True)
    # a QCNParams field wins over the model option of the same name unless prefixed
    assert build_model("qcn", timer="25ms").params.timer == 25e-3
    d = build_model("dcqcn", capacity="10Gbps", tau="40us", ramp="extend")
    assert d.params == DCQCNParams(line_rate=10e9, cnp_interval=40e-6) and d.ramp == "extend"
    e = build_model("ecm", "seed000", branch="increase")
    assert e.params == ECMParams.preset("seed000") and identify(e) == ("ecm", "increase")


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: build_model("qnc"), "model: unknown model 'qnc'; did you mean 'qcn'"),
        (lambda: build_model("qcn", variant="bse"), "variant: unknown variant 'bse'"),
        (lambda: build_model("qcn", qeqq=1), "did you mean 'qeq'"),
        (lambda: build_model("qcn", **{"model.timr": True}), "did you mean 'timer'"),
        (lambda: build_model("dcqcn", "802.1qau"), "preset: DCQCNParams has no presets"),
        (lambda: build_model("ecm", QCNParams()), "params: model 'ecm' takes ECMParams"),
        (lambda: get_model("fluid"), "unknown model 'fluid'"),
    ],
)
def test_bad_names_are_errors_naming_them(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_identify_names_the_closest_variant_and_the_differences():
    m = build_model("qcn", variant="paper", sampling_lag=True)
    assert identify(m) == ("qcn", "paper+sampling_lag=True")
    s = summary(m)
    assert (s["model"], s["model_variant"], s["model_class"]) == (
        "qcn", "paper+sampling_lag=True", "QCNFluidModel")  # fmt: skip
    assert s["loop_delay_s"] == pytest.approx(s["rtt_s"] + m.sampling_lag_s, rel=1e-12)
    # the critical RTT is an RTT: RTT + delay margin, whatever the loop's extra delay
    assert math.isclose(s["critical_rtt_s"], s["rtt_s"] + s["delay_margin_s"], rel_tol=1e-9)


def test_dcqcn_parameters_keep_the_fluid_names():
    p = DCQCNParams(capacity="40Gbps", tau="50us", tau_prime="55us", timer="55us")
    assert p == DCQCNParams()
    assert (p.capacity, p.tau, p.tau_prime, p.timer) == (40e9, 50e-6, 55e-6, 55e-6)
    assert p.replace(tau="10us").cnp_interval == 10e-6
    with pytest.raises(ValueError, match="capacity: line rate"):
        DCQCNParams(capacity=-1)
    with pytest.raises(ValueError, match="given twice"):
        DCQCNParams(capacity=1e9, line_rate=1e9)
