"""The RTT boundary of a predicate: ladder then bisection (analysis.boundary)."""

import math

import numpy as np
import pytest

from qcnmodel.analysis.boundary import first_unstable_rtt, trajectory_critical_rtt


@pytest.mark.parametrize("edge", [3.7e-6, 370e-6, 0.0123])
def test_finds_the_turn_within_the_tolerance(edge):
    calls = []

    def unstable(r):
        calls.append(r)
        return r >= edge

    got = first_unstable_rtt(unstable, 1e-6, 0.1, rel_tol=0.005)
    assert edge / 1.005 <= got <= edge * 1.005
    # a ladder of 1.5 from 1 us, then about log(1.5)/log(1.005) / ln 2 bisection steps
    assert len(calls) < 60


def test_ends_of_the_interval():
    assert math.isinf(first_unstable_rtt(lambda r: False, 1e-6, 1e-3))
    assert math.isnan(first_unstable_rtt(lambda r: True, 1e-6, 1e-3))
    # the last ladder rung is rtt_max itself
    assert first_unstable_rtt(lambda r: r >= 1e-3, 1e-6, 1e-3) == pytest.approx(1e-3, rel=0.006)


def test_an_unstable_rung_alone_is_passed_over():
    # a coin that came up "unstable" at one RTT below the turn (the ladder from 1 us with
    # ratio 1.5 has a rung at 1.5**13 us = 194.6 us, the next at 291.9 us)
    def unstable(r):
        return r >= 500e-6 or abs(r - 1.5**13 * 1e-6) < 1e-12

    assert first_unstable_rtt(unstable, 1e-6, 0.1) == pytest.approx(500e-6, rel=0.006)
    # without confirmation the ladder stops at the lone rung and bisects below it
    assert first_unstable_rtt(unstable, 1e-6, 0.1, confirm=0) == pytest.approx(194.6e-6, rel=0.006)
    # a lone unstable first point is not "unstable throughout"
    assert first_unstable_rtt(lambda r: r == 1e-6 or r >= 1e-4, 1e-6, 0.1) == pytest.approx(
        1e-4, rel=0.006
    )


def test_a_confirmed_turn_is_where_the_ladder_stops():
    calls = []

    def unstable(r):
        calls.append(r)
        return r >= 370e-6

    got = first_unstable_rtt(unstable, 1e-6, 0.1)
    assert 370e-6 / 1.005 <= got <= 370e-6 * 1.005
    assert len(calls) == len(set(calls))  # every RTT asked once
    # two confirming rungs need two unstable rungs after the first
    assert first_unstable_rtt(unstable, 1e-6, 0.1, confirm=2) == pytest.approx(got)


@pytest.mark.parametrize("confirm", [-1, 1.5, True, "1"])
def test_bad_confirm_names_the_field(confirm):
    with pytest.raises(ValueError, match="confirm"):
        first_unstable_rtt(lambda r: False, 1e-6, 1e-3, confirm=confirm)


@pytest.mark.parametrize("lo,hi", [(0.0, 1e-3), (1e-3, 1e-4), (1e-6, math.inf), (-1.0, 1.0)])
def test_bad_interval_names_the_fields(lo, hi):
    with pytest.raises(ValueError, match="rtt_min, rtt_max"):
        first_unstable_rtt(lambda r: False, lo, hi)


class _Toy:
    """A model judged by its trajectories whose verdict turns at 250 us."""

    boundary_method = "trajectories"

    def __init__(self, rtt=1e-4):
        self.rtt = rtt

    def replace(self, rtt):
        return _Toy(rtt)

    def trajectory_unstable(self):
        return self.rtt > 250e-6


def test_trajectory_critical_rtt_and_the_one_home():
    from qcnmodel.analysis.margins import critical_rtt

    # the odds are counted at RTTs spaced by rel_tol across the ladder's bracket, and their
    # crossing of one half lies between the last stable and the first unstable of them
    got = trajectory_critical_rtt(_Toy(), rel_tol=0.005)
    assert got == pytest.approx(250e-6, rel=0.006)
    assert 250e-6 / 1.15 <= trajectory_critical_rtt(_Toy()) <= 250e-6 * 1.15  # default 15 %
    assert critical_rtt(_Toy()) == trajectory_critical_rtt(_Toy())  # the one home


class _Coin:
    """A stochastic toy: at RTT r, the first round(9 r / 1 ms) of its 9 runs oscillate."""

    def __init__(self, rtt=1e-4):
        self.rtt = rtt

    def replace(self, rtt):
        return _Coin(rtt)

    def trajectory_verdicts(self, seeds=None):
        k = min(9, round(9 * self.rtt / 1e-3))
        return ("oscillating",) * k + ("stable",) * (9 - k - 1) + ("underflow",) * (k < 9)


def test_unstable_fraction_counts_the_runs():
    from qcnmodel.analysis.boundary import unstable_fraction

    da = unstable_fraction(_Coin(), ["100us", 500e-6, 1e-3], seeds=9)
    assert da.dims == ("rtt",) and da.attrs["seeds"] == 9
    assert da["rtt"].values.tolist() == pytest.approx([1e-4, 5e-4, 1e-3])
    assert da["oscillating"].values.tolist() == [1, 4, 9]
    assert da["underflow"].values.tolist() == [1, 1, 0]
    assert da.values.tolist() == pytest.approx([2 / 9, 5 / 9, 1.0])


@pytest.mark.parametrize(
    "rtts", [[], [-1e-6], [float("nan")], ["5 parsecs"], [math.inf], [[1e-4, 2e-4]], [None]]
)
def test_unstable_fraction_refuses_bad_rtts(rtts):
    from qcnmodel.analysis.boundary import unstable_fraction

    with pytest.raises(ValueError, match="rtts"):
        unstable_fraction(_Coin(), rtts, seeds=3)


def test_unstable_fraction_needs_stochastic_trajectories():
    import qcnmodel as qm

    with pytest.raises(TypeError, match="trajectory_verdicts"):
        qm.unstable_fraction(_Toy(), [1e-4])
    with pytest.raises(TypeError, match="trajectory_verdicts"):
        qm.unstable_fraction(qm.QCNFluidModel(fidelity="paper"), [1e-4])
    with pytest.raises(ValueError, match="seeds"):
        qm.unstable_fraction(qm.QCNFluidModel(), [1e-4], seeds=0)


def test_unstable_fraction_refuses_more_rtts_than_a_map_holds(monkeypatch):
    import qcnmodel as qm

    monkeypatch.setitem(qm.config.defaults, "analysis.map_max_points", 3)
    with pytest.raises(ValueError, match=r"rtts: .*at most 3 RTTs"):
        qm.unstable_fraction(_Coin(), [1e-4] * 4, seeds=9)
    assert qm.unstable_fraction(_Coin(), [1e-4] * 3, seeds=9).size == 3


def test_the_verdict_is_the_majority_of_the_fraction():
    """The model's verdict (runs until the majority is decided) equals the majority of all
    its runs, at a stable point and at an oscillating one (one flow at 5 Gb/s turns near
    345 us)."""
    import qcnmodel as qm

    m = qm.QCNFluidModel(n_flows=1, capacity="5Gbps")
    da = qm.unstable_fraction(m, [100e-6, 1e-3], seeds=5)
    assert da.values[0] < 0.5 < da.values[1]
    for r, frac in zip(da["rtt"].values, da.values):
        assert m.replace(rtt=float(r)).trajectory_unstable(seeds=5) == (frac > 0.5)


def test_plot_unstable_fraction(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from qcnmodel.analysis.boundary import unstable_fraction
    from qcnmodel.analysis.plot import plot_unstable_fraction

    fig = plot_unstable_fraction(unstable_fraction(_Coin(), [1e-4, 1e-3], seeds=9), label="toy")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_legend().get_texts()[0].get_text() == "toy"
    fig.savefig(tmp_path / "odds.png")


def test_odds_crossing_interpolates_in_log_rtt():
    from qcnmodel.analysis.boundary import odds_crossing

    # 0.4 at 200 us, 0.8 at 400 us: one half a quarter of the way in log RTT (hand-computed)
    got = odds_crossing([0.2, 0.4, 0.8], [100e-6, 200e-6, 400e-6], full=True)
    assert got == pytest.approx((200e-6 * 2**0.25, 200e-6, 400e-6), rel=1e-12)
    # the order the RTTs come in does not matter
    assert odds_crossing([0.8, 0.2, 0.4], [400e-6, 100e-6, 200e-6]) == pytest.approx(got[0])


def test_odds_crossing_fits_non_decreasing_odds():
    from qcnmodel.analysis.boundary import odds_crossing

    # 0.6 at the first RTT is a throw of the coin: pooled with 0.2 and 0.4 into 0.4 (the
    # isotonic fit by hand), so one half lies between 3 and 4, a fifth of the way
    assert odds_crossing([0.6, 0.2, 0.4, 0.9], [1.0, 2.0, 3.0, 4.0]) == pytest.approx(
        3.0 * (4.0 / 3.0) ** 0.2, rel=1e-12
    )
    # a majority verdict at each RTT would have called the first RTT unstable
    assert odds_crossing([0.6, 0.0], [1.0, 2.0], full=True) == (math.inf, 2.0, math.inf)


def test_odds_crossing_at_the_ends_and_on_a_dataarray():
    import xarray as xr

    from qcnmodel.analysis.boundary import odds_crossing

    assert odds_crossing([0.1, 0.5], [1.0, 2.0], full=True) == (math.inf, 2.0, math.inf)
    assert odds_crossing([0.7, 1.0], [1.0, 2.0], full=True) == (0.0, 0.0, 1.0)
    assert odds_crossing([0.5, 1.0], [1.0, 2.0]) == 1.0  # exactly one half is not a majority
    # a deterministic model's odds are 0 or 1: the geometric mid of its bracket
    assert odds_crossing([0, 0, 1], [1.0, 2.0, 8.0]) == pytest.approx(4.0, rel=1e-12)
    da = xr.DataArray(np.array([0.0, 1.0]), dims=("rtt",), coords={"rtt": [1e-4, 4e-4]})
    assert odds_crossing(da) == pytest.approx(2e-4, rel=1e-12)


@pytest.mark.parametrize("odds,rtts,msg", [
    ([0.1, 0.9], [1.0], "as many odds as RTTs"),
    ([], [], "as many odds as RTTs"),
    ([0.1, 1.2], [1.0, 2.0], "odds: need fractions in"),
    ([0.1, float("nan")], [1.0, 2.0], "odds: need fractions in"),
    ([0.1, 0.9], [1.0, 1.0], "rtts: need distinct"),
    ([0.1, 0.9], [0.0, 1.0], "rtts: need distinct"),
    ([0.1, 0.9], None, "rtts: needed"),
])  # fmt: skip
def test_odds_crossing_refuses_bad_input(odds, rtts, msg):
    from qcnmodel.analysis.boundary import odds_crossing

    with pytest.raises(ValueError, match=msg):
        odds_crossing(odds, rtts)


def test_odds_crossing_takes_unit_strings_and_refuses_other_shapes():
    from qcnmodel.analysis.boundary import odds_crossing

    assert odds_crossing([0.0, 1.0], ["100us", "400 us"]) == pytest.approx(200e-6, rel=1e-12)
    with pytest.raises(ValueError, match="1-D"):
        odds_crossing([[0.0, 1.0]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="rtts"):
        odds_crossing([0.0, 1.0], ["100us", "fast"])
    with pytest.raises(ValueError, match="odds: need fractions"):
        odds_crossing(["a", "b"], [1.0, 2.0])


class _Odds:
    """A stochastic toy with a gradual boundary: of ``runs`` runs at RTT r, round(runs p)
    are unstable, p = 1 / (1 + (300 us / r)^4) (one half at 300 us); ``outlier`` RTTs read
    every run unstable (a coin that came up the wrong way)."""

    boundary_method = "trajectories"
    asked: list = []

    def __init__(self, rtt=1e-4, outlier=(), low=False):
        self.rtt, self.outlier, self.low = rtt, outlier, low

    def replace(self, rtt):
        return _Odds(rtt, self.outlier, self.low)

    def trajectory_odds(self, runs, unanimous=5):
        _Odds.asked.append((self.rtt, runs))
        if self.low and self.rtt < 60e-6 or any(abs(self.rtt - o) < 1e-12 for o in self.outlier):
            return runs, runs
        p = 1.0 / (1.0 + (300e-6 / self.rtt) ** 4)
        return round(runs * p), runs


def test_the_search_finds_where_gradual_odds_pass_one_half():
    _Odds.asked = []
    got = trajectory_critical_rtt(_Odds(), start=100e-6)
    # the odds counted over 27 runs across the bracket, interpolated in log RTT: within the
    # rounding of the counts (one run in 27 moves p by 0.037, about 4 % in RTT here)
    assert got == pytest.approx(300e-6, rel=0.05)
    assert {n for _, n in _Odds.asked} == {9, 27}  # the ladder's runs, then the bracket's
    assert len(_Odds.asked) < 20


def test_a_coin_below_the_turn_does_not_end_the_search():
    # the ladder from 100 us has a rung at 150 us; all its runs read unstable there, the next
    # rung (225 us) does not: a coin, passed over, and the isotonic fit pools it
    got = trajectory_critical_rtt(_Odds(outlier=(150e-6,)), start=100e-6)
    assert got == pytest.approx(300e-6, rel=0.1)


def test_unstable_at_the_interval_start_has_no_critical_rtt():
    # many flows can cycle at any RTT (timers in step): unstable from the start -> nan
    assert math.isnan(trajectory_critical_rtt(_Odds(low=True), 20e-6, 0.1, start=300e-6))
    assert math.isinf(trajectory_critical_rtt(_Odds(), 20e-6, 100e-6))


def test_odds_crossing_weights_the_counts():
    from qcnmodel.analysis.boundary import odds_crossing

    # a single run's verdict (weight 1) against 27 runs' odds: the fit pools towards the 27
    rtts, odds = [100e-6, 200e-6, 300e-6], [0.2, 1.0, 0.4]
    assert odds_crossing(odds, rtts) == pytest.approx(
        odds_crossing(odds, rtts, weights=[1, 1, 1]))  # fmt: skip
    heavy = odds_crossing(odds, rtts, weights=[27, 1, 27])
    assert math.isinf(heavy)  # pooled 200-300 us: (1 + 0.4 x 27) / 28 = 0.42 < 1/2
    with pytest.raises(ValueError, match="weights"):
        odds_crossing(odds, rtts, weights=[1, 0, 1])


@pytest.mark.parametrize("seeds", [0, (9,), (9, 0), "9", 1.5, True, (9, 27, 3)])
def test_bad_seeds_name_the_field(seeds):
    with pytest.raises(ValueError, match="seeds"):
        trajectory_critical_rtt(_Odds(), seeds=seeds)


def test_one_seed_count_serves_both_stages():
    _Odds.asked = []
    trajectory_critical_rtt(_Odds(), start=100e-6, seeds=15)
    assert {n for _, n in _Odds.asked} == {15}
    with pytest.raises(ValueError, match="start"):
        trajectory_critical_rtt(_Odds(), start=-1.0)


class _Stalls(_Odds):
    def replace(self, rtt):
        return _Stalls(rtt)

    def trajectory_odds(self, runs, unanimous=5):
        if self.rtt > 200e-6:
            raise RuntimeError("hybrid QCN model stalled")
        return super().trajectory_odds(runs, unanimous)


def test_a_failing_trajectory_is_an_answer_naming_the_rtt():
    # from 100 us: the lattice point 20 us x 1.15^12 = 107 us, then rungs of three lattice
    # steps, 163 us and 247.5 us, where the toy stalls
    with pytest.raises(ValueError, match=r"trajectories failed at RTT 247.5 us .*stalled"):
        trajectory_critical_rtt(_Stalls(), start=100e-6)


def test_critical_rtts_of_workers_join_this_process_memo(monkeypatch):
    # the check's forked searches are kept here: the report's points table asks again for free
    import qcnmodel as qm
    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.studies.boundaries import trajectory_boundaries

    monkeypatch.setattr(boundary, "_MEMO", {})
    models = [qm.QCNFluidModel(n_flows=n, rtt=100e-6) for n in (2, 5)]
    got = [c for c, _ in trajectory_boundaries(models, jobs=2)]
    assert len(boundary._MEMO) == 2

    def no_search(*a, **k):
        raise AssertionError("searched again")

    monkeypatch.setattr(boundary, "_search", no_search)
    assert [critical_rtt(m.replace(rtt=300e-6)) for m in models] == got


def test_the_search_counts_its_runs_on_stderr_when_asked(capsys, monkeypatch):
    from qcnmodel import config
    from qcnmodel.cli.common import trajectory_progress

    trajectory_critical_rtt(_Odds(), start=100e-6)
    assert capsys.readouterr().err == ""  # off by default
    with trajectory_progress(True):
        assert config.defaults["analysis.trajectory_progress"] is True
        got = trajectory_critical_rtt(_Odds(), start=100e-6)
    assert config.defaults["analysis.trajectory_progress"] is False  # restored
    assert "critical RTT from the model's runs" in capsys.readouterr().err
    assert got == trajectory_critical_rtt(_Odds(), start=100e-6)  # the counter changes nothing


class _Band:
    """Many flows at 10 Gb/s: runs cycle below 80 us (timers in step) and above 400 us, and
    are stable between (a picklable toy for the forked workers)."""

    boundary_method = "trajectories"
    n_flows = 50

    def __init__(self, rtt=1e-4):
        self.rtt = rtt

    def replace(self, rtt):
        return _Band(rtt)

    def trajectory_unstable(self):
        return self.rtt < 80e-6 or self.rtt > 400e-6


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_flow_count_has_one_boundary_whatever_rtt_asks(jobs, monkeypatch):
    """The critical RTT and the band are the model's, searched over its own interval: a
    check over any range, a map row and a point read the same ones (a search from the range's
    start once gave a point's verdict that depended on the range)."""
    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.boundary import trajectory_boundary
    from qcnmodel.studies.boundaries import trajectory_boundaries

    monkeypatch.setattr(boundary, "_MEMO", {})
    # from the model's own start (20 us) the runs cycle at once: no critical RTT, a band
    ((crit, (start, end)),) = trajectory_boundaries([_Band()], jobs=jobs)
    assert math.isnan(crit)
    assert 80e-6 <= start <= 80e-6 * 1.05  # the band grid's 5 % spacing
    assert 400e-6 / 1.15 <= end <= 400e-6 * 1.15  # the search's default 15 % spacing
    for rtt in (10e-6, 150e-6, 300e-6, 600e-6):  # the point's own RTT changes nothing
        monkeypatch.setattr(boundary, "_MEMO", {})
        crit_here, band_here = trajectory_boundary(_Band(rtt))
        assert math.isnan(crit_here) and band_here == (start, end)
    # a model with a critical RTT: the same from any RTT, and no band
    ((crit, band),) = trajectory_boundaries([_Toy()], jobs=jobs)
    assert 250e-6 / 1.15 <= crit <= 250e-6 * 1.15 and band is None
    got = trajectory_boundaries([_Toy(400e-6), _Toy(30e-6)], jobs=jobs)
    assert [c for c, _ in got] == [crit, crit]
    assert trajectory_boundary(_Toy(400e-6)) == (crit, None)


def test_a_point_in_astable_band_above_a_low_rtt_cycle(monkeypatch):
    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.boundary import critical_rtt_above

    monkeypatch.setattr(boundary, "_MEMO", {})
    assert math.isnan(trajectory_critical_rtt(_Band(300e-6)))  # from 20 us: none
    got = critical_rtt_above(_Band(300e-6))
    assert 400e-6 / 1.15 <= got <= 400e-6 * 1.15
    assert critical_rtt_above(_Band(25e-6)) is None  # within the rungs the search ran
    assert critical_rtt_above(_Band(50e-6)) is None  # unstable at its own RTT
    assert critical_rtt_above(_Band(600e-6)) is None  # past the band


def test_a_map_row_without_a_critical_rtt_finds_itsstable_band(monkeypatch):
    # the row's RTTs are climbed from 1.5 x the search's start on a ladder of 1.25, the band's
    # start bisected on the grid: the first grid RTT past 80 us; its end searched from there

    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.stability import stable_band

    monkeypatch.setattr(boundary, "_MEMO", {})
    rtts = np.geomspace(10e-6, 1e-3, 41)
    lo, hi = stable_band(_Band(), rtts)
    assert lo == rtts[rtts >= 80e-6][0]
    assert 400e-6 / 1.15 <= hi <= 400e-6 * 1.15

    class _Always(_Band):
        def replace(self, rtt):
            return _Always(rtt)

        def trajectory_unstable(self):
            return True

    assert stable_band(_Always(), rtts) is None  # cycles everywhere: no band
    assert stable_band(_Band(), rtts[rtts < 30e-6]) is None  # no RTT past the searched rungs


class _CoinBelowBand(_Band):
    """Cycles at every RTT but a stable coin at 38-42 us and a band from 200 to 400 us."""

    def replace(self, rtt):
        return _CoinBelowBand(rtt)

    def trajectory_unstable(self):
        return not (38e-6 <= self.rtt <= 42e-6 or 200e-6 <= self.rtt <= 400e-6)


def test_a_stable_coin_narrower_than_a_rung_is_no_band(monkeypatch):
    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.boundary import stable_band

    monkeypatch.setattr(boundary, "_MEMO", {})
    start, end = stable_band(_CoinBelowBand())
    assert 200e-6 <= start <= 200e-6 * 1.05 and 400e-6 / 1.15 <= end <= 400e-6 * 1.15


@pytest.mark.parametrize("jobs", [1, 2])
def test_stable_bands_on_workers_are_the_bands_searched_here(jobs, monkeypatch):
    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.boundary import stable_band
    from qcnmodel.studies.boundaries import trajectory_boundaries

    monkeypatch.setattr(boundary, "_MEMO", {})
    here = stable_band(_Band())
    monkeypatch.setattr(boundary, "_MEMO", {})
    got = [b for _, b in trajectory_boundaries([_Band(), _Band()], jobs=jobs)]
    assert got == [here, here]
    start, end = here  # the toy is stable from 80 us to 400 us
    assert 80e-6 <= start <= 80e-6 * 1.05 and 400e-6 / 1.15 <= end <= 400e-6 * 1.15


def test_the_search_start_takes_a_unit_string():
    import pytest

    from qcnmodel.analysis.boundary import trajectory_critical_rtt

    class Model:  # never run: the start is checked before the search
        rtt, n_flows = 1e-4, 2

        def replace(self, **kw):
            raise AssertionError("the search ran")

        trajectory_unstable = trajectory_odds = replace

    with pytest.raises(ValueError, match="start: need an RTT in"):
        trajectory_critical_rtt(Model(), start="-5ms")


class _LateCalm(_Band):
    """Many flows whose runs cycle up to 40 ms and read stable above (a run of 0.6 s, 0.3 s
    analysed, holds under 8 RTTs there: its start-up transient, not the loop)."""

    def replace(self, rtt):
        return _LateCalm(rtt)

    def trajectory_unstable(self):
        return self.rtt < 40e-3


def test_the_search_ends_where_a_run_holds_ten_rtts(monkeypatch):
    """The trajectory search's interval ends where the analysed part of a verdict run
    (models.verdict_run: duration - settle) holds WINDOW_RTTS RTTs, and follows the run's
    length; a stable reading past it is no band (it once gave "stable from 61.5 ms to inf")."""
    from qcnmodel import config
    from qcnmodel.analysis import boundary
    from qcnmodel.analysis.boundary import WINDOW_RTTS, search_interval, stable_band

    monkeypatch.setattr(boundary, "_MEMO", {})
    run = config.defaults["models.verdict_run"]
    lo, hi = search_interval(_LateCalm())
    assert hi * WINDOW_RTTS == pytest.approx(run["duration"] - run["settle"], rel=1e-12)
    assert hi < 40e-3
    assert stable_band(_LateCalm()) is None
    assert math.isnan(trajectory_critical_rtt(_LateCalm()))
    monkeypatch.setitem(config.defaults, "models.verdict_run",
                        {**run, "duration": 2.3, "settle": 0.3})  # fmt: skip
    assert search_interval(_LateCalm())[1] == pytest.approx(0.1)  # the configured end


def test_the_band_grid_does_not_move_with_the_search_end(monkeypatch):
    """The RTTs a band's start is placed on are 1.5 x the search's start times 1.05^k: a
    longer verdict run (a later search end) only adds points, so a band found below the old
    end is found at the same RTTs. (Spread evenly between the ends, every point moved when
    the end did: the band of 802.1Qau at N = 30 went when the end moved to 30 ms.)"""
    from qcnmodel import config
    from qcnmodel.analysis.boundary import band_grid, search_interval

    run = config.defaults["models.verdict_run"]
    lo, hi = search_interval(_LateCalm())
    short = band_grid(_LateCalm())
    assert short[0] == pytest.approx(1.5 * lo, rel=1e-15)
    np.testing.assert_allclose(short[1:] / short[:-1], 1.05, rtol=1e-12)
    assert short[-1] <= hi < 1.05 * short[-1]
    for duration in (0.9, 2.3, 0.6 + 0.0123):
        monkeypatch.setitem(config.defaults, "models.verdict_run",
                            {**run, "duration": duration})  # fmt: skip
        grid = band_grid(_LateCalm())
        n = min(len(grid), len(short))
        np.testing.assert_array_equal(grid[:n], short[:n])


def _draw(seed: int, rtt: float) -> float:
    """A uniform number fixed by (seed, RTT): each RTT's runs are a fresh draw."""
    import hashlib

    h = hashlib.blake2b(f"{seed}:{rtt:.15e}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64


class _Rise:
    """A stochastic toy whose odds of an unstable run rise gradually, from 0 at 100 us to 1
    at 400 us (the packet-fidelity model's do over tens of us); it records the RTTs run."""

    ran: list = []

    def __init__(self, rtt=1e-4):
        self.rtt = rtt

    def replace(self, rtt):
        return _Rise(rtt)

    def trajectory_unstable(self):
        return 2 * self.trajectory_odds(9)[0] > 9

    def trajectory_odds(self, runs=9, early=None):
        _Rise.ran.append(self.rtt)
        p = min(max((self.rtt - 100e-6) / 300e-6, 0.0), 1.0)
        return sum(_draw(s, self.rtt) < p for s in range(runs)), runs


def test_the_crossing_does_not_depend_on_the_start(monkeypatch):
    """Every RTT a search runs lies on the lattice rtt_min * 1.15^k fixed by its interval, so
    the odds it counts near the crossing are the same whichever start led there. (With RTTs
    placed from the start, this toy's crossing spread over 225-267 us for starts 60-400 us;
    the packet-fidelity model's by +-10 %.)"""
    from qcnmodel.analysis import boundary

    got = []
    for start in (60e-6, 90e-6, 120e-6, 150e-6, 200e-6, 250e-6, 300e-6, 400e-6):
        monkeypatch.setattr(boundary, "_MEMO", {})
        _Rise.ran = []
        got.append(trajectory_critical_rtt(_Rise(), 20e-6, 30e-3, rel_tol=0.15, start=start))
        k = np.log(np.array(_Rise.ran) / 20e-6) / np.log(1.15)
        np.testing.assert_allclose(k, np.round(k), atol=1e-9)  # on the lattice
    assert 200e-6 < got[0] < 300e-6  # the odds pass one half at 250 us
    np.testing.assert_array_equal(got, got[0])
