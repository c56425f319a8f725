"""Routing of the compiled network: the compact per-switch tables equal a BFS from every host,
they grow with the switches (not the hosts), and 30000 hosts load in seconds."""

from __future__ import annotations

import time
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel.sim.network import Host, Link, NetworkSpec, Switch
from qcnmodel.sim.network.compile import _nodes, _ports, _routes


def reference_routes(nodes, ports) -> np.ndarray:
    """The straightforward definition: a BFS from each destination host over all nodes
    (hosts do not forward), then each node's lowest-index port one hop closer."""
    n_nodes = len(nodes.names)
    route = np.full((n_nodes, nodes.n_hosts), -1, np.int64)
    for d in range(nodes.n_hosts):
        dist = np.full(n_nodes, -1)
        dist[d] = 0
        dq = deque([d])
        while dq:
            u = dq.popleft()
            if nodes.node_host[u] >= 0 and u != d:
                continue
            for p in ports.adj[u]:
                v = ports.dst[p]
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    dq.append(v)
        for u in range(n_nodes):
            if u == d or dist[u] < 0:
                continue
            for p in sorted(ports.adj[u]):
                if dist[ports.dst[p]] == dist[u] - 1:
                    route[u, d] = p
                    break
    return route


@st.composite
def graphs(draw):
    n_sw = draw(st.integers(0, 6))
    n_h = draw(st.integers(2, 9))
    sws = [f"s{i}" for i in range(n_sw)]
    hosts = [f"h{i}" for i in range(n_h)]
    links, free = [], list(hosts)
    while free:
        h = free.pop(0)
        if n_sw == 0 or (free and draw(st.integers(0, 5)) == 0):  # a host-to-host link
            if not free:
                break
            links.append(Link(h, free.pop(0)))
        else:
            links.append(Link(h, sws[draw(st.integers(0, n_sw - 1))]))
    if n_sw > 1:  # random switch links: cycles, parallel links, disconnected parts
        for _ in range(draw(st.integers(0, 2 * n_sw))):
            a, b = draw(st.sampled_from(sws)), draw(st.sampled_from(sws))
            if a != b:
                links.append(Link(a, b))
    used = {n for ln in links for n in (ln.a, ln.b)}
    hosts = [h for h in hosts if h in used]
    return NetworkSpec("g", tuple(Host(h) for h in hosts), tuple(Switch(s) for s in sws),
                       tuple(links))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_routes_equal_a_bfs_from_every_host(spec):
    if len(spec.hosts) < 2:
        return
    nodes = _nodes(spec)
    ports = _ports(spec, nodes)
    assert np.array_equal(_routes(nodes, ports).table(), reference_routes(nodes, ports))


def _big(n_hosts: int, per_switch: int = 100) -> str:
    n_sw = n_hosts // per_switch
    lines = ['name = "big"', 'duration = "1ms"']
    lines.append("nodes = [" + ", ".join(f'"h{i}"' for i in range(n_hosts)) + "]")
    lines.append("switches = [" + ", ".join(f'"s{j}"' for j in range(n_sw)) + ', "core"]')
    for i in range(n_hosts):
        lines.append(f'[[links]]\na = "h{i}"\nb = "s{i % n_sw}"')
    for j in range(n_sw):
        lines.append(f'[[links]]\na = "s{j}"\nb = "core"')
    for i in range(1, n_hosts):
        lines.append(f'[[flows]]\nsource = "h{i}"\ndest = "h0"\nrate = "1Mbps"')
    lines.append('[[hotspots]]\nnode = "h0"\nrate = "1Gbps"')
    return "\n".join(lines) + "\n"


def test_4000_hosts_load_and_compile_in_seconds():  # ~1-2 s (was 19 s, then ~3 s)
    from qcnmodel.sim.network import compile_network
    from qcnmodel.sim.topology import parse_topology

    text = _big(4000)
    t0 = time.perf_counter()
    spec = parse_topology(text).spec
    net = compile_network(spec)
    wall = time.perf_counter() - t0
    assert net.n_hosts == 4000 and net.n_flows == 3999
    names = [net.port_name(p) for p in net.path_ports(int(net.flow_of[5, 0]))]
    assert names == ["h5->s5", "s5->core", "core->s0", "s0->h0"]
    assert wall < 15.0, wall  # bound: 10x the ~1.5 s measured, for a loaded machine


def test_tables_grow_with_switches_not_hosts():
    # 3000 hosts on one switch: the dense node x host table was 3001 x 3000 x 8 B = 72 MB;
    # the compact one is one switch pair, and the flows are a dict of the pairs with traffic
    from qcnmodel.sim.network import ConstantFlow, compile_network

    hosts = tuple(Host(f"h{i}") for i in range(3000))
    links = tuple(Link(h.name, "sw") for h in hosts)
    traffic = tuple(ConstantFlow(f"h{i}", "h0", 1e6) for i in range(1, 3000))
    net = compile_network(NetworkSpec("star", hosts, (Switch("sw"),), links, traffic))
    assert net.routing.sw_route.shape == (1, 1)
    assert len(net.flow_of) == 2999 and net.flow_of[7, 0] == 6 and net.flow_of[0, 7] == -1
    # h7's port is 2 * 7 (links in order, the host side first); sw reaches h0 by port 1
    assert net.path_ports(6) == [14, 1]


@pytest.mark.slow  # ~5 s idle, up to ~20 s on a loaded 2-core machine
def test_30000_hosts_load_and_compile_in_seconds():
    from qcnmodel.sim.topology import parse_topology

    text = _big(30000)
    t0 = time.perf_counter()
    net = parse_topology(text).spec
    wall = time.perf_counter() - t0
    from qcnmodel.sim.network import compile_network

    net = compile_network(net)
    assert net.n_hosts == 30000 and net.n_flows == 29999
    assert net.routing.sw_route.shape == (301, 301)  # 300 leaves and the core
    names = [net.port_name(p) for p in net.path_ports(int(net.flow_of[29999, 0]))]
    assert names == ["h29999->s299", "s299->core", "core->s0", "s0->h0"]
    assert wall < 40.0, wall  # bound: 8x the ~5 s measured idle (parse, checks, compile)


@pytest.mark.slow  # ~15 s: load, compile the kernel's tables, run 1 ms
def test_10000_hosts_run(tmp_path):
    from qcnmodel.sim.topology import simulate_topology

    path = tmp_path / "big.toml"
    path.write_text(_big(10000))
    res = simulate_topology(path, duration=1e-3, bin_width=1e-4)
    c = res.counters
    assert len(res.flow_throughput_bps) == 9999
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]
    # 9999 sources at 1 Mb/s (10 Gb/s) into h0, whose port drains at 1 Gb/s from t = 0: at
    # most 1e9 b/s x 1 ms / (1500 x 8 b) = 83.3 frames reach h0
    assert 0 < c["frames_delivered"] <= 84


def _all_to_all(n_hosts: int, per_switch: int = 100) -> str:
    """``_big``'s network with every host sending uniformly to all others."""
    text = _big(n_hosts, per_switch)
    text = text[: text.index("[[flows]]")]
    lines = [f'[[uniform]]\nsource = "h{i}"\nrate = "1Gbps"' for i in range(n_hosts)]
    return text + "\n".join(lines) + "\n"


def test_all_to_all_on_10000_hosts_is_refused_up_front_with_exit_2(tmp_path):
    # 10000 x 9999 flows: ~48 GiB of flow tables; refused by the estimate, after a linear
    # parse (the reachability of every pair is one component check, not 1e8 path checks)
    import subprocess
    import sys

    path = tmp_path / "all.toml"
    path.write_text(_all_to_all(10000))
    cmd = [sys.executable, "-m", "qcnmodel", "simulate", "--topology", str(path), "--duration",
           "1ms", "--quiet"]  # fmt: skip
    t0 = time.perf_counter()
    import os
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    assert out.returncode == 2, out.stderr
    err = out.stderr.strip()
    assert "99990000 flows" in err and "sim.max_table_bytes" in err and "\n" not in err
    assert wall < 60, wall  # ~4 s idle; minutes of path checks before
