"""``qcnmodel report``: the stability report for a parameter set (the README's main job).

With no arguments it analyses the IEEE 802.1Qau defaults and writes ``report/report.html``
(self-contained), ``report/report.md``, ``report/figures/*.png`` and ``report/margins.nc``.

Ranges come from ``--rtt lo..hi`` / ``--flows lo..hi``, else from the ``[ranges]`` table of
the ``--params`` file (as ``qcnmodel check`` reads it), else the defaults.

The packet-level confirmation of the verdict (--confirm): "auto" (the default) runs it when
the packet simulator is already compiled (numba's cache), and otherwise leaves it out, saying
so in the report and in one line on stderr, with the command that runs it; "yes" runs it,
compiling the simulator first if needed (once, about 15-50 s on 2 cores); "no" leaves it
out (as --no-packet). A bare --confirm means "yes". The figure of the fluid model's
nonlinear trajectories follows the same rule: drawn when its kernels are compiled (about
20 s of CPU otherwise), always with --confirm yes.

Run time, 2 cores with warm numba caches: about 35 s lightly loaded (the model's analysis and
the packet confirmation share the cores; each trajectory run realises the port frame by
frame). A first run after installation compiles only the model's cohort kernel (a few
seconds) and leaves out what is not compiled yet, saying so;
`--confirm yes` compiles everything once, the simulator in the background while the model is
analysed (57 s in all on 2 cores; the README's Run times).
"""

from __future__ import annotations

import argparse

from qcnmodel.cli.common import (
    add_model_options,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_range_options,
    add_rate_option,
    add_set_option,
)

#: the values of ``--confirm`` (a bare ``--confirm`` is ``yes``)
CONFIRM_CHOICES = ("auto", "yes", "no")

#: every figure a report may draw in ``OUT/figures`` (:mod:`qcnmodel.studies.report` and its
#: figure modules); one that this run did not draw is an earlier run's, and is removed
REPORT_FIGURES = ("bode.png", "nyquist.png", "step.png", "nonlinear.png", "stability_map.png",
                  "critical_rtt.png", "verdict_confirmation.png",
                  "packet_confirmation.png")  # fmt: skip


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
    add_model_options(p, choices=("qcn",), variant=False,
                      more="; the report analyses the QCN loop (other models: `qcnmodel "
                      "margins` or `sweep`)")  # fmt: skip
    p.add_argument("--variant", default=None, help=argparse.SUPPRESS)  # refused with a pointer
    add_range_options(p, "RTT range lo..hi with units, or lo..hi:n for n log-spaced points "
                      "(default 2us..1ms:80)",
                      "flow-count range lo..hi, or lo..hi:n for n log-spaced counts (default "
                      "1..100: 12 counts)")  # fmt: skip
    add_set_option(p, "override a parameter-set field (repeatable)")
    add_rate_option(p)
    p.add_argument("--confirm", nargs="?", const="yes", default=None, choices=CONFIRM_CHOICES,
                   help="packet-level confirmation of the verdict: auto (default) = when the "
                   "packet simulator is already compiled, else say how to run it; yes (or a "
                   "bare --confirm) = always, compiling the simulator once if needed (57 s "
                   "in all the first time on 2 cores); no = skip")  # fmt: skip
    p.add_argument("--no-packet", action="store_true",
                   help="skip the packet-level confirmation runs (= --confirm no)")  # fmt: skip

    add_progress_options(p)
    p.add_argument("--jobs", default=None, metavar="N",
                   help="processes for the packet confirmation of the verdict (default: the "
                   "cores actually free, at most the number of points; -1 = the same)")  # fmt: skip
    p.set_defaults(func=run)


def report_config(args):
    """The :class:`~qcnmodel.studies.report.ReportConfig` the arguments describe: the
    parameter set, and the RTT and flow ranges (flags, else the file's ``[ranges]``)."""
    from qcnmodel import config
    from qcnmodel.cli.check import file_ranges, grid_count, parse_ranges
    from qcnmodel.cli.common import load_params_file, parse_set
    from qcnmodel.params import QCNParams
    from qcnmodel.studies.report import ReportConfig

    if getattr(args, "model", "qcn") != "qcn":
        raise ValueError(f"model: the report analyses the QCN loop; got {args.model!r} "
                         "(allowed: qcn; other models: `qcnmodel margins` or `sweep`)")  # fmt: skip
    if getattr(args, "variant", None) is not None:
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
    ranges = parse_ranges(args.rtt, args.flows, None, table, path, text,
                          getattr(args, "rate", None))  # fmt: skip
    kw = {"capacity": ranges.capacity}
    if "pm_threshold" in table:  # checked as check checks it; the verdict's threshold too
        kw["pm_threshold"] = ranges.pm_threshold
    if args.rtt is not None or "rtt" in table:
        kw["rtt_min"], kw["rtt_max"] = ranges.rtt
        if ranges.rtt[0] == ranges.rtt[1]:
            raise ValueError(
                "rtt: the report draws its maps over a range lo..hi with lo < hi;"
                " for one RTT: `qcnmodel check --rtt` or `qcnmodel margins`"
            )
    n_rtt = grid_count(args.rtt if args.rtt is not None else table.get("rtt", ""), "rtt")[1]
    if n_rtt is not None:
        if n_rtt < 2:
            raise ValueError(f"rtt: the report's maps need at least 2 RTT points, got {n_rtt}")
        kw["n_rtt"] = n_rtt
    if args.flows is not None or "flows" in table:
        lo, hi = ranges.flows
        inside = {n for n in config.defaults["studies.report_flows"] if lo <= n <= hi}
        n_flows = grid_count(args.flows if args.flows is not None else table["flows"],
                             "flows")[1]  # fmt: skip
        if n_flows is not None:  # parse_ranges took it: check's rounded log grid
            inside = set(ranges.flow_grid().tolist())
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
    packet = _packet(args)
    if packet and ranges.capacity is not None:
        packet = _confirmable(params, ranges.capacity, packet, args)
    return ReportConfig(params=params, preset=name, packet=packet,
                        trajectories=True if packet is True else "auto", **kw)  # fmt: skip


def _confirmable(params, capacity: float, packet, args):
    """``packet`` unless the port is faster than the sources' line rate, which the packet
    confirmation cannot build: ``--confirm yes`` is then refused before the analysis (a
    ValueError naming the flag and the range), the default (``auto``) leaves the
    confirmation out and says so on stderr."""
    import sys

    from qcnmodel.studies.confirm import check_rate

    field = "rate" if getattr(args, "rate", None) is not None else "capacity"
    try:
        check_rate(params, capacity, field)
    except ValueError as exc:
        if packet is True:
            raise
        print(f"qcnmodel report: the packet confirmation is left out: {exc}", file=sys.stderr,
              flush=True)  # fmt: skip
        return False
    return packet


def _packet(args) -> bool | str:
    """``ReportConfig.packet`` from ``--confirm`` and ``--no-packet`` (``--confirm yes`` also
    draws the nonlinear trajectories whether compiled or not; otherwise they follow
    ``"auto"``)."""
    confirm = getattr(args, "confirm", None)
    if confirm is not None and confirm not in CONFIRM_CHOICES:
        raise ValueError(f"confirm: one of {', '.join(CONFIRM_CHOICES)}, got {confirm!r}")
    if args.no_packet:
        if confirm not in (None, "no"):
            raise ValueError(f"confirm: --confirm {confirm} contradicts --no-packet (the same "
                             "as --confirm no); give one of them")  # fmt: skip
        return False
    return {None: "auto", "auto": "auto", "yes": True, "no": False}[confirm]


def confirm_command(args) -> str:
    """The command line of this report with its packet confirmation (``--confirm yes``), for
    the report to name when it leaves the confirmation out (the progress and ``--jobs``
    flags are left out: they do not change the report)."""
    import shlex

    argv = ["qcnmodel", "report"]
    if args.out != "report":
        argv += ["--out", args.out]
    if args.params:
        argv += ["--params", args.params]
    elif args.preset:
        argv += ["--preset", args.preset]
    for item in args.set or ():
        argv += ["--set", item]
    if args.rtt is not None:
        argv += ["--rtt", args.rtt]
    if args.flows is not None:
        argv += ["--flows", args.flows]
    return shlex.join([*argv, "--confirm", "yes"])


def run(args) -> int:
    """Run ``qcnmodel report``."""
    from qcnmodel.cli.common import check_out, progress_on
    from qcnmodel.studies.report import write_report

    cfg = report_config(args)
    check_out(args.out, directory=True)
    if not getattr(args, "quiet", False):
        from qcnmodel.cli.check import workload_note

        workload_note(cfg.flows, cfg.jobs)
    paths = write_report(args.out, cfg, progress=progress_on(args), command=confirm_command(args))
    remove_stale_figures(args.out, paths["figures"])
    print(f"wrote {paths['html']}")
    print(f"wrote {paths['markdown']}")
    print(f"wrote {paths['margins']} and {len(paths['figures'])} figures")
    return 0


def remove_stale_figures(out, written) -> list[str]:
    """Remove from ``OUT/figures`` the report figures (:data:`REPORT_FIGURES`) that this run
    did not draw, left by an earlier run into the same folder (a confirmation figure of an
    earlier ``--confirm yes``): the folder then holds this report and nothing it does not
    show. Files the report never writes are left alone. Returns the paths removed."""
    from pathlib import Path

    folder = Path(out) / "figures"
    drawn = {Path(p).resolve() for p in written}
    removed = []
    for name in REPORT_FIGURES:
        path = folder / name
        if path.is_file() and not path.is_symlink() and path.resolve() not in drawn:
            path.unlink()
            removed.append(str(path))
    return removed
