"""The traces' totals equal the final counters: events at the end time, processed after the
last SAMPLE event, are recorded too (kernel and oracle alike)."""

from __future__ import annotations

import numpy as np
from simnets import star
from test_oracle import run_both

from qcnmodel.sim import simulate
from qcnmodel.sim.kernel import heap as kh
from qcnmodel.sim.kernel.state import TG_DROP, TG_SENT, TQ_DROPS


def test_drop_trace_total_equals_frames_dropped():
    # the reported case: before the flush the trace missed the last drop (421076 of 421077)
    r = simulate("stanford-baseline-1", protocol="dcqcn", duration=0.2, seed=0,
                 overrides={"rtt": 50e-6, "hotspot_start": 0.02, "hotspot_stop": 10.0})  # fmt: skip
    dropped = r.counters["frames_dropped"]
    assert dropped > 0
    assert int(r.dataset["drops"].sum()) == dropped
    assert int(r.dataset["port_drops"].sum()) == dropped


def test_last_bin_of_kernel_and_oracle_holds_the_final_counters():
    _, st, o = run_both(star(n=4), qcn=False, end_ns=1_000_000, bin_ns=300_000)  # 4 bins
    assert o.c["drop"] > 0
    for tg, tq in ((st.TG, st.TQ), (o.TG, o.TQ)):
        assert tg[TG_DROP, -1] == o.c["drop"] == int(st.S[kh.S_DROP])
        assert tg[TG_SENT, -1] == o.c["sent"]
        assert int(tq[TQ_DROPS, :, -1].sum()) == o.c["drop"]
    assert np.array_equal(st.TQ, o.TQ) and np.array_equal(st.TG, o.TG)
