"""``qcnmodel margins``: gain, phase and delay margins of one linearised loop.

Examples::

    qcnmodel margins --model qcn --rtt 500us --flows 10
    qcnmodel margins --model fopdt --variant zoh --preset netfpga-1g --rtt 100us --json
    qcnmodel margins --model dcqcn --flows 10 --rtt 85us --fixed-point taylor --json

``--set key=value`` changes a parameter-set field (``qeq=33KB``, ``gd=1/64``) or, for a name
that is not a parameter field or when prefixed with ``model.``, a model option
(``model.timer=true``, ``lag=zoh``). Unknown keys are an error that lists the allowed ones.
``--variant`` picks a named configuration of the model (``qcnmodel.models.MODELS``); the
output names the model and its variant (``model``, ``model_variant``).

A point whose port never congests (N flows at the line rate no faster than the port's rate,
e.g. ``--flows 1`` at the line rate) has no equilibrium queue and no loop to linearise: the
answer says "not congested" (JSON: ``congested`` false, ``no_congestion`` the reason, the
margins those of the open loop, infinite, and no crossover) and exits 0, as ``check`` counts
such a flow count stable. Every answer has ``congested``.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings

from qcnmodel.cli.common import (
    MODEL_CHOICES,
    add_jobs_option,
    add_model_options,
    add_out_option,
    add_params_options,
    add_progress_options,
    add_range_options,
    add_rate_option,
    add_set_option,
    check_operating_values,
    check_out,
    cli_rate,
    flows_value,
    parse_set,
    print_json,
    progress_on,
    qcn_params,
    rtt_value,
    trajectory_progress,
)
from qcnmodel.units import split_range

MODELS = MODEL_CHOICES


def register(subparsers) -> None:
    """Add the ``margins`` sub-command."""
    p = subparsers.add_parser(
        "margins",
        help="gain/phase/delay margins and critical RTT of a linearised model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_options(p)
    add_params_options(p, "parameter preset (QCN: default 802.1qau; ECM: seed004 or seed000)")
    add_range_options(p, "loop delay with a unit, e.g. 500us (one value)",
                      "number of flows N (one value)")  # fmt: skip
    p.add_argument("--w", default=None, help="feedback weight W")
    p.add_argument("--ps", default=None, help="sampling probability Ps in (0, 1], e.g. 0.01 or 1%%")
    add_rate_option(p, "bottleneck capacity C with a unit, e.g. 10Gbps")
    p.add_argument(
        "--fixed-point", choices=("exact", "taylor"), default=None, help="DCQCN fixed point"
    )
    p.add_argument(
        "--linearisation",
        choices=("exact", "paper"),
        default=None,
        help="DCQCN open loop: exact symbolic linearisation or the paper's (default exact)",
    )
    add_set_option(p, "override a field (repeatable)")
    add_progress_options(p)
    add_jobs_option(p, "unused (one point; accepted for a uniform command line)")
    add_out_option(p, None, "also write the JSON result to this file (.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _one(value, field: str, parse):
    if value is not None and split_range(value, field) is not None:
        raise ValueError(
            f"{field}: margins analyses one operating point; give one value (for a range over "
            f"{field} use `qcnmodel check --{field} lo..hi` or `qcnmodel sweep`)"
        )
    return None if value is None else parse(value, field)


def _number(value, field: str, example: str):
    """``--w`` or ``--ps``: None when left out, else a number (an empty one is refused with
    an ``example`` of the field's own values)."""
    from qcnmodel.units import parse_number

    if value is None:
        return None
    if not str(value).strip():
        raise ValueError(f"{field}: empty value; give a number, e.g. {example}, or leave the "
                         "flag out")  # fmt: skip
    return parse_number(value, field)


#: the flag of each operating-point setting whose name differs from the flag's
_FLAG_OF = {"n_flows": "--flows", "capacity": "--rate", "fixed_point_method": "--fixed-point"}


def _not_set_twice(settings: dict, key: str, flag: str) -> None:
    """Refuse a value given both by its flag and by ``--set`` (one would win silently)."""
    for name in (key, f"model.{key}"):
        if name in settings:
            raise ValueError(f"{key}: given twice, by {flag} and by --set {name}={settings[name]}; "
                             "give it once")  # fmt: skip


def build_model(args):
    """The model described by the parsed arguments (:func:`qcnmodel.models.build_model`) and
    "", or, where the QCN default (packet fidelity) does not follow the parameter set (drift,
    another quantiser...; no ``--variant`` given), the published equations and why, as
    ``qcnmodel check`` does (:func:`~qcnmodel.studies.verdict.qcn_or_paper`)."""
    from qcnmodel.models import build_model as build

    settings: dict = check_operating_values(parse_set(args.set))
    if args.model == "dcqcn":
        if args.preset or args.params:
            raise ValueError("preset: QCN presets do not apply to --model dcqcn (use --set)")
    for option, value in (("fixed_point_method", args.fixed_point),
                          ("linearisation", args.linearisation)):  # fmt: skip
        if value is not None:
            if args.model != "dcqcn":
                raise ValueError(f"{option}: applies to --model dcqcn only")
            _not_set_twice(settings, option, _FLAG_OF.get(option, f"--{option}"))
            settings[f"model.{option}"] = value
    if args.params and args.model == "ecm":
        raise ValueError("params: QCN parameter files do not apply to --model ecm")
    flags = {
        "rtt": _one(args.rtt, "rtt", rtt_value),
        "n_flows": _one(args.flows, "flows", flows_value),
        "w": _number(args.w, "w", "2 or 1/2"),
        "ps": _number(args.ps, "ps", "0.01 or 1%"),
        "capacity": None if args.rate is None else cli_rate(args.rate, "rate"),
    }
    for key, value in flags.items():
        if value is not None:
            _not_set_twice(settings, key, _FLAG_OF.get(key, f"--{key}"))
            settings[key] = value
    params = qcn_params(args)
    if params is None:
        params = None if args.model == "dcqcn" else _DEFAULT_PRESET[args.model]
    if args.model != "qcn":
        return build(args.model, params, args.variant, **settings), ""
    from qcnmodel.studies.verdict import paper_fallback, qcn_or_paper

    model, why = qcn_or_paper(params, args.variant, **settings)
    return model, "" if why is None else paper_fallback(why, "these margins use")


def _validity(name: str, model, out: dict) -> list[dict]:
    """Regions of the model's validity domain (qcnmodel.validation.domain) at the point."""
    from qcnmodel.validation.domain import point_validity

    params = getattr(model, "params", None)
    fixed = getattr(params, "sampling", "table") == "fixed"
    return point_validity(name, out["model_variant"], out["n_flows"], out["rtt_s"],
                          out["critical_rtt_s"], fixed, params,
                          getattr(model, "capacity", None))  # fmt: skip


def _at_point(name: str, model, exc: ValueError) -> str:
    """An analysis error with the operating point it happened at (``rtt``, ``flows``); a
    root finder's bare "f(a) and f(b) must have different signs" said as what it means."""
    msg = str(exc)
    if msg.startswith("f(a) and f(b) must have different signs"):
        msg = f"no equilibrium: the fixed-point search found no root ({msg})"
    point = f"rtt={float(model.rtt) * 1e6:.4g} us, flows={model.n_flows}"
    from qcnmodel.params._validate import changed_fields

    # no answer here: name what was set away from the defaults (unless the message does)
    changed = [text for name, text in changed_fields(getattr(model, "params", None), 4).items()
               if f"{name} = " not in msg]  # fmt: skip
    # the point's own settings given on the command line (--ps, --rate), which the
    # parameter set does not hold
    for field, unit in (("ps", ""), ("capacity", " bit/s")):
        value = getattr(model, field, None)
        if isinstance(value, (int, float)) and f"{field} = " not in msg:
            changed.append(f"{field} = {value:g}{unit}")
    if changed:
        msg += f"; parameters set away from the defaults: {', '.join(changed)}"
    return f"{point}: the {name} model: {msg}"


def _has_runs(model) -> bool:
    """The model judges its regime by its every-flow runs (DCQCN's ``packet``)."""
    return getattr(model, "trajectories", None) == "agents"


def _add_runs(model, out: dict, progress: bool = False) -> None:
    """The every-flow runs at this RTT (:func:`qcnmodel.models.dcqcn_runs.runs_verdict`:
    whether and how the queue cycles) beside the verdict, which is the runs' critical RTT's
    where they apply (:func:`~qcnmodel.models.dcqcn_runs.runs_skipped`); else the
    linearisation's verdict stays and ``runs`` says why."""
    from qcnmodel.models.dcqcn_runs import runs_skipped

    why = runs_skipped(model)
    if why is not None:
        out["runs"] = {"skipped": why}
        return
    verdict = model.runs_verdict(progress=progress)
    out["runs"] = verdict.to_dict() | {"text": verdict.text()}


#: the parameter preset of each model when none is given
_DEFAULT_PRESET = {"fopdt": "802.1qau", "qcn": "802.1qau", "ecm": "seed004"}


def run(args) -> int:
    """Run ``qcnmodel margins``."""
    from qcnmodel.models._base import NotCongested
    from qcnmodel.models.summary import summary

    if args.out:
        check_out(args.out, (".json",))
    model, fallback = build_model(args)
    from qcnmodel.studies.compiling import announce_model

    announce_model(model, not getattr(args, "quiet", False))
    idle = no_congestion(model)
    try:
        with warnings.catch_warnings(), trajectory_progress(progress_on(args)):
            warnings.simplefilter("ignore", RuntimeWarning)  # a point outside the model's
            out = summary(model)  # domain is said once, as the error below
    except ValueError as exc:  # the analysis at a point where the model does not apply
        if isinstance(exc, NotCongested):  # a model without an idle port's answer (ECM)
            idle, out = no_congestion(model, True), open_loop_summary(model)
        # past the marking ramp (DCQCN's cliff regime) only the every-flow runs answer
        extra = ""
        if _has_runs(model) and "on the marking ramp" in str(exc):
            from qcnmodel.models.dcqcn_runs import runs_skipped

            extra = ("; the every-flow runs, which answer past the ramp, were not run: "
                     f"{runs_skipped(model)}")  # fmt: skip
        if idle is None:
            raise ValueError(_at_point(args.model, model, exc) + extra) from None
    out["congested"] = idle is None
    if idle is not None:  # a valid question whose answer is "not congested": exit 0
        out["no_congestion"] = idle
    if "no_fixed_point" in out:
        out["no_fixed_point"] = _at_point(args.model, model, out["no_fixed_point"])
    if out.get("boundary_method") == "overload":  # how many flows the set holds, then
        from qcnmodel.analysis.overload import held_flows

        out["held_flows"] = held_flows(model, int(model.n_flows))
    if _has_runs(model):
        _add_runs(model, out, progress_on(args))
    if fallback:
        out["model_fallback"] = fallback
    out["validity"] = _validity(args.model, model, out)
    if args.out:
        from qcnmodel._io import atomic_path, to_jsonable

        with atomic_path(args.out) as tmp:
            tmp.write_text(json.dumps(to_jsonable(out), indent=2) + "\n")
    if args.json:
        print_json(out)
        return 0
    rows = _text_rows(out, model)
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


def no_congestion(model, raised: bool = False) -> str | None:
    """Why the port of ``model`` never congests at its point, or None when it does: its
    N flows at the line rate offer no more than the port serves (the model's ``congested``,
    :func:`qcnmodel.models._base.port_congested`; ``raised`` where the model refused the
    point for that reason). The queue then stays empty and no feedback is sent: there is no
    equilibrium queue and no loop to linearise (the open loop: infinite margins, stable at
    any RTT), as ``check`` counts such a flow count stable."""
    if not raised and getattr(model, "congested", True):
        return None
    line = getattr(getattr(model, "params", None), "line_rate", math.nan)
    cap = getattr(model, "capacity_bps", None) or getattr(model, "capacity", None) or line
    n = int(model.n_flows)
    return (f"not congested: N = {n} flow{'s' if n > 1 else ''} at the line rate "
            f"{line / 1e9:g} Gb/s offer{'' if n > 1 else 's'} {n * line / 1e9:g} Gb/s, no more "
            f"than the port's C = {cap / 1e9:g} Gb/s; the queue stays empty and no feedback is "
            "sent, so there is no equilibrium queue and no loop to linearise (open loop: "
            "stable at any RTT)")  # fmt: skip


def open_loop_summary(model) -> dict:
    """The summary (:func:`qcnmodel.models.summary.summary`'s keys) of a point whose port
    never congests, for a model that has no answer there: the open loop's infinite margins,
    no crossover, no critical RTT, stable, no fixed point computed."""
    from qcnmodel.models import identify

    name, variant = identify(model)
    return {"model": name, "model_variant": variant, "model_class": type(model).__name__,
            "rtt_s": float(model.rtt), "loop_delay_s": float(model.rtt),
            "n_flows": int(model.n_flows), "phase_margin_deg": math.inf,
            "gain_margin_db": math.inf, "delay_margin_s": math.inf, "crossover_rad_s": math.nan,
            "phase_crossover_rad_s": math.nan, "critical_rtt_s": math.inf, "stable": True,
            "boundary_method": "linearisation", "fixed_point": {}}  # fmt: skip


def critical_rtt_words(value: float, model, judged: bool) -> str:
    """A critical RTT in words (the margins table's, and the pytest plugin's): ``inf`` and
    ``nan`` said against the search interval (the trajectories' when ``judged`` by them, else
    the linearised loop's); a negative one (the loop unstable even at RTT 0,
    :func:`qcnmodel.critical_rtt`) as unstable at any RTT."""
    from qcnmodel import config

    if math.isfinite(value) and value < 0:  # the phase margin is negative even at RTT 0
        return f"none: unstable at any RTT (the margin runs out {-value * 1e6:.4g} us before RTT 0)"
    if math.isfinite(value):
        return f"{value * 1e6:.4g} us"
    lo, hi = config.defaults["analysis.rtt_search"]
    if judged:
        from qcnmodel.analysis.boundary import search_interval

        lo, hi = search_interval(model)
    if math.isinf(value):
        return f"none up to {hi * 1e6:.4g} us (stable across the search)"
    return f"none: unstable already at {lo * 1e6:.4g} us (the search's start)"


def _text_rows(out: dict, model) -> list[tuple[str, str]]:
    """The rows ``qcnmodel margins`` prints for the summary ``out`` of ``model``."""
    from qcnmodel.analysis.boundary import past_trajectory_limit

    rows = [
        (
            "model",
            f"{out['model']} ({out['model_class']}), variant {out['model_variant']}"
            + (f": {out['model_fallback']}" if "model_fallback" in out else ""),
        ),
        ("RTT", f"{out['rtt_s'] * 1e6:.4g} us"),
        ("flows N", f"{out['n_flows']}"),
    ]
    if out["loop_delay_s"] != out["rtt_s"]:
        rows.append(("loop delay", f"{out['loop_delay_s'] * 1e6:.4g} us"))
    if "no_congestion" in out:  # no loop: the margins and the critical RTT are no numbers
        rows += [("congestion", out["no_congestion"]),
                 ("margins", "none: no loop (infinite margins, no crossover)"),
                 ("critical RTT", "none: not congested at this N"),
                 ("closed loop", "stable (not congested)")]  # fmt: skip
        return rows + _tail_rows(out)
    loop = "no_fixed_point" not in out
    if loop:
        rows += [
            ("phase margin", f"{out['phase_margin_deg']:.3f} deg"),
            ("gain margin", f"{out['gain_margin_db']:.3f} dB"),
            (
                "delay margin",
                f"{out['delay_margin_s'] * 1e6:.4g} us"
                if not math.isnan(out["delay_margin_s"])
                else "none: the linearised loop is unstable already without delay",
            ),
            ("gain crossover", f"{out['crossover_rad_s']:.6g} rad/s"),
        ]
    else:
        rows.append(("margins", f"none: {out['no_fixed_point']}"))
    runs = out.get("runs", {})
    judged = out.get("boundary_method") == "trajectories"
    if judged:
        who = ("the model's every-flow runs (the packet rules on a fluid queue; a run is "
               "unstable when its queue cycles through Kmax or stays above it)" if runs
               else "the model's trajectories")  # fmt: skip
        rows.append(("judged by", f"{who}: the critical RTT is where the odds of an unstable "
                                  "run pass one half; critical RTT and verdict are theirs"
                                  + (", the margins above the linearised loop's" if loop
                                     else "")))  # fmt: skip
    over = out.get("boundary_method") == "overload"
    if over:
        rows.append(("judged by", f"the equilibrium: there is none, the port stays overloaded "
                                  f"(the flows at {out['overloaded']:.4g} x C/N under full "
                                  "feedback)"))  # fmt: skip
        if "held_flows" in out:
            rows.append(("flows held", f"at most N = {out['held_flows']} (qcnmodel.held_flows: "
                                       "the largest N with an equilibrium)"))  # fmt: skip
        rows.append(("critical RTT", "none: overloaded at every RTT"))
    else:
        rows.append(("critical RTT", critical_rtt_words(out["critical_rtt_s"], model, judged)))
    if "stable_band_s" in out:  # a stable band above a cycle at small RTTs
        lo, hi = out["stable_band_s"]
        rows.append(("stable band", f"{critical_rtt_words(lo, model, judged)} to "
                     f"{critical_rtt_words(hi, model, judged)} (the runs cycle from the "
                     "smallest RTT they are run at, timers in step, and are stable in this "
                     "band: the model's own, as check and stability maps give it)"))  # fmt: skip
    if judged and loop:
        lin = out["critical_rtt_linearised_s"]
        rows.append(("linearised critical RTT", critical_rtt_words(lin, model, False)))
    if "skipped" in runs:
        rows.append(("judged by", f"the linearised loop (every-flow runs skipped: "
                                  f"{runs['skipped']})"))  # fmt: skip
    if past_trajectory_limit(model) and not over:
        from qcnmodel.studies.check_text import linearised_note

        rows.append(("judged by", linearised_note([model.n_flows], {model.n_flows: model})))
    rows.append(("closed loop", "stable" if out["stable"] else "UNSTABLE"))
    if "text" in runs:
        rows.append(("runs at this RTT", runs["text"]))
    return rows + _tail_rows(out)


def _tail_rows(out: dict) -> list[tuple[str, str]]:
    """The validity and fixed-point rows of the margins table (an idle port's fixed point
    without its NaN entries: the renewal births of flows that are never cut)."""
    rows = [("outside validity", f"{note['finding']}: {note['where']}; {note['effect']}")
            for note in out["validity"]]  # fmt: skip
    if not rows:
        rows.append(("validity", "inside the validated domain of this model"))
    idle = "no_congestion" in out
    for k, v in out["fixed_point"].items():
        if not (idle and isinstance(v, float) and math.isnan(v)):
            unit = FIXED_POINT_UNITS.get(k, "")
            value = f"{v:.6g}" if isinstance(v, float) else str(v)
            rows.append((f"fixed point {k}", f"{value} {unit}" if unit else value))
    return rows


#: units of the models' fixed-point entries (SI, as ``fixed_point()`` returns them) in the
#: text table; the others (probabilities, fractions, the residual) are dimensionless
FIXED_POINT_UNITS = {
    "q": "B", "fb": "B", "qfb": "B",
    "rate": "bit/s", "target_rate": "bit/s", "rate_current": "bit/s", "rate_target": "bit/s",
    "birth_rate_current": "bit/s", "birth_target": "bit/s",
    "cnm_rate": "1/s", "sampling_interval": "s", "age": "s",
}  # fmt: skip
