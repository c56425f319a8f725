"""``assert_invariants``: properties every packet run must have, whatever the scenario.

* **Frames conserved**: the frames in flight computed from the counters (sent - delivered -
  dropped) equal the frames counted in the network at the end (VOQs, queues, links), and
  are >= 0; sent + refused by the adapter <= offered.
* **Queues >= 0**: every port's queue (end of bin, bin mean, bin maximum).
* **Rate limiters within [MinRate, line rate]**: the traced flows' current rate CR while the
  rate limiter exists (IEEE 802.1Qau clause 32.13: CR never falls below ``MinRate``, and a
  limiter never sends faster than its link). The lower bound applies to the QCN family
  (protocols named ``qcn*``), whose ``MinRate`` is ``QCNParams.min_rate``.
* **PAUSE runs drop nothing**: a run with PAUSE enabled (IEEE 802.3 Annex 31B, lossless
  priority) or one that sent PAUSE frames drops no frame.
* **Line rate never exceeded**: every port sends at most its link rate over every bin, plus
  one frame (bytes count when a transmission starts, so a frame may start at the bin's end).
  Needs the network (known for runs of :func:`qcnmodel.testing.simulate` and the plugin's
  ``qcn_sim``, or pass ``network=``; else a named scenario is rebuilt with its defaults).
"""

from __future__ import annotations

import numpy as np

from qcnmodel.testing import _sim, report
from qcnmodel.testing.report import fmt

__all__ = ["assert_invariants"]

#: relative slack of the rate bounds (floating-point rounding of the recorded rates)
RATE_RTOL = 1e-9


def _network(result, network):
    if network is not None:
        return network, "given"
    spec = getattr(result, _sim.SPEC_ATTR, None)
    if spec is not None:
        return spec, "run"
    from qcnmodel.sim.scenarios import SCENARIOS

    if result.scenario in SCENARIOS:
        return SCENARIOS[result.scenario].build({}), "scenario defaults"
    return None, "unknown"


def _conservation(c: dict) -> tuple[bool, str]:
    flight, counted = c["frames_in_flight"], c.get("frames_in_network", c["frames_in_flight"])
    ok = flight == counted and flight >= 0
    ok &= c["frames_sent"] + c["frames_blocked"] <= c["frames_offered"]
    return ok, (f"offered {c['frames_offered']}, refused {c['frames_blocked']}, sent "
                f"{c['frames_sent']}, delivered {c['frames_delivered']}, dropped "
                f"{c['frames_dropped']}, in flight {flight} (counted in the network "
                f"{counted})")  # fmt: skip


def _queues(ds) -> tuple[bool, str]:
    low = min(float(ds[v].min()) for v in ("queue", "queue_mean", "queue_max"))
    return low >= 0, f"smallest queue value {fmt(low)} B"


def _rates(result, ds) -> tuple[bool, str]:
    p = result.params
    act = ds["rl_active"].values > 0
    cr = ds["cr"].values[act]
    if cr.size == 0:
        return True, "no rate limiter was active on the traced flows"
    lo, hi = float(cr.min()), float(cr.max())
    ok = hi <= p.line_rate * (1 + RATE_RTOL)
    text = f"CR of active limiters in [{fmt(lo)}, {fmt(hi)}] bit/s, line rate {fmt(p.line_rate)}"
    if result.protocol.startswith("qcn"):
        ok &= lo >= p.min_rate * (1 - RATE_RTOL)
        text += f", MinRate {fmt(p.min_rate)}"
    return bool(ok), text


def _lossless(result, spec) -> tuple[bool, str] | None:
    c = result.counters
    enabled = bool(spec is not None and spec.pause.enabled)
    if not (enabled or c["pause_frames"] > 0):
        return None
    return c["frames_dropped"] == 0, (f"PAUSE {'enabled' if enabled else 'frames sent'} "
                                      f"({c['pause_frames']} PAUSE frames), "
                                      f"{c['frames_dropped']} frames dropped")  # fmt: skip


def _line_rate(ds, spec) -> tuple[bool, str]:
    from qcnmodel.sim.network import compile_network

    net = compile_network(spec)
    names = [net.port_name(p) for p in range(net.n_ports)]
    rate = dict(zip(names, net.port_rate.astype(float)))
    t = ds["time"].values
    width = np.diff(t, prepend=0.0)
    worst, where = -np.inf, ""
    for port in ds["port"].values:
        r = rate.get(str(port))
        if r is None:
            continue
        thr = ds["port_throughput"].sel(port=port).values
        excess = thr * width - (r * width * (1 + RATE_RTOL) + 8.0 * net.frame_size)
        k = int(np.argmax(excess))
        if excess[k] > worst:
            worst, where = float(excess[k]), (f"{port} at {fmt(t[k])} s: {fmt(thr[k])} bit/s "
                                              f"for a {fmt(r)} bit/s link")  # fmt: skip
    return worst <= 0, f"largest use: {where} (one frame of slack per bin)"


def assert_invariants(sim_result, *, network=None):
    """Assert the invariants of a packet run (module docstring).

    Parameters
    ----------
    sim_result : SimResult
        A run of :func:`qcnmodel.simulate` (its dataset is needed for the queue, rate and
        line-rate checks; without it those are reported as skipped).
    network : NetworkSpec, optional
        The network of the run, for the link rates and the PAUSE setting.

    Raises
    ------
    AssertionError
        One or more invariants fail; the message lists each check with its numbers and the
        path of a figure of the run's queues and rates.
    """
    if not hasattr(sim_result, "counters"):
        raise ValueError(f"sim_result: expected a SimResult, got {type(sim_result).__name__}")
    spec, source = _network(sim_result, network)
    ds = sim_result.dataset
    checks = {"frames conserved": _conservation(sim_result.counters)}
    if ds is not None:
        checks["queues >= 0"] = _queues(ds)
        checks["rate limiters within [MinRate, line rate]"] = _rates(sim_result, ds)
    lossless = _lossless(sim_result, spec)
    if lossless is not None:
        checks["PAUSE run drops nothing"] = lossless
    if ds is not None and spec is not None:
        ok, text = _line_rate(ds, spec)
        checks["line rate never exceeded"] = (ok, f"{text}; network: {source}")
    skipped = [] if ds is not None else ["queues, rates and line rate (no dataset)"]
    if ds is not None and spec is None:
        skipped.append("line rate (network unknown: pass network=)")
    fails = [k for k, (ok, _) in checks.items() if not ok]
    fig = _figure(sim_result) if ds is not None and report.figures_wanted(not fails) else None
    lines = [f"{'ok  ' if ok else 'FAIL'} {k}: {text}" for k, (ok, text) in checks.items()]
    lines += [f"skipped: {s}" for s in skipped]
    msg = "\n".join(lines) + (f"\nfigure: {fig}" if fig else "")
    subject = (f"{sim_result.scenario}, {sim_result.protocol}, seed {sim_result.seed}, "
               f"{fmt(sim_result.duration)} s")  # fmt: skip
    numbers = {k: ok for k, (ok, _) in checks.items()}
    numbers.update({k: v for k, v in sim_result.counters.items() if k.startswith("frames")})
    report.add("assert_invariants", subject, not fails, numbers, msg, [fig] if fig else [])
    if fails:
        raise AssertionError(f"assert_invariants: {len(fails)} invariant(s) broken\n" + msg)


def _figure(result) -> str:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ds = result.dataset
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.4))
    t = ds["time"].values
    top = np.argsort(ds["queue_max"].max("time").values)[::-1][:5]
    for i in top:
        a1.plot(t, ds["queue"].values[i] / 1e3, lw=0.7, label=str(ds["port"].values[i]))
    a1.set(xlabel="time (s)", ylabel="queue (KB)", title="largest queues")
    a1.legend(fontsize=7)
    for i in range(min(6, ds.sizes.get("flow", 0))):
        a2.plot(t, ds["cr"].values[i] / 1e9, lw=0.7, label=str(ds["flow"].values[i]))
    a2.axhline(result.params.min_rate / 1e9, color="r", ls=":", lw=0.8)
    a2.set(xlabel="time (s)", ylabel="CR (Gb/s)", title="rate limiters")
    a2.legend(fontsize=6)
    fig.suptitle(f"{result.scenario} ({result.protocol}, seed {result.seed})", fontsize=9)
    fig.tight_layout()
    return report.save_figure(fig, "assert_invariants")
