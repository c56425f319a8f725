"""Packet-level QCN reference simulator (see docs/architecture.md, "Simulator").

Modules: ``rng`` (counter-based random numbers), ``rules`` (compiled CP/RP rules on
struct-of-arrays state), ``rules_ref`` (the same rules as plain Python classes, the oracle's
rules), then the event kernel, oracle, network, scenarios and traces.

The main objects are imported lazily, so that importing a light sub-module (for example
``qcnmodel.sim.protocol_params``) does not load the compiled kernel.
"""

import importlib

__all__ = ["SCENARIOS", "NetworkSpec", "SimResult", "list_scenarios", "simulate"]

_LAZY = {
    "SimResult": "qcnmodel.sim.api",
    "list_scenarios": "qcnmodel.sim.api",
    "simulate": "qcnmodel.sim.api",
    "NetworkSpec": "qcnmodel.sim.network",
    "SCENARIOS": "qcnmodel.sim.scenarios",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'qcnmodel.sim' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
