"""An RTT shorter than the CP latency it contains is no operating point.

The RTT of the models is the whole loop delay CP -> RP -> CP, which docs/validation.md writes
``tau = 2 (d + L_sw) + 8 F / R_line + cp_latency``: it contains the parameter set's
``cp_latency``. The models refuse a shorter one (naming ``rtt`` and its range), ``check``
starts its RTT range there (and says so), and stability maps refuse such an axis.
"""

import math

import pytest

from qcnmodel.analysis.boundary import search_interval
from qcnmodel.analysis.stability import stability_map
from qcnmodel.cli import main
from qcnmodel.models import build_model
from qcnmodel.models.fopdt import FOPDTModel
from qcnmodel.params import QCNParams
from qcnmodel.studies.check import CheckRanges, check_params

LATE = QCNParams(cp_latency=5e-6)


@pytest.mark.parametrize("model, variant", [("fopdt", None), ("qcn", None), ("qcn", "paper")])
def test_models_refuse_an_rtt_below_the_cp_latency(model, variant):
    with pytest.raises(ValueError, match=r"rtt: must be in \[5e-06, .*cp_latency = 5e-06 s"):
        build_model(model, LATE, variant, rtt=2e-6, n_flows=10)
    ok = build_model(model, LATE, variant, rtt=5e-6, n_flows=10)  # the floor itself
    assert ok.rtt == 5e-6


def test_a_cp_latency_above_every_rtt_names_the_field():
    with pytest.raises(ValueError, match="cp_latency: 2000 s exceeds the largest RTT"):
        FOPDTModel(QCNParams(cp_latency=2000.0), rtt=1.0)


@pytest.mark.parametrize(
    "argv",
    [
        ["--flows", "10", "--rtt", "100us", "--set", "cp_latency=500us"],
        ["--preset", "teak-003", "--flows", "10", "--rtt", "2us"],
        ["--model", "fopdt", "--preset", "teak-003", "--flows", "10", "--rtt", "2us"],
    ],
)
def test_margins_cli_refuses_it(argv, capsys):
    assert main(["margins", *argv]) == 2
    err = capsys.readouterr().err
    assert "rtt: must be in [" in err and "cp_latency" in err and "Traceback" not in err


def test_check_starts_the_rtt_range_at_the_cp_latency():
    ranges = CheckRanges(rtt=(2e-6, 1e-3), flows=(10, 10), n_rtt=5, n_flows=1)
    r = check_params(LATE, ranges, model="fopdt", recommend=False)
    assert "starts at cp_latency = 5 us, not 2 us" in r.notes[0]
    assert r.worst_point["rtt_s"] >= 5e-6
    with pytest.raises(ValueError, match="rtt: .* below the CP latency"):
        check_params(QCNParams(cp_latency=500e-6),
                     CheckRanges(rtt=(2e-6, 100e-6), flows=(10, 10), n_rtt=3, n_flows=1),
                     model="fopdt", recommend=False)  # fmt: skip


def test_stability_maps_and_trajectory_searches_start_there():
    m = FOPDTModel(LATE, n_flows=10)
    assert stability_map(m, y_values=[10])["rtt"].values[0] == pytest.approx(5e-6)
    with pytest.raises(ValueError, match="x_values: every rtt must be at least the CP latency"):
        stability_map(m, x_values=[1e-5, 2e-6], y_values=[10])
    lo, hi = search_interval(FOPDTModel(QCNParams(cp_latency=50e-6), rtt=1e-4))
    assert lo == 50e-6 and math.isfinite(hi)
