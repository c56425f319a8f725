"""Protocol registry and option dataclasses: names, codes, settings routing, validation."""

from __future__ import annotations

import numpy as np
import pytest

from qcnmodel.params import QCNParams
from qcnmodel.params.protocols import (
    EFRParams,
    FbHatParams,
    ProbeParams,
    QCNPlusParams,
    SonarParams,
)
from qcnmodel.sim.protocols import registry as P

NAMES = ("none", "qcn", "ecm", "ecm-q", "qcn-h", "qcn-p", "qcn-hp", "qcn-sp", "qcn-pp",
         "qcn-sonar", "qcn-plus", "dcqcn")  # fmt: skip


def test_every_protocol_of_issue5_is_registered_with_a_unique_code():
    assert tuple(P.PROTOCOLS) == NAMES
    assert sorted(P.PROTO_CODES.values()) == list(range(len(NAMES)))
    for p in P.PROTOCOLS.values():
        assert p.description and p.seed and p.family in ("none", "qcn", "ecm", "dcqcn")
        for opt in p.options:  # every documented option is a field of one of its dataclasses
            assert any(opt in cls.__dataclass_fields__ for cls in p.params), (p.name, opt)


def test_probe_paths():
    paths = {n: P.get_protocol(n).probe_path for n in ("qcn-p", "qcn-hp", "qcn-sp", "qcn-pp")}
    assert paths == {"qcn-p": "cp", "qcn-hp": "cp", "qcn-sp": "subpath", "qcn-pp": "path"}


def test_make_config_routes_settings_and_applies_implied_values():
    cfg = P.make_config("qcn-sonar", {"nc_threshold": "15KB", "hai": "off", "efr": True})
    assert cfg.get(QCNParams).tr_div8 == "off"  # "No FR1 target-rate adjustment"
    assert cfg.get(QCNParams).hai is False and cfg.get(EFRParams).efr is True
    assert cfg.get(SonarParams).nc_threshold == 15000.0
    assert P.make_config("qcn-sonar", {"tr_div8": "own_first"}).get(QCNParams).tr_div8 == (
        "own_first"
    )
    hp = P.make_config("qcn-hp", {"interval": "2ms"})
    assert hp.get(QCNParams).r_ai == 24e6  # seed 003: A = 24 Mbit for QCN-H
    assert hp.get(ProbeParams).interval == 2e-3 and hp.get(FbHatParams).mode == "normalised"
    assert P.make_config("qcn").get(SonarParams) is None


def test_make_config_errors_name_the_field():
    with pytest.raises(ValueError, match="protocol"):
        P.make_config("qcm")
    with pytest.raises(ValueError, match="nc_treshold.*nc_threshold"):
        P.make_config("qcn-sonar", {"nc_treshold": 1})
    with pytest.raises(ValueError, match="wp_timer"):
        P.make_config("qcn-sonar", {"wp_timer": "0ms"})
    with pytest.raises(ValueError, match="efr_fraction"):
        P.make_config("qcn", {"efr_fraction": 1.5})


@pytest.mark.parametrize(
    "cls,field,value",
    [
        (EFRParams, "to_thresh", "sometimes"),
        (FbHatParams, "ewma_gain", 0.0),
        (FbHatParams, "mode", "hat"),
        (ProbeParams, "interval", 0.0),
        (ProbeParams, "pos_gain", 2.0),
        (SonarParams, "sf_timer", "-1ms"),
        (SonarParams, "boost", "turbo"),
        (QCNPlusParams, "rtt", 0.0),
        (QCNPlusParams, "gain_mode", "smooth"),
        (QCNPlusParams, "one_neg_per_rtt", "maybe"),
    ],
)
def test_bad_option_values_name_the_field(cls, field, value):
    with pytest.raises(ValueError, match=field):
        cls(**{field: value})
    with pytest.raises(ValueError, match="unknown"):
        cls().replace(not_a_field=1)


def test_seed_values():
    s = SonarParams()  # seed 000: WP 10 ms, WE 2 ms, SF 0.5 ms ("05ms"), 15000 B, 10 ms
    assert (s.wp_timer, s.we_timer, s.sf_timer, s.nc_threshold, s.nc_interval) == (
        10e-3, 2e-3, 0.5e-3, 15000.0, 10e-3)  # fmt: skip
    assert QCNPlusParams(rtt="2ms").loop_gain() == 0.25  # 50 % per ms of RTT


@pytest.mark.parametrize("name", NAMES)
def test_pack_and_new_state_shapes(name):
    from qcnmodel.sim.protocols import dcqcn as d
    from qcnmodel.sim.protocols import ecm as e
    from qcnmodel.sim.protocols import qcn_variants as v

    cfg = P.make_config(name)
    packed, state = cfg.pack(), cfg.new_state(2, 3)
    fam = cfg.protocol.family
    expect = {
        "none": ({}, {}),
        "qcn": ({"cp": v.CV_N, "rp": v.V_N}, {"cp": v.CV_NFIELDS, "rp": v.RV_NFIELDS}),
        "ecm": ({"cp": e.ECP_N, "rp": e.ERP_N}, {"cp": e.ECP_NFIELDS, "rp": e.ERP_NFIELDS}),
        "dcqcn": (
            {"cp": d.DCP_N, "np": d.NPP_N, "rp": d.DRP_N},
            {"cp": d.DC_NFIELDS, "np": d.NP_NFIELDS, "rp": d.D_NFIELDS},
        ),
    }[fam]
    assert {k: a.shape for k, a in packed.items()} == {k: (n,) for k, n in expect[0].items()}
    assert {k: a.shape[0] for k, a in state.items()} == expect[1]
    if "rp" in state:  # every family: row 0 = active (0), row 1 = CR at the line rate
        assert np.all(state["rp"][0] == 0.0) and np.all(state["rp"][1] > 0.0)
    if name in ("qcn-p", "qcn-hp", "qcn-sp", "qcn-pp", "qcn-plus"):
        assert packed["rp"][v.V_PROBE] == 1.0
    if name == "qcn-sonar":
        assert packed["rp"][v.V_SONAR] == 1.0 and packed["cp"][v.CV_NC_THR] == 15000.0
