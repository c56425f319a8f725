"""Assertions for validating QCN models and parameter sets in your own test suite.

::

    from qcnmodel.testing import assert_stable

    def test_my_parameters_are_stable():
        assert_stable("my-params.toml", rtt=["50us", "200us"], n_flows=[1, 10],
                      confirm="packets")

* :func:`assert_stable`: a parameter set is stable over RTTs and flow counts (model margins;
  optionally confirmed by packet runs).
* :func:`assert_boundary_matches`: a model's critical RTT matches the simulator's on a
  scenario, topology file or network.
* :func:`assert_trace_close`: a model trajectory against a simulated trace.
* :func:`assert_invariants`: conservation, rate bounds, lossless PAUSE, line rates of a run.
* :func:`simulate`: :func:`qcnmodel.simulate`, cached by its arguments.

Every assertion records its numbers and a figure (:mod:`qcnmodel.testing.report`); failure
messages show both. The pytest plugin (:mod:`qcnmodel.testing.plugin`, registered as
``qcnmodel``) adds the ``qcn_sim`` and ``qcn_params`` fixtures, the ``qcn_slow`` marker and
``--qcn-report DIR``.
"""

from __future__ import annotations

from qcnmodel.testing._sim import cache_clear, cache_info
from qcnmodel.testing._sim import run as simulate
from qcnmodel.testing.invariants import assert_invariants
from qcnmodel.testing.stability import assert_boundary_matches, assert_stable
from qcnmodel.testing.traces import assert_trace_close

__all__ = [
    "assert_boundary_matches",
    "assert_invariants",
    "assert_stable",
    "assert_trace_close",
    "cache_clear",
    "cache_info",
    "simulate",
]
