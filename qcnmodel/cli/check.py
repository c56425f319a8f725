"""``qcnmodel check PARAMS.toml``: is this parameter set stable over the operating ranges?

Validates the file (errors name the field and its line) and opens with one verdict paragraph:
stable, marginal or unstable over the RTT and flow ranges, the model that produced it (default
the QCN packet-fidelity fluid model), the worst point with its phase margin, the binding
constraint and the one [qcn] field change that makes it stable (recomputed over the ranges), or
that none within the searched intervals does. Then: fields without effect in the file's mode,
worst-case margins, the critical RTT per N. With --confirm the packet simulator runs at the
worst point and across the boundary and the verdict is confirmed or contradicted.

Ranges come from the command line, else from the file's ``[ranges]`` table
(``rtt = "2us..1ms"``, ``flows = "1..100"``, ``pm_threshold = 30``), else those defaults.

Exit status: 0 stable (and not contradicted by --confirm), 1 unstable, marginal or
contradicted, 2 bad input.
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
    p.add_argument("--confirm", nargs="?", const="0.4s", default=None, metavar="DURATION",
                   help="confirm the verdict with the packet simulator at the worst point and "
                   "across the boundary (run length per point, default 0.4s); exit 1 if "
                   "the packets contradict it")  # fmt: skip
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
    from qcnmodel.studies.check_text import render
    from qcnmodel.studies.confirm import check_duration
    from qcnmodel.units import parse_time

    params = load_params(args.params_file, extra_tables=("ranges",))
    ranges = _ranges(args)
    confirm = getattr(args, "confirm", None)
    duration = None if confirm is None else check_duration(parse_time(confirm, "confirm"))
    bar = _bar(params, ranges, args)
    result = check_params(params, ranges, model=args.model, recommend=not args.no_recommend,
                          variant=args.variant, progress=bar, confirm=confirm is not None,
                          confirm_duration=duration)  # fmt: skip
    if bar is not None:
        bar.close()
    if args.json:
        out = {"file": args.params_file, "valid": True,
               "rtt_range_s": list(ranges.rtt), "flows_range": list(ranges.flows)}  # fmt: skip
        out.update(result.to_dict())
        print_json(out)
        return result.exit_code
    print(render(result, ranges, args.params_file))
    sys.stdout.flush()
    return result.exit_code


def _bar(params, ranges, args):
    """A progress bar on stderr when it is a terminal (None otherwise)."""
    if not sys.stderr.isatty():
        return None
    from tqdm.auto import tqdm

    from qcnmodel.studies.check import check_steps

    total = check_steps(params, ranges, recommend=not args.no_recommend)
    return tqdm(total=total, desc="check", unit="step", file=sys.stderr, leave=False)
