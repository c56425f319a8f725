"""``report`` reads a parameter file's ``[ranges]`` ``pm_threshold`` as ``check`` does: the
verdict inside the report is judged at it, and a bad value is refused (exit 2) instead of
being dropped unread."""

import pytest

from qcnmodel.cli import build_parser, main
from qcnmodel.cli.report import report_config


def _file(tmp_path, value) -> str:
    path = tmp_path / "p.toml"
    path.write_text(f'[ranges]\nrtt = "50us..500us"\nflows = "1..10"\npm_threshold = {value}\n')
    return str(path)


def test_the_files_threshold_judges_the_reports_verdict(tmp_path):
    cfg = report_config(build_parser().parse_args(["report", "--params", _file(tmp_path, 45)]))
    assert cfg.pm_threshold == 45.0


def test_without_one_the_default_holds(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('[ranges]\nrtt = "50us..500us"\n')
    cfg = report_config(build_parser().parse_args(["report", "--params", str(path)]))
    from qcnmodel import config

    assert cfg.pm_threshold == config.defaults["studies.check_pm_threshold"]


@pytest.mark.parametrize("value", ['"abc"', "95", "-1", '"30%"'])
def test_a_bad_threshold_is_refused_as_check_refuses_it(tmp_path, capsys, value):
    path = _file(tmp_path, value)
    assert main(["report", "--params", path, "--out", str(tmp_path / "r")]) == 2
    report_err = capsys.readouterr().err
    assert "pm_threshold" in report_err
    assert main(["check", path]) == 2  # the same file, the same refusal
    assert "pm_threshold" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
