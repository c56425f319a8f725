"""The text that ``qcnmodel check`` prints: the headline verdict first, then the numbers."""

from __future__ import annotations

import math

from qcnmodel.studies.verdict import wrap_phase

__all__ = ["band_words", "confirmation_lines", "judged_bands", "render", "validity_lines"]


def _band_us(x: float) -> str:
    return f"{x * 1e6:.4g} us"


def band_words(band: tuple[float, float], rtt: float) -> str:
    """What a flow count with a stable band says about the point at ``rtt`` (s).

    Runs that cycle at the smallest RTTs (many flows with their timers in step) and are
    stable in a band ``(start, end)`` above them make a point stable inside the band only.
    Inside it, the words name the band and the bound nearer to the point (in ratio of RTTs),
    which the point's stability hangs on; outside, which side of the band the point lies.
    """
    start, end = band
    span = f"from {start * 1e6:.4g} to {end * 1e6:.4g} us"
    if rtt < start:
        return (f"unstable: below the band where its runs are stable ({span}); they oscillate "
                "from the smallest RTT they are run at up to the band's start")  # fmt: skip
    if not rtt < end:
        return f"unstable: at or above the end of the band where its runs are stable ({span})"
    if math.log(rtt / start) <= math.log(end / rtt):
        bound = f"the band's start binds, {_band_us(rtt - start)} below this point"
    else:
        bound = f"the band's end binds, {_band_us(end - rtt)} above this point"
    return (f"no critical RTT: they oscillate at the smallest RTTs they are run at, and are "
            f"stable {span}, a band above the cycling at small RTTs; {bound}")  # fmt: skip


def judged_bands(r) -> dict:
    """The stable bands of the flow counts a check result judges by trajectories."""
    judged = set(getattr(r, "judged_flows", ()))
    return {n: b for n, b in getattr(r, "stable_bands", {}).items() if n in judged and b}


def render(result, ranges, file: str, figure=None) -> str:
    """Plain-text report of a :class:`~qcnmodel.studies.check.CheckResult`.

    The one-paragraph verdict comes first (model, ranges, worst point, binding constraint and
    the fix), then the fields without effect, the worst-case margins, the critical RTT per N,
    the verified changes and, with ``--confirm``, the packet-level confirmation (with the
    path of its ``figure`` of the traces, when one was drawn).
    """
    r = result
    lines = [f"{file}: valid", "", r.headline, ""]
    for note in r.notes:
        lines.append(f"note: {note}")
    if r.notes:
        lines.append("")
    wp = r.worst_point
    lines += [
        f"model: {r.model_label} (--model {r.model} --variant {r.model_variant}), exact delay",
        f"ranges: RTT {ranges.rtt[0] * 1e6:g} us .. {ranges.rtt[1] * 1e6:g} us, "
        f"N {ranges.flows[0]} .. {ranges.flows[1]} ({len(ranges.rtt_grid())} x "
        f"{len(ranges.flow_grid())} points)"
        + ("" if ranges.capacity is None else f", port at {ranges.capacity / 1e9:g} Gb/s"),
        (
            f"phase margin at the worst point  none: N={wp.get('n_flows')} is overloaded (no "
            "equilibrium)"
            if wp.get("n_flows") in getattr(r, "overloaded", {})
            else f"phase margin at the worst point  {wrap_phase(r.worst_phase_margin_deg):.2f} "
            f"deg (N={wp.get('n_flows')}, RTT={wp.get('rtt_s', 0) * 1e6:.4g} us; the linearised "
            "loop's, wrapped to (-180, 180], stability from the Nyquist count)"
        ),
        *_lowest_line(r),
        f"lowest gain margin   {r.worst_gain_margin_db:9.2f} dB",
        "lowest delay margin  "
        + (
            f"{r.worst_delay_margin_s * 1e6:9.4g} us"
            if r.worst_delay_margin_s == r.worst_delay_margin_s
            else "none: a linearised loop is unstable already without delay"
        ),
        "critical RTT per N (largest RTT with a positive phase margin, or [t] where the odds "
        "of an unstable run of the model's trajectories pass one half; negative, or nan "
        "without a band: unstable at any RTT; nan with a band: stable in the band only):",
    ]
    judged = set(r.judged_flows)
    over = getattr(r, "overloaded", {})
    for n, c in r.critical_rtt_s.items():
        if n in over:
            lines.append(f"  N={n:<5d}   overloaded (no equilibrium: the feedback cannot hold "
                         "the flows at C/N)")  # fmt: skip
            continue
        band = getattr(r, "stable_bands", {}).get(n)
        lines.append(f"  N={n:<5d} {c * 1e6:10.4g} us" + (" [t]" if n in judged else "")
                     + (f"  (stable from {band[0] * 1e6:.4g} to {band[1] * 1e6:.4g} us)"
                        if band else ""))  # fmt: skip
    need = f"stable with PM >= {r.pm_threshold_deg:g} deg"
    if judged:
        rule = "below its critical RTT" + (", or inside its stable band"
                                           if judged_bands(r) else "")  # fmt: skip
        need = (rule if len(judged) == len(r.critical_rtt_s)
                else f"{need}, or at [t] {rule}")  # fmt: skip
    lines.append(f"verdict: {r.verdict.upper()} (stable needs every point {need})")
    lines += validity_lines(r.validity)
    if r.recommendations:
        lines.append("changes that make the linearised loop stable (one [qcn] field each, "
                     "grid recomputed):")  # fmt: skip
        for f in r.recommendations:
            lines.append(
                f"  {f['field']} = {f['value']:.4g} (now {f['current']:.4g}): worst phase margin "
                f"{f['worst_phase_margin_deg']:.1f} deg"
                + (f"; outside the validation's matched pairs ({f['untested']})"
                   if f.get("untested") else "")
                + _trajectory_words(f, r.judged_flows, ranges)
            )  # fmt: skip
    c = r.confirmation
    if c is not None:
        lines += confirmation_lines(c, figure)
    return "\n".join(lines)


def _trajectory_words(fix: dict, judged, ranges) -> str:
    """What a listed change does to the flow counts the model's trajectories judge: put to
    their runs at the largest RTT checked (the headline's change), or not put to them (the
    others: they stabilise the linearised loop, which those flow counts' verdict is not)."""
    if not judged:
        return ""
    bad = fix.get("trajectories_unstable_n")
    if bad is None:
        return (f"; not put to the model's trajectories, which judge N = "
                f"{_counts(judged)}: `check --set {fix['field']}=...` tells")  # fmt: skip
    rtt = f"{ranges.rtt[1] * 1e6:.4g} us"
    if bad:
        return f"; the model's trajectories at {rtt} still oscillate at N = {_counts(bad)}"
    return f"; the model's trajectories at {rtt} are stable at every N they judge"


def _counts(ns) -> str:
    ns = [int(n) for n in ns]
    return ", ".join(map(str, ns)) if len(ns) <= 6 else f"{ns[0]} .. {ns[-1]} ({len(ns)} counts)"


def validity_lines(validity: list) -> list[str]:
    """The parts of the checked ranges outside the model's validated domain (one line each:
    the region, what the validation found there, and the finding's name), or one line saying
    that the ranges lie inside it."""
    if not validity:
        return ["validity: the ranges lie inside the model's validated domain"]
    out = ["validity: parts of the ranges lie outside the model's validated domain "
           "(`qcnmodel validate`; --confirm puts the verdict to packets):"]  # fmt: skip
    for v in validity:
        out.append(f"  {v['where']}: {v['effect']} [{v['finding']}]")
    return out


def confirmation_lines(c: dict, figure=None) -> list[str]:
    """The packet confirmation: the overall answer, then per point its role, the model's
    verdict (phase margin), the packets' verdict with the detector's numbers, and agree or
    DISAGREE; then the figure's path when one was drawn."""
    from qcnmodel.studies.confirm import SETTLE_TAUS, model_word, outcome
    from qcnmodel.studies.confirm_view import packet_word

    n_agree = sum(outcome(row) == "agree" for row in c["rows"])
    n_open = sum(outcome(row) == "inconclusive" for row in c["rows"])
    many = max((row.get("runs", 1) for row in c["rows"]), default=1)
    lines = [
        f"packet confirmation ({c['duration_s']:.3g} s per run, seed {c['seed']}"
        + (f"; {many} runs, seeds {c['seed']}-{c['seed'] + many - 1}, where the model's "
           "trajectories judge" if many > 1 else "")
        + f", {c.get('jobs', 1)} process{'es' if c.get('jobs', 1) != 1 else ''}): "
        + {"DISAGREE": "DISAGREES", "agree": "AGREES"}.get(c["outcome"], "INCONCLUSIVE")
        + f" ({n_agree} of {len(c['rows'])} points agree"
        + (f", {n_open} inconclusive: the run is shorter than {2 * SETTLE_TAUS:g} time "
           "constants of their mode, or than the model's own runs where its trajectories "
           "judge, or the packets show no regime, or their odds cannot be told from the "
           "model's; each such point's reason follows it" if n_open else "") + ")"
    ]  # fmt: skip
    for row in c["rows"]:
        model = model_word(row)
        how = "trajectories; linearised " if row.get("judged_by") == "trajectories" else ""
        pm = f"({how}PM {wrap_phase(row['phase_margin_deg']):.1f} deg)"
        if model == "overloaded":
            pm = "(no equilibrium: the queue must climb)"
        elif how and not math.isfinite(row["phase_margin_deg"]):
            pm = "(trajectories; no linearised loop: no equilibrium with a standing queue)"
        tau = row.get("time_constant_s", 0.0)
        tau = "" if math.isnan(tau) else f"; model time constant {tau:.3g} s"
        lines += [
            f"  {row['role']}:",
            f"    N={row['n_flows']:<4d} RTT={row['rtt_s'] * 1e6:8.4g} us: model {model} "
            f"{pm}, packets {packet_word(row)} "
            f"(queue std {row['std'] / 1e3:.3g} KB, empty {row['underflow']:.0%}, ACF peak "
            f"{row['acf_peak']:.2f}, trend {row.get('drift', 0.0) / 1e3:+.3g} KB{tau}) -> "
            f"{outcome(row)}" + (f" ({row['open_reason']})" if row.get("open_reason") else ""),
        ]
        if row.get("note"):
            lines.append(f"    note: {row['note']}")
    for row in c.get("skipped", []):
        lines.append(f"  {row['role']}: N={row['n_flows']}, RTT={row['rtt_s'] * 1e6:.4g} us "
                     f"not simulated: {row['reason']}")  # fmt: skip
    if figure is not None:
        lines.append(f"  traces: {figure}")
    return lines


def _lowest_line(r) -> list[str]:
    """The lowest linearised phase margin over the ranges, where it is not the worst point's."""
    pm, n, rtt = getattr(r, "lowest_phase_margin", (math.nan, None, None))
    if n is None or (n == r.worst_point.get("n_flows") and rtt == r.worst_point.get("rtt_s")):
        return []
    return [f"lowest phase margin  {wrap_phase(pm):9.2f} deg (N={n}, RTT={rtt * 1e6:.4g} us; the "
            "linearised loop's over the ranges)"]  # fmt: skip


def linearised_note(flows, models: dict | None = None) -> str:
    """The sentence saying which flow counts the linearised loop judged because they are
    past the trajectories' limits, each with the limit it is past (given ``models``, N ->
    the model at N): flows, frames at the port over a verdict's runs, or a loop so slow that
    a verdict run holding its cycles would exceed the longest allowed."""
    from qcnmodel import config
    from qcnmodel.models import _verdict_run as vr

    cap = config.defaults["analysis.trajectory_max_flows"]
    frames = config.defaults["analysis.trajectory_max_frames"]
    longest = config.defaults["models.verdict_run"]["max_duration"]

    def past(n) -> str | None:  # the limit N is past, as its packet-fidelity model says
        m = (models or {}).get(n)
        return vr.past_limit(m) if hasattr(m, "verdict_run") else None

    groups: dict = {}
    for n in flows:
        groups.setdefault(past(n), []).append(n)
    parts = []
    for limit, ns in groups.items():
        said = ", ".join(str(n) for n in ns)
        if limit == "slow":
            run = max(float(models[n].verdict_run[0]) for n in ns)
            parts.append(f"N = {said}: judged by the linearised loop: a verdict run holding ten "
                         "of the loop's slowest cycles (sampling, byte counter or timer at C/N) "
                         f"would last {run:.3g} s, past the longest run allowed, {longest:g} s "
                         "(config.defaults['models.verdict_run']['max_duration']; check "
                         "--confirm's packet runs end there too)")  # fmt: skip
            continue
        what = {"flows": f"past the {cap} flows", "frames": f"past the {frames:.3g} frames at "
                "the port over a verdict's runs"}.get(limit, f"past the {cap} flows or the "
                f"{frames:.3g} frames at the port over a verdict's runs")  # fmt: skip
        parts.append(f"N = {said}: judged by the linearised loop, {what} that the model's "
                     "trajectories judge (each run follows every flow and frame: a critical RTT "
                     "would take minutes; the validation reaches N = 100 and 40 Gb/s); "
                     "config.defaults['analysis.trajectory_max_flows'] and "
                     "['analysis.trajectory_max_frames'] raise the limits")  # fmt: skip
    return "; ".join(parts)
