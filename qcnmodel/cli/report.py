"""``qcnmodel report``: the stability report for a parameter set (the README's main job).

With no arguments it analyses the IEEE 802.1Qau defaults and writes ``report/report.html``
(self-contained), ``report/report.md``, ``report/figures/*.png`` and ``report/margins.nc``.
"""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add the ``report`` sub-command."""
    p = subparsers.add_parser(
        "report",
        help="stability report (HTML + Markdown + figures) for a parameter set",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", default="report", help="output directory (default ./report)")
    p.add_argument("--preset", default="802.1qau", help="parameter preset (default 802.1qau)")
    p.add_argument("--params", default=None, help="TOML parameter file instead of a preset")
    p.add_argument("--no-packet", action="store_true",
                   help="skip the packet-level confirmation runs")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``qcnmodel report``."""
    from qcnmodel.params import QCNParams, load_params
    from qcnmodel.studies.report import ReportConfig, write_report

    if args.params:
        params = load_params(args.params, extra_tables=("ranges",))
        name = args.params
    else:
        params = QCNParams.preset(args.preset)
        name = args.preset
    cfg = ReportConfig(params=params, preset=name, packet=not args.no_packet)
    paths = write_report(args.out, cfg, progress=not args.quiet)
    print(f"wrote {paths['html']}")
    print(f"wrote {paths['markdown']}")
    print(f"wrote {paths['margins']} and {len(paths['figures'])} figures")
    return 0
