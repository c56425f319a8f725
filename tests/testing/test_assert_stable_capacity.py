"""``assert_stable`` judges at ``capacity`` (default half the line rate, docs/ci.md) with the
verdict ``margins`` gives at that ``--rate``; ``capacity=line_rate`` gives the verdict of
``margins`` without ``--rate``. N = 10 at 300 us lies between the two critical RTTs (about
500 us at 5 Gb/s, 252 us at 10 Gb/s), so the two rates disagree there."""

from __future__ import annotations

import json

import pytest

import qcnmodel as qm
from qcnmodel import testing as qt
from qcnmodel.cli import main

P = qm.QCNParams.preset("802.1qau")


def _margins_stable(capsys, *rate: str) -> bool:
    assert main(["margins", "--flows", "10", "--rtt", "300us", *rate, "--json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)["stable"]


def test_the_default_capacity_is_margins_at_half_the_line_rate(capsys):
    assert _margins_stable(capsys, "--rate", f"{P.line_rate / 2:g}bps") is True
    qt.assert_stable(P, rtt="300us", n_flows=10)  # the same verdict: stable
    assert _margins_stable(capsys) is False  # margins' own default, the line rate
    with pytest.raises(AssertionError, match="model UNSTABLE"):
        qt.assert_stable(P, rtt="300us", n_flows=10, capacity=P.line_rate)
