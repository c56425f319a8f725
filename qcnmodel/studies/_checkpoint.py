"""Checkpoints of the sweeps: the finished points of a sweep in a folder (``sweep.json``
describes the sweep, ``points.jsonl`` holds one record per finished point, ``lock`` keeps
other sweeps out), so that an interrupted sweep resumes where it stopped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["open_checkpoint", "remove_checkpoint"]


def _key(point: dict[str, Any]) -> str:
    return json.dumps({k: _plain(v) for k, v in point.items()}, sort_keys=True)


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def open_checkpoint(directory: Path, func, grid, fixed, points):
    """Open (or resume) the checkpoint ``directory`` of a sweep: returns (the finished
    points' results by index, the log to append to, whether this call created it)."""
    meta = {
        "function": f"{func.__module__}.{func.__qualname__}",
        "grid": {k: [_plain(v) for v in vals] for k, vals in grid.items()},
        "fixed": {k: _plain(v) for k, v in fixed.items()},
    }
    meta_path = directory / "sweep.json"
    meta_text = json.dumps(meta, sort_keys=True, default=str)
    # the lock first: a second sweep on the same checkpoint is told so, and never reads the
    # description while the first one writes it
    lock = _lock(directory)
    try:
        created = not meta_path.exists()
        if not created:
            if meta_path.read_text() != meta_text:
                raise ValueError(
                    f"checkpoint: {directory} holds a different sweep (grid, fixed arguments "
                    "or function differ); use another directory or delete it"
                )
        else:
            meta_path.write_text(meta_text)
        results = _read_log(directory / "points.jsonl", points)
        log = open(directory / "points.jsonl", "a")
    except BaseException:
        lock.close()
        raise
    return results, _Log(log, lock), created


class _Log:
    """The checkpoint's append-only log and the lock that keeps other sweeps out of it."""

    def __init__(self, log, lock):
        self.log, self.lock = log, lock

    def write(self, text: str) -> None:
        self.log.write(text)

    def flush(self) -> None:
        self.log.flush()

    def close(self) -> None:
        self.log.close()
        self.lock.close()  # closing the file releases the flock

    def discard(self) -> None:
        """Delete the checkpoint's files while still holding its lock (forked workers that
        inherited the lock's file may outlive this call), then close; the folder goes too
        when that leaves it empty."""
        _delete(Path(self.lock.name).parent, self.close)


def remove_checkpoint(directory: str | Path) -> bool:
    """Delete a finished sweep's checkpoint ``directory`` (its ``sweep.json``, ``points.jsonl``
    and ``lock``; the directory itself when that leaves it empty).

    Call it once the result is saved: an interrupted sweep keeps its checkpoint, so a rerun
    resumes. Nothing is removed while another sweep holds the lock. Returns whether the
    checkpoint was removed.
    """
    directory = Path(directory)
    if not (directory / "sweep.json").exists():
        return False
    try:
        lock = _lock(directory)
    except ValueError:  # another sweep uses it now: leave it
        return False
    _delete(directory, lock.close)
    return True


def _delete(directory: Path, release) -> None:
    """Delete a checkpoint's files while its lock is held, then ``release()`` the lock, then
    the folder when that leaves it empty."""
    try:
        for name in ("points.jsonl", "sweep.json", "lock"):
            (directory / name).unlink(missing_ok=True)
    finally:
        release()
    try:
        directory.rmdir()
    except OSError:  # other files: not ours to delete
        pass


def _lock(directory: Path):
    """An exclusive lock on ``directory/lock`` (the directory made if missing); another sweep
    holding it is an error."""
    import fcntl

    for attempt in range(3):  # a finishing sweep may remove the directory in between
        directory.mkdir(parents=True, exist_ok=True)
        try:
            f = open(directory / "lock", "a+")
            break
        except FileNotFoundError:
            if attempt == 2:
                raise ValueError(
                    f"checkpoint: {directory} was removed three times by a "
                    "finishing sweep while this one opened it; run again"
                ) from None
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise ValueError(
            f"checkpoint: {directory} is in use by another sweep (the same --out or "
            "--checkpoint); wait for it, or give another --out"
        ) from None
    return f


def _read_log(log_path: Path, points) -> dict[int, dict[str, Any]]:
    """The finished points of a checkpoint log. A last line cut by an interruption (no
    newline after it, not JSON) is removed from the file, so the next record starts on its
    own line; any other line that is not a record is an error naming the file and the line."""
    results: dict[int, dict[str, Any]] = {}
    if not log_path.exists():
        return results
    text = log_path.read_text()
    lines = text.split("\n")
    cut = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # no newline after it: written when the run stopped
                cut = True
                continue
            raise ValueError(_bad_line(log_path, number, "not JSON")) from None
        ok = isinstance(rec, dict) and isinstance(rec.get("i"), int)
        if not (ok and isinstance(rec.get("key"), str) and isinstance(rec.get("out"), dict)):
            raise ValueError(_bad_line(log_path, number, "expected {'i': int, 'key': str, "
                                       "'out': {...}}"))  # fmt: skip
        i = rec["i"]
        if 0 <= i < len(points) and rec["key"] == _key(points[i]):
            results[i] = rec["out"]
    if cut:
        with open(log_path, "r+b") as f:
            data = f.read()
            f.truncate(data.rfind(b"\n") + 1)
    elif text and not text.endswith("\n"):
        with open(log_path, "a") as f:
            f.write("\n")
    return results


def _bad_line(path: Path, number: int, why: str) -> str:
    return (
        f"checkpoint: {path}, line {number}: not a sweep record ({why}); delete that line "
        f"(its point is recomputed) or the folder {path.parent} to start over"
    )
