"""`qcnmodel margins`: JSON contract, table output and clear errors."""

import json
import math
import re
from pathlib import Path

import pytest

from qcnmodel.cli import main

#: DCQCN searches found under the short search, by this module's tests alone
_SHORT_MEMO: dict = {}


@pytest.fixture
def short_runs_search(monkeypatch):
    """The DCQCN every-flow runs' RTT search over 20-200 us (the validated 25-100 us and one
    ladder rung beyond, as in tests/models/test_dcqcn_boundary.py), not the data-centre
    5 us .. 1 ms: a search then costs a few runs per rung, not tens of long runs at 0.3-1 ms.
    The searches found under it are memoised apart, shared by this module's tests only (the
    memo's keys hold the search interval too, so this only keeps the module's entries
    together)."""
    from qcnmodel import config
    from qcnmodel.analysis import boundary

    monkeypatch.setitem(config.defaults, "analysis.runs_rtt_search", (20e-6, 200e-6))
    monkeypatch.setattr(boundary, "_MEMO", _SHORT_MEMO)


KEYS = {
    "model",
    "phase_margin_deg",
    "gain_margin_db",
    "delay_margin_s",
    "crossover_rad_s",
    "critical_rtt_s",
    "stable",
    "fixed_point",
}


@pytest.mark.parametrize("model", ["fopdt", "qcn", "dcqcn", "ecm"])
def test_json_has_the_promised_keys(model, capsys, request):
    if model == "dcqcn":  # its runs' search over 20-200 us: the keys are the same
        request.getfixturevalue("short_runs_search")
    assert main(["margins", "--model", model, "--rtt", "100us", "--flows", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # exactly one JSON object
    assert KEYS <= set(out) and out["model"] == model
    assert isinstance(out["fixed_point"], dict) and out["fixed_point"]
    # The linearised critical RTT is where the phase margin reaches zero: RTT + delay margin.
    lin = out.get("critical_rtt_linearised_s", out["critical_rtt_s"])
    assert math.isclose(lin, 100e-6 + out["delay_margin_s"], rel_tol=1e-9)
    if out["boundary_method"] == "trajectories":  # QCN's and DCQCN's packet fidelity
        assert model in ("qcn", "dcqcn")
        crit = out["critical_rtt_s"]  # None (JSON's nan): unstable from the search's start
        assert out["stable"] == (crit is not None and 100e-6 < crit)
        assert out["stable_linearised"] == (out["phase_margin_deg"] > 0)
    else:
        assert "critical_rtt_linearised_s" not in out
        assert out["stable"] == (out["phase_margin_deg"] > 0)


def test_rtt_beyond_critical_is_unstable(capsys):
    main(["margins", "--model", "qcn", "--flows", "10", "--json"])
    crit = json.loads(capsys.readouterr().out)["critical_rtt_s"]
    main(["margins", "--model", "qcn", "--flows", "10", "--rtt", f"{1.5 * crit}s", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["phase_margin_deg"] < 0 and out["stable"] is False


def test_options_reach_the_model(capsys):
    main(
        [
            "margins",
            "--model",
            "qcn",
            "--json",
            "--w",
            "8",
            "--ps",
            "2%",
            "--rate",
            "1Gbps",
            "--set",
            "qeq=50KB",
        ]
    )
    a = json.loads(capsys.readouterr().out)
    main(["margins", "--model", "qcn", "--json"])
    b = json.loads(capsys.readouterr().out)
    assert a["phase_margin_deg"] != b["phase_margin_deg"]
    # The packet-fidelity model's time-average queue is not Qeq itself: the CP samples the
    # queue as a frame enters (one 1500 B frame of offset) and the mean feedback over the
    # frame-granularity noise is not zero. Both are within two frames of the set point, so
    # the set point reached the model if q is within 2 x 1500 B of 50 KB (the preset's
    # Qeq is 26 KB).
    assert abs(a["fixed_point"]["q"] - 50000) < 2 * 1500
    # The paper's equations settle just above Qeq: the small negative Fb* that balances the
    # additive increase (Alizadeh et al. 2008) puts q* = Qeq + u* Fb_max / FS, u* < 1 frame.
    main(["margins", "--model", "qcn", "--variant", "paper", "--json", "--set", "qeq=50KB"])
    c = json.loads(capsys.readouterr().out)
    assert 50000 < c["fixed_point"]["q"] < 50000 + 1500


def test_table_output(capsys):
    assert main(["margins", "--model", "fopdt", "--preset", "netfpga-1g"]) == 0
    text = capsys.readouterr().out
    assert "phase margin" in text and "critical RTT" in text


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--rtt=-5us"], "rtt"),
        (["--ps", "1.5"], "ps"),
        (["--flows", "0"], "flows"),
        (["--set", "qeqq=3"], "did you mean 'qeq'"),
        (["--preset", "nope"], "preset"),
        (["--set", "gd=2"], "gd"),
    ],
)
def test_bad_input_exits_2_naming_the_field(argv, needle, capsys):
    assert main(["margins", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_dcqcn_options(capsys, monkeypatch, short_runs_search):
    # Paper defaults (models.md §3); the paper's own open loop and the Taylor fixed point are
    # selectable and give a different answer from the exact linearisation (models.md §3.1).
    # The options act on the linearisation alone, which is the same whether or not the
    # every-flow runs judge the point: they are left out here (past a flow limit of 5), as
    # test_dcqcn_runs_are_skipped_past_the_flow_limit does; test_json_has_the_promised_keys
    # and test_dcqcn_default_is_judged_by_its_every_flow_runs run them at N = 10.
    from qcnmodel import config

    with monkeypatch.context() as m:
        m.setitem(config.defaults, "analysis.trajectory_max_flows", 5)
        base = ["margins", "--model", "dcqcn", "--flows", "10", "--rtt", "50us", "--json"]
        assert main(base) == 0
        exact = json.loads(capsys.readouterr().out)
        assert main([*base, "--linearisation", "paper", "--fixed-point", "taylor"]) == 0
        paper = json.loads(capsys.readouterr().out)
    # the default model with the options, its runs left out as said
    assert exact["model_variant"] == "packet"
    assert paper["model_variant"] == "packet+fixed_point_method=taylor+linearisation=paper"
    assert all("trajectory_max_flows" in out["runs"]["skipped"] for out in (exact, paper))
    assert exact["fixed_point"]["rate_current"] == pytest.approx(40e9 / 10)  # C/N, exact
    assert paper["phase_margin_deg"] != pytest.approx(exact["phase_margin_deg"], abs=0.1)
    # N = 20 has no equilibrium on the marking ramp: no margins, and the mean field alone
    # (variant cnp-lag+stage-memory) says so, exit 2; the validated default's every-flow runs
    # still answer (they cycle through Kmax, as the packets do at N = 20, 50 us).
    mf = ["margins", "--model", "dcqcn", "--flows", "20", "--variant", "cnp-lag+stage-memory"]
    assert main(mf) == 2
    assert "ramp" in capsys.readouterr().err
    assert main([*mf, "--set", "ramp=extend"]) == 0
    capsys.readouterr()
    assert main(["margins", "--model", "dcqcn", "--flows", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "marking ramp" in out["no_fixed_point"] and out["phase_margin_deg"] is None
    assert out["runs"]["cycles"] is True and out["stable"] is False
    assert out["boundary_method"] == "trajectories"
    assert out["critical_rtt_s"] is None  # nan: the runs cycle from the search's start (20 us)


def test_dcqcn_default_is_judged_by_its_every_flow_runs(capsys, short_runs_search):
    """N = 10 at 25 us: the linearisation is stable (phase margin 1.8 deg), the packets cycle
    through Kmax (the validation's full grid); the default answers with its runs and keeps
    the linearised verdict beside them. N = 2 at 85 us the other way round. (The runs' search
    covers 20-200 us here, short_runs_search.)"""
    assert main(["margins", "--model", "dcqcn", "--flows", "10", "--rtt", "25us", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model_variant"] == "packet" and out["stable_linearised"] is True
    assert out["runs"]["cycles"] is True and out["stable"] is False
    assert main(["margins", "--model", "dcqcn", "--flows", "2", "--rtt", "85us"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"phase margin\s+-", text) and re.search(r"closed loop\s+stable", text)
    assert "no cycle through Kmax" in text and "every-flow runs" in text
    # the verdict is the runs' critical RTT's: past 100 us at N = 2 (the packets show no
    # cycle at 25-100 us; the runs' own is 895 us, searched to 1 ms), here none up to the
    # search's end at 200 us, where the linearised one is 60.5 us
    crit = re.search(r"\ncritical RTT\s+(none up to )?([\d.]+) us", text)
    lin = float(re.search(r"linearised critical RTT\s+([\d.]+) us", text).group(1))
    assert float(crit.group(2)) > 100 and lin < 85


def test_dcqcn_runs_are_skipped_past_the_flow_limit(capsys, monkeypatch):
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "analysis.trajectory_max_flows", 5)
    assert main(["margins", "--model", "dcqcn", "--flows", "6", "--rtt", "25us", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "trajectory_max_flows" in out["runs"]["skipped"]
    assert out["boundary_method"] == "linearisation"
    assert out["stable"] == (out["phase_margin_deg"] > 0)
    # and without a fixed point and without runs there is no answer: exit 2, named
    assert main(["margins", "--model", "dcqcn", "--flows", "20"]) == 2
    assert "marking ramp" in capsys.readouterr().err


def test_dcqcn_runs_too_costly_are_not_run_and_the_error_says_why(capsys):
    # a 1 ns alpha timer: no fixed point on the ramp, and 1.4e10 timer firings in the runs
    argv = ["margins", "--model", "dcqcn", "--flows", "10", "--set", "alpha_timer=1e-9"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "alpha_timer = 1e-09 s" in err and "were not run" in err and "max_steps" in err


def _critical_rtt_by_search(model):
    """The RTT where the phase margin of the rebuilt loop reaches 0 (bracket + brentq on
    PM(rtt)); independent of any extra-delay bookkeeping."""
    from qcnmodel.analysis.margins import critical_rtt

    return critical_rtt(lambda r: model.replace(rtt=r).loop(), rtt_min=1e-6, rtt_max=1e-2)


def test_fopdt_zoh_critical_rtt_subtracts_the_hold(capsys):
    # regression: the CLI printed the critical *loop delay* (277 us), the ZOH's Ts/2 included
    from qcnmodel.models.fopdt import FOPDTModel

    argv = ["margins", "--model", "fopdt", "--rtt", "100us", "--set", "lag=zoh", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    model = FOPDTModel(rtt=100e-6, lag="zoh")
    assert out["critical_rtt_s"] == pytest.approx(_critical_rtt_by_search(model), rel=1e-8)
    # the closed form of the module docstring (217 us at N = 10)
    assert out["critical_rtt_s"] == pytest.approx(
        model.closed_form_values()["critical_rtt"], rel=1e-9
    )
    assert round(out["critical_rtt_s"] * 1e6) == 217
    assert out["model_variant"] == "zoh"


def test_qcn_sampling_lag_critical_rtt_subtracts_the_lag(capsys):
    # regression: 270 us printed where 210 us is right (the lag Ts/2 = 60 us was counted)
    from qcnmodel.models.qcn import QCNFluidModel

    argv = ["margins", "--model", "qcn", "--variant", "paper", "--rtt", "100us",
            "--set", "model.sampling_lag=true"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    model = QCNFluidModel(rtt=100e-6, fidelity="paper", sampling_lag=True)
    assert out["critical_rtt_s"] == pytest.approx(_critical_rtt_by_search(model), rel=1e-8)
    assert round(out["critical_rtt_s"] * 1e6) == 210
    assert out["model"] == "qcn" and out["model_variant"] == "paper+sampling_lag=True"
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "210.1 us" in text and "loop delay" in text


def test_variant_option(capsys):
    assert main(["margins", "--model", "qcn", "--variant", "paper", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model_variant"] == "paper"
    argv = ["margins", "--model", "qcn", "--variant", "paper", "--set", "model.reset=cnm",
            "--set", "model.sampling_lag=true", "--json"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["model_variant"] == (
        "paper+reset=cnm+sampling_lag=True"
    )
    assert main(["margins", "--model", "qcn", "--variant", "papr"]) == 2
    assert "did you mean 'paper'" in capsys.readouterr().err
    # the paper's switches are refused on the packet-fidelity default, naming the switch
    assert main(["margins", "--model", "qcn", "--set", "model.timer=true"]) == 2
    assert "timer" in capsys.readouterr().err


def test_paper_variant_with_every_frame_sampled(capsys):
    # Ps = 1 (every frame sampled): log(1 - Ps) = -inf, the stage factors are 0, so no
    # increase drive holds the queue above Qeq: the equilibrium is on the Fb = 0 switching
    # surface, which the model refuses with its reason (it used to raise "math domain
    # error", then to give margins of that degenerate point)
    assert main(["margins", "--variant", "paper", "--ps", "1", "--json"]) == 2
    err = capsys.readouterr().err
    assert "switching surface" in err and "Ps = 1" in err and "Traceback" not in err


def test_validity_names_the_region_the_point_lies_in(capsys):
    """The single-flow region (N = 1) and the large-RTT region are flagged; a mid-range
    point of the validated grid (N = 10, 100 us) is inside the domain."""
    main(["margins", "--model", "qcn", "--flows", "1", "--rtt", "100us", "--json"])
    single = json.loads(capsys.readouterr().out)["validity"]
    assert [v["finding"] for v in single] == ["single flow"]
    main(["margins", "--model", "qcn", "--flows", "10", "--rtt", "1.2ms", "--json"])
    far = {v["finding"] for v in json.loads(capsys.readouterr().out)["validity"]}
    assert "slow breakdown" in far
    main(["margins", "--model", "qcn", "--flows", "10", "--rtt", "100us", "--json"])
    assert json.loads(capsys.readouterr().out)["validity"] == []
    main(["margins", "--model", "qcn", "--flows", "1", "--rtt", "100us"])
    assert "outside validity" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--ps", "1e-10"], ["--set", "ps=1e-320"],
                                  ["--ps", "1e-10", "--rate", "5Gbps"]])  # fmt: skip
def test_a_point_without_equilibrium_names_the_point_settings(argv, capsys):
    # so rare a sample that almost no CNM reaches the sources: they run at the line rate,
    # 10 of them into one port (20 into a port of half the rate): overloaded at every RTT,
    # and the answer names the sampling probability given for the point (it is no field of
    # the parameter set)
    assert main(["margins", *argv]) == 0
    out = capsys.readouterr().out
    assert "no equilibrium" in out and "overloaded" in out and "ps = " in out
    assert ("20 x C/N" if "--rate" in argv else "10 x C/N") in out
    assert ("capacity = 5e+09 bit/s" in out) == ("--rate" in argv)


def test_past_the_trajectories_flow_limit_says_who_judges(capsys, monkeypatch):
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "analysis.trajectory_max_flows", 10)
    assert main(["margins", "--flows", "11", "--rtt", "100us"]) in (0, 1)
    text = capsys.readouterr().out
    judged = [line for line in text.splitlines() if line.startswith("judged by")]
    assert (
        len(judged) == 1 and "N = 11: judged by the linearised loop, past the 10 flows" in judged[0]
    )
    assert "linearised critical RTT" not in text  # the critical RTT printed is that one


def test_an_overloaded_port_is_an_answer_not_an_error(capsys, tmp_path):
    # 100000 flows into 10 Gb/s: below MinRate each (5 Mb/s), no feedback can hold them; the
    # point is judged unstable at every RTT, with the flows' rate at full feedback. One run:
    # the table on stdout and, with --out, the JSON that --json prints (the same object)
    path = tmp_path / "m.json"
    assert main(["margins", "--flows", "100000", "--out", str(path)]) == 0
    out = json.loads(path.read_text())
    assert out["stable"] is False and out["boundary_method"] == "overload"
    assert out["overloaded"] > 1 and out["critical_rtt_s"] is None
    assert "stays overloaded" in out["no_fixed_point"]
    # the packets hold 1100 flows and their queue climbs from 1150 (the validation's
    # largest-N-held rows): the number of flows held lies between
    assert 1100 <= out["held_flows"] < 1150
    text = capsys.readouterr().out
    assert "none: overloaded at every RTT" in text and "UNSTABLE" in text
    assert f"flows held        at most N = {out['held_flows']}" in text


@pytest.mark.parametrize("name", ["teak-2007-hai.toml", "ibm-zurich.toml"])
def test_a_parameter_file_outside_the_default_model_falls_back_to_the_paper(name, tmp_path):
    # the example files with drift: the packet-fidelity model does not follow it; margins
    # answers with the published equations and says why, as check does
    import json

    out = tmp_path / "m.json"
    examples = Path(__file__).resolve().parents[1] / "examples"
    code = main(["margins", "--params", str(examples / name), "--flows", "10", "--rtt",
                 "200us", "--out", str(out), "--quiet"])  # fmt: skip
    assert code == 0
    d = json.loads(out.read_text())
    assert d["model_variant"] == "paper"
    assert "drift_period" in d["model_fallback"] and "--variant paper" in d["model_fallback"]
    # an explicit variant is the user's choice: no fallback, the error names the field
    assert main(["margins", "--params", str(examples / name), "--variant", "packet"]) == 2


def test_a_field_beyond_the_default_model_falls_back_and_names_it(capsys):
    # fr_th = 100 is a valid QCN field; the packet-fidelity model follows 48 counter stages.
    # At Ps = 0.001 the paper equations keep an equilibrium (at the default 1 % their increase
    # drive 0.99^(100 x 100) puts it on the switching surface)
    assert main(["margins", "--set", "fr_th=100", "--ps", "0.001", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["model_variant"] == "paper" and "fr_th: at most 48" in d["model_fallback"]


def test_a_negative_critical_rtt_reads_as_unstable_at_any_rtt():
    # qcnmodel.critical_rtt is negative when the loop is unstable even at RTT 0 (w = 0.5 at a
    # fixed Ps = 1: -37 us); the table printed "-37.4 us"
    from qcnmodel.cli.margins import critical_rtt_words
    from qcnmodel.models.qcn import QCNFluidModel

    text = critical_rtt_words(-37.4e-6, QCNFluidModel(n_flows=10), False)
    assert text.startswith("none: unstable at any RTT") and "37.4 us before RTT 0" in text
    assert critical_rtt_words(37.4e-6, QCNFluidModel(n_flows=10), False) == "37.4 us"
