"""Congestion-management protocols: the registry and each protocol's rules.

:mod:`.registry` names every protocol (``--protocol``), its parameter classes and options, and
routes ``--set`` settings. Each protocol's compiled rules (numba, struct-of-arrays state) sit
beside their plain-Python twin, which the oracle runs and which mirrors them bit for bit:
:mod:`.qcn` / :mod:`.qcn_ref` (IEEE 802.1Qau QCN), :mod:`.qcn_variants` /
:mod:`.qcn_variants_ref` (the QCN variants of the decks), :mod:`.ecm` / :mod:`.ecm_ref`
(ECM/BCN, ECM-Q), :mod:`.dcqcn` / :mod:`.dcqcn_ref` (DCQCN) and :mod:`.probes` (who answers
a path probe).
"""

from qcnmodel.sim.kernel import _cache

_cache.install()  # before any rule module defines a compiled function

from qcnmodel.sim.protocols.registry import (  # noqa: E402, F401 (the PROTO_* codes)
    PROTO_CODES,
    PROTO_DCQCN,
    PROTO_ECM,
    PROTO_ECM_Q,
    PROTO_NONE,
    PROTO_QCN,
    PROTO_QCN_H,
    PROTO_QCN_HP,
    PROTO_QCN_P,
    PROTO_QCN_PLUS,
    PROTO_QCN_PP,
    PROTO_QCN_SONAR,
    PROTO_QCN_SP,
    PROTOCOLS,
    QCN_OPTIONS,
    Protocol,
    ProtocolConfig,
    get_protocol,
    make_config,
    protocol_config,
    split_overrides,
)

__all__ = [
    "PROTOCOLS",
    "PROTO_CODES",
    "QCN_OPTIONS",
    "Protocol",
    "ProtocolConfig",
    "get_protocol",
    "make_config",
    "protocol_config",
    "split_overrides",
]
