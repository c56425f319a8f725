"""Every parameter class of qcnmodel, validated by one validator (:mod:`._validate`).

* :mod:`.qcn`: :class:`QCNParams` (IEEE 802.1Qau congestion and reaction points), the named
  presets :data:`PRESETS` and TOML files (:func:`load_params`);
* :mod:`.protocols`: the parameters of the protocols beyond plain QCN (ECM, ECM-Q, the QCN
  variants' options, probes, SONAR, QCN+);
* :mod:`.dcqcn`: :class:`DCQCNParams`, shared by the DCQCN fluid model and the simulator.

All are frozen dataclasses in SI units that accept unit strings and reject a bad value with a
:class:`ValueError` naming the field and its allowed range.
"""

from __future__ import annotations

from qcnmodel.params._validate import check_field_names
from qcnmodel.params.dcqcn import DCQCNParams, DCQCNSimParams
from qcnmodel.params.protocols import (
    ECMParams,
    ECMQParams,
    EFRParams,
    FbHatParams,
    ProbeParams,
    QCNPlusParams,
    SonarParams,
)
from qcnmodel.params.qcn import BASE_SAMPLE_TABLE, PRESETS, QCNParams, load_params

__all__ = [
    "BASE_SAMPLE_TABLE",
    "DCQCNParams",
    "DCQCNSimParams",
    "ECMParams",
    "ECMQParams",
    "EFRParams",
    "FbHatParams",
    "PRESETS",
    "ProbeParams",
    "QCNParams",
    "QCNPlusParams",
    "SonarParams",
    "check_field_names",
    "load_params",
]


def __getattr__(name: str):
    """Names of the former single module ``qcnmodel.params`` (e.g. ``_NUMERIC``)."""
    from qcnmodel.params import _validate, qcn

    if hasattr(qcn, name):
        return getattr(qcn, name)
    legacy = {"_parse_bool": "parse_bool", "_range_text": "range_text"}
    if name in legacy:
        return getattr(_validate, legacy[name])
    raise AttributeError(f"module 'qcnmodel.params' has no attribute {name!r}")
