"""`qcnmodel margins` where the port never congests: N flows at the line rate offer no more
than the port serves, so the queue stays empty, no feedback is sent and there is no loop to
linearise. The answer is "not congested" (exit 0, as `check` counts such a flow count
stable), said in words, not as rows of infinite and NaN margins."""

from __future__ import annotations

import json

import pytest

from qcnmodel.cli import main

#: the summary's keys, kept at an uncongested point (their values those of the open loop)
KEYS = {"model", "phase_margin_deg", "gain_margin_db", "delay_margin_s", "crossover_rad_s",
        "critical_rtt_s", "stable", "fixed_point"}  # fmt: skip

#: one flow at the 10 Gb/s line rate into a 100 Gb/s port
IDLE = ["--flows", "1", "--rate", "100Gbps", "--rtt", "100us", "--quiet"]


@pytest.mark.parametrize("model", ["qcn", "fopdt", "ecm"])
def test_the_table_says_not_congested_and_prints_no_nan(model, capsys):
    # qcn and fopdt printed "gain crossover nan rad/s" and "inf" margins; ecm exited 2
    assert main(["margins", "--model", model, *IDLE]) == 0
    out = capsys.readouterr().out
    assert "not congested: N = 1 flow at the line rate 10 Gb/s" in out, out
    assert "no loop to linearise" in out and "C = 100 Gb/s" in out, out
    assert "nan" not in out and "inf deg" not in out, out


@pytest.mark.parametrize("model", ["qcn", "fopdt", "ecm"])
def test_the_json_keeps_its_keys_and_gives_the_reason(model, capsys):
    assert main(["margins", "--model", model, *IDLE, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert KEYS <= set(out), set(out)
    assert out["congested"] is False and "not congested" in out["no_congestion"]
    assert out["stable"] is True and out["crossover_rad_s"] is None  # JSON's nan


def test_the_default_preset_with_one_flow_is_not_congested(capsys):
    # one flow at the line rate into a port of the same rate: N x line rate = C
    assert main(["margins", "--model", "fopdt", "--flows", "1", "--rtt", "100us", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["congested"] is False and "C = 10 Gb/s" in out["no_congestion"]


def test_a_congested_point_says_so(capsys):
    assert main(["margins", "--model", "fopdt", "--flows", "10", "--rtt", "100us", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["congested"] is True and "no_congestion" not in out


@pytest.mark.parametrize("model", ["qcn", "fopdt", "ecm"])
def test_flows_at_exactly_the_ports_rate_do_not_congest_it_in_any_model(model, capsys):
    # N x line rate = C: 1 flow at 10 Gb/s into 10 Gb/s, 2 into 20 Gb/s. ECM linearised a
    # fixed point there (q = 37500 B at the line rate) and called the loop UNSTABLE at 200 us
    for flows, rate in (("1", "10Gbps"), ("2", "20Gbps")):
        args = ["margins", "--model", model, "--flows", flows, "--rate", rate, "--rtt", "200us"]
        assert main([*args, "--quiet", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["congested"] is False and out["stable"] is True, (flows, out)
