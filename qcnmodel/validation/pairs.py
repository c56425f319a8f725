"""Matched pairs: QCN models against the packet simulator, one :class:`Row` per comparison.

Each check runs the simulator and every model variant on the same bottleneck
(:class:`~qcnmodel.validation.traces.Case`) from the same start and measures both traces with
the same functions (:mod:`.measure`). Tolerances are stated per row with their source.

* :func:`check_equilibrium`: the time-mean hot queue and the flows' mean rate after settling.
* :func:`check_oscillation`: stable / oscillating / underflow (one detector on both traces)
  and the period when both oscillate.
* :func:`check_boundary`: the RTT at which the queue starts to oscillate: the simulator's
  bracket (scan and bisection) against the model's trajectories scanned the same way, and
  against the linearised critical RTT.
* :func:`check_recovery`: the time to recover the line rate after a hotspot.
* :func:`check_rtt_classes`: two RTT classes, the flow-class model's rate ratio.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.analysis.boundary import boundary_method, odds_crossing
from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.analysis.timeseries import class_group
from qcnmodel.validation.measure import batch_means, oscillation, recovery_time, scan_boundary
from qcnmodel.validation.rows import Row
from qcnmodel.validation.traces import (
    CAPACITY,
    DEFAULT_VARIANT,
    LINE,
    VARIANTS,
    Case,
    Trace,
    model_of,
    model_seeds,
    model_trace,
    sim_trace,
)

__all__ = [
    "CAPACITY", "DEFAULT_VARIANT", "DURATION", "LINE", "Row", "SETTLE", "VARIANTS", "Case",
    "Trace", "check_boundary", "check_equilibrium", "check_oscillation", "check_recovery",
    "check_rtt_classes", "model_trace", "sim_trace", "sim_unstable",
]  # fmt: skip

#: run length and settling time of the equilibrium/oscillation pairs (s): the start from an
#: empty queue at 2 C / N per source takes up to ~0.2 s to settle (N = 1, RTT 500 us)
DURATION, SETTLE = 0.6, 0.3

#: run length of the oscillation period rows (s): the same runs continued, measured from
#: SETTLE. The mean cycle is a statistic of the distribution of cycle lengths; where the
#: cycle is irregular (underflow, cuts at random instants) its estimate over the class rows'
#: 0.3 s window varies from seed to seed by more than the period tolerance (N = 1 at
#: 500 us: 5.6-49 ms over 3 simulated seeds), while 2.7 s hold hundreds of cycles of a few
#: ms and tens of cycles of 50 ms.
PERIOD_DURATION = 3.0
#: trace bin of those runs (s): 2.7 s of a 100-flow port's traces in bins of 50 us exceed the
#: simulator's trace memory budget (``config.defaults["sim.max_trace_bytes"]``)
PERIOD_BIN = 100e-6


def _window(tr: Trace, settle: float) -> slice:
    return slice(int(round(settle / tr.dt)), None)


def _key(*parts) -> str:
    return "|".join(str(p) for p in parts)


def _linear(model) -> tuple[str, float, float]:
    """(verdict, phase-crossover period s, critical RTT s) of the model's linearisation."""
    try:
        mg = model.loop().margins()
        crit = critical_rtt(model)
    except (ValueError, RuntimeError):
        return "no equilibrium", math.nan, math.nan
    wpc = mg.phase_crossover_rad_s
    period = 2 * math.pi / wpc if wpc and math.isfinite(wpc) else math.nan
    return ("stable" if mg.stable else "oscillating"), period, crit


def check_equilibrium(case: Case, variants, duration=DURATION, settle=SETTLE, seed=0):
    """Time-mean hot queue and flow-mean rate after ``settle``: model trajectory vs sim."""
    pr = case.params
    sim = sim_trace(case, duration, seed)
    w = _window(sim, settle)
    qs, qse = batch_means(sim.q[w])
    step = pr.fb_max / pr.fb_full_scale
    am, ase = batch_means(sim.extra["flow_mean"][w])
    res = 8.0 * pr.frame_size / (duration - settle)  # one frame per window, bit/s
    par = case.label(f"window {settle:g}-{duration:g} s, seed {seed}")
    rows = []
    for v in variants:
        mods = _model_traces(v, case, duration)
        mod = mods[0]
        mw = _window(mod, settle)
        qm = float(np.mean([np.mean(m.q[mw]) for m in mods]))  # the model's expectation
        tol = step + 3 * qse
        try:
            fp = f"model fixed point {mod.extra['model'].fixed_point()['q']:.0f} B"
        except (ValueError, RuntimeError) as e:
            fp = f"no fixed point ({e})"
        rows.append(Row("equilibrium", "hot queue, time mean", par, v, qm, qs, qm - qs, tol,
                        f"one quantisation step Fbmax/63 = {step:.0f} B (the CP cannot resolve "
                        f"Fb within it) + 3 x batch-means SE of the simulation ({qse:.0f} B)",
                        abs(qm - qs) <= tol, "B",
                        fp + ("" if len(mods) == 1 else f"; model: mean of {len(mods)} seeds"),
                        key=_key("equilibrium", "queue", case, v)))  # fmt: skip
        rm = float(np.mean([np.mean(m.flow_thr[0, mw]) for m in mods]))
        tol = (3 * ase + res) / rm
        rows.append(Row("equilibrium", "per-flow rate (mean over flows)", par, v, rm, am,
                        (rm - am) / rm, tol, "3 x batch-means SE of the flow-averaged rate + "
                        "the resolution of one frame per window (relative)",
                        abs(rm - am) / rm <= tol, "bit/s; error relative",
                        "delivered by the port / N: the model's is C/N wherever its queue holds "
                        "a backlog, so the row checks the port's utilisation, not the rates",
                        key=_key("equilibrium", "rate", case, v)))  # fmt: skip
    return rows


def check_oscillation(
    case: Case,
    variants,
    duration=DURATION,
    settle=SETTLE,
    seeds=(0,),
    period_duration=PERIOD_DURATION,
):
    """Stable vs sustained oscillation (same detector on both traces) and the period; each
    side is the majority class and the median period over its seeds (the simulator's
    ``seeds``, a stochastic model's :func:`model_seeds`). The class is judged over
    ``settle`` .. ``duration``; where both sides are unstable the period is measured on the
    same runs continued to ``period_duration`` (:data:`PERIOD_DURATION`)."""
    sims = [sim_trace(case, duration, s) for s in seeds]
    os_ = _pooled(_detect(sims, case, settle), "simulated")
    par = case.label(
        f"window {settle:g}-{duration:g} s"
        + ("" if len(seeds) == 1 else f", {len(seeds)} simulated seeds")
    )
    rows = []
    for v in variants:
        om = _pooled(_detect(_model_traces(v, case, duration), case, settle), "model")
        lin, lin_period, _ = _linear(model_of(v, case))
        same = class_group(om["verdict"]) == class_group(os_["verdict"])
        rows.append(Row("oscillation", "stable / sustained oscillation", par, v,
                        om["verdict"], os_["verdict"], "" if same else "differ", "same class",
                        "classes from fixed thresholds (ACF >= 0.5 and std >= Qeq/4, or queue "
                        "empty >= 1 % of the time); oscillating and underflow count as "
                        "unstable; idle (as often empty, std under one frame: no queue) "
                        "matches idle only; a stochastic side's class is its majority over "
                        "seeds",
                        same, "", f"linearised: {lin}, sim std {os_['std']:.0f} B"
                        f"{os_['votes']}, model std {om['std']:.0f} B{om['votes']}",
                        key=_key("oscillation", "class", case, v)))  # fmt: skip
        if om["verdict"] != "stable" and os_["verdict"] != "stable":
            long = max(duration, period_duration)
            sl = [sim_trace(case, long, s, dt=PERIOD_BIN) for s in seeds]
            ps = _pooled(_detect(sl, case, settle), "simulated")
            pm = _pooled(_detect(_model_traces(v, case, long, dt=PERIOD_BIN), case, settle),
                         "model")  # fmt: skip
            tm, ts = pm["period_zc"], ps["period_zc"]
            spread = ps["period_spread"] if math.isfinite(ps["period_spread"]) else 0.0
            tol = min(2 * sl[0].dt + spread, 0.25 * ts)  # the periods' own trace bins
            rows.append(Row("oscillation", f"oscillation period (mean cycle, {settle:g}-"
                            f"{long:g} s)", par, v, tm, ts, tm - ts, tol,
                            f"2 trace bins of {sl[0].dt * 1e6:g} us + the simulated "
                            "cycle-to-cycle spread (std of the same full-cycle lengths), at "
                            "most 25 % of the simulated period", abs(tm - ts) <= tol, "s",
                            f"mean full-cycle length between mean crossings; ACF-peak lags "
                            f"model {pm['period_acf'] * 1e3:.2f} ms, sim "
                            f"{ps['period_acf'] * 1e3:.2f} ms (ACF peak {ps['acf_peak']:.2f}); "
                            f"linearised phase-crossover period {lin_period * 1e3:.2f} ms"
                            f"{ps['spread']}{pm['spread']}",
                            key=_key("oscillation", "period", case, v)))  # fmt: skip
    return rows


def _model_traces(variant: str, case: Case, duration: float, runs=None,
                  dt: float = 50e-6) -> list[Trace]:  # fmt: skip
    """The model's trajectories at ``case``, one per seed of :func:`model_seeds`."""
    return [model_trace(variant, case, duration, dt, seed=k)
            for k in model_seeds(variant, case, runs)]  # fmt: skip


def _detect(traces, case: Case, settle: float) -> list[dict]:
    """The oscillation detector on each trace's queue after ``settle``."""
    return [
        oscillation(t.q[_window(t, settle)], t.dt, case.params.qeq, empty=case.params.frame_size)
        for t in traces
    ]


def _pooled(res: list[dict], side: str) -> dict:
    """One ``side``'s oscillation from the detector's outputs ``res``, one per seed: the majority
    class (the most frequent unstable class when most seeds are unstable) with the median
    std, and the median period, cycle-to-cycle spread, ACF-peak lag and peak of the seeds in
    that class; ``votes`` says how many seeds were unstable and ``spread`` the range of their
    cycle lengths where there are several."""
    unstable = [o for o in res if o["verdict"] != "stable"]
    if 2 * len(unstable) > len(res):
        kinds = [o["verdict"] for o in unstable]
        verdict = max(sorted(set(kinds)), key=kinds.count)
        pool = unstable
    else:
        verdict, pool = "stable", [o for o in res if o["verdict"] == "stable"]
    out = {"verdict": verdict, "std": float(np.median([o["std"] for o in pool])),
           "votes": "" if len(res) == 1 else f", {len(unstable)} of {len(res)} {side} seeds "
           "unstable"}  # fmt: skip
    for key in ("period_zc", "period_acf", "period_spread", "acf_peak"):
        vals = [o[key] for o in pool if math.isfinite(o[key])]
        out[key] = float(np.median(vals)) if vals else math.nan
    cycles = [o["period_zc"] for o in pool if math.isfinite(o["period_zc"])]
    out["spread"] = ("" if len(cycles) < 2 else f"; {side}: median of {len(cycles)} seeds, "
                     f"{min(cycles) * 1e3:.2f}-{max(cycles) * 1e3:.2f} ms")  # fmt: skip
    return out


def sim_unstable(case: Case, duration=DURATION, settle=SETTLE, seeds=(0,)) -> bool:
    """Simulated verdict at one RTT: oscillating or underflow in a majority of ``seeds``."""
    unstable, runs = sim_odds(case, duration, settle, seeds)
    return 2 * unstable > runs


def model_unstable(variant: str, case: Case, duration=DURATION, settle=SETTLE) -> bool:
    """The model's verdict at one RTT, from its trajectories and the same detector: the
    majority over :func:`model_seeds` (its own verdict's seeds where it is stochastic, the
    one trajectory where it is not)."""
    unstable, runs = _odds(_model_traces(variant, case, duration), case, settle)
    return 2 * unstable > runs


def model_odds(variant: str, case: Case, duration=DURATION, settle=SETTLE) -> tuple[int, int]:
    """(unstable runs, runs) of the model at one RTT, by the same detector: over
    ``config.defaults["validation.boundary_seeds"]`` seeds where the model is stochastic,
    the one trajectory where it is not."""
    from qcnmodel import config

    runs = int(config.defaults["validation.boundary_seeds"])
    return _odds(_model_traces(variant, case, duration, runs), case, settle)


def _odds(traces, case: Case, settle: float) -> tuple[int, int]:
    """(unstable runs, runs) among ``traces`` by the oscillation detector."""
    res = _detect(traces, case, settle)
    return sum(o["verdict"] != "stable" for o in res), len(res)


def _scan_odds(count, grid, bisect_steps):
    """Scan ``grid`` then bisect on the majority of ``count(rtt) -> (unstable, runs)``;
    ``(counts by RTT, (crossing, lo, hi))`` with the crossing of the odds at one half
    (:func:`~qcnmodel.analysis.boundary.odds_crossing`)."""
    counts: dict[float, tuple[int, int]] = {}

    def says(r):
        counts[r] = count(r)
        return 2 * counts[r][0] > counts[r][1]

    scan_boundary(says, grid, bisect_steps)
    return counts, odds_crossing([u / n for u, n in counts.values()], list(counts), full=True)


def _bracket_text(lo, hi) -> str:
    if not math.isfinite(hi):
        return f"> {lo * 1e6:.0f} us"
    if lo <= 0:
        return f"< {hi * 1e6:.0f} us (unstable at every RTT scanned)"
    return f"[{lo * 1e6:.0f}, {hi * 1e6:.0f}] us"


def _boundary_agrees(value: float, lo: float, hi: float, first: float) -> bool:
    """Within the simulated bracket +-10 %; 'unstable at every RTT' and 'stable beyond the
    scan' agree with the same statements."""
    if not math.isfinite(hi):
        return value >= 0.9 * lo
    if lo <= 0:  # the simulated queue oscillates at the first RTT scanned
        return value <= 1.1 * first
    return 0.9 * lo <= value <= 1.1 * hi


def sim_odds(case: Case, duration=DURATION, settle=SETTLE, seeds=(0,)) -> tuple[int, int]:
    """(unstable runs, runs) of the simulator at one RTT over ``seeds``, by the detector."""
    return _odds([sim_trace(case, duration, seed) for seed in seeds], case, settle)


def _odds_text(counts: dict) -> str:
    return ", ".join(f"{r * 1e6:.0f}: {u}/{n}" for r, (u, n) in sorted(counts.items()))


def check_boundary(case: Case, variants, grid, bisect_steps=2, duration=DURATION, seeds=(0,)):
    """Critical RTT: the simulator's bracket against the model's trajectories scanned the same
    way (same RTTs, bisection and detector) and against its linearised critical RTT.

    Each side's scan counts its unstable runs at each RTT (the simulator's ``seeds``, a
    stochastic model's ``validation.boundary_seeds``), bisects on their majority, and places
    its boundary where those odds pass one half (:func:`~qcnmodel.analysis.boundary.
    odds_crossing`); the simulated bracket is the two RTTs scanned around that crossing."""
    sim_counts, (_, lo, hi) = _scan_odds(
        lambda r: sim_odds(case.with_rtt(r), duration, seeds=seeds), grid, bisect_steps
    )
    par = case.label(f"scan {len(sim_counts)} RTTs x {len(seeds)} seed(s), odds of an "
                     "unstable run", rtt=False)  # fmt: skip
    pts_text = _odds_text(sim_counts)
    reason = ("the simulated bracket [lo, hi] (the RTTs scanned around the one where the odds "
              "of an unstable run pass 1/2) widened by 10 % ([0.9 lo, 1.1 hi]); 'unstable at "
              "every RTT' when the first RTT scanned oscillates")  # fmt: skip
    first = float(grid[0])
    rows = []
    for v in variants:
        counts, (mid, mlo, mhi) = _scan_odds(
            lambda r, v=v: model_odds(v, case.with_rtt(r), duration), grid, bisect_steps
        )
        ok = _boundary_agrees(mid, lo, hi, first) if math.isfinite(mid) else not math.isfinite(hi)
        value = _bracket_text(mlo, mhi)
        if 0 < mid < math.inf:
            value = f"{mid * 1e6:.0f} us (odds 1/2 in {value})"
        rows.append(Row("boundary", "stability boundary (model trajectories, same scan)", par, v,
                        value, _bracket_text(lo, hi), "" if ok else "differ", "+-10 %",
                        reason + "; the model's boundary where its odds of an unstable run "
                        "pass 1/2 (isotonic fit over the RTTs scanned, log-interpolated)", ok,
                        "", f"sim unstable runs: {pts_text}; model unstable runs: "
                        + _odds_text(counts),
                        key=_key("boundary", "trajectories", case.with_rtt(0.0), v)))  # fmt: skip
        model = model_of(v, case.with_rtt(100e-6))
        _, _, crit = _linear(model)
        if math.isnan(crit):  # the trajectories cycle from their search's first RTT
            ok = lo <= 0  # as the packets do at the first RTT scanned
        else:
            ok = _boundary_agrees(crit, lo, hi, first) if math.isfinite(crit) else not (
                math.isfinite(hi))  # fmt: skip
        how = boundary_method(model)
        if how != "linearisation":
            note = ("the critical RTT that margins, check and the report give: where the "
                    "odds of an unstable run of the model's trajectories pass one half "
                    "(qcnmodel.trajectory_critical_rtt)"
                    + ("; none: unstable from the search's first RTT" if math.isnan(crit)
                       else ""))  # fmt: skip
        else:
            note = "negative: the equilibrium is unstable at every RTT" if crit < 0 else ""
        rows.append(Row("boundary", f"critical RTT ({how})", par, v, crit,
                        _bracket_text(lo, hi), "" if ok else "differ", "+-10 %", reason, ok, "s",
                        note, key=_key("boundary", "linear", case.with_rtt(0.0), v)))  # fmt: skip
    return rows


def _median_time(times):
    """The median seed's time (an odd number of seeds; None, never, ranks last)."""
    ranked = sorted(math.inf if x is None else x for x in times)
    t = ranked[len(ranked) // 2]
    return None if math.isinf(t) else t


def check_recovery(case: Case, hotspot, duration, variants, seeds=(0,)):
    """Recovery time after the hotspot ends (constant-rate sources, line/N each): the median
    over the simulator's ``seeds`` (at N = 10, 10 Gb/s, seeds 0-6 recover in 70, 164, 85,
    84, 90, 89 and 175 ms) against the median over a stochastic model's seeds."""
    target = case.line  # min(port rate = line, offered = N * line / N)
    sts = []
    for seed in seeds:
        sim = sim_trace(case, duration, seed, 1e-3, "constant", hotspot)
        sts.append(recovery_time(sim.t, sim.thr, sim.dt, hotspot[1], target))
    ts = _median_time(sts)
    par = case.label(
        f"hotspot {hotspot[0]:g}-{hotspot[1]:g} s"
        + ("" if len(seeds) == 1 else f", {len(seeds)} simulated seeds")
    )
    pr = case.params
    rows = []
    for v in variants:
        tms = []
        for k in model_seeds(v, case):
            mod = model_trace(v, case, duration, 1e-3, "constant", hotspot, seed=k)
            tms.append(recovery_time(mod.t, mod.thr, mod.dt, hotspot[1], target))
        tm = _median_time(tms)
        key = _key("recovery", "time", case, v)
        if ts is None or tm is None:
            rows.append(Row("recovery", "recovery time", par, v,
                            "never" if tm is None else tm, "never" if ts is None else ts,
                            "-", "-", "no recovery within the run", ts is None and tm is None,
                            "s", key=key))  # fmt: skip
            continue
        tol = min(pr.jitter * ts + 11e-3, 0.15 * ts)
        rows.append(Row("recovery", "recovery time", par, v, tm, ts, tm - ts, tol,
                        f"cycle jitter J = {pr.jitter:g} of the simulated time (every "
                        "byte-counter and timer cycle is scaled by U(1-J, 1+J)) + the metric's "
                        "10 ms averaging window + one 1 ms bin, at most 15 % of the simulated "
                        "time", abs(tm - ts) <= tol, "s",
                        "; ".join(x for x in (_seeds_note(tms), _sim_note(sts)) if x),
                        key=key))  # fmt: skip
    return rows


def _sim_note(values) -> str:
    """The simulated seeds' times a median was taken over (empty for one seed)."""
    if len(values) == 1:
        return ""
    shown = ", ".join("never" if x is None else f"{x * 1e3:.0f}" for x in values)
    return f"simulated median of {len(values)} seeds (ms: {shown})"


def _seeds_note(values) -> str:
    """What a stochastic model's median was taken over (empty for one trajectory)."""
    if len(values) == 1:
        return ""
    shown = ", ".join("never" if x is None else f"{x * 1e3:.0f}" for x in values)
    return f"median of {len(values)} model seeds (ms: {shown})"


def check_rtt_classes(n_each=5, rtts=(50e-6, 500e-6), seeds=(0, 1, 2), duration=1.0,
                      settle=0.3) -> list[Row]:  # fmt: skip
    """Two flow classes with different RTTs: ratio of the mean per-flow rates (short / long).

    The flow-class model (:class:`~qcnmodel.models.qcn_classes.QCNClassesFluidModel`, the
    cycle-averaged equations) predicts RTT-fair rates at equilibrium (ratio 1). Simulated
    ratio: mean over seeds; tolerance 3 x its standard error across seeds."""
    from qcnmodel.models.qcn_classes import QCNClassesFluidModel
    from qcnmodel.sim.api import simulate
    from qcnmodel.validation.network import bottleneck_spec

    n = 2 * n_each
    ratios, spreads = [], []
    for seed in seeds:
        spec = bottleneck_spec(n, [rtts[0]] * n_each + [rtts[1]] * n_each, CAPACITY, LINE)
        r = simulate(spec, duration=duration, seed=seed, bin_width=1e-3)
        ft = r.dataset.flow_throughput.values[:, int(round(settle / 1e-3)) :].mean(axis=1)
        ratios.append(ft[:n_each].mean() / ft[n_each:].mean())
        spreads.append((ft.min() / ft.mean(), ft.max() / ft.mean()))
    m = QCNClassesFluidModel(classes=((rtts[0], n_each), (rtts[1], n_each)), capacity=CAPACITY)
    fp = m.fixed_point()["rate_current"]
    model = float(fp[0] / fp[1])
    sim = float(np.mean(ratios))
    se = float(np.std(ratios, ddof=1) / math.sqrt(len(ratios))) if len(ratios) > 1 else math.nan
    par = (
        f"{n_each}+{n_each} flows, RTT {rtts[0] * 1e6:g} / {rtts[1] * 1e6:g} us, "
        f"C={CAPACITY / 1e9:g} Gb/s, {len(seeds)} seeds, window {settle:g}-{duration:g} s"
    )
    lo = min(a for a, _ in spreads)
    hi = max(b for _, b in spreads)
    return [Row("rtt-classes", "rate ratio short/long RTT class", par, "classes (paper)", model,
                sim, model - sim, 3 * se, "3 x standard error of the ratio across seeds",
                abs(model - sim) <= 3 * se, "",
                f"seed ratios {', '.join(f'{x:.3f}' for x in ratios)}; single flows range "
                f"{lo:.2f}..{hi:.2f} of the mean (see the per-flow spread rows)",
                key=_key("rtt-classes", "ratio"))]  # fmt: skip
