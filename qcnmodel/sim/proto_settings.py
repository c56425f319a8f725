"""Routing of ``--set`` keys between the scenario, QCNParams and the protocol's parameters.

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

import difflib
from dataclasses import fields

from qcnmodel.params import QCNParams
from qcnmodel.sim.protocols import ProtocolConfig, get_protocol, make_config

__all__ = ["protocol_config", "split_overrides"]

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
    order = (("q", qcn), ("p", own)) if proto.family in ("qcn", "none") else (
        ("p", own), ("q", qcn))  # fmt: skip
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
        allowed = sorted(scen) + sorted(own) + sorted(qcn)
        close = difflib.get_close_matches(name, allowed, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"{key}: unknown parameter{hint} (scenario parameters: "
            f"{', '.join(sorted(scen)) or '-'}; {protocol} parameters: "
            f"{', '.join(sorted(own)) or '-'}; QCN parameters: {', '.join(sorted(qcn))}; "
            f"prefix scenario./qcn./proto. where names clash)"
        )
    return out["s"], out["q"], out["p"]


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
    if proto.family == "qcn":
        for k in q_over or {}:
            if k not in ("line_rate", "frame_size"):
                settings.setdefault(k, getattr(params, k))
    if proto.family in ("ecm", "dcqcn"):
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
