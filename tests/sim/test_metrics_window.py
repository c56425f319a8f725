"""Hot-port metrics when the hotspot covers only part of the run: they are taken over the
part where it is active (clipped to the run), against the capacity of that part."""

from __future__ import annotations

import pytest

from qcnmodel.sim.api import simulate

HOT = 1e9  # og-hotspot: n1's port drains at 10% of 10 Gb/s
FRAME_BITS = 1500 * 8


def _run(duration, **over):
    return simulate("og-hotspot", duration=duration, overrides=over, trace=False).summary()


@pytest.mark.parametrize(
    ("duration", "over", "window"),
    [
        (0.03, {"hotspot_start": 0.02}, (0.02, 0.03)),  # starts inside, outlives the run
        (0.05, {"hotspot_start": 0.02, "hotspot_stop": 0.04}, (0.02, 0.04)),  # inside
        (0.03, {"hotspot_start": 0.0, "hotspot_stop": 0.01}, (0.0, 0.01)),  # ends inside
    ],
)
def test_metrics_cover_the_active_part_only(duration, over, window):
    s = _run(duration, **over)
    assert s["measure_window_s"] == pytest.approx(list(window))
    span = window[1] - window[0]
    # the whole window is under the hotspot: utilisation is throughput / the hot rate, and
    # at most 1 up to one frame finishing inside the window (whole-frame accounting)
    assert s["hot_port_utilisation"] == pytest.approx(s["hot_port_throughput_bps"] / HOT)
    assert s["hot_port_throughput_bps"] <= HOT + FRAME_BITS / span
    assert s["hot_port_utilisation"] > 0.1  # the port is backlogged: 8.5 Gb/s arrive at first
    assert s["fairness_error"] is not None and s.get("metrics_note") is None


def test_window_off_the_bins_is_measured_against_the_mean_capacity_of_its_bins():
    # the hotspot starts at 49.5 ms of a 50 ms run with 1 ms bins: the hot-port counters
    # cover the bin [49, 50] ms, half at the link rate and half at the hot rate:
    # (0.5 x 10 + 0.5 x 1) Gb/s = 5.5 Gb/s
    s = _run(0.05, hotspot_start=0.0495)
    assert s["measure_window_s"] == pytest.approx([0.0495, 0.05])
    assert s["hot_port_utilisation"] == pytest.approx(s["hot_port_throughput_bps"] / 5.5e9)
    assert 0 < s["hot_port_utilisation"] <= 1 + FRAME_BITS / (1e-3 * 5.5e9)


def test_inactive_hotspot_has_no_fairness_error_and_uses_the_link_rate():
    s = _run(0.05)  # the hotspot starts at 0.1 s
    assert s["fairness_error"] is None and "not active" in s["metrics_note"]
    assert s["hot_port_utilisation"] == pytest.approx(s["hot_port_throughput_bps"] / 10e9)
    assert s["hot_port_utilisation"] <= 1.0


def _three_hosts(*hotspots, measure=None):
    from qcnmodel.sim.network import ConstantFlow, Host, Hotspot, Link, NetworkSpec, Switch

    hosts = tuple(Host(h) for h in ("h1", "h2", "h3"))
    links = tuple(Link(h.name, "s1", 10e9, 1e-6) for h in hosts)
    return NetworkSpec(
        "two-hotspots", hosts, (Switch("s1"),), links, (ConstantFlow("h1", "h3", 5e9),),
        tuple(Hotspot("h3", rate, a, b) for rate, a, b in hotspots), measure=measure,
    )  # fmt: skip


def test_hotspots_that_overlap_on_one_port_are_refused():
    # a port has one service rate at a time (the run once served at one entry's rate while
    # the metrics judged it by the other's: a utilisation of 1.33)
    for second in ((2e9, 0.0, float("inf")), (2e9, 0.005, 0.015)):
        spec = _three_hosts((1e9, 0.0, 0.01), second)
        with pytest.raises(ValueError, match=r"hotspot: entries 1 and 2 both drain the port"):
            simulate(spec, duration=0.02, trace=False)


def test_hotspots_in_turn_on_one_port_are_measured_against_both_rates():
    # 1 Gb/s for the first 10 ms, 2 Gb/s for the next 10: the mean capacity is 1.5 Gb/s
    spec = _three_hosts((1e9, 0.0, 0.01), (2e9, 0.01, 0.02), measure=(0.0, 0.02))
    s = simulate(spec, duration=0.02, trace=False).summary()
    assert s["hot_port_utilisation"] == pytest.approx(s["hot_port_throughput_bps"] / 1.5e9)
    # (QCN's cuts leave the port idle at times after the rate doubles: well below 1)
    assert 0.3 < s["hot_port_utilisation"] <= 1 + FRAME_BITS / (0.02 * 1.5e9)


def test_an_adapter_hotspot_is_measured_by_its_drain():
    # hot_mode=adapter: the monitored switch port feeds the adapter's 1.5 MB output buffer at
    # up to 10 Gb/s; its bytes over the hot rate gave utilisations of 1.43 (20 ms) and 1.12
    # (100 ms). The adapter drains at 1 Gb/s: the node receives at most that (+ one frame)
    s = _run(0.02, hotspot_start=0.0, hot_mode="adapter")
    assert s["hot_port"] == "sw->n1.ob"
    assert s["hot_port_utilisation"] == pytest.approx(s["hot_port_throughput_bps"] / HOT)
    assert 0.9 < s["hot_port_utilisation"] <= 1 + FRAME_BITS / (0.02 * HOT)
