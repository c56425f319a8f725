"""DCQCN with every flow followed (``DCQCNFluidModel.simulate(method="agents")``).

Expected values come from the loop's definition (the queue integrates the arrivals of one
forward delay earlier, the link serves at most C), from the notification point's rule (at
most one CNP per interval) or from arithmetic on the parameters; none is produced by the code
under test.
"""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qcnmodel.models._dcqcn_agents import agents_trace
from qcnmodel.models.dcqcn import DCQCNFluidModel, DCQCNParams
from qcnmodel.params.dcqcn import DCQCNSimParams

P = DCQCNParams()
SER = 8.0 * P.packet_size / P.line_rate  # one frame at the line rate, s


def _model(n=4, rtt=50e-6, **fields):
    return DCQCNFluidModel(dataclasses.replace(P, **fields), rtt=rtt, n_flows=n)


def test_same_seed_same_trace_bit_for_bit():
    a = agents_trace(_model(), 0.02, 10e-6, seed=3)
    b = agents_trace(_model(), 0.02, 10e-6, seed=3)
    c = agents_trace(_model(), 0.02, 10e-6, seed=4)
    for key in ("q", "thr", "flows", "ncnp"):
        assert np.array_equal(a[key], b[key])
    assert not np.array_equal(a["q"], c["q"])


def test_open_loop_start_fills_at_n_minus_one_line_rates():
    """Before any CNP can arrive every source sends at C: the queue grows at (N - 1) C from
    one forward delay d + 8F/C on (d = (tau* - 16F/C)/4). The first mark needs the queue past
    Kmin; its CNP arrives tau* - d - 8F/C later. Tolerance: one step of the fluid's arrivals
    ((N - 1) C dt / 8, dt one frame time) for the step on which the arrivals begin."""
    n, rtt, bin_dt = 4, 50e-6, 1e-6
    tr = agents_trace(_model(n, rtt), 100e-6, bin_dt)
    d = (rtt - 2 * SER) / 4
    fwd = d + SER
    slope = (n - 1) * P.line_rate / 8.0  # bytes/s
    t_kmin = fwd + P.kmin / slope
    first_cnp = t_kmin + (rtt - fwd)
    mid = tr["t"] - bin_dt / 2  # the bin's mean is the queue at its middle (linear growth)
    sel = (mid > fwd + bin_dt) & (tr["t"] < first_cnp)
    assert sel.sum() > 20
    want = slope * (mid[sel] - fwd)
    assert np.max(np.abs(tr["q"][sel] - want)) <= slope * SER + 1e-6
    assert np.all(tr["q"][tr["t"] <= fwd] == 0.0)
    assert np.all(tr["thr"][sel] == pytest.approx(P.line_rate, rel=1e-12))


def test_one_flow_at_the_line_rate_never_queues_or_hears_a_cnp():
    """N = 1 offers exactly C: the queue stays empty, no frame is marked (p(8F) = 0 below
    Kmin), and after the forward delay the link carries C."""
    tr = agents_trace(_model(1, 30e-6), 0.01, 10e-6)
    assert np.all(tr["q"] == 0.0)
    assert tr["ncnp"][0] == 0
    assert tr["thr"][2:] == pytest.approx(P.line_rate, rel=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 6),
    rtt_us=st.floats(2.0, 150.0),
    interval_us=st.sampled_from([0.5, 10.0, 50.0]),
    mode=st.sampled_from(["coalesce", "dead_time", "window"]),
    mark_at=st.sampled_from(["dequeue", "enqueue"]),
    seed=st.integers(0, 2**31),
)
def test_invariants(n, rtt_us, interval_us, mode, mark_at, seed):
    """Queue >= 0; the link never serves above C; the flows' departures add up to the
    link's; no flow above the line rate; the NP sends at most one CNP per interval; bytes
    conserved from the sources through the queue."""
    p = DCQCNSimParams.from_fluid(P, cnp_interval=interval_us * 1e-6, cnp_mode=mode,
                                  mark_at=mark_at)  # fmt: skip
    m = DCQCNFluidModel(p, rtt=rtt_us * 1e-6, n_flows=n)
    dur = 0.004
    tr = agents_trace(m, dur, 20e-6, seed=seed)
    c = P.line_rate
    assert np.all(tr["q"] >= 0.0)
    assert np.all(tr["thr"] <= c * (1 + 1e-12))
    assert np.all(tr["flows"] <= c * (1 + 1e-12))
    assert tr["flows"].sum(axis=0) == pytest.approx(tr["thr"], rel=1e-9, abs=1e-3)
    assert np.all(tr["ncnp"] <= dur / (interval_us * 1e-6) + 2)
    # bytes conserved: sent = arrived + on the way; arrived = departed + queued (to rounding)
    sent, arrived, departed, q_end, pipe = tr["tally"]
    assert sent == pytest.approx(arrived + pipe, rel=1e-9)
    assert arrived == pytest.approx(departed + q_end, rel=1e-9)
    # the bins' departures are the tally's (bit/s over the bins)
    assert tr["thr"].sum() * 20e-6 / 8.0 == pytest.approx(departed, rel=1e-9)


def test_simulate_method_agents_dataset():
    m = _model(3, 40e-6)
    ds = m.simulate(0.01, method="agents", record_dt=50e-6, seed=1)
    assert ds.sizes == {"time": 200, "flow": 3}
    assert ds.attrs["method"] == "agents"
    assert float(ds.q.min()) >= 0.0
    assert np.array_equal(ds.rate_current.sum("flow").values, ds.throughput.values) or (
        np.allclose(ds.rate_current.sum("flow").values, ds.throughput.values, rtol=1e-9)
    )


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"x0": {"q": 1e4}}, "x0"), ({"hotspot": (0.0, 1.0, 1e9)}, "hotspot")],
)
def test_agents_refuse_what_they_do_not_model(kwargs, field):
    with pytest.raises(ValueError, match=field):
        _model().simulate(0.01, method="agents", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"duration": -1.0}, "duration"), ({"duration": 0.0}, "duration"),
     ({"duration": 0.01, "record_dt": -1.0}, "record_dt"),
     ({"duration": 0.01, "record_dt": 0.0}, "record_dt"),
     ({"duration": 0.01, "seed": -1}, "seed"), ({"duration": 0.01, "seed": "x"}, "seed"),
     ({"duration": 0.01, "dt": 1e-12}, "dt"), ({"duration": 0.01, "dt": -1e-6}, "dt")],
)  # fmt: skip
def test_bad_run_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        _model().simulate(method="agents", **kwargs)


def test_agents_refuse_unbounded_work_naming_duration():
    with pytest.raises(ValueError, match="duration"):
        _model(1000).simulate(1e4, method="agents", record_dt=1e-3)


def test_rtt_below_the_serialisation_floor_names_rtt():
    with pytest.raises(ValueError, match="rtt"):
        agents_trace(_model(2, 0.1e-6), 0.001, 10e-6)


def test_many_cnps_in_flight_with_a_short_interval():
    """A 0.5 us CNP interval puts up to 150 CNPs of one flow on a 75 us return path: the
    run completes and the flows hear more CNPs than the default 50 us interval allows."""
    tr = agents_trace(_model(8, 100e-6, cnp_interval=0.5e-6), 0.005, 10e-6)
    assert tr["ncnp"].max() > 0.005 / 50e-6 + 2
    assert math.isfinite(tr["q"].sum())


def test_the_cnp_ring_grows_without_changing_the_trajectory():
    """Marks drawn at enqueue wait out the queue before their CNP leaves, so a flow can have
    more CNPs in flight than the return path holds: the ring grows. Starting it at one slot
    or at a thousand gives the same trajectory, bit for bit."""
    from qcnmodel.models import _dcqcn_agents as A
    from qcnmodel.sim.protocols import dcqcn as D

    p = DCQCNSimParams.from_fluid(P, cnp_interval=1e-6, mark_at="enqueue")
    args = (D.pack_dcqcn_cp_params(p), D.pack_dcqcn_np_params(p), D.pack_dcqcn_rp_params(p),
            8, float(P.packet_size), np.int64(200), 30, np.int64(70_000), 20_000, 50,
            np.int64(5))  # fmt: skip
    small = A.integrate_agents(*args, 1)
    big = A.integrate_agents(*args, 1000)
    for a, b in zip(small, big):
        assert np.array_equal(a, b)
    # more than two CNPs per return-path time (70 us) over the 4 ms: some flow had two in
    # flight at once, more than the one slot the small ring started with
    assert small[3].max() > 2 * 4e-3 / 70e-6
    sent, arrived, departed, q_end, pipe = small[4]
    assert sent == pytest.approx(arrived + pipe, rel=1e-12)
    assert arrived == pytest.approx(departed + q_end, rel=1e-12)


@pytest.mark.parametrize(("line", "frame", "want"), [(40e9, 1000.0, 0.2e-6),
                                                     (100e9, 1000.0, 80e-9),
                                                     (10e9, 1000.0, 0.2e-6),
                                                     (40e9, 4096.0, 0.2e-6)])  # fmt: skip
def test_default_step_is_a_frame_time_capped(line, frame, want):
    from qcnmodel.models._dcqcn_agents import default_step

    assert default_step(dataclasses.replace(P, line_rate=line, packet_size=frame)) == (
        pytest.approx(want, rel=1e-12)
    )


@pytest.mark.slow
def test_halving_the_step_leaves_the_runs_unchanged():
    """The step's cap (config.defaults["models.dcqcn_agents_max_dt"]) is where the model has
    converged against itself: 0.2 vs 0.1 us at 10 Gb/s, N = 10, 50 us, nine runs each. The
    mean queue within 2 % (the runs' own spread is larger) and the cycle's period within one
    10 us bin of the record."""
    from qcnmodel.analysis.timeseries import oscillation

    m = _model(10, 50e-6, line_rate=10e9)
    out = {}
    for dt in (0.2e-6, 0.1e-6):
        qs, periods = [], []
        for seed in range(9):
            tr = agents_trace(m, 0.15, 10e-6, seed=seed, dt=dt)
            q = tr["q"][5000:]
            qs.append(q.mean())
            periods.append(oscillation(q, 10e-6, (P.kmin + P.kmax) / 2)["period_acf"])
        out[dt] = (np.mean(qs), np.median(periods))
    (q1, t1), (q2, t2) = out[0.2e-6], out[0.1e-6]
    assert abs(q1 - q2) <= 0.02 * q2
    assert abs(t1 - t2) <= 10e-6 + 1e-12


def test_compiled_kernel_equals_its_python_execution():
    """The kernel's source run by the interpreter (``py_func``; the rule bodies it calls stay
    compiled, they have their own twins) gives the compiled kernel's trajectory bit for bit:
    numba's typing and integer arithmetic change nothing."""
    from qcnmodel.models import _dcqcn_agents as A
    from qcnmodel.sim.protocols import dcqcn as D

    p = DCQCNSimParams.from_fluid(P)
    args = (D.pack_dcqcn_cp_params(p), D.pack_dcqcn_np_params(p), D.pack_dcqcn_rp_params(p),
            4, float(P.packet_size), np.int64(200), 30, np.int64(70_000), 4_000, 50,
            np.int64(7), 4)  # fmt: skip
    compiled = A.integrate_agents(*args)
    python = A.integrate_agents.py_func(*args)
    assert compiled[0].max() > 0 and compiled[3].sum() > 0  # the queue built, CNPs flowed
    for a, b in zip(compiled, python):
        assert np.array_equal(a, b)
