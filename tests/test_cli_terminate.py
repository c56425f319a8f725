"""SIGTERM (a CI job cancelled, ``timeout``, ``docker stop``) stops a command as Ctrl-C does:
the atomic writers' temporary folders are removed, one line on stderr, exit 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")


def _hidden(folder, name):
    return [p.name for p in folder.iterdir() if p.name.startswith(f".{name}.")]


def test_sigterm_to_the_process_group_leaves_no_temporary_folder(tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    argv = [sys.executable, "-m", "qcnmodel", "report", "--flows", "1..20", "--rtt",
            "10us..500us", "--out", "rep", "--no-packet", "--quiet"]  # fmt: skip
    # its own process group, signalled as a whole, as `timeout` and CI runners do
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _hidden(tmp_path, "rep") and proc.poll() is None:
            assert time.monotonic() < deadline, "the report never started writing"
            time.sleep(0.2)
        assert proc.poll() is None, "the report finished before it could be terminated"
        time.sleep(1.0)  # inside the work, figures being written
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 143, (proc.returncode, err)
    assert err.strip().splitlines()[-1] == "qcnmodel: terminated", err
    assert "Traceback" not in err and "leaked" not in err, err
    assert _hidden(tmp_path, "rep") == [] and not (tmp_path / "rep").exists()


def test_a_forked_child_ends_as_sigterm_would(tmp_path):
    """The handler is inherited by forked workers; there SIGTERM ends the process (a pool
    stops its workers so) instead of raising in it."""
    code = (
        "import os, signal, time\n"
        "from qcnmodel.cli import terminate_as_interrupt\n"
        "terminate_as_interrupt()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        time.sleep(30)\n"
        "    except BaseException:\n"
        "        os._exit(5)\n"
        "    os._exit(0)\n"
        "time.sleep(0.5)\n"
        "os.kill(pid, signal.SIGTERM)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "True", r.stdout + r.stderr
