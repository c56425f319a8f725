"""Property tests of the QCN variants: twins bit for bit, invariants.

* compiled variant rules == Python twin (``as_array`` and return values) after every event of
  random sequences (CNMs with Qoff/Qdelta, frames, timers current or stale, drift, aux timers
  current or stale, probe replies of both signs from the own or another CP, SONAR echoes);
* MIN_RATE <= CR <= C always; a stale aux timer changes nothing; an inactive RL ignores aux
  timers and echoes.

(Plain QCN is the variants with every option off: one body per rule, so there is no longer a
second copy to compare it with; test_rules_props compares it with its twin.)
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_impls import make_vcp, make_vrp
from test_rules_props import qcn_params

from qcnmodel.params.protocols import (
    EFRParams,
    FbHatParams,
    ProbeParams,
    QCNPlusParams,
    SonarParams,
)

SETTINGS = settings(max_examples=50, deadline=None)


@st.composite
def options(draw):
    efrs = [None, EFRParams(efr=True), EFRParams(efr=True, efr_max=True),
            EFRParams(to_thresh="psample"), EFRParams(to_thresh="cnm")]  # fmt: skip
    efr = draw(st.sampled_from(efrs))
    pluses = [None, QCNPlusParams(), QCNPlusParams(rtt=1.5e-3, gain_mode="step", base_w=4.0)]
    plus = draw(st.sampled_from(pluses))
    extra = draw(st.sampled_from(["none", "probe", "sonar"]))
    probe = ProbeParams(interval=draw(st.sampled_from([1e-4, 1e-3]))) if extra == "probe" else None
    sonar = SonarParams(boost=draw(st.sampled_from(["hai", "target", "release"])))
    return dict(efr=efr, plus=plus, probe=probe, sonar=sonar if extra == "sonar" else None)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("cnm"), st.integers(0, 63), st.integers(0, 2),
                  st.integers(-60000, 200000), st.integers(-60000, 60000)),
        st.tuples(st.just("tx"), st.integers(64, 9216)),
        st.tuples(st.just("burst"), st.integers(1, 60), st.sampled_from([1500, 9216])),
        st.tuples(st.just("timer"), st.booleans()),
        st.tuples(st.just("aux"), st.booleans()),
        st.tuples(st.just("reply"), st.integers(-63, 63), st.integers(0, 2)),
        st.tuples(st.just("echo"), st.booleans()),
        st.tuples(st.just("take")),
        st.tuples(st.just("drift")),
        st.tuples(st.just("advance"), st.integers(0, 20_000_000)),
    ),
    min_size=1,
    max_size=120,
)  # fmt: skip


def _apply(rp, op, now):
    k = op[0]
    if k == "cnm":
        return rp.on_cnm(op[1], op[2], now, float(op[3]), float(op[4]))
    if k == "tx":
        return rp.on_tx(op[1], now)
    if k == "burst":
        return [rp.on_tx(op[2], now) for _ in range(op[1])]
    if k == "timer":
        return rp.on_timer(int(rp.timer_gen) - int(op[1]), now)
    if k == "aux":
        return rp.on_aux_timer(int(rp.aux_gen) - int(op[1]), now)
    if k == "reply":
        return rp.on_probe_reply(float(op[1]), 1000.0, 500.0, op[2], now)
    if k == "echo":
        return rp.on_echo(op[1], now)
    if k == "take":
        return rp.take_send(), rp.take_arm()
    if k == "drift":
        return rp.on_drift()
    return None


@SETTINGS
@given(p=qcn_params(), opts=options(), seed=st.integers(0, 2**63 - 1), ops=OPS)
def test_variant_rp_twins_and_invariants(p, opts, seed, ops):
    comp = make_vrp("compiled", p, seed, 1, **opts)
    ref = make_vrp("reference", p, seed, 1, **opts)
    assert np.array_equal(comp.as_array(), ref.as_array())
    now = 0
    for op in ops:
        if op[0] == "advance":
            now += op[1]
            continue
        if op[0] == "timer" and not op[1] and ref.deadline > now:
            now = ref.deadline
        if op[0] == "aux" and not op[1] and ref.aux_deadline > now:
            now = ref.aux_deadline
        before = ref.as_array()
        was_active = ref.active
        got_c, got_r = _apply(comp, op, now), _apply(ref, op, now)
        assert got_c == got_r, op
        assert np.array_equal(comp.as_array(), ref.as_array()), op
        assert p.min_rate <= ref.cr <= p.line_rate
        if op[0] == "aux" and (op[1] or not was_active):
            assert np.array_equal(ref.as_array(), before)
        if op[0] == "echo" and not was_active:
            assert np.array_equal(ref.as_array(), before)
    assert comp.others_untouched()


CP_OPS = st.lists(
    st.tuples(st.integers(0, 400_000), st.sampled_from([64, 1500, 9216]),
              st.integers(0, 3_000_000), st.sampled_from(["arr", "probe", "ping"])),
    min_size=5,
    max_size=200,
)  # fmt: skip


@SETTINGS
@given(
    p=qcn_params(),
    fbhat=st.sampled_from([None, FbHatParams(), FbHatParams(mode="ewma", ewma_gain=0.5)]),
    seed=st.integers(0, 2**63 - 1),
    ops=CP_OPS,
)
def test_variant_cp_twins(p, fbhat, seed, ops):
    sonar = SonarParams()
    comp = make_vcp("compiled", p, seed, 2, fbhat=fbhat, sonar=sonar)
    ref = make_vcp("reference", p, seed, 2, fbhat=fbhat, sonar=sonar)
    now = 0
    for q, frame, dt, kind in ops:
        now += dt
        if kind == "arr":
            got_c, got_r = comp.on_arrival(q, frame), ref.on_arrival(q, frame)
        elif kind == "probe":
            got_c = (comp.probe_fb(q), comp.probe_code(comp.probe_fb(q)))
            got_r = (ref.probe_fb(q), ref.probe_code(ref.probe_fb(q)))
        else:
            got_c, got_r = comp.on_ping(q, now), ref.on_ping(q, now)
        assert got_c == got_r
        assert np.array_equal(comp.as_array(), ref.as_array())
    assert comp.others_untouched()
