"""DCQCN rules: RED marking, CNP interval, alpha, the QCN increase machine; twins, invariants.

Facts from models.md §3 (CoNEXT 2016 defaults: Kmin 5 KB, Kmax 200 KB, pmax 1 %, tau 50 us,
tau' 55 us, g 1/256, C 40 Gb/s). Exact comparisons unless commented.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_impls import IMPLS, make_dcp, make_dnp, make_drp

from qcnmodel.params import DCQCNSimParams
from qcnmodel.params.dcqcn import DCQCNParams
from qcnmodel.sim.protocols import dcqcn as d
from qcnmodel.sim.protocols.dcqcn_ref import mark_probability_py

P = DCQCNSimParams()
C = 40e9
US = 1000  # ns


@pytest.mark.parametrize(
    "q,p", [(0.0, 0.0), (5000.0, 0.0), (102500.0, 0.005), (200000.0, 0.01), (200001.0, 1.0)]
)
def test_marking_ramp(q, p):
    prm = d.pack_dcqcn_cp_params(P)
    assert d.mark_probability(q, prm) == pytest.approx(p, rel=1e-15)  # (q-Kmin)/(..) rounding
    assert mark_probability_py(q, P) == d.mark_probability(q, prm)


@pytest.mark.parametrize("impl", IMPLS)
def test_marking_frequency(impl):
    cp = make_dcp(impl, P, seed=3)
    assert not any(cp.on_arrival(5000.0) for _ in range(1000))  # at Kmin: never
    assert all(cp.on_arrival(250000.0) for _ in range(1000))  # above Kmax: always
    n = sum(cp.on_arrival(200000.0) for _ in range(20000))  # p = 1 %: mean 200, sd 14
    assert 130 <= n <= 270  # 5 standard deviations


# (mark arrival, CNP time or -1) for tau = 50 us, hand-derived from each rule's statement
NP_CASES = {
    # a CNP at a mark unless one was sent in the last 50 us; later marks ignored
    "dead_time": [(10, 10), (30, -1), (59.999, -1), (60, 60), (200, 200)],
    # as dead_time, but a mark inside the interval is remembered: one CNP at its end; marks
    # before that pending CNP are covered by it
    "coalesce": [(10, 10), (30, 60), (40, -1), (59.999, -1), (60, 110), (120, 160),
                 (300, 300)],
    # one CNP at the end of each 50 us interval of the fixed grid in which a mark arrived
    "window": [(10, 50), (30, -1), (49.999, -1), (50, 100), (120, 150)],
}  # fmt: skip


@pytest.mark.parametrize("mode", sorted(NP_CASES))
@pytest.mark.parametrize("impl", IMPLS)
def test_notification_point_rules(impl, mode):
    np_ = make_dnp(impl, P.replace(cnp_mode=mode))
    assert np_.on_packet(False, 0) == -1
    for t, cnp in NP_CASES[mode]:
        expected = -1 if cnp < 0 else round(cnp * US)
        assert np_.on_packet(True, round(t * US)) == expected, (mode, t)
    n = sum(1 for _, c in NP_CASES[mode] if c >= 0)
    assert np_.as_array()[d.NP_NCNP] == n


@pytest.mark.parametrize("mode", sorted(NP_CASES))
@pytest.mark.parametrize("impl", IMPLS)
def test_zero_interval_sends_a_cnp_per_mark(impl, mode):
    np_ = make_dnp(impl, P.replace(cnp_mode=mode, cnp_interval=0.0))
    assert [np_.on_packet(True, t) for t in (5, 5, 9)] == [5, 5, 9]


def test_default_rules_are_dequeue_marking_and_coalescing():
    assert (P.mark_at, P.cnp_mode) == ("dequeue", "coalesce")
    assert d.pack_dcqcn_cp_params(P)[d.DCP_MARK_AT] == d.MARK_DEQUEUE
    assert d.pack_dcqcn_np_params(P)[d.NPP_MODE] == d.CNP_COALESCE
    with pytest.raises(ValueError, match="mark_at"):
        P.replace(mark_at="egress")


@pytest.mark.parametrize("impl", IMPLS)
def test_cnp_cut_alpha_and_alpha_timer(impl):
    rp = make_drp(impl, P)
    assert rp.on_cnp(0) == 55 * US  # rate timer T = 55 us (no jitter)
    assert (rp.cr, rp.tr, rp.alpha) == (C / 2, C, 1.0)  # alpha_init 1: cut by 1/2
    assert rp.alpha_deadline == 55 * US
    rp.on_cnp(10 * US)
    assert (rp.cr, rp.tr) == (C / 4, C / 2)
    g = 1 / 256
    assert rp.on_alpha_timer(int(rp.alpha_gen) - 1, 65 * US) == -1  # stale (re-armed by CNP)
    assert rp.on_alpha_timer(int(rp.alpha_gen), 65 * US) == 120 * US
    assert rp.alpha == (1 - g) * 1.0


@pytest.mark.parametrize("impl", IMPLS)
def test_increase_stages_and_caps(impl):
    p = P.replace(byte_counter=1000, r_ai="40Mbps", r_hai="400Mbps")
    rp = make_drp(impl, p)
    rp.on_cnp(0)
    for k in range(1, 6):  # fast recovery: TR fixed, gap halves
        rp.on_tx(1000)
        assert rp.tr == C and rp.cr == C - C / 2 / 2**k
    cr, tr = rp.cr, rp.tr
    rp.on_tx(1000)  # stage 6: additive increase, TR capped at C
    assert rp.tr == C and rp.cr == (cr + C) / 2
    low = make_drp(impl, p)
    low.on_cnp(0)
    for _ in range(9):
        low.on_cnp(0)  # CR = C/1024 -> 39 Mb/s, above min_rate 10 Mb/s
    assert low.cr == C / 2**10 and low.tr == C / 2**9
    for _ in range(6):
        low.on_tx(1000)
    tr = low.tr
    for _ in range(5):  # timer stages 1..5: AI (one counter past F)
        low.on_rate_timer(int(low.timer_gen), 0)
    assert low.tr == tr + 5 * 40e6
    tr = low.tr
    low.on_rate_timer(int(low.timer_gen), 0)  # stages (6, 6): hyper increase 1 x R_HAI
    assert low.tr == tr + 400e6


@pytest.mark.parametrize("impl", IMPLS)
def test_min_rate_and_release(impl):
    rp = make_drp(impl, P.replace(byte_counter=1000))
    for _ in range(60):
        rp.on_cnp(0)
    assert rp.cr == P.min_rate
    keep = make_drp(impl, P.replace(byte_counter=1000, release=False))
    rel = make_drp(impl, P.replace(byte_counter=1000))
    for x in (keep, rel):
        x.on_cnp(0)
        status = [x.on_tx(1000) for _ in range(80)]
    assert d.TX_RELEASED in status and not rel.active and rel.cr == C
    assert keep.active and keep.cr == C


def test_params_from_fluid_and_validation():
    fp = DCQCNParams()
    sp = DCQCNSimParams.from_fluid(fp)
    assert (sp.line_rate, sp.cnp_interval, sp.alpha_timer, sp.rate_timer) == (
        fp.capacity, fp.tau, fp.tau_prime, fp.timer)  # fmt: skip
    for field, value in [("kmax", "1KB"), ("pmax", 0.0), ("g", 2.0), ("fr_th", 2.5),
                         ("cnp_interval", "-1us"), ("min_rate", "50Gbps")]:  # fmt: skip
        with pytest.raises(ValueError, match=field):
            DCQCNSimParams(**{field: value})


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("cnp")),
        st.tuples(st.just("tx"), st.integers(64, 2_000_000)),
        st.tuples(st.just("rate"), st.booleans()),
        st.tuples(st.just("alpha"), st.booleans()),
        st.tuples(st.just("advance"), st.integers(0, 200_000)),
    ),
    min_size=1,
    max_size=150,
)


@settings(max_examples=50, deadline=None)
@given(
    mode=st.sampled_from(sorted(NP_CASES)),
    jitter=st.sampled_from([0.0, 0.1]),
    release=st.booleans(),
    seed=st.integers(0, 2**63 - 1),
    ops=OPS,
    qs=st.lists(st.integers(0, 300000), min_size=1, max_size=100),
)
def test_twins_and_invariants(mode, jitter, release, seed, ops, qs):
    p = P.replace(jitter=jitter, release=release, byte_counter="100KB", cnp_mode=mode)
    a, b = make_drp("compiled", p, seed), make_drp("reference", p, seed)
    now = 0
    for op in ops:
        if op[0] == "advance":
            now += op[1]
            continue
        if op[0] == "cnp":
            ra, rb = a.on_cnp(now), b.on_cnp(now)
        elif op[0] == "tx":
            ra, rb = a.on_tx(op[1]), b.on_tx(op[1])
        elif op[0] == "rate":
            gen = b.timer_gen - int(op[1])
            now = max(now, b.deadline)
            ra, rb = a.on_rate_timer(gen, now), b.on_rate_timer(gen, now)
        else:
            gen = b.alpha_gen - int(op[1])
            ra, rb = a.on_alpha_timer(gen, now), b.on_alpha_timer(gen, now)
        assert ra == rb, op
        assert np.array_equal(a.as_array(), b.as_array()), op
        assert p.min_rate <= b.cr <= p.line_rate and 0.0 <= b.alpha <= 1.0
        if b.active:
            assert b.tr <= p.line_rate
    assert a.others_untouched()
    ca, cb = make_dcp("compiled", p, seed), make_dcp("reference", p, seed)
    na, nb = make_dnp("compiled", p), make_dnp("reference", p)
    for k, q in enumerate(qs):
        m = ca.on_arrival(q)
        assert m == cb.on_arrival(q)
        assert na.on_packet(m, k * 7 * US) == nb.on_packet(m, k * 7 * US)
        assert np.array_equal(ca.as_array(), cb.as_array())
        assert np.array_equal(na.as_array(), nb.as_array())
