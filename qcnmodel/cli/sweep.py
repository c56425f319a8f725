"""``qcnmodel sweep``: margins or simulations over a parameter grid, in parallel, resumable.

Examples::

    qcnmodel sweep --model qcn --grid rtt=2us..1ms:40:log --grid n_flows=1,10,100 --out qcn.nc
    qcnmodel sweep --model qcn --grid w=2,8,32 --grid ps=1%,2%,5%,10% --grid rtt=10us..1ms:20:log
    qcnmodel sweep --scenario og-hotspot --grid rtt=5us,50us,500us --grid seed=0,1,2 \\
        --duration 0.3s --jobs 2 --out og.nc
    qcnmodel sweep ... --scheduler tcp://10.0.0.5:8786      # on a dask.distributed cluster

Grid specs are ``name=v1,v2,...`` or ``name=lo..hi:n[:log]``, with unit strings. Analytical
grids take ``rtt``, ``n_flows``, ``capacity``, ``ps`` and any parameter-set field (``w``,
``gd``, ``qeq``, ...); simulator grids take any scenario parameter or QCN field and ``seed``.
``--preset NAME`` or ``--params FILE`` (a QCN parameter TOML, as ``qcnmodel check`` reads)
chooses the parameter set, ``--variant`` a named configuration of the ``--model``.
Finished points are recorded in ``--checkpoint`` (default ``OUT.partial/``): rerunning the
same command after an interruption continues where it stopped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qcnmodel.cli.common import add_params_options


def register(subparsers) -> None:
    """Add the ``sweep`` sub-command."""
    p = subparsers.add_parser(
        "sweep",
        help="parallel, resumable parameter sweeps (analytical models or the simulator)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", choices=("fopdt", "qcn", "dcqcn", "ecm"), help="analytical model")
    what.add_argument("--scenario", help="simulator scenario (see `qcnmodel scenarios`)")
    p.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="NAME=VALUES",
        help="a swept parameter (repeat for more dimensions)",
    )
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="fixed override")
    add_params_options(p, "parameter preset (QCN; ECM models: seed004 or seed000)")
    p.add_argument("--variant", default=None, help="named configuration of the --model")
    p.add_argument("--protocol", default="qcn", help="simulator protocol (default qcn)")
    p.add_argument("--duration", default=None, help="simulated time per run, e.g. 0.5s")
    p.add_argument("--out", default="sweep.nc", help="output file: .nc (netCDF) or .zarr")
    p.add_argument("--jobs", type=int, default=1, help="joblib worker processes (-1 = all)")
    p.add_argument("--scheduler", default=None, help="dask.distributed scheduler address")
    p.add_argument("--checkpoint", default=None, help="checkpoint directory (OUT.partial)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``qcnmodel sweep``."""
    from qcnmodel._errors import unknown_name
    from qcnmodel.cli.common import parse_set, qcn_params
    from qcnmodel.studies.points import analysis_point, simulation_point, value_parser
    from qcnmodel.studies.sweep import parse_grid_spec, save_dataset, sweep
    from qcnmodel.units import parse_time

    out = Path(args.out)
    if out.suffix not in (".nc", ".zarr"):
        raise unknown_name("out", "file type", out.suffix, (".nc", ".zarr"), sort=False)
    grid = {}
    for spec in args.grid:
        name = spec.split("=", 1)[0].strip()
        name, values = parse_grid_spec(spec, value_parser(name, args.scenario))
        if name in grid:
            raise ValueError(f"--grid {name}: given twice")
        grid[name] = values
    sets = parse_set(args.set)
    params = qcn_params(args)
    params = None if params is None or isinstance(params, str) else params.to_dict()
    if args.model:
        from qcnmodel.models import identify
        from qcnmodel.studies.points import point_model

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
        # Validate the first point here so that a typo fails fast with a clear message.
        analysis_point(**fixed, **{k: v[0] for k, v in grid.items()})
    else:
        from qcnmodel.sim.scenarios import get_scenario

        get_scenario(args.scenario)  # unknown scenario -> ValueError naming it
        duration = parse_time(args.duration, "duration") if args.duration else None
        func = simulation_point
        fixed = {"scenario": args.scenario, "protocol": args.protocol, "preset": args.preset,
                 "duration": duration, "sets": sets}  # fmt: skip
        if args.variant is not None:
            raise ValueError("variant: applies to --model sweeps only")
        if params is not None:
            fixed["params"] = params
        attrs = {"seeds": grid.get("seed", [0])}
    checkpoint = args.checkpoint or str(out) + ".partial"
    ds = sweep(
        func,
        grid,
        fixed=fixed,
        n_jobs=args.jobs,
        scheduler=args.scheduler,
        checkpoint=checkpoint,
        progress=not args.quiet,
        attrs=attrs,
    )
    save_dataset(ds, out)
    print(f"wrote {out} ({' x '.join(f'{k}={len(v)}' for k, v in grid.items())} points)")
    sys.stdout.flush()
    return 0
