"""Helpers shared by the sub-commands: ``--set key=value`` parsing and JSON output."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import numpy as np

__all__ = ["parse_set", "print_json", "to_jsonable"]


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


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats into JSON-safe values.

    Infinite margins become the strings ``"inf"`` / ``"-inf"``; NaN becomes ``None``.
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    return obj


def print_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()
