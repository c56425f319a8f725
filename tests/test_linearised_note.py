"""The note of a flow count judged by the linearised loop instead of the model's
trajectories names the limit it is past: a loop so slow that a verdict run holding ten of its
slowest cycles would last longer than the longest run allowed is not "past the 200 flows"."""

from __future__ import annotations

from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams
from qcnmodel.studies.check_text import linearised_note

#: a 1 s timer and a 15 MB byte counter at 1 Gb/s: at N = 10 (100 Mb/s each) the rate
#: limiter's cycle is the timer's 1 s, so ten cycles need a 20 s run (10 analysed)
SLOW = QCNParams.preset("802.1qau").replace(timer=1.0, bc_limit=15e6, line_rate=1e9)


def test_a_slow_loop_is_named_for_its_run_length():
    m = QCNFluidModel(SLOW, n_flows=10, rtt="100us")
    assert m.boundary_method == "linearisation" and m.verdict_run[0] > 10.0
    note = linearised_note([10], {10: m})
    assert note.startswith("N = 10: judged by the linearised loop: a verdict run holding ten")
    assert "would last 20 s, past the longest run allowed, 10 s" in note
    assert "200 flows" not in note and "minutes" not in note


def test_past_the_flows_and_a_slow_loop_are_said_apart():
    fast = QCNFluidModel(QCNParams.preset("802.1qau"), n_flows=300, rtt="100us")
    note = linearised_note([10, 300], {10: QCNFluidModel(SLOW, n_flows=10), 300: fast})
    slow_part, flows_part = note.split("; N = 300")
    assert "N = 10" in slow_part and "past the longest run allowed" in slow_part
    assert "past the 200 flows" in flows_part and "N = 10:" not in flows_part


def test_without_the_models_the_note_names_every_limit():
    note = linearised_note([250])
    assert note.startswith("N = 250: judged by the linearised loop, past the 200 flows or the")
