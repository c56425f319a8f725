"""``qcnmodel validate``: matched pairs (fluid model vs packet simulator) and the seed decks."""

from __future__ import annotations

import json
import sys

from qcnmodel.cli.common import add_jobs_option, add_out_option, add_progress_options

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``validate`` sub-command."""
    p = subparsers.add_parser(
        "validate",
        help="compare the fluid model with the packet simulator and reproduce the seed decks",
        description="Run matched pairs (fluid model and simulator on the same parameters) and "
        "the seed-deck scenarios; write a Markdown/HTML report with figures.",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a subset: 1-2 minutes with --jobs 2 on 2 shared cores with warm numba caches "
        "(68-111 s at load 1.4-2.8), 3.5 minutes on a first run (it compiles the kernels); "
        "the full run 5.3 minutes with --jobs 2 on idle cores (the README's Run times)",
    )
    add_jobs_option(p, "processes for the comparisons")
    add_out_option(p, "validation-report", "output directory (default validation-report)")
    add_progress_options(p)
    p.add_argument("--figures", default=None, help="figure directory (default OUT/figures)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--no-decks", action="store_true", help="skip the seed-deck runs")
    p.add_argument("--observations", action="store_true",
                   help="add the deck observations by protocol (S1, S3, S4, S9-S11; ~1 min) "
                   "to a --quick or --no-decks run (the full run always has them)")  # fmt: skip
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the suite; exit 0 unless a comparison regressed (a failing row that is not a known
    disagreement of :mod:`qcnmodel.validation.findings`), 1 then."""
    from qcnmodel._io import to_jsonable
    from qcnmodel.cli.common import check_out, jobs_value, progress_on
    from qcnmodel.validation.report import write_report
    from qcnmodel.validation.suite import run_validation

    check_out(args.out, directory=True)
    if args.figures is not None:
        check_out(args.figures, field="figures", directory=True)
    if not getattr(args, "quiet", False):  # the simulator's kernels say so themselves
        from qcnmodel.studies.compiling import announce_all

        announce_all(["loop", "fluid"])
    res = run_validation(quick=args.quick, progress=progress_on(args), decks_too=not args.no_decks,
                         protocol_observations=True if args.observations else None,
                         jobs=jobs_value(args.jobs))  # fmt: skip
    md, html = write_report(res, args.out, args.figures)
    if args.json:
        out = res.to_json()
        out["report"] = str(md)
        print(json.dumps(to_jsonable(out)))
    else:
        known = res.failed - len(res.regressions)
        print(
            f"{len(res.rows)} checks: {res.passed} passed, {known} known disagreements, "
            f"{len(res.regressions)} regressions ({res.wall_s:.0f} s); report {md}"
        )
        for r in res.rows:
            if not r.passed:
                tag = f"known ({r.finding})" if r.finding else "REGRESSION"
                print(f"  {tag} {r.check}: {r.quantity} [{r.model_variant}] {r.parameters}",
                      file=sys.stdout)  # fmt: skip
    return 0 if not res.regressions else 1
