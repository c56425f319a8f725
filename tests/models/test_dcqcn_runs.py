"""DCQCN's verdict from its every-flow runs (``qcnmodel.models.dcqcn_runs``).

The classes' thresholds are the oscillation detector's (stated in the module); the runs'
verdicts are compared with the packet simulator's class at the same points (the validation's
matched-pair network), not with anything the code under test produced.
"""

import math

import pytest

from qcnmodel.models import build_model
from qcnmodel.models.dcqcn_runs import (
    CLIFF_MIN,
    cycle_classes,
    cycle_reference,
    runs_verdict,
    runs_work,
)
from qcnmodel.params.dcqcn import DCQCNParams

P = DCQCNParams()
QREF = cycle_reference(P)


def test_reference_is_the_middle_of_the_ramp():
    assert QREF == pytest.approx((5e3 + 200e3) / 2)


@pytest.mark.parametrize(
    ("acf", "std", "above", "coherent", "cliff"),
    [
        (0.5, QREF / 4, CLIFF_MIN, True, True),  # at every threshold
        (0.49, QREF, 0.5, False, False),  # not coherent: no cycle however high
        (0.9, QREF / 4 * 0.99, 0.5, False, False),  # too small an amplitude
        (0.9, QREF, CLIFF_MIN * 0.99, True, False),  # coherent, below Kmax too rarely
    ],
)
def test_classes_at_their_thresholds(acf, std, above, coherent, cliff):
    o = cycle_classes({"acf_peak": acf, "std": std}, above, QREF)
    assert (o["coherent"], o["cliff_cycle"], o["above_kmax"]) == (coherent, cliff, above)


@pytest.mark.parametrize(("n", "tau"), [(2, 25e-6), (20, 50e-6)])
def test_runs_agree_with_the_packets(n, tau):
    """The packet simulator's class at the point (one run, the validation's network):
    N = 2 is noise that empties the queue, N = 20 cycles through Kmax."""
    from qcnmodel.validation.dcqcn_pairs import sim_point

    sim = sim_point(n, tau)
    m = build_model("dcqcn", rtt=tau, n_flows=n)
    v = m.runs_verdict(seeds=3)
    assert v == runs_verdict(m.replace(trajectories="mean-field"), seeds=3)  # the same runs
    assert v.cycles == sim["cliff_cycle"] and v.runs == 3
    if v.cycles:  # the period within 2 trace bins + the simulated cycle-to-cycle spread
        assert abs(v.period_s - sim["period_acf"]) <= 2 * 10e-6 + sim["period_spread"]
        assert "cycles through Kmax" in v.text()
    else:
        assert math.isnan(v.period_s) and "no cycle" in v.text()
    assert 0.0 < v.empty_fraction < 1.0 and v.throughput_bps <= P.line_rate


def test_work_estimate():
    m = build_model("dcqcn", rtt=50e-6, n_flows=10)
    # 9 runs x 10 flows x (0.15 s / 200 ns steps, one 1000-byte frame at 40 Gb/s, + the rate
    # and alpha timers' firings, 55 us each)
    assert runs_work(m) == pytest.approx(9 * 10 * (0.15 / 200e-9 + 2 * 0.15 / 55e-6))
    assert runs_work(m, seeds=1) == pytest.approx(runs_work(m) / 9)


def test_a_queue_held_above_kmax_is_overloaded_not_stable():
    """An alpha timer of 0.1 us decays alpha 550 times faster than the CoNEXT 2016 one: the
    cuts (by alpha/2) are too small to hold the queue even at p = 1, and it grows without
    bound above Kmax, which is no cycle, and no stable point either."""
    m = build_model("dcqcn", rtt=50e-6, n_flows=10, params=DCQCNParams(alpha_timer=1e-7))
    v = m.runs_verdict(seeds=1)
    assert v.above_kmax >= 0.5 and v.overloaded and not v.stable
    assert "stays above Kmax" in v.text()


def test_timer_firings_count_in_the_work():
    """A 1 ns alpha timer fires 1.5e8 times per flow in a run, 3e9 at 20 flows: the work
    says so (margins skips the runs past config.defaults["models.max_steps"], and simulate
    refuses)."""
    fast = build_model("dcqcn", rtt=50e-6, n_flows=20, params=DCQCNParams(alpha_timer=1e-9))
    assert runs_work(fast, seeds=1) >= 20 * 0.15 / 1e-9
    with pytest.raises(ValueError, match="duration"):
        fast.simulate(0.15, method="agents", record_dt=10e-6)


def test_progress_bar_on_stderr(capsys):
    m = build_model("dcqcn", rtt=25e-6, n_flows=2)
    quiet = m.runs_verdict(seeds=2)
    assert capsys.readouterr().err == ""
    assert m.runs_verdict(seeds=2, progress=True) == quiet  # the bar changes nothing else
    assert "every-flow runs, N = 2" in capsys.readouterr().err
