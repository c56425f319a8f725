"""Property tests of the simulator over random small networks (issue item 9).

Frame conservation (sent = delivered + dropped + in flight, the in-flight count checked
against an independent count of VOQs, queues and links), non-negative queues and partitions,
MIN_RATE <= CR <= C for every active rate limiter, lossless PAUSE configurations.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from simnets import networks

from qcnmodel.params import QCNParams
from qcnmodel.sim.kernel import heap as kh
from qcnmodel.sim.kernel.loop import run_compiled
from qcnmodel.sim.kernel.state import F_VN, P_PART, P_Q, TQ_MAX, TQ_Q, TR_ACTIVE, TR_CR, build_state
from qcnmodel.sim.network import Buffers, NetworkSpec, compile_network

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def run(spec, params, seed, qcn=True, end_ns=3_000_000):
    net = compile_network(spec)
    state = build_state(net, params, qcn=qcn, seed=seed, end_ns=end_ns, bin_ns=100_000,
                        measure_ns=(0, end_ns), traced_flows=np.arange(net.n_flows),
                        pool=32, heap=32)  # fmt: skip
    run_compiled(state, n_chunks=2)
    return net, state


params_st = st.builds(
    lambda gd, qeq, timer, jitter, bc: QCNParams(
        gd=gd, qeq=qeq, timer=timer, jitter=jitter, bc_limit=bc, min_rate=10e6, line_rate=10e9
    ),
    st.sampled_from([1 / 128, 1 / 64]),
    st.floats(5e3, 60e3),
    st.floats(2e-4, 2e-3),
    st.sampled_from([0.0, 0.15, 0.3]),
    st.floats(10e3, 150e3),
)


@SETTINGS
@given(spec=networks(), params=params_st, seed=st.integers(0, 2**31), qcn=st.booleans())
def test_conservation_queues_rates(spec, params, seed, qcn):
    net, s = run(spec, params.replace(line_rate=float(net_rate(spec))), seed, qcn)
    S = s.S
    sent, deliv, drop = int(S[kh.S_SENT]), int(S[kh.S_DELIV]), int(S[kh.S_DROP])
    in_net = int(s.FI[F_VN].sum()) + s.FR.shape[1] - int(S[kh.S_FREE_N]) + int(S[kh.S_TAIL])
    assert sent == deliv + drop + in_net
    assert int(S[kh.S_OFFERED]) == sent + int(S[kh.S_BLOCKED])
    assert (s.PI[P_Q] >= 0).all() and (s.PI[P_PART] >= 0).all()
    assert (s.TQ[TQ_Q] >= 0).all() and (s.TQ[TQ_MAX] >= s.TQ[TQ_Q]).all()
    active = s.TRP[TR_ACTIVE] != 0
    cr = s.TRP[TR_CR][active]
    assert (cr >= 10e6).all() and (cr <= net_rate(spec)).all()
    if not qcn:
        assert int(S[kh.S_CNM]) == 0 and not active.any()


def net_rate(spec):
    return max(ln.rate for ln in spec.links if ln.a.startswith("h") or ln.b.startswith("h"))


@SETTINGS
@given(spec=networks(pause=True), seed=st.integers(0, 2**31), qcn=st.booleans())
def test_lossless_pause_drops_nothing(spec, seed, qcn):
    spec = NetworkSpec(spec.name, spec.hosts, spec.switches, spec.links, spec.traffic,
                       spec.hotspots, Buffers(spec.buffers.switch_memory, 0.0, 1e6),
                       spec.pause)  # fmt: skip
    p = QCNParams(line_rate=float(net_rate(spec)), min_rate=1e6)
    _, s = run(spec, p, seed, qcn)
    assert int(s.S[kh.S_DROP]) == 0
    assert int(s.S[kh.S_DELIV]) > 0


@settings(max_examples=6, deadline=None)
@given(spec=networks(), seed=st.integers(0, 2**31))
def test_same_seed_same_trace_bit_for_bit(spec, seed):
    p = QCNParams(line_rate=float(net_rate(spec)), min_rate=1e6, timer=1e-3)
    _, a = run(spec, p, seed, end_ns=1_000_000)
    _, b = run(spec, p, seed, end_ns=1_000_000)
    for name in ("S", "TQ", "TG", "TFB", "TRP", "rp", "cp"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
