"""``simulate`` and simulator ``sweep`` say on stderr, before they start, how long their runs
may take when that may exceed half a minute: the events (an upper estimate from the offered
load), a wall-time range from the cost per event, and the workers it is divided by. The runs
are not made: the simulator (or the sweep) is replaced by a stop after the line.

The expected events come from the scenario's description: og-hotspot offers 10 nodes x 85 %
of 10 Gb/s in 1500-byte frames, and the estimate is 6 events per offered frame and one per
1 ms trace bin (:func:`qcnmodel.sim.engines.estimate_events`).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from qcnmodel.cli import main

OG_FRAMES_PER_S = 10 * 0.85 * 10e9 / (8 * 1500)


def _og_events(seconds: float) -> float:
    return 6 * OG_FRAMES_PER_S * seconds + seconds / 1e-3


def _stop(*a, **k):
    raise KeyboardInterrupt  # the work would start here


@pytest.fixture
def no_runs(monkeypatch):
    import qcnmodel.sim.api as api
    import qcnmodel.studies.sweep as sweep

    monkeypatch.setattr(api, "simulate", _stop)
    monkeypatch.setattr(sweep, "sweep", _stop)


def test_a_short_run_starts_without_a_word(no_runs, capsys):
    assert main(["simulate", "--scenario", "og-hotspot", "--duration", "100ms"]) == 130
    assert "may take" not in capsys.readouterr().err


def test_a_long_run_says_its_events_and_time_first(no_runs, capsys):
    from qcnmodel.studies import sim_workload as w

    assert main(["simulate", "--scenario", "og-hotspot", "--duration", "1000s"]) == 130
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "may take" in x]
    assert len(lines) == 1
    events = _og_events(1000.0)
    lo = events * w.EVENTS_PER_ESTIMATE[0] * w.S_PER_EVENT[0]
    hi = events * w.EVENTS_PER_ESTIMATE[1] * w.S_PER_EVENT[1]
    assert lines[0].startswith(f"qcnmodel simulate: this run may take {w.range_text(lo, hi)} "
                               "on 1 worker: ")  # fmt: skip
    assert f"at most {events:.3g} events" in lines[0] and "48-180 ns each" in lines[0]
    assert "--duration" in lines[0]


def test_quiet_says_nothing(no_runs, capsys):
    args = ["simulate", "--scenario", "og-hotspot", "--duration", "1000s", "--quiet"]
    assert main(args) == 130
    assert "may take" not in capsys.readouterr().err


def test_a_network_of_many_flows_costs_more_per_event(no_runs, capsys):
    from qcnmodel.studies import sim_workload as w

    args = ["simulate", "--scenario", "og-hotspot", "--duration", "1s", "--set", "n_nodes=300"]
    assert main(args) == 130
    line = capsys.readouterr().err
    assert f"more than {w.LARGE_NETWORK_FLOWS:,} flows: {300 * 299:,}" in line


def test_a_simulator_sweep_divides_by_its_workers(no_runs, capsys, tmp_path):
    from qcnmodel.studies import sim_workload as w

    out = str(tmp_path / "s.nc")
    args = ["sweep", "--scenario", "og-hotspot", "--grid", "seed=0,1,2", "--duration", "100s",
            "--jobs", "2", "--out", out]  # fmt: skip
    assert main(args) == 130
    line = [x for x in capsys.readouterr().err.splitlines() if "may take" in x][0]
    workers = min(2, os.cpu_count() or 1)
    events = 3 * _og_events(100.0)
    lo = events * w.EVENTS_PER_ESTIMATE[0] * w.S_PER_EVENT[0] / workers
    hi = events * w.EVENTS_PER_ESTIMATE[1] * w.S_PER_EVENT[1] / workers
    plural = "s" if workers > 1 else ""
    assert line.startswith(f"qcnmodel sweep: its 3 simulator runs may take "
                           f"{w.range_text(lo, hi)} on {workers} worker{plural}: ")  # fmt: skip
    assert f"at most {events:.3g} events" in line


def test_a_short_simulator_sweep_starts_without_a_word(no_runs, capsys, tmp_path):
    args = ["sweep", "--scenario", "og-hotspot", "--grid", "seed=0,1", "--duration", "10ms",
            "--out", str(tmp_path / "s.nc")]  # fmt: skip
    assert main(args) == 130
    assert "may take" not in capsys.readouterr().err


def test_too_large_a_sweep_is_refused_before_its_values_are_checked(monkeypatch, capsys,
                                                                   tmp_path):  # fmt: skip
    import qcnmodel.studies.points as points

    def check_grid(*a, **k):
        raise AssertionError("the grid's values were checked before its size")

    monkeypatch.setattr(points, "check_grid", check_grid)
    out = str(tmp_path / "s.nc")
    for what in (["--scenario", "og-hotspot", "--grid", "n_nodes=2..1000:999", "--grid",
                  "seed=0..9:10"],
                 ["--model", "fopdt", "--grid", "n_flows=1..1000:1000", "--grid", "w=1..10:10"]
                 ):  # fmt: skip
        args = ["sweep", *what, "--grid", "rtt=1us..1ms:1000", "--out", out]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "grid: " in err and "points (" in err and "studies.max_sweep_points" in err
        assert "Traceback" not in err


def test_the_offered_load_is_read_as_the_compiled_network_sums_it():
    """The estimate reads the network's description (compiling a large one takes seconds):
    its offered load and flows equal the compiled network's, for every scenario."""
    from qcnmodel.sim.network.compile import compile_network
    from qcnmodel.sim.scenarios import SCENARIOS
    from qcnmodel.studies.sim_workload import spec_load

    for name, sc in SCENARIOS.items():
        spec = sc.build()
        net = compile_network(spec)
        offered, flows = spec_load(spec)
        assert offered == pytest.approx(float(np.sum(net.offered_bps)), rel=1e-12), name
        assert flows == net.n_flows, name


def test_a_long_comparison_says_the_sum_over_its_protocols(monkeypatch, capsys, tmp_path):
    import qcnmodel.studies.compare as compare
    from qcnmodel.studies import sim_workload as w

    monkeypatch.setattr(compare, "compare", _stop)
    out = str(tmp_path / "cmp")
    args = ["compare", "--scenario", "og-hotspot", "--protocols", "qcn,none,dcqcn",
            "--duration", "1000s", "--out", out]  # fmt: skip
    assert main(args) == 130
    lines = [x for x in capsys.readouterr().err.splitlines() if "may take" in x]
    assert len(lines) == 1
    events = 3 * _og_events(1000.0)  # the same offered load under each protocol
    lo = events * w.EVENTS_PER_ESTIMATE[0] * w.S_PER_EVENT[0]
    hi = events * w.EVENTS_PER_ESTIMATE[1] * w.S_PER_EVENT[1]
    assert lines[0].startswith(f"qcnmodel compare: its 3 runs may take {w.range_text(lo, hi)} ")
    assert main([*args, "--quiet"]) == 130
    assert "may take" not in capsys.readouterr().err
    # a short comparison starts without a word
    assert main(["compare", "--scenario", "og-hotspot", "--protocols", "qcn,none",
                 "--duration", "50ms", "--out", out]) == 130  # fmt: skip
    assert "may take" not in capsys.readouterr().err
