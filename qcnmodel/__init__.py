"""qcnmodel: control theory and packet-level simulation of IEEE 802.1Qau QCN.

The public API is deliberately small::

    import qcnmodel as qm
    p = qm.QCNParams.preset("802.1qau")
    model = qm.QCNFluidModel(p, rtt="100us", n_flows=10)
    print(model.loop().margins())
    print(qm.summary(qm.build_model("fopdt", p, variant="zoh", rtt="100us")))

Units are SI inside (seconds, bit/s, bytes); unit strings such as ``"500us"``,
``"10Gbps"`` or ``"150KB"`` are accepted at the edges (parameters, CLI, TOML); a value they
refuse raises :class:`~qcnmodel.units.InputError`, a ``ValueError`` naming the field.

The package is laid out by layer, data flowing one way: :mod:`qcnmodel.params` (parameter
classes) -> :mod:`qcnmodel.analysis` (delayed loops, margins, integrators; no protocol) ->
:mod:`qcnmodel.models` (the loop models, their registry and summary) -> :mod:`qcnmodel.studies`
(check, sweep, compare, report, figures) and :mod:`qcnmodel.validation` -> :mod:`qcnmodel.cli`;
the packet simulator :mod:`qcnmodel.sim` stands on the parameters alone. The heavier objects
below are loaded on first use; ``dir(qcnmodel)`` lists them. :mod:`qcnmodel.config` holds the
tuning numbers (``qm.config.defaults``).
"""

__version__ = "0.1.0"

from qcnmodel import _compat, config  # noqa: E402

_compat.install()

from qcnmodel.params import PRESETS, QCNParams, load_params  # noqa: E402
from qcnmodel.units import (  # noqa: E402
    InputError,
    parse_number,
    parse_rate,
    parse_size,
    parse_time,
)

#: public name -> module that defines it, imported on first access
_LAZY = {
    # analysis
    "DelayedLoop": "qcnmodel.analysis.loop",
    "FrequencyLoop": "qcnmodel.analysis.freqloop",
    "Margins": "qcnmodel.analysis.margins",
    "margins_over_delay": "qcnmodel.analysis.margins",
    "stability_map": "qcnmodel.analysis.stability",
    "critical_rtt": "qcnmodel.analysis.margins",
    "trajectory_critical_rtt": "qcnmodel.analysis.boundary",
    "unstable_fraction": "qcnmodel.analysis.boundary",
    "odds_crossing": "qcnmodel.analysis.boundary",
    "held_flows": "qcnmodel.analysis.overload",
    # parameters beyond QCN
    "DCQCNParams": "qcnmodel.params.dcqcn",
    "ECMParams": "qcnmodel.params.protocols",
    # models
    "MODELS": "qcnmodel.models",
    "build_model": "qcnmodel.models",
    "summary": "qcnmodel.models.summary",
    "limit_cycle": "qcnmodel.models.limit_cycle",
    "LimitCycle": "qcnmodel.models.limit_cycle",
    "FOPDTModel": "qcnmodel.models.fopdt",
    "QCNFluidModel": "qcnmodel.models.qcn",
    "QCNClassesFluidModel": "qcnmodel.models.qcn_classes",
    "DCQCNFluidModel": "qcnmodel.models.dcqcn",
    "ECMFluidModel": "qcnmodel.models.ecm",
    # simulator
    "simulate": "qcnmodel.sim",
    "SimResult": "qcnmodel.sim",
}

__all__ = [
    "InputError",
    "PRESETS",
    "QCNParams",
    "__version__",
    "config",
    "load_params",
    "parse_number",
    "parse_rate",
    "parse_size",
    "parse_time",
    *sorted(_LAZY),
]


def __getattr__(name: str):
    """Import a lazy public name (models, simulator) on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'qcnmodel' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (lazy ones included) and the module's dunders, not its internals."""
    names = set(globals()) | set(_LAZY)
    return sorted(n for n in names if not n.startswith("_") or n.startswith("__"))
