"""The text that ``qcnmodel check`` prints: the headline verdict first, then the numbers."""

from __future__ import annotations

from qcnmodel.studies.verdict import wrap_phase

__all__ = ["render"]


def render(result, ranges, file: str) -> str:
    """Plain-text report of a :class:`~qcnmodel.studies.check.CheckResult`.

    The one-paragraph verdict comes first (model, ranges, worst point, binding constraint and
    the fix), then the fields without effect, the worst-case margins, the critical RTT per N,
    the verified changes and, with ``--confirm``, the packet-level confirmation.
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
        f"N {ranges.flows[0]} .. {ranges.flows[1]} ({ranges.n_rtt} x {len(ranges.flow_grid())} "
        "points)",
        f"worst phase margin  {wrap_phase(r.worst_phase_margin_deg):9.2f} deg "
        f"(N={wp.get('n_flows')}, RTT={wp.get('rtt_s', 0) * 1e6:.4g} us; wrapped to "
        "(-180, 180], stability from the Nyquist count)",
        f"worst gain margin   {r.worst_gain_margin_db:9.2f} dB",
        f"worst delay margin  {r.worst_delay_margin_s * 1e6:9.4g} us",
        "critical RTT per N (largest RTT with a positive phase margin; negative: unstable "
        "at any RTT):",
    ]
    for n, c in r.critical_rtt_s.items():
        lines.append(f"  N={n:<5d} {c * 1e6:10.4g} us")
    lines.append(
        f"verdict: {r.verdict.upper()} "
        f"(stable needs every point stable with PM >= {r.pm_threshold_deg:g} deg)"
    )
    if r.recommendations:
        lines.append("changes that make it stable (one [qcn] field each, grid recomputed):")
        for f in r.recommendations:
            lines.append(
                f"  {f['field']} = {f['value']:.4g} (now {f['current']:.4g}): worst phase margin "
                f"{f['worst_phase_margin_deg']:.1f} deg"
            )
    c = r.confirmation
    if c is not None:
        lines.append(
            f"packet confirmation ({c['duration_s']:g} s per run, seed {c['seed']}): "
            + ("AGREES" if c["agree"] else "DISAGREES")
        )
        for row in c["rows"]:
            lines.append(
                f"  N={row['n_flows']:<4d} RTT={row['rtt_s'] * 1e6:8.4g} us: model "
                f"{'stable' if row['predicted_stable'] else 'unstable'}, packets "
                f"{row['verdict']} (queue std {row['std'] / 1e3:.3g} KB, empty "
                f"{row['underflow']:.0%}, ACF peak {row['acf_peak']:.2f}) -> "
                f"{'agree' if row['agree'] else 'DISAGREE'}"
            )
    return "\n".join(lines)
