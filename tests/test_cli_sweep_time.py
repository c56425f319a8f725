"""A ``--model`` sweep's run time is estimated before it starts: refused above ``--max-time``
(default a day), said on stderr above a minute."""

from __future__ import annotations

import argparse
import time

import pytest

from qcnmodel.cli import main


@pytest.fixture
def no_sweep(monkeypatch):
    """A sweep that would start fails the test at once instead of running for months."""
    from qcnmodel.studies import sweep

    def started(*args, **kwargs):
        raise AssertionError("the sweep started without a run-time check")

    monkeypatch.setattr(sweep, "sweep", started)


def _nap(seconds=0.0, **point):
    time.sleep(seconds)
    return {"y": 1.0}


def test_a_million_point_qcn_sweep_is_refused_by_default(tmp_path, capsys, no_sweep, monkeypatch):
    # months of work on one process: refused naming the flag, before any checkpoint. A QCN
    # point takes 0.1-2 s on this machine, but in-process caches warmed by earlier tests of
    # the same worker can answer the timed points at once (the estimate then fell below a
    # day once): each timed point is held to at least 0.1 s, and one worker is asked for
    from qcnmodel.studies import points

    real = points.analysis_point

    def at_least_a_tenth(**kw):
        t0 = time.perf_counter()
        out = real(**kw)
        time.sleep(max(0.0, 0.1 - (time.perf_counter() - t0)))
        return out

    monkeypatch.setattr(points, "analysis_point", at_least_a_tenth)
    out = tmp_path / "s.nc"
    argv = ["sweep", "--model", "qcn", "--grid", "rtt=2us..1ms:1000:log", "--grid",
            "n_flows=1..1000:1000", "--out", str(out), "--quiet", "--jobs", "1"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "max-time: the sweep's estimated run time" in err, err
    assert "1,000,000 points" in err and "above --max-time 1440min" in err, err
    assert list(tmp_path.iterdir()) == []


def test_max_time_bounds_a_smaller_sweep(tmp_path, capsys, no_sweep):
    argv = ["sweep", "--model", "fopdt", "--grid", "rtt=10us..1ms:200:log", "--grid",
            "n_flows=1..100:100", "--out", str(tmp_path / "s.nc"), "--quiet",
            "--max-time", "1s"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "20,000 points" in err and "above --max-time 1s" in err, err
    assert list(tmp_path.iterdir()) == []


def test_max_time_is_for_model_sweeps(tmp_path, capsys, no_sweep):
    argv = ["sweep", "--scenario", "og-hotspot", "--grid", "seed=0,1", "--duration", "1ms",
            "--out", str(tmp_path / "s.nc"), "--max-time", "60s"]  # fmt: skip
    assert main(argv) == 2
    assert "max-time: bounds the estimated run time of a --model sweep" in capsys.readouterr().err


def test_the_estimate_follows_the_points_and_the_workers():
    from qcnmodel.cli.sweep import estimate_run_time

    grid = {"a": list(range(40)), "b": list(range(10))}
    seconds, per = estimate_run_time(_nap, {"seconds": 0.02}, grid, 2)
    assert per == pytest.approx(0.02, rel=0.5)
    assert seconds == pytest.approx(400 * per / 2)


def test_an_estimate_above_a_minute_is_said_and_bounded(capsys):
    from qcnmodel.cli.sweep import _check_run_time

    grid = {"a": list(range(100)), "b": list(range(100))}  # 10,000 points of 10 ms: ~100 s
    args = argparse.Namespace(max_time=None, scheduler=None)
    _check_run_time(args, _nap, {"seconds": 0.01}, grid, 1)
    err = capsys.readouterr().err
    assert "qcnmodel sweep: estimated run time" in err and "10,000 points" in err, err
    args = argparse.Namespace(max_time="30s", scheduler=None)
    with pytest.raises(ValueError, match=r"^max-time: .* above --max-time 30s"):
        _check_run_time(args, _nap, {"seconds": 0.01}, grid, 1)
    args = argparse.Namespace(max_time="30s", scheduler="tcp://10.0.0.5:8786")
    _check_run_time(args, _nap, {"seconds": 0.01}, grid, 1)  # a cluster: said, not refused
    assert "on one worker of the cluster" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"^max-time: "):
        _check_run_time(argparse.Namespace(max_time="5", scheduler=None), _nap, {}, grid, 1)
