"""ECM / ECM-Q rules: facts (qcn-algorithm.md §4.1, §4.2, §7 fact 17), twins, invariants.

Tolerances: gains such as 0.5 / Fbmax are not exact binary fractions, so products like
Gd * Fbmax are 0.5 only to a few ulps: those checks use rel=1e-12. Everything else (signs,
message kinds, codes, twins) is exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_impls import IMPLS, make_ecm_cp, make_ecm_rp

from qcnmodel.params.protocols import ECMParams, ECMQParams
from qcnmodel.sim.protocols import ecm as e

C = 10e9
EVERY_FRAME = dict(psample=1.0, jitter=0.0)  # sample every 1500 B frame, no jitter


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("preset", ["seed004", "seed000"])
def test_fact17_max_cut_and_max_increase(impl, preset):
    """Seed 004 / seed 000 gains: full-scale Fb cuts 50 %, raises by 0.1 Rlink (1 Gb/s)."""
    p = ECMParams.preset(preset)
    rp = make_ecm_rp(impl, p)
    assert rp.on_fb(-p.fb_full, 7) == e.R_DEC
    assert rp.cr == pytest.approx(0.5 * C, rel=1e-12)
    assert rp.on_fb(p.fb_full, 7) == e.R_INC
    assert rp.cr == pytest.approx(0.5 * C + 1e9, rel=1e-12)


def test_derived_gains_follow_the_seed_formulas():
    p = ECMParams()  # seed 004: Gd = 0.5/((2W+1)Qeq), Gi = 0.1 (Rlink/Runit)/((2W+1)Qeq)
    assert p.fb_max == 187500.0
    assert p.gd_eff == 0.5 / (5 * 37500.0)
    assert p.gi_eff == 0.1 * (C / 1e6) / (5 * 37500.0)
    q = ECMParams.preset("seed000")  # Gd = 0.5/255, Gi = 0.1 (Rlink/Runit)/255
    assert (q.gd_eff, q.gi_eff, q.fb_full) == (0.5 / 255, 0.1 * (C / 1e6) / 255, 255.0)
    assert (q.qeq, q.q_max, q.drift_inc, q.drift_period) == (375000.0, 1.5e6, 4e6, 20e-3)


@pytest.mark.parametrize("impl", IMPLS)
def test_cp_signs_tagging_and_encoding(impl):
    p = ECMParams(**EVERY_FRAME)
    cp = make_ecm_cp(impl, p)
    # Q 50000, Qold 0: Fb = -(12500 + 2*50000) = -112500 (raw bytes, within Fbmax)
    assert cp.on_arrival(50000, 1500, False) == (e.MSG_NEG, -112500.0, 12500.0, 50000.0)
    # below Qeq and draining: Fb = +47500; positive only to frames tagged with this CPID
    assert cp.on_arrival(30000, 1500, False)[0] == e.MSG_NONE
    cp.on_arrival(50000, 1500, False)
    assert cp.on_arrival(30000, 1500, True)[:2] == (e.MSG_POS, 47500.0)
    cp8 = make_ecm_cp(impl, p.replace(fb_bits=8))
    # 8 bits: floor(255 * 112500 / 187500) = 153, sign kept
    assert cp8.on_arrival(50000, 1500, False)[:2] == (e.MSG_NEG, -153.0)


@pytest.mark.parametrize("impl", IMPLS)
def test_positive_policies(impl):
    below = ECMParams(pos_fb="tagged_below_qeq", **EVERY_FRAME)
    cp = make_ecm_cp(impl, below)
    cp.on_arrival(60000, 1500, True)  # Qold = 60000
    # Q 40000 > Qeq, Fb = -(2500 - 40000) > 0, tagged, but not below Qeq: nothing
    assert cp.on_arrival(40000, 1500, True)[0] == e.MSG_NONE
    cp.on_arrival(60000, 1500, True)
    assert cp.on_arrival(37500, 1500, True)[0] == e.MSG_NONE  # Q == Qeq is not below Qeq
    cp.on_arrival(60000, 1500, True)
    assert cp.on_arrival(37499, 1500, True)[0] == e.MSG_POS
    anyone = make_ecm_cp(impl, ECMParams(pos_fb="all", **EVERY_FRAME))
    anyone.on_arrival(60000, 1500, False)
    assert anyone.on_arrival(40000, 1500, False)[0] == e.MSG_POS


@pytest.mark.parametrize("impl", IMPLS)
def test_ecm_max_and_ecm00(impl):
    p = ECMParams(q_max=150000.0, **EVERY_FRAME)
    for flag, expect in ((True, (e.MSG_NEG, -p.fb_max)), (False, (e.MSG_POS, 157500.0))):
        cp = make_ecm_cp(impl, p.replace(ecm_max=flag))
        cp.on_arrival(300000, 1500, True)
        # Q 160000 >= Qmax but draining fast (Fb = +157500): ECM_MAX sends full negative Fb
        assert cp.on_arrival(160000, 1500, True)[:2] == expect
    cp = make_ecm_cp(impl, p.replace(ecm00=True, q_sc=100000.0))
    assert cp.on_arrival(120000, 1500, False)[0] == e.MSG_00
    rp = make_ecm_rp(impl, p)
    assert rp.on_00(3) == e.R_DEC and rp.cr == p.r_min and rp.active and rp.cpid == 3


@pytest.mark.parametrize("impl", IMPLS)
def test_rp_creation_tagging_release_and_false_positives(impl):
    p = ECMParams()
    rp = make_ecm_rp(impl, p)
    assert rp.on_fb(1000.0, 1) == e.R_NONE and not rp.active  # untagged: positive ignored
    assert rp.tag() == -1
    rp.on_fb(-93750.0, 1)  # creates at C, cut Gd*93750 = 25 %
    assert rp.active and rp.tag() == 1 and rp.cr == pytest.approx(0.75 * C, rel=1e-12)
    assert rp.on_fb(187500.0, 2) == e.R_NONE  # foreign positive discarded (seed 003)
    rp.on_fb(-1.0, 2)  # negative from CP 2 re-tags
    assert rp.tag() == 2
    for _ in range(3):
        status = rp.on_fb(187500.0, 2)
    assert status == e.R_RELEASED and not rp.active and rp.cr == C
    keep = make_ecm_rp(impl, p.replace(cpid_replace="never"))
    keep.on_fb(-1.0, 1)
    keep.on_fb(-1.0, 2)
    assert keep.tag() == 1


@pytest.mark.parametrize("impl", IMPLS)
def test_rate_floor_and_drift(impl):
    p = ECMParams(gd=0.9 / 187500, drift_inc=4e6, drift_period=20e-3)
    rp = make_ecm_rp(impl, p)
    assert rp.on_drift() == e.R_NONE  # inactive: no drift
    for _ in range(40):
        rp.on_fb(-187500.0, 1)
    assert rp.cr == p.r_min
    assert rp.on_drift() == e.R_INC and rp.cr == p.r_min + 4e6


@pytest.mark.parametrize("impl", IMPLS)
def test_ecmq_codes_and_recombination(impl):
    p = ECMQParams(**EVERY_FRAME)  # ranges Fbmax/(1+w) = 62500 B, 127 levels per sign
    assert p.qoff_range_eff == 62500.0
    cp = make_ecm_cp(impl, p)
    kind, _, co, cd = cp.on_arrival(50000, 1500, False)
    # floor(12500 * 127 / 62500) = 25, floor(50000 * 127 / 62500) = 101
    assert (kind, co, cd) == (e.MSG_NEG, 25.0, 101.0)
    rp = make_ecm_rp(impl, p)
    rp.on_codes(co, cd, 1)
    fb = -(25 + 2 * 101) * 62500 / 127 * 255 / p.fb_max  # 8-bit gain scale, not re-quantised
    assert rp.cr == pytest.approx(C * (1 - 0.5 / 255 * -fb), rel=1e-12)
    sat = make_ecm_rp(impl, p)
    sat.on_codes(127.0, 127.0, 1)  # both saturated: Fb = -Fbmax, i.e. the 50 % cut
    assert sat.cr == pytest.approx(0.5 * C, rel=1e-12)
    own_w = make_ecm_rp(impl, p.replace(w_rp=0.0))
    own_w.on_codes(-10.0, 127.0, 1)  # RP's own w = 0: only Qoff counts, Fb > 0, untagged
    assert not own_w.active


@pytest.mark.parametrize(
    "cls,field,value",
    [
        (ECMParams, "psample", 0.0),
        (ECMParams, "fb_bits", 17),
        (ECMParams, "gd", -1.0),
        (ECMParams, "pos_fb", "sometimes"),
        (ECMParams, "r_min", "20Gbps"),
        (ECMParams, "q_max", "0B"),
        (ECMQParams, "qoff_bits", 1),
        (ECMQParams, "w_rp", -1.0),
    ],
)
def test_bad_parameters_name_the_field(cls, field, value):
    with pytest.raises(ValueError, match=field):
        cls(**{field: value})


def test_unit_strings():
    p = ECMParams(qeq="37.5KB", r_unit="1Mbps", q_max="1.5MB", drift_period="20ms")
    assert (p.qeq, p.r_unit, p.q_max, p.drift_period) == (37500.0, 1e6, 1.5e6, 0.02)


# ============================================================================ twins
@st.composite
def ecm_params(draw):
    base = dict(
        fb_bits=draw(st.sampled_from([0, 8, 6])),
        psample=draw(st.sampled_from([1.0, 0.1, 0.02])),
        jitter=draw(st.sampled_from([0.0, 0.15])),
        ecm_max=draw(st.booleans()),
        ecm00=draw(st.booleans()),
        q_max=draw(st.sampled_from([100000.0, 150000.0])),
        pos_fb=draw(st.sampled_from(["tagged", "all", "tagged_below_qeq"])),
        cpid_replace=draw(st.sampled_from(["negative", "never"])),
        drift_inc=draw(st.sampled_from([0.0, 4e6])),
        drift_factor=draw(st.sampled_from([1.0, 1.005])),
    )
    if draw(st.booleans()):
        return ECMQParams(w_rp=draw(st.sampled_from([None, 1.0, 8.0])), **base)
    return ECMParams(**base)


#: queue values, with the thresholds (Qeq, Qmax, Qsc) drawn often to probe boundaries
QS = st.one_of(st.integers(0, 200000), st.sampled_from([37500, 100000, 150000, 375000]))
CP_OPS = st.lists(
    st.tuples(QS, st.sampled_from([64, 1500, 9000]), st.booleans()),
    min_size=1,
    max_size=80,
)
RP_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("fb"), st.floats(-300000, 300000, allow_nan=False), st.integers(0, 2)),
        st.tuples(st.just("codes"), st.integers(-127, 127), st.integers(-127, 127),
                  st.integers(0, 2)),
        st.tuples(st.just("00"), st.integers(0, 2)),
        st.tuples(st.just("drift")),
    ),
    min_size=1,
    max_size=80,
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(ecm_params(), CP_OPS, st.integers(0, 2**63 - 1))
def test_cp_twin(p, ops, seed):
    a, b = make_ecm_cp("compiled", p, seed), make_ecm_cp("reference", p, seed)
    for q, frame, tagged in ops:
        ra, rb = a.on_arrival(q, frame, tagged), b.on_arrival(q, frame, tagged)
        assert ra == rb
        assert np.array_equal(a.as_array(), b.as_array())
    assert a.others_untouched()


@settings(max_examples=60, deadline=None)
@given(ecm_params(), RP_OPS)
def test_rp_twin_and_bounds(p, ops):
    a, b = make_ecm_rp("compiled", p), make_ecm_rp("reference", p)
    sep = isinstance(p, ECMQParams)
    for op in ops:
        if op[0] == "fb":
            fb = max(-p.fb_full, min(p.fb_full, op[1]))
            ra, rb = a.on_fb(fb, op[2]), b.on_fb(fb, op[2])
        elif op[0] == "codes" and sep:
            ra, rb = a.on_codes(op[1], op[2], op[3]), b.on_codes(op[1], op[2], op[3])
        elif op[0] == "00":
            ra, rb = a.on_00(op[1]), b.on_00(op[1])
        else:
            ra, rb = a.on_drift(), b.on_drift()
        assert ra == rb
        assert np.array_equal(a.as_array(), b.as_array())
        assert p.r_min <= a.cr <= p.line_rate  # r stays within [Rmin, C] (§4.1)
    assert a.others_untouched()
