"""Scenario parameters speak in units: ``qcnmodel scenarios --params`` lists each one's default
and allowed range with units (``5 us``, ``1 Mbps..1 Tbps``), and a value out of range is
refused naming the parameter and that range, in the units typed on the command line."""

from __future__ import annotations

import pytest

from qcnmodel.cli import main
from qcnmodel.sim.scenarios import SCENARIOS
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

PARSERS = {"time": parse_time, "rate": parse_rate, "size": parse_size}


@pytest.mark.parametrize(
    "setting, message",
    [
        ("rtt=2s", "rtt: '2s' is outside the allowed range 0 s..1 s"),
        ("switch_latency=1s", "switch_latency: '1s' is outside the allowed range 0 s..10 ms"),
        ("link_rate=100Tbps", "link_rate: '100Tbps' is outside the allowed range 1 Mbps..1 Tbps"),
        ("switch_memory=1", "switch_memory: '1' is outside the allowed range 1.5 KB..inf"),
        ("hotspot_start=2e4s", "hotspot_start: '2e4s' is outside the allowed range 0 s..10000 s"),
        ("n_nodes=5000", "n_nodes: '5000' is outside the allowed range 2..1000"),
        ("n_nodes=2.5", "n_nodes: must be a whole number in 2..1000, got '2.5'"),
        (
            "oq_limit=-1",
            "oq_limit: '-1' is outside the allowed range 0 B..inf; output-queue limit (0 = none)",
        ),  # fmt: skip
    ],
)
def test_an_out_of_range_value_names_the_parameter_and_its_range_in_units(setting, message,
                                                                          capsys):  # fmt: skip
    assert main(["simulate", "--scenario", "og-hotspot", "--set", setting]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_listing_gives_defaults_and_ranges_in_units(capsys):
    assert main(["scenarios", "--params"]) == 0
    out = capsys.readouterr().out
    assert "rtt = 5 us (time, 0 s..1 s) per-link round-trip propagation time" in out
    assert "link_rate = 10 Gbps (rate, 1 Mbps..1 Tbps)" in out
    assert "switch_memory = 150 KB (size, 1.5 KB..inf)" in out
    assert "n_nodes = 10 (int, 2..1000)" in out
    assert "pause = false (bool, true | false)" in out


def test_every_range_and_default_reads_back_as_its_value():
    """The texts are values ``--set`` accepts: each parses back to the SI number (to the six
    significant figures written)."""
    for sc in SCENARIOS.values():
        for p in sc.params:
            if p.kind in ("bool", "choice"):
                continue
            lo, hi = p.range_text().split("..")
            parse = PARSERS.get(p.kind, parse_number)
            for text, value in ((lo, p.lo), (hi, p.hi), (p.value_text(p.default), p.default)):
                got = float("inf") if text == "inf" else parse(text, p.name)
                assert got == pytest.approx(value, rel=1e-6, abs=0), (sc.name, p.name, text)
                if p.lo <= value <= p.hi:
                    assert p.parse(text) == pytest.approx(value, rel=1e-6), (p.name, text)
