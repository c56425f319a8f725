"""A damaged numba cache entry is detected on load, deleted and rebuilt with one stderr line.

Each run is a subprocess with its own ``NUMBA_CACHE_DIR`` (a fresh, temporary cache); the
compiled function is the simulator's random-number generator (quick to compile).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE = "from qcnmodel.sim import rng; print(repr(float(rng.uniform01(7, 11, 13))))"


def _run(cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip


def _damage(cache: Path, suffix: str, how: str) -> int:
    files = list(cache.rglob(f"*rng*{suffix}"))
    for f in files:
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2] if how == "truncate" else b"\\x00garbage" * 7)
    return len(files)


SLOW = pytest.mark.slow  # ~10 s each (three subprocesses with a compile each)


@pytest.mark.parametrize("suffix, how", [
    (".nbi", "truncate"),
    pytest.param(".nbc", "garbage", marks=SLOW),
    pytest.param(".nbi", "garbage", marks=SLOW),
    pytest.param(".nbc", "truncate", marks=SLOW),
])  # fmt: skip
def test_damaged_cache_is_rebuilt_with_one_warning(tmp_path, suffix, how):
    from qcnmodel.sim.rng import uniform01_py

    expected = repr(uniform01_py(7, 11, 13))  # the pure-Python twin of the compiled draw
    first = _run(tmp_path)
    assert first.stdout.strip() == expected
    assert "damaged" not in first.stderr
    assert _damage(tmp_path, suffix, how) >= 1
    second = _run(tmp_path)  # before the repair this raised (pickle / EOF errors)
    assert second.stdout.strip() == expected
    lines = [ln for ln in second.stderr.splitlines() if "damaged numba cache" in ln]
    assert len(lines) == 1, second.stderr
    third = _run(tmp_path)  # rebuilt: loads silently
    assert third.stdout.strip() == expected
    assert "damaged" not in third.stderr
