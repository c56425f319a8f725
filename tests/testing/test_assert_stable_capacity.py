"""``assert_stable`` judges at ``capacity`` (default half the line rate, docs/ci.md) with the
verdict ``margins`` gives at that ``--rate``; ``capacity=line_rate`` gives the verdict of
``margins`` without ``--rate``. N = 10 at 300 us lies between the two critical RTTs (about
526 us at 5 Gb/s, 240 us at 10 Gb/s), so the two rates disagree there. A parameter file's
``[ranges] capacity`` is the default rate, as in ``qcnmodel check FILE``."""

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


def _cap_file(tmp_path, capacity: str | None):
    text = 'preset = "802.1qau"\n[ranges]\nrtt = "300us"\nflows = "10"\n'
    path = tmp_path / "cap.toml"
    path.write_text(text + (f'capacity = "{capacity}"\n' if capacity else ""))
    return path


def test_a_file_is_judged_at_its_own_ranges_capacity_as_check_does(tmp_path, capsys):
    path = _cap_file(tmp_path, "10Gbps")  # the port at the line rate, written in the file
    assert main(["check", str(path), "--no-recommend", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "unstable" and out["capacity_bps"] == 1e10
    unstable = r"(?s)C = 10 Gb/s \(the file's \[ranges\] capacity\).*model UNSTABLE"
    with pytest.raises(AssertionError, match=unstable):
        qt.assert_stable(path, rtt="300us", n_flows=10)
    qt.assert_stable(str(path), rtt="300us", n_flows=10, capacity="5Gbps")  # given: it wins
    # without a capacity in the file: the documented default, half the line rate
    qt.assert_stable(_cap_file(tmp_path, None), rtt="300us", n_flows=10)


def test_a_ranges_table_check_refuses_is_refused(tmp_path):
    path = _cap_file(tmp_path, "0bps")
    with pytest.raises(ValueError, match=r"cap\.toml, line 5: .*bit/s, got '0bps'"):
        qt.assert_stable(path, rtt="300us", n_flows=10)
    path.write_text('preset = "802.1qau"\n[ranges]\ncapcity = "5Gbps"\n')
    with pytest.raises(ValueError, match=r"line 3: .*capcity"):
        qt.assert_stable(path, rtt="300us", n_flows=10)


def test_a_failure_says_what_a_missing_critical_rtt_means():
    # netfpga-1g at 0.5 Gb/s, N = 10, RTT 2 ms: unstable from the search's first RTT; the
    # message said "critical RTT nan" beside a positive phase margin
    import qcnmodel as qm
    from qcnmodel.testing import assert_stable

    with pytest.raises(AssertionError) as info:
        assert_stable(qm.QCNParams.preset("netfpga-1g"), rtt="2ms", n_flows=10,
                      capacity="0.5Gbps")  # fmt: skip
    text = str(info.value)
    assert "critical RTT nan" not in text and "critical RTT none: unstable already at" in text
