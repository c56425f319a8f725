""":func:`qcnmodel._io.atomic_path` errors name the file the user asked for, not the hidden
temporary file (the message was "/proc/.x.json.5eok68hx.tmp.json: No such file or
directory"), and leave no temporary file behind."""

from __future__ import annotations

import errno

import pytest

from qcnmodel._io import atomic_path


def test_a_folder_that_cannot_hold_the_file_names_the_target(tmp_path):
    target = tmp_path / "missing" / "x.json"
    with pytest.raises(FileNotFoundError) as info, atomic_path(target):
        pass
    assert info.value.filename == str(target)


def test_a_failed_write_names_the_target_and_cleans_up(tmp_path):
    target = tmp_path / "y.json"
    with pytest.raises(OSError) as info, atomic_path(target) as tmp:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp))
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []


def test_other_errors_pass_unchanged(tmp_path):
    with pytest.raises(OSError) as info, atomic_path(tmp_path / "z.json"):
        raise OSError(errno.EIO, "I/O error", "/dev/other")
    assert info.value.filename == "/dev/other"
    with pytest.raises(KeyError), atomic_path(tmp_path / "z.json"):
        raise KeyError("k")
    assert list(tmp_path.iterdir()) == []


def test_a_new_file_gets_the_umask_mode_and_a_replaced_one_keeps_its_own(tmp_path):
    # the temporary file's 0600 became the output's mode, and a replaced file lost its own
    import os
    import stat

    old = os.umask(0o027)
    try:
        new = tmp_path / "new.json"
        with atomic_path(new) as tmp:
            tmp.write_text("{}")
        assert stat.S_IMODE(new.stat().st_mode) == 0o640
        kept = tmp_path / "kept.json"
        kept.write_text("old")
        kept.chmod(0o604)
        with atomic_path(kept) as tmp:
            tmp.write_text("new")
        assert kept.read_text() == "new" and stat.S_IMODE(kept.stat().st_mode) == 0o604
    finally:
        os.umask(old)
