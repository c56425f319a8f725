"""Protocol registry: name -> integer code, description, source seed, parameters, options.

The simulator selects a protocol with ``--protocol NAME`` and sets options with
``--set key=value``; :func:`make_config` splits such settings between
:class:`qcnmodel.params.QCNParams` and the protocol's own dataclasses
(:mod:`qcnmodel.sim.protocol_params`), applies the protocol's implied QCN settings, and
validates everything (errors name the field).

Families and their rule modules (the kernel dispatches on ``Protocol.family``):

* ``none``: no congestion management (code 0).
* ``qcn``: :mod:`qcnmodel.sim.rules_variants` (a bit-identical superset of
  :mod:`qcnmodel.sim.rules`): qcn, qcn-h, qcn-p, qcn-hp, qcn-sp, qcn-pp, qcn-sonar, qcn-plus.
* ``ecm``: :mod:`qcnmodel.sim.rules_ecm`: ecm, ecm-q.
* ``dcqcn``: :mod:`qcnmodel.sim.rules_dcqcn`.

Probe path (``Protocol.probe_path``): ``cp`` (directed to the RL's CPID), ``subpath`` (walked
RP -> CPID's CP), ``path`` (walked to the destination); see rules_variants item 4.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields

from qcnmodel.params import QCNParams
from qcnmodel.sim.protocol_params import (
    DCQCNSimParams,
    ECMParams,
    ECMQParams,
    EFRParams,
    FbHatParams,
    ProbeParams,
    QCNPlusParams,
    SonarParams,
)

__all__ = [
    "PROTOCOLS",
    "PROTO_CODES",
    "Protocol",
    "ProtocolConfig",
    "get_protocol",
    "make_config",
]

PROTO_NONE, PROTO_QCN, PROTO_ECM, PROTO_ECM_Q, PROTO_QCN_H, PROTO_QCN_P = 0, 1, 2, 3, 4, 5
PROTO_QCN_HP, PROTO_QCN_SP, PROTO_QCN_PP, PROTO_QCN_SONAR, PROTO_QCN_PLUS = 6, 7, 8, 9, 10
PROTO_DCQCN = 11

#: QCN options of issue 5 item 2 (QCNParams fields and EFRParams fields).
QCN_OPTIONS = (
    "hai", "sampling", "ps_fixed", "drift_inc", "drift_factor", "drift_period", "timer",
    "efr", "efr_fraction", "efr_max", "to_thresh",
)  # fmt: skip


@dataclass(frozen=True)
class Protocol:
    """One registry entry.

    Attributes
    ----------
    name, code, description, seed : str, int, str, str
    family : {"none", "qcn", "ecm", "dcqcn"}
    params : tuple of type
        Dataclasses the protocol uses (QCNParams first for the QCN family).
    options : tuple of str
        Option names documented for ``--set`` (every field of ``params`` is settable).
    implied : dict
        QCNParams settings the protocol fixes unless overridden (e.g. SONAR: tr_div8=off).
    probe_path : str or None
        ``cp`` / ``subpath`` / ``path`` for probing protocols.
    """

    name: str
    code: int
    description: str
    seed: str
    family: str
    params: tuple = ()
    options: tuple = ()
    implied: dict = field(default_factory=dict)
    probe_path: str | None = None


_Q = (QCNParams, EFRParams)
PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol("none", PROTO_NONE, "no congestion management (PAUSE/drops only)", "-",
                 "none"),
        Protocol("qcn", PROTO_QCN, "IEEE 802.1Qau QCN (qcn-algorithm.md §1-2)",
                 "001/002 (003/004 options)", "qcn", _Q, QCN_OPTIONS),
        Protocol("ecm", PROTO_ECM, "BCN-style ECM with positive and negative feedback",
                 "000, 004", "ecm", (ECMParams,),
                 ("fb_bits", "ecm_max", "q_max", "ecm00", "q_sc", "pos_fb", "drift_inc",
                  "drift_period", "drift_factor")),
        Protocol("ecm-q", PROTO_ECM_Q, "ECM with Qoff and Qdelta quantised separately (8 bit)",
                 "000", "ecm", (ECMQParams,),
                 ("qoff_bits", "qdelta_bits", "qoff_range", "qdelta_range", "w_rp")),
        Protocol("qcn-h", PROTO_QCN_H, "QCN with Fb-hat (normalised derivative)", "003, 000",
                 "qcn", (*_Q, FbHatParams), (*QCN_OPTIONS, "mode", "ref_interval"),
                 {"r_ai": 24e6}),
        Protocol("qcn-p", PROTO_QCN_P, "QCN with CP-directed probes", "003, 004", "qcn",
                 (*_Q, ProbeParams), (*QCN_OPTIONS, "interval", "pos_gain"), {}, "cp"),
        Protocol("qcn-hp", PROTO_QCN_HP, "QCN-H with CP-directed probes", "003", "qcn",
                 (*_Q, FbHatParams, ProbeParams), (*QCN_OPTIONS, "interval", "pos_gain"),
                 {"r_ai": 24e6}, "cp"),
        Protocol("qcn-sp", PROTO_QCN_SP, "QCN with sub-path (RP<->CP) probing", "003, 000",
                 "qcn", (*_Q, ProbeParams), (*QCN_OPTIONS, "interval", "reply"), {},
                 "subpath"),
        Protocol("qcn-pp", PROTO_QCN_PP, "QCN with full-path probing (destination replies last)",
                 "003", "qcn", (*_Q, ProbeParams), (*QCN_OPTIONS, "interval", "reply"), {},
                 "path"),
        Protocol("qcn-sonar", PROTO_QCN_SONAR, "QCN-SONAR: pings after WP, boosts on "
                 "'not congested' echoes", "000", "qcn", (*_Q, SonarParams),
                 (*QCN_OPTIONS, "wp_timer", "we_timer", "sf_timer", "nc_threshold",
                  "nc_interval", "boost"), {"tr_div8": "off"}),
        Protocol("qcn-plus", PROTO_QCN_PLUS, "QCN+ with RTT-based gain tuning r1.01 and "
                 "CP-directed probes", "000", "qcn", (*_Q, QCNPlusParams, ProbeParams),
                 (*QCN_OPTIONS, "rtt", "w_factor", "base_w", "gain_halving", "interval"),
                 {}, "cp"),
        Protocol("dcqcn", PROTO_DCQCN, "DCQCN: RED/ECN marking, CNP, alpha, QCN increase",
                 "models.md §3", "dcqcn", (DCQCNSimParams,),
                 ("kmin", "kmax", "pmax", "cnp_interval", "g", "alpha_timer", "rate_timer",
                  "byte_counter", "r_ai", "r_hai")),
    )
}  # fmt: skip

#: name -> integer code
PROTO_CODES = {name: p.code for name, p in PROTOCOLS.items()}


def get_protocol(name: str) -> Protocol:
    """Registry entry by name (ValueError with a suggestion for an unknown name)."""
    if name not in PROTOCOLS:
        close = difflib.get_close_matches(str(name), list(PROTOCOLS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"protocol: unknown protocol {name!r}{hint} (known: "
                         f"{', '.join(PROTOCOLS)})")  # fmt: skip
    return PROTOCOLS[name]


@dataclass(frozen=True)
class ProtocolConfig:
    """A protocol with validated parameter objects, keyed by class name."""

    protocol: Protocol
    params: dict

    def get(self, cls):
        """The parameter object of class ``cls`` (None if the protocol does not use it)."""
        return self.params.get(cls.__name__)

    def pack(self) -> dict:
        """Packed float64 parameter vectors for the kernel: keys ``cp``, ``rp`` (and ``np``
        for DCQCN); empty for ``none``. QCN family: ``rules_variants`` layouts; ECM:
        ``rules_ecm``; DCQCN: ``rules_dcqcn``."""
        fam = self.protocol.family
        if fam == "qcn":
            from qcnmodel.sim import rules_variants as v

            q = self.get(QCNParams)
            return {
                "cp": v.pack_variant_cp_params(q, self.get(FbHatParams), self.get(SonarParams)),
                "rp": v.pack_variant_rp_params(q, self.get(EFRParams), self.get(QCNPlusParams),
                                               self.get(ProbeParams), self.get(SonarParams)),
            }  # fmt: skip
        if fam == "ecm":
            from qcnmodel.sim import rules_ecm as e

            p = self.params[self.protocol.params[0].__name__]
            return {"cp": e.pack_ecm_cp_params(p), "rp": e.pack_ecm_rp_params(p)}
        if fam == "dcqcn":
            from qcnmodel.sim import rules_dcqcn as d

            p = self.get(DCQCNSimParams)
            return {
                "cp": d.pack_dcqcn_cp_params(p),
                "np": d.pack_dcqcn_np_params(p),
                "rp": d.pack_dcqcn_rp_params(p),
            }
        return {}

    def new_state(self, n_cp: int, n_rp: int) -> dict:
        """Initial struct-of-arrays states (``cp``, ``rp``, DCQCN also ``np`` per RL/flow);
        RLs start inactive at the line rate."""
        fam = self.protocol.family
        if fam == "qcn":
            from qcnmodel.sim import rules_variants as v

            c = self.get(QCNParams).line_rate
            return {"cp": v.new_variant_cp_state(n_cp), "rp": v.new_variant_rp_state(n_rp, c)}
        if fam == "ecm":
            from qcnmodel.sim import rules_ecm as e

            c = self.params[self.protocol.params[0].__name__].line_rate
            return {"cp": e.new_ecm_cp_state(n_cp), "rp": e.new_ecm_rp_state(n_rp, c)}
        if fam == "dcqcn":
            from qcnmodel.sim import rules_dcqcn as d

            c = self.get(DCQCNSimParams).line_rate
            return {
                "cp": d.new_dcqcn_cp_state(n_cp),
                "np": d.new_dcqcn_np_state(n_rp),
                "rp": d.new_dcqcn_rp_state(n_rp, c),
            }
        return {}


def make_config(name: str, settings: dict | None = None, qcn: QCNParams | None = None):
    """Validated parameters for protocol ``name`` from ``--set`` style ``settings``.

    Each key goes to the first of the protocol's dataclasses that has such a field (QCNParams
    first); the protocol's ``implied`` QCN settings apply unless set explicitly.

    Raises
    ------
    ValueError
        Unknown protocol, a key no dataclass of the protocol has, or a bad value.
    """
    proto = get_protocol(name)
    settings = dict(settings or {})
    out = {}
    used = set()
    for cls in proto.params:
        names = {f.name for f in fields(cls)}
        mine = {k: v for k, v in settings.items() if k in names and k not in used}
        used |= set(mine)
        if cls is QCNParams:
            base = qcn if qcn is not None else QCNParams()
            implied = {k: v for k, v in proto.implied.items() if k not in mine}
            out[cls.__name__] = base.replace(**implied, **mine)
        else:
            out[cls.__name__] = cls(**mine)
    unknown = set(settings) - used
    if unknown:
        valid = {f.name for cls in proto.params for f in fields(cls)}
        key = sorted(unknown)[0]
        close = difflib.get_close_matches(key, list(valid), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"{key}: not a parameter of protocol {name!r}{hint}")
    return ProtocolConfig(proto, out)
