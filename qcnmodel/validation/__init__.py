"""Validation of the fluid models against the packet simulator.

* :mod:`.network` -- the single-bottleneck :class:`~qcnmodel.sim.network.NetworkSpec` builder
  (RTT -> link delays).
* :mod:`.measure` -- equilibrium (batch means), oscillation detection and period, recovery
  time, RTT boundary scan.
* :mod:`.pairs` -- matched pairs (model vs simulation) producing report rows.
* :mod:`.decks` -- the seed decks' scenarios and observations.
* :mod:`.suite`, :mod:`.report`, :mod:`.plots` -- the ``qcnmodel validate`` run and report.
"""

from qcnmodel.validation.network import bottleneck_spec, link_delay_for_rtt
from qcnmodel.validation.suite import ValidationResult, run_validation

__all__ = ["ValidationResult", "bottleneck_spec", "link_delay_for_rtt", "run_validation"]
