"""``qcnmodel margins``: gain, phase and delay margins of one linearised loop.

Examples::

    qcnmodel margins --model qcn --rtt 500us --flows 10
    qcnmodel margins --model fopdt --variant zoh --preset netfpga-1g --rtt 100us --json
    qcnmodel margins --model dcqcn --flows 20 --rtt 85us --fixed-point taylor --json

``--set key=value`` changes a parameter-set field (``qeq=33KB``, ``gd=1/64``) or, for a name
that is not a parameter field or when prefixed with ``model.``, a model option
(``model.timer=true``, ``lag=zoh``). Unknown keys are an error that lists the allowed ones.
``--variant`` picks a named configuration of the model (``qcnmodel.models.MODELS``); the
output names the model and its variant (``model``, ``model_variant``).
"""

from __future__ import annotations

import argparse

from qcnmodel.cli.common import parse_set, print_json

MODELS = ("fopdt", "qcn", "dcqcn", "ecm")


def register(subparsers) -> None:
    """Add the ``margins`` sub-command."""
    p = subparsers.add_parser(
        "margins",
        help="gain/phase/delay margins and critical RTT of a linearised model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", choices=MODELS, default="qcn", help="which model (default qcn)")
    p.add_argument("--variant", default=None, help="named configuration of the model")
    p.add_argument(
        "--preset",
        default=None,
        help="parameter preset (QCN: default 802.1qau; ECM: seed004 or seed000)",
    )
    p.add_argument("--params", default=None, help="TOML parameter file (see examples/)")
    p.add_argument("--rtt", default=None, help="loop delay, e.g. 500us")
    p.add_argument("--flows", default=None, help="number of flows N")
    p.add_argument("--w", default=None, help="feedback weight W")
    p.add_argument("--ps", default=None, help="sampling probability Ps in (0, 1], e.g. 0.01 or 1%%")
    p.add_argument("--rate", default=None, help="bottleneck capacity C, e.g. 10Gbps")
    p.add_argument(
        "--fixed-point", choices=("exact", "taylor"), default=None, help="DCQCN fixed point"
    )
    p.add_argument(
        "--linearisation",
        choices=("exact", "paper"),
        default=None,
        help="DCQCN open loop: exact symbolic linearisation or the paper's (default exact)",
    )
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _flows(value) -> int:
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"flows: expected a whole number >= 1, got {value!r}") from None
    if n != int(n) or n < 1:
        raise ValueError(f"flows: expected a whole number >= 1, got {value!r}")
    return int(n)


def build_model(args):
    """The model described by the parsed arguments (:func:`qcnmodel.models.build_model`)."""
    from qcnmodel.models import build_model as build
    from qcnmodel.params import load_params
    from qcnmodel.units import parse_number, parse_rate, parse_time

    settings: dict = parse_set(args.set)
    if args.model == "dcqcn":
        if args.preset or args.params:
            raise ValueError("preset: QCN presets do not apply to --model dcqcn (use --set)")
    for option, value in (("fixed_point_method", args.fixed_point),
                          ("linearisation", args.linearisation)):  # fmt: skip
        if value is not None:
            if args.model != "dcqcn":
                raise ValueError(f"{option}: applies to --model dcqcn only")
            settings.setdefault(f"model.{option}", value)
    if args.params and args.model == "ecm":
        raise ValueError("params: QCN parameter files do not apply to --model ecm")
    flags = {
        "rtt": (args.rtt, parse_time),
        "n_flows": (args.flows, lambda v, _: _flows(v)),
        "w": (args.w, parse_number),
        "ps": (args.ps, parse_number),
        "capacity": (args.rate, parse_rate),
    }
    for key, (value, parse) in flags.items():
        if value is not None:
            settings[key] = parse(value, {"n_flows": "flows", "capacity": "rate"}.get(key, key))
    if args.params:
        params = load_params(args.params, extra_tables=("ranges",))
    else:
        params = args.preset or (None if args.model == "dcqcn" else _DEFAULT_PRESET[args.model])
    return build(args.model, params, args.variant, **settings)


#: the parameter preset of each model when none is given
_DEFAULT_PRESET = {"fopdt": "802.1qau", "qcn": "802.1qau", "ecm": "seed004"}


def run(args) -> int:
    """Run ``qcnmodel margins``."""
    from qcnmodel.models.summary import summary

    model = build_model(args)
    out = summary(model)
    if args.json:
        print_json(out)
        return 0
    rows = [
        ("model", f"{out['model']} ({out['model_class']}), variant {out['model_variant']}"),
        ("RTT", f"{out['rtt_s'] * 1e6:.4g} us"),
        ("flows N", f"{out['n_flows']}"),
        ("phase margin", f"{out['phase_margin_deg']:.3f} deg"),
        ("gain margin", f"{out['gain_margin_db']:.3f} dB"),
        ("delay margin", f"{out['delay_margin_s'] * 1e6:.4g} us"),
        ("gain crossover", f"{out['crossover_rad_s']:.6g} rad/s"),
        ("critical RTT", f"{out['critical_rtt_s'] * 1e6:.4g} us"),
        ("closed loop", "stable" if out["stable"] else "UNSTABLE"),
    ]
    if out["loop_delay_s"] != out["rtt_s"]:
        rows.insert(2, ("loop delay", f"{out['loop_delay_s'] * 1e6:.4g} us"))
    for k, v in out["fixed_point"].items():
        rows.append((f"fixed point {k}", f"{v:.6g}" if isinstance(v, float) else str(v)))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0
