"""The vocabulary shared by the sub-commands, and the checks of their common flags.

Every sub-command takes the same flag for the same thing:

* ``--preset NAME`` / ``--params FILE`` (a QCN parameter TOML), ``--set KEY=VALUE``;
* ``--model`` and ``--variant`` wherever a linearised model is chosen, each sub-command's
  choices being the models it accepts (``margins``/``sweep``: fopdt, qcn, dcqcn, ecm;
  ``check``: qcn, fopdt; ``report``: qcn);
* ``--rtt`` and ``--flows``: one value (``500us``, ``10``) or a range ``lo..hi``
  (``--rtt-range`` stays as a deprecated alias of ``--rtt``);
* ``--quiet`` (alias ``--no-progress``), ``--jobs N`` (``-1``: the cores actually free);
* ``--out``: the format follows the suffix, checked before any work; files are written
  atomically (:func:`qcnmodel._io.atomic_path`).

Times and rates typed on the command line need a unit (``5us``, ``10Gbps``): a bare number
is refused, since ``--rtt 5`` would otherwise mean five seconds. Values beyond the limits of
:data:`qcnmodel.config.defaults` (``cli.*``) are refused with the limit named. The same checks
apply to the operating point (``rtt``, ``n_flows``, ``capacity``) given by ``--set`` or
``--grid`` (:func:`operating_value`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from qcnmodel._io import to_jsonable

__all__ = [
    "MODEL_CHOICES",
    "add_jobs_option",
    "add_model_options",
    "add_out_option",
    "add_params_options",
    "add_progress_options",
    "add_range_options",
    "add_set_option",
    "check_input_file",
    "check_no_empty_paths",
    "check_operating_values",
    "check_out",
    "cli_rate",
    "cli_time",
    "flows_value",
    "free_cores",
    "jobs_value",
    "load_params_file",
    "operating_value",
    "parse_set",
    "positive_int",
    "print_json",
    "progress_on",
    "qcn_params",
    "rtt_value",
    "seed_value",
    "split_list",
]

#: The linearised models, the same choices in every sub-command that picks one.
MODEL_CHOICES = ("fopdt", "qcn", "dcqcn", "ecm")


def parse_set(items: list[str] | None) -> dict[str, str]:
    """Turn ``["key=value", ...]`` into a dict; a malformed item, or a key given twice with
    different values, raises ValueError (the last one would win silently)."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"--set: expected key=value, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError(f"--set: empty key in {item!r}")
        if key in out and out[key] != value.strip():
            raise ValueError(f"--set {key}: given twice ({out[key]!r} and {value.strip()!r}); "
                             "give it once")  # fmt: skip
        out[key] = value.strip()
    return out


# -- adding the shared flags -----------------------------------------------------------------


def add_params_options(parser, preset_help: str, default: str | None = None) -> None:
    """Add ``--preset NAME`` and ``--params FILE`` (a QCN parameter TOML), exclusive."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--preset", default=default, help=preset_help)
    group.add_argument(
        "--params",
        default=None,
        metavar="FILE",
        help="QCN parameter TOML file, as `qcnmodel check` reads (see examples/)",
    )


def add_set_option(parser, help_text: str = "override a parameter (repeatable)") -> None:
    """Add ``--set KEY=VALUE`` (repeatable)."""
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=help_text)


def add_model_options(parser, default: str | None = "qcn", group=None, choices=MODEL_CHOICES,
                      more: str = "", variant: bool = True) -> None:  # fmt: skip
    """Add ``--model`` and, when ``variant``, ``--variant``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-command's parser.
    default : str or None
        The model when the flag is left out.
    group : argparse group, optional
        Where ``--model`` goes (a mutually exclusive group), else ``parser``.
    choices : tuple of str
        The models this sub-command accepts (default :data:`MODEL_CHOICES`): the help lists
        them and argparse refuses any other, naming these, so that the help never offers a
        model the command refuses.
    more : str
        Appended to the help (where the other models are analysed).
    variant : bool
        Whether the sub-command takes ``--variant``.

    Notes
    -----
    A model of :data:`MODEL_CHOICES` that this sub-command does not accept is refused with
    the accepted ones and the commands that analyse it (``qcnmodel margins --model NAME``,
    ``qcnmodel sweep --model NAME``).
    """
    import argparse

    def model_name(text: str) -> str:
        if text in MODEL_CHOICES and text not in choices:
            raise argparse.ArgumentTypeError(
                f"this command takes {', '.join(choices)}, not {text!r}; the {text} model's "
                f"margins, critical RTT and sweeps are `qcnmodel margins --model {text}` and "
                f"`qcnmodel sweep --model {text}`"
            )
        return text

    model_name.__name__ = "model"  # argparse names the type in its own messages
    (group or parser).add_argument(
        "--model",
        type=model_name,
        choices=choices,
        default=default,
        help=f"linearised model: {', '.join(choices)}"
        + (f" (default {default})" if default else "")
        + more,
    )
    if variant:
        parser.add_argument("--variant", default=None, help="named configuration of the --model")


def add_range_options(parser, rtt_help: str, flows_help: str) -> None:
    """Add ``--rtt`` (and its deprecated alias ``--rtt-range``) and ``--flows``, each one
    value or a range ``lo..hi``. A leading minus is read as a value (``--rtt -5us`` is
    refused by the value check, not by the parser)."""
    parser.add_argument("--rtt", "--rtt-range", dest="rtt", default=None, metavar="RTT",
                        help=rtt_help)  # fmt: skip
    parser.add_argument("--flows", default=None, metavar="N", help=flows_help)


def add_rate_option(parser, help_text: str | None = None) -> None:
    """Add ``--rate``: the congestion point's service rate C with a unit (a hotspot port)."""
    parser.add_argument("--rate", default=None, metavar="RATE", help=help_text or (
        "the congestion point's service rate with a unit, e.g. 5Gbps (a hotspot port; "
        "default the line rate; [ranges] capacity in the file)"))  # fmt: skip


def add_progress_options(parser) -> None:
    """Add ``--quiet`` (and its alias ``--no-progress``): no progress bar on stderr."""
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress bar (alias --no-progress; by default a bar is shown on a terminal)",
    )


def add_jobs_option(parser, what: str = "worker processes") -> None:
    """Add ``--jobs N`` (``-1``: the cores actually free)."""
    parser.add_argument("--jobs", default="1", metavar="N",
                        help=f"{what} (default 1; -1 = the cores actually free)")  # fmt: skip


def add_out_option(parser, default, what: str) -> None:
    """Add ``--out PATH``."""
    parser.add_argument("--out", default=default, metavar="PATH", help=what)


# -- checking the shared values --------------------------------------------------------------


def _limit(key: str):
    from qcnmodel import config

    return config.defaults[key]


def _with_unit(value, field: str, example) -> str:
    """``value`` as text, refused when it is a bare number (the unit would be guessed);
    ``example(text, number)`` is the hint: the number written with a unit."""
    from qcnmodel.units import parse_number

    text = str(value).strip()
    if not text:
        raise ValueError(f"{field}: empty value; give a value with a unit, e.g. "
                         f"{example('1', 1.0)}")  # fmt: skip
    try:
        x = parse_number(text, field)
    except ValueError:
        return text
    raise ValueError(f"{field}: {text!r} has no unit; give a unit, e.g. {example(text, x)}")


def seconds_example(text: str, x: float) -> str:
    """``5s or 5ms``: the hint for a bare number where durations (seconds) are expected."""
    return f"{text}s or {text}ms"


def _time_example(text: str, x: float) -> str:
    """``5us or 5ms``; a number below one read as seconds too (``0.0001s or 100us``)."""
    if 0 < abs(x) < 1:
        return f"{text}s or {x * 1e6:g}us"
    return f"{text}us or {text}ms"


def _rate_example(text: str, x: float) -> str:
    """``10Gbps``; a number of a thousand or more read as bit/s (``1e9bps or 1Gbps``)."""
    if abs(x) >= 1e3:
        return f"{text}bps or {x / 1e9:g}Gbps"
    return f"{text}Gbps"


def _parse_unit(parse, text: str, field: str) -> float:
    """``parse(text, field)``, with a value its unit takes beyond the float range read as
    +-inf: the caller's range check then names the allowed range."""
    from qcnmodel.units import ScaleOverflow

    try:
        return parse(text, field)
    except ScaleOverflow as exc:
        return exc.sign * math.inf


def _unit_time(value, field: str, example=_time_example) -> float:
    from qcnmodel.units import parse_time

    text = _with_unit(value, field, example)
    x = _parse_unit(parse_time, text, field)
    if x < 0:
        raise ValueError(f"{field}: a time cannot be negative, got {text!r}")
    return x


def cli_time(value, field: str) -> float:
    """A time typed on the command line: a number with a unit (``5us``), finite, >= 0 and at
    most ``cli.max_time`` seconds. A bare number is refused (``5`` would be five seconds)."""
    x = _unit_time(value, field, seconds_example)
    top = _limit("cli.max_time")
    if x > top:
        raise ValueError(
            f"{field}: {value!r} is above the largest time accepted, {top:g} s "
            "(qcnmodel.config.defaults['cli.max_time'])"
        )
    return x


def rtt_value(value, field: str = "rtt") -> float:
    """A loop delay: a time with a unit, > 0 and at most ``cli.max_rtt`` seconds (the
    frequency grids of the analysis scale with the delay, so the bound also bounds their
    memory)."""
    from qcnmodel.units import parse_time

    x = _parse_unit(parse_time, _with_unit(value, field, _time_example), field)
    top = _limit("cli.max_rtt")
    if not 0 < x <= top:
        raise ValueError(
            f"{field}: {value!r} is outside the loop delays analysed, (0, {top:g}] s "
            "(qcnmodel.config.defaults['cli.max_rtt'])"
        )
    return x


def cli_rate(value, field: str) -> float:
    """A rate typed on the command line: a number with a unit (``10Gbps``), > 0 and at most
    ``cli.max_rate`` bit/s. A bare number is refused."""
    from qcnmodel.units import parse_rate

    text = _with_unit(value, field, _rate_example)
    x = _parse_unit(parse_rate, text, field)
    top = _limit("cli.max_rate")
    if not (0 < x <= top):
        raise ValueError(
            f"{field}: must be in (0, {top:g}] bit/s, got {text!r} "
            "(qcnmodel.config.defaults['cli.max_rate'])"
        )
    return x


def flows_value(value, field: str = "flows") -> int:
    """A flow count: a whole number in [1, ``cli.max_flows``]; an empty value, or text that is
    no number, is refused with that range (not with the fractions a plain number may be)."""
    from qcnmodel.units import parse_number

    top = _limit("cli.max_flows")
    msg = (f"{field}: expected a whole number in [1, {top}], got {value!r} "
           "(qcnmodel.config.defaults['cli.max_flows'])")  # fmt: skip
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"{field}: empty value; give a flow count, a whole number in "
                         f"[1, {top}], e.g. 10")  # fmt: skip
    try:
        n = parse_number(value, field)
    except ValueError as exc:
        if "cannot parse" in str(exc) or "boolean" in str(exc):  # no number: the count's range
            raise ValueError(msg) from None
        raise  # a number, but not finite or beyond a float: said as such
    if not (1 <= n <= top) or n != int(n):
        raise ValueError(msg)
    return int(n)


def seed_value(value, field: str = "seed") -> int:
    """A random seed: a whole number in [0, 2**63 - 1] (the kernel's 64-bit signed seed)."""
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(
            f"{field}: expected a whole number in [0, 2^63-1], got {value!r}"
        ) from None
    if not (0 <= n <= 2**63 - 1):
        raise ValueError(f"{field}: expected a whole number in [0, 2^63-1], got {value!r}")
    return n


def positive_int(value, field: str) -> int:
    """A whole number >= 1."""
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{field}: expected a whole number >= 1, got {value!r}") from None
    if n < 1:
        raise ValueError(f"{field}: expected a whole number >= 1, got {value!r}")
    return n


#: the operating-point settings a ``--set`` or ``--grid`` may name, each with the check of its
#: own flag: ``--set rtt=5`` is refused as ``--rtt 5`` is
OPERATING_POINT = {"rtt": rtt_value, "n_flows": flows_value, "capacity": cli_rate}


def operating_value(key: str, value, field: str | None = None):
    """``value`` of the operating-point setting ``key`` (``rtt``, ``n_flows``, ``capacity``;
    a ``model.`` prefix allowed) through its flag's check, errors naming ``field`` (default
    ``key``), or ``value`` unchanged for any other key (a parameter field, checked by its
    parameter set)."""
    check = OPERATING_POINT.get(key.removeprefix("model."))
    return value if check is None else check(value, field or key)


def check_operating_values(settings: dict) -> dict:
    """``settings`` (``--set``) with each operating-point value checked as its flag is
    (:func:`operating_value`): a bare number, or a value beyond the command line's limits,
    is refused naming the key and the allowed range."""
    return {key: operating_value(key, value) for key, value in settings.items()}


def split_list(text, field: str) -> list[str]:
    """The items of a comma-separated list, stripped; an empty item (``a,,b``, a trailing
    comma) is refused naming ``field``: it would otherwise be dropped silently."""
    items = [item.strip() for item in str(text).split(",")]
    if not all(items):
        raise ValueError(f"{field}: empty item in {str(text)!r}; give the values separated by "
                         "single commas")  # fmt: skip
    return items


def free_cores() -> int:
    """The cores not busy (:func:`qcnmodel.studies.sweep.free_cores`)."""
    from qcnmodel.studies.sweep import free_cores as free

    return free()


#: ``--jobs`` at most this many times the machine's cores: beyond, the worker processes only
#: compete for the cores, each holding its own memory
JOBS_PER_CORE = 4


def max_jobs() -> int:
    """The largest ``--jobs``: :data:`JOBS_PER_CORE` times the machine's cores."""
    return JOBS_PER_CORE * max(1, os.cpu_count() or 1)


def jobs_value(value, field: str = "jobs") -> int:
    """``--jobs``: a whole number in [1, :func:`max_jobs`], or -1 for :func:`free_cores`."""
    top = max_jobs()
    msg = f"{field}: expected a whole number in [1, {top}] ({JOBS_PER_CORE} x the cores) or -1"
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{msg}, got {value!r}") from None
    if n == -1:
        return free_cores()
    if not 1 <= n <= top:
        raise ValueError(f"{msg}, got {value!r}")
    return n


def check_out(path, suffixes=None, field: str = "out", directory: bool = False) -> Path:
    """Check an output path before any work: the suffix (``suffixes``, when given), the folder
    (it must exist and be writable) and the target (not an existing directory, unless
    ``directory``; then not an existing file)."""
    from qcnmodel._errors import unknown_name

    if not str(path).strip():
        raise ValueError(f"{field}: empty path; give a {'directory' if directory else 'file'} name")
    p = Path(path)
    if suffixes is not None and p.suffix not in suffixes:
        raise unknown_name(field, "file type", p.suffix or "(none)", suffixes, sort=False)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        if parent.exists() or _names_a_file(parent):
            raise ValueError(f"{field}: {str(parent)!r} is not a folder (a file, or a path "
                             "through one)")  # fmt: skip
        raise ValueError(f"{field}: folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{field}: folder {str(parent)!r} is not writable")
    if directory:
        if p.exists() and not p.is_dir():
            raise ValueError(f"{field}: {str(p)!r} exists and is not a directory")
        if p.is_dir() and not os.access(p, os.W_OK | os.X_OK):
            raise ValueError(f"{field}: directory {str(p)!r} is not writable")
    elif p.is_dir() and p.suffix != ".zarr":
        raise ValueError(f"{field}: {str(p)!r} is an existing directory; give a file name")
    _probe_write(p if directory and p.is_dir() else parent, field)
    return p


def _probe_write(folder: Path, field: str) -> None:
    """Create and remove a file in ``folder``: the permission bits do not tell everything (a
    read-only file system, a special folder such as /proc, a user allowed everything)."""
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix=".qcnmodel-probe-", dir=folder)
    except OSError as exc:
        raise ValueError(
            f"{field}: cannot write in folder {str(folder)!r} ({exc.strerror or exc})"
        ) from None
    os.close(fd)
    os.unlink(name)


def _names_a_file(path: Path) -> bool:
    """``path`` or one of its parents is an existing non-folder (``afile/sub``)."""
    return any(q.exists() and not q.is_dir() for q in (path, *path.parents))


def progress_on(args, default_tty: bool = True) -> bool:
    """Progress bar wanted: not ``--quiet``, and (``default_tty``) stderr is a terminal or
    ``--progress`` was given."""
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", False):
        return True
    return sys.stderr.isatty() if default_tty else True


@contextlib.contextmanager
def trajectory_progress(on: bool):
    """Within the block, a trajectory critical-RTT search counts its runs on stderr when
    ``on`` (``config.defaults["analysis.trajectory_progress"]``, restored after)."""
    from qcnmodel import config

    key = "analysis.trajectory_progress"
    before = config.defaults[key]
    config.defaults[key] = bool(on)
    try:
        yield
    finally:
        config.defaults[key] = before


def qcn_params(args):
    """The QCN parameters the arguments name: ``--params FILE`` loaded, else ``--preset``
    (a name, or None for the default)."""
    if getattr(args, "params", None):
        return load_params_file(args.params)
    return args.preset


def note_unread_params(args, protocols) -> None:
    """Say on stderr when ``--params`` or ``--preset`` gives a QCN parameter set that some of
    ``protocols`` do not read (:func:`qcnmodel.sim.protocols.registry.unread_params_note`)."""
    from qcnmodel.sim.protocols.registry import unread_params_note

    if getattr(args, "params", None):
        source = f"--params {args.params}"
    elif getattr(args, "preset", None):
        source = f"--preset {args.preset}"
    else:
        return
    note = unread_params_note(protocols, source)
    if note is not None:
        print(f"qcnmodel: {note}", file=sys.stderr)


#: flags naming a file, folder or address: an empty value is refused, not taken as "unset"
PATH_FLAGS = ("out", "params", "params_file", "topology", "figure", "figures", "checkpoint",
              "scheduler")  # fmt: skip


def check_no_empty_paths(args) -> None:
    """Refuse a path flag given as an empty string (``--out ""``): it would otherwise mean
    "not given" (no output) or the current folder, silently; and an empty ``--preset``,
    which would mean the default preset."""
    for name in PATH_FLAGS:
        value = getattr(args, name, None)
        if isinstance(value, str) and not value.strip():
            flag = "PARAMS.toml" if name == "params_file" else name
            raise ValueError(f"{flag}: empty value; give one or leave the flag out")
    preset = getattr(args, "preset", None)
    if isinstance(preset, str) and not preset.strip():
        from qcnmodel.params import PRESETS

        raise ValueError(f"preset: empty value; give a preset name or leave the flag out "
                         f"(allowed: {', '.join(PRESETS)}; ECM models: seed004, "
                         "seed000)")  # fmt: skip


def check_input_file(path, field: str, limit: int | None = None) -> None:
    """Refuse an input file that is not a regular file (a device such as ``/dev/zero`` would
    be read without end, a named pipe would wait for a writer) or a regular file above
    ``limit`` bytes, naming the field; a missing file and a directory are left to the
    reader's own message."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        raise ValueError(f"{field}: {str(path)!r} is a device, not a file")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        kind = "named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else "special file"
        raise ValueError(f"{field}: {str(path)!r} is a {kind}, not a regular file")
    if limit is not None and stat.S_ISREG(st.st_mode) and st.st_size > limit:
        raise ValueError(f"{field}: {str(path)!r} is {st.st_size} bytes, above the {limit} "
                         "read at most")  # fmt: skip


def load_params_file(path, field: str = "params"):
    """Load a QCN parameter TOML (with its ``[ranges]`` table allowed); a directory, a missing
    file, a named pipe or device, or a file that is not UTF-8 text is a ValueError naming
    ``field`` and the path."""
    from qcnmodel.params import load_params

    check_input_file(path, field)
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{field}: {str(path)!r} is a directory; give a TOML parameter file "
                         "(see examples/)")  # fmt: skip
    if not p.exists():
        raise ValueError(f"{field}: file {str(path)!r} not found")
    return load_params(p, extra_tables=("ranges",))  # a non-UTF-8 file: names the file


def print_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()
