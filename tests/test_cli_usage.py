"""Command-line usage errors: one line on stderr naming the flag, exit status 2."""

from __future__ import annotations

import pytest

from qcnmodel.cli import main

CASES = [
    (["simulate", "--scenario", "og-hotspot", "--duration"], "--duration"),
    (["simulate", "--scenario", "og-hotspot", "--protocol"], "--protocol"),
    (["check", "--flows"], "--flows"),
    (["sweep", "--model", "qcn", "--grid"], "--grid"),
    (["sweep", "--model", "qcn", "--scenario", "og-hotspot"], "--scenario"),
    (["compare", "--scenario", "og-hotspot"], "--protocols"),
    (["margins", "--bogus"], "--bogus"),
    (["report", "--nope", "1"], "--nope"),
    (["nosuch"], "nosuch"),
]


@pytest.mark.parametrize(("argv", "flag"), CASES)
def test_usage_error_is_one_line_naming_the_flag_exit_2(argv, flag, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("qcnmodel") and "error:" in lines[0] and flag in lines[0]
    assert "Traceback" not in err
