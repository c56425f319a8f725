"""``qcnmodel validate``: JSON, report and exit status (a small plan; the real plans are
exercised by the other validation tests)."""

import json

import pytest

from qcnmodel.cli import main
from qcnmodel.validation import pairs as P

COLUMNS = {"quantity", "parameters", "model", "simulated", "error", "tolerance",
           "tolerance_reason", "passed", "key", "finding"}  # fmt: skip


@pytest.fixture
def small_plan(monkeypatch):
    from qcnmodel.validation import suite

    def tiny(quick):
        return [(P.check_equilibrium, (P.Case(10),), {"variants": [P.DEFAULT_VARIANT,
                                                                     "paper"]})]  # fmt: skip

    monkeypatch.setattr(suite, "plan", tiny)


def test_validate_json_names_the_default_variant_and_gates_on_regressions(
    small_plan, tmp_path, capsys, monkeypatch
):
    from qcnmodel.validation import findings

    code = main(["validate", "--quick", "--no-decks", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert out["default_variant"] == "packet"
    assert out["checks"] == len(out["rows"]) == out["passed"] + out["failed"]
    assert out["default_variant_rows"] == 2 and out["default_variant_passed"] == 2
    for row in out["rows"]:
        assert COLUMNS <= set(row)
        assert isinstance(row["passed"], bool) and row["tolerance_reason"]
    # the paper equations' drained queue is a regression unless it is a known disagreement
    paper_fails = [r for r in out["rows"] if not r["passed"]]
    assert paper_fails and all(r["model_variant"] == "paper" for r in paper_fails)
    assert code == (0 if out["regressions"] == 0 else 1)
    monkeypatch.setattr(findings, "KNOWN", [("equilibrium|*|paper", "F1")])
    monkeypatch.setitem(findings.FINDINGS, "F1", "the paper equations drain the queue")
    assert main(["validate", "--quick", "--no-decks", "--json", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "validation.md").read_text()
    assert "## Comparisons" in md and "## Findings" in md and "known (F1)" in md
    assert (tmp_path / "validation.html").exists()
