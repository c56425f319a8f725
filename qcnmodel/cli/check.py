"""``qcnmodel check PARAMS.toml``: is this parameter set stable over the operating ranges?

Validates the file (errors name the field and its line), prints the worst-case margins of the
linearised QCN fluid loop over the RTT and flow ranges, the critical RTT per N, a verdict
(stable, marginal or unstable, with the phase-margin threshold used) and recommendations (the
W, Ps or Gd that maximises the worst-case delay margin over the ranges).

Ranges come from the command line, else from the file's ``[ranges]`` table
(``rtt = "2us..1ms"``, ``flows = "1..100"``, ``pm_threshold = 30``), else those defaults.

Exit status: 0 stable, 1 unstable or marginal, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys

RANGE_KEYS = {"rtt", "flows", "pm_threshold"}


def register(subparsers) -> None:
    """Add the ``check`` sub-command."""
    p = subparsers.add_parser(
        "check",
        help="check a parameter file: worst-case margins, verdict, recommendations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("params_file", metavar="PARAMS.toml", help="parameter file (see examples/)")
    p.add_argument("--rtt-range", default=None, help="RTT range lo..hi (default 2us..1ms)")
    p.add_argument("--flows", default=None, help="flow-count range lo..hi (default 1..100)")
    p.add_argument("--pm-threshold", default=None, help="phase margin (deg) for 'stable' (30)")
    p.add_argument("--model", choices=("qcn", "fopdt"), default="qcn", help="linearised model")
    p.add_argument("--variant", default=None, help="named configuration of the --model")
    p.add_argument("--no-recommend", action="store_true", help="skip the W/Ps/Gd search")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _ranges(args):

    from pathlib import Path

    from qcnmodel._errors import unknown_name
    from qcnmodel.params.qcn import _line_of, tomllib
    from qcnmodel.studies.check import CheckRanges, parse_range
    from qcnmodel.units import parse_number, parse_time

    path = Path(args.params_file)
    text = path.read_text()
    table = tomllib.loads(text).get("ranges", {})
    for key in table:
        if key not in RANGE_KEYS:
            raise unknown_name(f"{path}, line {_line_of(text, key)}", "[ranges] field", key,
                               RANGE_KEYS)  # fmt: skip

    def pick(cli_value, key):
        if cli_value is not None:
            return cli_value, None
        if key in table:
            return table[key], _line_of(text, key)
        return None, None

    def where(line):
        return f"{path}, line {line}: " if line else ""

    given = {}
    rtt_text, line = pick(args.rtt_range, "rtt")
    try:
        if rtt_text is not None:
            given["rtt"] = parse_range(rtt_text, parse_time, "rtt-range")
    except ValueError as exc:
        raise ValueError(where(line) + str(exc)) from None
    flows_text, line = pick(args.flows, "flows")
    try:
        if flows_text is not None:
            lo, hi = parse_range(str(flows_text), parse_number, "flows", integer=True)
            given["flows"] = (int(lo), int(hi))
    except ValueError as exc:
        raise ValueError(where(line) + str(exc)) from None
    pm_text, line = pick(args.pm_threshold, "pm_threshold")
    try:
        if pm_text is not None:
            given["pm_threshold"] = parse_number(pm_text, "pm-threshold")
        return CheckRanges(**given)
    except ValueError as exc:
        raise ValueError(where(line) + str(exc)) from None


def run(args) -> int:
    """Run ``qcnmodel check``; exit 0 stable, 1 unstable/marginal, 2 bad input."""
    from qcnmodel.cli.common import print_json
    from qcnmodel.params import load_params
    from qcnmodel.studies.check import check_params

    params = load_params(args.params_file, extra_tables=("ranges",))
    ranges = _ranges(args)
    result = check_params(params, ranges, model=args.model, recommend=not args.no_recommend,
                          variant=args.variant)  # fmt: skip
    if args.json:
        out = {"file": args.params_file, "valid": True, "model": args.model,
               "rtt_range_s": list(ranges.rtt), "flows_range": list(ranges.flows)}  # fmt: skip
        out.update(result.to_dict())
        print_json(out)
        return result.exit_code
    print(f"{args.params_file}: valid")
    print(
        f"ranges: RTT {ranges.rtt[0] * 1e6:g} us .. {ranges.rtt[1] * 1e6:g} us, "
        f"N {ranges.flows[0]} .. {ranges.flows[1]} ({args.model} model, exact delay)"
    )
    wp = result.worst_point
    print(
        f"worst phase margin  {result.worst_phase_margin_deg:9.2f} deg "
        f"(N={wp.get('n_flows')}, RTT={wp.get('rtt_s', 0) * 1e6:.4g} us)"
    )
    print(f"worst gain margin   {result.worst_gain_margin_db:9.2f} dB")
    print(f"worst delay margin  {result.worst_delay_margin_s * 1e6:9.4g} us")
    print("critical RTT per N:")
    for n, c in result.critical_rtt_s.items():
        print(f"  N={n:<5d} {c * 1e6:10.4g} us")
    print(
        f"verdict: {result.verdict.upper()} "
        f"(stable needs every point stable with PM >= {result.pm_threshold_deg:g} deg)"
    )
    if result.recommendations:
        print("recommendations (one parameter at a time, maximising the worst-case delay margin):")
        for r in result.recommendations:
            ok = "stable over the ranges" if r["stable_over_ranges"] else "still unstable"
            if r["at_search_bound"]:
                ok += f"; at the edge of the searched interval {r['search_interval']}"
            print(
                f"  {r['parameter']:<3s} {r['current']:.6g} -> {r['recommended']:.6g}: "
                f"worst delay margin {r['worst_delay_margin_s'] * 1e6:.4g} us ({ok})"
            )
    sys.stdout.flush()
    return result.exit_code
