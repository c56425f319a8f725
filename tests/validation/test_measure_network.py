"""Measurement functions and the single-bottleneck builder."""

import math

import numpy as np
import pytest

from qcnmodel.sim.network import compile_network
from qcnmodel.validation.measure import batch_means, oscillation, scan_boundary
from qcnmodel.validation.network import bottleneck_spec, link_delay_for_rtt, source_rate


def test_link_delay_maps_rtt_to_loop():
    # tau = 2 (d + L_sw) + 8 F / R + cp_latency, exactly
    d = link_delay_for_rtt(100e-6, 10e9, 1500, switch_latency=1e-6, cp_latency=2e-6)
    assert 2 * (d + 1e-6) + 1500 * 8 / 10e9 + 2e-6 == pytest.approx(100e-6, rel=1e-12)
    with pytest.raises(ValueError, match="rtt"):
        link_delay_for_rtt(1e-6, 10e9)  # below one frame time (1.2 us)


def test_bottleneck_spec_structure():
    spec = bottleneck_spec(4, 200e-6, 5e9)
    net = compile_network(spec)
    assert net.n_flows == 4
    d = link_delay_for_rtt(200e-6, 10e9)
    assert np.all(net.port_prop_ns == round(d * 1e9))
    assert net.port_name(int(net.hs_monitor[0])) == "sw->rx"
    assert source_rate(4, 5e9, 10e9, "greedy") == 2.5e9
    assert source_rate(4, 5e9, 10e9, "constant") == 2.5e9
    assert source_rate(1, 5e9, 10e9, "greedy") == 10e9
    with pytest.raises(ValueError, match="demand"):
        source_rate(1, 5e9, 10e9, "bursty")


def test_batch_means_standard_error_of_white_noise():
    rng = np.random.default_rng(1)
    x = rng.normal(10.0, 2.0, 100_000)
    m, se = batch_means(x, 10)
    # the true SE is 2/sqrt(1e5) = 0.0063; a 10-batch estimate is within a factor 2 w.p. ~0.99
    assert m == pytest.approx(10.0, abs=5 * 0.0063)
    assert 0.0063 / 2 < se < 0.0063 * 2


def test_oscillation_detects_sine_period():
    dt = 50e-6
    t = np.arange(0, 0.3, dt)
    q = 26000 + 15000 * np.sin(2 * np.pi * t / 5e-3)
    o = oscillation(q, dt, 26000)
    assert o["verdict"] == "oscillating"
    # ACF peak on the grid: within one bin; crossings: within a bin too
    assert o["period_acf"] == pytest.approx(5e-3, abs=dt)
    assert o["period_zc"] == pytest.approx(5e-3, abs=dt)


def test_oscillation_noise_is_stable_and_underflow_is_flagged():
    dt = 50e-6
    rng = np.random.default_rng(0)
    q = 26000 + 2000 * rng.normal(size=6000)
    assert oscillation(q, dt, 26000)["verdict"] == "stable"
    t = np.arange(0, 0.3, dt)
    q2 = np.maximum(0.0, 30000 * np.sin(2 * np.pi * t / 4e-3))
    assert oscillation(q2, dt, 26000)["verdict"] == "underflow"


def test_an_empty_queue_is_idle_not_an_underflowing_cycle():
    """A queue at 0 (an uncongested port, or a model whose rates stall below capacity) is
    "idle"; a cycle that empties the queue is "underflow"; the class rows tell them apart,
    while both are read as not stable."""
    from qcnmodel.analysis.timeseries import class_group

    dt = 50e-6
    t = np.arange(0, 0.3, dt)
    empty = np.zeros(t.size)
    trickle = np.where(np.arange(t.size) % 7 == 0, 1200.0, 0.0)  # a frame now and then
    cycle = np.maximum(0.0, 30000 * np.sin(2 * np.pi * t / 4e-3))
    assert oscillation(empty, dt, 26000)["verdict"] == "idle"
    assert oscillation(trickle, dt, 26000)["verdict"] == "idle"
    assert oscillation(cycle, dt, 26000)["verdict"] == "underflow"
    assert class_group("idle") != class_group("underflow") == class_group("oscillating")
    assert class_group("stable") not in (class_group("idle"), class_group("underflow"))


def test_scan_boundary_brackets_a_step():
    lo, hi, pts = scan_boundary(lambda r: r > 300e-6, [50e-6, 100e-6, 200e-6, 400e-6], 3)
    assert lo < 300e-6 <= hi
    assert hi / lo < (400 / 200) ** (1 / 8) + 1e-9  # three geometric halvings of the octave
    lo, hi, _ = scan_boundary(lambda r: True, [50e-6, 100e-6])
    assert lo == 0 and hi == 50e-6
    lo, hi, _ = scan_boundary(lambda r: False, [50e-6, 100e-6])
    assert lo == 100e-6 and math.isinf(hi)


def test_bottleneck_spec_per_source_rtts():
    spec = bottleneck_spec(2, [20e-6, 200e-6], 5e9)
    net = compile_network(spec)
    delays = sorted(set(int(x) for x in net.port_prop_ns))
    assert delays == [round(link_delay_for_rtt(r, 10e9) * 1e9) for r in (20e-6, 200e-6)]
    with pytest.raises(ValueError, match="rtt"):
        bottleneck_spec(3, [20e-6, 200e-6], 5e9)


def test_row_as_dict_uses_the_one_json_cleaner():
    import json
    import math

    import numpy as np

    from qcnmodel.validation.rows import Row

    row = Row("boundary", "critical RTT", "N=1", "base", math.inf, np.float64(2e-4),
              math.nan, -math.inf, "why", np.bool_(True), "s")  # fmt: skip
    d = row.as_dict()
    assert (d["model"], d["error"], d["tolerance"]) == ("inf", None, "-inf")
    assert type(d["simulated"]) is float and d["passed"] is True
    json.dumps(d, allow_nan=False)  # standard JSON


def test_bottleneck_spec_takes_units_and_names_a_bad_count():
    # docs/ci.md shows it to users: '100us' was "could not convert string to float", and
    # n = 0 "min() arg is an empty sequence"
    import pytest

    from qcnmodel.validation.network import bottleneck_spec

    spec = bottleneck_spec(2, "100us", "5Gbps", line_rate="10Gbps")
    assert spec == bottleneck_spec(2, 100e-6, 5e9)
    for n in (0, 2.5, True):
        with pytest.raises(ValueError, match="n: the number of sources must be a whole number"):
            bottleneck_spec(n, 1e-4, 5e9)
    with pytest.raises(ValueError, match="rtt: cannot parse 'x' as a time"):
        bottleneck_spec(2, "x", 5e9)
