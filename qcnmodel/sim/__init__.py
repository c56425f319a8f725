"""Packet-level QCN reference simulator.

Layers, bottom to top (data flows one way):

* :mod:`.network` (a :class:`NetworkSpec` and its compilation to flat arrays),
  :mod:`.topology` (TOML files -> spec), :mod:`.scenarios` (the named scenarios of the decks);
* :mod:`.rng` (counter-based random numbers) and :mod:`.protocols` (the protocol registry and
  each protocol's compiled rules beside its plain-Python twin);
* :mod:`.kernel` (the compiled event loop) and :mod:`.oracle` (its plain-Python twin, the
  readable executable specification), both dispatching to one adapter per protocol family;
* :mod:`.engines` (run the kernel or the oracle), then :mod:`.traces`, :mod:`.metrics`,
  :mod:`.fair` (fair allocations) and :mod:`.api` (:func:`simulate`, :class:`SimResult`),
  :mod:`.plots`.

The main objects are imported lazily, so that importing a light sub-module (for example
:mod:`qcnmodel.sim.network`) does not load the compiled kernel.
"""

import importlib

from qcnmodel import _compat

_compat.install()  # the old module paths of the simulator (idempotent)

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
