"""Matched pairs: the fluid model and the packet simulator on the same parameters.

Every check builds one single-bottleneck network (:mod:`.network`), runs the simulator and
the fluid model (:class:`~qcnmodel.fluid_qcn.QCNFluidModel`, several variants) from the same
start (queue empty, every source at its offered rate), measures both traces with the same
functions (:mod:`.measure`) and returns one :class:`Row` per comparison and model variant.

Operating point (our choice, documented): 802.1Qau defaults, 10 Gb/s links, CP service rate
``C = 5 Gb/s`` (so that N = 1 congests), greedy sources (offer 2 C / N each), unlimited switch
memory (no drops, as in the model). Tolerances are stated per row with their source.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from qcnmodel.fluid_qcn import QCNFluidModel
from qcnmodel.params import QCNParams
from qcnmodel.validation.measure import batch_means, oscillation, recovery_time, scan_boundary
from qcnmodel.validation.network import bottleneck_spec, source_rate

__all__ = [
    "CAPACITY",
    "LINE",
    "VARIANTS",
    "Row",
    "Trace",
    "check_boundary",
    "check_equilibrium",
    "check_oscillation",
    "check_recovery",
    "check_rtt_classes",
    "model_trace",
    "reset_width_sensitivity",
    "sim_trace",
]

LINE = 10e9
CAPACITY = 5e9
#: run length and settling time of the equilibrium/oscillation pairs (s): the start from an
#: empty queue at 2 C / N per source takes up to ~0.2 s to settle (N = 1, RTT 500 us)
DURATION, SETTLE = 0.6, 0.3
#: model variants compared: models.md §2 as written, and the improvements of issue 4
VARIANTS = {
    "models.md": {},
    "reset=cnm": {"reset": "cnm"},
    "reset=cnm+lag": {"reset": "cnm", "sampling_lag": True},
    "reset=cnm+lag+enq": {"reset": "cnm", "sampling_lag": True, "enqueue_offset": 1500.0},
    "reset=cnm+lag+enq+timer+hai": {"reset": "cnm", "sampling_lag": True,
                                    "enqueue_offset": 1500.0, "timer": True, "hai": True,
                                    "halving": True, "quantise": "smooth"},
    "reset=cnm+lag+enq+timer+hai+mem": {"reset": "cnm", "sampling_lag": True,
                                        "enqueue_offset": 1500.0, "timer": True, "hai": True,
                                        "halving": True, "quantise": "smooth",
                                        "stage_memory": True},
}  # fmt: skip


@dataclass
class Row:
    """One comparison (a row of the report and of ``--json``)."""

    check: str
    quantity: str
    parameters: str
    model_variant: str
    model: object
    simulated: object
    error: object
    tolerance: object
    tolerance_reason: str
    passed: bool
    units: str = ""
    note: str = ""

    def as_dict(self) -> dict:
        """JSON-ready dict (numpy scalars converted, non-finite floats -> None)."""
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            d[k] = v
        d["passed"] = bool(d["passed"])
        return d


@dataclass
class Trace:
    """A binned trace (uniform grid ``dt``) of the hot queue and throughput, plus rates."""

    t: np.ndarray  # bin end times, s
    q: np.ndarray  # bytes
    thr: np.ndarray  # CP departure rate, bit/s
    flow_thr: np.ndarray  # [flow, time] bit/s (model: one symmetric flow)
    dt: float
    extra: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=256)
def sim_trace(n, rtt, capacity=CAPACITY, line=LINE, duration=0.6, seed=0, dt=50e-6,
              demand="greedy", hotspot=(0.0, math.inf), preset="802.1qau") -> Trace:  # fmt: skip
    """Simulate the bottleneck (cached by arguments) and return its binned trace."""
    from qcnmodel.sim.api import simulate

    spec = bottleneck_spec(n, rtt, capacity, line, demand, hotspot)
    r = simulate(spec, params=QCNParams.preset(preset), duration=duration, seed=seed,
                 bin_width=dt)  # fmt: skip
    ds = r.dataset
    return Trace(
        t=ds.time.values, q=ds.hot_queue_mean.values, thr=ds.hot_port_throughput.values,
        flow_thr=ds.flow_throughput.values, dt=dt,
        extra={"cr": ds.cr.values, "recovery_time_s": r.metrics["recovery_time_s"],
               "wall_s": r.wall_s},
    )  # fmt: skip


@functools.lru_cache(maxsize=256)
def model_trace(variant, n, rtt, capacity=CAPACITY, line=LINE, duration=0.6, dt=50e-6,
                demand="greedy", hotspot=None, preset="802.1qau") -> Trace:  # fmt: skip
    """Integrate the fluid model ``variant`` from the simulator's start and bin it."""
    params = QCNParams.preset(preset).replace(line_rate=line)
    cap0 = capacity if hotspot is None else line
    m = QCNFluidModel(params, rtt=rtt, n_flows=n, capacity=cap0, **VARIANTS[variant])
    r0 = source_rate(n, capacity, line, demand)
    hs = None if hotspot is None else (hotspot[0], hotspot[1], capacity)
    ds = m.simulate(duration, x0={"q": 0.0, "rate_current": r0, "rate_target": r0},
                    hotspot=hs, record_dt=dt)  # fmt: skip
    t = ds.time.values
    q, rc = ds.q.values, ds.rate_current.values
    cap = np.full_like(t, cap0)
    if hotspot is not None:
        cap[(t >= hotspot[0]) & (t < hotspot[1])] = capacity
    arr = np.minimum(n * rc, n * r0 if demand == "constant" else np.inf)
    dep = np.where(q > 0, cap, np.minimum(arr, cap))
    # bin averages over (t_{k-1}, t_k] like the simulator's bins (trapezoid on the grid)
    qb = 0.5 * (q[1:] + q[:-1])
    db = 0.5 * (dep[1:] + dep[:-1])
    return Trace(t=t[1:], q=qb, thr=db, flow_thr=(db / n)[None, :], dt=dt,
                 extra={"rc": rc[1:], "model": m})  # fmt: skip


def _window(tr: Trace, settle: float) -> slice:
    return slice(int(round(settle / tr.dt)), None)


def _fmt_params(n, rtt, capacity=CAPACITY, line=LINE, extra=""):
    s = f"N={n}, RTT={rtt * 1e6:g} us, C={capacity / 1e9:g} Gb/s, line={line / 1e9:g} Gb/s"
    return s + (f", {extra}" if extra else "")


def check_equilibrium(n, rtt, variants, duration=DURATION, settle=SETTLE, seed=0) -> list[Row]:
    """Mean hot queue and per-flow rate after ``settle``: model trajectory vs simulation."""
    pr = QCNParams()
    sim = sim_trace(n, rtt, duration=duration, seed=seed)
    w = _window(sim, settle)
    qs, qse = batch_means(sim.q[w])
    step = pr.fb_max / pr.fb_full_scale
    flow_means = [batch_means(f[w]) for f in sim.flow_thr]
    rows = []
    par = _fmt_params(n, rtt, extra=f"window {settle:g}-{duration:g} s, seed {seed}")
    for v in variants:
        mod = model_trace(v, n, rtt, duration=duration)
        mw = _window(mod, settle)
        qm = float(np.mean(mod.q[mw]))
        tol = step + 3 * qse
        fp = mod.extra["model"].fixed_point()["q"]
        rows.append(Row("equilibrium", "hot queue, time mean", par, v, qm, qs, qm - qs, tol,
                        f"one quantisation step Fbmax/63 = {step:.0f} B (the CP cannot resolve "
                        f"Fb within it) + 3 x batch-means SE of the simulation ({qse:.0f} B)",
                        abs(qm - qs) <= tol, "B", f"model fixed point {fp:.0f} B"))  # fmt: skip
        rm = float(np.mean(mod.flow_thr[0, mw]))
        errs = [abs(m - rm) / rm for m, _ in flow_means]
        se = max(s for _, s in flow_means) / rm
        i = int(np.argmax(errs))
        am, ase = batch_means(sim.flow_thr[:, w].mean(axis=0))
        res = 8.0 * pr.frame_size / (duration - settle)  # one frame per window, bit/s
        tol = (3 * ase + res) / rm
        rows.append(Row("equilibrium", "per-flow rate (mean over flows)", par, v, rm, am,
                        (rm - am) / rm, tol, "3 x batch-means SE of the flow-averaged rate + "
                        "the resolution of one frame per window (relative)",
                        abs(rm - am) / rm <= tol, "bit/s; error relative"))  # fmt: skip
        tol = 3 * se + res / rm
        rows.append(Row("equilibrium", "per-flow rate (worst flow)", par, v, rm,
                        flow_means[i][0], errs[i], tol,
                        "3 x batch-means SE of the worst flow's mean rate + one frame per "
                        "window (relative)", errs[i] <= tol, "bit/s; error relative"))  # fmt: skip
    return rows


def _linear(model: QCNFluidModel) -> tuple[str, float]:
    mg = model.loop().margins()
    verdict = "stable" if mg.phase_margin_deg > 0 else "oscillating"
    period = 2 * math.pi / mg.phase_crossover_rad_s if mg.phase_crossover_rad_s else math.nan
    return verdict, period


def check_oscillation(n, rtt, variants, duration=DURATION, settle=SETTLE, seed=0) -> list[Row]:
    """Stable vs sustained oscillation (same detector on both traces) and the period."""
    pr = QCNParams()
    sim = sim_trace(n, rtt, duration=duration, seed=seed)
    os_ = oscillation(sim.q[_window(sim, settle)], sim.dt, pr.qeq)
    par = _fmt_params(n, rtt, extra=f"window {settle:g}-{duration:g} s")
    rows = []
    for v in variants:
        mod = model_trace(v, n, rtt, duration=duration)
        om = oscillation(mod.q[_window(mod, settle)], mod.dt, pr.qeq)
        lin, lin_period = _linear(mod.extra["model"])
        same = (om["verdict"] == "stable") == (os_["verdict"] == "stable")
        rows.append(Row("oscillation", "stable / sustained oscillation", par, v,
                        om["verdict"], os_["verdict"], "" if same else "differ", "same class",
                        "classes from fixed thresholds (ACF >= 0.5 and std >= Qeq/4, or queue "
                        "empty >= 1 % of the time); oscillating and underflow count as unstable",
                        same, "", f"linearised: {lin}, sim std {os_['std']:.0f} B, "
                        f"model std {om['std']:.0f} B"))  # fmt: skip
        if om["verdict"] != "stable" and os_["verdict"] != "stable":
            tm, ts = om["period_acf"], os_["period_acf"]
            tol = 2 * sim.dt + (os_["period_spread"] if math.isfinite(os_["period_spread"])
                                else 0.0)  # fmt: skip
            rows.append(
                Row(
                    "oscillation",
                    "oscillation period (ACF peak)",
                    par,
                    v,
                    tm,
                    ts,
                    tm - ts,
                    tol,
                    "2 trace bins + the simulated cycle-to-cycle spread "
                    "(std of full-cycle lengths between mean crossings)",
                    abs(tm - ts) <= tol,
                    "s",
                    f"linearised phase-crossover period {lin_period * 1e3:.2f} ms",
                )
            )
    return rows


def sim_unstable(n, rtt, duration=DURATION, settle=SETTLE, seeds=(0,)) -> bool:
    """Simulated verdict at one RTT: oscillating or underflow in a majority of ``seeds``."""
    votes = 0
    for seed in seeds:
        sim = sim_trace(n, float(rtt), duration=duration, seed=seed)
        o = oscillation(sim.q[_window(sim, settle)], sim.dt, QCNParams().qeq)
        votes += o["verdict"] != "stable"
    return 2 * votes > len(seeds)


def check_boundary(n, variants, grid, bisect_steps=2, duration=DURATION, seeds=(0,)) -> list[Row]:
    """Critical RTT: linearised model vs the RTT where the simulated queue starts to oscillate
    persistently or underflow (scan of ``grid`` then geometric bisection)."""
    lo, hi, pts = scan_boundary(lambda r: sim_unstable(n, r, duration, seeds=seeds), grid,
                                bisect_steps)  # fmt: skip
    gap = 8 * 1500 / (2 * CAPACITY / n)
    par = _fmt_params(n, 0.0).replace("RTT=0 us, ", "")
    par += f", scan {len(pts)} RTTs x {len(seeds)} seed(s), majority verdict"
    rows = []
    for v in variants:
        m = QCNFluidModel(QCNParams(), rtt=100e-6, n_flows=n, capacity=CAPACITY, **VARIANTS[v])
        # the critical loop delay minus the model's own sampling lag = the critical RTT
        crit = m.loop().margins().critical_delay_s - m.sampling_lag_s
        if math.isfinite(hi) and lo > 0:
            mid = 0.5 * (lo + hi)
            tol = 0.5 * (hi - lo) + gap
            ok, err = abs(crit - mid) <= tol, crit - mid
            simv = mid
        else:
            ok, err = False, "bracket open"
            simv = f"> {lo * 1e6:g} us" if not math.isfinite(hi) else f"< {hi * 1e6:g} us"
        rows.append(Row("boundary", "critical RTT", par, v, crit, simv, err,
                        0.5 * (hi - lo) + gap if math.isfinite(hi) else "-",
                        f"half the simulated bracket [{lo * 1e6:.0f}, {hi * 1e6:.0f}] us + the "
                        f"rate limiter's half frame gap at the fair rate ({gap * 1e6:.1f} us, a "
                        "loop lag the model lacks)", ok, "s",
                        "sim points: " + ", ".join(f"{r * 1e6:.0f}{'U' if u else 'S'}"
                                                   for r, u in pts)))  # fmt: skip
    return rows


def check_recovery(n, rtt, line, capacity, hotspot, duration, preset, variants, seed=0):
    """Recovery time after the hotspot ends (constant-rate sources, line/N each)."""
    sim = sim_trace(n, rtt, capacity, line, duration, seed, 1e-3, "constant", hotspot, preset)
    target = line  # min(port rate = line, offered = N * line / N)
    ts = recovery_time(sim.t, sim.thr, sim.dt, hotspot[1], target)
    par = _fmt_params(n, rtt, capacity, line, f"{preset}, hotspot {hotspot[0]:g}-{hotspot[1]:g} s")
    pr = QCNParams.preset(preset)
    rows = []
    for v in variants:
        mod = model_trace(v, n, rtt, capacity, line, duration, 1e-3, "constant", hotspot, preset)
        tm = recovery_time(mod.t, mod.thr, mod.dt, hotspot[1], target)
        if ts is None or tm is None:
            rows.append(Row("recovery", "recovery time", par, v,
                            "never" if tm is None else tm, "never" if ts is None else ts,
                            "-", "-", "no recovery within the run", ts is None and tm is None,
                            "s"))  # fmt: skip
            continue
        tol = pr.jitter * ts + 11e-3
        rows.append(Row("recovery", "recovery time", par, v, tm, ts, tm - ts, tol,
                        f"cycle jitter J = {pr.jitter:g} of the simulated time (every byte-counter "
                        "and timer cycle is scaled by U(1-J, 1+J)) + the metric's 10 ms averaging "
                        "window + one 1 ms bin", abs(tm - ts) <= tol, "s"))  # fmt: skip
    return rows


def reset_width_sensitivity(ns=(1, 10, 100), factors=(0.25, 0.5, 1.0, 2.0, 4.0)) -> dict:
    """Critical RTT (s) of the ``reset=cnm+lag`` model for reset widths ``factor`` x the
    default (1 + w) frames: how much the improvement's one free choice matters."""
    out = {}
    d0 = (1 + QCNParams().w) * QCNParams().frame_size
    for n in ns:
        vals = []
        for f in factors:
            m = QCNFluidModel(QCNParams(), rtt=100e-6, n_flows=n, capacity=CAPACITY,
                              reset="cnm", sampling_lag=True, reset_width=f * d0)  # fmt: skip
            vals.append(m.loop().margins().critical_delay_s - m.sampling_lag_s)
        out[n] = vals
    return {"factors": list(factors), "critical_rtt": out}


def check_rtt_classes(n_each=5, rtts=(50e-6, 500e-6), seeds=(0, 1, 2), duration=1.0,
                      settle=0.3) -> list[Row]:  # fmt: skip
    """Two flow classes with different RTTs: ratio of the mean per-flow rates (short / long).

    The class model (:class:`~qcnmodel.fluid_qcn_classes.QCNClassesFluidModel`) predicts
    RTT-fair rates at equilibrium (ratio 1, any variant). Simulated ratio: mean over seeds;
    tolerance 3 x its standard error across seeds (seed-to-seed spread)."""
    from qcnmodel.fluid_qcn_classes import QCNClassesFluidModel
    from qcnmodel.sim.api import simulate

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
    return [Row("rtt-classes", "rate ratio short/long RTT class", par, "classes (any)", model,
                sim, model - sim, 3 * se, "3 x standard error of the ratio across seeds",
                abs(model - sim) <= 3 * se, "",
                f"seed ratios {', '.join(f'{x:.3f}' for x in ratios)}; single flows range "
                f"{lo:.2f}..{hi:.2f} of the mean (not modelled)")]  # fmt: skip
