"""``qcnmodel validate``: matched pairs (fluid model vs packet simulator) and the seed decks."""

from __future__ import annotations

import json
import sys

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``validate`` sub-command."""
    p = subparsers.add_parser(
        "validate",
        help="compare the fluid model with the packet simulator and reproduce the seed decks",
        description="Run matched pairs (fluid model and simulator on the same parameters) and "
        "the seed-deck scenarios; write a Markdown/HTML report with figures.",
    )
    p.add_argument("--quick", action="store_true", help="a subset that runs in ~2 minutes")
    p.add_argument("--out", default="validation-report", help="output directory")
    p.add_argument("--figures", default=None, help="figure directory (default OUT/figures)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--no-decks", action="store_true", help="skip the seed-deck runs")
    p.add_argument("--observations", action="store_true",
                   help="add the deck observations by protocol (S1, S3, S4, S9-S11; ~1 min) "
                   "to a --quick or --no-decks run (the full run always has them)")  # fmt: skip
    p.set_defaults(func=run)


def _plain(o):
    """JSON fallback for numpy scalars."""
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def run(args) -> int:
    """Run the suite; exit 0 if every check passed, 1 otherwise."""
    from qcnmodel.validation.report import write_report
    from qcnmodel.validation.suite import run_validation

    res = run_validation(quick=args.quick, progress=True, decks_too=not args.no_decks,
                         protocol_observations=True if args.observations else None)  # fmt: skip
    md, html = write_report(res, args.out, args.figures)
    if args.json:
        out = res.to_json()
        out["report"] = str(md)
        print(json.dumps(out, default=_plain))
    else:
        print(f"{len(res.rows)} checks: {res.passed} passed, {res.failed} failed "
              f"({res.wall_s:.0f} s); report {md}")  # fmt: skip
        for r in res.rows:
            if not r.passed:
                print(f"  FAIL {r.check}: {r.quantity} [{r.model_variant}] {r.parameters}",
                      file=sys.stdout)  # fmt: skip
    return 0 if res.failed == 0 else 1
