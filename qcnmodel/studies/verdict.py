"""The headline verdict of ``qcnmodel check`` and of the report, in words a standards editor
can act on.

* :func:`model_label` names the model and variant that produced a number (e.g. "QCN
  packet-fidelity fluid model");
* :func:`wrap_phase` puts a phase margin in (-180, 180] deg for display (the analysis keeps
  the unwrapped value, which falls linearly with the delay; stability always comes from the
  Nyquist count, never from the sign of a wrapped margin);
* :func:`inactive_fields` lists the parameter-file fields that have no effect in the file's
  current mode (``ps_fixed`` with the sampling table, ``r_hai`` with HAI off ...);
* :func:`search_fix` looks for one change of one ``[qcn]`` field that makes the verdict
  *stable* over the same ranges, and verifies every candidate by recomputing the whole grid;
* :func:`headline` writes the one-paragraph verdict.

The phase margins and stability flags of the grid scans come from the loop's gain crossovers
and the delay-sweep argument principle (:mod:`qcnmodel.analysis.margins`); the gain margin,
which needs a root search per delay, is only computed by the main check.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.params import QCNParams
from qcnmodel.params.qcn import ineffective_fields

__all__ = [
    "headline",
    "inactive_fields",
    "model_label",
    "scan",
    "search_fields",
    "search_fix",
    "wrap_phase",
]

#: (model, variant) -> the name printed with every verdict
_LABELS = {
    ("qcn", "packet"): "QCN packet-fidelity fluid model",
    ("qcn", "paper"): "QCN fluid model, published cycle-averaged equations (Alizadeh et al. 2008)",
    ("fopdt", None): "first-order-lag-plus-delay view of the QCN loop (IBM Zurich deck)",
}


def model_label(model) -> tuple[str, str, str]:
    """``(name, variant, label)`` of a model object, e.g. ``("qcn", "packet", "QCN
    packet-fidelity fluid model")``; the label of an unlisted variant names it."""
    from qcnmodel.models import identify

    name, variant = identify(model)
    label = _LABELS.get((name, variant)) or _LABELS.get((name, None))
    if label is None:
        label = f"{name} model"
    if (name, variant) not in _LABELS:
        label += f" (variant {variant})"
    return name, variant, label


def qcn_or_paper(params, variant: str | None = None, **kw):
    """``(model, why)``: the QCN model of ``params`` (``variant``, default the packet
    fidelity) and None, or, where the default does not follow the parameter set
    (:class:`~qcnmodel.models._base.NotModelled`: drift, more counter stages than it
    tabulates...) and no variant was asked for, the published equations and that error."""
    from qcnmodel.models import build_model
    from qcnmodel.models._base import NotModelled

    try:
        return build_model("qcn", params, variant, **kw), None
    except NotModelled as exc:
        if variant is not None:
            raise
        return build_model("qcn", params, "paper", **kw), exc


def paper_fallback(why, what: str) -> str:
    """The sentence that says the published equations answer ``what`` (e.g. "this verdict
    uses") because the packet-fidelity model does not follow the parameter set (``why``,
    from :func:`qcn_or_paper`)."""
    return (f"The QCN packet-fidelity fluid model does not cover this parameter set ({why}); "
            f"{what} the published cycle-averaged equations (--variant paper), which ignore "
            "drift, the cycle jitter and the sampling table (they sample at the base "
            "probability).")  # fmt: skip


def wrap_phase(deg):
    """Phase in degrees wrapped to (-180, 180] (``inf`` and ``nan`` unchanged)."""
    x = np.asarray(deg, float)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isfinite(x), 180.0 - np.remainder(180.0 - x, 360.0), x)
    return float(out) if out.ndim == 0 else out


def inactive_fields(params: QCNParams) -> list[str]:
    """Sentences naming the ``[qcn]`` fields that have no effect in the file's current mode
    (IEEE 802.1Qau-2010 clauses 32.8-32.9: the fixed probability and the sampling table are
    alternatives; the hyperactive-increase step applies only in HAI)."""
    p = params
    off = ineffective_fields(p)
    notes = []
    if "ps_fixed" in off:
        notes.append(
            f"ps_fixed = {p.ps_fixed:g} has no effect: it applies only with sampling = "
            f'"fixed"; this file uses the 802.1Qau sampling table (scaled by sample_base = '
            f"{p.sample_base:g} B, base probability {p.ps:.3g})"
        )
    else:
        notes.append(
            f"sample_base = {p.sample_base:g} B has no effect: it scales the sampling table, "
            f'which applies only with sampling = "table"; this file samples at ps_fixed = '
            f"{p.ps_fixed:g}"
        )
    if "r_hai" in off:
        notes.append(f"r_hai = {p.r_hai:g} bit/s has no effect: hai = false")
    if "drift_inc" in off and (p.drift_inc != 0 or p.drift_factor != 1):
        notes.append("drift_inc and drift_factor have no effect: drift_period = 0")
    return notes


def trajectory_note(flows) -> str:
    """The sentence saying which flow counts were judged by the model's trajectories."""
    ns = ", ".join(str(n) for n in flows)
    return (
        f"N = {ns}: judged by the model's trajectories (the critical RTT is where the odds "
        "that a run from idle oscillates or underflows pass one half): the mean field's "
        "linearisation misses the packets' boundary here, where the flows take discrete "
        "cuts at the sampling instants (few flows) or the sampled queue's frame noise keeps "
        "cutting them (many); the phase margins are the linearised loop's and do not decide "
        "the verdict"
    )


def no_queue_note(flows) -> str:
    """The sentence saying which flow counts have no linearised loop because the model's mean
    field balances only below an empty queue, and that its trajectories judge them."""
    ns = ", ".join(str(n) for n in flows)
    return (f"N = {ns}: no linearised loop: the model's mean field balances only below an "
            "empty queue there (its sampled queue's frame noise cuts the flows below C/N), so "
            "it has no equilibrium with a standing queue; the model's trajectories from idle "
            "judge these flow counts (the runs that underflow, the queue empty for more than "
            "1 % of the time, count as unstable, as the packets' do)")  # fmt: skip


# ------------------------------------------------------------------------- grid scans
def _pm_stable(loop, taus):
    """Phase margins (deg, unwrapped) and closed-loop stability of ``loop`` at the delays
    ``taus``, without the gain margin (crossovers and the delay-sweep argument principle)."""
    from qcnmodel.analysis.margins import margins_over_delay

    cross = getattr(loop, "_crossovers", None)
    if cross is None:  # rational loops: the full margins are cheap
        m = margins_over_delay(loop, taus)
        return np.asarray(m.phase_margin_deg, float), np.asarray(m.stable, bool)
    wc_all, pm0_all, direction = cross
    z0 = loop._z0
    if not wc_all.size:
        return np.full(taus.shape, np.inf), np.full(taus.shape, z0 == 0)
    dm0 = pm0_all / wc_all
    dm_sel = np.where(direction > 0, dm0, np.inf) if np.any(direction > 0) else dm0
    i = int(np.argmin(dm_sel))
    pm = np.degrees(pm0_all[i] - wc_all[i] * taus)
    a = np.remainder(pm0_all, 2 * np.pi)
    wt = wc_all[None, :] * taus[:, None]
    n_cross = np.where(wt >= a * (1 - 1e-12), np.floor((wt - a) / (2 * np.pi) + 1e-9) + 1, 0)
    z = z0 + 2 * (n_cross * direction[None, :]).sum(axis=1)
    return pm, z == 0


def scan(model, ranges, flows=None, method: str = "model", critical=None) -> dict:
    """Phase margin and stability of ``model`` over the RTT grid, for each N of ``flows``
    (default the ranges' flow grid).

    ``method="linearisation"`` judges every N by its linearised loop; ``"model"`` (default)
    judges an N whose model is judged by its trajectories below its critical RTT, taken from
    ``critical`` (N -> s) when given, else computed.

    Returns
    -------
    dict
        N -> ``(pm_deg, stable)`` arrays over ``ranges.rtt_grid()``; an N whose model has
        no operating point gives ``(-inf, False)`` everywhere.
    """
    from qcnmodel.analysis.boundary import judged_by_trajectories, judged_stable
    from qcnmodel.analysis.margins import extra_delay

    taus = ranges.rtt_grid()
    critical = critical or {}
    out = {}
    for n in ranges.flow_grid() if flows is None else flows:
        try:
            m = model.replace(n_flows=int(n))
            pm, st = _pm_stable(m.loop(), taus + extra_delay(m))
            if judged_by_trajectories(m, method):
                st = judged_stable(m, taus, st, critical.get(int(n)))
            out[int(n)] = (pm, np.asarray(st, bool))
        except ValueError:
            out[int(n)] = no_operating_point(taus)
    return out


def no_operating_point(taus) -> tuple[np.ndarray, np.ndarray]:
    """The :func:`scan` entry of a flow count whose model has no operating point: phase
    margin ``-inf`` and unstable at every RTT of ``taus``."""
    return np.full(np.shape(taus), -np.inf), np.zeros(np.shape(taus), bool)


def _verdict_of(table: dict, threshold: float, judged=(), critical=None,
                taus=None) -> tuple[str, float, int, int]:  # fmt: skip
    """(verdict, worst unwrapped PM, its N, its RTT index) of a :func:`scan` table.

    The flow counts in ``judged`` take their stability from the model's trajectories (their
    PM is the linearised loop's, which does not decide): their points rank after the others
    of the same stability, among themselves by RTT / critical RTT when ``critical`` (N -> s)
    and ``taus`` (the RTT grid) are given, and the phase-margin threshold does not apply to
    them."""
    worst, where = np.inf, None
    all_stable = True
    for n, (pm, st) in table.items():
        # an unstable point is worse than any stable one
        if n in judged and critical is not None and taus is not None:
            c = critical[n]
            if 0 < c < np.inf:
                ratio = np.log(c / np.asarray(taus))
            else:  # stable throughout (inf), or unstable at every RTT (nan, <= 0)
                ratio = np.full(len(st), 50.0 if c == np.inf else -50.0)
            key = np.where(st, 5e5, -5e5) + np.clip(ratio, -50, 50)
        else:
            key = np.where(st, pm, pm - 1e6) + (5e5 if n in judged else 0.0)
        k = int(np.argmin(key))
        if where is None or key[k] < worst:
            worst, where = float(key[k]), (n, k)
        all_stable &= bool(np.all(st))
    n, k = where
    pm = float(table[n][0][k])
    if not all_stable or (pm <= 0 and n not in judged):
        return "unstable", pm, n, k
    return ("marginal" if pm < threshold and n not in judged else "stable"), pm, n, k


def search_fields() -> dict:
    """The ``[qcn]`` fields a fix is searched in, with the (low, high) of each search:
    ``config.defaults["studies.check_search"]``, a number an absolute bound and ``"xF"`` a
    factor F of the current value."""
    from qcnmodel import config

    return dict(config.defaults["studies.check_search"])


def _bounds(params: QCNParams, name: str) -> tuple[float, float]:
    cur = float(getattr(params, name))
    lo, hi = search_fields()[name]
    lo = cur * float(lo[1:]) if isinstance(lo, str) else lo
    hi = cur * float(hi[1:]) if isinstance(hi, str) else hi
    return lo, hi


def _active_search(params: QCNParams) -> list[str]:
    off = ineffective_fields(params)
    return [f for f in search_fields() if f not in off]


#: the fix search judges candidates by their linearised loop (a phase margin to spare)
_LIN = "linearisation"


def search_fix(params, build, ranges, base_table: dict, progress=None,
               candidates: int | None = None, jobs: int | None = None) -> dict:  # fmt: skip
    """One ``[qcn]`` field change that makes the linearised loop *stable* over ``ranges``.

    Every candidate is judged by its linearised loop (every point closed-loop stable with the
    phase-margin threshold to spare), also at the flow counts whose verdict the model's
    trajectories give: a trajectory critical RTT costs seconds, and a search judges dozens of
    candidates. The check then puts the changes found to the trajectories, and continues a
    change they reject along its field
    (:func:`qcnmodel.studies._fix_sizing.put_to_trajectories`).

    Parameters
    ----------
    params : QCNParams
        The checked parameter set.
    build : callable
        ``build(params) -> model`` (the checked model and variant; picklable, as the fields
        are searched on forked workers).
    ranges : CheckRanges
        The checked ranges and threshold.
    base_table : dict
        :func:`scan` of the checked set (its worst flow counts are screened first).
    progress : tqdm, optional
        Advanced by a field's candidates when its search ends.
    candidates : int, optional
        Log-spaced values per field, ends included (default
        ``config.defaults["studies.check_candidates"]``).
    jobs : int, optional
        Processes searching the fields side by side (default the cores this process may use;
        1 searches here); the answer is the same.

    Returns
    -------
    dict
        ``searched`` (field -> [low, high]), ``fixes`` (every verified change, best first:
        ``field``, ``current``, ``value``, ``worst_phase_margin_deg`` (wrapped),
        ``worst_point``; smallest relative change first) and ``fix`` (the first, or None).

    Notes
    -----
    Each candidate is screened at the three flow counts with the smallest margins of the
    checked set (where the best falls short of the threshold, the log step about it is
    halved twice: a stable band can lie between it and a neighbour that has no answer, such
    as a W with no standing queue); the best candidate per field is then recomputed over the
    whole grid and kept only if that verdict is *stable*; three bisections (log scale)
    towards the current value then give the verified value nearest to it (the smallest
    change found).
    """
    from qcnmodel.studies.boundaries import map_calls

    thr = ranges.pm_threshold
    candidates = _candidates(candidates)
    order = sorted(base_table, key=lambda n: _verdict_of({n: base_table[n]}, thr)[1]
                   - (0 if np.all(base_table[n][1]) else 1e6))  # fmt: skip
    names = _active_search(params)
    calls = [(params, name, build, ranges, order[:3], candidates) for name in names]
    found = map_calls(_field_fix, calls, jobs, progress, weight=candidates)
    searched = {name: list(_bounds(params, name)) for name in names}
    fixes = [fix for fix in found if fix is not None]
    fixes.sort(key=_relative_change)  # smallest change first
    return {"searched": searched, "fixes": fixes, "fix": fixes[0] if fixes else None}


def _field_fix(params, name: str, build, ranges, screen, candidates: int) -> dict | None:
    """The fix of one field (:func:`search_fix`), or None."""
    thr = ranges.pm_threshold
    lo, hi = _bounds(params, name)
    best = None
    for value in np.geomspace(lo, hi, candidates):
        best = _better(best, _screened(params, name, value, build, ranges, screen))
    # short of the threshold: halve the log step about the best candidate, twice (its
    # neighbour can lie past a stable band, e.g. where no standing queue forms)
    step = np.log(hi / lo) / max(candidates - 1, 1)
    for _ in range(2 if best is not None and best[0] < thr else 0):
        step /= 2
        for value in best[1] * np.exp([-step, step]):
            if lo <= value <= hi:
                best = _better(best, _screened(params, name, value, build, ranges, screen))
    if best is None or best[0] < thr:
        return None
    verdict, pm, n, k = _verdict_of(scan(best[2], ranges, method=_LIN), thr)
    if verdict != "stable":
        return None
    value, (pm, n, k) = _closest(params, name, build, ranges, best[1], (pm, n, k))
    point = {"n_flows": n, "rtt_s": float(ranges.rtt_grid()[k])}
    return {"field": name, "table": "qcn", "current": float(getattr(params, name)),
            "value": value, "worst_phase_margin_deg": wrap_phase(pm), "worst_point": point,
            "untested": _untested(params, name, value, ranges)}  # fmt: skip


def _untested(params, name: str, value: float, ranges) -> str:
    """``"name = value (pairs: covered)"`` where the fix's value lies outside the values the
    validation's matched pairs ran (:func:`~qcnmodel.validation.envelope.untested_fields`),
    else ""."""
    from qcnmodel.validation.envelope import untested_fields

    fixed = params.replace(**{name: float(value)})
    said = [f for f in untested_fields("qcn", fixed, ranges.capacity) if f.startswith(name + " ")]
    return said[0] if said else ""


def _screened(params, name, value, build, ranges, screen):
    """``(score, value, model)`` of one candidate at the screened flow counts (its worst
    phase margin, an unstable one less 1e6), or None where the model has no answer."""
    try:
        model = build(params.replace(**{name: float(value)}))
        v = _verdict_of(scan(model, ranges, screen, _LIN), ranges.pm_threshold)
    except ValueError:
        return None
    return (v[1] if v[0] != "unstable" else v[1] - 1e6), float(value), model


def _better(best, cand):
    """The higher-scoring of two screened candidates (None loses)."""
    return cand if best is None or (cand is not None and cand[0] > best[0]) else best


def _relative_change(fix: dict) -> float:
    """|log(value / current)| of a fix; infinite from a current value of 0 (W = 0: no
    derivative term), which no relative change reaches."""
    cur, value = fix["current"], fix["value"]
    return float(abs(np.log(value / cur))) if cur > 0 and value > 0 else float("inf")


def _closest(params, name, build, ranges, value, found, steps: int = 3):
    """The verified value nearest the current one: bisect (log scale) between the current
    value and ``value``, keeping the nearest whose whole grid is stable (from a current
    value of 0 there is no log scale: ``value`` itself)."""
    thr = ranges.pm_threshold
    cur = float(getattr(params, name))
    if not cur > 0:
        return float(value), found
    lo, hi = np.log(cur), np.log(value)  # lo fails (the checked set), hi is stable
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        try:
            verdict, pm, n, k = _verdict_of(
                scan(build(params.replace(**{name: float(np.exp(mid))})), ranges, method=_LIN), thr
            )
        except ValueError:
            verdict = "unstable"
        if verdict == "stable":
            hi, found = mid, (pm, n, k)
        else:
            lo = mid
    return float(np.exp(hi)), found


def _candidates(candidates: int | None) -> int:
    """Candidates per searched field: ``candidates`` or ``studies.check_candidates``."""
    from qcnmodel import config

    n = config.defaults["studies.check_candidates"] if candidates is None else candidates
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"candidates: need a whole number >= 2 (studies.check_candidates), "
                         f"got {n!r}")  # fmt: skip
    return n


def search_steps(params: QCNParams, candidates: int | None = None) -> int:
    """Number of candidates :func:`search_fix` screens on its coarse grid (for a progress
    bar; the refinement about the best adds at most four per field)."""
    return len(_active_search(params)) * _candidates(candidates)


# ------------------------------------------------------------------------- the paragraph
def _us(x: float) -> str:
    """A time in us (ms from 1 ms on), three significant digits."""
    return f"{x * 1e3:.3g} ms" if abs(x) >= 1e-3 else f"{x * 1e6:.3g} us"


def headline(result, ranges) -> str:
    """The one-paragraph verdict of a :class:`~qcnmodel.studies.check.CheckResult`."""
    r = result
    span = (f"RTT {_us(ranges.rtt[0])} .. {_us(ranges.rtt[1])} and N {ranges.flows[0]} .. "
            f"{ranges.flows[1]} flows")  # fmt: skip
    if getattr(ranges, "capacity", None) is not None:
        span += f" into a {ranges.capacity / 1e9:g} Gb/s port"
    wp = r.worst_point
    pm = wrap_phase(r.worst_phase_margin_deg)
    where = f"N = {wp['n_flows']}, RTT = {_us(wp['rtt_s'])}"
    judged = getattr(r, "judged_flows", ())
    from qcnmodel.studies.check_text import band_words, judged_bands

    bands = judged_bands(r)  # where a band, not a critical RTT, makes a flow count stable
    at = "" if len(bands) == len(judged) else f" (at N = {', '.join(map(str, bands))})"
    traj = ("below the critical RTT of the model's trajectories, where the odds that a run "
            "oscillates pass one half"
            + (f", or inside its stable band{at}" if bands else ""))  # fmt: skip
    lin = (f"closed-loop stable with a phase margin of at least {r.pm_threshold_deg:g} deg "
           "(exact delay)")  # fmt: skip
    if judged and len(judged) == len(r.critical_rtt_s):
        means = f"every point {traj}"
    elif judged:
        means = f"every point {lin}; at N = {', '.join(map(str, judged))}, {traj}"
    else:
        means = f"every point {lin}"
    text = [f"{r.verdict.upper()} over {span} ({r.model_label}; stable means {means})."]
    if getattr(r, "fallback", ""):
        text.append(r.fallback)
    over = getattr(r, "overloaded", {})
    if wp["n_flows"] in over:  # no operating point: the port cannot be held there
        text.append(_overload_text(r))
    elif wp["n_flows"] in judged:  # its verdict is the trajectories', not the phase margin's
        crit = r.critical_rtt_s.get(wp["n_flows"], float("nan"))
        said = (f"critical RTT {_us(crit)}" if math.isfinite(crit) else
                band_words(bands[wp["n_flows"]], wp["rtt_s"]) if wp["n_flows"] in bands else
                "no critical RTT: their runs are unstable (they oscillate, empty the port or "
                "never settle) from the smallest RTT they are run at"
                if math.isnan(crit) else "stable at every RTT they are run at")  # fmt: skip
        lin_pm = (f"linearised phase margin {pm:.1f} deg" if math.isfinite(pm) else
                  "no linearised loop: no equilibrium with a standing queue")  # fmt: skip
        text.append(f"Worst point: {where}, judged by the model's trajectories ({said}; "
                    f"{lin_pm}).")  # fmt: skip
        if r.verdict != "stable":
            text.append(_binding(r, ranges))
    elif r.verdict == "stable":
        text.append(f"Worst point: {where}, phase margin {pm:.1f} deg.")
    else:
        raw = r.worst_phase_margin_deg
        if raw < -180:  # more than half a turn beyond the boundary: the wrapped value misleads
            crit = r.critical_rtt_s.get(wp["n_flows"], float("nan"))
            beyond = (f"; the RTT exceeds the critical RTT there ({_us(crit)}) by "
                      f"{_us(wp['rtt_s'] - crit)}" if crit > 0 else "")  # fmt: skip
            text.append(f"Worst point: {where}, phase margin below -180 deg ({raw:.0f} deg "
                        f"unwrapped, {pm:.1f} deg wrapped to (-180, 180]){beyond}.")  # fmt: skip
        else:
            text.append(f"Worst point: {where}, phase margin {pm:.1f} deg.")
        text.append(_binding(r, ranges))
    fix = r.fix
    if r.verdict != "stable" and fix is not None:
        from qcnmodel.studies._fix_sizing import fix_sentence

        text.append(fix_sentence(fix, r.pm_threshold_deg))
    elif r.verdict != "stable" and r.searched:
        names = ", ".join(f"{k} {lo:.3g} .. {hi:.3g}{_UNITS.get(k, '')}"
                          for k, (lo, hi) in r.searched.items())  # fmt: skip
        text.append(f"No single-parameter change within range stabilises it (searched {names}).")
    return " ".join(text)


#: units of the searched fields in the headline (TOML values are SI)
_UNITS = {"qeq": " B", "bc_limit": " B", "sample_base": " B", "timer": " s"}


def _overload_text(r) -> str:
    """The worst point and binding constraint of a check whose ranges reach flow counts the
    feedback cannot hold (no equilibrium: the port stays overloaded)."""
    over = sorted(r.overloaded)
    held = getattr(r, "held_flows", None)
    most = "" if held is None else (f" It holds at most N = {held} flows "
                                    "(qcnmodel.held_flows)." if held > 0 else
                                    " It holds not even one flow.")  # fmt: skip
    ns = f"N = {over[0]}" + (f" (and {len(over) - 1} more flow counts up to {over[-1]})"
                             if len(over) > 1 else "")  # fmt: skip
    ratio = r.overloaded[over[0]]
    at = f" at {ratio:.3g} x C/N" if math.isfinite(ratio) else " above C/N"
    return (f"Worst point: {ns}, where the feedback cannot hold the flows at their fair "
            f"share C/N at any RTT: the model has no equilibrium, as even full-scale feedback "
            f"on every sample leaves them{at}, so the congested queue grows until frames are "
            f"dropped or paused.{most} Fewer flows, a larger gd or a higher sampling "
            "probability hold more.")  # fmt: skip


def _binding(r, ranges) -> str:
    """The binding constraint: the N with the smallest critical RTT.

    A flow count unstable over the whole range is named with its reason: for one judged by
    the model's trajectories, either no critical RTT (``nan``: its runs are unstable already at
    the smallest RTT they are run at, ``config.defaults["analysis.trajectory_rtt_search"]``,
    whatever the range's start) or a critical RTT below the range's start (its runs are
    stable below it, at RTTs the range does not reach); for one judged by its linearised
    loop, no positive phase margin at the range's start."""
    crit = {n: c for n, c in r.critical_rtt_s.items()}
    n_bad = [n for n, c in crit.items() if not (c > ranges.rtt[0])]
    if n_bad:
        judged = set(getattr(r, "judged_flows", ()))
        by_runs = [n for n in n_bad if n in judged]
        never = ", ".join(str(n) for n in by_runs if math.isnan(crit[n]))
        below = [n for n in by_runs if not math.isnan(crit[n])]
        by_loop = ", ".join(str(n) for n in n_bad if n not in judged)
        parts = []
        if never:
            from qcnmodel import config

            low = config.defaults["analysis.trajectory_rtt_search"][0]
            bands = getattr(r, "stable_bands", {})
            within = "; ".join(f"{_us(b[0])} to {_us(b[1])} at N = {n}"
                               for n, b in bands.items() if n in n_bad)  # fmt: skip
            parts.append(f"at N = {never} the model's trajectories have no critical RTT: their "
                         "runs are unstable (they oscillate, empty the port or never settle) "
                         f"already at {_us(low)}, the smallest RTT they are run at"
                         + (f" (the flows' timers in step; stable from {within})"
                            if within else ""))  # fmt: skip
        if below:
            values = ", ".join(f"{_us(crit[n])} at N = {n}" for n in below)
            parts.append(f"the critical RTT of the model's trajectories lies below the "
                         f"smallest RTT checked ({_us(ranges.rtt[0])}): {values}")  # fmt: skip
        if by_loop:
            parts.append(f"at N = {by_loop} the loop has no positive phase margin even at "
                         f"the smallest RTT checked ({_us(ranges.rtt[0])})")  # fmt: skip
        return "Binding constraint: " + "; ".join(parts) + "."
    n, c = min(crit.items(), key=lambda kv: kv[1])
    if c < ranges.rtt[1]:
        return (f"Binding constraint: the critical RTT at N = {n} is {_us(c)}, below the "
                f"largest RTT checked ({_us(ranges.rtt[1])}).")  # fmt: skip
    return (
        f"Binding constraint: the phase margin falls below {r.pm_threshold_deg:g} deg "
        f"before the critical RTT (smallest critical RTT {_us(c)} at N = {n})."
    )
