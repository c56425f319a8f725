"""Sub-path / path probe replies (qcnmodel.sim.protocols.probes): our reading of seeds 000, 003."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel.sim.protocols.probes import probe_replier, probe_replier_py


@pytest.mark.parametrize(
    "fbs,first,dest,expect",
    [
        ([5000.0, -200.0, -9000.0], True, False, (1, -200.0)),  # first congested CP answers
        ([5000.0, -200.0, -9000.0], False, False, (2, -9000.0)),  # target, most negative
        ([5000.0, 300.0], True, False, (1, 300.0)),  # none congested: the CPID's CP, min Fb
        ([5000.0, 300.0], True, True, (2, 300.0)),  # path: the destination answers last
        ([], True, True, (0, 0.0)),
    ],
)
def test_replier(fbs, first, dest, expect):
    arr = np.array(fbs, dtype=float)
    k, fb = probe_replier(arr, len(fbs), first, dest)
    assert (int(k), float(fb)) == expect == probe_replier_py(fbs, first, dest)


@settings(max_examples=100, deadline=None)
@given(
    fbs=st.lists(st.floats(-2e5, 2e5, allow_nan=False), max_size=20),
    first=st.booleans(),
    dest=st.booleans(),
)
def test_twin(fbs, first, dest):
    k, fb = probe_replier(np.array(fbs, dtype=float), len(fbs), first, dest)
    assert (int(k), float(fb)) == probe_replier_py(fbs, first, dest)
    if fbs and (not first or min(fbs) >= 0.0):
        assert fb == min(fbs)
