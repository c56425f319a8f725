"""qcnmodel: control theory and packet-level simulation of IEEE 802.1Qau QCN.

The public API is deliberately small::

    import qcnmodel as qm
    p = qm.QCNParams.preset("802.1qau")
    model = qm.QCNFluidModel(p, rtt="100us", n_flows=10)
    print(model.loop().margins())

Units are SI inside (seconds, bit/s, bytes); unit strings such as ``"500us"``,
``"10Gbps"`` or ``"150KB"`` are accepted at the edges (parameters, CLI, TOML).
"""

from __future__ import annotations

__version__ = "0.1.0"

from qcnmodel.params import PRESETS, QCNParams, load_params  # noqa: E402
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time  # noqa: E402

__all__ = [
    "PRESETS",
    "QCNParams",
    "__version__",
    "load_params",
    "parse_number",
    "parse_rate",
    "parse_size",
    "parse_time",
]


def __getattr__(name: str):
    """Lazily expose the heavier sub-modules' main objects (models, simulator)."""
    lazy = {
        "DelayedLoop": "qcnmodel.loop",
        "Margins": "qcnmodel.margins",
        "margins_over_delay": "qcnmodel.margins",
        "critical_rtt": "qcnmodel.margins",
        "FOPDTModel": "qcnmodel.fopdt",
        "QCNFluidModel": "qcnmodel.fluid_qcn",
        "DCQCNFluidModel": "qcnmodel.fluid_dcqcn",
        "DCQCNParams": "qcnmodel.fluid_dcqcn",
        "stability_map": "qcnmodel.stability",
        "simulate": "qcnmodel.sim",
        "SimResult": "qcnmodel.sim",
    }
    if name in lazy:
        import importlib

        return getattr(importlib.import_module(lazy[name]), name)
    raise AttributeError(f"module 'qcnmodel' has no attribute {name!r}")
