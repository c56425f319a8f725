"""Capacities and input limits of the simulator: the event heap, rates that would make the
inter-frame gap vanish, times that overflow integer nanoseconds, seeds, line rate."""

from __future__ import annotations

import numpy as np
import pytest

from qcnmodel.params import QCNParams
from qcnmodel.sim.kernel import heap as kh
from qcnmodel.sim.kernel.loop import run_compiled
from qcnmodel.sim.kernel.state import build_state, initial_events
from qcnmodel.sim.network import (
    ConstantFlow,
    Host,
    Hotspot,
    Link,
    NetworkSpec,
    Switch,
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
