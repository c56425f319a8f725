"""``qcnmodel validate``: end to end, quick pairs without the deck runs."""

import json

from qcnmodel.cli import main

COLUMNS = {"quantity", "parameters", "model", "simulated", "error", "tolerance",
           "tolerance_reason", "passed"}  # fmt: skip


def test_validate_quick_json(tmp_path, capsys):
    code = main(["validate", "--quick", "--no-decks", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert out["checks"] == len(out["rows"]) == out["passed"] + out["failed"]
    assert code == (0 if out["failed"] == 0 else 1)
    for row in out["rows"]:
        assert COLUMNS <= set(row)
        assert isinstance(row["passed"], bool)
        assert row["tolerance_reason"]
    md = (tmp_path / "validation.md").read_text()
    assert "## Comparisons" in md and "## Findings" in md
    assert (tmp_path / "validation.html").exists()
    assert any(p.suffix == ".png" for p in (tmp_path / "figures").iterdir())
