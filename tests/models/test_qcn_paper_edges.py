"""The cycle-averaged (paper) QCN model at the edges of its operating range: a port its flows
cannot congest, and an equilibrium that sits on the Fb = 0 switching surface to rounding.

Expected values come from the protocol, not from the model: N flows at the line rate L into a
port of capacity C >= N L never queue, so no CNM is sent and the loop is open (the packet
fidelity and the FOPDT view say the same); and the increase drive (1-p)^(F B) at Ps = 5 %,
F = 5, B = 100 frames is 0.95^500 = 7.3e-12, which puts q* - Qeq below one ulp of Qeq.
"""

import math

import numpy as np
import pytest

import qcnmodel as qm

P = qm.QCNParams.preset("802.1qau")  # line rate 10 Gb/s


@pytest.mark.parametrize("capacity, n", [("20Gbps", 1), (11e9, 1), ("10Gbps", 1), ("40Gbps", 3)])
def test_a_port_its_flows_cannot_congest_is_an_open_loop(capacity, n):
    m = qm.QCNFluidModel(P, rtt="100us", n_flows=n, capacity=capacity, fidelity="paper")
    fp = m.fixed_point()
    assert fp["q"] == 0.0
    assert fp["rate_current"] == fp["rate_target"] == P.line_rate
    mg = m.loop().margins()
    assert math.isinf(mg.phase_margin_deg) and math.isinf(mg.gain_margin) and mg.stable
    s = qm.summary(m)
    assert s["stable"] is True and math.isinf(s["critical_rtt_s"])
    packet = qm.summary(qm.QCNFluidModel(P, rtt="100us", n_flows=n, capacity=capacity))
    assert packet["stable"] is True and math.isinf(packet["phase_margin_deg"])


def test_an_uncongested_trajectory_stays_at_the_line_rate_with_an_empty_queue():
    m = qm.QCNFluidModel(P, rtt="100us", n_flows=1, capacity="20Gbps", fidelity="paper")
    ds = m.simulate("20ms")
    assert float(ds.rate_current.max()) <= P.line_rate
    assert float(ds.rate_current[-1]) == pytest.approx(P.line_rate)
    assert np.all(ds.q.values == 0.0)


def test_one_flow_short_of_the_capacity_is_still_congested():
    m = qm.QCNFluidModel(P, rtt="100us", n_flows=1, capacity="5Gbps", fidelity="paper")
    assert m.fixed_point()["rate_current"] == pytest.approx(5e9)
    assert np.isfinite(m.loop().margins().phase_margin_deg)


@pytest.mark.parametrize("ps", [0.03, 0.05, 0.1])
def test_an_equilibrium_on_the_switching_surface_is_refused(ps):
    m = qm.QCNFluidModel(P, rtt="100us", n_flows=10, ps=ps, fidelity="paper")
    with pytest.raises(ValueError, match="switching surface"):
        m.fixed_point()
    with pytest.raises(ValueError, match="switching surface"):
        m.loop()


@pytest.mark.parametrize("ps", [0.01, 0.02])
def test_an_equilibrium_off_the_surface_is_kept(ps):
    fp = qm.QCNFluidModel(P, rtt="100us", n_flows=10, ps=ps, fidelity="paper").fixed_point()
    assert fp["fb"] < 0 and fp["q"] > P.qeq
