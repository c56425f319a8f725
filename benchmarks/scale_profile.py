"""Where the simulator's time goes as the network grows: og-hotspot at 10 and 100 nodes.

For each size: wall time per simulated second (target at 100 nodes: 3 s), events per frame
sent, ns per event and per frame, and the mix of event kinds (from the kernel's event log
over the first 2 million events). Ratios of the 100-node figures to the 10-node ones are
printed too: they hold on a loaded machine where the absolute times do not.

Usage: ``python benchmarks/scale_profile.py [DURATION_S]`` (default 0.05 s of simulated time).
"""

from __future__ import annotations

import sys

import numpy as np

TARGET_100_S = 3.0  #: wall s per simulated s at 100 nodes


def _mix(n: int, dur: float) -> dict:
    from qcnmodel.params import QCNParams
    from qcnmodel.sim.kernel import heap as kh
    from qcnmodel.sim.kernel.loop import run_compiled
    from qcnmodel.sim.kernel.state import EVENT_NAMES, build_state
    from qcnmodel.sim.network import compile_network
    from qcnmodel.sim.protocols.registry import protocol_config
    from qcnmodel.sim.scenarios import get_scenario

    sc = get_scenario("og-hotspot")
    net = compile_network(sc.build({"n_nodes": n}))
    rate = float(np.max(net.port_rate[net.host_port]))
    params = QCNParams.preset(sc.preset).replace(line_rate=rate)
    end = int(dur * 1e9)
    proto = protocol_config("qcn", {}, params, {})
    st = build_state(net, params, qcn=True, seed=0, end_ns=end, bin_ns=10**6,
                     measure_ns=(0, end), traced_flows=np.arange(min(net.n_flows, 9)),
                     log_events=2_000_000, proto=proto)  # fmt: skip
    run_compiled(st)
    n_ev = min(int(st.S[kh.S_EVENTS]), 2_000_000)
    kinds = np.bincount(st.LOG[1, :n_ev], minlength=len(EVENT_NAMES))
    return {EVENT_NAMES[k]: kinds[k] / n_ev for k in range(len(EVENT_NAMES)) if kinds[k]}


def main(dur: float = 0.05) -> None:
    from qcnmodel.sim.api import simulate
    from qcnmodel.sim.kernel.loop import warm_up

    warm_up("qcn")
    rows = {}
    for n in (10, 100):
        r = simulate("og-hotspot", duration=dur, overrides={"n_nodes": n}, engine="kernel")
        c = r.counters
        rows[n] = dict(wall=r.wall_s / dur, epf=c["events"] / c["frames_sent"],
                       nspe=r.wall_s / c["events"] * 1e9,
                       nspf=r.wall_s / c["frames_sent"] * 1e9)  # fmt: skip
        mix = _mix(n, dur)
        print(f"og-hotspot, {n} nodes, {dur:g} s: {rows[n]['wall']:.2f} s wall per simulated s, "
              f"{rows[n]['epf']:.2f} events/frame, {rows[n]['nspe']:.0f} ns/event, "
              f"{rows[n]['nspf']:.0f} ns/frame")  # fmt: skip
        print("   event mix: " + ", ".join(f"{k} {v:.3f}" for k, v in mix.items()))
    a, b = rows[10], rows[100]
    print(
        f"100 vs 10 nodes: wall per simulated s x{b['wall'] / a['wall']:.1f}, ns/event "
        f"x{b['nspe'] / a['nspe']:.2f}, events/frame x{b['epf'] / a['epf']:.2f}"
    )
    verdict = "met" if b["wall"] <= TARGET_100_S else "NOT met"
    print(
        f"100 nodes: {b['wall']:.2f} s per simulated s, target <= {TARGET_100_S:g} s, ratio "
        f"{b['wall'] / TARGET_100_S:.2f}: {verdict}"
    )


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.05)
