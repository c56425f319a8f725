"""Long runs in bounded memory: the kernel runs in segments with a moving trace window.

A run in segments must equal one long run bit for bit (the state carries over), and both must
equal the pure-Python oracle; traces that do not fit ``sim.max_trace_bytes`` are merged over
a stated number of bins, and a run whose metrics alone do not fit is refused, naming the flag.
"""

from __future__ import annotations

import numpy as np
import pytest
from simnets import chain, star

from qcnmodel import config
from qcnmodel.params import QCNParams
from qcnmodel.sim import engines
from qcnmodel.sim.kernel.state import TQ_MAX, TQ_ROWS
from qcnmodel.sim.network import compile_network

FAST = QCNParams(timer=1e-3, bc_limit=30000, drift_inc=1e6, drift_period=1e-3)
TABLES = ("TQ", "TG", "TFB", "TRP")


def _kw(net, end_ns, bin_ns, qcn=True):
    return dict(qcn=qcn, seed=5, end_ns=end_ns, bin_ns=bin_ns, measure_ns=(0, end_ns),
                traced_flows=np.arange(net.n_flows))  # fmt: skip


def _same(a, b):
    for name in TABLES:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.counters == b.counters
    assert np.array_equal(a.window_bytes, b.window_bytes)
    if a.HQ is None:
        assert b.HQ is None
    else:
        assert np.array_equal(a.HQ, b.HQ)


@pytest.mark.parametrize(
    "spec, bin_ns, qcn",
    [(star(), 20_000, True), (chain(), 7_000, True), (star(n=4), 3_000, False)],
    ids=["star-20us", "chain-7us", "star-3us-noqcn"],
)
def test_segments_equal_one_run_and_the_oracle(spec, bin_ns, qcn):
    net = compile_network(spec)
    kw = _kw(net, 2_000_000, bin_ns, qcn)
    one = engines.run("kernel", net, FAST, **kw)
    margin = engines.delivery_margin(net, bin_ns)
    n_bins = -(-2_000_000 // bin_ns)
    # segments of 1, 3 and 7 bins: the window moves 40+ times, the last segment is partial
    assert n_bins % 3 and n_bins % 7
    for seg in (1, 3, 7):
        cut = engines.run("kernel", net, FAST, segment_bins=seg, **kw)
        _same(one, cut)
    assert one.counters["frames_delivered"] > 500
    assert margin >= 2
    oracle = engines.run("oracle", net, FAST, **kw)
    _same(one, oracle)


def test_merged_traces_are_the_full_traces_merged():
    net = compile_network(star())
    kw = _kw(net, 2_000_000, 10_000)  # 200 bins
    full = engines.run("kernel", net, FAST, **kw)
    k = 3
    per_bin = engines.trace_bytes(net.n_ports, net.n_flows, 1)
    plan = engines.plan_traces(net, net.n_flows, 2_000_000, 10_000, segment_bins=10)
    window = per_bin * (plan.segment + plan.margin)
    # a limit that holds the hot rows, the window and a third of the bins (rounded up), with
    # the dataset built from them
    try:
        extra = per_bin * 67 * engines.DATASET_FACTOR
        hot = 8 * (TQ_ROWS + engines.HOT_WORK_ROWS) * 200  # the hot rows and their work
        config.defaults["sim.max_trace_bytes"] = hot + window + extra
        m = engines.run("kernel", net, FAST, segment_bins=10, **kw)
    finally:
        config.reset_defaults()
    assert m.factor == k
    last = list(range(k - 1, 200, k)) + [199]  # 66 full groups and a partial one of 2 bins
    assert np.array_equal(m.TG, full.TG[:, last])
    assert np.array_equal(m.TRP, full.TRP[..., last])
    q = full.TQ[..., last].copy()
    q[TQ_MAX] = np.stack([full.TQ[TQ_MAX, :, i : i + k].max(axis=-1) for i in range(0, 200, k)], -1)
    assert np.array_equal(m.TQ, q)
    fb = np.stack([full.TFB[:, i : i + k].sum(axis=-1) for i in range(0, 200, k)], -1)
    assert np.array_equal(m.TFB, fb)
    assert np.array_equal(m.HQ, full.HQ)  # the metrics still read every bin
    assert m.counters == full.counters


def test_long_run_traces_are_merged_with_one_stated_line(capsys):
    from qcnmodel.sim.api import _traced_flows, simulate
    from qcnmodel.sim.scenarios import get_scenario

    ref = simulate("og-hotspot", duration="20ms", bin_width="100us")
    net = compile_network(get_scenario("og-hotspot").build({}))
    n_tr = len(_traced_flows(net, None))
    plan = engines.plan_traces(net, n_tr, 20_000_000, 100_000, keep=False)
    per_bin = engines.trace_bytes(net.n_ports, n_tr, 1)
    try:  # the hot rows, the window (the whole run: 200 bins) and 70 more bins (as a dataset)
        config.defaults["sim.max_trace_bytes"] = plan.need + per_bin * 70 * engines.DATASET_FACTOR
        res = simulate("og-hotspot", duration="20ms", bin_width="100us")
    finally:
        config.reset_defaults()
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "max_trace_bytes" in ln]
    assert len(lines) == 1 and "--bin" in lines[0]
    k = res.dataset.attrs["bins_merged"]
    assert k > 1 and res.dataset.attrs["bin_width_requested_s"] == 1e-4
    assert res.dataset.attrs["bin_width_s"] == pytest.approx(k * 1e-4, rel=1e-12)
    assert k == 3 and res.dataset.sizes["time"] == 67
    assert res.summary() | {"wall_s": 0, "events_per_s": 0, "compile_s": 0} == ref.summary() | {
        "wall_s": 0, "events_per_s": 0, "compile_s": 0}  # fmt: skip
    # the total delivered bits are kept exactly by the merge
    w = np.diff(np.concatenate([[0.0], res.dataset["time"].values]))
    w0 = np.diff(np.concatenate([[0.0], ref.dataset["time"].values]))
    assert float((res.dataset["delivered_throughput"] * w).sum()) == pytest.approx(
        float((ref.dataset["delivered_throughput"] * w0).sum()), rel=1e-12
    )


def test_refusal_names_the_flag_and_allocates_nothing_big():
    import tracemalloc

    from qcnmodel.sim.api import simulate

    tracemalloc.start()
    with pytest.raises(ValueError, match=r"bin_width/duration: .*--bin.*--duration") as e:
        simulate("og-hotspot", duration="1s", bin_width="1ns", trace=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "sim.max_trace_bytes" in str(e.value)
    assert peak < 200 * 2**20  # refused up front: nothing near the 37 GiB estimate allocated


def test_long_run_keeps_a_small_window():
    net = compile_network(star())
    # 10^4 s at 1 ms: 10^7 bins; the window stays near WINDOW_BYTES
    plan = engines.plan_traces(net, net.n_flows, 10**13, 10**6, keep=False)
    per_bin = engines.trace_bytes(net.n_ports, net.n_flows, 1)
    assert per_bin * plan.segment <= engines.WINDOW_BYTES
    hot = 8 * (TQ_ROWS + engines.HOT_WORK_ROWS) * 10**7
    assert plan.need <= engines.WINDOW_BYTES + per_bin * plan.margin + hot


def test_fine_bins_stay_within_the_planned_memory():
    """The whole run, the hot port's metrics (recovery time) included, allocates no more than
    the plan that the memory budget checks (tracemalloc's peak against ``plan.need``)."""
    import tracemalloc

    from qcnmodel.sim.api import _traced_flows, simulate
    from qcnmodel.sim.scenarios import get_scenario

    over = {"n_nodes": 10, "hotspot_start": "1ms", "hotspot_stop": "3ms"}
    net = compile_network(get_scenario("og-hotspot").build(over))
    simulate("og-hotspot", duration="1ms", overrides=over, trace=False)  # warm, imports
    tracemalloc.start()
    r = simulate("og-hotspot", duration="40ms", bin_width="100ns", overrides=over, trace=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert r.metrics["recovery_time_s"] is not None  # the metric ran over 370k bins
    plan = engines.plan_traces(net, len(_traced_flows(net, None)), 40_000_000, 100, keep=False)
    assert plan.n_bins == 400_000 and peak <= plan.need


def test_auto_engine_runs_a_short_cold_run_on_the_oracle(monkeypatch, capsys):
    import xarray as xr

    from qcnmodel.sim.api import simulate
    from qcnmodel.sim.kernel import loop

    ref = simulate("og-hotspot", duration="2ms", bin_width="100us", engine="kernel")
    monkeypatch.setattr(engines, "kernel_is_cached", lambda family: False)
    monkeypatch.setattr(loop, "_WARM", {})  # as in a fresh process on a fresh install
    monkeypatch.setattr(engines, "_SPARED", set())
    res = simulate("og-hotspot", duration="2ms", bin_width="100us")
    err = capsys.readouterr().err
    assert res.dataset.attrs["engine"] == "oracle" and ref.dataset.attrs["engine"] == "kernel"
    assert "pure-Python twin" in err and "bit for bit" in err
    assert res.counters == ref.counters
    xr.testing.assert_identical(res.dataset.drop_attrs(), ref.dataset.drop_attrs())
    # a long run compiles: 1.5 s of og-hotspot is ~10^7 events, hours on the oracle
    from qcnmodel.sim.scenarios import get_scenario

    net = compile_network(get_scenario("og-hotspot").build({}))
    kw = dict(qcn=True, end_ns=1_500_000_000, bin_ns=10**6, traced_flows=np.arange(9))
    assert engines.estimate_events(net, 1_500_000_000, 10**6) > 6e7 * 0.9
    assert engines.choose_engine(net, FAST, kw) == "kernel"
    # once per process: the next short run compiles
    assert engines.choose_engine(net, FAST, {**kw, "end_ns": 10**6}) == "kernel"
    monkeypatch.setattr(engines, "_SPARED", set())
    assert engines.choose_engine(net, FAST, {**kw, "end_ns": 10**6}) == "oracle"
    monkeypatch.setattr(engines, "kernel_is_cached", lambda family: True)
    assert engines.choose_engine(net, FAST, {**kw, "end_ns": 10**6}) == "kernel"


def test_cli_engine_flag(capsys):
    import json

    from qcnmodel.cli import main

    rc = main(["simulate", "--scenario", "og-hotspot", "--duration", "1ms", "--engine",
               "oracle", "--json"])  # fmt: skip
    a = json.loads(capsys.readouterr().out)
    assert rc == 0
    rc = main(["simulate", "--scenario", "og-hotspot", "--duration", "1ms", "--engine",
               "kernel", "--json"])  # fmt: skip
    b = json.loads(capsys.readouterr().out)
    assert rc == 0 and a["events"] == b["events"] and a["cnms"] == b["cnms"]
    assert a["flow_throughput_bps"] == b["flow_throughput_bps"]
    with pytest.raises(SystemExit) as e:
        main(["simulate", "--scenario", "og-hotspot", "--engine", "fast"])
    assert e.value.code == 2
