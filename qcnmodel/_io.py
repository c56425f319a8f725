"""Output helpers shared by every writer: JSON-safe values and atomic file writes.

* :func:`to_jsonable` is the one JSON cleaner of the package: numpy scalars and arrays become
  Python values, NaN becomes ``None`` and infinities the strings ``"inf"`` / ``"-inf"``
  (JSON has no infinity; a margin of a loop that never crosses 0 dB *is* infinite).
* :func:`atomic_path` yields a temporary path beside the target and renames it over the
  target only when the writer finished, so a reader never sees a half-written file. The
  file gets the mode an ordinary ``open(target, "w")`` would give it: an existing target's
  own mode, else ``0o666`` less the process's umask.
* :func:`atomic_dir` does the same for a folder of outputs: the writer fills a temporary
  folder beside the target, whose files move into the target only when all are written, so
  an interrupted run (Ctrl-C, an error) leaves the target as it was, never part of a set.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["NETCDF_SUFFIXES", "atomic_dir", "atomic_path", "check_suffix", "moved_paths",
           "to_jsonable"]  # fmt: skip

#: the file-name suffixes of a netCDF file (a name without a suffix is accepted too)
NETCDF_SUFFIXES = (".nc", ".nc4", ".netcdf")


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats into JSON-safe values.

    Infinite values become the strings ``"inf"`` / ``"-inf"``; NaN becomes ``None``.
    """
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    return obj


def check_suffix(path, allowed, field: str = "path", kind: str = "netCDF") -> Path:
    """``path`` as a Path; a ValueError naming ``field`` when its suffix (any case) is not
    one of ``allowed``, so that a writer never puts one format under another's name (a
    ``.csv`` holding netCDF). A name without a suffix is accepted."""
    p = Path(path)
    if p.suffix and p.suffix.lower() not in allowed:
        raise ValueError(f"{field}: a {kind} file is named *{', *'.join(allowed)} (or without "
                         f"a suffix), got {str(p)!r}")  # fmt: skip
    return p


@contextlib.contextmanager
def atomic_path(target, suffix: str | None = None):
    """Context manager yielding a temporary path in ``target``'s folder; on success it is
    renamed over ``target`` (atomic on POSIX), on error it is removed.

    Parameters
    ----------
    target : str or Path
        The file to write.
    suffix : str, optional
        Suffix of the temporary file (default: the target's own, so that writers choosing a
        format by suffix still see it).
    """
    target = Path(target)
    sfx = target.suffix if suffix is None else suffix
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=f".tmp{sfx}", dir=target.parent
        )
    except OSError as exc:
        raise _about(exc, target) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.is_file() and not tmp_path.is_symlink():
            os.chmod(tmp_path, _file_mode(target))
        os.replace(tmp_path, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        if isinstance(exc, OSError):
            raise _about(exc, target) from None
        raise


@contextlib.contextmanager
def atomic_dir(target):
    """Context manager yielding a temporary folder beside the folder ``target``; on success
    its contents move into ``target``, on error (or an interrupt) it is removed and
    ``target`` is left as it was.

    A ``target`` that does not exist is the temporary folder renamed into place (atomic on
    POSIX); in an existing one each written file replaces its namesake (atomic per file) and
    the other files of ``target`` stay.

    Parameters
    ----------
    target : str or Path
        The output folder (created when missing; its parent must exist).
    """
    target = Path(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.parent))  # fmt: skip
    except OSError as exc:
        raise _about(exc, target) from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's own mode is 0o700
        if not target.exists():
            os.rename(tmp, target)
        else:
            _merge(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _about(exc, target) from None
        raise
    shutil.rmtree(tmp, ignore_errors=True)  # what is left of it after a merge


def moved_paths(value, tmp, target):
    """``value`` with each path (a string) inside the folder ``tmp`` read inside ``target``
    instead, in lists and dicts too: what a writer into :func:`atomic_dir`'s temporary folder
    returns, once that folder has moved to ``target``."""
    if isinstance(value, dict):
        return {k: moved_paths(v, tmp, target) for k, v in value.items()}
    if isinstance(value, list):
        return [moved_paths(v, tmp, target) for v in value]
    if isinstance(value, str) and value.startswith(str(tmp) + os.sep):
        return str(Path(target) / os.path.relpath(value, tmp))
    return value


def _merge(src: Path, dst: Path) -> None:
    """Move the entries of the folder ``src`` into the existing folder ``dst`` (files replace
    their namesakes; sub-folders merge)."""
    for entry in src.iterdir():
        there = dst / entry.name
        if entry.is_dir() and not entry.is_symlink() and there.is_dir():
            _merge(entry, there)
        else:
            if entry.is_file() and not entry.is_symlink():
                os.chmod(entry, _file_mode(there))
            os.replace(entry, there)


def _file_mode(target: Path) -> int:
    """The permission bits for a file written at ``target``: those of the regular file it
    replaces, else ``0o666`` less the umask (the temporary file's own are ``0o600``)."""
    import stat

    with contextlib.suppress(OSError):
        st = os.stat(target)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system tells it
    (``/proc/self/status``); else set and restored at once."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _about(exc: OSError, target: Path) -> OSError:
    """``exc`` naming ``target`` where it named the hidden temporary file (or its pattern):
    the user asked for ``target`` and has never heard of the other name."""
    if exc.filename is not None and Path(str(exc.filename)).name.startswith(f".{target.name}."):
        return OSError(exc.errno, exc.strerror, str(target))
    return exc
