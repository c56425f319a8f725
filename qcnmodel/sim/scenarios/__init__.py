"""Named, parameterised scenarios of the seed decks: the registry :data:`SCENARIOS`.

The registry is assembled here, explicitly, from the two modules that define scenarios:
:mod:`.base` (the parameter and scenario classes, the conventions every builder shares, and
the first scenarios: IBM's output- and input-generated hotspots, the parking lot, Stanford's
baseline #1, Teak's OG hotspot and scenario 3, the NetFPGA testbed) and :mod:`.catalogue`
(Stanford's baselines #2, #3, #5-#8 and IBM's 20-stage hotspot with its Teak variant).
"""

from __future__ import annotations

from qcnmodel._errors import unknown_name
from qcnmodel.sim.network import NetworkSpec
from qcnmodel.sim.scenarios.base import (
    BASE_SCENARIOS,
    Scenario,
    ScenarioParam,
    ig_hotspot,
    netfpga,
    og_hotspot,
    parking_lot,
)
from qcnmodel.sim.scenarios.catalogue import CATALOGUE

__all__ = [
    "CATALOGUE",
    "SCENARIOS",
    "Scenario",
    "ScenarioParam",
    "build_scenario",
    "get_scenario",
    "ig_hotspot",
    "netfpga",
    "og_hotspot",
    "parking_lot",
]

#: Every named scenario: name -> :class:`Scenario`.
SCENARIOS: dict[str, Scenario] = {**BASE_SCENARIOS, **CATALOGUE}


def get_scenario(name: str) -> Scenario:
    """Look a scenario up by name (ValueError with a suggestion and the list)."""
    if name not in SCENARIOS:
        raise unknown_name("scenario", "scenario", name, SCENARIOS, sort=False)
    return SCENARIOS[name]


def build_scenario(name: str, **overrides) -> NetworkSpec:
    """Build scenario ``name`` with parameter overrides (unit strings accepted)."""
    return get_scenario(name).build(overrides)
