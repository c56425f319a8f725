"""The packets' word in ``assert_stable`` and ``assert_boundary_matches``: a queue that has
reached no equilibrium, a run too short for the RTT, an idle port and a claim of stability at
every RTT are not taken as confirmations.

Expected classes come from hand-built traces and from ``qcnmodel check --confirm``'s own
rules (:mod:`qcnmodel.studies.confirm`: its classification and its ``MIN_RTTS``), never from
the assertions themselves.
"""

import dataclasses
import math
import re

import numpy as np
import pytest

import qcnmodel as qm
from qcnmodel import testing as qt
from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.studies.confirm import MAX_DURATION, MIN_RTTS
from qcnmodel.testing import _sim, stability
from qcnmodel.validation.network import bottleneck_spec

P = qm.QCNParams.preset("802.1qau")


@dataclasses.dataclass(frozen=True)
class AlwaysStable:
    """A user's wrong model: loop 1e-3 / (s + 1) e^{-s rtt}, stable at every RTT (its gain
    never reaches 1, so its critical RTT is infinite)."""

    rtt: float = 100e-6
    n_flows: int = 1
    capacity: float = 5e9

    def loop(self):
        return DelayedLoop([1e-3], [1.0, 1.0], self.rtt)

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)


# --------------------------------------------------------------- the packets' classification
def _trace(q, dt=50e-6):
    q = np.asarray(q, float)
    return np.arange(1, q.size + 1) * dt, q, dt


def test_a_ramp_is_drifting_not_stable():
    # the audit's overloaded port: the CP queue climbs 160 -> 245 MB through the window; a
    # ramp's autocorrelation never turns negative, so the bare detector reads it "stable"
    t, q, dt = _trace(np.linspace(160e6, 245e6, 12000))
    v, _, _ = _sim.queue_verdict((t, q, dt), 0.0, t[-1], P.qeq)
    assert v["verdict"] == "drifting"
    assert v["drift"] == pytest.approx(85e6, rel=1e-3)  # the least-squares trend of a line


def test_a_level_queue_with_noise_is_stable():
    # the same window held at Qeq with a +-Qeq/10 ripple: no trend, no cycle, never empty
    rng = np.random.default_rng(0)
    t, q, dt = _trace(P.qeq + 0.1 * P.qeq * rng.standard_normal(6000))
    v, _, _ = _sim.queue_verdict((t, q, dt), 0.0, t[-1], P.qeq, P.frame_size)
    assert v["verdict"] == "stable" and abs(v["drift"]) < 0.01 * P.qeq


def test_an_overloaded_port_is_not_confirmed_stable():
    # 800 flows into 5 Gb/s: more than the QCN loop can hold at C/N, the queue climbs; the
    # wrong model calls it stable, the packets must not
    with pytest.raises(AssertionError) as exc:
        qt.assert_stable(P, rtt="100us", n_flows=800, confirm="packets",
                         model=AlwaysStable(n_flows=800))  # fmt: skip
    msg = str(exc.value)
    assert "model stable" in msg and "packets drifting" in msg and "no equilibrium" in msg


# --------------------------------------------------------------------------- the run length
def test_the_run_holds_min_rtts_in_its_analysed_half():
    assert stability.packet_run(100e-6) == (0.6, 0.3, None)  # short RTTs: the default run
    dur, settle, why = stability.packet_run(80e-3)  # 0.6 s would analyse < 4 RTTs
    assert why is None and dur == pytest.approx(2 * MIN_RTTS * 80e-3)
    assert (dur - settle) / 80e-3 == pytest.approx(MIN_RTTS)
    dur, settle, why = stability.packet_run(80e-3, settle=0.1)  # a settling time given
    assert why is None and dur == pytest.approx(0.1 + MIN_RTTS * 80e-3) and settle == 0.1
    dur, _, why = stability.packet_run(MAX_DURATION / MIN_RTTS)  # past the longest run
    assert dur == MAX_DURATION and f"fewer than the {MIN_RTTS}" in why
    _, _, why = stability.packet_run(80e-3, duration=0.6)  # a run given too short for it
    assert "3.75 RTTs" in why and "a run of 1.6 s would" in why


def test_a_point_the_run_cannot_hold_is_not_confirmed():
    # RTT 0.6 s: 10 round trips in the analysed half need a 12 s run, past the 10 s cap; the
    # point fails as not confirmed (nothing is simulated)
    with pytest.raises(AssertionError, match=r"packets cannot confirm: .*fewer than the 10"):
        qt.assert_stable(P, rtt="600ms", n_flows=1, confirm="packets", model=AlwaysStable())
    # a run given by the user must hold them too
    with pytest.raises(AssertionError, match=r"packets cannot confirm: .*0\.833 RTTs"):
        qt.assert_stable(P, rtt="30ms", n_flows=1, confirm="packets", model=AlwaysStable(),
                         duration="0.1s", settle="75ms")  # fmt: skip


def test_an_idle_port_cannot_confirm_stability(monkeypatch):
    # an uncongested port (the detector's "idle"): neither stable at Qeq nor a cycle
    idle = {"verdict": "idle", "mean": 100.0, "std": 50.0, "underflow": 0.9, "acf_peak": 0.0,
            "drift": 0.0}  # fmt: skip
    monkeypatch.setattr(stability, "_packets", lambda *a: (idle, np.zeros(2), np.zeros(2)))
    with pytest.raises(AssertionError, match="packets idle: the port is not congested"):
        qt.assert_stable(P, rtt="100us", n_flows=1, confirm="packets", model=AlwaysStable())


# ---------------------------------------------------------------------------- the boundary
def test_the_scan_continues_past_the_grid_towards_the_claim():
    grid = [50e-6, 100e-6, 280e-6]
    assert stability._extended(grid, math.inf, 30e-3) == pytest.approx(
        [50e-6, 100e-6, 280e-6, 560e-6, 1.12e-3, 2.24e-3, 4.48e-3, 8.96e-3, 17.92e-3, 30e-3]
    )
    assert stability._extended(grid, 1e-3, 30e-3)[-1] == pytest.approx(2.8e-3)
    assert stability._extended(grid, 100e-6, 30e-3) == grid  # the claim lies in the grid
    assert stability._extended(grid, math.inf, 200e-6) == grid  # the window holds no more
    assert stability._extended(grid, math.nan, 30e-3) == grid


def test_an_unstable_everywhere_claim_needs_an_unstable_first_point():
    assert not stability._agrees(math.nan, 280e-6, math.inf, 50e-6, 0.1)
    assert stability._agrees(math.nan, 0.0, 50e-6, 50e-6, 0.1)


def test_a_model_stable_at_every_rtt_is_put_to_rtts_where_packets_oscillate():
    # N = 10 at 5 Gb/s: the packets oscillate from ~0.5 ms (docs/validation.md), past the
    # 50-280 us grid around the scenario's 100 us; the scan must reach them
    with pytest.raises(AssertionError) as exc:
        qt.assert_boundary_matches(AlwaysStable(n_flows=10), bottleneck_spec(10, 100e-6, 5e9,
                                                                              10e9))  # fmt: skip
    msg = str(exc.value)
    assert "model critical RTT inf OUTSIDE the simulated bracket" in msg
    hi = float(msg.split("bracket [")[1].split(",")[1].split("us")[0])
    assert 280 < hi <= 1120  # the first doubling or the next holds the turn


# ------------------------------------------------------------------ the model's stable band
@dataclasses.dataclass(frozen=True)
class BandModel:
    """A model judged by its trajectories whose runs cycle below 80 us (many flows' timers in
    step) and above 400 us and are stable between: no critical RTT from the search's start,
    a stable band above it. Its linearised loop (an integrator, critical delay 50 us) is
    unstable throughout the band, so only the band can make a point there stable."""

    params: qm.QCNParams = P
    rtt: float = 100e-6
    n_flows: int = 30
    capacity: float = 10e9
    boundary_method = "trajectories"

    def loop(self):
        return DelayedLoop([math.pi / (2 * 50e-6)], [1.0, 0.0], self.rtt)

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)

    def trajectory_unstable(self):
        return self.rtt < 80e-6 or self.rtt > 400e-6


@pytest.mark.parametrize("rtt", [250e-6, 600e-6])
def test_the_model_verdict_is_the_one_check_and_margins_give(rtt, monkeypatch):
    # `qcnmodel check` on this model (its registry lookup pointed at it) and `margins`'
    # summary give the verdict; the plugin must give the same, in the band and past it
    from qcnmodel.models.summary import summary
    from qcnmodel.studies import check

    monkeypatch.setattr(check, "_model", lambda params, model, variant, **at: BandModel(**at))
    res = check.check_params(P, check.CheckRanges(rtt=(rtt, rtt), flows=(30, 30)),
                             model="fopdt", recommend=False, jobs=1, announce=False)  # fmt: skip
    band = res.stable_bands[30]
    assert 80e-6 <= band[0] < 250e-6 < 400e-6 <= band[1] * 1.15 < 600e-6  # the search's 15 %
    expected = res.verdict == "stable"
    assert expected == (rtt < band[1])
    assert summary(BandModel(rtt=rtt), fixed_point=False)["stable"] == expected
    if expected:
        qt.assert_stable(P, rtt=rtt, n_flows=30, model=BandModel(), capacity=10e9)
    else:
        with pytest.raises(AssertionError, match="model UNSTABLE .*stable band"):
            qt.assert_stable(P, rtt=rtt, n_flows=30, model=BandModel(), capacity=10e9)
    rec = qt.report.records()[-1]
    assert rec.passed == expected
    assert rec.numbers[f"RTT {rtt * 1e6:.4g} us, N=30: stable band from (s)"] == band[0]


def _packets_unstable_where(monkeypatch, unstable):
    """Stand-in packet runs: the queue at RTT r is "oscillating" where ``unstable(r)``, else
    "stable" (the network's RTT is handed through as the run's trace)."""
    from qcnmodel.testing import _resolve

    monkeypatch.setattr(_resolve, "with_rtt", lambda spec, r, p: r)
    monkeypatch.setattr(_sim, "queue_trace", lambda r, **kw: r)
    t = np.arange(1, 11) * 1e-3

    def verdict(r, *args):
        v = {"verdict": "oscillating" if unstable(r) else "stable", "drift": 0.0}
        return v, t, np.full(t.size, P.qeq)

    monkeypatch.setattr(_sim, "queue_verdict", verdict)


def _band_of_band_model():
    from qcnmodel.analysis.boundary import trajectory_boundary

    crit, band = trajectory_boundary(BandModel(rtt=300e-6))
    assert math.isnan(crit) and band is not None  # the analysis layer's band, ~84-413 us
    return band


def test_a_stable_band_is_compared_with_the_packets_onset_and_their_band_end(monkeypatch):
    # packets stable at the smallest RTTs, unstable from 0.6 x the band's start up to 0.9 x
    # it, stable from there to the band's end and unstable past it: both of the model's
    # claims hold (the onset below the start, the end within 10 % of the packets' bracket);
    # the scan around the scenario's 300 us saw a stable first point and failed
    start, end = _band_of_band_model()
    _packets_unstable_where(monkeypatch, lambda r: 0.6 * start <= r < 0.9 * start or r >= end)
    qt.assert_boundary_matches(BandModel(), bottleneck_spec(30, 300e-6, 10e9))
    rec = qt.report.records()[-1]
    assert rec.passed and rec.numbers["model stable band to (s)"] == end
    assert f"stable band [{start * 1e6:.4g} us, {end * 1e6:.4g} us] matches" in rec.message
    assert "band's end" in rec.message and "onset of instability from below" in rec.message


@pytest.mark.parametrize(
    ("unstable", "words"),
    [  # no instability past the band: its end is not the packets'
        (lambda r, s, e: 0.6 * s <= r < 0.9 * s, r"band's end [\d.]+ us OUTSIDE .*, inf\]"),
        # cycling inside the band too: the packets show no band
        (lambda r, s, e: r >= 0.6 * s, "the packets are unstable at .*, inside the band"),
        # stable up to the band's start: no onset below it
        (lambda r, s, e: r >= e, "no onset of instability below the start"),
    ],
)
def test_a_stable_band_the_packets_do_not_show_fails(monkeypatch, unstable, words):
    start, end = _band_of_band_model()
    _packets_unstable_where(monkeypatch, lambda r: unstable(r, start, end))
    with pytest.raises(AssertionError, match="does NOT match the packets") as exc:
        qt.assert_boundary_matches(BandModel(), bottleneck_spec(30, 300e-6, 10e9))
    assert re.search(words, str(exc.value))
