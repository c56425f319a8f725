"""``qcnmodel compare``: several protocols on one scenario, side by side.

``qcnmodel compare --scenario NAME --protocols a,b,c [--duration T] [--seed N]
[--set key=value ...] [--preset NAME | --params FILE] [--bin 1ms] [--out DIR] [--json]``
runs the protocols with the same seed, writes ``compare_<scenario>_{queue,throughput,rates}.png``
and ``compare_<scenario>_summary.md`` into ``DIR`` (default ``compare-out``) and prints the
summary table (Markdown; ``--json``: one JSON object). An unknown protocol or a ``--set`` key
no protocol accepts is an error naming it (exit status 2). ``--params FILE`` takes the QCN
parameters from a TOML file (the format ``qcnmodel check`` reads) instead of a preset.
"""

from __future__ import annotations

import sys

from qcnmodel.cli.common import add_params_options, parse_set, print_json, qcn_params


def register(subparsers) -> None:
    """Add the ``compare`` sub-command."""
    p = subparsers.add_parser(
        "compare",
        help="run several protocols on one scenario and plot them side by side",
        description="Run several protocols on one scenario (same seed) and compare them.",
    )
    p.add_argument("--scenario", required=True, help="scenario name (see `qcnmodel scenarios`)")
    p.add_argument("--protocols", required=True, help="comma-separated names, e.g. qcn,ecm,dcqcn")
    p.add_argument("--duration", default=None, help="simulated time (default: the scenario's)")
    p.add_argument("--seed", type=int, default=0)
    add_params_options(p, "QCN parameter preset (default: the scenario's)")
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="scenario, protocol or QCN parameter; applies to every protocol accepting it",
    )  # fmt: skip
    p.add_argument("--bin", default="1ms", help="trace bin width (default 1ms)")
    p.add_argument("--out", default="compare-out", help="output directory (default compare-out)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the comparison, write figures and table, print the table."""
    from qcnmodel.studies.compare import compare, summary_markdown, write

    cmp = compare(
        args.scenario, args.protocols, duration=args.duration, seed=args.seed,
        overrides=parse_set(args.set), params=qcn_params(args), bin_width=args.bin,
        progress=not args.json and sys.stderr.isatty(),
    )  # fmt: skip
    files = write(cmp, args.out)
    if args.json:
        print_json({"scenario": cmp.scenario, "seed": cmp.seed, "duration_s": cmp.duration,
                    "rows": cmp.table(), "files": [str(p) for p, _ in files]})  # fmt: skip
        return 0
    print(summary_markdown(cmp), end="")
    for path, _ in files:
        print(f"wrote {path}")
    return 0
