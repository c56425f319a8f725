"""Fair allocations computed from the simulator's topologies (issue 7, item 3).

Every expected number here is a deck's (scenarios.md S6, S7, S8 #3, S9, S12) or simple
arithmetic written out in the test; the routing matrices come from the scenarios as built.
"""

from __future__ import annotations

import numpy as np
import pytest

from qcnmodel.sim.fair import (
    fair_shares,
    fair_summary,
    fairness_error,
    max_min_fair,
    routing_matrix,
)
from qcnmodel.sim.scenarios import SCENARIOS
from qcnmodel.sim.scenarios.catalogue import CATALOGUE

G = 1e9
DECK_ROUNDING = 0.005 * G  # the decks quote rates to 0.01 Gb/s


def build(name, **over):
    sc = SCENARIOS.get(name) or CATALOGUE[name]
    return sc.build(over)


def test_parking_lot_max_min_and_proportional():
    spec = build("parking-lot")
    hot = ["n1->n9", "n2->n9", "n3->n9", "n4->n9"]
    cold = ["n5->n7", "n6->n8"]
    mm = fair_shares(spec, "max-min")
    assert set(mm) == set(hot + cold)
    for f in hot + cold:  # deck: max-min 2.0 Gb/s for every flow
        assert mm[f] == pytest.approx(2.0 * G, abs=DECK_ROUNDING)
    pf = fair_shares(spec, "proportional")
    for f in hot:  # deck: proportional 1.67 Gb/s per hot flow
        assert pf[f] == pytest.approx(1.67 * G, abs=DECK_ROUNDING)
    for f in cold:  # deck: 3.33 Gb/s per cold flow
        assert pf[f] == pytest.approx(3.33 * G, abs=DECK_ROUNDING)


def test_ig_hotspot_as_built():
    fs = fair_shares(build("ig-hotspot"))
    for c in ("n2", "n3", "n4", "n5"):  # deck: 2.5 Gb/s per culprit
        assert fs[f"{c}->n6"] == pytest.approx(2.5 * G, abs=DECK_ROUNDING)
    assert fs["n1->n7"] == pytest.approx(5.0 * G, abs=DECK_ROUNDING)  # deck: victim 5 Gb/s


def test_ig_hotspot_needs_the_fast_core():
    # With 10 Gb/s core links the culprits and the victim share e6's uplink (15 Gb/s offered
    # at the fair point), so the deck's allocation is not reachable: the victim loses.
    fs = fair_shares(build("ig-hotspot", core_rate="10Gbps"))
    assert fs["n1->n7"] < 5.0 * G - DECK_ROUNDING


def test_dual_hotspot_light_heavy():
    fs = fair_shares(build("dual-hotspot-light-heavy"))
    for s in ("n1", "n4", "n5", "n7"):  # deck: 2.5 Gb/s for all flows to node 8
        assert fs[f"{s}->n8"] == pytest.approx(2.5 * G, abs=DECK_ROUNDING)
    assert fs["n2->n4"] == pytest.approx(7.5 * G, abs=DECK_ROUNDING)  # deck: 7.5 to node 4


def test_dual_hotspot_heavy_light():
    fs = fair_shares(build("dual-hotspot-heavy-light"))
    for f in ("n1->n8", "n2->n4", "n3->n5", "n6->n7"):  # deck: 2.5 for flows to switch 2
        assert fs[f] == pytest.approx(2.5 * G, abs=DECK_ROUNDING)
    assert fs["n4->n8"] == pytest.approx(7.5 * G, abs=DECK_ROUNDING)  # deck: 7.5 for 4 -> 8


def test_stanford_baseline_3():
    fs = fair_shares(build("stanford-baseline-3"))
    for s in ("n1", "n4", "n8", "n9"):  # deck: 0.5 Gb/s per culprit
        assert fs[f"{s}->n7"] == pytest.approx(0.5 * G, abs=DECK_ROUNDING)
    for f in ("n2->n9", "n5->n3", "n10->n6"):  # deck: 7 Gb/s per victim
        assert fs[f] == pytest.approx(7.0 * G, abs=DECK_ROUNDING)


@pytest.mark.parametrize(
    "name, n_cp",
    [("dual-hotspot-light-heavy", 2), ("dual-hotspot-heavy-light", 2),
     ("stanford-baseline-3", 5), ("stanford-baseline-6", 2)],
)  # fmt: skip
def test_congestion_point_counts_match_the_decks(name, n_cp):
    assert len(routing_matrix(build(name)).congested_links()) == n_cp


def test_dual_hotspot_congestion_points_are_the_decks_ports():
    # deck: "port from switch 1 to switch 2" and "port from switch 2 to node 8"
    for name in ("dual-hotspot-light-heavy", "dual-hotspot-heavy-light"):
        assert set(routing_matrix(build(name)).congested_links()) == {"s1->s2", "s2->n8"}


def test_stanford_baseline_3_one_congestion_point_per_switch():
    cps = routing_matrix(build("stanford-baseline-3")).congested_links()
    assert sorted(p.split("->")[0] for p in cps) == ["s1", "s2", "s3", "s4", "s5"]


def test_hotspot_capacity_and_time():
    spec = build("stanford-baseline-3")
    rm = routing_matrix(spec)
    hot = rm.link_names.index("s5->n7")
    assert rm.capacity[hot] == 2e9  # 20% service rate
    assert rm.matrix.shape == (len(rm.link_names), 7)
    # Before the hotspot (default 0.1 .. 0.6 s) the culprits are off (culprits="hotspot"):
    # the victims alone get their 7 Gb/s, the culprits 0.
    before = fair_shares(spec, at=0.05)
    assert before["n1->n7"] == 0.0
    assert before["n2->n9"] == pytest.approx(7 * G)
    during = fair_shares(spec, at=0.2)
    assert during == pytest.approx(fair_shares(spec))
    # Culprits always on, before the hotspot (n7 at 10 Gb/s): the culprits' demand (2 Gb/s)
    # is below every equal share, so they get it; on s1->s2 the victim n2 -> n9 gets the
    # rest, 10 - 2 - 2 = 6 Gb/s.
    always = fair_shares(build("stanford-baseline-3", culprits="always"), at=0.05)
    assert always["n1->n7"] == pytest.approx(2 * G)
    assert always["n2->n9"] == pytest.approx(6 * G)


def test_twenty_stage_sink_flows_share_the_last_chain_link():
    # S = 20: the link s19 -> s20 carries the 19 "position 2" flows to n59, n55 -> n58 and
    # n57 -> n59: 21 flows, so every flow to the sink gets 10/21 Gb/s.
    fs = fair_shares(build("twenty-stage"))
    sink = [f for f in fs if f.endswith("->n59")]
    assert len(sink) == 20
    for f in sink:
        assert fs[f] == pytest.approx(10 / 21 * G)


def test_demand_limits_the_share():
    # bursty-hotspot: h1, h2 on 50% of the time at 10 Gb/s (demand 5), h3, h4 at 10: four
    # flows into one 10 Gb/s port -> 2.5 each, below every demand.
    fs = fair_shares(build("bursty-hotspot"))
    assert all(v == pytest.approx(2.5 * G) for v in fs.values())
    # at 10% load every flow's demand (1 Gb/s, 0.5 for the on/off ones) fits
    fs = fair_shares(build("bursty-hotspot", load=0.1))
    assert fs == pytest.approx({"h1->h5": 0.5 * G, "h2->h5": 0.5 * G, "h3->h5": 1 * G,
                                "h4->h5": 1 * G})  # fmt: skip


def test_fairness_error_and_summary():
    fair = {"a": 2.0, "b": 4.0}
    assert fairness_error({"a": 2.0, "b": 4.0}, fair) == 0.0
    assert fairness_error({"a": 1.0, "b": 4.4}, fair) == pytest.approx(0.5)
    assert fairness_error({"b": 4.0}, fair) == pytest.approx(1.0)  # missing = 0 bit/s
    assert fairness_error({}, {}) is None
    spec = build("parking-lot")
    s = fair_summary(spec, {f: 2e9 for f in fair_shares(spec)})
    assert s["fairness_error"] == pytest.approx(0.0, abs=1e-9)
    assert set(s["fair_share_bps"]) == set(fair_shares(spec))


def test_bad_kind_names_the_field():
    with pytest.raises(ValueError, match="kind"):
        fair_shares(build("parking-lot"), kind="alpha")
    with pytest.raises(TypeError, match="network"):
        routing_matrix("parking-lot")


def test_routing_matrix_rows_are_paths():
    rm = routing_matrix(build("parking-lot"))
    col = rm.flow_names.index("n1->n9")
    crossed = {rm.link_names[i] for i in np.flatnonzero(rm.matrix.toarray()[:, col])}
    assert crossed == {"n1->A", "A->B", "B->C", "C->n9"}


def test_max_min_takes_sparse_and_dense_matrices_alike():
    from scipy import sparse

    rng = np.random.default_rng(7)
    for _ in range(50):
        n_links, n_flows = rng.integers(1, 8), rng.integers(1, 12)
        A = (rng.random((n_links, n_flows)) < 0.4).astype(float)
        A[rng.integers(n_links, size=n_flows), np.arange(n_flows)] = 1.0  # every flow routed
        c = rng.uniform(1, 10, n_links)
        d = np.where(rng.random(n_flows) < 0.5, rng.uniform(0.1, 5, n_flows), np.inf)
        x = max_min_fair(A, c, d)
        assert np.array_equal(max_min_fair(sparse.csr_array(A), c, d), x)
        assert np.all(A @ x <= c * (1 + 1e-12)) and np.all(x <= d)


def test_large_uniform_scenario_is_cheap():
    # og-hotspot with 100 nodes: 9900 flows; flows to n1 share its 1 Gb/s service rate
    import time

    spec = SCENARIOS["og-hotspot"].build({"n_nodes": 100})
    t = time.perf_counter()
    fs = fair_shares(spec)
    assert time.perf_counter() - t < 10
    assert len(fs) == 9900
    assert fs["n2->n1"] == pytest.approx(1e9 / 99)
    assert fs["n2->n3"] == pytest.approx(8.5e9 / 99)  # its demand: 85% spread over 99


def test_simulate_summary_reports_fair_shares_and_error():
    from qcnmodel.sim import simulate

    s = simulate("parking-lot", duration="3ms").summary()
    assert s["fair_share_bps"] == pytest.approx({f: 2e9 for f in s["flow_throughput_bps"]})
    measured = s["flow_throughput_bps"]
    expect = max(abs(measured[f] - 2e9) / 2e9 for f in measured)
    assert s["fairness_error"] == pytest.approx(expect)
    s = simulate("dual-hotspot-heavy-light", duration="3ms").summary()
    assert s["fair_share_bps"]["n4->n8"] == pytest.approx(7.5e9)  # deck: 7.5 Gb/s
