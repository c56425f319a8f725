"""The compiled kernel and the pure-Python oracle give identical traces (issue item 1, 9)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simnets import chain, networks, star

from qcnmodel.params import QCNParams
from qcnmodel.sim.kernel import heap as kh
from qcnmodel.sim.kernel.loop import run_compiled
from qcnmodel.sim.kernel.state import K_ARRIVE, build_state
from qcnmodel.sim.network import compile_network
from qcnmodel.sim.oracle.loop import Oracle

FAST = QCNParams(timer=1e-3, bc_limit=30000, drift_inc=1e6, drift_period=1e-3)


def run_both(spec, params=FAST, qcn=True, seed=3, end_ns=4_000_000, bin_ns=100_000):
    net = compile_network(spec)
    kw = dict(qcn=qcn, seed=seed, end_ns=end_ns, bin_ns=bin_ns, measure_ns=(0, end_ns),
              traced_flows=np.arange(net.n_flows), log_events=10**6)  # fmt: skip
    st = build_state(net, params, pool=64, heap=16, **kw)  # small: exercises growth
    run_compiled(st, n_chunks=3)
    o = Oracle(net, params, **kw).run()
    return net, st, o


def assert_identical(st, o):
    n = int(st.S[kh.S_EVENTS])
    assert n == o.c["events"] and n > 1000
    log = st.LOG[:, :n].copy()
    log[2, log[1] == K_ARRIVE] = -1  # frame slot ids are kernel-internal
    assert np.array_equal(log, np.array(o.log, dtype=np.int64).T)
    for name in ("TQ", "TG", "TFB", "TRP"):
        assert np.array_equal(getattr(st, name), getattr(o, name)), name
    for key, idx in (("sent", kh.S_SENT), ("deliv", kh.S_DELIV), ("drop", kh.S_DROP),
                     ("blocked", kh.S_BLOCKED), ("pause", kh.S_PAUSE), ("cnm", kh.S_CNM),
                     ("tail", kh.S_TAIL)):  # fmt: skip
        assert int(st.S[idx]) == o.c[key], key
    assert np.array_equal(st.rp, np.stack([r.as_array() for r in o.rps], axis=1))
    assert np.array_equal(st.cp, np.stack([c.as_array() for c in o.cps], axis=1))


@pytest.mark.parametrize(
    "spec",
    [
        star(),
        star(n=5, pause=True, memory=60e3, pause_rtt=5e-6, ib=40e3),
        star(n=3, load=1.0, oq=20e3),
        chain(),
        chain(pause=True, memory=60e3, pause_rtt=10e-6),
        star(n=4, hot_mode="adapter", ob=60e3, pause_rtt=5e-6),
    ],
    ids=["star", "star-pause", "star-oq", "chain-onoff", "chain-pause", "star-adapter-ob"],
)
def test_kernel_equals_oracle(spec):
    _, st, o = run_both(spec)
    assert_identical(st, o)
    assert o.c["cnm"] > 0


def test_kernel_equals_oracle_without_qcn():
    _, st, o = run_both(star(n=4), qcn=False)
    assert_identical(st, o)
    assert o.c["cnm"] == 0 and o.c["drop"] > 0


def test_same_seed_same_trace_other_seed_differs():
    net = compile_network(star())
    kw = dict(qcn=True, end_ns=3_000_000, bin_ns=100_000, measure_ns=(0, 3_000_000),
              traced_flows=np.arange(net.n_flows), log_events=10**6)  # fmt: skip
    runs = []
    for seed in (7, 7, 8):
        st = build_state(net, FAST, seed=seed, **kw)
        run_compiled(st)
        runs.append(st)
    a, b, c = runs
    n = int(a.S[kh.S_EVENTS])
    assert np.array_equal(a.LOG[:, :n], b.LOG[:, :n]) and np.array_equal(a.TQ, b.TQ)
    assert np.array_equal(a.rp, b.rp)
    assert not np.array_equal(a.TQ, c.TQ)


def _leaf_spine():
    """Three leaves under two spines (equal-cost paths: the lowest port, i.e. spine s0, is
    taken), two hosts per leaf, uniform traffic, a hotspot on l0's first host."""
    from qcnmodel.sim.network import Host, Hotspot, Link, NetworkSpec, Switch, UniformTraffic

    leaves, spines = ["l0", "l1", "l2"], ["s0", "s1"]
    hosts = [f"h{i}_{j}" for i in range(3) for j in range(2)]
    links = [Link(h, leaves[int(h[1])]) for h in hosts]
    links += [Link(leaf, sp) for leaf in leaves for sp in spines]
    return NetworkSpec("leaf-spine", tuple(Host(h) for h in hosts),
                       tuple(Switch(n) for n in leaves + spines), tuple(links),
                       tuple(UniformTraffic(h, 6e9) for h in hosts),
                       (Hotspot("h0_0", 1e9, 0.5e-3, 3e-3),))  # fmt: skip


def test_kernel_equals_oracle_on_equal_cost_paths():
    net, st_, o = run_both(_leaf_spine())
    assert_identical(st_, o)
    f = net.flow_of[net.node_names.index("h2_1"), net.node_names.index("h0_0")]
    names = [net.port_name(p) for p in net.path_ports(f)]
    assert names == ["h2_1->l2", "l2->s0", "s0->l0", "l0->h0_0"]


@settings(max_examples=8, deadline=None)
@given(spec=networks(), seed=st.integers(0, 2**31), qcn=st.booleans())
def test_kernel_equals_oracle_random_networks(spec, seed, qcn):
    rate = max(ln.rate for ln in spec.links if ln.a.startswith("h") or ln.b.startswith("h"))
    p = FAST.replace(line_rate=rate, min_rate=1e6)
    _, st_, o = run_both(spec, p, qcn=qcn, seed=seed, end_ns=1_000_000, bin_ns=50_000)
    n = int(st_.S[kh.S_EVENTS])
    assert n == o.c["events"]
    log = st_.LOG[:, :n].copy()
    log[2, log[1] == K_ARRIVE] = -1
    assert np.array_equal(log, np.array(o.log, dtype=np.int64).reshape(-1, 5).T)
    for name in ("TQ", "TG", "TFB", "TRP"):
        assert np.array_equal(getattr(st_, name), getattr(o, name)), name
