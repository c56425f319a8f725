"""``qcnmodel sweep``: margins or simulations over a parameter grid, in parallel, resumable.

Examples::

    qcnmodel sweep --model qcn --grid rtt=2us..1ms:40:log --grid n_flows=1,10,100 --out qcn.nc
    qcnmodel sweep --model qcn --grid w=2,8,32 --grid ps=1%,2%,5%,10% --grid rtt=10us..1ms:20:log
    qcnmodel sweep --scenario og-hotspot --grid rtt=5us,50us,500us --grid seed=0,1,2 \\
        --duration 0.3s --jobs 2 --out og.nc
    qcnmodel sweep ... --scheduler tcp://10.0.0.5:8786      # on a dask.distributed cluster

Grid specs are ``name=v1,v2,...`` or ``name=lo..hi:n[:log]`` (lo <= hi; no empty list item),
with unit strings; ``--rtt`` and ``--flows`` are shorthands for ``--grid rtt=...`` and
``--grid n_flows=...`` (``flows`` is accepted as a grid name too). The operating point's
``rtt``, ``n_flows`` and ``capacity``, in a grid or a ``--set``, pass the checks of their flags
(a unit; the limits ``cli.*``). A name both swept and fixed by ``--set`` is refused.
Simulator-only flags (``--protocol``, ``--duration``, a ``seed`` grid) are refused on a
``--model`` sweep. Analytical grids take ``rtt``, ``n_flows``, ``capacity``, ``ps`` and any
parameter-set field (``w``, ``gd``, ``qeq``, ...); simulator grids take any scenario parameter
or QCN field and ``seed``.
``--preset NAME`` or ``--params FILE`` (a QCN parameter TOML, as ``qcnmodel check`` reads)
chooses the parameter set, ``--variant`` a named configuration of the ``--model``.
A ``--model`` sweep's file records the operating point it does not sweep in its attributes
(``n_flows``, ``rtt_s``, ``capacity_bps``: the model's defaults or ``--set``), beside the grid
and the fixed arguments.
Finished points are recorded in ``--checkpoint`` (default ``OUT.partial/``): rerunning the
same command after an interruption continues where it stopped. Once ``OUT`` is written the
checkpoint is deleted.
Before a ``--model`` sweep starts, its run time is estimated from points timed in this process
(the first, then the middle and the last when the grid is long) over the ``--jobs`` workers:
above ``--max-time`` (default a day, 1440min) the sweep is refused naming the flag, above a
minute the estimate is said on stderr. The points' times differ over a grid (the QCN model's
trajectory searches most), so the estimate is right to within a few times.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter

from qcnmodel.cli.common import (
    add_jobs_option,
    add_model_options,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_range_options,
    add_set_option,
    check_operating_values,
    cli_time,
    note_unread_params,
    parse_set,
)


def register(subparsers) -> None:
    """Add the ``sweep`` sub-command."""
    p = subparsers.add_parser(
        "sweep",
        help="parallel, resumable parameter sweeps (analytical models or the simulator)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    add_model_options(p, default=None, group=what)
    what.add_argument("--scenario", help="simulator scenario (see `qcnmodel scenarios`)")
    p.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="a swept parameter (repeat for more dimensions): numbers with units, a range "
        "lo..hi:n[:log], or a list; switches (hai=true,false) and choices "
        "(quantiser=floor63,round63) as lists",
    )
    add_range_options(p, "shorthand for --grid rtt=VALUES (one value, a list, or lo..hi:n[:log])",
                      "shorthand for --grid n_flows=VALUES (the same forms)")  # fmt: skip
    add_set_option(p, "fixed override (repeatable)")
    add_params_options(p, "parameter preset (QCN; ECM models: seed004 or seed000)")
    p.add_argument("--protocol", default=None, help="simulator protocol (default qcn)")
    p.add_argument("--duration", default=None, help="simulated time per run, e.g. 0.5s")
    add_out_option(p, "sweep.nc", "output file: .nc (netCDF) or .zarr (default sweep.nc)")
    add_jobs_option(p, "worker processes (forked, warm)")
    p.add_argument("--scheduler", default=None, help="dask.distributed scheduler address")
    p.add_argument("--max-time", default=None, metavar="DURATION",
                   help="refuse a --model sweep whose estimated run time (timed on sample "
                   "points before the sweep) is longer, e.g. 600s or 2880min (default "
                   f"{DEFAULT_MAX_TIME}); an estimate above a minute is said on "
                   "stderr")  # fmt: skip
    p.add_argument("--checkpoint", default=None, help="checkpoint directory (OUT.partial)")
    add_progress_options(p)
    p.set_defaults(func=run)


#: the default ``--max-time``: a sweep estimated to run longer is refused
DEFAULT_MAX_TIME = "1440min"
#: an estimated run time above this (seconds) is said on stderr
ANNOUNCE_ABOVE_S = 60.0

#: grid names accepted as aliases, as the other commands spell them
GRID_ALIASES = {"flows": "n_flows"}
#: flags that only a simulator sweep reads
SIM_ONLY = ("protocol", "duration")


def _grid(args) -> dict:
    from qcnmodel.studies.points import value_parser
    from qcnmodel.studies.sweep import check_grid_size, parse_grid_spec

    specs = list(args.grid)
    if args.rtt is not None:
        specs.append(f"rtt={args.rtt}")
    if args.flows is not None:
        specs.append(f"n_flows={args.flows}")
    if not specs:
        raise ValueError("grid: give at least one --grid NAME=VALUES (or --rtt / --flows)")
    sets = parse_set(args.set)
    grid = {}
    for spec in specs:
        if "=" in spec:
            name, rhs = spec.split("=", 1)
            if not name.strip():
                raise ValueError(f"--grid: empty name in {spec!r}; expected NAME=VALUES")
            name = GRID_ALIASES.get(name.strip(), name.strip())
            spec = f"{name}={rhs}"
        name, rhs = (part.strip() for part in spec.split("=", 1)) if "=" in spec else (spec, "")
        if ".." in rhs and rhs.count(":") > 2:
            raise ValueError(f"--grid {name}: expected lo..hi:n[:log], got {rhs!r}")
        _check_items(name, rhs)
        name, values = parse_grid_spec(spec, value_parser(name, args.scenario))
        if ".." in rhs and values[0] > values[-1]:
            raise ValueError(f"--grid {name}: a range lo..hi needs lo <= hi, got {rhs!r} (the "
                             "points run from lo up to hi)")  # fmt: skip
        if name in grid:
            raise ValueError(f"--grid {name}: given twice")
        if name in sets or f"model.{name}" in sets:
            raise ValueError(f"{name}: given twice, by --grid {name} and by --set; give it "
                             "once (a swept value cannot also be fixed)")  # fmt: skip
        repeated = [v for v, k in Counter(values).items() if k > 1]
        if repeated:  # a coordinate given twice: two points with one label
            raise ValueError(f"--grid {name}: {repeated[0]!r} appears more than once; each "
                             "value of a grid must be distinct")  # fmt: skip
        if args.model:
            _check_operating_point(name, values)
        grid[name] = values
    check_grid_size(grid)  # from the axes' lengths, before any value or point is checked
    return grid


def _check_items(name: str, rhs: str) -> None:
    """The typed values of a grid ``name=rhs``, before they are read: no empty item in a
    list, and an operating-point setting (``rtt``, ``n_flows``, ``capacity``) through its
    flag's own check (a unit, the command line's limits), as ``--rtt`` is."""
    from qcnmodel.cli.common import OPERATING_POINT, operating_value, split_list

    field = f"--grid {name}"
    if ".." in rhs:
        pieces = [part.strip() for part in rhs.split(":", 1)[0].split("..", 1)]
    else:
        pieces = split_list(rhs, field)
    if name in OPERATING_POINT:
        for piece in pieces:
            operating_value(name, piece, field)


def _check_scheduler(address: str) -> None:
    """A dask.distributed scheduler address, ``[tcp://]HOST:PORT``, checked before any work
    (dask's own error neither names the flag nor comes before the checkpoint is made)."""
    from urllib.parse import urlsplit

    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    hint = "expected [tcp://]HOST:PORT, e.g. tcp://10.0.0.5:8786"
    if scheme not in ("tcp", "tls", "ws", "wss", "ucx", "inproc"):
        raise ValueError(f"scheduler: unknown protocol {scheme!r} in {address!r}; {hint}")
    if scheme == "inproc":
        return
    try:
        parts = urlsplit(address if "://" in address else f"tcp://{address}")
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"scheduler: {exc} in {address!r}; {hint}") from None
    if not parts.hostname or port is None:
        raise ValueError(f"scheduler: {address!r} has no host and port; {hint}")


def _check_operating_point(name: str, values) -> None:
    """The command line's limits on an analytical grid's ``rtt`` (``cli.max_rtt``) and
    ``n_flows`` (``cli.max_flows``), as ``margins`` and ``check`` apply them: every value,
    before any point is computed."""
    from qcnmodel import config

    limits = {"rtt": ("cli.max_rtt", "s"), "n_flows": ("cli.max_flows", "")}
    if name not in limits:
        return
    key, unit = limits[name]
    top = config.defaults[key]
    low = "(0" if name == "rtt" else "[1"
    for v in values:
        ok = 0 < v <= top if name == "rtt" else 1 <= v <= top and float(v).is_integer()
        if not ok:
            raise ValueError(
                f"--grid {name}: {v!r} is outside the allowed range {low}, {top:g}]"
                f"{' ' + unit if unit else ''} (qcnmodel.config.defaults[{key!r}])"
            )


def run(args) -> int:
    """Run ``qcnmodel sweep``."""
    from qcnmodel.cli.common import check_out, jobs_value, progress_on, qcn_params
    from qcnmodel.studies.points import (
        analysis_point,
        check_grid,
        check_simulation_point,
        simulation_point,
    )
    from qcnmodel.studies.sweep import remove_checkpoint, save_dataset, sweep

    out = check_out(args.out, (".nc", ".zarr"))
    n_jobs = jobs_value(args.jobs)
    if args.scheduler is not None:
        _check_scheduler(args.scheduler)
    if args.model:
        for flag in SIM_ONLY:
            if getattr(args, flag) is not None:
                raise ValueError(f"{flag}: a simulator flag; a --model sweep does not read it "
                                 "(use --scenario for a simulator sweep)")  # fmt: skip
    grid = _grid(args)
    sets = check_operating_values(parse_set(args.set))
    params = qcn_params(args)
    params = None if params is None or isinstance(params, str) else params.to_dict()
    if args.model:
        from qcnmodel.models import identify
        from qcnmodel.studies.points import operating_point, point_model

        if "seed" in grid:
            raise ValueError("--grid seed: a simulator parameter; a --model sweep has no seed")
        func = analysis_point
        default = "seed004" if args.model == "ecm" else "802.1qau"
        fixed = {"model": args.model, "preset": args.preset or default, "sets": sets}
        if args.variant is not None:
            fixed["variant"] = args.variant
        if params is not None:
            if args.model not in ("fopdt", "qcn"):
                raise ValueError(f"params: QCN parameter files do not apply to {args.model!r}")
            fixed["params"] = params
        first = {k: v[0] for k, v in grid.items()}
        attrs = dict(zip(("model", "model_variant"), identify(point_model(**fixed, **first))))
        # the operating point the grid does not sweep (the model's defaults or --set)
        attrs.update(operating_point(point_model(**fixed, **first), grid))
        # Validate every grid value, and the first point, here: a bad value fails before
        # any point is computed, with a clear message.
        check_grid(point_model, fixed, grid)
        if not getattr(args, "quiet", False):
            from qcnmodel.studies.compiling import announce_model

            announce_model(point_model(**fixed, **first))
        _check_run_time(args, analysis_point, fixed, grid, n_jobs)
    else:
        from qcnmodel.sim.scenarios import get_scenario

        get_scenario(args.scenario)  # unknown scenario -> ValueError naming it
        duration = cli_time(args.duration, "duration") if args.duration else None
        func = simulation_point
        from qcnmodel.sim.protocols.registry import protocol_name

        protocol = protocol_name(args.protocol or "qcn", "protocol")  # any case, as units
        note_unread_params(args, [protocol])
        fixed = {"scenario": args.scenario, "protocol": protocol,
                 "preset": args.preset, "duration": duration, "sets": sets}  # fmt: skip
        if args.variant is not None:
            raise ValueError("variant: applies to --model sweeps only")
        if params is not None:
            fixed["params"] = params
        if args.max_time is not None:
            raise ValueError("max-time: bounds the estimated run time of a --model sweep; a "
                             "simulator sweep's runs are set by --duration")  # fmt: skip
        check_grid(check_simulation_point, fixed, grid)  # every value, before any run
        if not args.quiet:
            _announce_runs(fixed, grid, n_jobs, args.scheduler)
        attrs = {"seeds": grid.get("seed", [0])}
    checkpoint = args.checkpoint or str(out) + ".partial"
    check_out(checkpoint, field="checkpoint", directory=True)
    ds = sweep(
        func,
        grid,
        fixed=fixed,
        n_jobs=n_jobs,
        scheduler=args.scheduler,
        checkpoint=checkpoint,
        progress=progress_on(args),
        attrs=attrs,
    )
    save_dataset(ds, out)
    remove_checkpoint(checkpoint)  # saved: the checkpoint is needed only to resume
    print(f"wrote {out} ({' x '.join(f'{k}={len(v)}' for k, v in grid.items())} points)")
    sys.stdout.flush()
    return 0


def _announce_runs(fixed: dict, grid: dict, n_jobs: int, scheduler) -> str | None:
    """Say on stderr, before a simulator sweep starts, how long its runs may take when that
    may exceed :data:`qcnmodel.studies.sim_workload.ANNOUNCE_ABOVE_S`: the events of its
    points (:func:`~qcnmodel.studies.sim_workload.sweep_events`) over the workers that run
    at once (one on a ``--scheduler`` cluster: its workers divide it)."""
    from qcnmodel.studies.sim_workload import announce, sweep_events, workers_at_once

    events, seconds, total, flows = sweep_events(fixed, grid)
    workers = 1 if scheduler is not None else workers_at_once(n_jobs, total)
    where = " (on one worker of the cluster)" if scheduler is not None else ""
    runs = f"{total:,} simulator run{'s' if total > 1 else ''}"
    return announce("sweep", f"its {runs}{where}", events, seconds, flows, workers,
                    hint="Ctrl-C stops it and a rerun resumes")  # fmt: skip


def estimate_run_time(func, fixed: dict, grid: dict, n_workers: int) -> tuple[float, float]:
    """``(seconds, per_point)``: the run time of a sweep of ``func`` over ``grid`` on
    ``n_workers`` processes, from points timed here.

    The first point is computed (which also checks it); when the grid at that point's time
    would take more than :data:`ANNOUNCE_ABOVE_S`, the middle and the last points are timed
    too, and their mean is the time per point (the first one includes loading and compiling
    the model's code, which the workers start with). The times per point differ across a
    grid (the QCN model's trajectory searches take longer at some operating points): this is
    an estimate, right to within a few times, not a bound.
    """
    import time

    import numpy as np

    names = list(grid)
    shape = [len(grid[n]) for n in names]
    total = math.prod(shape)

    def timed(flat: int) -> float:
        at = {n: grid[n][i] for n, i in zip(names, np.unravel_index(flat, shape))}
        t0 = time.perf_counter()
        func(**fixed, **at)
        return time.perf_counter() - t0

    per = timed(0)
    if total > 2 and total * per / n_workers > ANNOUNCE_ABOVE_S:
        per = (timed(total // 2) + timed(total - 1)) / 2
    return total * per / n_workers, per


def _check_run_time(args, func, fixed: dict, grid: dict, n_jobs: int) -> None:
    """Estimate the sweep's run time (:func:`estimate_run_time`) before it starts: refuse it
    above ``--max-time`` (default :data:`DEFAULT_MAX_TIME`), naming the flag, and say it on
    stderr above :data:`ANNOUNCE_ABOVE_S`. On a ``--scheduler`` cluster the estimate is for
    one worker and is only said (the cluster's workers divide it)."""
    from qcnmodel.cli.common import _unit_time, seconds_example
    from qcnmodel.studies.sim_workload import duration_text

    bound = _unit_time(args.max_time or DEFAULT_MAX_TIME, "max-time", seconds_example)
    if not bound > 0:
        raise ValueError(f"max-time: must be > 0 s, got {args.max_time!r}")
    workers = 1 if args.scheduler is not None else n_jobs
    seconds, per = estimate_run_time(func, fixed, grid, workers)
    total = math.prod(len(v) for v in grid.values())
    how = (f"{total:,} points x {per:.3g} s per point timed here / {workers} "
           f"{'worker' if workers == 1 else 'workers'}")  # fmt: skip
    if seconds > bound and args.scheduler is None:
        given = args.max_time or DEFAULT_MAX_TIME
        raise ValueError(f"max-time: the sweep's estimated run time, {duration_text(seconds)} "
                         f"({how}), is above --max-time {given}; give fewer points, more "
                         "--jobs, a --scheduler cluster, or a longer --max-time (in s or "
                         "min) to run it anyway")  # fmt: skip
    if seconds > ANNOUNCE_ABOVE_S:
        where = " on one worker of the cluster" if args.scheduler is not None else ""
        print(f"qcnmodel sweep: estimated run time {duration_text(seconds)}{where} ({how}); "
              "--max-time bounds it; Ctrl-C stops it and a rerun resumes", file=sys.stderr,
              flush=True)  # fmt: skip
