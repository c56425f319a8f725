"""``qcnmodel figures --out DIR`` writes DIR atomically: an interrupted run leaves it as it
was; a finished one moves every figure and the index in (the returned paths are DIR's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcnmodel.studies import figures


def _group(name: str, interrupt: bool = False):
    """A figure group writing one file ``<name>.png``, then (``interrupt``) a Ctrl-C."""

    def draw(out_dir: Path):
        path = Path(out_dir) / f"{name}.png"
        path.write_bytes(b"\x89PNG new")
        if interrupt:
            raise KeyboardInterrupt
        return [(path, f"caption of {name}")]

    return draw


def test_an_interrupted_figures_run_leaves_its_folder_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setitem(figures.GROUPS, "analysis", _group("bode"))
    monkeypatch.setitem(figures.GROUPS, "packet", _group("packet", interrupt=True))
    only = ["analysis", "packet"]
    with pytest.raises(KeyboardInterrupt):
        figures.regenerate(tmp_path / "figs", only=only, progress=False)
    assert list(tmp_path.iterdir()) == []  # no folder, no temporary folder
    old = tmp_path / "old"
    old.mkdir()
    (old / "README.md").write_text("earlier index")
    (old / "bode.png").write_bytes(b"\x89PNG old")
    with pytest.raises(KeyboardInterrupt):
        figures.regenerate(old, only=only, progress=False)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["old"]
    assert sorted(q.name for q in old.iterdir()) == ["README.md", "bode.png"]
    assert (old / "bode.png").read_bytes() == b"\x89PNG old"
    assert (old / "README.md").read_text() == "earlier index"


def test_a_finished_run_moves_the_figures_and_keeps_the_other_index_entries(tmp_path, monkeypatch):
    monkeypatch.setitem(figures.GROUPS, "analysis", _group("bode"))
    out = tmp_path / "figs"
    out.mkdir()
    (out / "README.md").write_text("| `other.png` | kept |\n| `bode.png` | stale |\n")
    (out / "other.png").write_bytes(b"\x89PNG other")
    got = figures.regenerate(out, only=["analysis"], progress=False)
    assert got == [(out / "bode.png", "caption of bode")]
    assert sorted(q.name for q in tmp_path.iterdir()) == ["figs"]
    assert sorted(q.name for q in out.iterdir()) == ["README.md", "bode.png", "other.png"]
    assert (out / "bode.png").read_bytes() == b"\x89PNG new"
    index = (out / "README.md").read_text()
    assert "| `other.png` | kept |" in index and "| `bode.png` | caption of bode |" in index
    assert "stale" not in index
