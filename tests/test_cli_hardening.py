"""Every input gets an answer: a bad value exits 2 with a message naming the field (never a
traceback), Ctrl-C exits 130 with one line, outputs are checked before work and written
atomically, and no flag allocates without bound."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from qcnmodel import config
from qcnmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_grid_limit_is_checked_before_the_grid_is_built(monkeypatch):
    # the limit is the config's: lowering it refuses a grid the default accepts
    from qcnmodel.studies.sweep import parse_grid_spec

    assert len(parse_grid_spec("w=1..2:50")[1]) == 50
    monkeypatch.setitem(config.defaults, "studies.max_sweep_points", 10)
    with pytest.raises(ValueError, match="above the limit of 10 points"):
        parse_grid_spec("w=1..2:50")
    with pytest.raises(ValueError, match="grid: 12 points"):
        from qcnmodel.studies.sweep import sweep

        sweep(lambda **p: {}, {"a": [1, 2, 3], "b": [1, 2, 3, 4]})


@pytest.mark.parametrize("command", ["simulate", "sweep", "compare", "report", "margins"])
def test_out_into_a_missing_or_existing_directory_is_refused(command, tmp_path, capsys):
    base = {
        "simulate": ["simulate", "--scenario", "og-hotspot"],
        "sweep": ["sweep", "--model", "qcn", "--grid", "rtt=10us"],
        "compare": ["compare", "--scenario", "og-hotspot", "--protocols", "qcn"],
        "report": ["report"],
        "margins": ["margins"],
    }[command]
    suffix = {"simulate": ".nc", "sweep": ".nc", "margins": ".json"}.get(command, "")
    missing = tmp_path / "no" / f"out{suffix}"
    assert main([*base, "--out", str(missing)]) == 2
    assert "does not exist" in _err(capsys)
    if suffix:  # a file output onto an existing directory
        d = tmp_path / f"dir{suffix}"
        d.mkdir()
        assert main([*base, "--out", str(d)]) == 2
        assert "existing directory" in _err(capsys)
    else:  # a directory output onto an existing file
        f = tmp_path / "file"
        f.write_text("x")
        assert main([*base, "--out", str(f)]) == 2
        assert "not a directory" in _err(capsys)


def test_out_into_a_read_only_directory_is_refused(tmp_path, capsys, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.access(ro, os.W_OK):  # root ignores the mode: simulate the answer the kernel gives
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, m: False if Path(p) == ro else real(p, m))
    assert main(["margins", "--out", str(ro / "m.json")]) == 2
    assert "not writable" in _err(capsys)


@pytest.mark.slow  # two trajectory boundaries (~35 s on a slow 2-core machine)
def test_margins_ps_1_works(capsys):
    # sampling every frame: two and ten flows hold a standing queue below qeq in the model
    # (the packets: 10.6 KB at N = 10, docs/validation.md), with CNMs that hold them at C/N
    # (a balance without CNMs, once taken for the equilibrium, is none)
    for flows in ("2", "10"):
        assert main(["margins", "--ps", "1", "--flows", flows, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["stable"] in (True, False)
        fp = out["fixed_point"]
        assert 0 < fp["q"] < 26000 and fp["cnm_probability"] > 1e-4


def test_margins_out_is_written_atomically(tmp_path, capsys):
    target = tmp_path / "m.json"
    assert main(["margins", "--out", str(target), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(target.read_text()) == printed
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # no temporary left


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    import qcnmodel.cli.margins as margins

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(margins, "run", interrupted)
    assert main(["margins"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip() == "qcnmodel: interrupted"


#: a child with the default SIGINT handler (a background shell starts children ignoring it)
_INT_CHILD = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
              "from qcnmodel.cli import main; sys.exit(main())")  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_on_a_real_sweep_exits_130_and_keeps_the_points(tmp_path, jobs):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "s.nc"
    args = ["sweep", "--scenario", "og-hotspot", "--grid", "seed=0..7:8", "--duration", "1s",
            "--jobs", jobs, "--out", str(out), "--quiet"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", _INT_CHILD, *args], env=env,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    log = Path(str(out) + ".partial") / "points.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and log.read_text().strip()):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and err.strip() == "qcnmodel: interrupted"
    kept = len(log.read_text().splitlines())
    assert 1 <= kept < 8  # finished points are kept
    assert main(args) == 0  # the rerun finishes the rest


def _poly(a, b):
    return {"y": a * 10 + b}


CALLS = []


def _counted(a, b):
    CALLS.append((a, b))
    return _poly(a, b)


def _checkpoint(tmp_path, lines):
    from qcnmodel.studies.sweep import sweep

    d = tmp_path / "cp"
    sweep(_counted, {"a": [1, 2], "b": [3]}, checkpoint=d)
    log = d / "points.jsonl"
    log.write_text(lines(log.read_text()))
    return d


def test_malformed_checkpoint_line_is_a_clear_error(tmp_path):
    from qcnmodel.studies.sweep import sweep

    d = _checkpoint(tmp_path, lambda text: '{"x": 1}\n' + text)
    with pytest.raises(ValueError, match=r"points.jsonl, line 1: not a sweep record"):
        sweep(_counted, {"a": [1, 2], "b": [3]}, checkpoint=d)
    d2 = _checkpoint(tmp_path / "2", lambda text: "garbage\n" + text)
    with pytest.raises(ValueError, match=r"line 1: not a sweep record \(not JSON\)"):
        sweep(_counted, {"a": [1, 2], "b": [3]}, checkpoint=d2)


def test_a_cut_last_line_does_not_swallow_the_next_record(tmp_path):
    from qcnmodel.studies.sweep import sweep

    # keep the first record and half of the second, as a crash mid-write leaves it
    d = _checkpoint(tmp_path, lambda text: text.splitlines()[0] + "\n" + text.splitlines()[1][:9])
    CALLS.clear()
    ds = sweep(_counted, {"a": [1, 2], "b": [3]}, checkpoint=d)
    assert CALLS == [(2, 3)]  # only the cut point is recomputed
    assert ds["y"].values.ravel().tolist() == [13, 23]
    # the new record starts on its own line: a third run recomputes nothing
    CALLS.clear()
    sweep(_counted, {"a": [1, 2], "b": [3]}, checkpoint=d)
    assert CALLS == []


def test_two_sweeps_on_one_checkpoint_the_second_is_refused(tmp_path):
    from qcnmodel.studies.sweep import sweep

    started, release = threading.Event(), threading.Event()

    def slow(a):
        started.set()
        release.wait(10)
        return {"y": a}

    d = tmp_path / "cp"
    t = threading.Thread(target=lambda: sweep(slow, {"a": [1]}, checkpoint=d))
    t.start()
    try:
        assert started.wait(10)
        with pytest.raises(ValueError, match="in use by another sweep"):
            sweep(slow, {"a": [1]}, checkpoint=d)
    finally:
        release.set()
        t.join(10)
    # once the first finished, the lock is free again
    assert sweep(slow, {"a": [1]}, checkpoint=d)["y"].item() == 1


def test_two_sweep_processes_on_one_out_do_not_corrupt_it(tmp_path):
    # two processes writing the same --out at once: one runs, the other is refused (exit 2),
    # and the file is a complete dataset
    import xarray as xr

    out = tmp_path / "same.nc"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "qcnmodel", "sweep", "--model", "fopdt", "--grid",
            "rtt=10us..100us:30", "--out", str(out), "--quiet"]  # fmt: skip
    procs = [subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True) for _ in "ab"]
    results = [(p.wait(timeout=240), p.stderr.read()) for p in procs]
    codes = sorted(rc for rc, _ in results)
    assert codes in ([0, 0], [0, 2]), results
    for rc, err in results:
        assert "Traceback" not in err
        if rc == 2:
            assert "in use by another sweep" in err
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert ds.sizes["rtt"] == 30 and bool(ds["phase_margin_deg"].notnull().all())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_valid_edge_cases_work(capsys, tmp_path):
    assert main(["margins", "--rtt", "0.5us", "--flows", "1"]) == 0
    assert main(["margins", "--rtt", "1s"]) == 0  # the largest loop delay accepted
    out = tmp_path / "e.nc"
    assert main(["sweep", "--model", "qcn", "--rtt", "10us", "--flows", "1..2:2",
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()


def test_the_margins_docstring_examples_run(capsys, monkeypatch):
    import shlex

    import qcnmodel.cli.margins as margins
    from qcnmodel import config
    from qcnmodel.analysis import boundary

    # the DCQCN example's every-flow runs searched over 20-200 us (the validated 25-100 us and
    # a rung beyond), not 5 us .. 1 ms: the same stages (search, band, runs at the point) at a
    # few runs per rung; its searches memoised apart from other tests'
    monkeypatch.setitem(config.defaults, "analysis.runs_rtt_search", (20e-6, 200e-6))
    monkeypatch.setattr(boundary, "_MEMO", {})
    lines = [ln.strip() for ln in margins.__doc__.splitlines()]
    examples = [ln for ln in lines if ln.startswith("qcnmodel margins")]
    assert len(examples) >= 3
    for ex in examples:
        assert main(shlex.split(ex)[1:]) == 0, ex
        _err(capsys)


def test_a_run_shorter_than_the_default_bin_works(capsys):
    argv = ["simulate", "--scenario", "og-hotspot", "--set", "n_nodes=2", "--duration", "100us",
            "--json", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["duration_s"] == pytest.approx(100e-6)


def test_a_closed_pipe_ends_quietly(monkeypatch, capsys):
    # `qcnmodel scenarios | head -1`: the reader leaves; no "error: Broken pipe", status 0
    from qcnmodel.cli import main as cli_main

    class Closed:
        def write(self, _text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            raise ValueError("no descriptor")

    monkeypatch.setattr("sys.stdout", Closed())
    assert cli_main(["scenarios"]) == 0
    assert "Broken pipe" not in capsys.readouterr().err
