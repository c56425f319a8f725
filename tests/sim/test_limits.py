"""Capacities and input limits of the simulator: the event heap, rates that would make the
inter-frame gap vanish, times that overflow integer nanoseconds, seeds, line rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qcnmodel.params import QCNParams
from qcnmodel.sim.kernel import heap as kh
from qcnmodel.sim.kernel.loop import run_compiled
from qcnmodel.sim.kernel.state import build_state, initial_events
from qcnmodel.sim.network import (
    Buffers,
    ConstantFlow,
    Host,
    Hotspot,
    Link,
    NetworkSpec,
    Switch,
    UniformTraffic,
    compile_network,
)
from qcnmodel.sim.oracle.loop import Oracle


def _fan_in(n):
    """n constant-rate sources into one sink behind one switch, one hotspot."""
    hosts = tuple(Host(f"h{i}") for i in range(n + 1))
    links = tuple(Link(h.name, "sw") for h in hosts)
    traffic = tuple(ConstantFlow(f"h{i + 1}", "h0", 1e6) for i in range(n))
    return NetworkSpec("fan", hosts, (Switch("sw"),), links, traffic,
                       (Hotspot("h0", 5e9, 0.0, 1e-5),))  # fmt: skip


def _run(net, heap, end_ns=20_000):
    kw = dict(qcn=True, seed=1, end_ns=end_ns, bin_ns=10_000, measure_ns=(0, end_ns),
              traced_flows=np.arange(2))  # fmt: skip
    st = build_state(net, QCNParams(), heap=heap, **kw)
    run_compiled(st)
    return st, kw


def test_heap_holds_every_initial_event_whatever_the_initial_capacity():
    # 300 hosts wake at t=0 (+ phase): more than the 16 initial slots asked for
    net = compile_network(_fan_in(300))
    st, kw = _run(net, heap=16)
    assert st.H.shape[1] >= initial_events(net)
    o = Oracle(net, QCNParams(), **kw).run()
    assert int(st.S[kh.S_EVENTS]) == o.c["events"]
    assert int(st.S[kh.S_SENT]) == o.c["sent"] > 0


def test_kernel_init_grows_a_too_small_heap_before_scheduling():
    net = compile_network(_fan_in(40))
    kw = dict(qcn=True, seed=1, end_ns=20_000, bin_ns=10_000, measure_ns=(0, 20_000),
              traced_flows=np.arange(2))  # fmt: skip
    st = build_state(net, QCNParams(), **kw)
    # shrink the event table below the initial events: kernel_init must ask for growth
    from qcnmodel.sim.kernel.heap import new_heap

    st.H, st.EP, st.EFREE, st.BK = new_heap(8)
    st.S[kh.S_EFREE_N] = 8
    st.EPF = np.zeros((kh.X_ROWS, 8))
    run_compiled(st)
    assert st.H.shape[1] >= initial_events(net) + 8
    assert int(st.S[kh.S_SENT]) > 0


@pytest.mark.slow  # ~20 s: 4100 hosts (loading and a dense routing table)
def test_ig_hotspot_4100_sources_runs():
    from qcnmodel.sim.api import simulate

    r = simulate("ig-hotspot", overrides={"n_sources": 4100}, duration="200us",
                 bin_width="100us", trace=False)  # fmt: skip
    c = r.counters
    assert c["frames_sent"] > 0
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]


def _spec(link_rate=10e9, flow_rate=1e9, delay=0.5e-6, start=0.0, on=0.0, off=0.0, hs=1e9,
          ib=1.5e6, frame=1500):  # fmt: skip
    hosts = (Host("a"), Host("b"))
    return NetworkSpec(
        "two", hosts, (Switch("s"),),
        (Link("a", "s", link_rate, delay), Link("b", "s", 10e9, 0.5e-6)),
        (ConstantFlow("a", "b", flow_rate, start, on_mean=on, off_mean=off),),
        (Hotspot("b", hs, 0.0, 1e-3),), buffers=Buffers(adapter_ib=ib), frame_size=frame,
    )  # fmt: skip


@pytest.mark.parametrize(
    "kw, field",
    [
        (dict(flow_rate=1e20), "rate"),  # faster than its 10 Gb/s link: gap would round to 0
        (dict(flow_rate=math.inf), "rate"),
        (dict(flow_rate=math.nan), "rate"),
        (dict(link_rate=1e30, flow_rate=1e9), "rate"),  # frame time 1e-17 ns
        (dict(link_rate=math.inf), "rate"),
        (dict(delay=math.inf), "delay"),
        (dict(delay=1e12), "delay"),  # 1e21 ns overflows int64
        (dict(start=1e12), "start"),
        (dict(on=-1e-3, off=1e-3), "on_mean"),
        (dict(on=1e-3, off=-1e-3), "off_mean"),
        (dict(hs=20e9), "service_rate"),  # a 10 Gb/s port never sends 20 Gb/s
        (dict(ib=1000.0), "adapter_ib"),  # below one 1500 B frame: refused, not rounded up
        (dict(frame=1500.5), "frame_size"),
    ],
)
def test_bad_spec_values_are_refused_naming_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        compile_network(_spec(**kw))


def test_zero_rate_flow_is_accepted_and_sends_nothing():
    net = compile_network(_spec(flow_rate=0.0))
    assert net.n_flows == 1 and len(net.gen_host) == 0


def test_fastest_allowed_rates_compile():
    # a flow at its link rate, a hotspot at its link rate, one frame per VOQ
    net = compile_network(_spec(flow_rate=10e9, hs=10e9, ib=1500.0))
    assert net.flow_voq_limit[0] == 1
    assert net.gen_gap_ns[0] == pytest.approx(1200.0)  # 1500 B at 10 Gb/s


@pytest.mark.parametrize("seed", [1.5, -1, 2**63, "x", True, math.nan])
def test_bad_seeds_are_refused(seed):
    from qcnmodel.sim.api import check_seed

    with pytest.raises(ValueError, match="seed"):
        check_seed(seed)


def test_integer_seeds_are_accepted():
    from qcnmodel.sim.api import check_seed

    assert check_seed(2**63 - 1) == 2**63 - 1
    assert check_seed(3.0) == 3
    assert check_seed("7") == 7
    assert check_seed(np.int64(5)) == 5


@pytest.mark.parametrize("key, value", [("line_rate", "1Gbps"), ("qcn.frame_size", 9000)])
def test_network_owned_qcn_settings_are_refused_not_ignored(key, value):
    from qcnmodel.sim.api import simulate

    with pytest.raises(ValueError, match=key.split(".")[-1]):
        simulate("og-hotspot", overrides={key: value}, duration="1ms", bin_width="1ms")


def test_frame_size_scenario_parameter_applies():
    from qcnmodel.sim.api import simulate

    a = simulate("og-hotspot", overrides={"frame_size": 9000}, duration="2ms", bin_width="1ms")
    b = simulate("og-hotspot", duration="2ms", bin_width="1ms")
    assert a.params.frame_size == 9000 and b.params.frame_size == 1500
    assert a.counters["frames_sent"] < b.counters["frames_sent"]  # 6x bigger frames


@pytest.mark.parametrize("kw", [dict(bin_width="1ns"), dict(duration="1e4s", bin_width="10us")])
def test_trace_memory_is_estimated_and_refused_before_allocating(kw):
    import tracemalloc

    from qcnmodel.sim.api import simulate

    kw = {"duration": "1s", **kw}
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"bin_width/duration: .*sim\.max_trace_bytes.*at most"):
        simulate("og-hotspot", **kw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 * 2**20  # refused up front: nothing near the GiB estimate allocated


def test_trace_estimate_matches_the_allocated_tables():
    from qcnmodel.sim.engines import trace_bytes

    net = compile_network(_fan_in(3))
    kw = dict(qcn=True, seed=1, end_ns=50_000, bin_ns=1_000, measure_ns=(0, 50_000),
              traced_flows=np.arange(2))  # fmt: skip
    st = build_state(net, QCNParams(), **kw)
    allocated = sum(getattr(st, n).nbytes for n in ("TQ", "TG", "TFB", "TRP"))
    assert trace_bytes(net.n_ports, 2, 50) == allocated


def test_trace_limit_is_read_from_config():
    from qcnmodel import config
    from qcnmodel.sim.api import simulate

    try:
        config.defaults["sim.max_trace_bytes"] = 10_000
        with pytest.raises(ValueError, match="max_trace_bytes"):
            simulate("og-hotspot", duration="10ms", bin_width="1ms")
    finally:
        config.reset_defaults()


def test_routing_tables_are_estimated_and_refused_before_allocating():
    # the tables grow with switches^2 (20 B a pair) and flows (512 B each), not with hosts:
    # 61 hosts and 60 flows behind one switch need 20 + 60 x 512 = 30740 B
    from qcnmodel import config

    try:
        config.defaults["sim.max_table_bytes"] = 20 + 60 * 512
        compile_network(_fan_in(60))
        with pytest.raises(ValueError, match=r"62 hosts, 1 switches and 61 flows need 30.5 KiB "
                           r".*limit of 30.0 KiB .*max_table_bytes.*with these switches "
                           r"60 flows"):  # fmt: skip
            compile_network(_fan_in(61))
    finally:
        config.reset_defaults()


def _chain(n_sw):
    """Two hosts at the ends of a chain of ``n_sw`` switches, one flow."""
    sws = tuple(Switch(f"s{i}") for i in range(n_sw))
    links = (Link("a", "s0"), Link("b", f"s{n_sw - 1}"))
    links += tuple(Link(f"s{i}", f"s{i + 1}") for i in range(n_sw - 1))
    return NetworkSpec("chain", (Host("a"), Host("b")), sws, links, (ConstantFlow("a", "b", 1e6),))


def test_switch_pairs_are_estimated_and_refused_before_allocating():
    from qcnmodel import config

    try:
        config.defaults["sim.max_table_bytes"] = 20 * 11 * 11 + 512
        net = compile_network(_chain(11))
        assert len(net.path_ports(0)) == 12  # a -> s0 -> ... -> s10 -> b
        with pytest.raises(ValueError, match=r"12 switches and 1 flows need .*"
                           r"sim.max_table_bytes.*about 11 switches fit"):  # fmt: skip
            compile_network(_chain(12))
    finally:
        config.reset_defaults()


def test_uniform_all_to_all_is_refused_up_front_naming_the_limit():
    # 30000 hosts sending uniformly to all others: 30000 x 29999 flows (~430 GiB) are
    # refused before any flow is built
    hosts = tuple(Host(f"h{i}") for i in range(30000))
    links = tuple(Link(h.name, "sw") for h in hosts)
    traffic = tuple(UniformTraffic(h.name, 1e9) for h in hosts)
    spec = NetworkSpec("all", hosts, (Switch("sw"),), links, traffic)
    with pytest.raises(ValueError, match=r"899970000 flows need .*sim.max_table_bytes"):
        compile_network(spec)
