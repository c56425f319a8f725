"""Confirm a check's verdict with packets (``qcnmodel check --confirm``).

The analytical verdict of :func:`qcnmodel.studies.check.check_params` is put to the packet
simulator at two points of the checked ranges:

* the worst point (the flow count N and RTT with the smallest margin);
* a second point on the other side of the boundary at the worst point's N when the model
  has one there: 0.8 x its critical RTT when the worst point is predicted unstable, 1.25 x
  when it is predicted stable; otherwise the grid point with the largest phase margin.

Each point runs on the single bottleneck of the validation suite
(:func:`qcnmodel.validation.network.bottleneck_spec`: N greedy sources, one switch whose
egress port to the sink is the congestion point, link delays set so that the CP -> RP -> CP
loop delay equals the RTT), at the parameter set's line rate. The hot queue over the second
half of the run is classified by the oscillation detector
(:func:`qcnmodel.analysis.timeseries.oscillation`: *stable*, *oscillating* or *underflow*);
a point agrees when the packets are stable exactly where the model predicts stability.

A short run (default 0.4 s, the last 0.2 s analysed; the start from an empty queue
settles within about 0.2 s on the validation cases) is a smoke test of the verdict, not a
validation: ``qcnmodel validate`` does the full comparison.
"""

from __future__ import annotations

import sys

import numpy as np

from qcnmodel.params import QCNParams

__all__ = ["DEFAULT_DURATION", "confirm_points", "check_duration", "confirm_verdict", "drop_traces"]

#: default packet run length (s); the second half is analysed
DEFAULT_DURATION = 0.4
#: trace bin (s) for the oscillation detector
BIN = 50e-6


def confirm_points(result, ranges, model) -> list[dict]:
    """The (N, RTT) points to simulate, with ``model``'s prediction at each (see module)."""
    from qcnmodel.studies.verdict import scan

    wp = result.worst_point
    n_w, rtt_w = int(wp["n_flows"]), float(wp["rtt_s"])
    points = [(n_w, rtt_w, "worst point")]
    crit = result.critical_rtt_s.get(n_w, np.nan)
    worst_stable = _predict(model, n_w, rtt_w)["stable"]
    if np.isfinite(crit) and crit > 0:
        factor = 1.25 if worst_stable else 0.8
        points.append((n_w, factor * crit, f"{factor:g} x critical RTT at N = {n_w}"))
    else:
        table = scan(model, ranges)
        best = None
        for n, (pm, st) in table.items():
            key = np.where(st & np.isfinite(pm), pm, -np.inf)
            k = int(np.argmax(key))
            if np.isfinite(key[k]) and (best is None or key[k] > best[0]):
                best = (key[k], n, float(ranges.rtt_grid()[k]))
        if best is not None and not worst_stable:
            points.append((best[1], best[2], "largest phase margin in the ranges"))
    return [{"n_flows": n, "rtt_s": rtt, "role": role, **_predict(model, n, rtt)}
            for n, rtt, role in points]  # fmt: skip


def _predict(model, n: int, rtt: float) -> dict:
    mg = model.replace(n_flows=int(n), rtt=float(rtt)).loop().margins()
    return {"stable": bool(mg.stable), "phase_margin_deg": float(mg.phase_margin_deg)}


def confirm_verdict(params: QCNParams, result, ranges, model, duration: float | None = None,
                    seed: int = 0, progress: bool = False) -> dict:  # fmt: skip
    """Simulate the confirmation points and compare with the model.

    Parameters
    ----------
    params : QCNParams
        The checked parameter set.
    result : CheckResult
        The analytical check.
    ranges : CheckRanges
        Its ranges.
    model : loop model
        The checked model (any operating point; ``replace(n_flows=, rtt=)`` is used).
    duration : float, optional
        Packet run length per point, s (default :data:`DEFAULT_DURATION`); in (0, 10].
    seed : int
        Simulator seed.
    progress : bool
        A tqdm bar on stderr, and one line there while the simulator compiles.

    Returns
    -------
    dict
        ``agree`` (every point agrees), ``duration_s``, ``seed`` and ``rows`` (per point:
        ``n_flows``, ``rtt_s``, ``role``, ``predicted_stable``, ``phase_margin_deg``, the
        detector's ``verdict``, ``mean``, ``std``, ``underflow``, ``acf_peak``, ``agree``).
    """
    from tqdm.auto import tqdm

    from qcnmodel.analysis.timeseries import oscillation
    from qcnmodel.sim import simulate
    from qcnmodel.validation.network import bottleneck_spec

    duration = check_duration(DEFAULT_DURATION if duration is None else duration)
    points = confirm_points(result, ranges, model)
    _announce_compile(progress)
    rows = []
    capacity = float(params.line_rate)
    for pt in tqdm(points, desc="confirm", unit="run", disable=not progress, file=sys.stderr):
        res = simulate(bottleneck_spec(pt["n_flows"], pt["rtt_s"], capacity,
                                       line_rate=params.line_rate),
                       params=params, duration=duration, bin_width=BIN, seed=seed)  # fmt: skip
        ds = res.dataset
        q = ds.hot_queue_mean.where(ds.time > duration / 2, drop=True).values
        osc = oscillation(q, BIN, params.qeq)
        packets_stable = osc["verdict"] == "stable"
        rows.append({"n_flows": pt["n_flows"], "rtt_s": pt["rtt_s"], "role": pt["role"],
                     "predicted_stable": pt["stable"],
                     "phase_margin_deg": pt["phase_margin_deg"], "verdict": osc["verdict"],
                     "mean": osc["mean"], "std": osc["std"], "underflow": osc["underflow"],
                     "acf_peak": osc["acf_peak"], "agree": packets_stable == pt["stable"],
                     "time_s": ds.time.values,
                     "queue_bytes": ds.hot_queue_mean.values})  # fmt: skip
    return {"agree": all(r["agree"] for r in rows), "duration_s": duration, "seed": seed,
            "rows": rows}  # fmt: skip


def check_duration(duration) -> float:
    """The packet run length (s), in (0, 10] (ValueError naming ``confirm`` otherwise)."""
    d = float(duration)
    if not (0 < d <= 10):
        raise ValueError(f"confirm: run length must be in (0, 10] s, got {duration!r} s")
    return d


def _announce_compile(progress: bool) -> None:
    """Compile the simulator up front, saying so on stderr (tens of seconds, once)."""
    from qcnmodel.sim.kernel import loop
    from qcnmodel.studies.compiling import announce_compile

    announce_compile("sim", progress)
    loop.warm_up()


def plot_confirmation(confirmation: dict, qeq: float, path):
    """Hot-queue traces of the confirmation runs, one panel per point, with the model's and
    the packets' verdicts in each title; saved deterministically to ``path``."""
    import matplotlib.pyplot as plt

    from qcnmodel.studies.report_figures import save

    rows = confirmation["rows"]
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 2.8 * len(rows)), squeeze=False,
                             sharex=True)  # fmt: skip
    for ax, r in zip(axes[:, 0], rows):
        ax.plot(r["time_s"] * 1e3, r["queue_bytes"] / 1e3, lw=0.7, color="k")
        ax.axhline(qeq / 1e3, color="0.5", ls=":", lw=0.8, label="Qeq")
        ax.axvspan(confirmation["duration_s"] / 2 * 1e3, confirmation["duration_s"] * 1e3,
                   color="C0", alpha=0.07, label="analysed")  # fmt: skip
        model = "stable" if r["predicted_stable"] else "unstable"
        ax.set_title(f"{r['role']}: N = {r['n_flows']}, RTT = {r['rtt_s'] * 1e6:.4g} us; model "
                     f"{model}, packets {r['verdict']} ({'agree' if r['agree'] else 'DISAGREE'})",
                     fontsize=9, color="k" if r["agree"] else "C3")  # fmt: skip
        ax.set_ylabel("hot queue (KB)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    fig.tight_layout()
    return save(fig, path)


def drop_traces(confirmation: dict) -> dict:
    """The confirmation without the queue traces (for JSON)."""
    rows = [{k: v for k, v in r.items() if k not in ("time_s", "queue_bytes")}
            for r in confirmation["rows"]]  # fmt: skip
    return {**confirmation, "rows": rows}
