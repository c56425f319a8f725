"""qcnmodel.testing assertions: verdicts, numbers in the messages, figures, bad inputs.

Expected values come from hand arithmetic on synthetic traces, from the analysis layer
(margins, critical RTT) or from the validation builder's own RTT formula, never from the
assertions themselves.
"""

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

import qcnmodel as qm
from qcnmodel import testing as qt
from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.testing import _resolve, report
from qcnmodel.validation.network import bottleneck_spec

ROOT = Path(__file__).resolve().parents[2]


def _figure(msg: str) -> Path:
    path = Path(re.search(r"figure: (\S+)", msg).group(1))
    assert path.is_file() and path.read_bytes()[:4] == b"\x89PNG"
    return path


# ------------------------------------------------------------------------ assert_trace_close
def test_trace_close_compares_bin_means_of_the_model():
    # a ramp y = t sampled finely; its exact mean over the bin (t - 1 ms, t] is t - 0.5 ms
    tm = np.linspace(0.0, 0.1, 10_001)
    ts = np.arange(1, 101) * 1e-3
    qt.assert_trace_close((tm, tm), (ts, ts - 0.5e-3), "queue", 1e-9, metric="max")
    with pytest.raises(AssertionError):  # the bin end value is half a bin off
        qt.assert_trace_close((tm, tm), (ts, ts), "queue", 1e-3, metric="max")


def test_trace_close_mean_metric_and_message():
    ts = np.arange(1, 101) * 1e-3
    sim = (ts, np.full_like(ts, 100.0))
    model = (np.linspace(0, 0.1, 201), np.full(201, 108.0))
    qt.assert_trace_close(model, sim, tolerance=0.1)  # 8 % off, 10 % allowed
    with pytest.raises(AssertionError) as exc:
        qt.assert_trace_close(model, sim, tolerance="5%")
    msg = str(exc.value)
    assert "error 8 = 8 %" in msg and "allowed 5 (5 %)" in msg and "model mean 108" in msg
    _figure(msg)
    rec = report.records()[-1]
    assert not rec.passed and rec.numbers["model mean"] == pytest.approx(108.0)


def test_trace_close_settle_window():
    ts = np.arange(1, 101) * 1e-3
    ys = np.where(ts <= 0.05, 0.0, 100.0)  # a transient the model does not have
    model = (np.linspace(0, 0.1, 201), np.full(201, 100.0))
    qt.assert_trace_close(model, (ts, ys), tolerance=0.01, settle=0.05)
    with pytest.raises(AssertionError):
        qt.assert_trace_close(model, (ts, ys), tolerance=0.01)


def test_trace_close_bad_inputs_name_the_field():
    ts = np.arange(1, 11) * 1e-3
    tr = (ts, ts)
    with pytest.raises(ValueError, match="metric"):
        qt.assert_trace_close(tr, tr, metric="median")
    with pytest.raises(ValueError, match="tolerance"):
        qt.assert_trace_close(tr, tr, tolerance=-1)
    import xarray as xr

    ds = xr.Dataset({"q": ("time", ts)}, coords={"time": ts})
    with pytest.raises(ValueError, match=r"quantity: 'cwnd' not found.*it has q"):
        qt.assert_trace_close(ds, tr, quantity="cwnd")


# ------------------------------------------------------------------------- assert_invariants
@pytest.fixture(scope="module")
def og10():
    return qt.simulate("og-hotspot", duration="10ms", seed=1)


def test_invariants_hold_on_a_run(og10):
    qt.assert_invariants(og10)
    msg = report.records()[-1].message
    assert "ok   frames conserved" in msg and "ok   line rate never exceeded" in msg
    assert "figure:" not in msg  # a passing assertion draws only for a report


def test_a_passing_assertion_draws_when_figures_are_kept(og10):
    report.keep_figures(True)
    try:
        qt.assert_invariants(og10)
    finally:
        report.keep_figures(False)
    _figure(report.records()[-1].message)


def test_invariants_catch_broken_runs(og10, monkeypatch):
    monkeypatch.setattr(report, "figures_wanted", lambda passed: False)  # messages only

    def broken(**counters):
        return dataclasses.replace(og10, counters={**og10.counters, **counters})

    with pytest.raises(AssertionError, match="FAIL frames conserved"):
        qt.assert_invariants(broken(frames_in_network=og10.counters["frames_in_network"] + 1))
    c = og10.counters
    with pytest.raises(AssertionError, match=r"FAIL PAUSE run drops nothing.*3 frames dropped"):
        qt.assert_invariants(broken(pause_frames=2, frames_dropped=3,
                                    frames_delivered=c["frames_delivered"] - 3))  # fmt: skip
    ds = og10.dataset.copy(deep=True)
    ds["queue"][0, 0] = -1
    with pytest.raises(AssertionError, match="FAIL queues >= 0: smallest queue value -1 B"):
        qt.assert_invariants(dataclasses.replace(og10, dataset=ds))
    ds = og10.dataset.copy(deep=True)
    ds["cr"][:] = og10.params.min_rate / 2
    ds["rl_active"][:] = 1
    with pytest.raises(AssertionError, match="FAIL rate limiters"):
        qt.assert_invariants(dataclasses.replace(og10, dataset=ds))
    ds = og10.dataset.copy(deep=True)
    ds["port_throughput"][:] = 2 * og10.params.line_rate
    with pytest.raises(AssertionError, match="FAIL line rate never exceeded"):
        qt.assert_invariants(dataclasses.replace(og10, dataset=ds))


# ----------------------------------------------------------------------------- assert_stable
P = qm.QCNParams.preset("802.1qau")


def test_assert_stable_follows_the_critical_rtt():
    # the analysis layer's critical RTT at N = 10 flows, C = half the line rate (the default)
    crit = qm.critical_rtt(qm.build_model("qcn", P, rtt=100e-6, n_flows=10, capacity=5e9))
    qt.assert_stable(P, rtt=[0.5 * crit], n_flows=10)
    with pytest.raises(AssertionError) as exc:
        qt.assert_stable(P, rtt=[0.5 * crit, 2 * crit], n_flows=10)
    msg = str(exc.value)
    assert "1 of 2 point(s) unstable" in msg and "model UNSTABLE" in msg
    assert f"critical RTT {crit * 1e6:.4g} us" in msg
    _figure(msg)


@dataclasses.dataclass(frozen=True)
class Integrator:
    """A user's model: L(s) = K/s e^{-s rtt}, critical delay pi / (2 K) exactly."""

    rtt: float = 100e-6
    n_flows: int = 1
    capacity: float = 5e9
    crit: float = 50e-6

    def loop(self):
        return DelayedLoop([math.pi / (2 * self.crit)], [1.0, 0.0], self.rtt)

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)


def test_assert_stable_packets_can_overrule_the_model():
    # the stub model calls RTT 1 ms stable; the simulated queue oscillates there (N = 10)
    model = Integrator(crit=1.0)
    qt.assert_stable(P, rtt="100us", n_flows=10, confirm="packets", model=model)
    with pytest.raises(AssertionError, match=r"model stable .*; packets (oscillating|underflow)"):
        qt.assert_stable(P, rtt="1ms", n_flows=10, confirm="packets", model=model)


def test_assert_stable_bad_inputs():
    with pytest.raises(ValueError, match="confirm"):
        qt.assert_stable(P, rtt="100us", n_flows=1, confirm="yes")
    with pytest.raises(ValueError, match="n_flows"):
        qt.assert_stable(P, rtt="100us", n_flows=0)
    with pytest.raises(ValueError, match="rtt"):
        qt.assert_stable(P, rtt=-1, n_flows=1)
    with pytest.raises(ValueError, match="no such parameter file"):
        qt.assert_stable("missing.toml", rtt="100us", n_flows=1)
    with pytest.raises(TypeError, match="model"):
        qt.assert_stable(P, rtt="100us", n_flows=1, model=42)


def test_assert_stable_reads_a_parameter_file():
    qt.assert_stable(ROOT / "examples" / "802.1qau.toml", rtt="100us", n_flows=10)
    assert report.records()[-1].passed


# ---------------------------------------------------------------- operating point, boundary
def test_operating_point_inverts_the_bottleneck_builder():
    spec = bottleneck_spec(10, 100e-6, 5e9, 10e9, switch_latency=1e-6)
    op = _resolve.operating_point(spec)
    assert (op.n_flows, op.capacity, op.cp) == (10, 5e9, "sw->rx")
    assert op.rtt == pytest.approx(100e-6, rel=1e-9)
    assert _resolve.operating_point(_resolve.with_rtt(spec, 300e-6)).rtt == pytest.approx(
        300e-6, rel=1e-9
    )
    with pytest.raises(ValueError, match="rtt"):
        _resolve.with_rtt(spec, 1e-6)  # below serialisation (1.2 us) + 2 switch latencies


def test_operating_point_of_a_scenario_and_a_topology_file():
    op = _resolve.operating_point(_resolve.as_spec("og-hotspot")[0])
    assert (op.n_flows, op.capacity) == (9, 1e9)  # 9 senders towards n1, served at 1 Gb/s
    spec, label, preset, duration = _resolve.as_spec(ROOT / "examples/topologies/two-switch.toml")
    assert label == "two-switch.toml" and spec.hosts
    with pytest.raises(ValueError, match="scenario"):
        _resolve.as_spec("og-hotsopt")


def test_boundary_of_a_wrong_model_does_not_match():
    # the simulated queue at N = 10 is stable up to ~0.5 ms (docs/validation.md), all of the
    # scan 25..140 us around this model's 50 us is stable: no boundary there
    with pytest.raises(AssertionError) as exc:
        qt.assert_boundary_matches(Integrator(crit=50e-6), bottleneck_spec(10, 100e-6, 5e9, 10e9))
    msg = str(exc.value)
    assert "model critical RTT 50 us OUTSIDE the simulated bracket [140 us, inf]" in msg
    _figure(msg)


def test_boundary_matches_for_the_validated_model():
    qt.assert_boundary_matches("qcn", bottleneck_spec(10, 100e-6, 5e9, 10e9))


# ------------------------------------------------------------------------------------ report
def test_report_lists_every_assertion(tmp_path):
    fig = tmp_path / "figures" / "a.png"
    fig.parent.mkdir()
    fig.write_bytes(b"\x89PNG")
    recs = [
        report.Record("assert_x", "ok case", True, {"a": 1.5}, "fine", [str(fig)], "t::a"),
        report.Record("assert_y", "bad case", False, {"b": 2}, "broken", [], "t::b"),
    ]
    md, html = report.write_report(tmp_path, recs)
    text = md.read_text()
    assert "2 assertion(s), 1 passed, 1 failed" in text
    assert "PASS `assert_x`" in text and "FAIL `assert_y`" in text and "| a | 1.5 |" in text
    assert "](figures/a.png)" in text and 'src="figures/a.png"' in html.read_text()


# ------------------------------------------------------------------------------------- cache
def test_run_cache_is_bounded_by_bytes(monkeypatch):
    from qcnmodel.testing import _sim

    qt.cache_clear()
    a = qt.simulate("og-hotspot", duration="2ms", seed=1)
    assert qt.simulate("og-hotspot", duration="2ms", seed=1) is a
    assert qt.cache_info() == {"hits": 1, "misses": 1, "size": 1}
    monkeypatch.setattr(_sim, "MAX_CACHE_BYTES", 1)  # below one run: only the last is kept
    qt.simulate("og-hotspot", duration="2ms", seed=2)
    assert qt.cache_info()["size"] == 1
    assert qt.simulate("og-hotspot", duration="2ms", seed=1) is not a


def test_overrides_of_a_scenario_reach_the_runs_of_its_spec():
    o = _resolve.run_overrides("og-hotspot", {"w": 4, "load": 0.5})
    assert o == {"qcn.w": 4}  # load is a scenario parameter, already in the built spec
    spec = _resolve.as_spec("og-hotspot", {"w": 4, "load": 0.5})[0]
    assert qm.simulate(spec, overrides=o, duration="1ms").params.w == 4


def test_boundary_bad_inputs_name_the_field():
    spec = bottleneck_spec(10, 100e-6, 5e9, 10e9)
    with pytest.raises(ValueError, match="tolerance"):
        qt.assert_boundary_matches("qcn", spec, tolerance=1.5)
    with pytest.raises(ValueError, match="seeds"):
        qt.assert_boundary_matches("qcn", spec, seeds=())
    with pytest.raises(ValueError, match="bisect_steps"):
        qt.assert_boundary_matches("qcn", spec, bisect_steps=99)
    with pytest.raises(ValueError, match="scenario"):
        qt.assert_boundary_matches("qcn", 42)


def test_boundary_assertion_checks_its_run_before_analysing():
    # a run ending before the hotspot was blamed on settle; an empty rtts list came after
    # seconds of analysis
    with pytest.raises(ValueError, match=r"duration: the run \(0.01 s\) ends before the"):
        qt.assert_boundary_matches("fopdt", "og-hotspot", duration=0.01, settle=0.02)
    with pytest.raises(ValueError, match="rtts: give at least one value"):
        qt.assert_boundary_matches("fopdt", "og-hotspot", rtts=[])
