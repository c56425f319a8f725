"""Packet-level QCN reference simulator (see docs/architecture.md, "Simulator").

Modules: ``rng`` (counter-based random numbers), ``rules`` (compiled CP/RP rules on
struct-of-arrays state), ``rules_ref`` (the same rules as plain Python classes, the oracle's
rules), then the event kernel, oracle, network, scenarios and traces.
"""

from qcnmodel.sim.api import SimResult, list_scenarios, simulate  # noqa: E402
from qcnmodel.sim.network import NetworkSpec  # noqa: E402
from qcnmodel.sim.scenarios import SCENARIOS  # noqa: E402

__all__ = ["SCENARIOS", "NetworkSpec", "SimResult", "list_scenarios", "simulate"]
