"""The scenario catalogue of issue 7: definitions against scenarios.md, short runs with the
simulator's invariants, every parameter overridable, and the rtt-sweep definition."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qcnmodel.sim import simulate
from qcnmodel.sim.network import ConstantFlow, compile_network
from qcnmodel.sim.scenarios import SCENARIOS
from qcnmodel.sim.scenarios.catalogue import CATALOGUE
from qcnmodel.studies.named_sweeps import NAMED_SWEEPS, run_named_sweep

NAMES = ("bursty-hotspot", "dual-hotspot-light-heavy", "dual-hotspot-heavy-light",
         "stanford-baseline-2", "stanford-baseline-3", "stanford-baseline-6", "twenty-stage",
         "twenty-stage-teak")  # fmt: skip


def flows(spec):
    return {(g.source, g.dest): g for g in spec.traffic if isinstance(g, ConstantFlow)}


def run(name, duration="3ms", protocol="qcn", **over):
    """Short run of a catalogue scenario, hotspot inside the run unless overridden."""
    sc = CATALOGUE[name]
    over = {"hotspot_start": "1ms", "hotspot_stop": "2ms", **over}
    return simulate(sc.build(over), protocol=protocol, params=sc.preset, duration=duration)


def check_invariants(r):
    c = r.counters
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]
    assert c["frames_in_flight"] == c["frames_in_network"] >= 0
    assert c["frames_delivered"] > 0
    ds = r.dataset
    assert float(ds["queue"].min()) >= 0 and float(ds["queue_max"].min()) >= 0
    cr = ds["cr"].values
    assert (cr >= r.params.min_rate).all() and (cr <= r.params.line_rate).all()


def test_catalogue_names_are_the_issue_list_and_new():
    assert tuple(CATALOGUE) == NAMES
    for name, sc in CATALOGUE.items():  # named as in scenarios.md; registered or new
        assert sc.name == name and SCENARIOS.get(name, sc) is sc
    assert set(NAMED_SWEEPS) == {"rtt-sweep"}


@pytest.mark.parametrize("name", NAMES)
def test_every_catalogue_scenario_runs_with_invariants(name):
    r = run(name)
    check_invariants(r)
    s = r.summary()
    assert set(s["flow_throughput_bps"]) == set(compile_network(CATALOGUE[name].build()).flow_names)
    assert s["hot_port"] is not None


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_is_overridable(name):
    sc = CATALOGUE[name]
    every = {p.name: "inf" if p.default == math.inf else p.default for p in sc.params}
    spec = sc.build(every)  # every key accepted
    assert spec == sc.build()
    with pytest.raises(ValueError, match="bogus: unknown parameter"):
        sc.build({"bogus": 1})
    changed = sc.build({"rtt": "40us", "link_rate": "1Gbps"})
    assert all(ln.delay == pytest.approx(20e-6) for ln in changed.links)
    assert all(ln.rate == 1e9 for ln in changed.links)


def test_pause_runs_are_lossless():
    # twenty-stage-teak has PAUSE on by default (seed 003)
    r = run("twenty-stage-teak", duration="4ms", protocol="none")
    assert r.counters["frames_dropped"] == 0 and r.counters["pause_frames"] > 0
    check_invariants(r)
    assert run("twenty-stage-teak", duration="4ms").counters["frames_dropped"] == 0
    over = {"pause": "true", "switch_memory": "300KB"}
    r = run("stanford-baseline-3", duration="4ms", protocol="none", **over)
    assert r.counters["frames_dropped"] == 0 and r.counters["pause_frames"] > 0
    off = run("stanford-baseline-3", duration="4ms", protocol="none", switch_memory="100KB")
    assert off.counters["frames_dropped"] > 0


def test_bursty_hotspot_matches_s5():
    spec = CATALOGUE["bursty-hotspot"].build()
    f = flows(spec)
    assert set(f) == {(f"h{i}", "h5") for i in (1, 2, 3, 4)}
    assert all(g.rate == 10e9 for g in f.values())  # 100% load
    for h in ("h1", "h2"):  # exponential on/off, Ton = Toff = 20 ms
        assert (f[h, "h5"].on_mean, f[h, "h5"].off_mean) == (20e-3, 20e-3)
    assert f["h3", "h5"].on_mean == 0 == f["h4", "h5"].off_mean
    short = flows(CATALOGUE["bursty-hotspot"].build({"burst_on": "5ms", "burst_off": "5ms"}))
    assert short["h1", "h5"].on_mean == 5e-3


def test_dual_hotspots_match_s6_s7():
    f = flows(CATALOGUE["dual-hotspot-light-heavy"].build())
    assert set(f) == {("n1", "n8"), ("n4", "n8"), ("n5", "n8"), ("n7", "n8"), ("n2", "n4")}
    assert all(g.rate == 9e9 for g in f.values())
    f = flows(CATALOGUE["dual-hotspot-heavy-light"].build())
    assert set(f) == {("n1", "n8"), ("n4", "n8"), ("n2", "n4"), ("n3", "n5"), ("n6", "n7")}
    spec = CATALOGUE["dual-hotspot-heavy-light"].build()
    assert {ln.rate for ln in spec.links} == {10e9}  # all links 10 Gb/s
    assert len(spec.switches) == 2


def test_stanford_baselines_match_s8():
    spec = CATALOGUE["stanford-baseline-3"].build()
    f = flows(spec)
    culprits = {("n1", "n7"), ("n4", "n7"), ("n8", "n7"), ("n9", "n7")}
    victims = {("n2", "n9"), ("n5", "n3"), ("n10", "n6")}
    assert set(f) == culprits | victims
    assert all(f[c].rate == 2e9 for c in culprits) and all(f[v].rate == 7e9 for v in victims)
    assert spec.hotspots[0].node == "n7" and spec.hotspots[0].rate == 2e9  # 20% service
    spec2 = CATALOGUE["stanford-baseline-2"].build()
    rates = {g.source: g.rate for g in spec2.traffic}
    assert rates == {**{f"n{i}": 2.5e9 for i in range(1, 7)},
                     **{f"n{i}": 4e9 for i in range(7, 11)}}  # fmt: skip
    assert spec2.hotspots[0].node == "n7" and spec2.hotspots[0].rate == 0.5e9  # 5%
    spec6 = CATALOGUE["stanford-baseline-6"].build()
    assert spec6.hotspots[0].rate == 0.5e9  # the deck's 0.5 Gb/s congested queue
    # the "80 ms hotspot" variant
    hs = CATALOGUE["stanford-baseline-6"].build({"hotspot_stop": "180ms"}).hotspots[0]
    assert hs.stop - hs.start == pytest.approx(80e-3)


def test_stanford_baseline_2_saturation_tree_has_five_ports():
    # deck: "if the saturation tree spreads => 5 congestion points": the ports carrying
    # traffic to n7 that are not adapters
    net = compile_network(CATALOGUE["stanford-baseline-2"].build())
    to7 = set()
    for f in range(net.n_flows):
        if net.flow_names[f].endswith("->n7"):
            to7 |= {net.port_name(p) for p in net.path_ports(f)[1:]}
    assert len(to7) == 5


@pytest.mark.parametrize("name, S", [("twenty-stage", 20), ("twenty-stage-teak", 18)])
def test_twenty_stage_numbering_matches_s11(name, S):
    spec = CATALOGUE[name].build()
    f = flows(spec)
    expect = set()
    for i in range(S - 1):  # scenarios.md S11, verbatim
        expect |= {(f"n{3 * i + 1}", f"n{3 * (i + 1) + 1}"),
                   (f"n{3 * i + 2}", f"n{3 * (S - 1) + 2}"),
                   (f"n{3 * i + 3}", f"n{3 * (i + 1) + 2}")}  # fmt: skip
    assert set(f) == expect
    assert len(spec.switches) == S and len(spec.hosts) == 3 * S
    sink = f"n{3 * (S - 1) + 2}"
    assert sum(d == sink for _, d in f) == S  # "receives traffic from S sources"
    senders = {s for s, _ in f}
    assert f"n{3 * (S - 1) + 2}" not in senders and f"n{3 * (S - 1) + 3}" not in senders
    net = compile_network(spec)
    for k in range(S):  # node n(3k+j) hangs off switch k+1
        for j in (1, 2, 3):
            p = net.host_port[net.node_names.index(f"n{3 * k + j}")]
            assert net.node_names[net.port_dst[p]] == f"s{k + 1}"


def test_twenty_stage_variants():
    ibm = CATALOGUE["twenty-stage"].build()
    assert ibm.buffers.switch_memory == 150e3 and not ibm.pause.enabled
    assert all(g.on_mean == 0 for g in ibm.traffic)
    teak = CATALOGUE["twenty-stage-teak"].build()
    assert teak.pause.enabled and teak.buffers.switch_memory == 200e3
    bursty = sorted(g.on_mean for g in teak.traffic if g.on_mean > 0)
    assert len(bursty) == 17 and bursty[0] == pytest.approx(1e-3)
    assert np.allclose(np.diff(bursty), 0.1e-3)


def test_rtt_sweep_definition_matches_s14():
    sw = NAMED_SWEEPS["rtt-sweep"]
    assert set(sw.scenarios) == {"ig-hotspot", "og-hotspot"} and sw.preset == "ibm-zurich"
    assert sw.grid["rtt"] == pytest.approx([2e-6, 20e-6, 50e-6, 200e-6, 500e-6, 1e-3])
    assert sw.grid["w"] == [2, 8, 32]
    assert sw.sets["switch_memory"] == 1.5e6 and sw.sets["pause"] is False
    assert (sw.sets["hotspot_start"], sw.sets["hotspot_stop"]) == (0.1, 1.0)
    cmds = sw.commands()
    assert len(cmds) == 2 and all(c.startswith("qcnmodel sweep --scenario") for c in cmds)


def test_rtt_sweep_runs_through_the_sweep_machinery():
    out = run_named_sweep(
        "rtt-sweep", scenario="ig-hotspot", grid={"rtt": [2e-6, 20e-6], "w": [2.0]},
        sets={"hotspot_start": 0.5e-3, "hotspot_stop": 1.5e-3}, duration=2e-3,
    )  # fmt: skip
    ds = out["ig-hotspot"]
    assert dict(ds.sizes) == {"rtt": 2, "w": 1}
    assert (ds["frames_delivered"] > 0).all()
    with pytest.raises(ValueError, match="scenario"):
        run_named_sweep("rtt-sweep", scenario="parking-lot")
    with pytest.raises(ValueError, match="unknown named sweep"):
        run_named_sweep("nope")


@pytest.mark.slow
def test_stanford_baseline_3_qcn_reaches_the_decks_allocation():
    # Deck (seed 002, baseline #3): culprits 0.5 Gb/s, victims 7 Gb/s. 0.6 s run, hotspot
    # 0.1 .. 0.6 s (the measurement window); without CC the victims lose throughput.
    sc = CATALOGUE["stanford-baseline-3"]
    q = simulate(sc.build(), params=sc.preset, duration=0.6, trace=False)
    n = simulate(sc.build(), params=sc.preset, duration=0.6, trace=False, protocol="none")
    thr = q.flow_throughput_bps
    for c in ("n1", "n4", "n8", "n9"):
        assert thr[f"{c}->n7"] == pytest.approx(0.5e9, abs=0.1e9)
    for v in ("n2->n9", "n5->n3", "n10->n6"):
        assert thr[v] == pytest.approx(7e9, abs=0.2e9)
    assert q.counters["frames_dropped"] == 0 < n.counters["frames_dropped"]
    victims = [n.flow_throughput_bps[v] for v in ("n2->n9", "n5->n3", "n10->n6")]
    assert np.mean(victims) < 6e9


@pytest.mark.slow
def test_dual_hotspots_qcn_removes_the_drops():
    for name in ("dual-hotspot-light-heavy", "dual-hotspot-heavy-light"):
        sc = CATALOGUE[name]
        q = simulate(sc.build(), params=sc.preset, duration=0.3)
        n = simulate(sc.build(), params=sc.preset, duration=0.3, protocol="none", trace=False)
        check_invariants(q)
        assert q.counters["frames_dropped"] < n.counters["frames_dropped"] / 100
        assert q.summary()["hot_port_utilisation"] > 0.9


def test_catalogue_scenarios_are_registered_and_run_by_name():
    from qcnmodel.sim.scenarios.base import BASE_SCENARIOS

    for name in NAMES:
        assert SCENARIOS[name] is CATALOGUE[name]
    # the registry is the two modules' scenarios, assembled once (neither module adds to it)
    assert not set(BASE_SCENARIOS) & set(CATALOGUE)
    assert list(SCENARIOS) == [*BASE_SCENARIOS, *CATALOGUE]
    r = simulate("stanford-baseline-3", duration="2ms", overrides={"hotspot_start": "0.5ms"})
    assert r.params.qeq == 33000  # the scenario's preset: stanford-baseline
    check_invariants(r)


@pytest.mark.parametrize(
    "first", ["qcnmodel.sim.scenarios.catalogue", "qcnmodel.sim.scenarios.base"]
)
def test_registration_in_any_import_order(first):
    import subprocess
    import sys

    code = (f"import {first}\nfrom qcnmodel.sim.scenarios import SCENARIOS\n"
            "print(sorted(set(SCENARIOS)))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert all(f"'{n}'" in out.stdout for n in NAMES)
