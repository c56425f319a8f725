"""The FOPDT view at a port that never congests (N flows at the line rate no faster than C)
and at one its flows cannot leave (C/N below MinRate, the slowest a reaction point sends).

One source sends at most the line rate (10 Gb/s at the 802.1Qau defaults), so N = 1 or 2
flows cannot fill a 20 Gb/s port and one flow only just fills a 10 Gb/s one: the queue stays
empty, no CNM is sent and the loop is open. The expected values follow from that alone
(rate = the line rate, queue 0, Fb = Qeq, zero loop gain: infinite margins, no critical RTT)
and match what the QCN fluid model gives at the same points.
"""

import json
import math

import pytest

import qcnmodel as qm
from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.cli import main
from qcnmodel.models.fopdt import FOPDTModel
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams
from qcnmodel.studies.check import CheckRanges, check_params

LINE = 10e9  # the 802.1Qau default line rate, bit/s


@pytest.mark.parametrize("n, capacity", [(1, 20e9), (2, 20e9), (1, None)])
@pytest.mark.parametrize("lag", ["first-order", "zoh", "none"])
def test_no_congestion_is_an_open_loop_at_the_line_rate(n, capacity, lag):
    m = FOPDTModel(QCNParams(), rtt=100e-6, n_flows=n, capacity=capacity, lag=lag)
    assert not m.congested
    fp = m.fixed_point()
    assert fp["rate"] == fp["target_rate"] == LINE
    assert fp["q"] == 0.0 and fp["qfb"] == 0.0 and fp["fb"] == QCNParams().qeq
    mg = m.loop().margins()
    assert mg.stable and math.isinf(mg.phase_margin_deg) and math.isinf(mg.gain_margin_db)
    assert math.isinf(critical_rtt(m))
    assert m.gains()["K"] == 0.0
    # the QCN fluid model says the same of the same point
    q = QCNFluidModel(QCNParams(), rtt=100e-6, n_flows=n, capacity=capacity)
    assert q.congested == m.congested
    assert math.isinf(critical_rtt(q))


def test_congested_points_keep_the_derived_loop():
    m = FOPDTModel(QCNParams(), rtt=100e-6, n_flows=3, capacity=20e9)
    assert m.congested
    assert m.fixed_point()["rate"] == pytest.approx(20e9 / 3, rel=1e-12)
    assert m.fixed_point()["q"] == QCNParams().qeq
    assert math.isfinite(critical_rtt(m))


def test_closed_forms_of_an_open_loop():
    v = FOPDTModel(QCNParams(), n_flows=1, lag="none").closed_form_values()
    assert math.isnan(v["crossover"]) and math.isinf(v["critical_rtt"])
    with pytest.raises(NotImplementedError):
        FOPDTModel(QCNParams(), n_flows=1).closed_form_values()


def test_margins_cli_reports_no_congestion(capsys):
    argv = ["margins", "--model", "fopdt", "--rate", "20Gbps", "--flows", "1", "--rtt", "100us"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stable"] is True
    assert out["critical_rtt_s"] == "inf"
    assert out["fixed_point"]["rate"] == LINE and out["fixed_point"]["q"] == 0.0


def test_check_does_not_rest_on_ports_that_cannot_congest():
    ranges = CheckRanges(rtt=(2e-6, 1e-3), flows=(1, 4), n_rtt=6, n_flows=3, capacity=20e9)
    r = check_params(QCNParams(), ranges, model="fopdt", recommend=False)
    assert math.isinf(r.critical_rtt_s[1]) and math.isinf(r.critical_rtt_s[2])
    assert r.worst_point["n_flows"] == 4


@pytest.mark.parametrize("n, capacity", [(100, 100e6), (1, 1e3), (21, 100e6)])
def test_a_fair_share_below_min_rate_is_an_overloaded_port(n, capacity):
    # a reaction point never sends below MinRate (5 Mb/s in the 802.1Qau set): N flows
    # offer at least N x 5 Mb/s, above C here, whatever the feedback
    from qcnmodel.models._base import Overloaded

    m = FOPDTModel(QCNParams.preset("802.1qau"), rtt=1e-4, n_flows=n, capacity=capacity)
    for call in (m.loop, m.fixed_point, m.gains):
        with pytest.raises(Overloaded, match="MinRate"):
            call()
    s = qm.summary(m)
    assert s["stable"] is False and s["boundary_method"] == "overload"


def test_a_fair_share_at_min_rate_is_held():
    m = FOPDTModel(QCNParams.preset("802.1qau"), rtt=1e-4, n_flows=20, capacity=100e6)
    assert m.fixed_point()["rate"] == pytest.approx(5e6)
