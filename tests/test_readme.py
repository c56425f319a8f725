"""The README's Python example runs as written, and its commands exist."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

README = Path(__file__).resolve().parents[1] / "README.md"


def test_python_example_runs():
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no Python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_quick_start_commands_are_the_ci_commands():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = "pip install -e '.[dev]' && pytest"
    assert test_cmd in text and test_cmd in ci
    assert "qcnmodel report --out report" in text


def test_documented_subcommands_exist():
    from qcnmodel.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in (
        "report",
        "margins",
        "check",
        "sweep",
        "simulate",
        "scenarios",
        "validate",
        "compare",
        "figures",
    ):
        assert name in sub.choices, name
