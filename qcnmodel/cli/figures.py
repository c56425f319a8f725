"""``qcnmodel figures``: regenerate every file in ``figures/`` (deterministic, captioned).

Run time: about 10 minutes on 2 busy cores with warm numba caches (``--only analysis --only
packet``: about a minute; the validation group is a full validation run).
"""

from __future__ import annotations

from qcnmodel.cli.common import add_jobs_option, add_out_option, add_progress_options

#: the groups of :data:`qcnmodel.studies.figures.GROUPS` (named here: the help imports
#: nothing heavy)
GROUP_NAMES = ("analysis", "packet", "validation", "compare")


def register(subparsers) -> None:
    """Add the ``figures`` sub-command."""
    p = subparsers.add_parser(
        "figures", help="regenerate the figures/ directory", description=__doc__
    )
    add_out_option(p, "figures", "output directory (default figures/)")
    p.add_argument("--only", action="append", metavar="GROUP",
                   help=f"draw only this group (repeatable): {', '.join(GROUP_NAMES)}")  # fmt: skip
    add_progress_options(p)
    add_jobs_option(p, "unused (the figures are drawn in turn; accepted for a uniform CLI)")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``qcnmodel figures``."""
    from qcnmodel.cli.common import check_out, progress_on
    from qcnmodel.studies.figures import regenerate

    check_out(args.out, directory=True)
    figs = regenerate(args.out, only=args.only, progress=progress_on(args))
    print(f"wrote {len(figs)} figures and {args.out}/README.md")
    return 0
