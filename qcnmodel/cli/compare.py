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

from qcnmodel.cli.common import (
    add_jobs_option,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_set_option,
    check_out,
    cli_time,
    note_unread_params,
    parse_set,
    print_json,
    progress_on,
    qcn_params,
    seed_value,
    split_list,
)


def register(subparsers) -> None:
    """Add the ``compare`` sub-command."""
    p = subparsers.add_parser(
        "compare",
        help="run several protocols on one scenario and plot them side by side",
        description="Run several protocols on one scenario (same seed) and compare them.",
    )
    p.add_argument("--scenario", required=True, help="scenario name (see `qcnmodel scenarios`)")
    p.add_argument("--protocols", required=True, help="comma-separated names, e.g. qcn,ecm,dcqcn")
    p.add_argument("--duration", default=None, help="simulated time with a unit (default: "
                   "the scenario's)")  # fmt: skip
    p.add_argument("--seed", default="0", help="random seed, 0 .. 2^63-1 (default 0)")
    add_params_options(p, "QCN parameter preset (default: the scenario's)")
    add_set_option(p, "scenario, protocol or QCN parameter; applies to every protocol accepting it")
    p.add_argument("--bin", default=None, help="trace bin width with a unit (default 1ms, "
                   "or a tenth of a --duration shorter than that, merged to fit the trace "
                   "memory limit; a --bin given is kept, or refused when it does not "
                   "fit)")  # fmt: skip
    add_out_option(p, "compare-out", "output directory (default compare-out)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_progress_options(p)
    add_jobs_option(p, "unused (the protocols run in turn; accepted for a uniform CLI)")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the comparison, write figures and table, print the table."""
    from qcnmodel.cli.simulate import _bin, explicit_bin_width
    from qcnmodel.studies.compare import compare, summary_markdown, write

    check_out(args.out, directory=True)
    from qcnmodel.sim.protocols.registry import protocol_name

    names = [protocol_name(n, "protocols") for n in split_list(args.protocols, "protocols")]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"protocols: {name!r} given twice in {args.protocols!r}")
    duration = cli_time(args.duration, "duration") if args.duration is not None else None
    note_unread_params(args, names)
    if not args.quiet:
        _announce_runs(args, names, duration)
    with explicit_bin_width(args.bin is not None):
        cmp = compare(
            args.scenario, names, duration=duration, seed=seed_value(args.seed),
            overrides=parse_set(args.set), params=qcn_params(args),
            bin_width=_bin(args.bin, duration), progress=not args.json and progress_on(args),
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


def _announce_runs(args, names: list, duration) -> str | None:
    """Say on stderr, before the runs start, how long the comparison may take when that may
    exceed :data:`qcnmodel.studies.sim_workload.ANNOUNCE_ABOVE_S`: the sum over its
    protocols' runs, one after another (:func:`qcnmodel.studies.sim_workload.announce`). A bad
    input is left to the simulator, which refuses it naming the field."""
    from qcnmodel.cli.simulate import _bin
    from qcnmodel.studies.sim_workload import announce, point_events, wall_range

    events, low, high, flows = 0.0, 0.0, 0.0, 0
    try:
        for name in names:
            e, f = point_events(args.scenario, name, duration, parse_set(args.set),
                                _bin(args.bin, duration))  # fmt: skip
            lo, hi = wall_range(e, f)
            events, low, high, flows = events + e, low + lo, high + hi, max(flows, f)
    except ValueError:
        return None
    return announce("compare", f"its {len(names)} runs", events, (low, high), flows,
                    hint="a shorter --duration takes less")  # fmt: skip
