"""TOML topology files (issue 7, item 2): loading, units, validation errors, routing."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcnmodel.sim.fair import fair_shares
from qcnmodel.sim.network import ConstantFlow, UniformTraffic
from qcnmodel.sim.scenarios import SCENARIOS
from qcnmodel.sim.topology import (
    load_topology,
    parse_topology,
    read_topology,
    routes,
    simulate_topology,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "topologies"

BASE = """\
nodes = ["h1", "h2", "h3"]
switches = ["s1", "s2"]

[[links]]
a = "h1"
b = "s1"
[[links]]
a = "h2"
b = "s1"
[[links]]
a = "h3"
b = "s2"
[[links]]
a = "s1"
b = "s2"
rate = "40Gbps"
delay = "2us"

[[flows]]
source = "h1"
dest = "h3"
rate = "5Gbps"
"""


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_examples_load_and_run(path):
    topo = read_topology(path)
    assert topo.spec.traffic
    r = simulate_topology(path, duration="3ms")
    c = r.counters
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]
    assert c["frames_delivered"] > 0
    assert float(r.dataset["queue"].min()) >= 0


def test_at_least_a_parking_lot_and_a_two_switch_example():
    names = {p.stem for p in EXAMPLES.glob("*.toml")}
    assert {"parking-lot", "two-switch"} <= names
    assert len(load_topology(EXAMPLES / "two-switch.toml").switches) == 2


def test_parking_lot_file_gives_the_decks_fair_shares_and_the_scenarios_routes():
    spec = load_topology(EXAMPLES / "parking-lot.toml")
    mm = fair_shares(spec)
    assert all(v == pytest.approx(2.0e9, abs=5e6) for v in mm.values())  # deck: 2.0 Gb/s
    pf = fair_shares(spec, "proportional")
    assert pf["n1->n9"] == pytest.approx(1.67e9, abs=5e6)  # deck: 1.67 Gb/s
    assert pf["n5->n7"] == pytest.approx(3.33e9, abs=5e6)  # deck: 3.33 Gb/s
    assert routes(spec) == routes(SCENARIOS["parking-lot"].build())


def test_units_are_si_inside():
    text = BASE + '\n[buffers]\nswitch_memory = "150KB"\nadapter_ib = "inf"\n'
    spec = parse_topology(text).spec
    link = spec.links[3]
    assert (link.rate, link.delay) == (40e9, 2e-6)
    assert spec.links[0].rate == 10e9 and spec.links[0].delay == 500e-9  # defaults
    assert spec.traffic[0].rate == 5e9
    assert spec.buffers.switch_memory == 150e3 and spec.buffers.adapter_ib == float("inf")
    plain = parse_topology(BASE.replace('"5Gbps"', "5e9")).spec
    assert plain.traffic == spec.traffic


def test_traffic_matrix_uniform_and_hotspots():
    text = (
        BASE
        + """
[[uniform]]
source = "h2"
rate = "1Gbps"

[[hotspots]]
node = "h3"
rate = "1Gbps"
start = "10ms"
stop = "40ms"

[matrix]
nodes = ["h1", "h2", "h3"]
rates = [[0, "1Gbps", 0], [0, 0, 0], ["2Gbps", 0, 0]]
"""
    )
    spec = parse_topology(text).spec
    cf = {(g.source, g.dest): g.rate for g in spec.traffic if isinstance(g, ConstantFlow)}
    assert cf == {("h1", "h3"): 5e9, ("h1", "h2"): 1e9, ("h3", "h1"): 2e9}
    (u,) = [g for g in spec.traffic if isinstance(g, UniformTraffic)]
    assert (u.source, u.rate, u.destinations) == ("h2", 1e9, None)
    (hs,) = spec.hotspots
    assert (hs.node, hs.rate, hs.start, hs.stop) == ("h3", 1e9, 10e-3, 40e-3)


def _error(text, *patterns):
    with pytest.raises(ValueError) as ei:
        parse_topology(text, "net.toml")
    msg = str(ei.value)
    for p in patterns:
        assert p in msg, msg
    return msg


def test_unknown_node_names_the_entry_and_line():
    bad = BASE.replace('dest = "h3"', 'dest = "h9"')
    _error(bad, "net.toml", "flows[0] (line 21)", "unknown node 'h9'", "'dest'")
    bad = BASE.replace('a = "h3"', 'a = "hx"')
    _error(bad, "links[2] (line 11)", "unknown node 'hx'")


def test_disconnected_flow():
    text = BASE.replace('[[links]]\na = "s1"\nb = "s2"', '[[links]]\na = "s2"\nb = "s3"')
    text = text.replace('switches = ["s1", "s2"]', 'switches = ["s1", "s2", "s3"]')
    _error(text, "flows[0] (line 19)", "disconnected", "'h1'", "'h3'")


def test_negative_rate_and_delay():
    _error(BASE.replace('"40Gbps"', '"-40Gbps"'), "links[3] (line 16)", "rate must be > 0")
    _error(BASE.replace('"5Gbps"', '"-5Gbps"'), "flows[0] (line 22)",
           "rate must be in (0, 1e+10] bit/s (at most the source's link rate)")  # fmt: skip
    _error(BASE.replace('"2us"', '"-2us"'), "links[3] (line 17)", "delay must be >= 0")


def test_other_errors_name_the_field():
    _error(BASE.replace('rate = "40Gbps"', 'rat = "40Gbps"'), "links[3]", "unknown key 'rat'",
           "did you mean 'rate'")  # fmt: skip
    _error("colour = 1\n" + BASE, "top level", "unknown key 'colour'")
    _error(BASE.replace('switches = ["s1", "s2"]', 'switches = ["s1", "h1"]'),
           "duplicate name 'h1'")  # fmt: skip
    _error(BASE + '[[links]]\na = "h1"\nb = "s2"\n', "node 'h1'", "exactly one link", "has 2")
    _error(BASE + 'start = "2ms"\nstop = "1ms"\n', "flows[0]", "stop")
    _error(BASE.replace('dest = "h3"', 'dest = "s2"'), "'s2' is a switch")
    _error("nodes = [", "net.toml", "invalid TOML")
    _error(BASE + "[[hotspots]]\nnode = 'h3'\nrate = '1Gbps'\nmode = 'x'\n", "hotspots[0]", "mode")
    _error(BASE + "[matrix]\nnodes = ['h1', 'h2']\nrates = [[0, '1Gbps']]\n", "[matrix]", "rows")
    _error(BASE.replace('rate = "5Gbps"', 'rate = "fast"'), "flows[0]", "cannot parse 'fast'")


def test_inline_array_entries_get_their_line():
    text = """\
nodes = ["h1", "h2"]
switches = ["s"]
links = [
    { a = "h1", b = "s" },
    { a = "h2", b = "q" },
]
flows = [{ source = "h1", dest = "h2", rate = "1Gbps" }]
"""
    _error(text, "links[1] (line 5)", "unknown node 'q'")


def test_routing_is_shortest_path_with_deterministic_ties():
    # h1 - s1, then two equal two-hop paths s1 - s2 - s4 and s1 - s3 - s4, and h2 - s4.
    def text(first, second):
        links = [("h1", "s1"), ("h2", "s4"), first, second, ("s2", "s4"), ("s3", "s4")]
        body = "".join(f'[[links]]\na = "{a}"\nb = "{b}"\n' for a, b in links)
        return ('nodes = ["h1", "h2"]\nswitches = ["s1", "s2", "s3", "s4"]\n' + body
                + '[[flows]]\nsource = "h1"\ndest = "h2"\nrate = "1Gbps"\n')  # fmt: skip

    via_s2 = routes(parse_topology(text(("s1", "s2"), ("s1", "s3"))).spec)
    via_s3 = routes(parse_topology(text(("s1", "s3"), ("s1", "s2"))).spec)
    assert via_s2["h1->h2"] == ["h1", "s1", "s2", "s4", "h2"]  # the link declared first wins
    assert via_s3["h1->h2"] == ["h1", "s1", "s3", "s4", "h2"]
    again = routes(parse_topology(text(("s1", "s2"), ("s1", "s3"))).spec)
    assert again == via_s2
    # a shortcut s1 - s4 is shorter than both
    short = text(("s1", "s2"), ("s1", "s3")) + '[[links]]\na = "s1"\nb = "s4"\n'
    assert routes(parse_topology(short).spec)["h1->h2"] == ["h1", "s1", "s4", "h2"]


def test_file_settings_and_missing_file(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text('name = "mine"\npreset = "stanford-baseline"\nduration = "2ms"\n' + BASE)
    topo = read_topology(p)
    assert (topo.spec.name, topo.preset, topo.duration) == ("mine", "stanford-baseline", 2e-3)
    r = simulate_topology(p)
    assert r.duration == 2e-3 and r.params.qeq == 33000  # the Stanford set's Qeq = 33 KB
    with pytest.raises(ValueError, match="cannot read"):
        read_topology(tmp_path / "missing.toml")


def test_cli_simulate_topology(capsys):
    import json

    from qcnmodel.cli import main

    path = EXAMPLES / "parking-lot.toml"
    assert main(["simulate", "--topology", str(path), "--duration", "3ms", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["scenario"] == "parking-lot-file"
    assert s["fair_share_bps"] == pytest.approx({f: 2e9 for f in s["flow_throughput_bps"]})
    assert s["frames_delivered"] > 0


def test_cli_topology_errors_name_the_entry(tmp_path, capsys):
    from qcnmodel.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text(BASE.replace('dest = "h3"', 'dest = "h9"'))
    assert main(["simulate", "--topology", str(bad), "--duration", "1ms"]) != 0
    err = capsys.readouterr().err
    assert "flows[0] (line 21)" in err and "unknown node 'h9'" in err
    with pytest.raises(SystemExit):  # --scenario and --topology are exclusive
        main(["simulate", "--scenario", "parking-lot", "--topology", str(bad)])


def test_pause_in_a_topology_file_is_lossless_by_default(tmp_path):
    # the two-switch example with PAUSE on and no [pause] rtt: the headroom is derived from
    # each link (delay both ways, switch latency, two frames); without congestion management
    # the 12 Gb/s towards h4 (drained at 1 Gb/s) would overflow the 150 KB partitions
    from pathlib import Path

    from qcnmodel.sim.topology import simulate_topology

    text = (Path(__file__).parents[2] / "examples/topologies/two-switch.toml").read_text()
    path = tmp_path / "pause.toml"
    path.write_text(text.replace('switch_memory = "150KB"', 'switch_memory = "150KB"\n\n'
                                 "[pause]\nenabled = true"))  # fmt: skip
    r = simulate_topology(path, duration="20ms", protocol="none", bin_width="1ms", trace=False)
    assert r.counters["pause_frames"] > 0
    assert r.counters["frames_dropped"] == 0
    # with a zero headroom (the old default) the same run drops frames: the test can fail
    path.write_text(path.read_text().replace("enabled = true", "enabled = true\nrtt = 0"))
    r0 = simulate_topology(path, duration="20ms", protocol="none", bin_width="1ms", trace=False)
    assert r0.counters["frames_dropped"] > 0
