"""Small networks shared by the simulator tests (not a test module)."""

from __future__ import annotations

from hypothesis import strategies as st

from qcnmodel.sim.network import (
    Buffers,
    ConstantFlow,
    Host,
    Hotspot,
    Link,
    NetworkSpec,
    PauseConfig,
    Switch,
    UniformTraffic,
)


def star(n=4, load=0.85, service=1e9, t0=0.5e-3, t1=3e-3, memory=150e3, pause=False,
         pause_rtt=0.0, delay=0.5e-6, latency=1e-6, oq=0.0, ib=1.5e6, hot_mode="port",
         ob=1.5e6):  # fmt: skip
    """OG hotspot on one switch: n hosts, uniform traffic, host h1 drained at ``service``."""
    hosts = tuple(Host(f"h{i + 1}") for i in range(n))
    return NetworkSpec(
        "star",
        hosts,
        (Switch("sw", latency),),
        tuple(Link(h.name, "sw", 10e9, delay) for h in hosts),
        tuple(UniformTraffic(h.name, load * 10e9) for h in hosts),
        (Hotspot("h1", service, t0, t1, hot_mode),),
        Buffers(memory, oq, ib, ob),
        PauseConfig(pause, pause_rtt),
    )


def chain(n_sw=3, hosts_per_sw=2, rate=10e9, delay=1e-6, onoff=True, memory=100e3, pause=False,
          pause_rtt=0.0):  # fmt: skip
    """Switches in a chain, constant-rate and on/off flows from the first to the last switch."""
    sws = [f"s{i}" for i in range(n_sw)]
    hosts, links = [], []
    for i, s in enumerate(sws):
        for j in range(hosts_per_sw):
            h = f"h{i}_{j}"
            hosts.append(Host(h))
            links.append(Link(h, s, rate, delay))
    for a, b in zip(sws, sws[1:]):
        links.append(Link(a, b, rate, delay))
    last = f"h{n_sw - 1}_0"
    traffic = [ConstantFlow(f"h0_{j}", last, 0.6 * rate) for j in range(hosts_per_sw)]
    if onoff:
        traffic.append(ConstantFlow(f"h{n_sw - 1}_1", "h0_0", 0.9 * rate, 0.0, 1.0, 2e-4, 3e-4))
    return NetworkSpec(
        "chain",
        tuple(hosts),
        tuple(Switch(s) for s in sws),
        tuple(links),
        tuple(traffic),
        (Hotspot(last, rate, 0.0, 1.0),),
        Buffers(memory, 0.0, 1.5e6),
        PauseConfig(pause, pause_rtt),
    )


@st.composite
def networks(draw, pause=None):
    n_sw = draw(st.integers(1, 3))
    n_hosts = draw(st.integers(2, 6))
    rate = draw(st.sampled_from([1e9, 10e9]))
    delay = draw(st.sampled_from([0.0, 0.5e-6, 5e-6]))
    lat = draw(st.sampled_from([0.0, 1e-6]))
    sws = [f"s{i}" for i in range(n_sw)]
    hosts = [f"h{i}" for i in range(n_hosts)]
    links = [Link(h, sws[draw(st.integers(0, n_sw - 1))], rate, delay) for h in hosts]
    links += [Link(a, b, rate * draw(st.sampled_from([1, 2])), delay) for a, b in zip(sws, sws[1:])]
    traffic = []
    for h in hosts:
        if draw(st.booleans()):
            traffic.append(UniformTraffic(h, rate * draw(st.floats(0.05, 1.0))))
        else:
            d = hosts[(hosts.index(h) + draw(st.integers(1, n_hosts - 1))) % n_hosts]
            on = draw(st.sampled_from([0.0, 1e-4]))
            traffic.append(ConstantFlow(h, d, rate * draw(st.floats(0.05, 1.0)), 0.0, 1.0, on, on))
    hot = draw(st.sampled_from(hosts))
    hs = Hotspot(hot, rate * draw(st.floats(0.02, 1.0)), draw(st.floats(0, 1e-3)), 2e-3)
    pz = draw(st.booleans()) if pause is None else pause
    prtt = 2 * delay + lat + 2 * 1500 * 8 / rate
    mem = draw(st.floats(20e3, 300e3))
    if pz:
        mem = max(mem, prtt * 2 * (2 * rate) / 8 + 10e3 + 3000)  # inter-switch links: 2x rate
    buffers = Buffers(mem, draw(st.sampled_from([0.0, 50e3])), draw(st.floats(10e3, 1e6)))
    return NetworkSpec("rand", tuple(Host(h) for h in hosts), tuple(Switch(s, lat) for s in sws),
                       tuple(links), tuple(traffic), (hs,), buffers,
                       PauseConfig(pz, prtt * 2))  # fmt: skip
