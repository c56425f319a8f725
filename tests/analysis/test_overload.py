"""The largest flow count a loop model holds (:mod:`qcnmodel.analysis.overload`)."""

import pytest

from qcnmodel.analysis.overload import has_operating_point, held_flows


class _Toy:
    """A model with an operating point up to ``limit`` flows (a protocol-free stand-in)."""

    def __init__(self, limit, n_flows=1, calls=None):
        self.limit, self.n_flows = limit, n_flows
        self.calls = [] if calls is None else calls

    def replace(self, n_flows):
        return _Toy(self.limit, n_flows, self.calls)

    def fixed_point(self):
        self.calls.append(self.n_flows)
        if self.n_flows > self.limit:
            raise ValueError("no equilibrium")
        return {}


@pytest.mark.parametrize("limit", [1, 2, 37, 99, 100])
def test_bisection_finds_the_last_flow_count_held(limit):
    toy = _Toy(limit)
    assert held_flows(toy, 100) == limit
    assert len(toy.calls) <= 2 + 7  # both ends, then log2(100) halvings


def test_ends_of_the_search():
    assert held_flows(_Toy(500), 100) == 100  # held through the whole search
    assert held_flows(_Toy(0), 100) == 0  # not even one flow


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10", "abc", None, float("nan")])
def test_the_search_end_is_a_whole_number(bad):
    with pytest.raises(ValueError, match="n_max"):
        held_flows(_Toy(5), bad)


@pytest.mark.parametrize("bad", [0, 2.5, "abc", 101])
def test_the_known_held_count_is_a_whole_number_within_the_search(bad):
    with pytest.raises(ValueError, match="n_min"):
        held_flows(_Toy(5), 100, n_min=bad)


@pytest.mark.parametrize("limit", [40, 41, 77, 99])
def test_a_known_held_count_starts_the_bisection(limit):
    toy = _Toy(limit)
    assert held_flows(toy, 100, n_min=40) == limit
    assert min(toy.calls) > 40  # nothing below the count known to be held is tested
    assert len(toy.calls) <= 1 + 6  # the top end, then log2(60) halvings


def test_qcn_port_held_as_the_packets_hold_it():
    # 802.1Qau defaults, 100 us, a 5 Gb/s port fed by 10 Gb/s sources offering 2 C / N from
    # idle, 3 s packet runs (seed 0): the queue drains to a held level at N = 550 (trend
    # -34 MB over the second half) and climbs at N = 600 (+48 MB); the model must lie between
    from qcnmodel.models.qcn import QCNFluidModel

    model = QCNFluidModel(n_flows=10, capacity=5e9)
    assert has_operating_point(model.replace(n_flows=550))
    assert 550 <= held_flows(model, 1000) < 600
