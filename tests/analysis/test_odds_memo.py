"""A trajectory count asked twice in one process is run once (qcnmodel.analysis.odds
.trajectory_odds), keyed by the model at its RTT, the count and the runs' settings."""

import dataclasses

import pytest

from qcnmodel import config
from qcnmodel.analysis import odds
from qcnmodel.analysis.boundary import majority_stable


@dataclasses.dataclass(frozen=True)
class _Toy:
    """Stable below 100 us; every count it runs is recorded."""

    rtt: float = 50e-6
    n_flows: int = 10
    ran = []  # noqa: RUF012 (shared on purpose: the counts of every instance)

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)

    def trajectory_odds(self, seeds=None, unanimous=5):
        _Toy.ran.append((self.rtt, self.n_flows, seeds, unanimous))
        n = 9 if seeds is None else seeds
        return (n if self.rtt > 100e-6 else 0), n

    def trajectory_unstable(self):
        return self.rtt > 100e-6


class _Unhashable(_Toy):
    __hash__ = None


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(odds, "_ODDS", {}, raising=False)
    _Toy.ran = []


def test_the_same_count_of_the_same_model_runs_once():
    # a stable band's climb and the search from the band's start both take the first count
    # at that start (majority_stable): the second is a lookup
    assert majority_stable(_Toy())
    assert majority_stable(_Toy())
    assert _Toy.ran == [(50e-6, 10, None, 5)]


def test_another_point_count_or_run_setting_is_counted_again(monkeypatch):
    odds.trajectory_odds(_Toy())
    odds.trajectory_odds(_Toy(rtt=60e-6))
    odds.trajectory_odds(_Toy(n_flows=20))
    odds.trajectory_odds(_Toy(), 27, None)
    assert len(_Toy.ran) == 4
    run = {**config.defaults["models.verdict_run"], "duration": 1.0}
    monkeypatch.setitem(config.defaults, "models.verdict_run", run)
    assert not majority_stable(_Toy(rtt=200e-6))
    odds.trajectory_odds(_Toy())
    assert len(_Toy.ran) == 6


def test_a_model_that_cannot_be_hashed_is_counted_every_time():
    assert odds.trajectory_odds(_Unhashable()) == (0, 9)
    assert odds.trajectory_odds(_Unhashable()) == (0, 9)
    assert len(_Toy.ran) == 2 and not odds._ODDS


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(odds, "_ODDS_SIZE", 3)
    for k in range(5):
        odds.trajectory_odds(_Toy(rtt=(k + 1) * 1e-5))
    assert len(odds._ODDS) == 3
    odds.trajectory_odds(_Toy(rtt=1e-5))  # the oldest was dropped: counted again
    assert len(_Toy.ran) == 6
