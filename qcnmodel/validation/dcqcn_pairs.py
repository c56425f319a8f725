"""DCQCN matched pairs: the DCQCN fluid model and the packet simulator on the same parameters.

**Operating point.** The CoNEXT 2016 parameters (Zhu, Ghobadi, Misra, Padhye, "ECN or Delay:
Lessons Learnt from Analysis of DCQCN and TIMELY"; :class:`~qcnmodel.params.dcqcn.DCQCNParams`:
40 Gb/s, 1000 B packets, Kmin 5 KB, Kmax 200 KB, pmax 1 %, tau 50 us, tau' 55 us, T 55 us,
B 10 MB, R_AI 40 Mb/s, g 1/256), a single 40 Gb/s bottleneck fed by N sources on 40 Gb/s
links, unlimited switch memory (no drops, as in the model), every source backlogged (it
offers the line rate; its rate limiter decides). The simulator starts from an empty queue
with every source at line rate (the rate limiter is created, alpha = 1, at the first CNP).
Runs of 0.15 s, the first 50 ms dropped, 10 us bins.

**Loop delay -> link delays.** tau* is the CP -> RP -> CP loop of the fluid model. With the
mark drawn at dequeue (the simulator's default, as in the simulator released with the CoNEXT
2016 paper), a rate change reaches the queue when its frames arrive (d + 8F/R after they
leave the RP), the departing frame carries the mark to the receiver (8F/C + d_sink), and the
CNP goes back along the path (d_sink + d). With d_sink = d and no switch latency:

    tau* = 4 d + 8F/R + 8F/C,   d = (tau* - 8F/R - 8F/C) / 4

(0.2 us of serialisation each at 40 Gb/s). Marking at enqueue would add the marked frame's
queueing delay q/C, which the model does not have.

**Model variants** (:data:`DCQCN_VARIANTS`, the default first):

* ``packet`` (:data:`DEFAULT_VARIANT`, the registry's default): every flow followed with the
  packet rules on a fluid queue (``trajectories="agents"``,
  :mod:`qcnmodel.models._dcqcn_agents`), its runs from ``verdict_seeds()`` seeds measured
  like the simulated trace (:func:`_agents_point`). It shares the simulator's rule bodies
  (one home for every DCQCN rule; an independent reimplementation checks those against the
  papers), so what it tests is the abstraction: a fluid queue shared in proportion to the
  arrival rates, frames as a fluid, no service granularity. Nothing in it was tuned; it was
  built after the mean field's failing rows had been seen (the idle link, single flows,
  noise coherence and the cliff cycle are what a mean field closes away).
* ``cnp-lag+stage-memory``: the mean field with the CNP window's mean lag tau/2 in the loop
  (``cnp_lag``) and the timer's stage memory (``stage_memory``: AI only after F T without a
  mark), judged by :func:`~qcnmodel.models.dcqcn_regime.regime`; the linearisation of the
  ``packet`` configuration. The CNP lag and the regime analysis were derived before the
  comparison; of two derivations of the stage memory (the mean age of the stage, as in the
  QCN model, and the exact window of F T), the exact window was kept after comparing both
  with the simulator (the mean-age form made the N = 10 periods 15-25 % too long).
* ``coalesce+stage-memory``: the simulator's own notification point, the coalescing rule of
  the SIGCOMM 2015 NIC, as a CNP process (``notification="coalesce"``: the first CNP after a
  quiet spell without lag, then one per interval), with the stage memory. Derived from the
  rule before it was compared, after a run of the simulator with the windowed rule
  (``cnp_mode="window"``) had matched the mean field's cycle period at N = 20 and 64. It
  gets the cycle's period right where ``cnp-lag+stage-memory`` is long, but idles the link
  less than the simulator does.
* ``cnp-lag``: the CNP lag alone, judged by ``regime``.
* ``paper``: the paper's equations judged by ``regime`` (linear margin, limit cycle from a
  cold start, CNP shot noise).
* ``linear``: the paper's equations judged by the exact linearisation alone (stable iff the
  phase margin is positive; the fixed point as the equilibrium).

**Classes.** The validation's detector (:func:`~qcnmodel.validation.measure.oscillation`)
reads both traces with the amplitude reference ``QREF = (Kmin + Kmax)/2`` (DCQCN has no set
point: the middle of the marking ramp). The model's quantities are measured on its cold-start
trajectory when it oscillates, and are the Gaussian CNP-noise predictions otherwise (same
thresholds). The queue empties at least 1 % of the time at every grid point on both sides, so
the detector's class is "underflow" throughout; two more classes are compared:
*coherent* (ACF peak >= ACF_MIN and std >= AMPLITUDE_MIN QREF: the detector's own
thresholds, without its underflow precedence) and *cycle through Kmax* (coherent and the queue
above Kmax, where the marking jumps to 1, at least :data:`CLIFF_MIN` of the time). Both ways
of reading were chosen after the simulated traces had been seen (the simulated N = 2-4 queues
are incoherent noise; the N >= 10 queues cycle through Kmax), and the rows say so.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from qcnmodel import config
from qcnmodel.analysis.timeseries import class_group
from qcnmodel.models import MODELS
from qcnmodel.models._dcqcn_agents import link_delay
from qcnmodel.models._verdict_run import verdict_seeds
from qcnmodel.models.dcqcn import DCQCNFluidModel
from qcnmodel.models.dcqcn_regime import regime
from qcnmodel.models.dcqcn_runs import CLIFF_MIN, cycle_classes, cycle_reference
from qcnmodel.params.dcqcn import DCQCNParams
from qcnmodel.validation.measure import batch_means, oscillation
from qcnmodel.validation.network import bottleneck_spec
from qcnmodel.validation.pairs import Row

__all__ = [
    "CLIFF_MIN",
    "DCQCN_VARIANTS",
    "DEFAULT_VARIANT",
    "FULL_GRID",
    "OTHER_FIELDS",
    "QREF",
    "QUICK_GRID",
    "check_boundary_delay",
    "check_boundary_n",
    "check_equilibrium",
    "check_oscillation",
    "dcqcn_plan",
    "dcqcn_spec",
    "model_point",
    "pair_traces",
    "params_of",
    "run_dcqcn",
    "sim_point",
]

PARAMS = DCQCNParams()
LINE = PARAMS.line_rate
FRAME = int(PARAMS.packet_size)
QREF = cycle_reference(PARAMS)
#: run length, settling time dropped before measuring, and trace bin (s): the every-flow
#: runs' verdict's (one home, ``config.defaults["models.dcqcn_run"]``)
_RUN = config.defaults["models.dcqcn_run"]
DURATION, SETTLE, BIN = float(_RUN["duration"]), float(_RUN["settle"]), float(_RUN["record_dt"])
NS = (2, 4, 10, 20, 64)
TAUS = (25e-6, 50e-6, 85e-6, 100e-6)
FULL_GRID = tuple((n, t) for n in NS for t in TAUS)
QUICK_GRID = ((2, 25e-6), (10, 50e-6))
#: the N grid of the boundary in N, and the N of the boundaries in delay
BOUNDARY_NS = (2, 4, 6, 8, 10, 20, 64)
BOUNDARY_DELAY_NS = (2, 4, 10)
BOUNDARY_SEEDS = (0, 1, 2)
#: the full run's points at other parameters (DCQCN parameter fields as (name, value) pairs,
#: applied to the model and to the simulator, the network's links following the line rate
#: and the frame size), N = 10 at 50 us: a 10 and a 100 Gb/s fabric, and RoCE's 4 KB MTU
OTHER_FIELDS = ((("line_rate", 10e9),), (("line_rate", 100e9),), (("packet_size", 4096.0),))

#: the registry's default configuration, the one every surface uses
DEFAULT_VARIANT = MODELS["dcqcn"].default_variant
#: row label -> DCQCNFluidModel options (module docstring); the first is the default
DCQCN_VARIANTS = {
    DEFAULT_VARIANT: dict(MODELS["dcqcn"].variants[DEFAULT_VARIANT]),
    "cnp-lag+stage-memory": {"cnp_lag": PARAMS.cnp_interval / 2, "stage_memory": True},
    "coalesce+stage-memory": {"notification": "coalesce", "stage_memory": True},
    "cnp-lag": {"cnp_lag": PARAMS.cnp_interval / 2},
    "paper": {},
    "linear": {},
}
#: variants judged by the exact linearisation alone (those with ``trajectories="agents"`` by
#: their every-flow runs, the others by ``regime``)
LINEAR_ONLY = ("linear",)
#: what a variant's rows say about choices made after seeing the simulator
_STAGE = (
    "stage-memory form (exact F T window) chosen over the mean-age form after seeing "
    "both against the simulator"
)
_PROVENANCE = {
    DEFAULT_VARIANT: "every flow with the simulator's rule bodies on a fluid queue, nothing "
    "tuned; built after the mean field's failing rows had been seen, and the rate limiter's "
    "frame clock (a new rate from the next frame) added after its own five failing rows (N = "
    "20 and 64) had been seen",
    "cnp-lag+stage-memory": _STAGE,
    "coalesce+stage-memory": _STAGE + "; the coalescing rule modelled after a windowed-rule "
    "simulation had matched the default's period",
}
ALL = tuple(DCQCN_VARIANTS)


def dcqcn_spec(n: int, tau: float, line: float = LINE, frame: int = FRAME):
    """Bottleneck with source and sink link delays d = (tau* - 8F/R - 8F/C)/4 (module
    docstring); every source offers the line rate."""
    d = link_delay(tau, frame, line, "tau")
    spec = bottleneck_spec(n, 2 * d + 8.0 * frame / line, line, line, frame_size=frame)
    traffic = tuple(dataclasses.replace(t, rate=line) for t in spec.traffic)
    return dataclasses.replace(spec, traffic=traffic)


def params_of(fields=()) -> DCQCNParams:
    """The pairs' parameters with ``fields`` ((name, value) pairs) changed."""
    return dataclasses.replace(PARAMS, **dict(fields)) if fields else PARAMS


def _fields_label(fields) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in fields)


def _fmt(n, tau, extra="", fields=()):
    s = f"N={n}, tau*={tau * 1e6:g} us, C={params_of(fields).line_rate / 1e9:g} Gb/s"
    s += f", {_fields_label(fields)}" if fields else ""
    return s + (f", {extra}" if extra else "")


def _classes(o: dict, above_kmax: float) -> dict:
    return cycle_classes(o, above_kmax, QREF)


@functools.lru_cache(maxsize=512)
def sim_point(n, tau, seed=0, duration=None, overrides=(), fields=()) -> dict:
    """Simulate one point (cached) and measure it: ``duration`` s (default the every-flow
    runs' length at ``tau``, :func:`~qcnmodel.models.dcqcn_runs.run_length_at`: the
    configured 0.15 s with 50 ms of settling up to 125 us, longer beyond), read after the
    settling time.

    Returns
    -------
    dict
        The detector's output plus ``thr`` (bit/s), ``flows`` (per-flow batch means
        [(mean, se)], bit/s), ``flow_avg`` (mean, se), ``q_mean_se``, ``above_kmax`` and the
        classes ``coherent``, ``cliff_cycle``. ``overrides``: DCQCN parameter fields as
        (name, value) pairs (e.g. the simulator's ``mark_at`` and ``cnp_mode``), for the
        simulator only; ``fields``: DCQCN parameter fields of the point (model and simulator
        alike, :data:`OTHER_FIELDS`), the links at its line rate and frames of its size.
    """
    from qcnmodel.models.dcqcn_runs import run_length_at
    from qcnmodel.sim.api import simulate

    long, settle = run_length_at(tau)
    duration = long if duration is None else duration
    pp = params_of(fields)
    spec = dcqcn_spec(n, tau, pp.line_rate, int(pp.packet_size))
    r = simulate(spec, protocol="dcqcn", duration=duration, seed=seed, bin_width=BIN,
                 overrides={**dict(fields), **dict(overrides)})  # fmt: skip
    ds = r.dataset
    o = _measure(ds.hot_queue_mean.values, ds.flow_throughput.values,
                 ds.hot_port_throughput.values, pp.kmax, settle)  # fmt: skip
    o["wall_s"] = r.wall_s
    return o


def _measure(q, flows, thr, kmax=PARAMS.kmax, settle=SETTLE) -> dict:
    """The detector's reading of a trace after ``settle`` s (queue q, per-flow rates
    ``flows`` of shape (n, bins), departure rate ``thr``), as :func:`sim_point` returns it."""
    w = int(round(settle / BIN))
    q = q[w:]
    o = oscillation(q, BIN, QREF)
    ft = flows[:, w:]
    o["q_mean_se"] = batch_means(q)
    o["flows"] = [batch_means(f) for f in ft]
    o["flow_avg"] = batch_means(ft.mean(axis=0))
    o["thr"] = float(thr[w:].mean())
    return _classes(o, float(np.mean(q > kmax)))


@functools.lru_cache(maxsize=512)
def model_point(variant, n, tau, fields=()) -> dict:
    """The model's prediction at one point (``fields``: as :func:`sim_point`).

    Returns
    -------
    dict
        ``verdict`` and the detector's quantities, the classes, ``q_fixed`` (fixed point,
        bytes, or None), ``kind`` (:class:`~qcnmodel.models.dcqcn_regime.Regime` kind,
        "linear" or "agents"), ``escape`` and ``phase_margin_deg``; with every flow followed
        also ``flow_avg`` and ``worst`` (:func:`_agents_point`).
    """
    m = DCQCNFluidModel(params_of(fields), rtt=tau, n_flows=n, **DCQCN_VARIANTS[variant])
    if m.trajectories == "agents":
        return _agents_point(m)
    try:
        q_fixed = m.fixed_point()["q"]
    except ValueError:
        q_fixed = None
    if variant in LINEAR_ONLY:
        try:
            pm = m.loop().margins().phase_margin_deg
        except ValueError:
            pm = math.nan
        stable = bool(pm > 0)
        o = {"verdict": "stable" if stable else "oscillating", "kind": "linear",
             "phase_margin_deg": pm, "q_fixed": q_fixed, "escape": False,
             "mean": q_fixed if q_fixed is not None else math.nan, "thr": LINE}  # fmt: skip
        o.update(acf_peak=float(not stable), std=math.nan, period_acf=math.nan, underflow=0.0)
        o.update(coherent=not stable, above_kmax=math.nan, cliff_cycle=not stable)
        return o
    r = regime(m, QREF, duration=DURATION, settle=SETTLE, dt=BIN)
    o = _classes(r.stats, r.stats["above_kmax"])
    o.update(kind=r.kind, phase_margin_deg=r.phase_margin_deg, q_fixed=q_fixed, escape=r.escape)
    return o


def _agents_point(m) -> dict:
    """The every-flow model's prediction: a stochastic model predicts a distribution, so its
    runs from ``verdict_seeds()`` seeds (as the QCN model's verdict,
    ``config.defaults["models.verdict_run"]``) are measured like the simulated trace, and
    the prediction is their mean (time means, rates, the worst flow's deviation), their
    median (the detector's shape quantities; the period over the coherent runs) and their
    majority (the classes)."""
    seeds = range(verdict_seeds())
    runs = []
    for s in seeds:
        ds = m.simulate(DURATION, method="agents", record_dt=BIN, seed=s)
        runs.append(_measure(ds.q.values, ds.rate_current.values, ds.throughput.values,
                             m.params.kmax))  # fmt: skip

    def mean_se(vals):
        vals = np.asarray(vals, float)
        return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(vals.size))

    def median(key, pool=runs):
        return float(np.median([r[key] for r in pool])) if pool else math.nan

    o = {k: median(k) for k in ("std", "acf_peak", "underflow", "above_kmax")}
    coherent = [r for r in runs if r["coherent"]]
    o.update(
        period_acf=median("period_acf", coherent), period_spread=median("period_spread", coherent)
    )
    o["q_mean_se"] = mean_se([r["q_mean_se"][0] for r in runs])
    o["mean"] = o["q_mean_se"][0]
    o["thr"] = float(np.mean([r["thr"] for r in runs]))
    o["flow_avg"] = mean_se([r["flow_avg"][0] for r in runs])
    o["worst"] = mean_se([_worst(r["flows"])[0] for r in runs])
    for key in ("coherent", "cliff_cycle"):
        o[key] = 2 * sum(r[key] for r in runs) > len(runs)
    kinds = [r["verdict"] for r in runs]
    o["verdict"] = max(sorted(set(kinds)), key=kinds.count)
    o.update(kind="agents", phase_margin_deg=math.nan, q_fixed=None, escape=False,
             runs=len(runs))  # fmt: skip
    return o


def _model_note(variant: str, mod: dict) -> str:
    """The model's kind, and every choice made after seeing the simulator that the row uses."""
    parts = [f"model {mod['kind']}"]
    if mod["kind"] == "bistable":
        parts.append(
            "verdict from the escape rule (noise above Kmax >= 1 % of the time), chosen after "
            "seeing the simulator" + ("" if mod["escape"] else "; no escape here")
        )
    if variant in _PROVENANCE:
        parts.append(_PROVENANCE[variant])
    return "; ".join(parts)


def _where(n, tau, fields=()) -> str:
    """The operating point's part of a row key (the point's fields after the delay)."""
    return f"N={n}|tau={tau * 1e6:g}" + (f"|{_fields_label(fields)}" if fields else "")


def _keyed(rows, where: str) -> list[Row]:
    """Give each row its key (check, quantity, operating point, variant): how the known
    disagreements of :mod:`qcnmodel.validation.findings` find it."""
    for r in rows:
        r.key = f"{r.check}|{r.quantity}|{where}|{r.model_variant}"
    return rows


def check_equilibrium(n, tau, variants=ALL, seed=0, sim_overrides=(), fields=()) -> list[Row]:
    """Time-mean hot queue and per-flow rates after SETTLE: model vs simulation (``fields``:
    the point's DCQCN parameter fields, :data:`OTHER_FIELDS`)."""
    fields = tuple(fields)
    sim = sim_point(n, tau, seed, overrides=tuple(sim_overrides), fields=fields)
    qs, qse = sim["q_mean_se"]
    par = _fmt(n, tau, f"window {SETTLE:g}-{DURATION:g} s, seed {seed}", fields)
    frame = int(params_of(fields).packet_size)
    res = 8.0 * frame / (DURATION - SETTLE)  # one frame per window, bit/s
    am, ase = sim["flow_avg"]
    rows = []
    for v in variants:
        mod = model_point(v, n, tau, fields)
        qm = mod["mean"]
        tol = 3 * qse + frame
        ok = math.isfinite(qm) and abs(qm - qs) <= tol
        fixed = mod["q_fixed"]
        note = (
            _model_note(v, mod)
            + ", fixed point "
            + (f"{fixed:.0f} B" if fixed is not None else "none on the ramp")
        )
        rows.append(Row("dcqcn-equilibrium", "hot queue, time mean", par, v, qm, qs,
                        qm - qs if math.isfinite(qm) else "no equilibrium", tol,
                        f"3 x batch-means SE of the simulation ({qse:.0f} B) + one packet "
                        f"({frame} B: the queue's granularity; DCQCN has no quantiser)",
                        ok, "B", note))  # fmt: skip
        rm = mod["thr"] / n
        tol = (3 * ase + res) / rm
        rows.append(Row("dcqcn-equilibrium", "per-flow rate (mean over flows)", par, v, rm, am,
                        (rm - am) / rm, tol, "3 x batch-means SE of the flow-averaged rate + "
                        "one frame per window (relative)", abs(rm - am) / rm <= tol,
                        "bit/s; error relative", _model_note(v, mod)))  # fmt: skip
        dm, sem = mod.get("worst", (0.0, 0.0))
        ds, ses = _worst(sim["flows"])
        tol = 3 * math.hypot(sem, ses) + res / am
        rows.append(Row("dcqcn-equilibrium", "per-flow rate (worst flow's deviation)", par, v,
                        dm, ds, dm - ds, tol, "3 x the combined batch-means SE of the two "
                        "worst flows' mean rates + one frame per window (relative to the flow "
                        "mean)", abs(dm - ds) <= tol, "relative to the flow mean",
                        _model_note(v, mod) + ("" if "worst" in mod else _SYMMETRIC)))  # fmt: skip
    return _keyed(rows, _where(n, tau, fields))


_SYMMETRIC = "; a symmetric model: no flow deviates"


def _worst(flows) -> tuple[float, float]:
    """(|deviation|, its SE) of the flow farthest from the flows' mean, relative to that mean
    (``flows``: per-flow (mean, batch-means SE))."""
    means = np.array([m_ for m_, _ in flows])
    avg = float(means.mean())
    i = int(np.argmax(np.abs(means - avg)))
    return abs(means[i] - avg) / avg, flows[i][1] / avg


_CLASS_ROWS = (
    ("coherent", "coherent oscillation (ACF and amplitude)",
     "the detector's thresholds (ACF >= 0.5, std >= QREF/4), fixed before any comparison; "
     "reading them without the underflow precedence was decided after seeing that both "
     "sides empty the queue at every point"),
    ("cliff_cycle", "cycle through Kmax (coherent, >= 1 % above Kmax)",
     "class chosen after seeing the simulated traces (N = 2-4 incoherent noise, N >= 10 "
     "cycles through Kmax); the 1 % is the detector's underflow threshold"),
)  # fmt: skip


def check_oscillation(n, tau, variants=ALL, seed=0, sim_overrides=(), fields=()) -> list[Row]:
    """Detector class, coherent oscillation, cycle through Kmax and the period: model vs sim
    (``fields``: as :func:`check_equilibrium`)."""
    fields = tuple(fields)
    sim = sim_point(n, tau, seed, overrides=tuple(sim_overrides), fields=fields)
    par = _fmt(n, tau, f"window {SETTLE:g}-{DURATION:g} s, seed {seed}", fields)
    sim_note = (f"sim std {sim['std']:.0f} B, ACF {sim['acf_peak']:.2f}, empty "
                f"{sim['underflow']:.2f}, above Kmax {sim['above_kmax']:.3f}")  # fmt: skip
    rows = []
    for v in variants:
        mod = model_point(v, n, tau, fields)
        same = class_group(mod["verdict"]) == class_group(sim["verdict"])
        rows.append(Row("dcqcn-oscillation", "stable / unstable (detector class)", par, v,
                        mod["verdict"], sim["verdict"], "" if same else "differ", "same class",
                        "the detector's fixed thresholds (ACF >= 0.5 and std >= QREF/4, or "
                        "empty >= 1 % of the time); oscillating and underflow count as "
                        "unstable", same, "", f"{_model_note(v, mod)}; {sim_note}"))  # fmt: skip
        for key, name, reason in _CLASS_ROWS:
            same = mod[key] == sim[key]
            rows.append(Row("dcqcn-oscillation", name, par, v, mod[key], sim[key],
                            "" if same else "differ", "same class", reason, same, "",
                            f"{_model_note(v, mod)}; model ACF {mod['acf_peak']:.2f}, std "
                            f"{mod['std']:.0f} B; {sim_note}"))  # fmt: skip
        if mod["coherent"] and sim["coherent"] and v not in LINEAR_ONLY:
            tm, ts = mod["period_acf"], sim["period_acf"]
            spread = sim["period_spread"] if math.isfinite(sim["period_spread"]) else 0.0
            tol = 2 * BIN + spread
            rows.append(Row("dcqcn-oscillation", "oscillation period (ACF peak)", par, v, tm,
                            ts, tm - ts, tol, "2 trace bins + the simulated cycle-to-cycle "
                            "spread (std of full-cycle lengths between mean crossings)",
                            abs(tm - ts) <= tol, "s", f"relative error {(tm - ts) / ts:+.1%}; "
                            + _model_note(v, mod)))  # fmt: skip
    return _keyed(rows, _where(n, tau, fields))


def _first(flags, grid):
    """(last value without the class, first value with it) along ``grid``."""
    lo, hi = None, None
    for g, f in zip(grid, flags):
        if f:
            hi = g
            break
        lo = g
    return lo, hi


def _marks(grid, flags):
    return ", ".join(f"{g:g}{'U' if f else 'S'}" for g, f in zip(grid, flags))


def _bracket(lo, hi, unit):
    if hi is None:
        return f"> {lo:g}{unit}"
    return f"< {hi:g}{unit}" if lo is None else f"({lo:g}, {hi:g}]{unit}"


def _boundary_rows(name, unit, grid, sim_flags, variants, points, par):
    """One row per variant: the grid bracket of the first cycle through Kmax."""
    slo, shi = _first(sim_flags, grid)
    rows = []
    for v in variants:
        flags = [p["cliff_cycle"] for p in points[v]]
        mlo, mhi = _first(flags, grid)
        ok = (mlo, mhi) == (slo, shi)
        escape = [g for g, p in zip(grid, points[v]) if p["kind"] == "bistable"]
        note = (f"class: cycle through Kmax (chosen after seeing the simulated traces); sim "
                f"{_marks(grid, sim_flags)}; model {_marks(grid, flags)}")  # fmt: skip
        if escape:
            note += "; escape rule (chosen after seeing the simulator) decides the model at " + (
                ", ".join(f"{g:g}{unit}" for g in escape)
            )
        if v in _PROVENANCE:
            note += "; " + _PROVENANCE[v]
        rows.append(Row("dcqcn-boundary", name, par, v, _bracket(mlo, mhi, unit),
                        _bracket(slo, shi, unit), "" if ok else "differ", "same grid bracket",
                        "the grid step: both sides are evaluated on the same grid, the "
                        "boundary must fall in the same interval", ok, "", note))  # fmt: skip
    return rows


def _majority(n, tau, seeds, overrides=()):
    votes = sum(sim_point(n, tau, s, overrides=tuple(overrides))["cliff_cycle"] for s in seeds)
    return 2 * votes > len(seeds)


def check_boundary_n(tau, ns=BOUNDARY_NS, variants=ALL, seeds=(0,),
                     sim_overrides=()) -> list[Row]:  # fmt: skip
    """Smallest N (on ``ns``) with a cycle through Kmax at loop delay ``tau``: model vs sim
    (majority over ``seeds``)."""
    sim_flags = [_majority(n, tau, seeds, sim_overrides) for n in ns]
    points = {v: [model_point(v, n, tau) for n in ns] for v in variants}
    par = f"tau*={tau * 1e6:g} us, C={LINE / 1e9:g} Gb/s, {len(seeds)} seed(s), majority"
    return _keyed(
        _boundary_rows("stability boundary in N", "", ns, sim_flags, variants, points, par),
        f"tau={tau * 1e6:g}",
    )


def check_boundary_delay(n, taus=TAUS, variants=ALL, seeds=(0,), sim_overrides=()) -> list[Row]:
    """Smallest loop delay (on ``taus``) with a cycle through Kmax at N: model vs sim."""
    sim_flags = [_majority(n, t, seeds, sim_overrides) for t in taus]
    points = {v: [model_point(v, n, t) for t in taus] for v in variants}
    us = [t * 1e6 for t in taus]
    par = f"N={n}, C={LINE / 1e9:g} Gb/s, {len(seeds)} seed(s), majority"
    return _keyed(_boundary_rows("stability boundary in delay", " us", us, sim_flags, variants,
                                 points, par), f"N={n}")  # fmt: skip


def pair_traces(n, tau, window=(0.13, 0.15)):
    """Traces of one point over ``window`` (s) for the report's figure: the simulator (seed 0),
    the default's first run and the mean field (cold start, as its regime analysis), as
    :class:`~qcnmodel.validation.traces.Trace` objects."""
    from qcnmodel.models.dcqcn_regime import cold_start, fluid_trace
    from qcnmodel.sim.api import simulate
    from qcnmodel.validation.traces import Trace

    ds = simulate(dcqcn_spec(n, tau), protocol="dcqcn", duration=DURATION, bin_width=BIN).dataset
    t, q, thr = ds.time.values, ds.hot_queue_mean.values, ds.hot_port_throughput.values
    m = DCQCNFluidModel(PARAMS, rtt=tau, n_flows=n, **DCQCN_VARIANTS[DEFAULT_VARIANT])
    ag = m.simulate(DURATION, record_dt=BIN, seed=0)
    mf = m.replace(trajectories="mean-field")
    traces = {
        "simulator": (t, q, thr),
        DEFAULT_VARIANT: (ag.time.values, ag.q.values, ag.throughput.values),
        "mean field": fluid_trace(mf, DURATION, BIN, cold_start(mf)),
    }
    out = {}
    for name, (t, q, thr) in traces.items():
        sel = (t > window[0]) & (t <= window[1])
        out[name] = Trace(t=t[sel], q=q[sel], thr=thr[sel], flow_thr=np.empty((0, 0)), dt=BIN)
    sim = out.pop("simulator")
    return sim, out


def dcqcn_plan(quick: bool, sim_overrides=()) -> list[tuple]:
    """The DCQCN checks of the validation: (callable, args, kwargs), each returning rows.

    ``quick``: N = 2 at 25 us and N = 10 at 50 us, the boundary in N on 2, 4, 10 at
    50 us and the default's critical RTT at N = 4 and 10 against 25 and 50 us (a few
    seconds); else the full grid (:data:`FULL_GRID`), N = 10 at 50 us at the other
    parameters (:data:`OTHER_FIELDS`), the boundaries in N (at every delay) and in delay
    (N = 2, 4, 10) on three seeds, and the default's critical RTT at every N of
    :data:`BOUNDARY_NS` (:mod:`.dcqcn_critical`; a few minutes). Every check
    compares all of :data:`DCQCN_VARIANTS`. ``sim_overrides``: DCQCN parameter fields for the
    simulator, as (name, value) pairs.
    """
    grid = QUICK_GRID if quick else FULL_GRID
    so = {"sim_overrides": tuple(sim_overrides)}
    out = [(check_equilibrium, pt, dict(so)) for pt in grid]
    out += [(check_oscillation, pt, dict(so)) for pt in grid]
    if not quick:
        for fields in OTHER_FIELDS:
            out += [(check, (10, 50e-6), {"fields": fields, **so})
                    for check in (check_equilibrium, check_oscillation)]  # fmt: skip
    from qcnmodel.validation.dcqcn_critical import LONG_TAUS, check_critical_rtt

    if quick:
        out.append((check_boundary_n, (50e-6,), {"ns": (2, 4, 10), **so}))
        out += [(check_critical_rtt, (n,), {"taus": (25e-6, 50e-6), "seeds": (0,),
                                            "longer": LONG_TAUS, **so})
                for n in (4, 10)]  # fmt: skip
    else:
        seeds = {"seeds": BOUNDARY_SEEDS, **so}
        out += [(check_boundary_n, (t,), dict(seeds)) for t in TAUS]
        out += [(check_boundary_delay, (n,), dict(seeds)) for n in BOUNDARY_DELAY_NS]
        out += [(check_critical_rtt, (n,), {"longer": LONG_TAUS, **seeds}) for n in BOUNDARY_NS]
    return out


def run_dcqcn(quick: bool = True, sim_overrides=()) -> list[Row]:
    """All rows of :func:`dcqcn_plan`."""
    rows = []
    for fn, args, kw in dcqcn_plan(quick, sim_overrides):
        rows += fn(*args, **kw)
    return rows
