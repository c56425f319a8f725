"""The ``qcnmodel`` command line.

Each sub-command lives in its own module ``qcnmodel.cli.<name>`` exposing
``register(subparsers)`` (which adds its parser(s) and sets ``func``) and ``run(args) -> int``.
Heavy imports happen inside ``run`` so that ``qcnmodel --help`` stays fast.

Exit status: 0 success; 1 a negative verdict (e.g. ``check`` finds the loop unstable);
2 bad input (the message names the field and the allowed range).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from qcnmodel import __version__

#: Sub-command modules, in the order they appear in ``--help``.
SUBCOMMAND_MODULES = (
    "report",
    "margins",
    "check",
    "sweep",
    "simulate",
    "compare",
    "validate",
    "figures",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available sub-command."""
    parser = argparse.ArgumentParser(
        prog="qcnmodel",
        description="Control theory and packet-level simulation of IEEE 802.1Qau QCN.",
    )
    parser.add_argument("--version", action="version", version=f"qcnmodel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        modname = f"qcnmodel.cli.{name}"
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:  # a sub-command not written yet
            if exc.name == modname:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``qcnmodel`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"qcnmodel {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"qcnmodel {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
