"""``qcnmodel margins``: gain, phase and delay margins of one linearised loop.

Examples::

    qcnmodel margins --model qcn --rtt 500us --flows 10
    qcnmodel margins --model fopdt --preset netfpga-1g --rtt 100us --json
    qcnmodel margins --model dcqcn --flows 20 --rtt 85us --fixed-point taylor --json

``--set key=value`` changes a parameter-set field (``qeq=33KB``, ``gd=1/64``) or, for a name
that is not a parameter field or when prefixed with ``model.``, a model option
(``model.timer=true``, ``lag=zoh``). Unknown keys are an error that lists the allowed ones.
"""

from __future__ import annotations

import argparse
import dataclasses

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
        "--fixed-point", choices=("exact", "taylor"), default="exact", help="DCQCN fixed point"
    )
    p.add_argument(
        "--linearisation",
        choices=("exact", "paper"),
        default="exact",
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
    """Build the model object described by the parsed arguments."""
    from qcnmodel.params import QCNParams, load_params
    from qcnmodel.units import parse_number, parse_rate, parse_time

    sets = parse_set(args.set)
    if args.model == "dcqcn":
        from qcnmodel.fluid_dcqcn import DCQCNFluidModel, DCQCNParams

        if args.preset or args.params:
            raise ValueError("preset: QCN presets do not apply to --model dcqcn (use --set)")
        pfields = {f.name for f in dataclasses.fields(DCQCNParams)}
        mfields = {f.name for f in dataclasses.fields(DCQCNFluidModel)} - {"params"}
        pchanges, mchanges = _split_sets(sets, pfields, mfields)
        if args.rate is not None:
            pchanges["capacity"] = parse_rate(args.rate, "rate")
        if args.flows is not None:
            mchanges["n_flows"] = _flows(args.flows)
        if args.rtt is not None:
            mchanges["rtt"] = parse_time(args.rtt, "rtt")
        for flag in ("w", "ps"):
            if getattr(args, flag) is not None:
                raise ValueError(f"{flag}: --{flag} does not apply to --model dcqcn")
        mchanges.setdefault("fixed_point_method", args.fixed_point)
        mchanges.setdefault("linearisation", args.linearisation)
        return _make(DCQCNFluidModel, DCQCNParams(**pchanges), mchanges, pfields, mfields)

    if args.model == "ecm":
        from qcnmodel.fluid_ecm import ECMFluidModel
        from qcnmodel.sim.protocol_params import ECMParams

        if args.params:
            raise ValueError("params: QCN parameter files do not apply to --model ecm")
        pfields = {f.name for f in dataclasses.fields(ECMParams)}
        mfields = {f.name for f in dataclasses.fields(ECMFluidModel)} - {"params"}
        pchanges, mchanges = _split_sets(sets, pfields, mfields)
        if args.w is not None:
            pchanges["w"] = parse_number(args.w, "w")
        if args.ps is not None:
            pchanges["psample"] = parse_number(args.ps, "ps")
        if args.rtt is not None:
            mchanges["rtt"] = parse_time(args.rtt, "rtt")
        if args.flows is not None:
            mchanges["n_flows"] = _flows(args.flows)
        if args.rate is not None:
            mchanges["capacity"] = parse_rate(args.rate, "rate")
        params = ECMParams.preset(args.preset or "seed004", **pchanges)
        return _make(ECMFluidModel, params, mchanges, pfields, mfields)

    if args.params:
        params = load_params(args.params, extra_tables=("ranges",))
    else:
        params = QCNParams.preset(args.preset or "802.1qau")
    if args.model == "fopdt":
        from qcnmodel.fopdt import FOPDTModel as Model
    else:
        from qcnmodel.fluid_qcn import QCNFluidModel as Model
    pfields = {f.name for f in dataclasses.fields(QCNParams)}
    mfields = {f.name for f in dataclasses.fields(Model)} - {"params"}
    pchanges, mchanges = _split_sets(sets, pfields, mfields)
    if args.w is not None:
        pchanges["w"] = parse_number(args.w, "w")
    params = params.replace(**pchanges)
    if args.rtt is not None:
        mchanges["rtt"] = parse_time(args.rtt, "rtt")
    if args.flows is not None:
        mchanges["n_flows"] = _flows(args.flows)
    if args.ps is not None:
        mchanges["ps"] = parse_number(args.ps, "ps")
    if args.rate is not None:
        mchanges["capacity"] = parse_rate(args.rate, "rate")
    return _make(Model, params, mchanges, pfields, mfields)


def _make(Model, params, mchanges, pfields, mfields):
    try:
        return Model(params, **mchanges)
    except TypeError as exc:  # pragma: no cover - guarded by _split_sets
        raise ValueError(f"model options: {exc}") from None


def _split_sets(sets: dict, pfields: set, mfields: set) -> tuple[dict, dict]:
    pchanges: dict = {}
    mchanges: dict = {}
    for key, value in sets.items():
        if key.startswith("model."):
            name = key[len("model.") :]
            if name not in mfields:
                raise ValueError(
                    f"--set {key}: unknown model option {name!r} "
                    f"(allowed: {', '.join(sorted(mfields))})"
                )
            mchanges[name] = _coerce(value)
        elif key in pfields:
            pchanges[key] = value
        elif key in mfields:
            mchanges[key] = _coerce(value)
        else:
            import difflib

            allowed = sorted(pfields | mfields)
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"--set {key}: unknown field{hint} (allowed: {', '.join(allowed)})")
    return pchanges, mchanges


def _coerce(value: str):
    low = value.lower()
    if low in ("true", "on", "yes"):
        return True
    if low in ("false", "off", "no"):
        return False
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def compute(model) -> dict:
    """Margins, critical RTT and fixed point of ``model`` as a plain dict."""
    from qcnmodel.margins import critical_rtt

    loop = model.loop()
    m = loop.margins()
    crit = critical_rtt(loop)
    return {
        "model": type(model).__name__,
        "rtt_s": float(model.rtt),
        "n_flows": int(model.n_flows),
        "phase_margin_deg": float(m.phase_margin_deg),
        "gain_margin_db": float(m.gain_margin_db),
        "delay_margin_s": float(m.delay_margin_s),
        "crossover_rad_s": float(m.crossover_rad_s),
        "phase_crossover_rad_s": float(m.phase_crossover_rad_s),
        "critical_rtt_s": float(crit),
        "stable": bool(m.stable),
        "fixed_point": {k: _num(v) for k, v in model.fixed_point().items()},
    }


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def run(args) -> int:
    """Run ``qcnmodel margins``."""
    model = build_model(args)
    out = compute(model)
    out["model"] = args.model
    if args.json:
        print_json(out)
        return 0
    rows = [
        ("model", f"{args.model} ({type(model).__name__})"),
        ("RTT", f"{out['rtt_s'] * 1e6:.4g} us"),
        ("flows N", f"{out['n_flows']}"),
        ("phase margin", f"{out['phase_margin_deg']:.3f} deg"),
        ("gain margin", f"{out['gain_margin_db']:.3f} dB"),
        ("delay margin", f"{out['delay_margin_s'] * 1e6:.4g} us"),
        ("gain crossover", f"{out['crossover_rad_s']:.6g} rad/s"),
        ("critical RTT", f"{out['critical_rtt_s'] * 1e6:.4g} us"),
        ("closed loop", "stable" if out["stable"] else "UNSTABLE"),
    ]
    for k, v in out["fixed_point"].items():
        rows.append((f"fixed point {k}", f"{v:.6g}" if isinstance(v, float) else str(v)))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0
