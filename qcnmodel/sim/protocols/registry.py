"""Protocol registry: name -> integer code, description, source seed, parameters, options.

The simulator selects a protocol with ``--protocol NAME`` and sets options with
``--set key=value``; :func:`make_config` splits such settings between
:class:`qcnmodel.params.QCNParams` and the protocol's own dataclasses
(:mod:`qcnmodel.sim.protocol_params`), applies the protocol's implied QCN settings, and
validates everything (errors name the field).

Families (``Protocol.family``; :data:`FAMILIES` says what the simulator needs to know of
each, and the kernel and the oracle each map a family to one adapter):

* ``none``: no congestion management (code 0).
* ``qcn``: :mod:`.qcn` and :mod:`.qcn_variants` (one layout, :mod:`.qcn_layout`): qcn, qcn-h,
  qcn-p, qcn-hp, qcn-sp, qcn-pp, qcn-sonar, qcn-plus.
* ``ecm``: :mod:`.ecm`: ecm, ecm-q.
* ``dcqcn``: :mod:`.dcqcn`.

Probe path (``Protocol.probe_path``): ``cp`` (directed to the RL's CPID), ``subpath`` (walked
RP -> CPID's CP), ``path`` (walked to the destination); see :mod:`.qcn_variants` item 4.

Settings routing (``--set``)
----------------------------
Unprefixed keys go to the first owner that has such a field:

* the scenario's parameters (``qcnmodel scenarios --params``);
* QCN family (qcn, qcn-h, qcn-p, ...): :class:`~qcnmodel.params.QCNParams`, then the
  protocol's own classes (the order of :func:`qcnmodel.sim.protocols.make_config`);
* ECM and DCQCN: the protocol's own class, then QCNParams (which still sets the kernel's
  ``cp_latency``).

A prefix names the owner explicitly where names clash: ``scenario.KEY``, ``qcn.KEY``
(QCNParams) or ``proto.KEY`` (the protocol's own classes; e.g. ``proto.rtt`` is QCN+'s RTT
while ``rtt`` is the scenario's link RTT, ``proto.jitter`` is the probe-timer jitter while
``jitter`` is QCN's). An unknown key raises :class:`ValueError` naming it and listing the
allowed keys. QCNParams settings given explicitly win over a protocol's implied settings
(e.g. ``tr_div8`` for qcn-sonar).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, fields

from qcnmodel._errors import did_you_mean, unknown_name
from qcnmodel.params import QCNParams
from qcnmodel.params.protocols import (
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
    "FAMILIES",
    "PREFIXES",
    "PROTOCOLS",
    "PROTO_CODES",
    "Family",
    "Protocol",
    "ProtocolConfig",
    "get_protocol",
    "make_config",
    "protocol_config",
    "protocol_name",
    "unread_params_note",
    "split_overrides",
]

PROTO_NONE, PROTO_QCN, PROTO_ECM, PROTO_ECM_Q, PROTO_QCN_H, PROTO_QCN_P = 0, 1, 2, 3, 4, 5
PROTO_QCN_HP, PROTO_QCN_SP, PROTO_QCN_PP, PROTO_QCN_SONAR, PROTO_QCN_PLUS = 6, 7, 8, 9, 10
PROTO_DCQCN = 11

#: The QCN options documented for ``--set`` (QCNParams fields and EFRParams fields).
QCN_OPTIONS = (
    "hai", "sampling", "ps_fixed", "drift_inc", "drift_factor", "drift_period", "timer",
    "efr", "efr_fraction", "efr_max", "to_thresh",
)  # fmt: skip


@dataclass(frozen=True)
class Family:
    """What the simulator knows of a protocol family besides its rules (one per family).

    Attributes
    ----------
    name : str
    layout : str or None
        Module with ``pack_config(cfg)`` (the packed parameter vectors of a ProtocolConfig)
        and ``new_config_state(cfg, n_cp, n_rp)`` (its initial state tables); None: the
        family has no protocol state.
    qcn_first : bool
        ``--set`` keys go to QCNParams before the protocol's own classes (QCN family); else
        after them (QCNParams still sets the kernel's ``cp_latency``).
    network_sets : bool
        The network's line rate and frame size fill the protocol's own classes unless set.
    trace_extra : str or None
        Name of the protocol-specific traced RL variable (the kernel's ``TR_X`` row).
    """

    name: str
    layout: str | None = None
    qcn_first: bool = True
    network_sets: bool = False
    trace_extra: str | None = None

    def pack(self, cfg) -> dict:
        """Packed parameter vectors of ``cfg`` (``cp``, ``rp``, DCQCN also ``np``)."""
        return importlib.import_module(self.layout).pack_config(cfg) if self.layout else {}

    def new_state(self, cfg, n_cp: int, n_rp: int) -> dict:
        """Initial state tables of ``cfg`` for ``n_cp`` CPs and ``n_rp`` RLs."""
        if not self.layout:
            return {}
        return importlib.import_module(self.layout).new_config_state(cfg, n_cp, n_rp)


#: family name -> :class:`Family`
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("none"),
        Family("qcn", "qcnmodel.sim.protocols.qcn_layout"),
        Family("ecm", "qcnmodel.sim.protocols.ecm", qcn_first=False, network_sets=True),
        Family("dcqcn", "qcnmodel.sim.protocols.dcqcn", qcn_first=False, network_sets=True,
               trace_extra="alpha"),
    )
}  # fmt: skip


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

    @property
    def fam(self) -> Family:
        """The protocol's :class:`Family`."""
        return FAMILIES[self.family]


_Q = (QCNParams, EFRParams)
PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol("none", PROTO_NONE, "no congestion management (PAUSE/drops only)", "-",
                 "none"),
        Protocol("qcn", PROTO_QCN, "IEEE 802.1Qau QCN",
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
                 "Zhu et al., CoNEXT 2016", "dcqcn", (DCQCNSimParams,),
                 ("kmin", "kmax", "pmax", "cnp_interval", "g", "alpha_timer", "rate_timer",
                  "byte_counter", "r_ai", "r_hai")),
    )
}  # fmt: skip

#: name -> integer code
PROTO_CODES = {name: p.code for name, p in PROTOCOLS.items()}


def protocol_name(name, field: str = "protocol") -> str:
    """The registry name of the protocol ``name``, read without regard to case or surrounding
    blanks (``"QCN"`` -> ``"qcn"``), as the units are; ValueError naming ``field`` (the flag or
    argument it came from) and the known names for an unknown one."""
    key = name.strip().lower() if isinstance(name, str) else name
    if not isinstance(key, str) or key not in PROTOCOLS:
        raise unknown_name(field, "protocol", name, PROTOCOLS, sort=False)
    return key


def get_protocol(name: str) -> Protocol:
    """Registry entry by its registry name (ValueError with a suggestion for an unknown name;
    :func:`protocol_name` reads a name given in another case)."""
    if name not in PROTOCOLS:
        if isinstance(name, str) and name.strip().lower() in PROTOCOLS:
            raise ValueError(f"protocol: unknown protocol {name!r}; did you mean "
                             f"{name.strip().lower()!r}? (names are lower case)")  # fmt: skip
        raise unknown_name("protocol", "protocol", name, PROTOCOLS, sort=False)
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
        for DCQCN); empty for ``none`` (the family's layout module packs them)."""
        return self.protocol.fam.pack(self)

    def new_state(self, n_cp: int, n_rp: int) -> dict:
        """Initial struct-of-arrays states (``cp``, ``rp``, DCQCN also ``np`` per RL/flow);
        RLs start inactive at the line rate."""
        return self.protocol.fam.new_state(self, n_cp, n_rp)


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
        raise ValueError(f"{key}: not a parameter of protocol {name!r}{did_you_mean(key, valid)}")
    return ProtocolConfig(proto, out)


# ---------------------------------------------------------------- settings routing
PREFIXES = ("scenario.", "qcn.", "proto.")


def _owners(sc, protocol: str):
    proto = get_protocol(protocol)
    scen = {p.name for p in sc.params} if sc is not None else set()
    qcn = {f.name for f in fields(QCNParams)}
    own = {f.name for c in proto.params if c is not QCNParams for f in fields(c)}
    return proto, scen, qcn, own


def split_overrides(sc, overrides: dict, protocol: str = "qcn") -> tuple[dict, dict, dict]:
    """Split ``overrides`` into (scenario, QCNParams, protocol-class) settings.

    Parameters
    ----------
    sc : Scenario or None
    overrides : dict
        ``--set`` keys (optionally prefixed, see the module docstring) and values.
    protocol : str

    Raises
    ------
    ValueError
        Unknown protocol, or a key no owner has (named, with the allowed keys).
    """
    proto, scen, qcn, own = _owners(sc, protocol)
    order = (("q", qcn), ("p", own)) if proto.fam.qcn_first else (("p", own), ("q", qcn))
    out = {"s": {}, "q": {}, "p": {}}
    for key, v in overrides.items():
        prefix, _, name = key.partition(".") if "." in key else ("", "", key)
        if prefix:
            where = {"scenario": ("s", scen), "qcn": ("q", qcn), "proto": ("p", own)}.get(prefix)
            if where is not None and name in where[1]:
                out[where[0]][name] = v
                continue
        else:
            for tag, names in (("s", scen), *order):
                if key in names:
                    out[tag][key] = v
                    break
            else:
                tag = None
            if tag is not None:
                continue
        hint = did_you_mean(name, sorted(scen) + sorted(own) + sorted(qcn))
        raise ValueError(
            f"{key}: unknown parameter{hint} (scenario parameters: "
            f"{', '.join(sorted(scen)) or '-'}; {protocol} parameters: "
            f"{', '.join(sorted(own)) or '-'}; QCN parameters: {', '.join(sorted(qcn))}; "
            f"prefix scenario./qcn./proto. where names clash)"
        )
    return out["s"], out["q"], out["p"]


#: QCNParams fields every protocol's run reads (the network's rate and frame size, and the
#: congestion point's processing latency; :func:`qcnmodel.sim.kernel.state.build_state`)
SHARED_QCN_FIELDS = ("line_rate", "frame_size", "cp_latency")


def check_settings_read(sc, overrides: dict, protocol: str) -> None:
    """Refuse a QCN parameter among ``overrides`` for a protocol without QCN parameters
    (``none``, ``ecm``, ``ecm-q``, ``dcqcn``): it would be accepted and change nothing.

    Raises
    ------
    ValueError
        Naming the parameter and the protocol.
    """
    if QCNParams in get_protocol(protocol).params or not overrides:
        return
    _, qcn, _ = split_overrides(sc, overrides, protocol)
    for key in qcn:
        if key not in SHARED_QCN_FIELDS:
            raise ValueError(
                f"{key}: a QCN parameter, which protocol {protocol!r} does not read (it "
                "would change nothing); see `qcnmodel scenarios --params` and the protocol's "
                "parameters"
            )


def unread_params_note(protocols, source: str) -> str | None:
    """The note that the QCN parameter set given as ``source`` (e.g. ``"--params f.toml"``)
    is not read by those of ``protocols`` without QCN parameters, but for
    :data:`SHARED_QCN_FIELDS`; None when every one of them reads it. A parameter set comes
    with every field, so it is noted where a ``--set`` of one of its fields is refused
    (:func:`check_settings_read`): the fields every protocol reads still apply."""
    blind = [p for p in protocols if QCNParams not in get_protocol(p).params]
    if not blind:
        return None
    who = f"protocol {blind[0]!r}" if len(blind) == 1 else f"protocols {', '.join(blind)}"
    return (f"{source}: {who} reads no QCN parameter but {', '.join(SHARED_QCN_FIELDS)} "
            "(line_rate and frame_size come from the network); the parameter set's other "
            "fields change nothing there")  # fmt: skip


def protocol_config(protocol: str, p_over: dict, params: QCNParams, q_over: dict | None = None):
    """The run's ProtocolConfig.

    ``params`` already carries ``q_over``; for the QCN family the ``q_over`` keys (except the
    network-imposed ``line_rate`` and ``frame_size``) count as explicit, so the protocol's
    implied QCN settings do not override them. ECM and DCQCN take the network's line rate and
    frame size unless set. Keys of ``p_over`` that QCNParams also has go to the protocol's
    own class (``proto.KEY``).
    """
    proto = get_protocol(protocol)
    own = [c for c in proto.params if c is not QCNParams]
    settings, forced = {}, {}
    qnames = {f.name for f in fields(QCNParams)} if QCNParams in proto.params else set()
    for k, v in p_over.items():
        (forced if k in qnames else settings)[k] = v
    if QCNParams in proto.params:
        for k in q_over or {}:
            if k not in ("line_rate", "frame_size"):
                settings.setdefault(k, getattr(params, k))
    if proto.fam.network_sets:
        names = {f.name for c in own for f in fields(c)}
        net = {"line_rate": params.line_rate, "frame_size": params.frame_size,
               "packet_size": float(params.frame_size)}  # fmt: skip
        for k, v in net.items():
            if k in names and k not in settings:
                settings[k] = v
    cfg = make_config(protocol, settings, qcn=params)
    if not forced:
        return cfg
    objs = dict(cfg.params)
    for k, v in forced.items():
        cls = next(c for c in own if k in {f.name for f in fields(c)})
        objs[cls.__name__] = objs[cls.__name__].replace(**{k: v})
    return ProtocolConfig(cfg.protocol, objs)
