"""One command-line vocabulary: the same flag for the same thing in every sub-command.

These tests read the parsers (no command runs), so they are fast. Each flag is checked by
parsing a command line that uses it; a sub-command missing the flag exits 2 from argparse.
"""

import argparse

import pytest

from qcnmodel.cli import build_parser
from qcnmodel.cli.common import MODEL_CHOICES

#: the minimal arguments each sub-command needs to parse
BASE = {
    "margins": [],
    "check": ["examples/802.1qau.toml"],
    "report": [],
    "sweep": ["--model", "qcn", "--grid", "rtt=10us"],
    "simulate": ["--scenario", "og-hotspot"],
    "compare": ["--scenario", "og-hotspot", "--protocols", "qcn"],
    "figures": [],
    "validate": [],
}

#: flags every sub-command takes (flag, value or None for a switch, destination)
EVERYWHERE = [
    ("--quiet", None, "quiet"),
    ("--no-progress", None, "quiet"),
    ("--jobs", "2", "jobs"),
    ("--out", "somewhere", "out"),
]
#: sub-commands that take a parameter set
WITH_PARAMS = ("margins", "check", "report", "sweep", "simulate", "compare")
#: sub-commands that choose a linearised model
WITH_MODEL = ("margins", "check", "report", "sweep")
#: sub-commands with an RTT and a flow count (or ranges of them)
WITH_RANGES = ("margins", "check", "report", "sweep")


def _parse(argv):
    return build_parser().parse_args(argv)


def _subparser(name) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_every_subcommand_is_covered():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(BASE) <= set(sub.choices)


@pytest.mark.parametrize("command", sorted(BASE))
@pytest.mark.parametrize(("flag", "value", "dest"), EVERYWHERE)
def test_shared_flags_everywhere(command, flag, value, dest):
    argv = [command, *BASE[command], flag] + ([] if value is None else [value])
    args = _parse(argv)
    assert getattr(args, dest) == (True if value is None else value)


@pytest.mark.parametrize("command", WITH_PARAMS)
def test_parameter_set_flags(command):
    args = _parse([command, *BASE[command], "--preset", "802.1qau", "--set", "w=4"])
    assert args.preset == "802.1qau" and args.set == ["w=4"]
    args = _parse([command, *BASE[command], "--params", "examples/802.1qau.toml"])
    assert args.params == "examples/802.1qau.toml"


@pytest.mark.parametrize("command", ("margins", "sweep"))
def test_same_model_choices_where_any_model_is_chosen(command):
    base = [a for a in BASE[command] if a not in ("--model", "qcn")]
    action = next(a for a in _subparser(command)._actions if "--model" in a.option_strings)
    assert tuple(action.choices) == MODEL_CHOICES
    args = _parse([command, *base, "--model", "ecm", "--variant", "mean"])
    assert args.model == "ecm" and args.variant == "mean"


def _help(command) -> str:
    return _subparser(command).format_help()


@pytest.mark.parametrize(("command", "accepted"), [("check", ("qcn", "fopdt")),
                                                   ("report", ("qcn",))])  # fmt: skip
def test_model_choices_are_the_models_the_command_accepts(command, accepted, capsys):
    """The help offers only the models the command accepts; any other is refused by the
    parser, naming the accepted ones, and each offered one passes the command's own check."""
    action = next(a for a in _subparser(command)._actions if "--model" in a.option_strings)
    assert tuple(action.choices) == accepted
    for other in set(MODEL_CHOICES) - set(accepted):
        assert other not in _help(command).split("--model", 1)[1].split("\n  --", 1)[0]
        with pytest.raises(SystemExit) as exc:
            _parse([command, *BASE[command], "--model", other])
        assert exc.value.code == 2
        assert f"this command takes {', '.join(accepted)}, not {other!r}" in capsys.readouterr().err
    if command == "check":
        from qcnmodel.cli.check import CHECK_MODELS
        from qcnmodel.params import QCNParams
        from qcnmodel.studies import check

        assert CHECK_MODELS == check.CHECK_MODELS
        for name in accepted:
            check._model(QCNParams.preset("802.1qau"), name, rtt=1e-4, n_flows=10)
    else:
        from qcnmodel.cli.report import report_config

        for name in accepted:
            report_config(_parse([command, "--model", name, "--no-packet"]))


def test_report_offers_no_variant_and_refuses_one_with_a_pointer():
    from qcnmodel.cli.report import report_config

    assert "--variant" not in _help("report")
    with pytest.raises(ValueError, match="variant: .*qcnmodel check --variant"):
        report_config(_parse(["report", "--variant", "packet", "--no-packet"]))


@pytest.mark.parametrize("command", WITH_RANGES)
@pytest.mark.parametrize("value", ["100us", "2us..1ms"])
def test_rtt_and_flows_take_a_value_or_a_range(command, value):
    args = _parse([command, *BASE[command], "--rtt", value, "--flows", "1..10"])
    assert args.rtt == value and args.flows == "1..10"


@pytest.mark.parametrize("command", WITH_RANGES)
def test_rtt_range_is_a_deprecated_alias_of_rtt(command):
    args = _parse([command, *BASE[command], "--rtt-range", "2us..3us"])
    assert args.rtt == "2us..3us"


def test_check_rtt_range_alias_still_gives_the_same_ranges():
    from qcnmodel.cli.check import _ranges

    a = _ranges(_parse(["check", "examples/802.1qau.toml", "--rtt-range", "2us..3us"]))
    b = _ranges(_parse(["check", "examples/802.1qau.toml", "--rtt", "2us..3us"]))
    assert a.rtt == b.rtt == (2e-6, 3e-6)


def test_sweep_grid_flows_is_n_flows_and_no_set_blamed():
    from qcnmodel.cli.sweep import _grid

    args = _parse(["sweep", "--model", "qcn", "--grid", "flows=1,10", "--rtt", "10us,20us"])
    assert _grid(args) == {"n_flows": [1, 10], "rtt": [1e-5, 2e-5]}


def test_negative_value_reaches_the_field_check(capsys):
    from qcnmodel.cli import main

    # argparse alone would answer "expected one argument"
    assert main(["margins", "--rtt", "-5us"]) == 2
    err = capsys.readouterr().err
    assert "rtt" in err and "(0, 1] s" in err and "expected one argument" not in err


def test_report_takes_ranges_from_the_params_file_like_check(tmp_path):
    from qcnmodel.cli.report import report_config

    f = tmp_path / "p.toml"
    f.write_text('preset = "802.1qau"\n\n[ranges]\nrtt = "5us..50us"\nflows = "2..20"\n')
    cfg = report_config(_parse(["report", "--params", str(f)]))
    assert (cfg.rtt_min, cfg.rtt_max) == (5e-6, 50e-6)
    assert min(cfg.flows) == 2 and max(cfg.flows) == 20
    # the flags win over the file, as in check
    cfg = report_config(_parse(["report", "--params", str(f), "--rtt", "1us..9us"]))
    assert (cfg.rtt_min, cfg.rtt_max) == (1e-6, 9e-6)


def test_report_refuses_a_model_it_does_not_draw(capsys, tmp_path):
    from qcnmodel.cli import main

    with pytest.raises(SystemExit) as exc:  # refused by the parser: the help does not offer it
        main(["report", "--model", "dcqcn", "--out", str(tmp_path / "r")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--model: this command takes qcn, not 'dcqcn'" in err
    assert "qcnmodel margins --model dcqcn" in err
    assert not (tmp_path / "r").exists()
