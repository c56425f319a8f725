"""Matched traces: the packet simulator and a QCN model on the same bottleneck and start.

One single-bottleneck network (:mod:`.network`): N sources -> one switch -> one sink, the
switch port towards the sink the congestion point (CP), 802.1Qau parameters unless a case
changes them (:class:`Case`). The simulator and the model start alike (queue empty, every
rate limiter inactive, each source at its offered rate) and are binned alike (bin averages of
the hot queue and the CP's departures), so that the same measurements (:mod:`.measure`) apply
to both. Both are cached by their arguments.

Model variants (:data:`VARIANTS`): the registry's QCN configurations, ``packet`` (the
default: the renewal population of reaction points, whose trajectories follow every flow)
and ``paper`` (the cycle-averaged
equations as published).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from qcnmodel.models import MODELS
from qcnmodel.models._verdict_run import bin_means
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams
from qcnmodel.validation.network import SOURCE_BUFFER, bottleneck_for, source_rate

__all__ = ["CAPACITY", "Case", "DEFAULT_VARIANT", "LINE", "Trace", "VARIANTS", "model_of",
           "model_is_stochastic", "model_seeds", "model_trace", "sim_trace"]  # fmt: skip

LINE = 10e9
CAPACITY = 5e9
#: model variants compared, by row label (the registry's QCN configurations)
VARIANTS = {name: dict(options) for name, options in MODELS["qcn"].variants.items()}
#: the configuration every surface uses (the registry's default)
DEFAULT_VARIANT = MODELS["qcn"].default_variant


@dataclass(frozen=True)
class Case:
    """One operating point of a matched pair: the bottleneck and the parameter set.

    ``changes`` are QCNParams fields (e.g. ``(("w", 8.0),)`` or ``(("sampling", "fixed"),
    ("ps_fixed", 0.1))``) applied to ``preset``; the line rate is ``line``.
    """

    n: int
    rtt: float = 100e-6
    capacity: float = CAPACITY
    line: float = LINE
    preset: str = "802.1qau"
    changes: tuple = ()

    @property
    def params(self) -> QCNParams:
        return QCNParams.preset(self.preset).replace(line_rate=self.line, **dict(self.changes))

    def with_rtt(self, rtt: float) -> Case:
        return Case(self.n, float(rtt), self.capacity, self.line, self.preset, self.changes)

    def label(self, extra: str = "", rtt: bool = True) -> str:
        s = f"N={self.n}"
        if rtt:
            s += f", RTT={self.rtt * 1e6:g} us"
        s += f", C={self.capacity / 1e9:g} Gb/s, line={self.line / 1e9:g} Gb/s"
        if self.preset != "802.1qau":
            s += f", {self.preset}"
        for k, v in self.changes:
            s += f", {k}={v:g}" if isinstance(v, float) else f", {k}={v}"
        return s + (f", {extra}" if extra else "")


@dataclass
class Trace:
    """A binned trace (uniform grid ``dt``) of the hot queue and the CP's throughput."""

    t: np.ndarray  #: bin end times, s
    q: np.ndarray  #: hot queue, bytes (bin mean)
    thr: np.ndarray  #: CP departure rate, bit/s (bin mean)
    flow_thr: np.ndarray  #: [flow, time] bit/s (a model: one symmetric flow)
    dt: float
    extra: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=512)
def sim_trace(case: Case, duration: float = 0.6, seed: int = 0, dt: float = 50e-6,
              demand: str = "greedy", hotspot=(0.0, math.inf)) -> Trace:  # fmt: skip
    """Simulate the bottleneck of ``case`` and return its binned trace."""
    from qcnmodel.sim.api import simulate

    spec = bottleneck_for(case.params, case.n, case.rtt, case.capacity, demand=demand,
                          hotspot=hotspot)  # fmt: skip
    r = simulate(spec, params=case.params, duration=duration, seed=seed, bin_width=dt)
    ds = r.dataset
    return Trace(
        t=ds.time.values, q=ds.hot_queue_mean.values, thr=ds.hot_port_throughput.values,
        flow_thr=ds.flow_throughput.values,
        # the bins kept (the simulator merges bins where a long run's traces would exceed
        # its memory limit, and says so)
        dt=float(ds.attrs.get("bin_width_s", dt)),
        extra={"recovery_time_s": r.metrics["recovery_time_s"], "wall_s": r.wall_s,
               # the mean over *all* flows: the traces keep only the first flows (``flow``)
               "flow_mean": ds.delivered_throughput.values / case.n},
    )  # fmt: skip


def model_is_stochastic(variant: str, case: Case) -> bool:
    """True where the model's trajectory depends on a seed: the packet-fidelity model, whose
    trajectories follow every flow (``method="agents"``) and draw the protocol's jitter."""
    return getattr(model_of(variant, case), "trajectory_method", None) == "agents"


def model_seeds(variant: str, case: Case, runs: int | None = None) -> tuple[int, ...]:
    """The seeds over which the model's prediction is estimated: where the model is
    stochastic (:func:`model_is_stochastic`) ``runs`` seeds, by default the
    ``config.defaults["models.verdict_run"]`` seeds its own stability verdict takes a majority
    of, else the one trajectory (seed 0). A stochastic model predicts a distribution; the
    validation compares its majority verdict and its median quantities (the simulator's side
    is what one or a few runs measure)."""
    from qcnmodel.models._verdict_run import verdict_seeds

    if not model_is_stochastic(variant, case):
        return (0,)
    return tuple(range(verdict_seeds(runs)))


def model_of(variant: str, case: Case, capacity: float | None = None) -> QCNFluidModel:
    """The QCN model ``variant`` at ``case`` (CP capacity ``capacity``, default the case's)."""
    cap = case.capacity if capacity is None else capacity
    return QCNFluidModel(case.params, rtt=case.rtt, n_flows=case.n, capacity=cap,
                         **VARIANTS[variant])  # fmt: skip


@functools.lru_cache(maxsize=512)
def model_trace(variant: str, case: Case, duration: float = 0.6, dt: float = 50e-6,
                demand: str = "greedy", hotspot=None, seed: int = 0,
                per_flow: bool = False) -> Trace:  # fmt: skip
    """The model ``variant`` from the simulator's start (idle rate limiters, sources at their
    offered rate, queue empty), binned like the simulator. ``seed`` draws the protocol's
    jitter where the model is stochastic (:func:`model_is_stochastic`); ``per_flow`` keeps
    every flow's binned sending rate in ``extra["flow_sent"]`` where the model has flows."""
    cap0 = case.capacity if hotspot is None else case.line
    m = model_of(variant, case, cap0)
    r0 = source_rate(case.n, case.capacity, case.line, demand)
    hs = None if hotspot is None else (hotspot[0], hotspot[1], case.capacity)
    if m.fidelity == "packet":
        buf = SOURCE_BUFFER if m.trajectory_method == "agents" else 0.0
        ds = m.simulate(duration, start="idle", offered=r0, hotspot=hs, record_dt=dt, seed=seed,
                        source_buffer=buf)  # fmt: skip
        sent = ds.rate_sent.values
    else:
        ds = m.simulate(duration, x0={"q": 0.0, "rate_current": r0, "rate_target": r0},
                        hotspot=hs, record_dt=dt)  # fmt: skip
        sent = np.minimum(ds.rate_current.values, r0 if demand == "constant" else np.inf)
    t = ds.time.values
    q = ds.q.values
    cap = np.full_like(t, cap0)
    if hotspot is not None:
        cap[(t >= hotspot[0]) & (t < hotspot[1])] = case.capacity
    # the port serves at capacity while a backlog lasts (the fluid backlog: the frames that
    # merely collide at an underloaded port do not keep it busy)
    backlog = ds.q_fluid.values if "q_fluid" in ds else q
    dep = np.where(backlog > 0, cap, np.minimum(case.n * sent, cap))
    # bin averages over (t_{k-1}, t_k] like the simulator's bins (the realised port's own,
    # else the trapezoid on the grid)
    qb = bin_means(ds)
    db = 0.5 * (dep[1:] + dep[:-1])
    extra = {"model": m}
    if per_flow and "bytes_sent" in ds:  # every flow's sending rate, binned like the sim's
        extra["flow_sent"] = (np.diff(ds.bytes_sent.values, axis=0) * 8.0 / dt).T
    if m.fidelity == "packet":
        extra["cp"] = {k: ds[k].values[1:] for k in ("cnm_probability", "cut", "fb")}
    return Trace(t=t[1:], q=qb, thr=db, flow_thr=(db / case.n)[None, :], dt=dt, extra=extra)
