"""`qcnmodel check`: verdicts, JSON, recommendations and bad-file errors (exit 0/1/2)."""

import json

import pytest

from qcnmodel.cli import main
from qcnmodel.params import QCNParams
from qcnmodel.studies.check import CheckRanges, check_params


def test_verdict_follows_the_critical_rtt():
    p = QCNParams()
    # The critical RTT over N = 1..100 is smallest at N = 1 (report: ~139 us). A range well
    # inside it has no unstable point; one beyond it must be unstable.
    short = check_params(p, CheckRanges(rtt=(2e-6, 20e-6), flows=(1, 100)), recommend=False)
    long = check_params(p, CheckRanges(rtt=(2e-6, 1e-3), flows=(1, 100)), recommend=False)
    assert short.verdict in ("stable", "marginal") and short.worst_phase_margin_deg > 0
    assert long.verdict == "unstable" and long.exit_code == 1
    assert min(long.critical_rtt_s.values()) < 1e-3
    # The threshold decides between stable and marginal.
    loose = check_params(p, CheckRanges(rtt=(2e-6, 20e-6), pm_threshold=0.0), recommend=False)
    assert loose.verdict == "stable" and loose.exit_code == 0


def test_recommendation_improves_the_worst_case():
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.studies.check import _worst_delay_margin

    p = QCNParams()
    ranges = CheckRanges(rtt=(2e-6, 300e-6), flows=(1, 10), n_flows=4)
    res = check_params(p, ranges)
    base = min(res.critical_rtt_s[n] for n in ranges.flow_grid()) - ranges.rtt[1]
    assert {r["parameter"] for r in res.recommendations} == {"w", "ps", "gd"}
    for rec in res.recommendations:
        # The reported worst-case delay margin is reproduced from the recommended value alone.
        name, value = rec["parameter"], rec["recommended"]
        model = QCNFluidModel(p if name == "ps" else p.replace(**{name: value}))
        model = model.replace(ps=value) if name == "ps" else model
        assert _worst_delay_margin(model, ranges) == pytest.approx(rec["worst_delay_margin_s"])
    # Searching can only help: the best recommendation is at least as good as the current set.
    assert max(r["worst_delay_margin_s"] for r in res.recommendations) >= base


def test_cli_json_and_exit_codes(tmp_path, capsys):
    code = main(
        ["check", "examples/802.1qau.toml", "--rtt-range", "2us..20us", "--json", "--no-recommend"]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] in ("stable", "marginal") and code == (
        0 if out["verdict"] == "stable" else 1
    )
    assert set(out["critical_rtt_s"]) and out["rtt_range_s"] == [2e-6, 2e-5]
    assert main(["check", "examples/802.1qau.toml", "--no-recommend"]) == 1
    assert "UNSTABLE" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[qcn]\nqeq = "33KB"\ngd = 5\n', "line 3: gd"),
        ("[qcn]\nqeqq = 1\n", "line 2"),
        ('[ranges]\nrtt = "1ms..2us"\n', "line 2: rtt-range"),
        ('[ranges]\nrrt = "2us..1ms"\n', "unknown [ranges] field 'rrt'"),
        ("[qcn\nqeq = 1\n", "invalid TOML"),
    ],
)
def test_bad_files_exit_2(tmp_path, capsys, text, needle):
    f = tmp_path / "p.toml"
    f.write_text(text)
    assert main(["check", str(f), "--no-recommend"]) == 2
    assert needle in capsys.readouterr().err


def test_missing_file_exit_2(capsys):
    assert main(["check", "does-not-exist.toml"]) == 2


def test_check_critical_rtt_is_an_rtt_for_a_model_with_a_lag():
    # the check's critical RTT per N and its worst delay margin come from the one
    # critical-RTT function, which subtracts the model's sampling lag
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models.qcn import QCNFluidModel

    ranges = CheckRanges(rtt=(2e-6, 2e-4), flows=(2, 20), n_rtt=8, n_flows=2)
    res = check_params(QCNParams(), ranges, recommend=False, variant="reset=cnm+lag")
    for n, crit in res.critical_rtt_s.items():
        model = QCNFluidModel(n_flows=n, reset="cnm", sampling_lag=True)
        search = critical_rtt(
            lambda r, m=model: m.replace(rtt=r).loop(), rtt_min=1e-6, rtt_max=1e-2
        )
        assert crit == pytest.approx(search, rel=1e-8)
    # the worst delay margin is the smallest critical RTT minus the largest RTT of the grid
    assert res.worst_delay_margin_s == pytest.approx(
        min(res.critical_rtt_s.values()) - ranges.rtt_grid()[-1], rel=1e-9
    )
