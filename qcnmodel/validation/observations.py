"""The seed decks' observations by protocol (scenarios S1, S3, S4, S9, S10, S11), judged.

Every entry of :func:`.observations_eval.evaluate` is one sentence a deck reports about its
hotspot scenarios (the IBM Zurich and Teak Technologies decks), with the simulator runs it
needs, a metric computed from them (:mod:`qcnmodel.validation.obs_metrics`; thresholds fixed
before the runs were looked at, never tuned to flip a verdict) and a verdict:

* ``reproduced`` / ``not reproduced`` -- the metric's condition, stated in the row, holds or not;
* ``partly reproduced`` -- a compound sentence of which some parts hold (the row says which);
* ``not assessable`` -- the simulator does not record the quantity, or the deck's wording has
  no measurable reading (the row gives the reason).

Reductions against the decks (to keep the whole set at about a minute of simulation): the
hotspot lasts 0.2 s (OG: 0.05-0.25 s; scenario defaults 0.9 s for S1, 0.4 s for S3) or 0.3 s
(S4, S9, S10: 0.05-0.35 s, the S4 deck's own length), the runs end 0.15-0.65 s after it, the
chain scenarios run 0.2 s (the deck's plots span 1 s), and each configuration runs with one or
two seeds (``RUNS``).
Comparative statements ("more", "faster", "worse") use the plain ordering of the metric;
"much" means a factor of 2; absolute words have fixed thresholds stated in each row.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from qcnmodel.validation import obs_metrics as M

__all__ = ["RUNS", "Observation", "RunSpec", "Trace", "run_observations", "trace_of"]

#: verdicts
YES, NO, PART, NA = "reproduced", "not reproduced", "partly reproduced", "not assessable"


@dataclass(frozen=True)
class RunSpec:
    """One simulated configuration (run once per seed)."""

    label: str
    scenario: str
    protocol: str
    overrides: tuple = ()
    duration: float = 0.4
    seeds: tuple = (1,)

    def describe(self) -> str:
        over = ", ".join(f"{k}={v}" for k, v in self.overrides)
        return f"{self.scenario} {self.protocol}" + (f" ({over})" if over else "")


@dataclass
class Trace:
    """What the observations need from one :class:`~qcnmodel.sim.api.SimResult`."""

    label: str
    protocol: str
    seed: int
    t: np.ndarray
    q: np.ndarray  # hot queue bin mean (B)
    thr: np.ndarray  # hot port throughput (bit/s)
    arr: np.ndarray  # arrivals at the hot port (bit/s)
    agg: np.ndarray  # aggregate delivered throughput (bit/s)
    drops: np.ndarray  # frames dropped per bin
    flow_thr: np.ndarray  # (hot flows, time) delivered throughput (bit/s)
    service: float  # hot port service rate (bit/s)
    window: tuple  # hotspot (measurement) interval (s)
    summary: dict = field(default_factory=dict)


@dataclass
class Observation:
    """One deck observation and its verdict."""

    oid: str
    deck: str
    scenario: str
    observation: str
    runs: str
    metric: str
    measured: str
    verdict: str
    note: str = ""

    def as_dict(self) -> dict:
        return dict(self.__dict__)


# ------------------------------------------------------------------------------------ runs
_OG_T = (("hotspot_start", 0.05), ("hotspot_stop", 0.25))
_LONG_T = (("hotspot_start", 0.05), ("hotspot_stop", 0.35))
_3P = ("qcn", "ecm", "qcn-sonar")
_DRIFT = (("drift_inc", 4e6), ("drift_period", 20e-3))
_BIG = (("pause", True), ("switch_memory", 1.5e6))


def _runs() -> dict[str, list[RunSpec]]:
    g: dict[str, list[RunSpec]] = {}
    g["S1"] = [RunSpec(f"S1 {p}", "og-hotspot", p, _OG_T, 0.4, (1, 2)) for p in _3P]
    g["S1"] += [RunSpec(f"S1 pause {p} drift={d}", "og-hotspot", p,
                        _OG_T + _BIG + (_DRIFT if d else ()), 0.4)
                for p in ("qcn", "qcn-sonar") for d in (False, True)]  # fmt: skip
    s3 = [RunSpec(f"S3 {p}", "teak-og-hotspot", p, _OG_T, 0.6)
          for p in ("qcn", "qcn-h", "qcn-p", "qcn-hp", "ecm")]  # fmt: skip
    s3.append(RunSpec("S3 qcn hai=off", "teak-og-hotspot", "qcn", _OG_T + (("hai", False),), 0.6))
    s3 += [RunSpec(f"S3 qcn {sr / 1e9:g}G", "teak-og-hotspot", "qcn",
                   _OG_T + (("service_rate", sr),), 0.6) for sr in (0.1e9, 0.5e9, 2e9)]  # fmt: skip
    s3.append(RunSpec("S3 qcn n=20", "teak-og-hotspot", "qcn", _OG_T + (("n_nodes", 20),), 0.6))
    g["S3"] = s3
    s4 = {
        "fixed 1.2% hai=off": (),  # the teak-2007 preset: fixed 1.2 %, HAI off
        "fixed 1.0% hai=off": (("ps_fixed", 0.01),),
        "table hai=off": (("sampling", "table"),),
        "table hai=on": (("sampling", "table"), ("hai", True)),
        "fixed 1.2% hai=on": (("hai", True),),
    }
    g["S4"] = [RunSpec(f"S4 qcn {k}", "teak-scenario-3", "qcn", _LONG_T + v, 1.0)
               for k, v in s4.items()]  # fmt: skip
    g["S9"] = [RunSpec(f"S9 {p} rtt={r * 1e6:g}us{' pause' if pz else ''}", "ig-hotspot", p,
                       _LONG_T + (("rtt", r),) + (_BIG if pz else ()), 0.4, (1, 2))
               for pz in (False, True) for r in (5e-6, 50e-6, 500e-6) for p in _3P
               if not (pz and r > 100e-6)]  # fmt: skip
    g["S10"] = [RunSpec(f"S10 {p} rtt={r * 1e6:g}us", "ig-hotspot-100", p,
                        _LONG_T + (("rtt", r),), 0.4, (1, 2))
                for r in (50e-6, 500e-6) for p in _3P]  # fmt: skip
    g["S11"] = [RunSpec(f"S11 {p}", "twenty-stage", p, (), 0.2) for p in _3P]
    g["S11"] += [RunSpec(f"S11 teak {p}", "twenty-stage-teak", p, (), 0.2)
                 for p in ("qcn", "qcn-p", "qcn-sp", "qcn-pp", "ecm")]  # fmt: skip
    return g


#: deck group -> run specs
RUNS: dict[str, list[RunSpec]] = _runs()


def _scenario(name: str):
    from qcnmodel.sim.scenarios import SCENARIOS

    if name in SCENARIOS:
        return SCENARIOS[name]
    from qcnmodel.sim.scenarios.catalogue import CATALOGUE

    return CATALOGUE[name]


def _simulate(spec: RunSpec, seed: int):
    """Simulate ``spec`` (also for catalogue scenarios not yet in ``SCENARIOS``)."""
    from qcnmodel.sim.api import simulate
    from qcnmodel.sim.protocols.registry import split_overrides
    from qcnmodel.sim.scenarios import SCENARIOS

    over = dict(spec.overrides)
    if spec.scenario in SCENARIOS:
        return simulate(spec.scenario, protocol=spec.protocol, duration=spec.duration,
                        seed=seed, overrides=over)  # fmt: skip
    import numpy as np

    from qcnmodel.params import QCNParams
    from qcnmodel.sim.network import compile_network

    sc = _scenario(spec.scenario)
    s_over, q_over, p_over = split_overrides(sc, over, spec.protocol)
    net_spec = sc.build(s_over)
    net = compile_network(net_spec)
    # the scenario's preset at its network's line rate and frame size, as a registered
    # scenario runs it (nothing of it is replaced, so nothing is said)
    params = QCNParams.preset(sc.preset).replace(
        line_rate=float(np.max(net.port_rate[net.host_port])), frame_size=net_spec.frame_size
    )
    return simulate(net_spec, protocol=spec.protocol, params=params, duration=spec.duration,
                    seed=seed, overrides={**q_over, **p_over})  # fmt: skip


def trace_of(res, label: str = "", service: float | None = None) -> Trace:
    """Extract a :class:`Trace` from a :class:`~qcnmodel.sim.api.SimResult`.

    ``service`` defaults to the hot port's capacity as the summary measured it
    (throughput / utilisation).
    """
    ds = res.dataset
    m = res.metrics
    if service is None:
        u = m.get("hot_port_utilisation") or 0.0
        service = m["hot_port_throughput_bps"] / u if u > 0 else math.nan
    hot = ds.attrs.get("hot_port", "")
    names = [str(f) for f in ds["flow"].values]
    dst = hot.split("->")[-1] if "->" in hot else None
    picked = [i for i, f in enumerate(names) if dst and f.split("->")[-1] == dst] or list(
        range(len(names))
    )
    s = res.summary()
    return Trace(label, res.protocol, res.seed, ds.time.values, ds.hot_queue_mean.values,
                 ds.hot_port_throughput.values, ds.hot_port_arrivals.values,
                 ds.delivered_throughput.values, ds.drops.values,
                 ds.flow_throughput.values[picked], float(service),
                 tuple(m["measure_window_s"]), s)  # fmt: skip


def _service(spec: RunSpec) -> float:
    from qcnmodel.sim.protocols.registry import split_overrides

    sc = _scenario(spec.scenario)
    s_over, _, _ = split_overrides(sc, dict(spec.overrides), spec.protocol)
    return float(sc.build(s_over).hotspots[0].rate)


def run_observations(groups=None, progress: bool = False) -> dict:
    """Simulate every run of ``groups`` (default all of :data:`RUNS`) for every seed.

    Returns ``{"traces": {(label, seed): Trace}, "wall_s": float, "groups": [...]}``.
    """
    groups = list(groups or RUNS)
    t0 = time.perf_counter()
    traces = {}
    specs = [s for g in groups for s in RUNS[g]]
    n = sum(len(s.seeds) for s in specs)
    done = 0
    for spec in specs:
        svc = _service(spec)
        for seed in spec.seeds:
            res = _simulate(spec, seed)
            traces[(spec.label, seed)] = trace_of(res, spec.label, svc)
            done += 1
            if progress:
                import sys

                print(f"observations {done}/{n}: {spec.label} seed {seed} "
                      f"({res.wall_s:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
    return {"traces": traces, "wall_s": time.perf_counter() - t0, "groups": groups}


# ------------------------------------------------------------------------------- metrics
def _w(tr: Trace):
    return tr.window[0], tr.window[1]


def osc(tr: Trace) -> float:
    """Std of the hot queue over the second half of the hotspot (B)."""
    return M.oscillation_std(tr.t, tr.q, *_w(tr))


def qmean(tr: Trace) -> float:
    """Mean hot queue over the second half of the hotspot (B)."""
    return M.steady_mean(tr.t, tr.q, *_w(tr))


def jit(tr: Trace) -> float:
    """Std of the 1 ms change of the hot queue over the second half of the hotspot (B)."""
    return M.jitter(tr.t, tr.q, *_w(tr))


def react(tr: Trace):
    """Reaction time (s): arrivals at the hot port below 2 x the service rate."""
    return M.reaction_time(tr.t, tr.arr, *_w(tr), tr.service)


def under(tr: Trace) -> float:
    """Underrun fraction of the hotspot bins."""
    return M.underrun_fraction(tr.t, tr.q, tr.thr, *_w(tr), tr.service)


def util(tr: Trace) -> float:
    """Hot-port utilisation over the hotspot."""
    return float(tr.summary.get("hot_port_utilisation") or math.nan)


def drops(tr: Trace) -> float:
    """Frames dropped during the hotspot."""
    a, b = _w(tr)
    m = (tr.t > a) & (tr.t <= b + 1e-12)
    return float(np.sum(tr.drops[m]))


def overload(tr: Trace) -> float:
    """Mean arrival rate at the hot port over the hotspot's 2nd half / service rate."""
    return M.steady_mean(tr.t, tr.arr, *_w(tr)) / tr.service


def agg(tr: Trace) -> float:
    """Aggregate delivered throughput over the second half of the hotspot (bit/s)."""
    return M.steady_mean(tr.t, tr.agg, *_w(tr))


def agg_settle(tr: Trace):
    """Aggregate-throughput settle time after the hotspot start (s)."""
    return M.aggregate_settle_time(tr.t, tr.agg, *_w(tr))


def recovery(tr: Trace):
    """Recovery time after the hotspot end (s; ``None``: not within the run)."""
    return tr.summary.get("recovery_time_s")


def jain(tr: Trace) -> float:
    """Jain's index over the scenario's fair flows during the hotspot."""
    v = tr.summary.get("jain_fairness")
    return math.nan if v is None else float(v)


def fluct(tr: Trace) -> float:
    """Per-flow throughput fluctuation (mean CV of 10 ms means of the hot flows)."""
    return M.flow_fluctuation(tr.t, tr.flow_thr, *_w(tr))


def goodput(tr: Trace) -> float:
    """Sum of the flows' delivered throughputs over the window (bit/s)."""
    return float(sum(tr.summary.get("flow_throughput_bps", {}).values()))


IG_FAIR = {"n1->n7": 5e9, "n2->n6": 2.5e9, "n3->n6": 2.5e9, "n4->n6": 2.5e9, "n5->n6": 2.5e9}


def ig_fairness(tr: Trace) -> float:
    """Jain's index of the IG flows' throughputs over their fair shares (2.5 / 5 Gb/s)."""
    thr = tr.summary.get("flow_throughput_bps", {})
    return M.fair_share_jain([thr.get(f, 0.0) for f in IG_FAIR], list(IG_FAIR.values()))
