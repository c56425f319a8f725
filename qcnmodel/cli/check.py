"""``qcnmodel check PARAMS.toml``: is this parameter set stable over the operating ranges?

Validates the file (errors name the field and its line) and opens with one verdict paragraph:
stable, marginal or unstable over the RTT and flow ranges, the model that produced it (default
the QCN packet-fidelity fluid model), the worst point with its phase margin, the binding
constraint and the one [qcn] field change that makes it stable (recomputed over the ranges), or
that none within the searched intervals does. Then: fields without effect in the file's mode,
worst-case margins, the critical RTT per N. With --confirm the packet simulator runs, in
parallel (--jobs), at 0.8x and 1.25x the model's critical RTT for the worst N (the smallest
critical RTT over the ranges) and at the worst point; each point's model and packet verdicts
are printed with agree or DISAGREE (or inconclusive, with the reason: a run too short for
the point's mode, or a queue that shows no regime, still draining its start-up backlog or
idle), and the queue traces are drawn (--figure). The simulator's congestion point serves at
most the sources' line rate, so --confirm refuses a faster port (--rate) before the analysis.

Ranges come from the command line, else from the file's ``[ranges]`` table
(``rtt = "2us..1ms"``, ``flows = "1..100"``, ``pm_threshold = 30``), else those defaults.

Exit status: 0 stable (and not contradicted by --confirm), 1 unstable, marginal or
contradicted, 2 bad input.

Run time, 2 cores with warm numba caches: 22 s idle, more on a busy machine (a first run
compiles the model's kernels and says so on stderr, one line each).
--confirm adds the packet runs: where the model's trajectories judge a point, as many runs
as its verdict takes the majority of (9) and as long (0.6 s, longer where the loop is
slow); elsewhere one run long enough for its first half to hold three time constants of the
slowest point's mode (at least 0.4 s, at most 10 s); a DURATION sets the length of every
run. About 3 s at the 802.1Qau example's three points.
"""

from __future__ import annotations

import argparse
import sys

from qcnmodel.cli.common import (
    add_model_options,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_range_options,
    add_rate_option,
    add_set_option,
)

RANGE_KEYS = {"rtt", "flows", "pm_threshold", "capacity"}

#: the models ``check`` judges a QCN parameter set with (``studies.check.CHECK_MODELS``, kept
#: here so that ``qcnmodel --help`` does not import the analysis)
CHECK_MODELS = ("qcn", "fopdt")


def register(subparsers) -> None:
    """Add the ``check`` sub-command."""
    p = subparsers.add_parser(
        "check",
        help="check a parameter file: worst-case margins, verdict, recommendations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "params_file",
        metavar="PARAMS.toml",
        nargs="?",
        default=None,
        help="parameter file (see examples/); or --params FILE / --preset NAME",
    )
    add_params_options(p, "parameter preset instead of a file (e.g. 802.1qau)")
    add_range_options(p, "RTT range lo..hi or one value, with units; lo..hi:n for n "
                      "log-spaced points (default 2us..1ms:60)",
                      "flow-count range lo..hi or one value; lo..hi:n for n log-spaced "
                      "counts (default 1..100:12)")  # fmt: skip
    p.add_argument("--pm-threshold", default=None, metavar="DEG",
                   help="phase margin in degrees for 'stable', in [0, 90): 30 or 30deg "
                   "(default 30)")  # fmt: skip
    add_rate_option(p)
    add_model_options(p, choices=CHECK_MODELS,
                      more="; other protocols' models: `qcnmodel margins` or `sweep`")  # fmt: skip
    add_set_option(p, "override a parameter-set field (repeatable)")
    p.add_argument("--no-recommend", action="store_true", help="skip the W/Ps/Gd search")
    add_progress_options(p)
    p.add_argument("--jobs", default=None, metavar="N",
                   help="processes for the critical RTTs of the model's trajectories (default: "
                   "the cores this process may use) and for the --confirm runs (default: the "
                   "cores actually free, at most the number of points); -1 = the "
                   "default")  # fmt: skip
    add_out_option(p, None, "also write the JSON result to this file (.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--confirm", nargs="?", const="auto", default=None, metavar="DURATION",
                   help="yes (as a bare --confirm), no, or a run length: confirm the verdict "
                   "with the packet simulator, in parallel, at 0.8x "
                   "and 1.25x the critical RTT of the worst N and at the worst point (run "
                   "length, default auto: the model's own 9 runs (0.6 s, longer for a slow "
                   "loop) where its trajectories judge, else three time constants of the "
                   "slowest mode settle in the first half, 0.4-10 s); exit 1 if the packets "
                   "contradict it")  # fmt: skip
    p.add_argument("--figure", default=None, metavar="PATH",
                   help="with --confirm: where to draw the hot-queue traces (.png, .svg or "
                   ".pdf; default NAME-confirm.png in the current folder, NAME the file's "
                   "or preset's name)")  # fmt: skip
    p.set_defaults(func=run)


#: the name a message gives each ``[ranges]`` field when its value comes from the command line
#: (its flag); a value from the file is named by the field itself
FLAG_OF = {"rtt": "rtt", "flows": "flows", "pm_threshold": "pm-threshold", "capacity": "rate"}

#: what each ``[ranges]`` field holds, as a message asks for it
_WANTED = {
    "rtt": "a loop delay with a unit or a range lo..hi, e.g. 100us or 2us..1ms",
    "flows": "a flow count or a range lo..hi, e.g. 10 or 1..100",
    "pm_threshold": "a phase margin in degrees, in [0, 90), e.g. 30 or 30deg",
    "capacity": "one rate with a unit, e.g. 5Gbps",
}


def parse_ranges(rtt_text, flows_text, pm_text=None, table=None, path=None, text=None,
                 rate_text=None):  # fmt: skip
    """:class:`~qcnmodel.studies.check.CheckRanges` from command-line values, else the
    ``[ranges]`` table of a parameter file (``table``, its ``path`` and ``text`` for line
    numbers), else the defaults. ``rtt`` and ``flows`` are one value or ``lo..hi``;
    ``capacity`` (``--rate``) one rate.

    A value of the table is checked even where the command line replaces it (the file is
    judged as it is written), and a command-line value as the table's is: both are refused
    for the same things, a message naming the file's field (``pm_threshold``, with the file
    and line) or the flag (``pm-threshold``)."""
    from qcnmodel._errors import unknown_name
    from qcnmodel.studies.check import CheckRanges

    table = {} if table is None else table
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [ranges] must be a table of rtt, flows, pm_threshold and "
                         f"capacity, got {table!r}")  # fmt: skip
    for key in table:
        if key not in RANGE_KEYS:
            line = _line(text, key)
            raise unknown_name(f"{path}, line {line}" if line else str(path), "[ranges] field",
                               key, RANGE_KEYS)  # fmt: skip
    given = {}
    cli = {"rtt": rtt_text, "flows": flows_text, "pm_threshold": pm_text, "capacity": rate_text}
    for key in FLAG_OF:
        if key in table:
            try:
                from_file = range_value(key, table[key], key)
            except ValueError as exc:
                line = _line(text, key)
                where = f"{path}, line {line}: " if line else f"{path}: " if path else ""
                raise ValueError(where + str(exc)) from None
            if cli[key] is None:
                given.update(from_file)
        if cli[key] is not None:
            given.update(range_value(key, cli[key], FLAG_OF[key]))
    return CheckRanges(**given)


def range_value(key: str, value, field: str) -> dict:
    """The :class:`~qcnmodel.studies.check.CheckRanges` settings of one ``[ranges]`` field
    ``key`` (with the grid's point count of ``lo..hi:n``), checked within its own range.

    Parameters
    ----------
    key : {"rtt", "flows", "pm_threshold", "capacity"}
        The field.
    value : str, int or float
        The command line's or the table's value.
    field : str
        The name the errors give (the flag, or the file's field).

    Raises
    ------
    ValueError
        Naming ``field`` and the allowed values: a value of another type (a TOML boolean,
        array or table), an empty one, a range where one value is expected, a value that
        does not parse or lies outside its range, ends in the wrong order.
    """
    from qcnmodel.cli.common import cli_rate, flows_value, rtt_value
    from qcnmodel.units import split_range

    wanted = _WANTED[key]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        kind = {bool: "boolean", list: "list", dict: "table"}.get(type(value), type(value).__name__)
        raise ValueError(f"{field}: expected {wanted}; got a {kind}, {value!r}")
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"{field}: empty value; give {wanted}")
    if key in ("capacity", "pm_threshold"):
        if split_range(value, field) is not None:
            raise ValueError(f"{field}: expected {wanted}, not a range; got {value!r}")
        if key == "capacity":
            return {key: cli_rate(value, field)}
        deg = degrees_value(value, field)
        if not 0 <= deg < 90:
            raise ValueError(f"{field}: must be in [0, 90) degrees, got {value!r}")
        return {key: deg}
    out = {}
    body, count = grid_count(value, field)
    if count is not None:
        out[f"n_{key}"] = count
    ends = split_range(body, field) or (body, body)
    parse = rtt_value if key == "rtt" else flows_value
    lo, hi = parse(ends[0], field), parse(ends[1], field)
    if not lo <= hi:
        floor = "1 <= lo" if key == "flows" else "0 < lo"
        raise ValueError(f"{field}: need {floor} <= hi (the smaller end first), got {value!r}")
    out[key] = (lo, hi)
    return out


#: the most points ``lo..hi:n`` may ask of check's or the report's RTT or flow grid
MAX_GRID_POINTS = 1000


def grid_count(value, field: str) -> tuple[str, int | None]:
    """Split a range with a point count, ``lo..hi:n`` or ``lo..hi:n:log``, into ``lo..hi``
    and ``n``; ``n`` is None for a plain range or one value.

    ``check`` and ``report`` space their grids logarithmically, so ``:log`` may be written
    (as ``sweep --grid`` takes it) and ``:lin`` is refused. ``n`` is a whole number in
    [2, :data:`MAX_GRID_POINTS`]: one point would be ``lo`` alone, and a verdict over the range
    would cover none of it but ``lo`` (for flows, the rounded log grid keeps its distinct
    counts).

    Raises
    ------
    ValueError
        Naming ``field``, the form and the allowed count.
    """
    text = str(value).strip()
    if ":" not in text:
        return text, None
    body, *opts = (s.strip() for s in text.split(":"))
    form = "lo..hi or lo..hi:n[:log]"
    if ".." not in body:
        raise ValueError(f"{field}: a point count ':n' follows a range ({form}), got {text!r}")
    if len(opts) > 2 or (len(opts) == 2 and opts[1].lower() != "log"):
        raise ValueError(f"{field}: check and report space their grids logarithmically; give "
                         f"{form}, got {text!r}")  # fmt: skip
    try:
        n = int(opts[0])
    except ValueError:
        raise ValueError(f"{field}: the number of points must be a whole number in "
                         f"[2, {MAX_GRID_POINTS}], got {opts[0]!r} in {text!r}"
                         ) from None  # fmt: skip
    if n == 1:  # one point is lo alone: a verdict "over lo..hi" would not cover the range
        raise ValueError(f"{field}: a range lo..hi:n needs at least 2 points (:1 would check lo "
                         f"alone); give n >= 2, or the one value without '..', got "
                         f"{text!r}")  # fmt: skip
    if not 2 <= n <= MAX_GRID_POINTS:
        raise ValueError(f"{field}: the number of points must be in [2, {MAX_GRID_POINTS}], "
                         f"got {n} in {text!r}")  # fmt: skip
    return body, n


#: the units an angle may be written with (case-insensitive); a bare number is degrees too
DEGREE_UNITS = ("degrees", "degree", "deg", "°")


def degrees_value(value, field: str = "pm-threshold") -> float:
    """A phase margin in degrees: a number (``30``), or one with a degree unit (``30deg``,
    ``30°``).

    Parameters
    ----------
    value : float, int or str
        The command line's or the ``[ranges]`` table's value.
    field : str
        The name the errors give.

    Returns
    -------
    float
        Degrees (the range, [0, 90), is checked by the caller).

    Raises
    ------
    ValueError
        For a percentage (``50%``: a percent is not a unit of angle, and reading it as the
        fraction 0.5 would mean half a degree) or text that is not such a number, naming
        ``field`` and the unit.
    """
    from qcnmodel.units import parse_number

    text = value
    if isinstance(value, str):
        text = value.strip()
        unit = next((u for u in DEGREE_UNITS if text.lower().endswith(u)), None)
        if unit is not None:
            text = text[: -len(unit)].strip()
        if "%" in text:
            raise ValueError(f"{field}: a phase margin is an angle in degrees, not a percentage; "
                             f"got {value!r} (give e.g. 30 or 30deg, in [0, 90))")  # fmt: skip
    try:
        return parse_number(text, field)
    except ValueError as exc:
        if "cannot parse" not in str(exc):  # a number, but not finite or out of float range
            raise ValueError(f"{exc} (a phase margin in degrees, in [0, 90))") from None
        raise ValueError(f"{field}: expected a phase margin in degrees, e.g. 30 or 30deg, in "
                         f"[0, 90); got {value!r}") from None  # fmt: skip


def _line(text, key):
    from qcnmodel.params.qcn import _line_of

    return _line_of(text, key) if text else None


def file_ranges(args):
    """The ``[ranges]`` table of ``args``' parameter file, with the file's path and text."""
    from pathlib import Path

    from qcnmodel.params.qcn import _read_bounded, loads_toml

    name = _file(args)
    if not name:
        return {}, None, None
    path = Path(name)
    text = _read_bounded(path).decode("utf-8-sig")  # bounded; a BOM is dropped
    return loads_toml(text, path).get("ranges", {}), path, text


def _file(args):
    return getattr(args, "params_file", None) or getattr(args, "params", None)


def _ranges(args):
    table, path, text = file_ranges(args)
    return parse_ranges(args.rtt, args.flows, args.pm_threshold, table, path, text,
                        getattr(args, "rate", None))  # fmt: skip


def _params(args):
    from qcnmodel.cli.common import load_params_file, parse_set
    from qcnmodel.params import QCNParams

    if args.params_file and args.params:
        raise ValueError("params: give the file once (PARAMS.toml or --params FILE)")
    if args.params_file and args.preset:
        raise ValueError("preset: give a parameter file or a preset, not both")
    name = _file(args)
    field = "PARAMS.toml" if args.params_file else "params"
    params = (load_params_file(name, field) if name
              else QCNParams.preset(args.preset or "802.1qau"))  # fmt: skip
    sets = parse_set(args.set)
    flags = {"rtt": "--rtt", "n_flows": "--flows", "flows": "--flows", "capacity": "--rate",
             "rate": "--rate"}  # fmt: skip
    for key in sets:
        if key in flags:  # an operating range, not a parameter of the set
            raise ValueError(f"{key}: check judges a range of operating points; give it with "
                             f"{flags[key]} (or the file's [ranges] table), not --set")  # fmt: skip
    return params.replace(**sets) if sets else params


def run(args) -> int:
    """Run ``qcnmodel check``; exit 0 stable, 1 unstable/marginal, 2 bad input."""
    import dataclasses

    from qcnmodel.cli.common import (
        _unit_time,
        check_out,
        jobs_value,
        print_json,
        seconds_example,
    )
    from qcnmodel.studies.check import check_params, rtt_floor
    from qcnmodel.studies.check_text import render
    from qcnmodel.studies.confirm import check_duration, check_rate

    if args.out:
        check_out(args.out, (".json",))
    params = _params(args)
    ranges = _ranges(args)
    label = _file(args) or f"preset {args.preset or '802.1qau'}"
    confirm = getattr(args, "confirm", None)
    if confirm is not None and confirm.strip().lower() in ("yes", "no"):  # report's words
        confirm = None if confirm.strip().lower() == "no" else "auto"
    duration = (None if confirm in (None, "auto")  # its own range, (0, 10] s, decides
                else check_duration(_unit_time(confirm, "confirm", seconds_example)))  # fmt: skip
    if confirm is not None and ranges.capacity is not None:  # refused before the analysis
        given = getattr(args, "rate", None) is not None
        check_rate(params, ranges.capacity, "rate" if given else "capacity")
    jobs = None if args.jobs is None else jobs_value(args.jobs)
    figure = _figure(args) if confirm is not None else None
    if args.figure is not None and confirm is None:
        raise ValueError("figure: the traces come from --confirm; add --confirm")
    if not getattr(args, "quiet", False):
        workload_note(ranges.flow_grid(), jobs)
    bar = _bar(params, ranges, args)
    result = check_params(params, ranges, model=args.model, recommend=not args.no_recommend,
                          variant=args.variant, progress=bar, confirm=confirm is not None,
                          confirm_duration=duration, confirm_jobs=jobs, jobs=jobs,
                          announce=not getattr(args, "quiet", False))  # fmt: skip
    if bar is not None:
        bar.close()
    if figure is not None:
        result.plot_confirmation(figure, params.qeq)
        result = dataclasses.replace(
            result, confirmation={**result.confirmation, "figure": str(figure)}
        )
    ranges = rtt_floor(ranges, params)[0]  # the range analysed (check_params's note says so)
    out = {"file": label, "valid": True, "model": args.model,
           "rtt_range_s": list(ranges.rtt), "flows_range": list(ranges.flows),
           "rtt_points": int(ranges.rtt_grid().size), "flow_counts": ranges.flow_grid().tolist(),
           "capacity_bps": ranges.capacity}  # fmt: skip
    out.update(result.to_dict())
    _write_json(args.out, out)  # --out holds the same object as --json, text or not
    if args.json:
        print_json(out)
        return result.exit_code
    print(render(result, ranges, label, figure=figure))
    sys.stdout.flush()
    return result.exit_code


def _figure(args):
    """The checked path of the confirmation figure (``--figure``, else NAME-confirm.png)."""
    from pathlib import Path

    from qcnmodel.cli.common import check_out

    path = args.figure
    if path is None:
        name = _file(args)
        stem = Path(name).stem if name else (args.preset or "802.1qau")
        path = f"{stem}-confirm.png"
    return check_out(path, (".png", ".svg", ".pdf"), field="figure")


def _write_json(path, obj) -> None:
    if not path:
        return
    import json

    from qcnmodel._io import atomic_path, to_jsonable

    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(to_jsonable(obj), indent=2) + "\n")


#: flow counts judged by trajectories past which check and report say how long they may take
NOTE_FLOW_COUNTS = 24


def workload_note(flow_counts, jobs=None) -> str | None:
    """One line on stderr, before a long analysis starts, when more than
    :data:`NOTE_FLOW_COUNTS` flow counts may be judged by the model's trajectories (those up
    to ``config.defaults["analysis.trajectory_max_flows"]``): each is a search of runs, about
    5-60 s of CPU (10 of the 802.1Qau defaults' flow counts take about a minute on 2 cores),
    so a grid of hundreds takes hours. Returns the line (None when none is due)."""
    from qcnmodel import config
    from qcnmodel.cli.common import free_cores

    cap = config.defaults["analysis.trajectory_max_flows"]
    n = sum(1 for k in flow_counts if k <= cap)
    if n <= NOTE_FLOW_COUNTS:
        return None
    workers = max(1, int(jobs) if jobs not in (None, -1) else free_cores())
    lo, hi = n * 5.0 / workers / 60.0, n * 60.0 / workers / 60.0
    plural = "s" if workers > 1 else ""
    line = (f"qcnmodel: {n} flow counts (up to N = {cap}) are judged by the model's "
            f"trajectories, a search of about 5-60 s of CPU each: roughly {lo:.0f}-{hi:.0f} "
            f"minutes on {workers} worker{plural} (fewer counts: --flows lo..hi:n)")  # fmt: skip
    print(line, file=sys.stderr, flush=True)
    return line


def _bar(params, ranges, args):
    """A progress bar on stderr when it is a terminal (None otherwise)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None
    from tqdm.auto import tqdm

    from qcnmodel.studies.check import check_steps

    total = check_steps(params, ranges, recommend=not args.no_recommend)
    return tqdm(total=total, desc="check", unit="step", file=sys.stderr, leave=False)
