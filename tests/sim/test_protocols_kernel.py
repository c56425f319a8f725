"""Every protocol in the compiled kernel equals the pure-Python oracle bit for bit (issue 5).

Small networks (``simnets``), protocol settings shortened so that every event kind fires
within a few ms (probe and SONAR timers, drift, DCQCN timers); plus the run invariants.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simnets import chain, networks, star
from test_oracle import FAST, assert_identical

from qcnmodel.sim.kernel import heap as kh
from qcnmodel.sim.kernel.loop import run_compiled
from qcnmodel.sim.kernel.state import (
    EVENT_NAMES,
    K_AUX,
    K_CNM,
    K_ECHO,
    K_PROBE,
    K_REPLY,
    build_state,
)
from qcnmodel.sim.network import compile_network
from qcnmodel.sim.oracle.loop import Oracle
from qcnmodel.sim.protocols.registry import PROTOCOLS, make_config

_PROBE = {"interval": 2e-4}
_SONAR = {"wp_timer": 5e-4, "we_timer": 2e-4, "sf_timer": 1e-4, "nc_interval": 2e-4}
SETTINGS = {
    "none": {},
    "qcn": {},
    "ecm": {"drift_inc": 1e6, "drift_period": 1e-3, "qeq": 20e3},
    "ecm-q": {"qeq": 20e3},
    "qcn-h": {},
    "qcn-p": _PROBE,
    "qcn-hp": _PROBE,
    "qcn-sp": _PROBE,
    "qcn-pp": _PROBE,
    "qcn-sonar": _SONAR,
    "qcn-plus": {**_PROBE, "rtt": 1e-4},
    "dcqcn": {"kmin": 5e3, "kmax": 60e3, "pmax": 0.1, "rate_timer": 1e-4, "alpha_timer": 1e-4,
              "byte_counter": 1e6},
}  # fmt: skip
#: event kinds each protocol must produce in the star test (coverage of the dispatch)
KINDS = {
    "qcn-p": (K_PROBE, K_REPLY), "qcn-sp": (K_PROBE, K_REPLY), "qcn-pp": (K_PROBE, K_REPLY),
    "qcn-sonar": (K_PROBE, K_ECHO), "dcqcn": (K_CNM, K_AUX), "ecm": (K_CNM,),
}  # fmt: skip


def config(name, line_rate=10e9, frame_size=1500):
    """The protocol's config with the short test settings (rates follow the network)."""
    s = dict(SETTINGS[name])
    fam = PROTOCOLS[name].family
    if fam == "ecm":
        s.update(line_rate=line_rate, frame_size=frame_size)
    elif fam == "dcqcn":
        s.update(line_rate=line_rate, packet_size=frame_size)
    return make_config(name, s, qcn=FAST.replace(line_rate=line_rate, frame_size=frame_size))


def run_both(spec, name, seed=3, end_ns=3_000_000, bin_ns=100_000):
    net = compile_network(spec)
    proto = config(name, float(np.max(net.port_rate[net.host_port])), net.frame_size)
    kw = dict(qcn=True, seed=seed, end_ns=end_ns, bin_ns=bin_ns, measure_ns=(0, end_ns),
              traced_flows=np.arange(net.n_flows), log_events=10**6, proto=proto)  # fmt: skip
    params = FAST.replace(line_rate=kw["proto"].params.get("QCNParams", FAST).line_rate)
    state = build_state(net, params, pool=64, heap=16, **kw)  # small: exercises growth
    run_compiled(state, n_chunks=2)
    o = Oracle(net, params, **kw).run()
    return net, state, o


def check_invariants(net, st, proto):
    S = st.S
    sent, deliv, drop = int(S[kh.S_SENT]), int(S[kh.S_DELIV]), int(S[kh.S_DROP])
    assert int(S[kh.S_OFFERED]) == sent + int(S[kh.S_BLOCKED])
    in_net = int(st.FI[3].sum()) + st.FR.shape[1] - int(S[kh.S_FREE_N]) + int(S[kh.S_TAIL])
    assert sent == deliv + drop + in_net
    assert (st.TQ[0] >= 0).all() and (st.PI[7] >= 0).all()
    c = float(np.max(net.port_rate[net.host_port]))
    fam = proto.protocol.family
    if fam != "none":
        rmin = {"qcn": "min_rate", "ecm": "r_min", "dcqcn": "min_rate"}[fam]
        p = proto.params[proto.protocol.params[0].__name__]
        cr = st.TRP[0]
        assert (cr >= getattr(p, rmin) - 1e-6).all() and (cr <= c + 1e-6).all()


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_kernel_equals_oracle_per_protocol(name):
    net, st, o = run_both(star(n=4), name)
    assert_identical(st, o)
    if name == "dcqcn":
        assert np.array_equal(st.npst, np.stack([n.as_array() for n in o.nps], axis=1))
    n = int(st.S[kh.S_EVENTS])
    kinds = set(st.LOG[1, :n].tolist())
    for k in KINDS.get(name, ()):
        assert k in kinds, EVENT_NAMES[k]
    if name != "none":
        assert o.c["cnm"] > 0
    check_invariants(net, st, config(name))


@pytest.mark.parametrize("name", ["qcn-sp", "qcn-pp", "qcn-sonar", "ecm", "dcqcn"])
def test_kernel_equals_oracle_multi_hop(name):
    net, st, o = run_both(chain(pause=True, memory=60e3, pause_rtt=10e-6), name, seed=5)
    assert_identical(st, o)
    check_invariants(net, st, config(name))


@settings(max_examples=12, deadline=None)
@given(spec=networks(), seed=st.integers(0, 2**31), name=st.sampled_from(list(PROTOCOLS)))
def test_kernel_equals_oracle_random_networks_per_protocol(spec, seed, name):
    net, st_, o = run_both(spec, name, seed=seed, end_ns=1_000_000, bin_ns=50_000)
    n = int(st_.S[kh.S_EVENTS])
    assert n == o.c["events"]
    log = st_.LOG[:, :n].copy()
    log[2, log[1] == 0] = -1  # K_ARRIVE: frame slot ids are kernel-internal
    assert np.array_equal(log, np.array(o.log, dtype=np.int64).reshape(-1, 5).T)
    for name_ in ("TQ", "TG", "TFB", "TRP"):
        assert np.array_equal(getattr(st_, name_), getattr(o, name_)), name_
    assert np.array_equal(st_.rp, np.stack([r.as_array() for r in o.rps], axis=1))
    check_invariants(net, st_, config(name, float(np.max(net.port_rate[net.host_port]))))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_kernel_equals_oracle_longer_slow(name):
    """10 ms on a 6-node star with PAUSE (slow: the oracle runs ~1 M events)."""
    spec = star(n=6, t0=1e-3, t1=7e-3, pause=True, memory=80e3, pause_rtt=5e-6)
    net, st_, o = run_both(spec, name, seed=11, end_ns=10_000_000, bin_ns=500_000)
    assert_identical(st_, o)
    check_invariants(net, st_, config(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_og_hotspot_default_parameters_slow(name):
    """Each protocol with its default parameters on 0.3 s of og-hotspot: invariants hold."""
    from qcnmodel.sim import simulate

    r = simulate("og-hotspot", protocol=name, duration="0.3s", seed=2,
                 overrides={"hotspot_stop": "0.2s"})  # fmt: skip
    c = r.counters
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]
    assert c["frames_in_flight"] == c["frames_in_network"]
    assert (r.dataset["queue"].values >= 0).all()
    cr = r.dataset["cr"].values
    assert (cr > 0).all() and (cr <= r.params.line_rate + 1e-6).all()


def _dcqcn_config(net, mark_at, cnp_mode):
    c = float(np.max(net.port_rate[net.host_port]))
    s = dict(SETTINGS["dcqcn"], line_rate=c, packet_size=net.frame_size, mark_at=mark_at,
             cnp_mode=cnp_mode, cnp_interval=20e-6)  # fmt: skip
    return make_config("dcqcn", s, qcn=FAST.replace(line_rate=c))


@pytest.mark.parametrize("cnp_mode", ["dead_time", "coalesce", "window"])
@pytest.mark.parametrize("mark_at", ["enqueue", "dequeue"])
def test_dcqcn_rules_kernel_equals_oracle(mark_at, cnp_mode):
    net = compile_network(star(n=4))
    proto = _dcqcn_config(net, mark_at, cnp_mode)
    kw = dict(qcn=True, seed=4, end_ns=3_000_000, bin_ns=100_000, measure_ns=(0, 3_000_000),
              traced_flows=np.arange(net.n_flows), log_events=10**6, proto=proto)  # fmt: skip
    params = FAST.replace(line_rate=proto.params["DCQCNSimParams"].line_rate)
    state = build_state(net, params, pool=64, heap=16, **kw)
    run_compiled(state, n_chunks=2)
    o = Oracle(net, params, **kw).run()
    assert_identical(state, o)
    assert np.array_equal(state.npst, np.stack([n.as_array() for n in o.nps], axis=1))
    assert o.c["cnm"] > 0
    check_invariants(net, state, proto)


def test_dcqcn_rules_change_the_run_and_coalescing_loses_no_mark():
    net = compile_network(star(n=4))
    kw = dict(qcn=True, seed=4, end_ns=3_000_000, bin_ns=100_000, measure_ns=(0, 3_000_000),
              traced_flows=np.arange(net.n_flows))  # fmt: skip
    cnps = {}
    for mark_at in ("enqueue", "dequeue"):
        for mode in ("dead_time", "coalesce"):
            proto = _dcqcn_config(net, mark_at, mode)
            params = FAST.replace(line_rate=proto.params["DCQCNSimParams"].line_rate)
            st_ = build_state(net, params, proto=proto, **kw)
            run_compiled(st_)
            cnps[mark_at, mode] = int(st_.S[kh.S_CNM])
    # the rules are applied (not ignored): each choice changes the CNP count
    assert cnps["enqueue", "dead_time"] != cnps["dequeue", "dead_time"]
    assert cnps["enqueue", "dead_time"] != cnps["enqueue", "coalesce"]


def test_dcqcn_rules_reach_the_simulator_through_set():
    from qcnmodel.sim import simulate

    kw = dict(protocol="dcqcn", duration="2ms", bin_width="1ms", seed=1)
    a = simulate("og-hotspot", overrides={"mark_at": "enqueue", "cnp_mode": "dead_time"}, **kw)
    pp = a.dataset.attrs["protocol_params"]
    assert '"mark_at": "enqueue"' in pp and '"cnp_mode": "dead_time"' in pp
    with pytest.raises(ValueError, match="cnp_mode"):
        simulate("og-hotspot", overrides={"cnp_mode": "sometimes"}, **kw)
