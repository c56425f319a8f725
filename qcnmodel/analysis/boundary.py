"""The stability boundary in RTT of a model judged by its trajectories, not by a linearisation.

Some operating points have no linearisation that predicts the loop: one QCN flow sits in the
quantiser's dead zone (most CNMs carry qFb = 0 and hold its rate) and takes discrete cuts at
the sampling instants, and at a few or tens of flows the sampled queue's frame noise drives
large cycles that a mean field without noise does not have. A model can then declare
``boundary_method = "trajectories"`` and a predicate ``trajectory_unstable()`` (its own
nonlinear trajectories classified by the oscillation detector of :mod:`.timeseries`; with
``trajectory_odds()``, the counts behind it); :func:`trajectory_critical_rtt` finds the RTT
at which their odds pass one half, and :func:`qcnmodel.analysis.margins.critical_rtt`
answers with it for such models. Where the runs cycle at the search's start (many flows
whose timers run in step at small RTTs) and are stable above, :func:`stable_band` finds that
band; :func:`trajectory_boundary` gives both, one answer per operating point over the model's
own search interval, which every surface (check, margins, stability maps, the report) reads,
so that a point's verdict does not depend on the range it is asked in.

Where a model's trajectories are stochastic (they draw the protocol's jitter and sampling),
its verdict at one RTT is the majority of several runs, and the boundary is where the odds of
a run oscillating pass one half; near it they grow gradually with the RTT.
:func:`unstable_fraction` gives those odds over an RTT grid (from
``.trajectory_verdicts()``), which shows how sharp a boundary is, and :func:`odds_crossing`
where they pass one half: odds counted at several RTTs estimate it with less sampling error
than any one majority verdict (the majority of 9 runs whose odds are 4 in 10 reads
"unstable" one time in four).

Like the rest of this layer it knows no protocol: a model is anything with ``rtt``,
``.replace(rtt=...)`` and ``.trajectory_unstable()`` (and ``.trajectory_verdicts()``).
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.analysis._args import require, time_or_none
from qcnmodel.analysis.odds import odds_crossing, trajectory_odds, unstable_fraction

__all__ = ["METHODS", "band_grid", "boundary_method", "check_method", "first_unstable_rtt",
           "critical_rtt_above", "judged_by_trajectories", "judged_stable", "majority_stable",
           "odds_crossing", "past_trajectory_limit", "search_from", "search_interval",
           "stable_band", "trajectory_boundary", "trajectory_critical_rtt",
           "unstable_fraction"]  # fmt: skip


def boundary_method(model) -> str:
    """How ``model``'s stability boundary is found: its ``boundary_method``, else
    ``"linearisation"``."""
    return getattr(model, "boundary_method", "linearisation")


#: how a caller may ask for a model's boundary: its own boundary method, or the linearisation
METHODS = ("model", "linearisation")


def check_method(method: str, field: str = "method") -> str:
    """``method`` if it is one of :data:`METHODS`, else ValueError naming ``field``."""
    if method not in METHODS:
        raise ValueError(f"{field}: 'model' or 'linearisation', got {method!r}")
    return method


def judged_by_trajectories(model, method: str = "model") -> bool:
    """Whether ``model`` is judged by its trajectories: it declares ``boundary_method =
    "trajectories"`` and ``method`` (:data:`METHODS`) asks for the model's own method."""
    return check_method(method) == "model" and boundary_method(model) == "trajectories"


def past_trajectory_limit(model) -> bool:
    """Whether ``model`` is a congested port that its trajectories would judge but for its
    flow count (past ``config.defaults["analysis.trajectory_max_flows"]``: each run follows
    every flow), so that its linearised loop judges it instead."""
    return (hasattr(model, "trajectory_odds") and bool(getattr(model, "congested", False))
            and boundary_method(model) == "linearisation")  # fmt: skip


def judged_stable(model, rtts, linear_stable, critical: float | None = None,
                  band: tuple[float, float] | None = None) -> np.ndarray:  # fmt: skip
    """Stability of ``model`` at the RTTs ``rtts``: the linearisation's (``linear_stable``),
    or, for a model judged by its trajectories, ``rtt < critical`` with ``critical`` its
    trajectories' critical RTT (computed when not given), or, given the ``band`` (start,
    end) where runs that cycle at small RTTs are stable
    (:func:`~qcnmodel.analysis.stability.stable_band`), ``start <= rtt < end``."""
    if not judged_by_trajectories(model):
        return np.asarray(linear_stable, bool)
    rtts = np.asarray(rtts, float)
    if band is not None:
        return (rtts >= band[0]) & (rtts < band[1])
    crit = trajectory_critical_rtt(model) if critical is None else critical
    return rtts < crit


def majority_stable(model) -> bool:
    """Whether most of ``model``'s first runs at its RTT are stable: the first count of its
    odds (``trajectory_odds``: five runs when they agree), or its one trajectory."""
    if hasattr(model, "trajectory_odds"):
        k, n = trajectory_odds(model)
    else:
        k, n = int(bool(model.trajectory_unstable())), 1
    return 2 * k <= n


def first_unstable_rtt(unstable, rtt_min: float, rtt_max: float, rel_tol: float = 0.005,
                       ladder: float = 1.5, confirm: int = 1) -> float:  # fmt: skip
    """Smallest RTT at which ``unstable(rtt)`` holds, on a geometric ladder then bisection.

    Parameters
    ----------
    unstable : callable
        ``unstable(rtt) -> bool``; assumed to turn once, from False to True, as the RTT grows
        (the first confirmed turn is returned).
    rtt_min, rtt_max : float
        Search interval (s), ``0 < rtt_min < rtt_max < inf``.
    rel_tol : float
        Relative width of the final bracket; the answer is its geometric midpoint.
    ladder : float
        Ratio of consecutive RTTs of the ladder (> 1).
    confirm : int
        Rungs after an unstable rung that must be unstable as well for the ladder to stop
        there (>= 0). A verdict taken from stochastic trajectories is a coin near a boundary,
        whose odds of "unstable" grow with the RTT; a rung that comes up unstable alone (its
        next rung stable) is a throw of that coin, not the turn, and the ladder climbs on
        from the stable rung. ``0`` stops at the first unstable rung.

    Returns
    -------
    float
        The boundary (s); ``inf`` if stable up to ``rtt_max``; ``nan`` if already unstable at
        ``rtt_min`` (and confirmed; like :func:`~qcnmodel.analysis.margins.critical_rtt`).

    Notes
    -----
    Each RTT is asked once; the bisection runs inside the bracket [last stable rung, first
    confirmed unstable rung].
    """
    if not (0 < rtt_min < rtt_max < math.inf):
        raise ValueError(f"rtt_min, rtt_max: need 0 < rtt_min < rtt_max < inf s, got "
                         f"{rtt_min!r}, {rtt_max!r}")  # fmt: skip
    if not (0 < rel_tol < 1) or not (ladder > 1):
        raise ValueError(f"rel_tol in (0, 1) and ladder > 1 needed, got {rel_tol!r}, {ladder!r}")
    if isinstance(confirm, bool) or not isinstance(confirm, int) or confirm < 0:
        raise ValueError(f"confirm: expected a whole number >= 0, got {confirm!r}")
    seen: dict[float, bool] = {}

    def ask(rtt: float) -> bool:
        if rtt not in seen:
            seen[rtt] = bool(unstable(rtt))
        return seen[rtt]

    def rung(rtt: float) -> float:
        return min(rtt * ladder, rtt_max)

    def stable_after(rtt: float) -> float | None:
        """The first stable one of the ``confirm`` rungs after ``rtt``, None if all are
        unstable (or ``rtt`` is the last rung)."""
        for _ in range(confirm):
            nxt = rung(rtt)
            if nxt <= rtt:
                return None
            if not ask(nxt):
                return nxt
            rtt = nxt
        return None

    lo = rtt_min
    if ask(lo):
        nxt = stable_after(lo)
        if nxt is None:
            return math.nan
        lo = nxt
    while True:
        hi = rung(lo)
        if ask(hi):
            nxt = stable_after(hi)
            if nxt is None:
                break
            lo = nxt  # an unstable rung alone: climb on from the stable one
            if lo >= rtt_max:
                return math.inf
            continue
        if hi >= rtt_max:
            return math.inf
        lo = hi
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if ask(mid):
            hi = mid
        else:
            lo = mid
    return math.sqrt(lo * hi)


#: RTTs that the analysed part of a run must hold for its verdict to mean anything: the
#: detector's longest period is a third of the window, and a cycle of the loop lasts several
#: RTTs (the packet confirmation asks the same of its runs)
WINDOW_RTTS = 10


def search_interval(model) -> tuple[float, float]:
    """The RTTs (s) over which ``model``'s trajectory critical RTT is searched by default: its
    ``trajectory_rtt_search`` if it has one, else
    ``config.defaults["analysis.trajectory_rtt_search"]`` (trajectories cost time per RTT, so
    the interval is the physically relevant one), which ends where the analysed part of the
    runs (``config.defaults["models.verdict_run"]``: duration - settle) holds
    :data:`WINDOW_RTTS` RTTs (30 ms by default; the model's ``verdict_run``, ``(duration,
    settle)``, where it stretches its runs): past it a run's verdict is its start-up
    transient, not the loop; it starts no lower than the parameter set's ``cp_latency``,
    which every loop delay contains."""
    from qcnmodel import config

    own = getattr(model, "trajectory_rtt_search", None)
    lo, hi = own or config.defaults["analysis.trajectory_rtt_search"]
    if own is None:
        run = config.defaults["models.verdict_run"]
        duration, settle = getattr(model, "verdict_run", (run["duration"], run["settle"]))
        hi = min(float(hi), (float(duration) - float(settle)) / WINDOW_RTTS)
    lo = max(float(lo), float(getattr(getattr(model, "params", None), "cp_latency", 0.0) or 0.0))
    return lo, max(float(hi), 1.5 * lo)


def search_from(model, rtt_min: float | None) -> tuple[float | None, float | None]:
    """The search interval of a trajectory critical RTT that starts at ``rtt_min`` (None: the
    model's own interval): from the larger of ``rtt_min`` and the interval's start (the
    smallest RTT the trajectories are run at) to its end, at least 1.5 ``rtt_min``."""
    if rtt_min is None:
        return None, None
    lo, hi = search_interval(model)
    lo = max(lo, float(rtt_min))
    return lo, max(hi, 1.5 * lo)


def critical_rtt_above(model) -> float | None:
    """For a model whose trajectories cycle at the start of its critical RTT search (its
    critical RTT is ``nan``), the critical RTT of a search from its own RTT when that RTT
    lies past the ladder's first two rungs and most of the first runs there are stable (a
    stable band above a cycle at small RTTs: at 10 Gb/s, N = 30-60, the flows' timers run in
    step below about 100 us); else None (nothing to search: unstable there too)."""
    if not model.rtt > 1.5 * search_interval(model)[0]:  # the default search saw its start
        return None  # and 1.5 x it unstable
    if not majority_stable(model):  # the search's first count
        return None
    return float(trajectory_critical_rtt(model, *search_from(model, model.rtt)))


#: ratio of the ladder of RTTs a flow count without a critical RTT is climbed on
_BAND_LADDER = 1.25
#: ratio of consecutive RTTs of :func:`band_grid`, on which a band's start is placed
_BAND_GRID = 1.05


def band_grid(model) -> np.ndarray:
    """The RTTs (s) on which the start of ``model``'s stable band is placed: 1.5 x the start
    of its search interval (the search found both unstable) times 1.05^k, k = 0, 1, ..., up
    to the interval's end. They depend on the model alone, so that its band is one answer,
    whatever RTTs a check, a map or a point asks about; anchored at the start, the points do
    not move when the end does (a longer run, ``config.defaults["models.verdict_run"]``,
    only adds points)."""
    lo, hi = search_interval(model)
    start = 1.5 * lo
    if not hi > start:
        return np.array([], float)
    n = int(math.floor(math.log(hi / start) / math.log(_BAND_GRID) + 1e-9)) + 1
    return start * _BAND_GRID ** np.arange(max(n, 2))


def stable_band(model, rtts=None) -> tuple[float, float] | None:
    """The band of RTTs where the runs of a ``model`` that cycle at the start of its critical
    RTT search are stable: ``(start, critical RTT above it)``, or None.

    Many flows can cycle at small RTTs (their timers in step) and be stable at larger ones:
    at 10 Gb/s, N = 28-43, packets and model alike. The RTTs ``rtts`` (default
    :func:`band_grid`: the band is then the model's own, whatever range asks) past 1.5 x the
    search's start (which the search found unstable) are climbed on a ladder of ratio 1.25,
    the band's start is bisected between the last unstable and the first stable rung (the
    majority of the first runs, :func:`majority_stable`), and its end is the critical RTT
    searched from there (:func:`critical_rtt_above`). The default band is memoised as the
    searches are.
    """
    lo, hi = search_interval(model)  # in the key: a band is that of its search interval
    key = _memo_key(model, "band", _BAND_GRID, _BAND_LADDER, lo, hi) if rtts is None else None
    if key is not None and key in _MEMO:
        return _MEMO[key]
    grid = band_grid(model) if rtts is None else np.asarray(rtts, float)
    cand = sorted(float(r) for r in grid if 1.5 * lo < r <= hi)
    band = _band_on(model, cand)
    if key is not None:
        _MEMO[key] = band
    return band


def _band_on(model, cand: list) -> tuple[float, float] | None:
    """:func:`stable_band` on the sorted candidate RTTs ``cand``. A band narrower than one
    rung of the ladder (its end below 1.25 x its start) is a stable coin among unstable runs,
    not a band: the climb goes on above it."""
    last, i = -1, 0
    while i < len(cand):
        first = None
        while i < len(cand):
            if majority_stable(model.replace(rtt=cand[i])):
                first = i
                break
            last = i
            while i < len(cand) and cand[i] < _BAND_LADDER * cand[last]:
                i += 1
        if first is None:
            return None
        while first - last > 1:
            mid = (first + last) // 2
            if majority_stable(model.replace(rtt=cand[mid])):
                first = mid
            else:
                last = mid
        start = cand[first]
        end = critical_rtt_above(model.replace(rtt=start))
        if end is not None and end >= _BAND_LADDER * start:
            return start, float(end)
        top = _BAND_LADDER * max(start, end if end is not None and math.isfinite(end) else 0.0)
        while i < len(cand) and cand[i] < top:
            i += 1
        last = i - 1
    return None


def trajectory_boundary(model) -> tuple[float, tuple[float, float] | None]:
    """Where ``model``'s trajectories are stable in RTT: ``(critical RTT, band)``.

    One answer per operating point, from the model's own search interval, whatever RTTs are
    asked about: stable below the critical RTT (:func:`trajectory_critical_rtt`) when it is
    a number (``inf``: stable throughout); where it is ``nan`` (the runs cycle at the
    search's start), stable in the band ``(start, end)`` of :func:`stable_band` if there is
    one, else nowhere. A check, a stability map and ``margins`` at one point read the same
    boundary, so that a point's verdict does not depend on the range it is asked in.
    """
    crit = float(trajectory_critical_rtt(model))
    return crit, (stable_band(model) if math.isnan(crit) else None)


def trajectory_critical_rtt(
    model,
    rtt_min: float | None = None,
    rtt_max: float | None = None,
    rel_tol: float | None = None,
    start: float | None = None,
    seeds: tuple[int, int] | int | None = None,
) -> float:
    """Critical RTT (s) of ``model`` from its own trajectories: where its odds of an unstable
    run pass one half.

    Parameters
    ----------
    model : model judged by its trajectories
        Anything with ``rtt``, ``.replace(rtt=...)`` and ``.trajectory_unstable()``; with
        ``.trajectory_odds()`` (``(unstable, runs)``, e.g. the packet-fidelity QCN model)
        the runs' counts are fitted, not only their majority.
    rtt_min, rtt_max : float, optional
        Search interval (s; default the model's ``trajectory_rtt_search`` if it has one,
        else ``config.defaults["analysis.trajectory_rtt_search"]``: trajectories cost time
        per RTT, so the interval is the physically relevant one).
    rel_tol : float, optional
        Relative spacing of the RTTs at which the odds are counted across the turn's bracket
        (default ``config.defaults["analysis.trajectory_rel_tol"]``).
    start : float or str, optional
        First RTT tried (s; unit strings accepted). Default: the linearised loop's critical
        RTT where the model has one in the interval (a boundary is usually within a few
        ladder rungs of it), else ``config.defaults["analysis.trajectory_rtt_start"]``.
    seeds : (int, int) or int, optional
        Runs per RTT tried while the turn is searched (all of them unless the first five
        agree), and across its bracket (one number: both; default
        ``config.defaults["analysis.trajectory_seeds"]``), for a model with
        ``trajectory_odds``; a model without it gives its own verdict at each RTT.

    Returns
    -------
    float
        The crossing; ``inf`` when stable up to ``rtt_max``; ``nan`` when already unstable
        at ``rtt_min``.

    Notes
    -----
    The interval's start is tried first: a loop whose runs oscillate there and one ladder
    rung above (many flows can cycle at any RTT, their timers in step) has no critical RTT
    (``nan``), whatever it does at larger RTTs. Every RTT tried lies on one lattice fixed by
    the interval, ``rtt_min * (1 + rel_tol)^k``, so that the answer does not depend on the
    start. A geometric ladder (ratio about 1.5, a whole number of lattice steps) from the
    lattice point nearest ``start``
    climbs while the odds stay at most one half, or descends while they exceed it, until it
    brackets the turn; an unstable rung is only a turn when the next rung up is unstable too
    (near a boundary one RTT's verdict is a coin). The odds are then counted over the larger
    number of runs at every lattice point across that bracket, and the answer is
    :func:`odds_crossing` of the odds at every RTT tried, weighted by their runs: an isotonic
    fit that passes over a coin which came up the wrong way (a bisection on majority verdicts
    would follow it), interpolated where the odds pass one half. Where that crossing falls
    outside the RTTs counted with the larger number of runs, up to four more are counted
    beyond them, one step at a time. Near a gradual boundary that is the crossing the
    validation compares with the packets' (`qcnmodel validate`).
    """
    from qcnmodel import config

    require(model, "model", ("replace",), "a model judged by its trajectories (e.g. "
            "QCNFluidModel)", ("trajectory_unstable", "trajectory_odds"))  # fmt: skip
    lo, hi = search_interval(model)
    rtt_min, rtt_max = time_or_none(rtt_min, "rtt_min"), time_or_none(rtt_max, "rtt_max")
    try:
        lo = float(lo if rtt_min is None else rtt_min)
        hi = float(hi if rtt_max is None else rtt_max)
    except (TypeError, ValueError):
        raise ValueError(f"rtt_min, rtt_max: need times (s, or strings such as '50us'), got "
                         f"{rtt_min!r}, {rtt_max!r}") from None  # fmt: skip
    if not (0 < lo < hi < math.inf):
        raise ValueError(f"rtt_min, rtt_max: need 0 < rtt_min < rtt_max < inf s, got "
                         f"{lo!r}, {hi!r}")  # fmt: skip
    tol = config.defaults["analysis.trajectory_rel_tol"] if rel_tol is None else rel_tol
    if not (0 < tol < 1):
        raise ValueError(f"rel_tol: need a value in (0, 1), got {tol!r}")
    n_seeds = config.defaults["analysis.trajectory_seeds"] if seeds is None else seeds
    if isinstance(n_seeds, (int, np.integer)) and not isinstance(n_seeds, bool):
        n_seeds = (int(n_seeds), int(n_seeds))
    if (not isinstance(n_seeds, (tuple, list)) or len(n_seeds) != 2
            or not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1
                       for k in n_seeds)):  # fmt: skip
        raise ValueError(f"seeds: need a whole number >= 1 or two of them (the search's runs "
                         f"per RTT, then across its bracket), got {seeds!r}")  # fmt: skip
    n_seeds = (int(n_seeds[0]), int(n_seeds[1]))
    if start is not None:
        start = float(time_or_none(start, "start"))
        if not (0 < start < math.inf):
            raise ValueError(f"start: need an RTT in (0, inf) s, got {start!r}")
    key = _memo_key(model, lo, hi, tol, start, n_seeds)
    if key is not None and key in _MEMO:
        return _MEMO[key]
    out = _search(model, lo, hi, tol, start, n_seeds)
    if key is not None:
        if len(_MEMO) >= 256:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = out
    return out


#: trajectory critical RTTs found in this process, by model (at a fixed RTT) and search
_MEMO: dict = {}


def _memo_key(model, *search):
    """The key of a search in :data:`_MEMO`: the model with its RTT set aside (the search
    replaces it), the search's settings and the verdict runs' settings; None when the model
    cannot be hashed (then nothing is kept)."""
    from qcnmodel import config

    try:
        key = (model.replace(rtt=1.0), *search, repr(config.defaults["models.verdict_run"]),
               repr(config.defaults["models.dcqcn_run"]),
               config.defaults["analysis.trajectory_rtt_start"])  # fmt: skip
        hash(key)
    except (TypeError, ValueError, AttributeError):
        return None
    return key


def _search(model, lo: float, hi: float, tol: float, start, n_seeds) -> float:
    """:func:`trajectory_critical_rtt` once its settings are checked (no memo), with a
    counter of the runs on stderr where ``config.defaults["analysis.trajectory_progress"]``."""
    import sys

    from tqdm import tqdm

    from qcnmodel import config

    n = getattr(model, "n_flows", None)
    with tqdm(desc="critical RTT from the model's runs" + (f", N = {n}" if n else ""),
              unit="run", file=sys.stderr, leave=False,
              disable=not config.defaults["analysis.trajectory_progress"]) as bar:  # fmt: skip
        return _searched(model, lo, hi, tol, start, n_seeds, bar)


def _searched(model, lo: float, hi: float, tol: float, start, n_seeds, bar) -> float:
    """:func:`_search`'s body; ``bar`` (a tqdm bar, perhaps disabled) counts the runs.

    Every RTT the search runs lies on one lattice, ``lo * (1 + tol)^k`` (and ``hi``), fixed
    by the search interval: the start is the lattice point nearest it and the ladder climbs
    a whole number of lattice steps (ratio about 1.5). The odds at a lattice point are the
    same whichever start led there, so the crossing does not follow the RTTs a start
    happened to pick (spread along a gradual rise of the odds, it moved by +-10 %)."""
    odds: dict[float, tuple[int, int]] = {}  # rtt -> (unstable runs, runs)
    step = 1.0 + tol
    log_step = math.log(step)
    top = int(math.floor(math.log(hi / lo) / log_step + 1e-9))  # the last lattice point <= hi

    def at(k: int) -> float:  # lattice point k, hi past the last one
        return lo * step**k if 0 <= k <= top else (lo if k < 0 else hi)

    def index(rtt: float) -> int:
        if rtt >= hi:
            return top + 1
        return min(max(int(round(math.log(max(rtt, lo) / lo) / log_step)), 0), top)

    def ask(rtt: float, runs: int, every: bool = False) -> None:
        at_rtt = model.replace(rtt=rtt)
        try:
            if hasattr(at_rtt, "trajectory_odds"):
                odds[rtt] = trajectory_odds(at_rtt, runs, None if every else 5)
            else:
                odds[rtt] = (int(bool(at_rtt.trajectory_unstable())), 1)
            bar.update(odds[rtt][1])
        except RuntimeError as exc:  # e.g. an integrator that stalls: an answer, not a crash
            raise ValueError(f"the model's trajectories failed at RTT {rtt * 1e6:.4g} us "
                             f"({exc}); its critical RTT cannot be found from them (the "
                             "linearisation's: method='linearisation')") from None  # fmt: skip

    def unstable(rtt: float) -> bool:
        rtt = at(index(rtt))  # on the lattice
        if rtt not in odds:
            ask(rtt, n_seeds[0])
        k, n = odds[rtt]
        return 2 * k > n

    rungs = max(1, int(round(math.log(1.5) / log_step)))  # the ladder's steps of the lattice
    ladder = step**rungs
    first = at(index(_start(model, lo, hi) if start is None else float(start)))
    if first > lo and unstable(lo) and unstable(at(rungs)):
        return math.nan  # unstable from the interval's start (e.g. a cycle at any RTT)
    turn = _bracket(unstable, first, lo, hi, ladder)
    if turn is None or not np.isfinite(turn[0]):
        return math.inf if turn is None else math.nan
    ka, kb = index(turn[0]), index(turn[1])
    grid = [at(k) for k in range(ka, kb + 1)]  # the bracket, every run counted
    a, b = grid[0], grid[-1]
    for _ in range(_EXTEND + 1):
        for rtt in grid:
            if rtt not in odds or odds[rtt][1] < n_seeds[1]:
                ask(rtt, n_seeds[1], every=True)
        cross = _crossing(odds)
        # the crossing outside the counted RTTs (the ladder's 9-run rungs placed the bracket
        # on a gradual rise): count one step further on that side
        if cross < at(ka) and ka > 0:
            ka -= 1
            grid = [at(ka)]
        elif cross > at(kb) and kb <= top:
            kb += 1
            grid = [at(kb)]
        else:
            break
    return cross if 0.0 < cross < math.inf else math.sqrt(a * b)


#: how many steps beyond its bracket a trajectory search counts the odds, at most
_EXTEND = 4


def _crossing(odds: dict) -> float:
    """:func:`odds_crossing` of the counts ``rtt -> (unstable, runs)``, weighted by runs."""
    r = np.array(sorted(odds))
    k, n = np.array([odds[x] for x in r], float).T
    return odds_crossing(k / n, r, weights=n)


def _start(model, lo: float, hi: float) -> float:
    """The first RTT a trajectory search tries: the linearised critical RTT, if the model has
    a loop whose critical RTT lies in ``(lo, hi)``, else the configured start."""
    from qcnmodel import config

    guess = math.nan
    if hasattr(model, "loop"):
        from qcnmodel.analysis.margins import critical_rtt

        try:
            guess = float(critical_rtt(model, method="linearisation"))
        except (ValueError, ArithmeticError):
            guess = math.nan
    if not lo < guess < hi:
        guess = float(config.defaults["analysis.trajectory_rtt_start"])
    return min(max(guess, lo), hi)


def _bracket(unstable, start: float, lo: float, hi: float, ladder: float):
    """``(stable RTT, confirmed unstable RTT)`` one ladder rung apart around the turn;
    None when stable up to ``hi``; ``(nan, nan)`` when unstable (and confirmed) at ``lo``."""

    def confirmed(r: float) -> bool:  # unstable here and on the next rung up
        return unstable(r) and (r >= hi or unstable(min(r * ladder, hi)))

    r = start
    if confirmed(r):
        while r > lo:
            below = max(r / ladder, lo)
            if not unstable(below):
                return below, r
            r = below
        return math.nan, math.nan
    while r < hi:  # r is stable, or unstable alone (a coin): climb from the rung above it
        up = min(r * ladder, hi)
        if unstable(r):
            r = up
            continue
        if confirmed(up):
            return r, up
        r = up
    return None
