"""A standards editor's check of a parameter set over operating ranges (``qcnmodel check``).

Given a :class:`~qcnmodel.params.QCNParams` and ranges of RTT and flow count N, the linearised
QCN loop (default the packet-fidelity fluid model, :mod:`qcnmodel.models.qcn`, exact delay) is
evaluated over the whole range grid:

* worst-case phase, gain and delay margins over the grid;
* the critical RTT for each N (largest RTT with a positive phase margin);
* a verdict: **stable** when every grid point is closed-loop stable with a phase margin of at
  least ``pm_threshold`` degrees; **marginal** when every point is stable but some have less
  margin than that; **unstable** when some point is unstable;
* when the verdict is not stable, the fix: one ``[qcn]`` field change that makes it stable,
  verified by recomputing the grid (:func:`qcnmodel.studies.verdict.search_fix`), or the
  statement that none within the searched intervals does; where the model's trajectories
  judge some flow counts, the fix is put to them and, where they reject it, sized by them
  (:func:`qcnmodel.studies._fix_sizing.put_to_trajectories`);
* the fields of the file that have no effect in its current mode, and a one-paragraph
  headline naming the model that produced the verdict (:mod:`qcnmodel.studies.verdict`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from qcnmodel import config
from qcnmodel._errors import unknown_name
from qcnmodel.models._base import NoStandingQueue, Overloaded
from qcnmodel.params import QCNParams
from qcnmodel.studies.check_text import linearised_note
from qcnmodel.studies.verdict import (
    _verdict_of,
    headline,
    inactive_fields,
    model_label,
    no_operating_point,
    no_queue_note,
    paper_fallback,
    qcn_or_paper,
    search_fix,
    search_steps,
    trajectory_note,
    wrap_phase,
)
from qcnmodel.units import split_range

__all__ = [
    "CheckRanges",
    "CheckResult",
    "check_params",
    "check_steps",
    "parse_range",
    "rtt_floor",
]


def parse_range(text: str, parser, field: str, integer: bool = False) -> tuple[float, float]:
    """Parse ``"lo..hi"`` with a unit parser; ``lo`` must be positive and below ``hi``."""
    ends = split_range(text, field) if isinstance(text, str) else None
    if ends is None:
        raise ValueError(f"{field}: expected a range 'lo..hi' (e.g. 2us..1ms), got {text!r}")
    lo, hi = parser(ends[0], field), parser(ends[1], field)
    if integer and (lo != int(lo) or hi != int(hi)):
        raise ValueError(f"{field}: range ends must be whole numbers, got {text!r}")
    if not (0 < lo <= hi):
        raise ValueError(f"{field}: need 0 < lo <= hi, got {text!r}")
    return lo, hi


def _default(key: str):
    return field(default_factory=lambda: config.defaults[key])


@dataclass(frozen=True)
class CheckRanges:
    """Operating ranges: RTT in seconds, flows as whole numbers, and the grid resolution.

    Defaults come from :mod:`qcnmodel.config` (``studies.check_*``) when the object is made:
    RTT 2 us .. 1 ms, N 1 .. 100, 60 x 12 points, phase-margin threshold 30 deg.
    ``capacity`` is the congestion point's service rate (bit/s): a hotspot port slower (or
    faster) than the line rate the flows send at; None (default) serves at the line rate.
    """

    rtt: tuple[float, float] = _default("studies.check_rtt")
    flows: tuple[int, int] = _default("studies.check_flows")
    n_rtt: int = _default("studies.check_n_rtt")
    n_flows: int = _default("studies.check_n_flows")
    pm_threshold: float = _default("studies.check_pm_threshold")
    capacity: float | None = None

    def __post_init__(self) -> None:
        if self.capacity is not None and not (0 < self.capacity < np.inf):
            raise ValueError(f"capacity: the port's service rate must be in (0, inf) bit/s, "
                             f"got {self.capacity!r}")  # fmt: skip
        if not (0 < self.rtt[0] <= self.rtt[1]):
            raise ValueError(f"rtt: need 0 < lo <= hi, got {self.rtt}")
        if not (1 <= self.flows[0] <= self.flows[1]):
            raise ValueError(f"flows: need 1 <= lo <= hi, got {self.flows}")
        if not (0 <= self.pm_threshold < 90):
            raise ValueError(f"pm_threshold: must be in [0, 90) degrees, got {self.pm_threshold}")

    def rtt_grid(self) -> np.ndarray:
        """Log-spaced RTT values (s); one value for a range of one RTT."""
        return np.geomspace(
            self.rtt[0], self.rtt[1], 1 if self.rtt[0] == self.rtt[1] else self.n_rtt
        )

    def flow_grid(self) -> np.ndarray:
        """Log-spaced whole flow counts, ends included."""
        lo, hi = self.flows
        return np.unique(np.round(np.geomspace(lo, hi, self.n_flows)).astype(int))


@dataclass(frozen=True)
class CheckResult:
    """Outcome of :func:`check_params` (see the module docstring)."""

    verdict: str
    pm_threshold_deg: float
    worst_phase_margin_deg: float
    worst_gain_margin_db: float
    worst_delay_margin_s: float
    worst_point: dict
    critical_rtt_s: dict
    recommendations: list = field(default_factory=list)
    model: str = "qcn"
    model_variant: str = "packet"
    model_label: str = ""
    notes: list = field(default_factory=list)
    searched: dict = field(default_factory=dict)
    headline: str = ""
    confirmation: dict | None = None
    fallback: str = ""
    confirmation_traces: dict | None = field(default=None, compare=False, repr=False)
    validity: list = field(default_factory=list)
    judged_flows: tuple = ()
    overloaded: dict = field(default_factory=dict)
    no_standing_queue: tuple = ()
    held_flows: int | None = None
    stable_bands: dict = field(default_factory=dict)
    lowest_phase_margin: tuple = (math.nan, None, None)

    @property
    def fix(self) -> dict | None:
        """The verified single-field change with the smallest relative change (None when
        none makes it stable)."""
        return self.recommendations[0] if self.recommendations else None

    @property
    def exit_code(self) -> int:
        """0 stable (and, when confirmed, not contradicted by the packets), else 1."""
        if self.confirmation is not None and self.confirmation["outcome"] == "DISAGREE":
            return 1
        return 0 if self.verdict == "stable" else 1

    def plot_confirmation(self, path, qeq: float):
        """Draw the hot-queue traces of the packet confirmation to ``path`` (one panel per
        point, the model's and the packets' verdicts in each title); ValueError when the
        check ran without ``confirm``."""
        if self.confirmation_traces is None:
            raise ValueError("confirm: this check ran without confirm=True (no packet traces)")
        from qcnmodel.studies.confirm_view import plot_confirmation  # written atomically

        return plot_confirmation(self.confirmation_traces, qeq, path)

    def to_dict(self) -> dict:
        """Plain dict for JSON output."""
        return {
            "headline": self.headline,
            "verdict": self.verdict,
            "model": self.model,
            "model_variant": self.model_variant,
            "model_label": self.model_label,
            "pm_threshold_deg": self.pm_threshold_deg,
            "worst_phase_margin_deg": wrap_phase(self.worst_phase_margin_deg),
            "worst_phase_margin_unwrapped_deg": self.worst_phase_margin_deg,
            "lowest_phase_margin_deg": wrap_phase(self.lowest_phase_margin[0]),
            "lowest_phase_margin_unwrapped_deg": self.lowest_phase_margin[0],
            "lowest_phase_margin_point": {
                "n_flows": self.lowest_phase_margin[1],
                "rtt_s": self.lowest_phase_margin[2],
            },  # fmt: skip
            "worst_gain_margin_db": self.worst_gain_margin_db,
            "worst_delay_margin_s": self.worst_delay_margin_s,
            "worst_point": self.worst_point,
            "critical_rtt_s": {str(k): v for k, v in self.critical_rtt_s.items()},
            "recommendations": self.recommendations,
            "searched": self.searched,
            "notes": self.notes,
            "model_fallback": self.fallback,
            "validity": self.validity,
            "judged_by_trajectories": list(self.judged_flows),
            "overloaded": {str(k): v for k, v in self.overloaded.items()},
            "no_standing_queue": list(self.no_standing_queue),
            "held_flows": self.held_flows,
            "stable_band_s": {str(k): list(v) for k, v in self.stable_bands.items()},
            "confirmation": self.confirmation,
        }


def rtt_floor(ranges: CheckRanges, params: QCNParams) -> tuple[CheckRanges, str | None]:
    """``(ranges, note)``: the RTT range from the parameter set's ``cp_latency`` on, and the
    note that says so (None when the range already starts there).

    An RTT is the whole loop delay CP -> RP -> CP, which contains the CP latency, so an RTT
    below ``cp_latency`` is no operating point of the parameter set (the models refuse it);
    a range that lies wholly below it is refused, naming the range and the latency.
    """
    lat, (lo, hi) = float(params.cp_latency), ranges.rtt
    if lo >= lat:
        return ranges, None
    if hi < lat:
        raise ValueError(f"rtt: {lo * 1e6:g} us .. {hi * 1e6:g} us lies below the CP "
                         f"latency (cp_latency = {lat * 1e6:g} us), which the loop delay "
                         f"contains: the RTTs must be at least {lat * 1e6:g} us")  # fmt: skip
    note = (f"the RTT range starts at cp_latency = {lat * 1e6:.4g} us, not {lo * 1e6:.4g} us: "
            "the loop delay contains the CP latency, so a shorter RTT is no operating point "
            "of this parameter set")  # fmt: skip
    return dataclasses.replace(ranges, rtt=(lat, hi)), note


#: the models a check can use (QCN parameter sets)
CHECK_MODELS = ("qcn", "fopdt")


def _model(params: QCNParams, model: str, variant: str | None = None, **at):
    from qcnmodel.models import build_model

    if model not in CHECK_MODELS:
        from qcnmodel.models import MODELS

        if model in MODELS:  # a model of another protocol's parameters
            which = " or ".join(CHECK_MODELS)
            raise ValueError(f"model: check judges QCN parameter sets with the {which} model, "
                             f"not {model!r}; the {model} model's margins, critical RTT and "
                             f"sweeps are `qcnmodel margins --model {model}` and `qcnmodel "
                             f"sweep --model {model}`")  # fmt: skip
        raise unknown_name("model", "model", model, CHECK_MODELS, sort=False)
    return build_model(model, params, variant, **at)


def check_params(
    params: QCNParams,
    ranges: CheckRanges | None = None,
    model: str = "qcn",
    recommend: bool = True,
    variant: str | None = None,
    progress=None,
    confirm: bool = False,
    confirm_duration: float | None = None,
    confirm_jobs: int | None = None,
    boundary: str = "model",
    jobs: int | None = None,
    announce: bool | None = None,
) -> CheckResult:
    """Worst-case margins, critical RTT per N, verdict, the fix and the headline.

    Parameters
    ----------
    params : QCNParams
    ranges : CheckRanges, optional
        RTT and N ranges (default 2 us .. 1 ms and 1 .. 100) and the phase-margin threshold.
    model : {"qcn", "fopdt"}
        Which linearised model to use (default the QCN fluid model).
    variant : str, optional
        A named configuration of that model (:data:`qcnmodel.models.MODELS`; default the
        packet-fidelity QCN model).
    recommend : bool
        When the verdict is not *stable*, search one ``[qcn]`` field at a time for a value
        that makes it stable (:func:`qcnmodel.studies.verdict.search_fix`).
    progress : tqdm, optional
        Advanced once per flow count and once per screened candidate.
    confirm : bool
        Run the packet simulator, in parallel, at 0.8 x and 1.25 x the critical RTT of the
        worst N (the smallest critical RTT over the ranges) and at the worst point
        (:func:`qcnmodel.studies.confirm.confirm_verdict`); a disagreement makes
        :attr:`CheckResult.exit_code` 1. The rows are in ``confirmation``, the traces in
        ``confirmation_traces`` (:meth:`CheckResult.plot_confirmation` draws them).
    confirm_duration : float, optional
        Packet run length per point, s (default: long enough for three time constants of
        the slowest point's mode to settle in the first half, 0.4-10 s).
    confirm_jobs : int, optional
        Processes for the packet runs (default the cores actually free, -1 the same; at
        most the number of points); the results do not depend on it.
    boundary : {"model", "linearisation"}
        How each N's critical RTT and stability are found: the model's own boundary method
        (the packet-fidelity model's trajectories wherever the port is congested, whose odds
        of an unstable run pass one half at the critical RTT), or the linearised phase
        margin throughout.
    jobs : int, optional
        Processes for the critical RTTs found from trajectories
        (:func:`qcnmodel.studies.boundaries.trajectory_boundaries`; default the cores this process
        may use); the results do not depend on it.
    announce : bool, optional
        Say on stderr, one line each, what compiles (numba, once: the model's kernels, the
        simulator for ``confirm``) before it does; default: when a progress bar is shown.

    Returns
    -------
    CheckResult
    """
    ranges, floor_note = rtt_floor(ranges or CheckRanges(), params)
    from qcnmodel.analysis.boundary import check_method

    check_method(boundary, "boundary")
    fallback = ""
    # built at an RTT of the ranges when the models' default (100 us) is below cp_latency
    at = {"rtt": ranges.rtt[1]} if params.cp_latency > 100e-6 else {}
    if model == "qcn":  # outside the packet-fidelity model (e.g. drift): the paper's, said
        base, why = qcn_or_paper(params, variant, **at)
        if why is not None:
            fallback, variant = paper_fallback(why, "this verdict uses"), "paper"
    else:
        base = _model(params, model, variant, **at)
    if ranges.capacity is not None:  # the congestion point serves at its own rate
        base = base.replace(capacity=ranges.capacity)
    shown = progress is not None and not getattr(progress, "disable", False)
    announce = shown if announce is None else bool(announce)
    bg = None
    if confirm:  # the simulator compiles (on a cold cache) while the model is analysed
        from qcnmodel.studies.compiling import compile_in_background, sim_family

        bg = compile_in_background(sim_family(params))
    try:
        result = _check(params, ranges, model, variant, base, fallback, recommend, confirm,
                        confirm_duration, confirm_jobs, progress, shown, bg, boundary,
                        jobs, announce)  # fmt: skip
        if floor_note is not None:
            result = dataclasses.replace(result, notes=[floor_note, *result.notes])
        return result
    finally:
        if bg is not None:
            bg.close()


def _check(params, ranges, model, variant, base, fallback, recommend, confirm,
           confirm_duration, confirm_jobs, progress, shown, bg, boundary, jobs,
           announce):  # fmt: skip
    """:func:`check_params` after the model is chosen; ``bg`` compiles the simulator."""
    from qcnmodel.analysis.boundary import (
        judged_by_trajectories,
        judged_stable,
        past_trajectory_limit,
    )
    from qcnmodel.analysis.margins import critical_rtt, extra_delay, margins_over_delay
    from qcnmodel.studies.compiling import announce_all, announce_compile

    if announce:  # what compiles now (the trajectory kernels: before their first runs)
        announce_all((["loop"] if getattr(base, "fidelity", None) == "packet" else [])
                     + (["sim"] if bg is not None else []), background=bg is not None)  # fmt: skip
    name, var, label = model_label(base)
    taus = ranges.rtt_grid()
    worst_gm, worst_dm = np.inf, np.inf
    lin: dict[int, tuple] = {}
    crit: dict[int, float] = {}
    models = {int(n): base.replace(n_flows=int(n)) for n in ranges.flow_grid()}
    overloaded: dict[int, float] = {}  # N -> the flows' rate over C/N at full feedback
    no_queue: list[int] = []  # N whose mean field balances below an empty queue
    for n, model_n in models.items():
        try:
            loop = model_n.loop()
            m = margins_over_delay(loop, taus + extra_delay(model_n))  # the RTTs' loop delays
        except Overloaded as exc:  # a verdict: these flows cannot be held at C/N
            overloaded[n] = exc.ratio
            lin[n] = no_operating_point(taus)
            crit[n] = float("nan")
            if progress is not None:
                progress.update(1)
            continue
        except NoStandingQueue as exc:  # no linearisation; the trajectories from idle run
            if not judged_by_trajectories(model_n, boundary):
                raise ValueError(_cannot(model_n, n, ranges, exc)) from None
            no_queue.append(n)
            lin[n] = (np.full(taus.shape, np.nan), np.zeros(taus.shape, bool))
            if progress is not None:
                progress.update(1)
            continue
        except ValueError as exc:  # e.g. no equilibrium at this N: say where, and with what
            raise ValueError(_cannot(model_n, n, ranges, exc)) from None
        lin[n] = (np.asarray(m.phase_margin_deg, float), np.asarray(m.stable, bool))
        if not judged_by_trajectories(model_n, boundary):
            crit[n] = float(critical_rtt(model_n, loop=loop, method="linearisation"))
        worst_gm = min(worst_gm, float(np.min(m.gain_margin_db)))
        dm = np.asarray(m.delay_margin_s, float)  # NaN: unstable without delay, the worst
        worst_dm = np.nan if np.isnan(worst_dm) or np.isnan(dm).any() else min(worst_dm, dm.min())
        if progress is not None:
            progress.update(1)
    judged = [n for n in models if n not in crit]  # flow counts judged by the trajectories
    too_many = [n for n in crit if boundary == "model" and n not in overloaded
                and past_trajectory_limit(models[n])]  # fmt: skip
    bands: dict = {}  # N -> (start, end): stable there only (its runs cycle at small RTTs)
    if judged:
        from qcnmodel.studies.boundaries import trajectory_boundaries

        announce_compile("fluid", announce)
        if progress is not None:  # one step more per flow count judged by trajectories
            progress.total = (progress.total or 0) + len(judged)
            progress.refresh()
        found = trajectory_boundaries([models[n] for n in judged], jobs=jobs, progress=progress)
        crit.update((n, c) for n, (c, _) in zip(judged, found))
        bands = {n: b for n, (_, b) in zip(judged, found) if b is not None}
        crit = {n: crit[n] for n in models}
    table = {n: (pm, judged_stable(models[n], taus, st, crit[n], bands.get(n))
                  if n in judged else st) for n, (pm, st) in lin.items()}  # fmt: skip
    verdict, worst_pm, n_w, k_w = _verdict_of(table, ranges.pm_threshold, judged, crit, taus)
    search = {"searched": {}, "fixes": []}
    if recommend and verdict != "stable":
        search = search_fix(params, functools.partial(_rebuilt, base), ranges, lin,
                            progress=progress, jobs=jobs)  # fmt: skip
        if judged and search["fixes"]:  # put to the trajectories, and sized by them
            from qcnmodel.studies._fix_sizing import put_to_trajectories

            search["fixes"] = put_to_trajectories(search["fixes"], base, judged, ranges)
    result = CheckResult(
        verdict=verdict,
        pm_threshold_deg=float(ranges.pm_threshold),
        worst_phase_margin_deg=worst_pm,
        worst_gain_margin_db=worst_gm,
        worst_delay_margin_s=worst_dm,
        worst_point={"n_flows": n_w, "rtt_s": float(taus[k_w])},
        critical_rtt_s=crit,
        recommendations=search["fixes"],
        model=name,
        model_variant=var,
        model_label=label,
        notes=inactive_fields(params)
        + ([trajectory_note(judged)] if judged else [])
        + ([linearised_note(too_many, models)] if too_many else [])
        + ([no_queue_note(no_queue)] if no_queue else [])
        + _threshold_note(ranges, models, judged, overloaded, lin)
        + _extrapolated_note(ranges, models, judged),
        judged_flows=tuple(judged),
        searched=search["searched"],
        fallback=fallback,
        overloaded=overloaded,
        no_standing_queue=tuple(no_queue),
        held_flows=_held(base, overloaded, models),
        stable_bands=bands,
        lowest_phase_margin=_lowest_pm(lin, taus),
    )
    result = dataclasses.replace(result, headline=headline(result, ranges),
                                 validity=_validity(result, ranges, params))  # fmt: skip
    if confirm:
        from qcnmodel.studies.confirm import confirm_verdict, drop_traces

        if bg is not None:
            bg.wait()

        conf = confirm_verdict(params, result, ranges, base, duration=confirm_duration,
                               progress=shown, jobs=confirm_jobs)  # fmt: skip
        result = dataclasses.replace(result, confirmation=drop_traces(conf),
                                     confirmation_traces=conf)  # fmt: skip
    return result


def _threshold_note(ranges: CheckRanges, models: dict, judged, overloaded: dict,
                    lin: dict) -> list[str]:  # fmt: skip
    """The note that the phase-margin threshold decides nothing, when no flow count of the
    ranges is judged by its linearised loop with a finite phase margin somewhere (the
    trajectories or the overload decide, or the port is not congested: an infinite margin
    passes any threshold)."""
    linear = [n for n in models if n not in judged and n not in overloaded]
    if any(n in lin and np.isfinite(np.asarray(lin[n][0], float)).any() for n in linear):
        return []
    return [f"pm_threshold = {ranges.pm_threshold:g} deg does not enter this verdict: it "
            "applies to the points judged by the linearised loop with a finite phase margin, "
            "and every flow count here is judged by the model's trajectories (their critical "
            "RTT decides), has no equilibrium, or leaves the port uncongested"]  # fmt: skip


def _extrapolated_note(ranges: CheckRanges, models: dict, judged) -> list[str]:
    """The note that the RTTs of the ranges below the smallest one the model's trajectories
    are run at are judged by extrapolation (the verdict there is that RTT's)."""
    if not judged:
        return []
    from qcnmodel.analysis.boundary import search_interval

    start = min(search_interval(models[n])[0] for n in judged)
    if not ranges.rtt[0] < start:
        return []
    return [f"RTTs below {start * 1e6:.4g} us, the smallest the model's trajectories are run "
            f"at, are judged by extrapolation at N = {', '.join(str(int(n)) for n in judged)}: "
            f"their verdict there is that of {start * 1e6:.4g} us"]  # fmt: skip


def _rebuilt(base, params):
    """``base`` with the parameter set ``params`` (picklable: the fix search's workers)."""
    return base.replace(params=params)


def _lowest_pm(lin: dict, taus) -> tuple:
    """``(PM, N, RTT)`` of the lowest finite linearised phase margin (unwrapped, deg) over
    the grid; NaN and None where no point has one."""
    best = (math.nan, None, None)
    for n, (pm, _) in lin.items():
        pm = np.asarray(pm, float)
        ok = np.isfinite(pm)
        if ok.any():
            k = int(np.argmin(np.where(ok, pm, np.inf)))
            if not pm[k] >= best[0]:  # also replaces the NaN of no point yet
                best = (float(pm[k]), int(n), float(taus[k]))
    return best


def _held(base, overloaded: dict, held) -> int | None:
    """The largest flow count ``base`` holds below the first overloaded one (None when no
    flow count of the ranges is overloaded); the search starts from the largest flow count
    ``held`` by the ranges below it."""
    if not overloaded:
        return None
    from qcnmodel.analysis.overload import held_flows

    first = min(overloaded)
    below = [n for n in held if n < first and n not in overloaded]
    return held_flows(base, first, n_min=max(below, default=1))


def _cannot(model, n: int, ranges: CheckRanges, exc: Exception) -> str:
    """The error of a flow count the model cannot analyse: where, why, and what to revise."""
    also = "" if ranges.capacity is None else ", check the port's rate (rate)"
    return (f"flows: the model cannot be analysed at N = {n} ({exc}); narrow the flow "
            f"range{also} or revise {_suspects(model.params)}")  # fmt: skip


def _suspects(p: QCNParams, limit: int = 4) -> str:
    """The parameters to revise when the model has no answer: the numeric fields that differ
    from the IEEE 802.1Qau defaults (the first ``limit``, with their units), else the ones
    that set the feedback (qeq, w, gd)."""
    from qcnmodel.params._validate import changed_fields

    changed = changed_fields(p, limit).values()
    if changed:
        return f"the parameters set away from the IEEE 802.1Qau defaults ({', '.join(changed)})"
    return f"the feedback parameters (qeq = {p.qeq:g} B, w = {p.w:g}, gd = {p.gd:g})"


def _validity(result, ranges: CheckRanges, params: QCNParams) -> list[dict]:
    """The regions of the model's validity domain (:mod:`qcnmodel.validation.domain`) that
    the checked ranges reach, with their mechanisms."""
    from qcnmodel.validation.domain import validity_notes

    notes = validity_notes(result.model, result.model_variant, ranges.flows, ranges.rtt,
                           result.critical_rtt_s, params.sampling == "fixed", params,
                           ranges.capacity)  # fmt: skip
    return [v.to_dict() for v in notes if v.applies]


def check_steps(params: QCNParams, ranges: CheckRanges, recommend: bool = True) -> int:
    """Progress steps of :func:`check_params` (flow counts, plus the search's candidates)."""
    return len(ranges.flow_grid()) + (search_steps(params) if recommend else 0)
