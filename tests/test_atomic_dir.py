"""Folders of outputs are written atomically: all their files appear together, or none.

:func:`qcnmodel._io.atomic_dir` fills a temporary folder beside the target and moves its
files in at the end; ``qcnmodel compare --out DIR`` writes through it, so a run interrupted
while it draws (Ctrl-C) leaves DIR as it was instead of with some of its files.
"""

import os
import types
from pathlib import Path

import pytest

from qcnmodel._io import atomic_dir


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_new_folder_appears_whole(tmp_path):
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("a")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.txt").write_text("b")
        assert not target.exists()
    assert (target / "a.txt").read_text() == "a" and (target / "sub" / "b.txt").exists()
    assert _leftovers(tmp_path) == []
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o777 & ~mask


def test_an_existing_folder_keeps_its_other_files(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("old")
    (target / "a.txt").write_text("old")
    with atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("new")
    assert (target / "a.txt").read_text() == "new" and (target / "keep.txt").read_text() == "old"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("exists", [False, True])
def test_an_interrupt_leaves_the_target_as_it_was(tmp_path, exists):
    target = tmp_path / "out"
    if exists:
        target.mkdir()
        (target / "a.txt").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_dir(target) as tmp:
            (tmp / "a.txt").write_text("new")
            raise KeyboardInterrupt
    assert _leftovers(tmp_path) == []
    if exists:
        assert [p.name for p in target.iterdir()] == ["a.txt"]
        assert (target / "a.txt").read_text() == "old"
    else:
        assert not target.exists()


def test_compare_output_is_all_or_nothing(tmp_path, monkeypatch):
    """Interrupted after two of its figures, a comparison leaves no file of the set."""
    import qcnmodel.studies.compare as compare
    import qcnmodel.studies.compare_plots as plots

    def draw(cmp, out_dir, stem):
        files = [Path(out_dir) / f"{stem}_{k}.png" for k in ("queue", "throughput")]
        for f in files:
            f.write_bytes(b"png")
        return [(f, "caption") for f in files]

    def interrupted(cmp):
        raise KeyboardInterrupt

    cmp = types.SimpleNamespace(scenario="og-hotspot", protocols=("qcn", "ecm"))
    monkeypatch.setattr(plots, "draw_comparison", draw)
    monkeypatch.setattr(compare, "summary_markdown", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compare.write(cmp, tmp_path / "cmp")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(compare, "summary_markdown", lambda cmp: "| table |\n")
    files = compare.write(cmp, tmp_path / "cmp")
    assert [p.name for p, _ in files] == ["compare_og-hotspot_queue.png",
                                          "compare_og-hotspot_throughput.png",
                                          "compare_og-hotspot_summary.md"]  # fmt: skip
    assert all(p.parent == tmp_path / "cmp" and p.is_file() for p, _ in files)
