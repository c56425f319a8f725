"""Deprecated import paths of the modules that moved when the package was laid out by layer.

``import qcnmodel.fluid_qcn`` (and ``from qcnmodel.fluid_qcn import QCNFluidModel``) keeps
working for one release: a meta-path finder answers the old name with a light proxy module
whose attributes are those of the new module, and warns once with a
:class:`DeprecationWarning` naming the new path. Nothing is copied: the proxy looks every
name up in the new module at access time.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

__all__ = ["MOVED", "install"]

#: old module path -> new module path
MOVED: dict[str, str] = {
    # -- top level -> params/, analysis/, models/, studies/ ---------------------------------
    "qcnmodel.loop": "qcnmodel.analysis.loop",
    "qcnmodel.margins": "qcnmodel.analysis.margins",
    "qcnmodel.linearize": "qcnmodel.analysis.linearize",
    "qcnmodel.dde": "qcnmodel.analysis.dde",
    "qcnmodel.stability": "qcnmodel.analysis.stability",
    "qcnmodel.plotting": "qcnmodel.analysis.plot",
    "qcnmodel.fopdt": "qcnmodel.models.fopdt",
    "qcnmodel.fluid_qcn": "qcnmodel.models.qcn",
    "qcnmodel._fluid_qcn_eqs": "qcnmodel.models._qcn_eqs",
    "qcnmodel.fluid_qcn_classes": "qcnmodel.models.qcn_classes",
    "qcnmodel.fluid_dcqcn": "qcnmodel.models.dcqcn",
    "qcnmodel._fluid_dcqcn_eqs": "qcnmodel.models._dcqcn_eqs",
    "qcnmodel.fluid_ecm": "qcnmodel.models.ecm",
    "qcnmodel._fluid_ecm_eqs": "qcnmodel.models._ecm_eqs",
    "qcnmodel._operating_point": "qcnmodel.models._base",
    "qcnmodel.check": "qcnmodel.studies.check",
    "qcnmodel.sweep": "qcnmodel.studies.sweep",
    "qcnmodel.sweep_points": "qcnmodel.studies.points",
    "qcnmodel.compare": "qcnmodel.studies.compare",
    "qcnmodel.compare_plots": "qcnmodel.studies.compare_plots",
    "qcnmodel.report": "qcnmodel.studies.report",
    "qcnmodel.report_figures": "qcnmodel.studies.report_figures",
    "qcnmodel.report_packet": "qcnmodel.studies.report_packet",
    "qcnmodel.figures": "qcnmodel.studies.figures",
    "qcnmodel.sim.protocol_params": "qcnmodel.params.protocols",
    # -- sim/ -> sim/protocols/, sim/kernel/, sim/oracle/, sim/scenarios/ ------------------
    "qcnmodel.fairness": "qcnmodel.sim.fair",
    "qcnmodel.sim._kernel_cache": "qcnmodel.sim.kernel._cache",
    "qcnmodel.sim.kernel_heap": "qcnmodel.sim.kernel.heap",
    "qcnmodel.sim.kernel_proto": "qcnmodel.sim.kernel.dispatch",
    "qcnmodel.sim.kernel_state": "qcnmodel.sim.kernel.state",
    "qcnmodel.sim.kernel_traffic": "qcnmodel.sim.kernel.traffic",
    "qcnmodel.sim.oracle_proto": "qcnmodel.sim.oracle.dispatch",
    "qcnmodel.sim.probes": "qcnmodel.sim.protocols.probes",
    "qcnmodel.sim.proto_settings": "qcnmodel.sim.protocols.registry",
    "qcnmodel.sim.rules": "qcnmodel.sim.protocols.qcn",
    "qcnmodel.sim.rules_dcqcn": "qcnmodel.sim.protocols.dcqcn",
    "qcnmodel.sim.rules_dcqcn_ref": "qcnmodel.sim.protocols.dcqcn_ref",
    "qcnmodel.sim.rules_ecm": "qcnmodel.sim.protocols.ecm",
    "qcnmodel.sim.rules_ecm_ref": "qcnmodel.sim.protocols.ecm_ref",
    "qcnmodel.sim.rules_ref": "qcnmodel.sim.protocols.qcn_ref",
    "qcnmodel.sim.rules_variants": "qcnmodel.sim.protocols.qcn_variants",
    "qcnmodel.sim.rules_variants_ref": "qcnmodel.sim.protocols.qcn_variants_ref",
    "qcnmodel.sim.scenarios_catalogue": "qcnmodel.sim.scenarios.catalogue",
}


class _MovedModule(types.ModuleType):
    """Proxy standing at an old import path: every attribute comes from the new module."""

    def __init__(self, name: str, new: str) -> None:
        super().__init__(name, f"Deprecated alias of {new}.")
        self.__dict__["_qcnmodel_new"] = new

    def _target(self):
        return importlib.import_module(self.__dict__["_qcnmodel_new"])

    def __getattr__(self, attr: str):
        return getattr(self._target(), attr)

    def __dir__(self):
        return dir(self._target())


class _Loader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {self.new}; the old path will be removed in the next release",
            DeprecationWarning,
            stacklevel=3,
        )
        return _MovedModule(spec.name, self.new)

    def exec_module(self, module) -> None:
        module._target()  # fail at import time if the new module is broken


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Loader(new))


_FINDER = _Finder()


def install() -> None:
    """Put the finder in front of ``sys.meta_path`` (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
