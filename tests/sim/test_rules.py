"""QCN CP/RP rules: qcn-algorithm.md §1.2 signs, §1.3 quantiser, §6 pitfalls, §7 facts 1-16.

Every test runs on both implementations (``compiled`` = qcnmodel.sim.protocols.qcn, ``reference`` =
qcnmodel.sim.protocols.qcn_ref). Parameter sets with jitter = 0 make the expected numbers exact:
unless a tolerance is commented, comparisons are exact (==).
"""

from __future__ import annotations

import pytest
from rules_impls import IMPLS, make_cp, make_rp, other_columns_untouched

from qcnmodel.params import QCNParams
from qcnmodel.sim.protocols import qcn as r
from qcnmodel.sim.protocols.qcn_ref import quantise_py

MODES = ("floor63", "round63", "floor64cap", "msb6", "shift")
P0 = QCNParams(jitter=0.0)  # MIB defaults without jitter
C = P0.line_rate


@pytest.fixture(params=IMPLS)
def impl(request):
    return request.param


def q_both(neg_fb, qeq, w, bits, mode):
    """Quantise with both implementations and check they agree."""
    a = int(r.quantise(float(neg_fb), float(qeq), float(w), bits, r.CODES["quantiser"][mode]))
    b = quantise_py(float(neg_fb), float(qeq), float(w), bits, mode)
    assert a == b
    return a


def sampling_every_frame(**kw):
    """CP that samples every 1500 B frame: fixed interval 1500/1.0 bytes, no jitter."""
    return QCNParams(jitter=0.0, sampling="fixed", ps_fixed=1.0, **kw)


def fire_bc(rp, now_ns=0):
    """Send exactly the bytes left in the byte-counter cycle: one expiry."""
    return rp.on_tx(rp.bc_left, now_ns)


def fire_timer(rp):
    """Fire the pending timer at its deadline; returns the next deadline."""
    return rp.on_timer(rp.timer_gen, rp.deadline)


# ----------------------------------------------------------------- §1.2 / §1.3 / facts 1-4
@pytest.mark.parametrize(
    ("qold", "q", "fb", "cnm"),
    [(28000, 30000, -8000, True), (34000, 30000, 4000, False), (14000, 20000, -6000, True)],
)
def test_sign_examples(impl, qold, q, fb, cnm):
    """§1.2: Qeq 26000, w 2: Fb = -(Qoff + w Qdelta), CNM iff Fb < 0."""
    cp = make_cp(impl, sampling_every_frame())
    cp.on_arrival(qold, 1500)  # sample: sets Qold
    got = cp.on_arrival(q, 1500)
    assert got[0] is cnm
    assert -(got[2] + 2.0 * got[3]) == fb
    assert got[1] == ((63 * -fb) // 130000 if fb < 0 else 0)
    assert cp.qold == q


@pytest.mark.parametrize("bits", [6, 8])
@pytest.mark.parametrize("qeq", [1000, 26000, 33000, 34000, 37500, 375000])
@pytest.mark.parametrize("w", [1.0, 2.0, 8.0, 32.0, 2.5])
def test_fact1_full_scale(bits, qeq, w):
    """Fact 1 / pitfall §6.1: -Fb >= Qeq(2w+1) -> full scale (63, or 255 with 8 bits)."""
    full = 2**bits - 1
    fbmax = qeq * (2 * w + 1)
    for mode in ("floor63", "round63", "floor64cap"):
        for x in (fbmax, fbmax + 1, 10 * fbmax):
            assert q_both(x, qeq, w, bits, mode) == full
        assert q_both(fbmax - 1, qeq, w, bits, mode) <= full
    assert q_both(fbmax - 1, qeq, w, bits, "floor63") == full - 1 or fbmax < full
    # shift with the derived k: no wrap-around, full scale lands in the top half
    assert full // 2 < q_both(10 * fbmax, qeq, w, bits, "shift") <= full


def test_shift_pitfall_regression():
    """§6.1: the Linux patch's fixed >>13 gives qFb <= 20 at Qeq 34000; derived k does not."""
    assert (170000 >> 13) & 0x3F == 20  # the documented bug
    assert q_both(170000, 34000, 2, 6, "shift") == 170000 >> 12 == 41
    assert q_both(130000, 26000, 2, 6, "shift") == 63  # k = 11: 63 * 2048 ~ 130000


def test_fact3_midscale():
    """Fact 3 / §1.3: -Fb 26000 (Q = Qold = 52000) -> floor63 12, round63 13, floor64cap 12."""
    assert q_both(26000, 26000, 2, 6, "floor63") == 12
    assert q_both(26000, 26000, 2, 6, "round63") == 13
    assert q_both(26000, 26000, 2, 6, "floor64cap") == 12
    assert q_both(0, 26000, 2, 6, "floor63") == 0
    assert q_both(-5, 26000, 2, 6, "round63") == 0
    assert q_both(40, 26000, 2, 6, "msb6") == 40
    assert q_both(130000, 26000, 2, 6, "msb6") == 130000 >> 11


def test_fact3_via_cp(impl):
    """Fact 3 through the CP: Q = Qold = 52000 gives qFb 12 (floor63)."""
    cp = make_cp(impl, sampling_every_frame())
    cp.on_arrival(52000, 1500)
    cnm, qfb, qoff, qdelta = cp.on_arrival(52000, 1500)
    assert (cnm, qfb, qoff, qdelta) == (True, 12, 26000.0, 0.0)


def test_fact2_no_congestion(impl):
    """Fact 2: Fb >= 0 -> no CNM; Qold still updated; next interval table[0] = 150000 B."""
    cp = make_cp(impl, QCNParams(jitter=0.0))
    assert cp.on_arrival(0, 1500)[0] is False
    assert cp.to_sample == 150000 - 1500  # initial countdown table[0]*U(), U = 1
    for _ in range(98):
        assert cp.on_arrival(1000, 1500) == (False, 0, 0.0, 0.0)
    got = cp.on_arrival(20000, 1500)  # 100th frame: sampled, Fb = -(-6000 + 2*20000) < 0
    assert cp.last_sampled and got[0] is True
    cp2 = make_cp(impl, QCNParams(jitter=0.0))
    for _ in range(99):
        cp2.on_arrival(0, 1500)
    cnm, qfb, qoff, qdelta = cp2.on_arrival(10000, 1500)  # Fb = -(-16000 + 20000) < 0
    assert cnm
    cp3 = make_cp(impl, QCNParams(jitter=0.0))
    for _ in range(99):
        cp3.on_arrival(0, 1500)
    assert cp3.on_arrival(5000, 1500) == (False, 0, -21000.0, 5000.0)  # Fb = +11000
    assert cp3.last_sampled and cp3.qold == 5000 and cp3.to_sample == 150000
    assert other_columns_untouched(cp3)


@pytest.mark.parametrize("jitter", [0.0, 0.15])
def test_fact4_sampling_table(impl, jitter):
    """Fact 4: qFb 0-7 -> 150000 B ... 56-63 -> 18500 B; draws within [1-J, 1+J] x entry."""
    table = [150000, 75000, 50000, 37500, 30000, 25000, 21500, 18500]
    p_table = QCNParams(jitter=jitter)
    for qfb_target in range(0, 64, 3):
        # -Fb = Qoff with Qdelta = 0: choose Q so that floor(63 x / 130000) = qfb_target
        x = -(-qfb_target * 130000 // 63)  # ceil: smallest x with that qFb
        q = 26000 + x
        cp = make_cp(impl, p_table)
        # drive to a sample with Qold = q, then one more sample at Q = q
        cp.on_arrival(q, 10**7)  # first arrival: initial draw, sampled at once, Qold = q
        cp.on_arrival(q, 10**7)
        assert cp.last_sampled
        assert cp.last_qfb == qfb_target
        entry = table[qfb_target >> 3]
        assert (1 - jitter) * entry <= cp.to_sample <= (1 + jitter) * entry


def test_fact13_14_sampling_lag_and_to_thresh(impl):
    """Facts 13-14: lag = interval*8/C (120 us, 14.8 us, 1.2 ms); 1500 B / 1% = 150000 B."""
    table = QCNParams().sample_table()
    assert table[0] * 8 / 10e9 == pytest.approx(120e-6, rel=1e-12)  # float division only
    assert table[7] * 8 / 10e9 == pytest.approx(14.8e-6, rel=1e-12)
    assert table[0] * 8 / 1e9 == pytest.approx(1.2e-3, rel=1e-12)
    p = QCNParams(jitter=0.0, sampling="fixed", ps_fixed=0.01)
    assert r.pack_cp_params(p)[r.CPP_FIXED_INTERVAL] == 150000.0
    cp = make_cp(impl, p)
    cp.on_arrival(0, 1500)
    assert cp.to_sample == 150000 - 1500


def test_cnm_requires_qfb_positive(impl):
    """§1.2 variant: floor quantiser qFb = 0 with Fb < 0 -> CNM by default, none in variant."""
    for flag, expect in ((False, True), (True, False)):
        cp = make_cp(impl, sampling_every_frame(cnm_requires_qfb_positive=flag))
        cp.on_arrival(26000, 1500)
        cnm, qfb, _, _ = cp.on_arrival(26500, 1500)  # -Fb = 500 + 1000 -> qFb 0
        assert qfb == 0 and cnm is expect
        rp = make_rp(impl, QCNParams(jitter=0.0, cnm_requires_qfb_positive=flag))
        assert (rp.on_cnm(0, 1, 0) == -1) is flag
        assert rp.active is (not flag)


# ----------------------------------------------------------------- RP: facts 5-12, 15-16
def test_fact5_max_cut(impl):
    """Fact 5: Gd 1/128, qFb 63 -> CR' = 65/128 CR = 0.5078125 CR (MIN_DEC not binding)."""
    rp = make_rp(impl, P0)
    assert rp.on_cnm(63, 1, 0) == 15_000_000
    assert rp.active and rp.cr == 0.5078125 * C and rp.tr == C
    assert (rp.bc_stage, rp.t_stage, rp.bc_left) == (0, 0, 150000.0)
    rp2 = make_rp(impl, P0.replace(gd=1 / 64))  # Gd 1/64: MIN_DEC = 0.5 binds
    rp2.on_cnm(63, 1, 0)
    assert rp2.cr == 0.5 * C
    assert other_columns_untouched(rp)


def test_pitfall_gd_units():
    """§6.2: Gd * qFb_max ~ 1/2 for the standard parameters (63/128)."""
    p = QCNParams()
    assert p.gd * p.fb_full_scale == pytest.approx(0.5, abs=0.01)  # 63/128 = 0.492


def test_fact6_rate_floor(impl):
    """Fact 6: CR >= MIN_RATE after any CNM; repeated cuts end exactly at MIN_RATE."""
    rp = make_rp(impl, P0)
    for k in range(20):
        rp.on_cnm(63, 1, k)
        assert rp.cr >= P0.min_rate
    assert rp.cr == P0.min_rate


def test_cnm_keeps_tr_in_first_fr_cycle(impl):
    """§2.3 TR reset: seed 002 "if si_bcount != 0, TR = CR"; a burst of CNMs keeps TR."""
    rp = make_rp(impl, P0)
    rp.on_cnm(63, 1, 0)
    rp.on_cnm(63, 1, 1)  # bc_stage == 0 and CR != C: TR kept
    assert rp.tr == C and rp.cr == 0.5078125**2 * C
    fire_bc(rp)  # bc_stage 1
    cr = rp.cr
    rp.on_cnm(10, 2, 2)  # bc_stage != 0: TR = CR
    assert rp.tr == cr and rp.cr == cr * (1 - 10 / 128) and rp.cpid == 2


def test_fact7_fast_recovery(impl):
    """Fact 7: TR 10G, CR0 5G -> TR - CR halves per cycle; 9.84375 G after 5 cycles."""
    rp = make_rp(impl, P0.replace(gd=1 / 64))
    rp.on_cnm(63, 1, 0)  # CR0 = 5 G (MIN_DEC), TR = 10 G
    for k in range(1, 6):
        assert fire_bc(rp) == r.TX_INCREASE
        assert rp.tr == 10e9 and rp.tr - rp.cr == 5e9 / 2**k
    assert rp.cr == 9.84375e9


def test_fact8_active_increase(impl):
    """Fact 8: in AI, TR += R_AI per cycle and (TR - CR) - R_AI halves per cycle."""
    rp = make_rp(impl, P0)
    rp.on_cnm(63, 1, 0)
    rp.set(cr=1e9, tr=2e9)
    for _ in range(5):
        fire_bc(rp)
    errs = []
    for _ in range(6):
        tr = rp.tr
        fire_bc(rp)
        assert rp.tr == tr + P0.r_ai
        errs.append(rp.tr - rp.cr - P0.r_ai)
    for a, b in zip(errs, errs[1:]):
        assert b == pytest.approx(a / 2, rel=1e-9)  # float rounding of 1e9-sized sums


def _alternate(rp):
    """Scripted sequence bc1, t1, bc2, t2, ..., bc8, t8 -> list of (event, stages, dTR)."""
    rows = []
    for _ in range(8):
        for name, fire in (("bc", fire_bc), ("t", fire_timer)):
            tr = rp.tr
            fire(rp)
            rows.append((name, (rp.bc_stage, rp.t_stage), rp.tr - tr))
    return rows


@pytest.mark.parametrize(
    ("kw", "hai_steps"),
    [
        ({}, [1, 1, 2, 2, 3]),  # i = min(stages) - FR_TH
        ({"hai_index": "event_count"}, [1, 2, 3, 4, 5]),  # i counts HAI events
        ({"hai": False}, None),  # R_AI instead
    ],
)
def test_fact9_hai_and_pitfall_off_by_one(impl, kw, hai_steps):
    """Fact 9 / pitfall §6.3: exact TR increments for a scripted event sequence.

    FR for 10 expiries (5 per counter), AI at (6, 5), first HAI step R_HAI at (6, 6); the
    timer's HAI steps 1, 2, 3 sum to R_HAI j(j+1)/2.
    """
    p = P0.replace(**kw)
    rp = make_rp(impl, p)
    rp.on_cnm(63, 1, 0)
    rp.set(cr=1e9, tr=1.5e9)  # far below C: no release, TR/8 rule not triggered
    rows = _alternate(rp)
    assert [s for _, s, _ in rows][:4] == [(1, 0), (1, 1), (2, 1), (2, 2)]
    assert all(d == 0.0 for _, _, d in rows[:10])  # FR: 5 cycles of each counter
    assert rows[10] == ("bc", (6, 5), p.r_ai)  # AI: one counter past FR
    hai = [d for _, _, d in rows[11:]]
    if hai_steps is None:
        assert hai == [p.r_ai] * 5
    else:
        assert hai == [p.r_hai * k for k in hai_steps]
    if not kw:
        timer_steps = [d for name, _, d in rows[11:] if name == "t"]
        assert sum(timer_steps) == p.r_hai * 3 * 4 / 2


@pytest.mark.parametrize(
    ("variant", "stages", "expect_div"),
    [
        ("own_first", (0, 0, "bc"), True),
        ("own_first", (1, 1, "t"), False),
        ("either", (1, 1, "t"), True),
        ("off", (0, 0, "bc"), False),
    ],
)
def test_fact10_tr_div8(impl, variant, stages, expect_div):
    """Fact 10: first expiry, TR 10 G, CR 0.5 G -> TR 1.25 G, CR 0.875 G (tr_div8 variants)."""
    rp = make_rp(impl, P0.replace(tr_div8=variant))
    rp.on_cnm(63, 1, 0)
    bc, ts, which = stages
    rp.set(cr=0.5e9, tr=10e9, bc_stage=bc, t_stage=ts)
    fire_bc(rp) if which == "bc" else fire_timer(rp)
    if expect_div:
        assert (rp.tr, rp.cr) == (1.25e9, 0.875e9)
    else:
        assert (rp.tr, rp.cr) == (10e9, 5.25e9)


@pytest.mark.parametrize(
    ("mode", "first_half"),
    [("after_fr", 5), ("one_late", 6), ("off", None), ("hai_only", None)],
)
def test_fact11_cycle_halving(impl, mode, first_half):
    """Fact 11: BC reloads 150 KB after expiries 1-4, 75 KB from expiry 5; timer 15 -> 7.5 ms."""
    rp = make_rp(impl, P0.replace(cycle_halving=mode))
    rp.on_cnm(63, 1, 0)
    rp.set(cr=1e9, tr=1.5e9)
    for k in range(1, 9):
        fire_bc(rp)
        half = first_half is not None and k >= first_half
        assert rp.bc_left == (75000.0 if half else 150000.0)
    now = rp.deadline
    for k in range(1, 9):
        nxt = fire_timer(rp)
        # hai_only: bc_stage is already 8, so the timer halves once its own stage >= 5
        half = (first_half is not None and k >= first_half) or (mode == "hai_only" and k >= 5)
        assert nxt - now == (7_500_000 if half else 15_000_000)
        now = nxt


def test_fact12_hai_onset(impl):
    """Fact 12: standard set, no jitter: both stages reach 6 after 825 KB and 82.5 ms."""
    rp = make_rp(impl, P0)
    assert rp.on_cnm(63, 1, 0) == 15_000_000
    rp.set(cr=1e9, tr=1.5e9)
    sent = 0
    while rp.bc_stage < 6:
        rp.on_tx(1500, 0)
        sent += 1500
    assert sent == 825_000
    t = 0
    while rp.t_stage < 6:
        t, nxt = rp.deadline, fire_timer(rp)
    assert t == 82_500_000 and nxt == 90_000_000
    assert (rp.bc_stage, rp.t_stage) == (6, 6)


def test_fact15_release(impl):
    """Fact 15: CR reaches C -> RL inactive, timer cancelled, counters frozen; TR >= 2C - CR."""
    rp = make_rp(impl, P0)
    rp.on_cnm(1, 1, 0)
    gen = rp.timer_gen
    status = []
    while rp.active:
        cr = rp.cr
        status.append(fire_bc(rp))
    assert status[:-1] == [r.TX_INCREASE] * 5 and status[-1] == r.TX_RELEASED
    assert rp.tr >= 2 * C - cr and rp.cr == C
    assert rp.timer_gen == gen + 1 and rp.deadline == -1
    frozen = rp.as_array()
    assert rp.on_timer(gen, 15_000_000) == -1
    assert rp.on_tx(10**6, 20_000_000) == r.TX_NONE
    assert rp.on_drift() == r.TX_NONE
    assert (rp.as_array() == frozen).all()
    rp.on_cnm(63, 2, 30_000_000)  # the next CNM creates a new RL at CR = TR = C
    assert rp.active and rp.tr == C and rp.cr == 0.5078125 * C


def test_stale_timer_ignored(impl):
    """Timer generation: a CNM re-arms the timer; the old event is stale (returns -1)."""
    rp = make_rp(impl, P0)
    rp.on_cnm(63, 1, 0)
    old = rp.timer_gen
    rp.on_cnm(63, 1, 1_000_000)
    before = rp.as_array()
    assert rp.on_timer(old, 15_000_000) == -1
    assert (rp.as_array() == before).all()
    assert rp.on_timer(rp.timer_gen, 16_000_001) == 31_000_001


def test_fact16_real_timer_idle_flow(impl):
    """Fact 16 / pitfall §6.4: an idle flow with an active RL still gets timer increases."""
    rp = make_rp(impl, P0)
    rp.on_cnm(63, 1, 0)
    cr0 = rp.cr
    for k in range(1, 4):
        fire_timer(rp)
        assert rp.t_stage == k and rp.bc_stage == 0
    assert rp.cr == C - (C - cr0) / 8


def test_lazy_timer_replays_in_burst(impl):
    """§6.4 variant timer_mode=lazy: no timer increase while idle, a burst at the next frame."""
    rp = make_rp(impl, P0.replace(timer_mode="lazy"))
    rp.on_cnm(63, 1, 0)
    cr0 = rp.cr
    assert rp.on_timer(rp.timer_gen, 15_000_000) == -1 and rp.cr == cr0
    assert rp.on_tx(1500, 50_000_000) == r.TX_INCREASE  # expiries at 15, 30, 45 ms
    assert rp.t_stage == 3 and rp.deadline == 60_000_000
    assert rp.cr == C - (C - cr0) / 8


def test_bc_reload_tr_reset_only(impl):
    """§2.3 variant: ns-3-dcn reloads the byte counter only when it resets TR."""
    rp = make_rp(impl, P0.replace(bc_reload_on_cnm="tr_reset_only"))
    rp.on_cnm(63, 1, 0)
    rp.on_tx(50000, 0)
    rp.on_cnm(63, 1, 1)  # bc_stage 0 and CR != C: TR kept, bc_left kept
    assert rp.bc_left == 100000.0
    rp2 = make_rp(impl, P0)
    rp2.on_cnm(63, 1, 0)
    rp2.on_tx(50000, 0)
    rp2.on_cnm(63, 1, 1)
    assert rp2.bc_left == 150000.0


def test_drift(impl):
    """§4.5 proposal: CR <- min(C, (CR + inc) * factor) while active; release at C."""
    rp = make_rp(impl, P0.replace(drift_inc=4e6, drift_factor=1.005, drift_period=0.02))
    assert rp.on_drift() == r.TX_NONE
    rp.on_cnm(63, 1, 0)
    cr = rp.cr
    assert rp.on_drift() == r.TX_INCREASE and rp.cr == (cr + 4e6) * 1.005
    while rp.on_drift() != r.TX_RELEASED:
        pass
    assert not rp.active and rp.cr == C
