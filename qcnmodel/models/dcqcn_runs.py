"""DCQCN's verdict from its every-flow runs: does the queue cycle through Kmax?

At the CoNEXT 2016 parameters the DCQCN queue empties at every operating point of the
validation's grid (N = 2-64 flows, loop delay 25-100 us), in the packets and in the model, so
"stable" against "empties" does not separate the operating points. What does is whether the
queue *cycles through Kmax*, where the marking jumps to 1 and every flow is cut: coherent (the
oscillation detector's own thresholds, autocorrelation peak >= 0.5 and standard deviation >=
a quarter of the reference) and above Kmax at least :data:`CLIFF_MIN` of the time. Below the
boundary the queue is noise that empties; past it, a relaxation cycle through Kmax. The
class was chosen after seeing the simulated traces (N = 2-4 queues are incoherent noise,
N >= 10 cycle through Kmax), and the validation's DCQCN rows say so.

:func:`runs_verdict` runs the every-flow model (``DCQCNFluidModel.simulate(method="agents")``,
from an empty queue with every source at the line rate, as a packet simulation starts) with
seeds 0 .. ``verdict_seeds() - 1`` (``config.defaults["models.verdict_run"]``, as the QCN
model's trajectory verdict) and takes the majority; each run lasts
``config.defaults["models.dcqcn_run"]["duration"]`` and is read after ``["settle"]`` on bin
means of ``["record_dt"]`` (the validation's matched pairs: 0.15 s, 50 ms, 10 us). The
amplitude reference is the middle of the marking ramp, (Kmin + Kmax)/2 (DCQCN has no set
point).

**Long loops.** The cycle's period grows with the loop delay (the model's own runs, N = 2 at
1 ms: 24 ms, 24 RTTs), so a fixed 0.1 s window would hold only a few periods past a few
hundred us, and a 50 ms settling time would not outlast the start's transient (every source
at the line rate for one loop delay before the first CNP arrives). :func:`run_length`
stretches both: at least ``["settle_delays"]`` RTTs of settling and ``["window_delays"]`` of
window (50 and 400: 16 periods of 24 RTTs, as at the validation's 100 us, where the 0.1 s
window holds some 20 periods). The validation's grid (25-100 us) keeps the fixed lengths.

:class:`RunsJudged` makes the runs the model's stability boundary: the trajectory machinery
of :mod:`qcnmodel.analysis.boundary` (critical RTT, stability maps, sweeps) counts their
unstable runs, as it counts the packet-fidelity QCN model's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np

from qcnmodel import config

__all__ = [
    "CLIFF_MIN",
    "OVERLOAD_MIN",
    "RunsJudged",
    "RunsVerdict",
    "cycle_classes",
    "cycle_reference",
    "run_class",
    "run_length",
    "runs_skipped",
    "runs_verdict",
    "runs_work",
    "seed_runs",
]

#: fraction of time above Kmax that makes a coherent oscillation a cycle through Kmax (the
#: oscillation detector's underflow threshold)
CLIFF_MIN = 0.01
#: fraction of time above Kmax that makes a run overloaded: the queue sits where every packet
#: is marked (no packet run of the validation's grid comes near: at most 24 % above Kmax, at
#: N = 64 and 100 us)
OVERLOAD_MIN = 0.5


def cycle_reference(params) -> float:
    """The detector's amplitude reference for DCQCN: the middle of the marking ramp (bytes)."""
    return params.kmin + (params.kmax - params.kmin) / 2


def cycle_classes(stats: dict, above_kmax: float, qref: float) -> dict:
    """The detector's output ``stats`` with the classes ``coherent`` (its ACF and amplitude
    thresholds, without its underflow precedence) and ``cliff_cycle`` (coherent and above
    Kmax at least :data:`CLIFF_MIN` of the time), and ``above_kmax``."""
    from qcnmodel.analysis.timeseries import ACF_MIN, AMPLITUDE_MIN

    o = dict(stats)
    o["coherent"] = bool(o["acf_peak"] >= ACF_MIN and o["std"] >= AMPLITUDE_MIN * qref)
    o["above_kmax"] = float(above_kmax)
    o["cliff_cycle"] = bool(o["coherent"] and above_kmax >= CLIFF_MIN)
    return o


@dataclass(frozen=True)
class RunsVerdict:
    """The every-flow runs' verdict at one operating point (module docstring).

    Attributes
    ----------
    cycles : bool
        A majority of the runs cycle through Kmax.
    overloaded : bool
        A majority of the runs keep the queue above Kmax at least :data:`OVERLOAD_MIN` of the
        time (where every packet is marked, the cuts do not bring it down: no cycle, and no
        equilibrium either).
    votes, unstable_votes, runs : int
        Runs that cycle through Kmax; runs that cycle or stay above Kmax (unstable, the
        class a boundary search counts); runs taken.
    period_s : float
        Median period (autocorrelation peak) of the cycling runs, s (nan if none cycles).
    mean_queue_bytes, std_queue_bytes : float
        Mean over the runs of the queue's time mean and standard deviation, bytes.
    empty_fraction, above_kmax : float
        Mean fraction of time the queue is empty, and above Kmax.
    throughput_bps : float
        Mean departure rate of the port, bit/s.
    """

    cycles: bool
    overloaded: bool
    votes: int
    unstable_votes: int
    runs: int
    period_s: float
    mean_queue_bytes: float
    std_queue_bytes: float
    empty_fraction: float
    above_kmax: float
    throughput_bps: float

    @property
    def stable(self) -> bool:
        """At most half the runs cycle through Kmax or hold the queue above it."""
        return 2 * self.unstable_votes <= self.runs

    def to_dict(self) -> dict:
        """Plain dict (JSON-ready but for nan)."""
        return asdict(self)

    def text(self) -> str:
        """One line: the class, the votes and what the queue does."""
        queue = (f"mean queue {self.mean_queue_bytes / 1e3:.1f} KB, empty "
                 f"{100 * self.empty_fraction:.0f} % of the time")  # fmt: skip
        if self.overloaded and not self.cycles:
            return (f"the queue stays above Kmax ({100 * self.above_kmax:.0f} % of the time; "
                    f"{queue}): the marking does not hold it")  # fmt: skip
        if self.cycles:
            return (f"cycles through Kmax in {self.votes} of {self.runs} every-flow runs "
                    f"(period {self.period_s * 1e3:.2f} ms, {queue})")  # fmt: skip
        if not self.stable:
            return (f"cycles through Kmax or stays above it in {self.unstable_votes} of "
                    f"{self.runs} every-flow runs ({queue})")  # fmt: skip
        return f"no cycle through Kmax ({self.votes} of {self.runs} every-flow runs; {queue})"


def run_length(model) -> tuple[float, float]:
    """``(duration, settle)`` of one verdict run of ``model`` (s):
    ``config.defaults["models.dcqcn_run"]``'s, stretched at long loop delays so that the
    settling time spans at least ``["settle_delays"]`` RTTs and the window read at least
    ``["window_delays"]`` (module docstring, "Long loops"). Up to 125 us (the validation's
    grid) they are the configured 0.15 s and 50 ms."""
    return run_length_at(float(model.rtt))


def run_length_at(rtt: float) -> tuple[float, float]:
    """:func:`run_length` at the loop delay ``rtt`` (s): the packet runs that the runs are
    compared with are as long."""
    run = config.defaults["models.dcqcn_run"]
    settle = max(float(run["settle"]), run["settle_delays"] * rtt)
    window = max(float(run["duration"]) - float(run["settle"]), run["window_delays"] * rtt)
    return settle + window, settle


def runs_work(model, seeds: int | None = None) -> float:
    """Flow-steps and timer firings that :func:`runs_verdict` takes (runs x
    :func:`~qcnmodel.models._dcqcn_agents.agents_work`): what a caller weighs before asking
    for the verdict."""
    from qcnmodel.models._dcqcn_agents import agents_work
    from qcnmodel.models._verdict_run import verdict_seeds

    duration = run_length(model)[0]
    return float(verdict_seeds(seeds)) * agents_work(model.params, model.n_flows, duration)


def runs_skipped(model) -> str | None:
    """Why the every-flow runs do not judge ``model`` (None: they do). Each run follows every
    flow: past ``config.defaults["analysis.trajectory_max_flows"]`` flows, or past
    ``["models.max_steps"]`` flow-steps and timer firings in all (:func:`runs_work`), the
    linearised loop judges instead."""
    cap = config.defaults["analysis.trajectory_max_flows"]
    if model.n_flows > cap:
        return (f"N = {model.n_flows} > {cap} flows "
                '(config.defaults["analysis.trajectory_max_flows"])')  # fmt: skip
    work, budget = runs_work(model), config.defaults["models.max_steps"]
    if work > budget:
        return (f"{work:.3g} flow-steps and timer firings > {budget:.3g} "
                '(config.defaults["models.max_steps"])')  # fmt: skip
    return None


def run_class(run: dict) -> str:
    """The class of one run (a dict of :func:`seed_runs`): ``"cycles"`` (through Kmax),
    ``"overloaded"`` (above Kmax at least :data:`OVERLOAD_MIN` of the time) or
    ``"stable"``."""
    if run["cliff_cycle"]:
        return "cycles"
    return "overloaded" if run["above_kmax"] >= OVERLOAD_MIN else "stable"


def seed_runs(model, seeds: int | None = None, progress: bool = False) -> Iterator[dict]:
    """The every-flow runs of ``model`` with seeds 0 .. ``seeds - 1``, lazily: each the
    detector's statistics with :func:`cycle_classes` and ``thr`` (the port's mean departure
    rate, bit/s) over the window after the settling time (:func:`run_length`)."""
    from qcnmodel.analysis.timeseries import oscillation
    from qcnmodel.models._verdict_run import verdict_seeds

    record_dt = config.defaults["models.dcqcn_run"]["record_dt"]
    n = verdict_seeds(seeds)
    duration, settle = run_length(model)
    qref = cycle_reference(model.params)
    w = int(round(settle / record_dt))
    seeds_iter = range(n)
    if progress:
        import sys

        from tqdm import tqdm

        seeds_iter = tqdm(seeds_iter, desc=f"every-flow runs, N = {model.n_flows}", unit="run",
                          file=sys.stderr, leave=False)  # fmt: skip
    for seed in seeds_iter:
        ds = model.simulate(duration, method="agents", record_dt=record_dt, seed=seed)
        q = ds.q.values[w:]
        o = cycle_classes(oscillation(q, record_dt, qref), np.mean(q > model.params.kmax),
                          qref)  # fmt: skip
        o["thr"] = float(ds.throughput.values[w:].mean())
        yield o


def runs_verdict(model, seeds: int | None = None, progress: bool = False) -> RunsVerdict:
    """The every-flow runs' verdict of ``model`` (a ``DCQCNFluidModel``; module docstring).

    Parameters
    ----------
    model : DCQCNFluidModel
        The operating point (its options other than the parameters, ``rtt`` and ``n_flows``
        do not enter: the runs follow the packet rules).
    seeds : int, optional
        Runs (default ``config.defaults["models.verdict_run"]["seeds"]``).
    progress : bool
        A tqdm bar over the runs on stderr.

    Returns
    -------
    RunsVerdict
    """
    out = list(seed_runs(model, seeds, progress))
    n = len(out)
    cyc = [o for o in out if o["cliff_cycle"]]
    return RunsVerdict(
        cycles=2 * len(cyc) > n,
        overloaded=2 * sum(o["above_kmax"] >= OVERLOAD_MIN for o in out) > n,
        votes=len(cyc),
        unstable_votes=sum(run_class(o) != "stable" for o in out),
        runs=n,
        period_s=float(np.median([o["period_acf"] for o in cyc])) if cyc else math.nan,
        mean_queue_bytes=float(np.mean([o["mean"] for o in out])),
        std_queue_bytes=float(np.mean([o["std"] for o in out])),
        empty_fraction=float(np.mean([o["underflow"] for o in out])),
        above_kmax=float(np.mean([o["above_kmax"] for o in out])),
        throughput_bps=float(np.mean([o["thr"] for o in out])),
    )


def _count(model, n: int, enough) -> tuple[int, int]:
    """``(unstable, runs)`` of :func:`seed_runs` with seeds 0 .. ``n - 1`` (a run is unstable
    unless :func:`run_class` says ``"stable"``), in seed order until ``enough`` holds
    (:func:`~qcnmodel.models._verdict_run.count_unstable`)."""
    from qcnmodel.models._verdict_run import count_unstable

    return count_unstable((run_class(o) != "stable" for o in seed_runs(model, n)), enough)


class RunsJudged:
    """Mixin of the DCQCN model: with ``trajectories="agents"`` (the registry's ``packet``) its
    stability boundary is its every-flow runs', found by the protocol-free trajectory
    machinery of :mod:`qcnmodel.analysis.boundary` (``boundary_method``,
    ``trajectory_odds``, ...): margins, sweeps and stability maps judge it as they judge the
    packet-fidelity QCN model. A run is unstable when it cycles through Kmax or stays above
    it (:func:`run_class`); the runs need no fixed point, so points past the marking ramp,
    where the mean field has none, are judged too (``trajectory_needs_loop``)."""

    __slots__ = ()

    #: the runs judge a point whether or not the mean field has a fixed point there
    trajectory_needs_loop = False

    @property
    def boundary_method(self) -> str:
        """``"trajectories"`` with ``trajectories="agents"`` where the runs apply
        (:func:`runs_skipped`), else ``"linearisation"``."""
        if getattr(self, "trajectories", None) != "agents":
            return "linearisation"
        return "trajectories" if runs_skipped(self) is None else "linearisation"

    @property
    def trajectory_rtt_search(self) -> tuple[float, float]:
        """The RTT interval (s) a boundary search of the runs covers:
        ``config.defaults["analysis.runs_rtt_search"]`` (data-centre loops)."""
        lo, hi = config.defaults["analysis.runs_rtt_search"]
        return float(lo), float(hi)

    def runs_verdict(self, seeds: int | None = None, progress: bool = False) -> RunsVerdict:
        """Whether the queue cycles through Kmax in the every-flow runs (the packet rules on a
        fluid queue, whatever ``trajectories`` says): the validated DCQCN verdict,
        :func:`runs_verdict`."""
        return runs_verdict(self, seeds, progress)

    def trajectory_unstable(self, seeds: int | None = None) -> bool:
        """Whether most of the ``seeds`` runs are unstable (taken in seed order until the
        majority is decided)."""
        from qcnmodel.models._verdict_run import decided, verdict_seeds

        n = verdict_seeds(seeds)
        votes, _ = _count(self, n, decided(n))
        return 2 * votes > n

    def trajectory_odds(self, seeds: int | None = None, unanimous: int | None = 5
                        ) -> tuple[int, int]:  # fmt: skip
        """``(unstable, runs)``: every one of ``seeds`` runs unless the first ``unanimous``
        agree (None: all), as the QCN model's odds."""
        from qcnmodel.models._verdict_run import agreed, verdict_seeds

        return _count(self, verdict_seeds(seeds), agreed(unanimous))

    def trajectory_verdicts(self, seeds: int | None = None) -> tuple[str, ...]:
        """The class of each run (:func:`run_class`), seeds 0 .. ``seeds - 1``."""
        return tuple(run_class(o) for o in seed_runs(self, seeds))
