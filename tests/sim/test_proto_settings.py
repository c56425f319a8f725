"""Routing of --set keys between scenario, QCNParams and protocol parameters (issue 5)."""

from __future__ import annotations

import pytest

from qcnmodel.params import QCNParams
from qcnmodel.sim.protocols.registry import protocol_config, split_overrides
from qcnmodel.sim.scenarios import get_scenario

SC = get_scenario("og-hotspot")


def test_unprefixed_routing_order():
    s, q, p = split_overrides(SC, {"rtt": "50us", "qeq": "30KB", "interval": "1ms"}, "qcn-plus")
    assert s == {"rtt": "50us"} and q == {"qeq": "30KB"} and p == {"interval": "1ms"}
    s, q, p = split_overrides(SC, {"qeq": "30KB", "cp_latency": "1us"}, "ecm")
    assert p == {"qeq": "30KB"} and q == {"cp_latency": "1us"}
    s, q, p = split_overrides(SC, {"jitter": 0.1}, "qcn-p")
    assert q == {"jitter": 0.1} and p == {}


def test_prefixes_reach_clashing_fields():
    s, q, p = split_overrides(SC, {"proto.rtt": "1ms", "proto.jitter": 0.3, "qcn.w": 4},
                              "qcn-plus")  # fmt: skip
    assert p == {"rtt": "1ms", "jitter": 0.3} and q == {"w": 4} and s == {}
    params = QCNParams().replace(w=4)
    cfg = protocol_config("qcn-plus", p, params, q)
    assert cfg.get(QCNParams).w == 4 and cfg.get(QCNParams).jitter == QCNParams().jitter
    assert cfg.params["QCNPlusParams"].rtt == pytest.approx(1e-3)
    assert cfg.params["ProbeParams"].jitter == 0.3


def test_explicit_qcn_setting_beats_implied():
    cfg = protocol_config("qcn-sonar", {}, QCNParams())
    assert cfg.get(QCNParams).tr_div8 == "off"
    params = QCNParams().replace(tr_div8="own_first")
    cfg = protocol_config("qcn-sonar", {}, params, {"tr_div8": "own_first"})
    assert cfg.get(QCNParams).tr_div8 == "own_first"


def test_network_rates_for_ecm_and_dcqcn():
    params = QCNParams().replace(line_rate=1e9, frame_size=1000)
    assert protocol_config("ecm", {}, params).params["ECMParams"].line_rate == 1e9
    d = protocol_config("dcqcn", {"kmin": "10KB"}, params).params["DCQCNSimParams"]
    assert d.line_rate == 1e9 and d.packet_size == 1000 and d.kmin == 10e3


@pytest.mark.parametrize("key", ["bogus", "proto.qeq", "scenario.qeq", "nope.x"])
def test_unknown_keys_name_themselves(key):
    with pytest.raises(ValueError, match=f"{key}: unknown parameter.*QCN parameters"):
        split_overrides(SC, {key: 1}, "qcn-p")
