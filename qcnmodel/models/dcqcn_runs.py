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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from qcnmodel import config

__all__ = [
    "CLIFF_MIN",
    "OVERLOAD_MIN",
    "RunsVerdict",
    "cycle_classes",
    "cycle_reference",
    "runs_verdict",
    "runs_work",
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
    votes, runs : int
        Runs that cycle through Kmax, and runs taken.
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
    runs: int
    period_s: float
    mean_queue_bytes: float
    std_queue_bytes: float
    empty_fraction: float
    above_kmax: float
    throughput_bps: float

    @property
    def stable(self) -> bool:
        """Neither a cycle through Kmax nor a queue held above it."""
        return not (self.cycles or self.overloaded)

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
        return f"no cycle through Kmax ({self.votes} of {self.runs} every-flow runs; {queue})"


def runs_work(model, seeds: int | None = None) -> float:
    """Flow-steps and timer firings that :func:`runs_verdict` takes (runs x
    :func:`~qcnmodel.models._dcqcn_agents.agents_work`): what a caller weighs before asking
    for the verdict."""
    from qcnmodel.models._dcqcn_agents import agents_work
    from qcnmodel.models._verdict_run import verdict_seeds

    duration = config.defaults["models.dcqcn_run"]["duration"]
    return float(verdict_seeds(seeds)) * agents_work(model.params, model.n_flows, duration)


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
    from qcnmodel.analysis.timeseries import oscillation
    from qcnmodel.models._verdict_run import verdict_seeds

    run = config.defaults["models.dcqcn_run"]
    n = verdict_seeds(seeds)
    qref = cycle_reference(model.params)
    w = int(round(run["settle"] / run["record_dt"]))
    out = []
    seeds_iter = range(n)
    if progress:
        import sys

        from tqdm import tqdm

        seeds_iter = tqdm(seeds_iter, desc=f"every-flow runs, N = {model.n_flows}", unit="run",
                          file=sys.stderr, leave=False)  # fmt: skip
    for seed in seeds_iter:
        ds = model.simulate(run["duration"], method="agents", record_dt=run["record_dt"],
                            seed=seed)  # fmt: skip
        q = ds.q.values[w:]
        o = cycle_classes(oscillation(q, run["record_dt"], qref), np.mean(q > model.params.kmax),
                          qref)  # fmt: skip
        o["thr"] = float(ds.throughput.values[w:].mean())
        out.append(o)
    cyc = [o for o in out if o["cliff_cycle"]]
    return RunsVerdict(
        cycles=2 * len(cyc) > n,
        overloaded=2 * sum(o["above_kmax"] >= OVERLOAD_MIN for o in out) > n,
        votes=len(cyc),
        runs=n,
        period_s=float(np.median([o["period_acf"] for o in cyc])) if cyc else math.nan,
        mean_queue_bytes=float(np.mean([o["mean"] for o in out])),
        std_queue_bytes=float(np.mean([o["std"] for o in out])),
        empty_fraction=float(np.mean([o["underflow"] for o in out])),
        above_kmax=float(np.mean([o["above_kmax"] for o in out])),
        throughput_bps=float(np.mean([o["thr"] for o in out])),
    )
