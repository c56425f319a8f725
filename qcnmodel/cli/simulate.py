"""``qcnmodel simulate`` and ``qcnmodel scenarios``: the packet-level simulator's commands.

``qcnmodel scenarios`` lists the scenarios, one line each (``--params`` adds their parameters).
``qcnmodel simulate --scenario NAME [--protocol NAME] [--preset NAME] [--duration 1s]
[--seed N] [--set key=value ...] [--out FILE] [--json]`` runs one simulation with one of the
protocols of :mod:`qcnmodel.sim.protocols` (none, qcn, ecm, ecm-q, qcn-h, qcn-p, qcn-hp,
qcn-sp, qcn-pp, qcn-sonar, qcn-plus, dcqcn); ``--set`` overrides a scenario parameter, a
parameter of the protocol or a QCN parameter (unit strings accepted; an unknown key is an
error naming it and listing the allowed keys, exit status 2). ``--out`` writes the
traces (``.nc`` netCDF, ``.csv`` CSV; any other suffix is refused before the run), atomically.
Times need a unit (``--duration 1s``, ``--bin 100us``). With ``--json`` stdout carries
exactly one JSON object.

``--topology FILE`` runs a TOML network (:mod:`qcnmodel.sim.topology`) with the file's
``preset`` and ``duration`` unless given; ``--set`` then overrides QCN parameters only.
``--params FILE`` takes the QCN parameters from a TOML file (the format ``qcnmodel check``
reads) instead of a preset. ``--engine`` picks the compiled kernel or the pure-Python oracle
(default ``auto``: :func:`qcnmodel.sim.engines.choose_engine`).

A long run needs bounded memory: the kernel runs in segments, and without ``--out`` keeps
no traces but the hot port's (for the summary metrics); with ``--out`` the traces of the
default bin are merged over a coarser bin when they exceed
``config.defaults["sim.max_trace_bytes"]`` (one line on stderr says so; see
:mod:`qcnmodel.sim.engines`). A bin width given with ``--bin`` is kept as given: when its
traces do not fit, the run is refused before it starts, naming the smallest ``--bin`` that
fits (exit status 2).
"""

from __future__ import annotations

import contextlib

from qcnmodel.cli.common import (
    add_jobs_option,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_set_option,
    check_out,
    cli_time,
    note_unread_params,
    parse_set,
    positive_int,
    print_json,
    progress_on,
    qcn_params,
    seed_value,
)

#: output formats of ``simulate --out``, by suffix
OUT_SUFFIXES = (".nc", ".csv")


def register(subparsers) -> None:
    """Add the ``simulate`` and ``scenarios`` sub-commands."""
    p = subparsers.add_parser(
        "simulate",
        help="run the packet-level simulator on a named scenario",
        description="Run the packet-level QCN simulator on a named scenario.",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--scenario", help="scenario name (see `qcnmodel scenarios`)")
    what.add_argument(
        "--topology",
        metavar="FILE",
        help="TOML topology file (see qcnmodel.sim.topology and examples/topologies)",
    )
    p.add_argument(
        "--protocol", default="qcn", help="protocol: none, qcn, ecm, ecm-q, qcn-h, qcn-p, "
        "qcn-hp, qcn-sp, qcn-pp, qcn-sonar, qcn-plus, dcqcn (default qcn)",
    )  # fmt: skip
    add_params_options(p, "QCN parameter preset (default: the scenario's)")
    p.add_argument("--duration", default=None, help="simulated time with a unit, e.g. 1s, 200ms")
    p.add_argument("--seed", default="0", help="random seed, 0 .. 2^63-1 (default 0)")
    add_set_option(p, "override a scenario, protocol or QCN parameter (repeatable)")
    p.add_argument("--bin", default=None, help="trace bin width with a unit (default 1ms, "
                   "or a tenth of a --duration shorter than that, merged to fit the trace "
                   "memory limit; a --bin given is kept, or refused when it does not "
                   "fit)")  # fmt: skip
    p.add_argument("--decimate", default="1", help="merge every N >= 1 bins in the output "
                   "(the last group holds the bins left over; the .nc attributes bin_width_s, "
                   "decimation and last_bin_width_s say so)")  # fmt: skip
    p.add_argument("--window", default=None, help="keep bins in T0:T1, times with units")
    add_out_option(p, None, "write traces to FILE: .nc (netCDF) or .csv")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--engine", default="auto", choices=("auto", "kernel", "oracle"),
        help="auto (default): the compiled kernel, or for a short run while the kernel is not "
        "compiled yet the pure-Python twin (same results); kernel; oracle (slow)",
    )  # fmt: skip
    p.add_argument(
        "--progress", action="store_true", help="progress bar on stderr (default: on a terminal)"
    )
    add_progress_options(p)
    add_jobs_option(p, "unused (one run; accepted for a uniform command line)")
    p.set_defaults(func=run)
    q = subparsers.add_parser(
        "scenarios",
        help="list the simulator's scenarios",
        description="List the packet-level simulator's named scenarios.",
    )
    q.add_argument("--params", action="store_true", help="also list each scenario's parameters")
    q.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    q.set_defaults(func=run_scenarios)


def run_scenarios(args) -> int:
    """List the scenarios (one line each; with ``--params`` each parameter's default and
    allowed range, with units)."""
    from qcnmodel.sim.scenarios import SCENARIOS

    if getattr(args, "json", False):
        print_json(
            {
                n: {
                    "summary": s.summary,
                    "preset": s.preset,
                    "duration_s": s.duration,
                    "params": {p.name: p.default for p in s.params},
                }
                for n, s in SCENARIOS.items()
            }
        )
        return 0
    width = max(len(n) for n in SCENARIOS)
    for name, s in SCENARIOS.items():
        print(f"{name:<{width}}  {s.summary}")
        if getattr(args, "params", False):
            for p in s.params:
                print(f"{'':<{width}}    {p.name} = {p.value_text(p.default)} ({p.kind}, "
                      f"{p.range_text()}) {p.doc}")  # fmt: skip
    return 0


def _window(text):
    if not text:
        return None
    if ":" not in text:
        raise ValueError(f"window: expected T0:T1 (either may be empty), got {text!r}")
    a, _, b = text.partition(":")
    t0 = cli_time(a, "window") if a.strip() else None
    t1 = cli_time(b, "window") if b.strip() else None
    if t0 is not None and t1 is not None and not t0 < t1:
        raise ValueError(f"window: need T0 < T1, got {text!r}")
    return t0, t1


def _bin(text, duration):
    """``--bin``, or None: the simulator's default (``sim.bin_width``, or a tenth of a shorter
    ``--duration``, at least 1 ns; :func:`qcnmodel.sim.api.simulate`)."""
    return None if text is None else cli_time(text, "bin")


@contextlib.contextmanager
def explicit_bin_width(given: bool):
    """Within the block, a kernel run whose traces, kept at the bin width asked for with
    ``--bin`` (``given``), exceed ``config.defaults["sim.max_trace_bytes"]`` is refused
    before it starts, naming ``bin`` and the smallest bin width whose traces fit; without
    ``--bin`` the default bin is merged to fit, as the simulator does (one line on stderr).

    The simulator merges bins to fit whatever the bin width; a width the user chose is
    honoured or refused, never changed.
    """
    if not given:
        yield
        return
    from qcnmodel.sim import engines

    original = engines.plan_traces

    def plan(net, n_traced, end_ns, bin_ns, **kw):
        chosen = original(net, n_traced, end_ns, bin_ns, **kw)
        if chosen.factor > 1:
            raise ValueError(_bin_refusal(original, chosen, net, n_traced, end_ns, bin_ns, kw))
        return chosen

    engines.plan_traces = plan
    try:
        yield
    finally:
        engines.plan_traces = original


def _bin_refusal(original, chosen, net, n_traced, end_ns, bin_ns, kw) -> str:
    """The refusal of ``--bin`` whose traces do not fit at full resolution: the smallest bin
    width (whole nanoseconds) that fits, found by bisection between the one asked for and
    that width times the merge factor the simulator would have applied (which fits)."""
    from qcnmodel import config

    def fits(width: int) -> bool:
        try:
            return original(net, n_traced, end_ns, width, **kw).factor == 1
        except ValueError:
            return False

    lo, hi = bin_ns, bin_ns * chosen.factor
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    limit = int(config.defaults["sim.max_trace_bytes"]) / 2.0**30
    return (f"bin: {bin_ns / 1e9:g} s over {end_ns / 1e9:g} s is {chosen.n_bins} trace bins, "
            f"whose traces exceed the trace memory limit of {limit:.2f} GiB "
            f'(qcnmodel.config.defaults["sim.max_trace_bytes"]); a bin width given with --bin '
            f"is kept as given: use --bin >= {hi / 1e9:.12g} s or a shorter --duration, or leave "
            "--bin out to have the default bin merged to fit")  # fmt: skip


def _check_unused_settings(args, overrides: dict) -> None:
    """Refuse a ``--set`` QCN parameter for a protocol without QCN parameters
    (:func:`qcnmodel.sim.protocols.registry.check_settings_read`)."""
    from qcnmodel.sim.protocols.registry import check_settings_read
    from qcnmodel.sim.scenarios import get_scenario

    sc = get_scenario(args.scenario) if args.scenario else None
    check_settings_read(sc, overrides, args.protocol)


def _announce_run(target, args, duration, overrides: dict, bin_width) -> str | None:
    """Say on stderr, before the run starts, how long it may take when that may exceed
    :data:`qcnmodel.studies.sim_workload.ANNOUNCE_ABOVE_S`
    (:func:`qcnmodel.studies.sim_workload.announce`). A bad input is left to the simulator,
    which refuses it naming the field."""
    from qcnmodel.studies.sim_workload import announce, point_events, wall_range

    try:
        events, flows = point_events(target, args.protocol, duration, overrides, bin_width)
    except ValueError:
        return None
    engine = "oracle" if getattr(args, "engine", "auto") == "oracle" else "kernel"
    return announce("simulate", "this run", events, wall_range(events, flows, engine), flows,
                    engine=engine, hint="a shorter --duration takes less")  # fmt: skip


def run(args) -> int:
    """Run one simulation and report it."""
    from qcnmodel._io import atomic_path
    from qcnmodel.sim.api import simulate
    from qcnmodel.sim.protocols.registry import protocol_name

    if args.out:
        check_out(args.out, OUT_SUFFIXES)
    args.protocol = protocol_name(args.protocol, "protocol")  # any case, as units
    note_unread_params(args, [args.protocol])
    overrides = parse_set(args.set)
    if args.quiet and args.progress:
        raise ValueError("progress: --progress and --quiet contradict each other; give one")
    _check_unused_settings(args, overrides)
    duration = cli_time(args.duration, "duration") if args.duration is not None else None
    bin_width = _bin(args.bin, duration)
    seed = seed_value(args.seed)
    decimation = positive_int(args.decimate, "decimate")
    window = _window(args.window)
    progress = progress_on(args)
    target, preset = args.scenario, qcn_params(args)
    if getattr(args, "topology", None):
        from qcnmodel.cli.common import check_input_file
        from qcnmodel.sim.topology import MAX_TOPOLOGY_FILE_BYTES, read_topology

        check_input_file(args.topology, "topology", MAX_TOPOLOGY_FILE_BYTES)
        topo = read_topology(args.topology)
        target, preset = topo.spec, preset or topo.preset
        duration = duration if duration is not None else topo.duration
    if not args.quiet:
        _announce_run(target, args, duration, overrides, bin_width)
    with explicit_bin_width(args.bin is not None):
        res = simulate(
            target,
            protocol=args.protocol,
            params=preset,
            duration=duration,
            seed=seed,
            overrides=overrides,
            bin_width=bin_width,
            progress=progress,
            window_s=window,
            decimation=decimation,
            trace=bool(args.out),
            engine=getattr(args, "engine", "auto"),
        )
    if args.out:
        with atomic_path(args.out) as tmp:
            if args.out.endswith(".csv"):
                res.to_csv(tmp)
            else:
                res.to_netcdf(tmp)
    summary = res.summary()
    if args.json:
        print_json(summary)
        return 0
    keys = ("scenario", "protocol", "duration_s", "seed", "events", "frames_sent",
            "frames_delivered", "frames_dropped", "frames_in_flight", "wall_s", "events_per_s",
            "hot_queue_mean_bytes", "hot_queue_max_bytes", "jain_fairness", "recovery_time_s",
            "pause_frames", "cnms")  # fmt: skip
    for k in keys:
        v = summary.get(k)
        print(f"{k:>22}: {v:.6g}" if isinstance(v, float) else f"{k:>22}: {v}")
    flows = summary["flow_throughput_bps"]
    shown = list(flows.items())[:12]
    print(f"{'flow_throughput_bps':>22}: " + ", ".join(f"{k} {v / 1e9:.3f}G" for k, v in shown)
          + (f" ... ({len(flows)} flows)" if len(flows) > 12 else ""))  # fmt: skip
    if args.out:
        print(f"{'traces':>22}: {args.out}")
    return 0
