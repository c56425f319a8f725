"""``qcnmodel figures``: regenerate every file in ``figures/`` (deterministic, captioned)."""

from __future__ import annotations


def register(subparsers) -> None:
    """Add the ``figures`` sub-command."""
    p = subparsers.add_parser(
        "figures", help="regenerate the figures/ directory", description=__doc__
    )
    p.add_argument("--out", default="figures", help="output directory (default figures/)")
    p.add_argument("--only", action="append", metavar="GROUP", help="draw only these groups")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``qcnmodel figures``."""
    from qcnmodel.studies.figures import regenerate

    figs = regenerate(args.out, only=args.only, progress=not args.quiet)
    print(f"wrote {len(figs)} figures and {args.out}/README.md")
    return 0
