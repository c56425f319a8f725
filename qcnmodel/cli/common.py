"""Helpers shared by the sub-commands: ``--set key=value`` parsing and JSON output (through
the package's one JSON cleaner, :func:`qcnmodel._io.to_jsonable`)."""

from __future__ import annotations

import json
import sys
from typing import Any

from qcnmodel._io import to_jsonable

__all__ = ["add_params_options", "parse_set", "print_json", "qcn_params"]


def parse_set(items: list[str] | None) -> dict[str, str]:
    """Turn ``["key=value", ...]`` into a dict; a malformed item raises ValueError."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"--set: expected key=value, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError(f"--set: empty key in {item!r}")
        out[key] = value.strip()
    return out


def add_params_options(parser, preset_help: str) -> None:
    """Add ``--preset NAME`` and ``--params FILE`` (a QCN parameter TOML), exclusive."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--preset", default=None, help=preset_help)
    group.add_argument(
        "--params",
        default=None,
        metavar="FILE",
        help="QCN parameter TOML file, as `qcnmodel check` reads (see examples/)",
    )


def qcn_params(args):
    """The QCN parameters the arguments name: ``--params FILE`` loaded, else ``--preset``
    (a name, or None for the default)."""
    if getattr(args, "params", None):
        from qcnmodel.params import load_params

        return load_params(args.params, extra_tables=("ranges",))
    return args.preset


def print_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()
