"""Topology-file messages agree with each other and name the file, the entry and the line.

A traffic rate is in (0, the source's link rate]: a zero and a too-high rate get the same
range (the message said "> 0" for one and "[0, link rate] ... 0 = no frames" for the other);
a uniform source listed among its own destinations, an unknown preset and a duration the
simulator does not run are named with the file and the line (they had neither, or no reason).
"""

import pytest

from qcnmodel.sim.topology import parse_topology

BASE = """\
preset = "802.1qau"
duration = "5ms"
nodes = ["h1", "h2", "h3"]
switches = ["s1"]

[[links]]
a = "h1"
b = "s1"
[[links]]
a = "h2"
b = "s1"
[[links]]
a = "h3"
b = "s1"
rate = "1Gbps"

[[flows]]
source = "h1"
dest = "h2"
rate = "5Gbps"

[[uniform]]
source = "h2"
rate = "1Gbps"
"""
RANGE_10G = "rate must be in (0, 1e+10] bit/s (at most the source's link rate)"


def _error(text):
    with pytest.raises(ValueError) as ei:
        parse_topology(text, "net.toml")
    return str(ei.value)


def test_the_base_loads():
    topo = parse_topology(BASE, "net.toml")
    assert (topo.preset, topo.duration) == ("802.1qau", 5e-3)


@pytest.mark.parametrize("rate", ["0Gbps", "-1Gbps", "11Gbps"])
def test_a_flow_rate_outside_its_range_says_the_range(rate):
    msg = _error(BASE.replace('rate = "5Gbps"', f'rate = "{rate}"'))
    assert msg == f"net.toml, flows[0] (line 20): {RANGE_10G}, got '{rate}'"


def test_the_range_is_the_source_link_rate():
    msg = _error(BASE.replace('source = "h1"', 'source = "h3"').replace('"5Gbps"', '"2Gbps"'))
    assert "flows[0] (line 20): rate must be in (0, 1e+09] bit/s" in msg
    msg = _error(BASE.replace('source = "h2"\nrate = "1Gbps"', 'source = "h2"\nrate = "0bps"'))
    assert msg.startswith("net.toml, uniform[0] (line 24): rate must be in (0, 1e+10] bit/s")


def test_a_uniform_source_among_its_destinations():
    msg = _error(BASE + 'destinations = ["h1", "h2"]\n')
    assert msg == ("net.toml, uniform[0] (line 25): destinations: 'h2' is the source (a node "
                   "does not send to itself)")  # fmt: skip


def test_preset_and_duration_name_file_and_line():
    msg = _error(BASE.replace('preset = "802.1qau"', 'preset = "nope"'))
    assert msg.startswith("net.toml, preset (line 1): preset: unknown preset 'nope'")
    msg = _error(BASE.replace('duration = "5ms"', 'duration = "1e9s"'))
    assert msg.startswith("net.toml, duration (line 2): duration: ")
    assert "outside the allowed range [1e-9, 1e4] s" in msg
