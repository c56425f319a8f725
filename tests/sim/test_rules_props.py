"""Property tests: compiled rules == reference rules bit for bit, plus invariants.

Random parameter variants and random event sequences (CNMs with random qFb, frames of random
size, timer events -- current or stale --, drift, time steps) are applied to both
implementations; states (``as_array``) and return values must be identical after every step.
Invariants checked (all exact, no tolerance):

* always MIN_RATE <= CR <= C; active RL: bc_left > 0; TR >= CR when drift is off (drift moves CR
  alone, so it can pass TR);
* CR never decreases on a drift event, nor (drift off) on a frame or timer event; it never
  increases on a CNM. With drift on, CR can pass TR, and the next self-increase (CR + TR)/2
  then lowers it: drift acts on CR only, as the §4.5 proposal says;
* a stale timer event changes nothing; an inactive RL ignores frames, timers and drift;
* CP: 0 <= qFb <= 2**bits - 1; a CNM implies Fb < 0; after a sample the countdown is within
  [1-J, 1+J] x the interval for qFb.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rules_impls import make_cp, make_rp

from qcnmodel.params import QCNParams
from qcnmodel.sim.protocols import qcn as r
from qcnmodel.sim.protocols.qcn_ref import table_index_py

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def qcn_params(draw):
    drift = draw(st.sampled_from([(0.0, 1.0, 0.0), (4e6, 1.0, 0.02), (0.0, 1.005, 5e-4)]))
    return QCNParams(
        jitter=draw(st.sampled_from([0.0, 0.15, 0.3])),
        gd=draw(st.sampled_from([1 / 128, 1 / 64])),
        fb_bits=draw(st.sampled_from([6, 8])),
        w=draw(st.sampled_from([2.0, 8.0, 2.5])),
        qeq=draw(st.sampled_from([26000.0, 33000.0, 37500.5])),
        quantiser=draw(st.sampled_from(["floor63", "round63", "floor64cap", "msb6", "shift"])),
        sampling=draw(st.sampled_from(["table", "fixed"])),
        ps_fixed=draw(st.sampled_from([0.01, 0.012, 1.0])),
        bc_limit=draw(st.sampled_from([150000.0, 75000.0, 10000.0])),
        timer=draw(st.sampled_from([15e-3, 500e-6])),
        hai=draw(st.booleans()),
        cycle_halving=draw(st.sampled_from(["after_fr", "one_late", "hai_only", "off"])),
        tr_div8=draw(st.sampled_from(["own_first", "either", "off"])),
        hai_index=draw(st.sampled_from(["min_stage", "event_count"])),
        timer_mode=draw(st.sampled_from(["event", "event", "lazy"])),
        bc_reload_on_cnm=draw(st.sampled_from(["always", "tr_reset_only"])),
        cnm_requires_qfb_positive=draw(st.booleans()),
        drift_inc=drift[0],
        drift_factor=drift[1],
        drift_period=drift[2],
    )


CNM_OP = st.tuples(st.just("cnm"), st.integers(0, 255), st.integers(0, 3))
OTHER_OPS = st.one_of(
    st.tuples(st.just("tx"), st.integers(64, 9216)),
    st.tuples(st.just("burst"), st.integers(1, 60), st.sampled_from([1500, 9216])),
    st.tuples(st.just("burst"), st.integers(1, 60), st.sampled_from([1500, 9216])),
    st.tuples(st.just("timer"), st.booleans()),
    st.tuples(st.just("timer"), st.just(False)),
    st.tuples(st.just("timer"), st.just(False)),
    st.tuples(st.just("advance"), st.integers(0, 20_000_000)),
    st.tuples(st.just("drift")),
)
#: force a low CR and TR >= CR (both implementations), so that HAI is reached before release
FORCE_OP = st.tuples(st.just("force"), st.floats(0.0, 0.25), st.floats(1.0, 20.0))
#: segments "CNM, then 10 to 60 other events", so that AI and HAI stages are reached
RP_OPS = st.lists(
    st.tuples(
        CNM_OP, st.lists(FORCE_OP, max_size=1), st.lists(OTHER_OPS, min_size=10, max_size=60)
    ),
    min_size=1,
    max_size=5,
).map(lambda segs: [op for cnm, force, rest in segs for op in (cnm, *force, *rest)])


def _apply(rp, op, now):
    kind = op[0]
    if kind == "cnm":
        return rp.on_cnm(op[1], op[2], now)
    if kind == "tx":
        return rp.on_tx(op[1], now)
    if kind == "burst":  # op[1] frames of op[2] bytes; returns the status list
        return [rp.on_tx(op[2], now) for _ in range(op[1])]
    if kind == "timer":
        gen = rp.timer_gen - 1 if op[1] else rp.timer_gen
        return rp.on_timer(gen, now)
    if kind == "drift":
        return rp.on_drift()
    if kind == "force" and rp.active:
        cr = rp.p.min_rate + op[1] * rp.p.line_rate
        rp.set(cr=cr, tr=cr * op[2])
    return None


@SETTINGS
@given(p=qcn_params(), seed=st.integers(0, 2**63 - 1), ops=RP_OPS)
def test_rp_twins_identical_and_invariants(p, seed, ops):
    comp = make_rp("compiled", p, seed=seed, index=1)
    ref = make_rp("reference", p, seed=seed, index=1)
    c, min_rate = p.line_rate, p.min_rate
    drift_off = p.drift_inc == 0.0 and p.drift_factor == 1.0
    assert np.array_equal(comp.as_array(), ref.as_array())  # initial states agree
    now = 0
    for op in ops:
        if op[0] == "advance":
            now += op[1]
            continue
        if op[0] == "timer" and not op[1] and ref.deadline > now:
            now = ref.deadline  # fire the current timer at its deadline
        full = 2**p.fb_bits - 1
        if op[0] == "cnm":
            op = ("cnm", min(op[1], full), op[2])
        before = ref.as_array()
        was_active, cr0 = ref.active, ref.cr
        got_c = _apply(comp, op, now)
        got_r = _apply(ref, op, now)
        assert got_c == got_r, op
        assert np.array_equal(comp.as_array(), ref.as_array()), op
        if op[0] == "timer" and op[1]:
            assert np.array_equal(ref.as_array(), before)  # stale: no change
        if not was_active and op[0] in ("tx", "timer", "drift"):
            assert np.array_equal(ref.as_array(), before)
        assert min_rate <= ref.cr <= c  # inactive RLs sit at C
        if ref.active:
            assert ref.bc_left > 0.0
            if drift_off:
                assert ref.tr >= ref.cr
        increase_ops = ("tx", "burst", "timer", "drift") if drift_off else ("drift",)
        if was_active and op[0] in increase_ops:
            assert ref.cr >= cr0
        if was_active and op[0] == "cnm":
            assert ref.cr <= cr0
        if op[0] == "tx" and got_r == r.TX_RELEASED:
            assert not ref.active and ref.cr == c
        if op[0] == "burst" and r.TX_RELEASED in got_r:
            assert got_r.count(r.TX_RELEASED) == 1 and not ref.active


CP_OPS = st.tuples(st.integers(0, 400_000), st.sampled_from([64, 1500, 9216, 40000]))


@SETTINGS
@given(
    p=qcn_params(), seed=st.integers(0, 2**63 - 1), ops=st.lists(CP_OPS, min_size=20, max_size=300)
)
def test_cp_twins_identical_and_invariants(p, seed, ops):
    comp = make_cp("compiled", p, seed=seed, index=2)
    ref = make_cp("reference", p, seed=seed, index=2)
    full = 2**p.fb_bits - 1
    table = p.sample_table()
    for q, frame in ops:
        got_c = comp.on_arrival(q, frame)
        got_r = ref.on_arrival(q, frame)
        assert got_c == got_r
        assert comp.last_sampled == ref.last_sampled
        assert np.array_equal(comp.as_array(), ref.as_array())
        cnm, qfb, qoff, qdelta = got_r
        assert 0 <= qfb <= full
        if cnm:
            assert qoff + p.w * qdelta > 0  # Fb < 0
        if ref.last_sampled:
            assert ref.qold == q
            if p.sampling == "fixed":
                base = p.frame_size / p.ps_fixed
            else:
                base = table[table_index_py(qfb, p.fb_bits)]
            assert (1 - p.jitter) * base <= ref.to_sample <= (1 + p.jitter) * base


@settings(max_examples=200, deadline=None)
@given(
    neg_fb=st.one_of(st.integers(-10, 2_000_000).map(float), st.floats(-10.0, 2e6)),
    qeq=st.sampled_from([1000.0, 26000.0, 33000.0, 37500.5]),
    w=st.sampled_from([1.0, 2.0, 2.5, 32.0]),
    bits=st.integers(1, 16),
    mode=st.sampled_from(["floor63", "round63", "floor64cap", "msb6", "shift"]),
)
def test_quantise_twins_and_monotone(neg_fb, qeq, w, bits, mode):
    from qcnmodel.sim.protocols.qcn_ref import quantise_py

    code = r.CODES["quantiser"][mode]
    a = r.quantise(neg_fb, qeq, w, bits, code)
    assert a == quantise_py(neg_fb, qeq, w, bits, mode)
    assert 0 <= a <= 2**bits - 1
    if mode != "msb6":  # msb6 is not monotone: 63 -> 63 but 64 -> 32
        assert r.quantise(neg_fb + 1000.0, qeq, w, bits, code) >= a
