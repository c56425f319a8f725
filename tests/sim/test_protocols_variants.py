"""QCN options and variants at rule level: facts from the seeds and our documented readings.

Each test runs on the compiled rules and the Python twin. Jitter is 0 unless stated, so
deadlines and counters are exact. Tolerances: rel=1e-12 where a product of non-binary
fractions is compared with its decimal value (e.g. 0.5**1.5); everything else is exact.
"""

from __future__ import annotations

import pytest
from protocol_impls import IMPLS, make_vcp, make_vrp

from qcnmodel.params import QCNParams
from qcnmodel.params.protocols import (
    EFRParams,
    FbHatParams,
    ProbeParams,
    QCNPlusParams,
    SonarParams,
)
from qcnmodel.sim.protocols import qcn_variants as v

C = 10e9
Q0 = QCNParams(jitter=0.0)
MS = 1_000_000  # ns


def _bc_left(rp):
    return rp.as_array()[5]


# ------------------------------------------------------------------ QCN options (issue item 2)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    "efr,expect",
    [(None, 0.875 * C), (EFRParams(efr=True), (0.75 + 0.25 * 0.75) * C)],
)
def test_extra_fast_recovery_first_cycle(impl, efr, expect):
    """qFb 32 cuts to 0.75 C (TR = C); one FR cycle: CR halfway (QCN) or 3/4 of the way (EFR)."""
    rp = make_vrp(impl, Q0, efr=efr)
    rp.on_cnm(32, 1, 0)
    assert rp.cr == 0.75 * C
    assert rp.on_tx(Q0.bc_limit, 0) == v.TX_INCREASE
    assert rp.cr == expect


@pytest.mark.parametrize("impl", IMPLS)
def test_efr_max_recovers_fully_on_the_first_expiry(impl):
    rp = make_vrp(impl, Q0, efr=EFRParams(efr=True, efr_max=True))
    rp.on_cnm(32, 1, 0)
    assert rp.on_tx(Q0.bc_limit, 0) == v.TX_RELEASED  # CR = TR = C: released
    assert not rp.active and rp.cr == C


@pytest.mark.parametrize("impl", IMPLS)
def test_to_thresh_packet_size_over_psample(impl):
    """Seed 000: to_thresh = packet_size / P_sample (1500 B / 1.2 % = 125 kB, not BC_LIMIT)."""
    q = Q0.replace(sampling="fixed", ps_fixed=0.012, bc_limit=75000)
    rp = make_vrp(impl, q, efr=EFRParams(to_thresh="psample"))
    rp.on_cnm(10, 1, 0)
    assert _bc_left(rp) == 125000.0
    rp = make_vrp(impl, Q0, efr=EFRParams(to_thresh="cnm"))  # table interval of the CNM's qFb
    rp.on_cnm(63, 1, 0)
    assert _bc_left(rp) == 18500.0
    rp.on_cnm(7, 1, 0)
    assert _bc_left(rp) == 150000.0


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("hai,step", [(True, 50e6), (False, 5e6)])
def test_hyperactive_increase_on_off(impl, hai, step):
    """Both counters past FR (stages 6, 6): TR += R_HAI (HAI on) or R_AI (off; seeds 003/004)."""
    q = Q0.replace(bc_limit=1500, timer=1e-3, hai=hai)
    rp = make_vrp(impl, q)
    rp.on_cnm(63, 1, 0)
    for _ in range(6):
        rp.on_tx(1500, 0)
    rp.set(cr=1e9, tr=2e9)  # far from C: no release during the timer steps
    for _ in range(5):  # timer stages 1..5: one counter past FR -> R_AI
        tr = rp.tr
        rp.on_timer(int(rp.timer_gen), int(rp.deadline))
        assert rp.tr == tr + 5e6
    tr = rp.tr
    rp.on_timer(int(rp.timer_gen), int(rp.deadline))  # stages (6, 6)
    assert rp.tr == tr + step


@pytest.mark.parametrize("impl", IMPLS)
def test_teak_timer_and_drift(impl):
    """Teak timer 500 us (seeds 003/004); drift +4 Mb/s (seed 000) and x1.005 (Teak)."""
    rp = make_vrp(impl, Q0.replace(timer="500us", drift_inc=4e6, drift_period=0.02))
    assert rp.on_cnm(63, 1, 1000) == 1000 + 500_000
    cr = rp.cr
    assert rp.on_drift() == v.TX_INCREASE and rp.cr == cr + 4e6
    rp = make_vrp(impl, Q0.replace(drift_factor=1.005, drift_period=5e-4))
    rp.on_cnm(63, 1, 0)
    cr = rp.cr
    rp.on_drift()
    assert rp.cr == cr * 1.005


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("sampling,interval", [("table", 18500.0), ("fixed", 125000.0)])
def test_variable_versus_fixed_sampling(impl, sampling, interval):
    """Full-scale congestion: table entry 7 (18.5 KB, ~8 %) vs fixed 1.2 % (seed 004)."""
    cp = make_vcp(impl, Q0.replace(sampling=sampling, ps_fixed=0.012))
    cp.on_arrival(200000.0, 150000.0)  # first countdown 150000 (table[0]) or 125000: sampled
    assert cp.as_array()[1] == interval


# ------------------------------------------------------------------ QCN-H
@pytest.mark.parametrize("impl", IMPLS)
def test_fbhat_normalised_and_ewma(impl):
    q = Q0.replace(sampling="fixed", ps_fixed=0.1)  # a sample every 15000 B
    plain, hat = make_vcp(impl, q), make_vcp(impl, q, fbhat=FbHatParams(ref_interval=150000))
    for _ in range(10):
        a = plain.on_arrival(30000, 1500)
        b = hat.on_arrival(30000, 1500)
    assert a == (True, 31, 4000.0, 30000.0)  # Fb = -64000 -> floor(63*64000/130000) = 31
    assert b == (True, 63, 4000.0, 300000.0)  # Qdelta x 150000/15000: Fb = -604000, capped
    ew = make_vcp(impl, q, fbhat=FbHatParams(mode="ewma", ewma_gain=0.25))
    for _ in range(10):
        c = ew.on_arrival(30000, 1500)
    assert c[:2] == (True, 7)  # Fb_hat = 0.25 * -64000 = -16000 -> floor(63*16000/130000)


# ------------------------------------------------------------------ probes (QCN-P/HP/SP/PP)
@pytest.mark.parametrize("impl", IMPLS)
def test_probe_timer_replies_and_release(impl):
    rp = make_vrp(impl, Q0, probe=ProbeParams(interval=1e-3, jitter=0.0))
    rp.on_cnm(32, 4, 0)
    assert rp.take_arm() == MS and rp.take_arm() == -1
    gen = int(rp.aux_gen)
    assert rp.on_aux_timer(gen - 1, MS) == -1  # stale
    assert rp.on_aux_timer(gen, MS) == 2 * MS and rp.take_send() == 4 and rp.take_send() == -1
    rp.on_cnm(1, 4, MS)
    assert rp.take_arm() == -1  # periodic: a CNM does not re-arm a pending probe timer
    cr, tr = rp.cr, rp.tr
    assert rp.on_probe_reply(63.0, 0.0, 0.0, 5, MS) == -1 and (rp.cr, rp.tr) == (cr, tr)
    rp.on_probe_reply(63.0, 0.0, 0.0, 4, MS)  # own CP, full-scale positive: TR += 0.1 C
    assert rp.tr == tr + 0.1 * C and rp.cr == (cr + tr + 0.1 * C) / 2
    assert rp.on_probe_reply(-63.0, 0.0, 0.0, 4, 2 * MS) >= 0  # negative reply = CNM
    assert rp.cr < (cr + tr + 0.1 * C) / 2
    for _ in range(40):
        rp.on_probe_reply(63.0, 0.0, 0.0, 4, 2 * MS)
    assert not rp.active and rp.on_aux_timer(int(rp.aux_gen), 3 * MS) == -1


@pytest.mark.parametrize("impl", IMPLS)
def test_cp_probe_answer_does_not_disturb_sampling(impl):
    cp = make_vcp(impl, Q0.replace(sampling="fixed", ps_fixed=1.0))
    cp.on_arrival(30000, 1500)  # sample: Qold = 30000
    fb = cp.probe_fb(20000)  # -((20000 - 26000) + 2 (20000 - 30000)) = +26000
    assert fb == 26000.0 and cp.probe_code(fb) == 12.0 and cp.probe_code(-fb) == -12.0
    assert cp.as_array()[0] == 30000.0


# ------------------------------------------------------------------ SONAR
@pytest.mark.parametrize("impl", IMPLS)
def test_sonar_cp_not_congested_threshold_and_interval(impl):
    cp = make_vcp(impl, Q0, sonar=SonarParams())
    cp.on_queue(14999, 0)
    assert not cp.on_ping(10000, 10 * MS - 1)
    assert cp.on_ping(10000, 10 * MS)  # 15000 B threshold held for 10 ms
    cp.on_queue(15000, 11 * MS)  # at the threshold: congested again
    assert not cp.on_ping(0, 12 * MS)


@pytest.mark.parametrize("impl", IMPLS)
def test_sonar_rp_timers_and_boost(impl):
    rp = make_vrp(impl, Q0, sonar=SonarParams())
    rp.on_cnm(63, 2, 0)
    assert rp.take_arm() == 10 * MS and rp.phase == v.PHASE_WAIT  # WP timer
    assert rp.on_aux_timer(int(rp.aux_gen), 10 * MS) == 10 * MS + MS // 2  # SF: ping period
    assert rp.take_send() == 2 and rp.phase == v.PHASE_PING
    assert rp.on_echo(False, 10 * MS) == -1
    cr, tr = rp.cr, rp.tr
    assert rp.on_echo(True, 10 * MS) == 12 * MS  # WE hold
    assert rp.tr == tr + 50e6 and rp.cr == (cr + tr + 50e6) / 2 and rp.phase == v.PHASE_HOLD
    assert rp.take_arm() == 12 * MS


# ------------------------------------------------------------------ QCN+
@pytest.mark.parametrize("impl", IMPLS)
def test_plus_one_negative_adjustment_per_rtt(impl):
    rp = make_vrp(impl, Q0, plus=QCNPlusParams(rtt=500e-6, w_factor=0.0))
    assert rp.on_cnm(0, 1, 0, qoff=26000.0, qdelta=0.0) >= 0  # qFb 12 recomputed by the RP
    assert rp.cr == C * (1 - 12 / 128)
    cr = rp.cr
    assert rp.on_cnm(0, 1, 400_000, qoff=26000.0, qdelta=0.0) == -1 and rp.cr == cr
    assert rp.on_cnm(0, 1, 500_000, qoff=26000.0, qdelta=0.0) >= 0 and rp.cr < cr
    assert rp.on_cnm(0, 1, 2 * MS, qoff=-50000.0, qdelta=0.0) == -1  # Fb > 0: ignored


@pytest.mark.parametrize("impl", IMPLS)
def test_plus_w_grows_with_rtt_and_rate(impl):
    """W = baseW + RTT factor / N: RTT 1 ms, factor 2000/s, N = C/CR = 1 -> W = 4."""
    rp = make_vrp(impl, Q0, plus=QCNPlusParams(rtt=1e-3, w_factor=2000.0))
    rp.on_cnm(0, 1, 0, qoff=0.0, qdelta=10000.0)  # Fb = -40000 -> floor(63*40000/130000) = 19
    assert rp.cr == C * (1 - 19 / 128)


@pytest.mark.parametrize("impl", IMPLS)
def test_plus_to_threshold_slide_example(impl):
    """max(TO_THRESHOLD, RTT 2 rate): 500 us at 5 Gb/s -> 625000 B (seed 000 backup slide)."""
    rp = make_vrp(impl, Q0, plus=QCNPlusParams(rtt=500e-6))
    rp.on_cnm(0, 1, 0, qoff=26000.0, qdelta=0.0)
    rp.set(cr=5e9)
    base = rp.bc_base() if impl == "reference" else v.bc_base(rp.state, rp.i, rp.prm)
    assert base == 625000.0


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode,rtt,gain", [("continuous", 1e-3, 0.5),
                                           ("continuous", 1.5e-3, 0.5**1.5),
                                           ("step", 1.5e-3, 0.5)])  # fmt: skip
def test_plus_positive_loop_gain_halves_per_ms(impl, mode, rtt, gain):
    q = Q0.replace(bc_limit=1500)
    plus = QCNPlusParams(rtt=rtt, gain_mode=mode, to_thresh_rtt=False, one_neg_per_rtt=False)
    assert plus.loop_gain() == pytest.approx(gain, rel=1e-12)
    rp = make_vrp(impl, q, plus=plus)
    rp.on_cnm(0, 1, 0, qoff=260000.0, qdelta=0.0)
    for _ in range(5):
        rp.on_tx(1500, 0)  # fast recovery: no TR change
    tr = rp.tr
    rp.on_tx(1500, 0)  # stage 6: active increase R_AI x gain
    assert rp.tr == tr + 5e6 * plus.loop_gain()
