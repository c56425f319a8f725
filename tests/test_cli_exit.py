"""The console script's exit (``qcnmodel.cli.exit_now``): the status, buffered output and the
exit handlers survive skipping the interpreter's teardown."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_exit_now_keeps_the_status_the_buffered_output_and_the_exit_handlers(tmp_path):
    mark, late = tmp_path / "handler-ran", tmp_path / "thread-done"
    code = textwrap.dedent(f"""
        import atexit, sys, threading, time
        from concurrent.futures import ThreadPoolExecutor
        from qcnmodel.cli import exit_now
        atexit.register(lambda: open({str(mark)!r}, "w").write("yes"))
        def work():
            time.sleep(0.3)
            open({str(late)!r}, "w").write("done")
        threading.Thread(target=work).start()  # a non-daemon thread still running
        ThreadPoolExecutor(1).submit(time.sleep, 0.1)  # an executor never shut down
        sys.stdout.write("buffered out")  # not flushed by hand
        sys.stderr.write("buffered err")
        exit_now(3)
        raise SystemExit(0)  # never reached
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 3
    assert r.stdout == "buffered out" and r.stderr == "buffered err"
    assert mark.read_text() == "yes"
    assert late.read_text() == "done"  # joined, as at a normal exit


def test_the_console_script_passes_its_status_and_its_whole_output_through_a_pipe():
    ok = subprocess.run([sys.executable, "-m", "qcnmodel", "margins", "--json"],
                        capture_output=True, text=True, timeout=300)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "phase_margin_deg" in json.loads(ok.stdout)  # the whole document arrived
    bad = subprocess.run([sys.executable, "-m", "qcnmodel", "margins", "--set", "qeq=-1"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert bad.returncode == 2 and "qeq" in bad.stderr
