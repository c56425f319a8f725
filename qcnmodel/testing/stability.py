"""``assert_stable`` and ``assert_boundary_matches``: stability of a loop model, confirmed
or measured with the packet simulator.

Stability of a model is the verdict ``margins`` and ``check`` give: below its critical RTT
(:func:`qcnmodel.analysis.margins.critical_rtt`; for the congested packet-fidelity QCN model
where the odds that a run of its trajectories oscillates pass one half), or, for a model
judged by its linearisation, its linearised closed loop with the exact delay
(:meth:`qcnmodel.analysis.loop.DelayedLoop.margins`, Nyquist count); where such a model's
runs cycle at the start of its search and are stable above, inside its stable band
(:func:`qcnmodel.analysis.boundary.trajectory_boundary`, as ``margins`` and ``check`` read
it). Stability of a packet run is the class ``qcnmodel check --confirm`` gives the
congestion point's queue (bin means) after a settling time
(:func:`qcnmodel.studies.confirm.classify`): "stable", or "oscillating" / "underflow" (a
sustained cycle), "drifting" (a trend larger than Qeq across the window: no equilibrium
reached) or "idle" (an uncongested port, which cannot show stability at a set point), with
the detector's fixed thresholds.

Defaults (from the project's own model-vs-simulator pairs, :mod:`qcnmodel.validation`): a
single bottleneck (:func:`qcnmodel.validation.network.bottleneck_spec`, greedy sources, no
drops) at half the line rate, runs of 0.6 s whose first 0.3 s are left out (the start from an
empty queue takes up to ~0.2 s to settle at N = 1, RTT 500 us), lengthened for long RTTs so
that the analysed half holds ``MIN_RTTS`` round trips as ``check --confirm`` requires, 50 us
bins, and a boundary that agrees when the model's critical RTT lies in the simulated bracket
widened by 10 %.
"""

from __future__ import annotations

import math

from qcnmodel.testing import _resolve, _sim, report
from qcnmodel.testing._figures import boundary_figure, stable_figure
from qcnmodel.testing.report import fmt
from qcnmodel.units import parse_time

__all__ = ["assert_boundary_matches", "assert_stable"]

DURATION, SETTLE, BIN = 0.6, 0.3, 50e-6


def _listed(value, parse, field: str) -> list:
    vals = [value] if isinstance(value, (str, int, float)) else list(value)
    if not vals:
        raise ValueError(f"{field}: give at least one value")
    return [parse(v) for v in vals]


def _count(v) -> int:
    try:
        x = float(v)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(v, bool) or not x.is_integer() or x < 1 or x > 1e6:
        raise ValueError(f"n_flows: must be an integer in [1, 1e6], got {v!r}")
    return int(x)


def _positive_time(v, field: str) -> float:
    t = parse_time(v, field)
    if not (t > 0 and math.isfinite(t)):
        raise ValueError(f"{field}: must be in (0, inf) s, got {v!r}")
    return t


def _us(x: float) -> str:
    return f"{x * 1e6:.4g} us" if math.isfinite(x) else str(x)


def _linear(m) -> tuple[object, float, str]:
    """(margins or None, critical RTT s, error text) of a model."""
    from qcnmodel.analysis.margins import critical_rtt

    try:
        loop = m.loop()
        mg = loop.margins()
        return mg, float(critical_rtt(m, loop=loop)), ""
    except (ValueError, RuntimeError, ArithmeticError) as exc:
        return None, math.nan, f"{type(exc).__name__}: {exc}"


def _band(m, mg) -> tuple[float, float] | None:
    """The stable band of a model judged by its trajectories (``margins`` and ``check``
    read the same one: :func:`qcnmodel.analysis.boundary.trajectory_boundary`), else None."""
    from qcnmodel.analysis.boundary import judged_by_trajectories, trajectory_boundary

    if mg is None or not judged_by_trajectories(m):
        return None
    return trajectory_boundary(m)[1]


def packet_run(rtt: float, duration=None, settle=None) -> tuple[float, float, str | None]:
    """Length and settling time (s) of the packet run that confirms a point at ``rtt`` (s),
    and why that run cannot confirm it (None when it can).

    The analysed part of the run (after ``settle``) must hold
    :data:`qcnmodel.studies.confirm.MIN_RTTS` round trips, the rule of ``qcnmodel check
    --confirm``: a shorter window shows the start-up transient, not the loop's regime.
    Default length: :data:`DURATION`, lengthened to ``settle + MIN_RTTS x rtt`` (``2 x
    MIN_RTTS x rtt`` without ``settle``), at most ``check --confirm``'s longest run,
    :data:`qcnmodel.studies.confirm.MAX_DURATION`; default settling time: half the run.
    """
    from qcnmodel.studies.confirm import MAX_DURATION, MIN_RTTS

    need = MIN_RTTS * rtt
    want = 2 * need if settle is None else settle + need  # the shortest run that holds them
    if duration is None:
        duration = min(MAX_DURATION, max(DURATION, want))
    settle = 0.5 * duration if settle is None else settle
    held = (duration - settle) / rtt
    why = None
    if held < MIN_RTTS * (1 - 1e-9):
        why = (
            f"the analysed {duration - settle:.3g} s of a {duration:.3g} s run hold "
            f"{held:.3g} RTTs, fewer than the {MIN_RTTS} that qcnmodel check --confirm "
            f"requires (a run of {want:.3g} s would; runs are at most {MAX_DURATION:g} s)"
        )
    return duration, settle, why


#: what a packets class other than "stable" says about the point
_CLASS_WORDS = {
    "drifting": "the queue's trend across the window exceeds Qeq: it reached no equilibrium",
    "idle": "the port is not congested at this point (the queue stays within one frame of "
    "empty), so the packets cannot confirm stability at a set point",
}


def _packets(p, n, rtt, cap, duration, settle, seed, bw):
    from qcnmodel.validation.network import bottleneck_for

    spec = bottleneck_for(p, n, rtt, cap)
    tr = _sim.queue_trace(spec, params=p, duration=duration, seed=seed, bin_width=bw)
    return _sim.queue_verdict(tr, settle, duration, p.qeq, p.frame_size)


def _packet_words(v: dict, qeq: float, rtts_held: float) -> str:
    """The packets' class at a point and every number it rests on, with its limit."""
    from qcnmodel.analysis.timeseries import ACF_MIN, AMPLITUDE_MIN, UNDERFLOW_MIN

    why = _CLASS_WORDS.get(v["verdict"])
    return (
        f"; packets {v['verdict']}" + (f": {why}" if why else "") + f" (queue std "
        f"{fmt(v['std'])} B, limit {fmt(AMPLITUDE_MIN * qeq)} B; ACF peak {fmt(v['acf_peak'])}, "
        f"limit {fmt(ACF_MIN)}; empty {fmt(100 * v['underflow'])} % of the time, limit "
        f"{fmt(100 * UNDERFLOW_MIN)} %; trend {fmt(v['drift'])} B across the window, limit "
        f"Qeq {fmt(qeq)} B; {fmt(rtts_held)} RTTs analysed)"
    )


def _model_point(m, r: float, n: int) -> dict:
    """One point of :func:`assert_stable` judged by the model: the verdict ``margins`` and
    ``check`` give (below the trajectories' critical RTT, or in their stable band, for a model
    judged by them, else the linearised loop's Nyquist count), with its words."""
    from qcnmodel.analysis.boundary import judged_by_trajectories, judged_stable
    from qcnmodel.cli.margins import critical_rtt_words

    mg, crit, err = _linear(m)
    pm = float(mg.phase_margin_deg) if mg is not None else math.nan
    band = _band(m, mg)
    ok_model = mg is not None and bool(judged_stable(m, [r], [mg.stable], crit, band)[0])
    text = f"RTT {_us(r)}, N={n}: "
    text += (
        (
            f"model {'stable' if ok_model else 'UNSTABLE'} (phase margin {fmt(pm)} deg, "
            f"critical RTT {critical_rtt_words(crit, m, judged_by_trajectories(m))}"
            + (f"; stable band {_us(band[0])} to {_us(band[1])}" if band else "")
            + ")"
        )
        if mg is not None
        else f"model failed ({err})"
    )
    return dict(rtt=r, n=n, pm=pm, crit=crit, model=ok_model, packets=None, band=band, text=text)


def _confirm_point(pt: dict, p, cap: float, run: tuple, traces: list, m=None) -> None:
    """Add the packets' verdict on ``pt`` (a packet run of ``run`` = (duration, settle, seed,
    bin width)) to it and its text; the queue trace joins ``traces``. Without a duration
    given, the run is at least as long as the verdict runs of ``m`` (the model at the point)
    where its trajectories judge, stretched where the loop is slow, as ``check --confirm``
    runs it (:func:`qcnmodel.studies.confirm.auto_duration`)."""
    from qcnmodel.analysis.boundary import judged_by_trajectories
    from qcnmodel.studies.confirm import MAX_DURATION

    dur, st, seed, bw = run
    r, n = pt["rtt"], pt["n"]
    own = getattr(m, "verdict_run", None) if m is not None else None
    if dur is None and own is not None and judged_by_trajectories(m):
        dur = min(MAX_DURATION, max(packet_run(r, None, st)[0], own[0], 2.0 * own[1]))
    run_s, settle_s, why = packet_run(r, dur, st)
    pt["run"] = (run_s, settle_s)
    if why is not None:  # not simulated: it could not confirm anything
        pt["packets"] = False
        pt["text"] += f"; packets cannot confirm: {why}"
        return
    v, t, q = _packets(p, n, r, cap, run_s, settle_s, seed, bw)
    pt["packets"] = v["verdict"] == "stable"
    pt["drift"] = v["drift"]
    traces.append((f"RTT {_us(r)}, N={n}", t, q, pt["packets"], settle_s))
    pt["text"] += _packet_words(v, p.qeq, (run_s - settle_s) / r)


def _stable_numbers(points: list) -> dict:
    """The numbers :func:`assert_stable` reports, by point."""
    numbers = {}
    for pt in points:
        key = f"RTT {_us(pt['rtt'])}, N={pt['n']}"
        numbers[key + ": phase margin (deg)"] = pt["pm"]
        numbers[key + ": critical RTT (s)"] = pt["crit"]
        if pt["band"] is not None:
            numbers[key + ": stable band from (s)"] = pt["band"][0]
            numbers[key + ": stable band to (s)"] = pt["band"][1]
        if pt["packets"] is not None:
            numbers[key + ": packets stable"] = pt["packets"]
            numbers[key + ": packet run (s)"] = pt["run"][0]
            numbers[key + ": packets settle (s)"] = pt["run"][1]
            if "drift" in pt:
                numbers[key + ": packets trend across the window (B)"] = pt["drift"]
    return numbers


def assert_stable(params, rtt, n_flows, confirm=None, *, model="qcn", capacity=None,
                  duration=None, settle=None, seed=0, bin_width=BIN):  # fmt: skip
    """Assert that a parameter set gives a stable loop at every RTT and number of flows.

    Parameters
    ----------
    params : QCNParams, str or path
        The parameter set: an object, a preset name or a TOML parameter file.
    rtt : float, str or sequence
        Loop delay(s) CP -> RP -> CP (s; unit strings such as ``"300us"`` accepted).
    n_flows : int or sequence of int
        Number(s) of flows sharing the congestion point.
    confirm : {None, "packets"}
        ``"packets"`` also runs the packet simulator on a single bottleneck at every point
        and requires the CP queue to be stable in the class ``check --confirm`` gives it
        (neither a sustained cycle, nor a trend larger than Qeq across the analysed window,
        nor an idle port); a point whose RTT the run cannot hold ``MIN_RTTS`` times in its
        analysed window (:func:`packet_run`) fails as not confirmed.
    model : str, class or LoopModel
        The loop model (default the registry's ``"qcn"``, its validated variant); a model
        object keeps its own parameters.
    capacity : float or str, optional
        Service rate of the congestion point (bit/s), for the model and the packet runs.
        Default: the ``capacity`` of a parameter file's ``[ranges]`` table when it has one
        (the rate ``qcnmodel check FILE`` judges at), else half the line rate, where one flow
        congests the port (``margins`` and ``check`` default to the line rate:
        ``capacity=p.line_rate`` gives their verdict). The table's ``rtt``, ``flows`` and
        ``pm_threshold`` are checked as ``check`` checks them but not used: the points
        judged are ``rtt`` x ``n_flows``.
    duration, settle : float or str, optional
        Length of each packet run and the settling time left out of the verdict (s).
        Default (:func:`packet_run`): 0.6 s, lengthened so that the analysed part holds
        ``MIN_RTTS`` = 10 RTTs (at most 10 s), and half the run.
    seed : int
        Seed of the packet runs.
    bin_width : float or str
        Trace bin width of the packet runs (s).

    Raises
    ------
    AssertionError
        A point is unstable (model or packets), or the packets cannot confirm it. The message
        lists every failing point with its phase margin, critical RTT (and stable band) and,
        for packets, the queue's class with every number it rests on, and the path of a
        figure of the margins and queue traces.
    ValueError
        A bad argument (naming it), or a parameter file or ``[ranges]`` table that
        ``qcnmodel check`` refuses (naming the file, line and field).
    """
    if confirm not in (None, "packets"):
        raise ValueError(f"confirm: must be None or 'packets', got {confirm!r}")
    p = _resolve.as_params(params)
    rtts = _listed(rtt, lambda v: _positive_time(v, "rtt"), "rtt")
    ns = _listed(n_flows, _count, "n_flows")
    file_cap = _resolve.file_capacity(params) if capacity is None else None
    cap = _resolve.capacity_of(capacity, p.line_rate, file_cap)
    dur = None if duration is None else _positive_time(duration, "duration")
    st = None if settle is None else parse_time(settle, "settle")
    bw = _positive_time(bin_width, "bin_width")
    points, traces = [], []
    for n in ns:
        for r in rtts:
            m = _resolve.as_model(model, p, rtt=r, n_flows=n, capacity=cap)
            pt = _model_point(m, r, n)
            if confirm == "packets":
                _confirm_point(pt, p, cap, (dur, st, seed, bw), traces, m)
            points.append(pt)
    fails = [pt["text"] for pt in points if not pt["model"] or pt["packets"] is False]
    fig = stable_figure(points, traces, p.qeq) if report.figures_wanted(not fails) else None
    rate = f"C = {fmt(cap / 1e9)} Gb/s" + (" (the file's [ranges] capacity)" if file_cap else "")
    subject = (
        f"{model if isinstance(model, str) else type(model).__name__} at {rate}, RTT "
        f"{', '.join(_us(r) for r in rtts)}, N {', '.join(map(str, ns))}"
        + (", confirmed with packets" if confirm else "")
    )
    numbers = _stable_numbers(points)
    msg = (
        f"{len(fails)} of {len(points)} point(s) unstable at {rate}:\n  " + "\n  ".join(fails)
        if fails
        else f"all {len(points)} point(s) stable at {rate}"
    ) + (f"\nfigure: {fig}" if fig else "")
    report.add("assert_stable", subject, not fails, numbers, msg, [fig] if fig else [])
    if fails:
        raise AssertionError("assert_stable: " + msg)


def _agrees(value: float, lo: float, hi: float, first: float, tol: float) -> bool:
    """The model's critical RTT against the simulated bracket [lo, hi], widened by ``tol``:
    ``inf`` (stable at every RTT) agrees with a scan that saw no instability, ``nan``
    (unstable from the start of the model's search) with one unstable at its first RTT."""
    if math.isnan(value):
        return lo <= 0
    if not math.isfinite(value):
        return not math.isfinite(hi)
    if not math.isfinite(hi):
        return value >= (1 - tol) * lo
    if lo <= 0:
        return value <= (1 + tol) * first
    return (1 - tol) * lo <= value <= (1 + tol) * hi


def _extended(grid: list, crit: float, reach: float) -> list:
    """The scan ``grid`` (sorted) continued by doublings towards RTTs where the claim
    ``crit`` could fail: up to ``reach`` for a model stable at every RTT (``inf``), up to
    2.8 x ``crit`` (the default grid's top) for a finite claim above the grid, never past
    ``reach``."""
    if crit == math.inf:
        target = reach
    elif math.isfinite(crit) and crit > 0:
        target = min(reach, 2.8 * crit)
    else:
        return grid
    out = list(grid)
    while out[-1] * (1 + 1e-9) < target:
        out.append(min(2 * out[-1], target))
    return out


def _tolerance(tolerance) -> float:
    if isinstance(tolerance, str) and tolerance.strip().endswith("%"):
        tol = float(tolerance.strip()[:-1]) / 100
    else:
        tol = float(tolerance)
    if not (0 <= tol < 1):
        raise ValueError(f"tolerance: must be in [0, 1) (a fraction, or '10%'), got {tolerance!r}")
    return tol


def _points(pts) -> str:
    return ", ".join(f"{_us(r)} {'U' if u else 'S'}" for r, u in pts)


def _critical_matches(scan, crit: float, listed, rtt: float, tol: float, reach: float):
    """A model's critical RTT ``crit`` against the packets: ``(ok, text, numbers, points,
    bracket)``. The default grid is ``crit`` (else the scenario's ``rtt``) x 0.5 .. 2.8,
    continued towards the claim (:func:`_extended`); the scan is bisected and the claim must
    lie in its bracket widened by ``tol`` (:func:`_agrees`)."""
    center = crit if math.isfinite(crit) and crit > 0 else rtt
    grid = [center * f for f in (0.5, 0.7, 1.0, 1.4, 2.0, 2.8)] if listed is None else listed
    grid = _extended(sorted(grid), crit, reach)
    lo, hi, pts = scan(grid)
    ok = _agrees(crit, lo, hi, min(grid), tol)
    top = max(r for r, _ in pts)
    text = (
        f"model critical RTT {_us(crit)} {'within' if ok else 'OUTSIDE'} the simulated "
        f"bracket [{_us(lo)}, {_us(hi)}] widened by {fmt(100 * tol)} %\nsimulated points "
        f"(S stable, U not stable): {_points(pts)}; scanned {_us(min(grid))} to {_us(top)}"
        + (" (no instability up to there)" if not math.isfinite(hi) else "")
    )
    numbers = {"model critical RTT (s)": crit, "simulated stable up to (s)": lo,
               "simulated unstable from (s)": hi, "scanned up to (s)": top}  # fmt: skip
    return ok, text, numbers, pts, (lo, hi)


def _band_grids(band, listed, tol: float, reach: float) -> tuple[list, list]:
    """The packet scans that put a stable band ``(start, end)`` to the packets: up to the
    band's start (``start`` x 0.5, 0.7, 1), and from the start widened by ``tol`` upwards
    around its end (``end`` x 0.5 .. 2.8 above that, continued as :func:`_extended` does).
    RTTs ``listed`` by the user are split between them at the start (a side given none keeps
    its default)."""
    start, end = band
    below = [r for r in listed or () if r < start] or [start * f for f in (0.5, 0.7, 1.0)]
    first = min((1 + tol) * start, math.sqrt(start * end)) if math.isfinite(end) else start
    above = [r for r in listed or () if r >= start]
    if not above:
        c = end if math.isfinite(end) else start
        above = [first] + [c * f for f in (0.5, 0.7, 1.0, 1.4, 2.0, 2.8) if c * f > first]
    return sorted(below), _extended(sorted(above), end, reach)


def _band_matches(scan, band, listed, tol: float, reach: float, m):
    """A model's stable band against the packets: ``(ok, text, numbers, points, bracket)``.

    The model claims instability from the smallest RTT it searched up to the band's start,
    stability in the band and instability from its end. The packets' onset of instability
    from below (a scan up to the start, without bisection: only its side of the start
    matters) must lie below the start widened by ``tol``; the RTTs below that onset, where
    the model's runs cycle and the packets' need not, are not compared. The band's end is
    compared with the packets' critical RTT above the band, scanned from the start widened
    by ``tol`` upwards and bisected, as a critical RTT is (:func:`_agrees`): packets
    unstable already at the scan's first RTT do not show the band.
    """
    from qcnmodel.analysis.boundary import search_interval

    start, end = band
    below, above = _band_grids(band, listed, tol, reach)
    lo1, hi1, pts1 = scan(below, 0)
    onset_ok = hi1 <= (1 + tol) * start
    lo2, hi2, pts2 = scan(above)
    end_ok = _agrees(end, lo2, hi2, above[0], tol)
    ok = onset_ok and end_ok
    onset = (f"at or before {_us(hi1)}, the scan's first RTT" if lo1 <= 0 else
             f"in [{_us(lo1)}, {_us(hi1)}]")  # fmt: skip
    text = (
        f"model: no critical RTT (its runs cycle from the smallest RTT it searches, "
        f"{_us(search_interval(m)[0])}); stable band [{_us(start)}, {_us(end)}] "
        f"{'matches' if ok else 'does NOT match'} the packets\nband's start: the packets' "
        + (f"onset of instability from below, {onset}, lies below the start widened by "
           f"{fmt(100 * tol)} % ({_us((1 + tol) * start)})" if onset_ok else
           f"queue is stable up to {_us(lo1)} (no onset of instability below the start "
           f"widened by {fmt(100 * tol)} %, {_us((1 + tol) * start)}): OUTSIDE")
        + f"\nband's end {_us(end)} {'within' if end_ok else 'OUTSIDE'} the packets' bracket "
        f"[{_us(lo2)}, {_us(hi2)}] above the band's start, widened by {fmt(100 * tol)} %"
        + (f" (the packets are unstable at {_us(above[0])}, inside the band)" if lo2 <= 0
           else " (no instability up to there)" if not math.isfinite(hi2) else "")
        + f"\nsimulated points (S stable, U not stable): up to the start {_points(pts1)}; "
        f"above it {_points(pts2)}"
    )  # fmt: skip
    numbers = {"model critical RTT (s)": math.nan, "model stable band from (s)": start,
               "model stable band to (s)": end, "simulated onset below the band from (s)": hi1,
               "simulated stable above the band's start up to (s)": lo2,
               "simulated unstable above the band's start from (s)": hi2,
               "scanned up to (s)": max(r for r, _ in pts2)}  # fmt: skip
    return ok, text, numbers, pts1 + pts2, (lo2, hi2)


def _seeds(seeds) -> list:
    """The packet runs' seeds, checked: one or more whole numbers >= 0."""
    seeds = [int(s) for s in ([seeds] if isinstance(seeds, int) else seeds)]
    if not seeds or min(seeds) < 0:
        raise ValueError(f"seeds: give at least one seed >= 0, got {seeds!r}")
    return seeds


def _run_window(window: tuple, duration, settle) -> tuple[float, float]:
    """The packet runs' length and the start of their judged part (s) for a scenario whose
    hotspot lasts ``window``: by default 0.6 s after the hotspot starts (at most to its end),
    judged after the pairs' 0.3 s of settling, at most half of a shorter run (a hotspot of
    tens of ms)."""
    start, stop = window
    dur = (min(stop, start + DURATION) if duration is None else
           _positive_time(duration, "duration"))  # fmt: skip
    if dur <= start:  # (the settling window would be empty: nothing to judge)
        raise ValueError(f"duration: the run ({dur:g} s) ends before the scenario's hotspot "
                         f"starts at {start:g} s; lengthen it")  # fmt: skip
    t0 = start + (min(SETTLE, 0.5 * (dur - start)) if settle is None else
                  parse_time(settle, "settle"))  # fmt: skip
    return dur, t0


def assert_boundary_matches(model, scenario_or_spec, tolerance=0.1, *, params=None, rtts=None,
                            duration=None, settle=None, seeds=(0,), bisect_steps=2,
                            protocol="qcn", overrides=None, bin_width=BIN):  # fmt: skip
    """Assert that a model's stability boundary (critical RTT) matches the packet simulator's.

    The model is built at the network's operating point (the flows through the first
    hotspot's port, its service rate, their mean loop delay); its critical RTT (the one
    ``margins`` and ``check`` read) is compared with the RTT at which the simulated CP queue
    starts to oscillate, found by scanning ``rtts`` upwards (every link delay of the network
    scaled to give each RTT), then ``bisect_steps`` geometric bisections.

    A model judged by its trajectories whose runs cycle from the smallest RTT it searches
    (many flows with their timers in step) has no critical RTT but may have a stable band
    ``(start, end)`` above (:func:`qcnmodel.analysis.boundary.trajectory_boundary`). Its
    claims are then put to the packets: their onset of instability from below must lie below
    the band's start (widened by ``tolerance``; RTTs below that onset are not compared), and
    the band's end must match their critical RTT above the band, scanned from the start
    (widened by ``tolerance``) upwards around the end and bisected; the message names the
    band and both comparisons.

    Parameters
    ----------
    model : str, class or LoopModel
        A registry name, a model class, or a model object (built-in or your own class with
        ``loop()`` and ``replace(rtt=..., n_flows=..., capacity=...)``).
    scenario_or_spec : str, path or NetworkSpec
        A scenario name, a topology file or a network.
    tolerance : float or str
        Relative widening of the simulated bracket ``[lo, hi]``: the model's critical RTT (a
        stable band's end) must lie in ``[(1 - tol) lo, (1 + tol) hi]``, a band's start above
        ``hi / (1 + tol)`` of the packets' onset from below (default 0.1: the project's own
        pairs).
    params : QCNParams, str or path, optional
        Parameters (default: the model object's, else the scenario's preset).
    rtts : sequence, optional
        RTT grid (s; default the model's critical RTT times 0.5, 0.7, 1, 1.4, 2, 2.8, or
        the scenario's RTT times those where the model has no finite critical RTT). A claim
        above the grid is put to longer RTTs: the grid continues by doublings to 2.8 x a
        finite critical RTT, or, for a model stable at every RTT (``inf``), to the longest
        RTT of which the analysed window holds ``MIN_RTTS`` = 10 (30 ms for the default 0.3
        s window), as ``check --confirm`` requires of a run. For a stable band: the start x
        0.5, 0.7, 1 below it, and around its end above it; RTTs given are split at the
        band's start (a side given none keeps its default).
    duration, settle : float or str, optional
        Run length (default 0.6 s after the hotspot starts, at most to its end) and settling
        time after the hotspot start left out of the verdict (default 0.3 s, at most half of
        the hotspot's part of the run).
    seeds : sequence of int
        Seeds; the simulated verdict at an RTT is the majority.
    protocol, overrides, bin_width
        As :func:`qcnmodel.simulate`.

    Raises
    ------
    AssertionError
        The critical RTT lies outside the widened bracket, or a stable band's start or end
        disagrees with the packets; the message gives the model's values, the brackets,
        every simulated point and the figure's path.
    """
    tol = _tolerance(tolerance)
    seeds = _seeds(seeds)
    if isinstance(bisect_steps, bool) or not 0 <= int(bisect_steps) <= 10:
        raise ValueError(f"bisect_steps: must be an integer in [0, 10], got {bisect_steps!r}")
    spec, label, preset, _ = _resolve.as_spec(scenario_or_spec, overrides, protocol)
    rest = _resolve.run_overrides(scenario_or_spec, overrides, protocol)
    own = getattr(model, "params", None) if not isinstance(model, (str, type)) else None
    p = _resolve.as_params(params if params is not None else
                           (own if hasattr(own, "qeq") else preset))  # fmt: skip
    op = _resolve.operating_point(spec, p)
    if p.line_rate != op.line_rate or p.frame_size != spec.frame_size:
        p = p.replace(line_rate=op.line_rate, frame_size=spec.frame_size)
    m = _resolve.as_model(model, p, rtt=op.rtt, n_flows=op.n_flows, capacity=op.capacity)
    dur, t0 = _run_window(op.window, duration, settle)
    listed = None if rtts is None else _listed(rtts, lambda v: _positive_time(v, "rtts"), "rtts")
    mg, crit, err = _linear(m)  # (the arguments first: this costs seconds)
    if mg is None:
        raise AssertionError(f"assert_boundary_matches: the model has no loop here ({err})")
    from qcnmodel.studies.confirm import MIN_RTTS
    from qcnmodel.validation.measure import scan_boundary

    reach = (dur - t0) / MIN_RTTS  # the longest RTT of which the window holds MIN_RTTS
    runs = {}

    def unstable(r: float) -> bool:
        votes = 0
        for seed in seeds:
            tr = _sim.queue_trace(_resolve.with_rtt(spec, r, p), protocol=protocol, params=p,
                                  duration=dur, seed=seed, overrides=rest,
                                  bin_width=bin_width)  # fmt: skip
            v, t, q = _sim.queue_verdict(tr, t0, dur, p.qeq, p.frame_size)
            runs.setdefault(r, (t, q, v))
            votes += v["verdict"] != "stable"
        return 2 * votes > len(seeds)

    def scan(grid, steps=int(bisect_steps)):
        return scan_boundary(unstable, sorted(grid), steps)

    band = _band(m, mg)
    if band is None:
        ok, said, numbers, pts, (lo, hi) = _critical_matches(scan, crit, listed, op.rtt, tol,
                                                             reach)  # fmt: skip
    else:
        ok, said, numbers, pts, (lo, hi) = _band_matches(scan, band, listed, tol, reach, m)
    name = model if isinstance(model, str) else type(model).__name__
    subject = f"{name} on {label} (N={op.n_flows}, C={fmt(op.capacity / 1e9)} Gb/s, CP {op.cp})"
    fig = None
    if report.figures_wanted(ok):
        fig = boundary_figure(pts, runs, crit, lo, hi, tol, p.qeq, t0, subject, band)
    msg = (
        said + f"\nscenario RTT {_us(op.rtt)}, phase margin there "
        f"{fmt(float(mg.phase_margin_deg))} deg" + (f"\nfigure: {fig}" if fig else "")
    )
    numbers.update({"tolerance": tol, "scenario RTT (s)": op.rtt, "flows": op.n_flows,
                    "capacity (bit/s)": op.capacity})  # fmt: skip
    report.add("assert_boundary_matches", subject, ok, numbers, msg, [fig] if fig else [])
    if not ok:
        raise AssertionError("assert_boundary_matches: " + msg)
