"""`qcnmodel figures` regenerates captioned figures deterministically."""

import hashlib

from qcnmodel.cli import main


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_regenerate_is_deterministic(tmp_path, capsys):
    out = tmp_path / "figs"
    assert main(["figures", "--out", str(out), "--only", "analysis", "--quiet"]) == 0
    first = {p.name: digest(p) for p in out.glob("*.png")}
    index = (out / "README.md").read_text()
    assert len(first) >= 5 and all(f"`{name}`" in index for name in first)
    assert main(["figures", "--out", str(out), "--only", "analysis", "--quiet"]) == 0
    assert {p.name: digest(p) for p in out.glob("*.png")} == first


def test_unknown_group(tmp_path, capsys):
    assert main(["figures", "--out", str(tmp_path), "--only", "nope", "--quiet"]) == 2
    assert "unknown figure group" in capsys.readouterr().err
