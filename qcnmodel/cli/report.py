"""``qcnmodel report``: the stability report for a parameter set (the README's main job).

With no arguments it analyses the IEEE 802.1Qau defaults and writes ``report/report.html``
(self-contained), ``report/report.md``, ``report/figures/*.png`` and ``report/margins.nc``.

Ranges come from ``--rtt lo..hi`` / ``--flows lo..hi``, else from the ``[ranges]`` table of
the ``--params`` file (as ``qcnmodel check`` reads it), else the defaults.

Run time, 2 cores with warm numba caches: about 22 s lightly loaded (the model's analysis and
the packet confirmation share the cores); a first run also compiles the simulator kernel, in
the background while the model is analysed (about 60 s in all).
"""

from __future__ import annotations

import argparse

from qcnmodel.cli.common import (
    add_model_options,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_range_options,
    add_set_option,
)


def register(subparsers) -> None:
    """Add the ``report`` sub-command."""
    p = subparsers.add_parser(
        "report",
        help="stability report (HTML + Markdown + figures) for a parameter set",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_out_option(p, "report", "output directory (default ./report)")
    add_params_options(p, "parameter preset (default 802.1qau)")
    add_model_options(p)
    add_range_options(p, "RTT range lo..hi with units (default 2us..1ms)",
                      "flow-count range lo..hi (default 1..100)")  # fmt: skip
    add_set_option(p, "override a parameter-set field (repeatable)")
    p.add_argument("--no-packet", action="store_true",
                   help="skip the packet-level confirmation runs")  # fmt: skip
    add_progress_options(p)
    p.add_argument("--jobs", default=None, metavar="N",
                   help="processes for the packet confirmation of the verdict (default: the "
                   "cores actually free, at most the number of points; -1 = the same)")  # fmt: skip
    p.set_defaults(func=run)


def report_config(args):
    """The :class:`~qcnmodel.studies.report.ReportConfig` the arguments describe: the
    parameter set, and the RTT and flow ranges (flags, else the file's ``[ranges]``)."""
    from qcnmodel import config
    from qcnmodel.cli.check import file_ranges, parse_ranges
    from qcnmodel.cli.common import load_params_file, parse_set
    from qcnmodel.params import QCNParams
    from qcnmodel.studies.report import ReportConfig

    if args.model != "qcn":
        raise ValueError(f"model: the report analyses the QCN loop; got {args.model!r} "
                         "(allowed: qcn; other models: `qcnmodel margins` or `sweep`)")  # fmt: skip
    if args.variant is not None:
        raise ValueError(
            "variant: the report uses the validated QCN model; use `qcnmodel check --variant` "
            "or `margins --variant` for another configuration"
        )
    if args.params:
        params, name = load_params_file(args.params), args.params
    else:
        name = args.preset or "802.1qau"
        params = QCNParams.preset(name)
    sets = parse_set(args.set)
    if sets:
        params = params.replace(**sets)
    table, path, text = file_ranges(argparse.Namespace(params_file=None, params=args.params))
    table = {k: v for k, v in table.items() if k != "pm_threshold"}
    ranges = parse_ranges(args.rtt, args.flows, None, table, path, text)
    kw = {}
    if args.rtt is not None or "rtt" in table:
        kw["rtt_min"], kw["rtt_max"] = ranges.rtt
        if ranges.rtt[0] == ranges.rtt[1]:
            raise ValueError("rtt: the report needs a range lo..hi with lo < hi")
    if args.flows is not None or "flows" in table:
        lo, hi = ranges.flows
        inside = {n for n in config.defaults["studies.report_flows"] if lo <= n <= hi}
        kw["flows"] = tuple(sorted(inside | {lo, hi}))
        kw["point_flows"] = tuple(
            sorted({min(max(n, lo), hi) for n in config.defaults["studies.report_point_flows"]})
        )
    if "rtt_min" in kw:
        pts = config.defaults["studies.report_point_rtts"]
        kw["point_rtts"] = tuple(sorted({min(max(r, kw["rtt_min"]), kw["rtt_max"]) for r in pts}))
    if getattr(args, "jobs", None) is not None:
        from qcnmodel.cli.common import jobs_value

        kw["jobs"] = jobs_value(args.jobs)
    return ReportConfig(params=params, preset=name, packet=not args.no_packet, **kw)


def run(args) -> int:
    """Run ``qcnmodel report``."""
    from qcnmodel.cli.common import check_out, progress_on
    from qcnmodel.studies.report import write_report

    cfg = report_config(args)
    check_out(args.out, directory=True)
    paths = write_report(args.out, cfg, progress=progress_on(args))
    print(f"wrote {paths['html']}")
    print(f"wrote {paths['markdown']}")
    print(f"wrote {paths['margins']} and {len(paths['figures'])} figures")
    return 0
