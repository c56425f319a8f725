"""Bad inputs to :func:`qcnmodel.simulate` raise ValueError naming the argument, before the
run (they raised AttributeError, TypeError or OverflowError, were silently ignored, or gave
empty traces before a hardening pass). Every case is refused before any event is simulated,
so the file runs in about a second."""

from __future__ import annotations

import pytest

from qcnmodel.sim.api import simulate
from qcnmodel.sim.network.spec import MAX_FINITE_BUFFER, Buffers

SC = "og-hotspot"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"scenario": None}, "scenario: expected a scenario name or a NetworkSpec"),
        ({"scenario": 5}, "scenario: expected"),
        ({"protocol": []}, "protocol: unknown protocol"),
        ({"params": 5}, "params: expected QCNParams"),
        ({"params": {}}, "params: expected QCNParams"),
        ({"overrides": [1]}, "overrides: expected a dict"),
        ({"overrides": {1: 2}}, "overrides: expected a dict"),
        ({"overrides": {"switch_memory": 1e30}}, "switch_memory: 1e+30 B is above"),
        # a switch or output queue that cannot hold one frame dropped every frame, silently
        ({"overrides": {"oq_limit": "1B"}}, "oq_limit: 1.0 B is less than one 1500 B frame"),
        ({"overrides": {"oq_limit": 1499}}, "(allowed: 0 = none, or [1500, inf])"),
        # a period that rounds to 0 ns: qcn-p's probe timer then fired without end at t = 0
        ({"overrides": {"timer": "1ps"}}, "timer: 1e-12 s is outside the range the simulator"),
        ({"overrides": {"cp_latency": "0.5ns"}}, "cp_latency: 5e-10 s is outside"),
        ({"protocol": "qcn-p", "overrides": {"interval": "1ps"}}, "interval: 1e-12 s is outside"),
        ({"protocol": "dcqcn", "overrides": {"rate_timer": "1ps"}}, "rate_timer: 1e-12 s"),
        # far beyond the int64 nanosecond clock ("cannot convert float infinity to integer"):
        # refused by the parameter classes' bound on times, 1e4 s
        (
            {"overrides": {"drift_period": "1e300s", "drift_factor": 1.01}},
            "drift_period: drift period (0 = off) = '1e300s' is outside the allowed range "
            "[0, 10000] s",
        ),
        ({"protocol": "qcn-p", "overrides": {"interval": "1e300s"}}, "range (0, 10000] s"),
        ({"duration": "1ps"}, "duration: '1ps' is outside the allowed range [1e-9, 1e4] s"),
        ({"duration": "1ms", "bin_width": "2ms"}, "bin_width: '2ms' is outside"),
        ({"duration": "1ms", "window_s": (5e-3, 1e-2)}, "window: (0.005, 0.01) keeps no trace"),
        ({"duration": "1ms", "window_s": 5}, "window: expected (t0, t1)"),
        ({"duration": "1ms", "window_s": (2e-3, 1e-3)}, "window: need t0 < t1"),
        ({"duration": "10ms", "decimation": 11}, "decimation: 11 is more than the 10 trace bin"),
        ({"duration": "1ms", "decimation": 1.5}, "decimation: expected a whole number >= 1"),
        ({"duration": "1ms", "decimation": "abc"}, "decimation: expected a whole number"),
        ({"duration": "1ms", "decimation": True}, "decimation: expected a whole number"),
        ({"duration": "1ms", "max_traced_flows": -1}, "max_traced_flows: expected"),
        ({"duration": "1ms", "max_traced_flows": "a"}, "max_traced_flows: expected"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, needle):
    kwargs = {"scenario": SC, "duration": "1ms", **kwargs}
    with pytest.raises(ValueError) as info:
        simulate(**kwargs)
    assert needle in str(info.value), str(info.value)


def test_a_short_run_without_bin_width_gets_a_tenth_of_it():
    # before: the default 1 ms bin was refused as longer than the 0.5 ms run
    res = simulate(SC, duration="0.5ms", engine="oracle")
    assert res.dataset.attrs["bin_width_s"] == pytest.approx(0.5e-3 / 10, rel=1e-12)


def test_unlimited_and_largest_finite_buffers_are_accepted():
    assert Buffers(switch_memory=float("inf")).switch_memory == float("inf")
    assert Buffers(switch_memory=MAX_FINITE_BUFFER).switch_memory == MAX_FINITE_BUFFER


def test_a_switch_memory_below_one_frame_is_refused():
    # the scenarios' own range starts at 1500 B; a NetworkSpec (a topology file) once passed
    from dataclasses import replace

    from qcnmodel.sim.scenarios import get_scenario

    spec = get_scenario(SC).build({})
    small = replace(spec, buffers=replace(spec.buffers, switch_memory=1499.0))
    with pytest.raises(ValueError, match=r"switch_memory: 1499.0 B is less than one 1500 B"):
        simulate(small, duration="1ms")
    assert simulate(spec, duration="1ms", engine="oracle").counters["frames_delivered"] > 0


def test_a_negative_pause_rtt_other_than_the_marker_is_refused():
    # any value in [-1, 0) silently meant "the default"
    with pytest.raises(ValueError, match=r"pause_rtt: -5e-06 s is outside the allowed range"):
        simulate(SC, duration="1ms", overrides={"pause_rtt": "-5us"})
    assert simulate(SC, duration="1ms", overrides={"pause_rtt": -1.0}, engine="oracle")
