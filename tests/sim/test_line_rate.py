"""A port never sends faster than its line rate, whatever the frame size: serialisation
times are whole ns, and the remainder of each rounding is carried to the port's next frame
(64 B at 10 Gb/s: 51.2 ns, not 51 ns, which would carry 10.039 Gb/s)."""

from __future__ import annotations

import numpy as np
import pytest

from qcnmodel.params import QCNParams
from qcnmodel.sim.kernel.loop import run_compiled
from qcnmodel.sim.kernel.state import P_TXB, build_state
from qcnmodel.sim.network import ConstantFlow, Host, Link, NetworkSpec, Switch, compile_network
from qcnmodel.sim.oracle.loop import Oracle

END_NS = 200_000  # 200 us: ~3900 frames of 64 B at 10 Gb/s


def _saturated(rate, frame):
    """h0 sends to h1 through one switch at its full line rate."""
    spec = NetworkSpec("line", (Host("h0"), Host("h1")), (Switch("sw"),),
                       (Link("h0", "sw", rate), Link("h1", "sw", rate)),
                       (ConstantFlow("h0", "h1", rate),), (), frame_size=frame)  # fmt: skip
    return compile_network(spec)


def _kw(net):
    return dict(qcn=False, seed=0, end_ns=END_NS, bin_ns=END_NS // 4, measure_ns=(0, END_NS),
                traced_flows=np.arange(net.n_flows))  # fmt: skip


def _port(net, a, b):
    names = net.node_names
    return next(p for p in range(net.n_ports)
                if names[net.port_src[p]] == a and names[net.port_dst[p]] == b)  # fmt: skip


@pytest.mark.parametrize("rate", [10e9, 25e9, 1e9])
@pytest.mark.parametrize("frame", [64, 65, 99, 127, 333, 1000, 1500, 4001, 9000])
def test_line_rate_is_never_exceeded(rate, frame):
    net = _saturated(rate, frame)
    st = build_state(net, QCNParams(line_rate=rate), **_kw(net))
    run_compiled(st)
    bits = 8.0 * float(st.PI[P_TXB, _port(net, "h0", "sw")])
    # bytes count at a frame's start: at most one frame past rate * time, plus the half ns
    # a rounding may give in advance
    cap = rate * (END_NS + 0.5) / 1e9 + 8 * frame
    assert bits <= cap, (bits / (END_NS / 1e9) / 1e9, "Gb/s")
    assert bits >= rate * END_NS / 1e9 - 2 * 8 * frame  # and the port is saturated


@pytest.mark.parametrize("frame", [64, 1500])
def test_carried_remainder_is_identical_in_kernel_and_oracle(frame):
    net = _saturated(10e9, frame)
    kw = _kw(net)
    st = build_state(net, QCNParams(), **kw)
    run_compiled(st)
    o = Oracle(net, QCNParams(), **kw).run()
    assert np.array_equal(st.TQ, o.TQ) and np.array_equal(st.TG, o.TG)
