"""`qcnmodel check`: verdicts, the headline, verified fixes, JSON, --confirm and bad-file errors.

The default model is the QCN packet-fidelity fluid model. At the 802.1Qau defaults it has no
congestion at N = 1 (one flow at the line rate fills the link exactly: open loop), a critical
RTT of a few hundred microseconds for 2 <= N <= 20, and no positive phase margin at any RTT
for N of about 50 and more (the timer-synchronised oscillation). The tests below use small
grids (each flow count costs one loop evaluation, about 0.5 s).
"""

import json

import numpy as np
import pytest

from qcnmodel.cli import main
from qcnmodel.params import QCNParams
from qcnmodel.studies.check import CheckRanges, check_params
from qcnmodel.studies.verdict import inactive_fields, wrap_phase

SMALL = dict(n_rtt=8, n_flows=2)


def test_verdict_follows_the_critical_rtt():
    from qcnmodel.models.qcn import QCNFluidModel

    p = QCNParams()
    short = check_params(p, CheckRanges(rtt=(2e-6, 20e-6), flows=(2, 20), **SMALL),
                         recommend=False)  # fmt: skip
    long = check_params(p, CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), **SMALL),
                        recommend=False)  # fmt: skip
    assert short.verdict in ("stable", "marginal") and short.worst_phase_margin_deg > 0
    assert long.verdict == "unstable" and long.exit_code == 1
    assert max(long.critical_rtt_s.values()) < 1e-3
    # the worst point's margin is the one the model gives at that point on its own
    wp = long.worst_point
    m = QCNFluidModel(p, rtt=wp["rtt_s"], n_flows=wp["n_flows"]).loop().margins()
    assert long.worst_phase_margin_deg == pytest.approx(m.phase_margin_deg, rel=1e-9)
    assert not m.stable
    # the threshold decides between stable and marginal
    loose = check_params(p, CheckRanges(rtt=(2e-6, 20e-6), flows=(2, 20), pm_threshold=0.0,
                                        **SMALL), recommend=False)  # fmt: skip
    assert loose.verdict == "stable" and loose.exit_code == 0


@pytest.mark.slow  # ~10 s: the search screens 36 candidates and recomputes the fix
def test_headline_names_the_model_the_worst_point_and_a_verified_fix():
    p = QCNParams()
    ranges = CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), **SMALL)
    res = check_params(p, ranges)
    h = res.headline
    assert h.startswith("UNSTABLE over RTT 2 us .. 1 ms and N 2 .. 20 flows")
    assert "QCN packet-fidelity fluid model" in h
    assert (res.model, res.model_variant) == ("qcn", "packet")
    assert f"N = {res.worst_point['n_flows']}" in h and "phase margin" in h
    assert res.judged_flows and "critical RTT of the model's trajectories" in h
    assert "still unstable" not in h
    assert res.recommendations, "the model finds a single change here (w, see below)"
    toml = p.to_toml()
    for fix in res.recommendations:
        # a real [qcn] field, and the change alone makes the linearised loop stable when
        # recomputed from scratch (the search screens and verifies on the linearisation)
        assert f"\n{fix['field']} = " in toml
        again = check_params(p.replace(**{fix["field"]: fix["value"]}), ranges, recommend=False,
                             boundary="linearisation")  # fmt: skip
        assert again.verdict == "stable"
    # the headline's fix is put to the trajectories at every judged N at the largest RTT,
    # and the headline says whether they agree
    bad = res.fix["trajectories_unstable_n"]
    assert set(bad) <= set(res.judged_flows)
    if bad:
        assert "stabilises the linearised loop only" in h and "still oscillate at N = " in h
    else:
        assert f"Fix: set {res.fix['field']} = " in h and "are stable at every N" in h


def test_no_fix_is_said_so(monkeypatch):
    # a search interval too narrow to help: the headline must say so, not suggest it
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "studies.check_search", {"w": (2.0, 2.1)})
    res = check_params(QCNParams(), CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), **SMALL))
    assert res.verdict == "unstable" and res.recommendations == []
    assert "No single-parameter change within range stabilises it (searched w 2 .. 2.1)" in (
        res.headline
    )


def test_fields_without_effect_are_named():
    table = inactive_fields(QCNParams())  # sampling = "table", HAI on
    assert len(table) == 1 and table[0].startswith("ps_fixed = 0.01 has no effect")
    fixed = inactive_fields(QCNParams().replace(sampling="fixed", hai=False))
    assert fixed[0].startswith("sample_base = 150000 B has no effect")
    assert fixed[1].startswith("r_hai") and len(fixed) == 2


@pytest.mark.parametrize(
    ("deg", "wrapped"), [(-450.0, -90.0), (180.0, 180.0), (-180.0, 180.0), (190.0, -170.0),
                         (-587275.0, -115.0), (30.0, 30.0)],
)  # fmt: skip
def test_wrap_phase(deg, wrapped):
    assert wrap_phase(deg) == pytest.approx(wrapped)
    assert wrap_phase(np.inf) == np.inf


def test_paper_variant_is_named():
    res = check_params(QCNParams(), CheckRanges(rtt=(2e-6, 20e-6), flows=(2, 20), **SMALL),
                       recommend=False, variant="paper")  # fmt: skip
    assert res.model_variant == "paper" and "published cycle-averaged equations" in res.headline


def test_flow_counts_past_the_trajectories_limit_are_named(monkeypatch):
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "analysis.trajectory_max_flows", 3)
    res = check_params(QCNParams(), CheckRanges(rtt=(2e-6, 20e-6), flows=(2, 20), **SMALL),
                       recommend=False)  # fmt: skip
    assert res.judged_flows == (2,)
    past = [n for n in res.notes if "past the 3 flows" in n]
    assert len(past) == 1 and past[0].startswith("N = 20: judged by the linearised loop")


@pytest.fixture
def small_grid(monkeypatch):
    """The CLI's grid from the configuration, made small (8 RTTs x 2 flow counts)."""
    from qcnmodel import config

    monkeypatch.setitem(config.defaults, "studies.check_n_rtt", 8)
    monkeypatch.setitem(config.defaults, "studies.check_n_flows", 2)


def test_cli_json_and_exit_codes(capsys, small_grid):
    args = ["check", "examples/802.1qau.toml", "--flows", "2..20", "--no-recommend"]
    code = main([*args, "--rtt-range", "2us..20us", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] in ("stable", "marginal") and code == (
        0 if out["verdict"] == "stable" else 1
    )
    assert out["model_variant"] == "packet" and out["headline"].startswith(out["verdict"].upper())
    assert set(out["critical_rtt_s"]) and out["rtt_range_s"] == [2e-6, 2e-5]
    assert main([*args, "--rtt-range", "2us..1ms"]) == 1
    text = capsys.readouterr().out
    # the verdict paragraph comes first, right after the file line
    assert text.splitlines()[2].startswith("UNSTABLE over RTT")
    assert "note: ps_fixed = 0.01 has no effect" in text


def test_confirm_runs_packets_and_reports_agreement(capsys, tmp_path, small_grid):
    # a tiny run: this checks the wiring (points, detector, JSON, figure, exit status), not
    # the model
    f = tmp_path / "p.toml"
    f.write_text('[ranges]\nrtt = "50us..100us"\nflows = "10..10"\n')
    fig = tmp_path / "traces.png"
    code = main(["check", str(f), "--no-recommend", "--json", "--confirm", "20ms",
                 "--jobs", "2", "--figure", str(fig)])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    conf = out["confirmation"]
    assert conf["duration_s"] == pytest.approx(0.02) and conf["jobs"] == 2
    crit = out["critical_rtt_s"]["10"]
    # both sides of the boundary at the worst N, then the worst point of the ranges
    rows = conf["rows"]
    assert [r["rtt_s"] for r in rows[:2]] == pytest.approx([0.8 * crit, 1.25 * crit], rel=1e-12)
    assert rows[2]["role"] == "worst point of the ranges"
    assert rows[2]["rtt_s"] == pytest.approx(out["worst_point"]["rtt_s"], rel=1e-12)
    assert all(r["n_flows"] == 10 for r in rows)
    for row in rows:
        assert row["verdict"] in ("stable", "oscillating", "underflow", "drifting", "idle")
        if row["verdict"] in ("drifting", "idle"):  # no regime: it confirms nothing
            assert (row["agree"], row["conclusive"]) == (None, False) and row["open_reason"]
            continue
        assert row["agree"] == ((row["verdict"] == "stable") == row["predicted_stable"])
        assert "queue_bytes" not in row  # traces stay out of the JSON
        if row["judged_by"] == "trajectories":
            # the model's verdict is the majority of its 9 runs of 0.6 s (judged after
            # 0.3 s): as many packet runs, and a 20 ms run cannot stand for one of them
            assert row["runs"] == 9 and 0 <= row["runs_unstable"] <= 9
            assert row["agree"] == ((2 * row["runs_unstable"] <= 9) == row["predicted_stable"])
            assert row["conclusive"] is False
        else:
            # a 20 ms run holds 3 time constants in its first half only for fast modes
            assert row["runs"] == 1
            assert row["conclusive"] == (0.01 >= 3 * row["time_constant_s"])
    conclusive = [r["agree"] for r in rows if r["conclusive"]]
    assert conf["agree"] == (all(conclusive) if conclusive else None)  # None: nothing decided
    assert code == (0 if out["verdict"] == "stable" and conf["agree"] is not False else 1)
    assert conf["figure"] == str(fig) and fig.read_bytes()[:4] == b"\x89PNG"


def test_confirm_text_names_each_point_and_the_figure(capsys, tmp_path, monkeypatch, small_grid):
    monkeypatch.chdir(tmp_path)  # the default figure goes to the current folder
    f = tmp_path / "mine.toml"
    f.write_text('[ranges]\nrtt = "50us..100us"\nflows = "10..10"\n')
    code = main(["check", str(f), "--no-recommend", "--confirm", "20ms", "--jobs", "1"])
    text = capsys.readouterr().out
    block = text.split(
        "packet confirmation (0.02 s per run, seed 0; 9 runs, seeds 0-8, where "
        "the model's trajectories judge, 1 process): ",
        1,
    )[1]
    assert block.startswith(("AGREES (", "DISAGREES (", "INCONCLUSIVE ("))
    for role in ("0.8 x critical RTT at the worst N = 10", "1.25 x critical RTT at the worst "
                 "N = 10", "worst point of the ranges"):  # fmt: skip
        assert f"  {role}" in block
    assert sum(block.count(f"-> {o}") for o in ("agree", "DISAGREE", "inconclusive")) == 3
    assert "traces: mine-confirm.png" in block and (tmp_path / "mine-confirm.png").is_file()
    assert code == 1 or not block.startswith("DISAGREES")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--figure", "x.png"], "figure: the traces come from --confirm"),
        (["--confirm", "20ms", "--figure", "x.txt"], "figure"),
        (["--confirm", "20ms", "--jobs", "0"], "jobs"),
        (["--jobs", "many"], "jobs"),
    ],
)
def test_confirm_bad_options_exit_2(capsys, argv, needle):
    assert main(["check", "examples/802.1qau.toml", "--no-recommend", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_confirm_bad_duration_exit_2(capsys):
    assert main(["check", "examples/802.1qau.toml", "--confirm", "20s"]) == 2
    assert "confirm" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[qcn]\nqeq = "33KB"\ngd = 5\n', "line 3: gd"),
        ("[qcn]\nqeqq = 1\n", "line 2"),
        ('[ranges]\nrtt = "1ms..2us"\n', "line 2: rtt: need"),
        ('[ranges]\ncapacity = "0bps"\n', "line 2: capacity: must be in (0,"),
        ('[ranges]\nrrt = "2us..1ms"\n', "unknown [ranges] field 'rrt'"),
        ("[qcn\nqeq = 1\n", "invalid TOML"),
    ],
)
def test_bad_files_exit_2(tmp_path, capsys, text, needle):
    f = tmp_path / "p.toml"
    f.write_text(text)
    assert main(["check", str(f), "--no-recommend"]) == 2
    assert needle in capsys.readouterr().err


def test_flow_counts_the_feedback_cannot_hold_are_a_verdict(tmp_path, capsys):
    # 802.1Qau defaults at 10 Gb/s: packets hold 1100 greedy flows and their queue climbs
    # from 1150 (3 s runs, the validation's largest-N-held rows); the model's equilibrium
    # ends inside that bracket, and past it the check answers "unstable" (exit 1) naming the
    # overloaded flow counts, instead of refusing the range
    import json

    f = tmp_path / "p.toml"
    f.write_text("[qcn]\nw = 2\n")
    out = tmp_path / "c.json"
    code = main(["check", str(f), "--flows", "1000..1300", "--no-recommend", "--out", str(out)])
    assert code == 1
    d = json.loads(out.read_text())
    assert d["verdict"] == "unstable"
    over = {int(n): ratio for n, ratio in d["overloaded"].items()}
    assert over and min(over) > 1100 and max(over) == 1300
    assert all(r > 1 for r in over.values())  # the flows' rate over C/N at full feedback
    assert 1100 <= d["held_flows"] < 1150
    assert d["worst_point"]["n_flows"] == min(over)
    assert all(d["critical_rtt_s"][str(n)] is None for n in over)
    text = capsys.readouterr().out
    assert "cannot hold the flows at their fair share" in text
    assert f"holds at most N = {d['held_flows']} flows" in text
    assert f"N={min(over):<5d}   overloaded" in text


def test_missing_file_exit_2(capsys):
    assert main(["check", "does-not-exist.toml"]) == 2


def test_check_critical_rtt_is_an_rtt_for_a_model_with_a_lag():
    # the check's critical RTT per N and its worst delay margin come from the one
    # critical-RTT function, which subtracts the model's sampling lag (FOPDT, zero-order hold)
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models.fopdt import FOPDTModel

    ranges = CheckRanges(rtt=(2e-6, 2e-4), flows=(2, 20), n_rtt=8, n_flows=2)
    res = check_params(QCNParams(), ranges, model="fopdt", recommend=False, variant="zoh")
    for n, crit in res.critical_rtt_s.items():
        model = FOPDTModel(n_flows=n, lag="zoh")
        search = critical_rtt(
            lambda r, m=model: m.replace(rtt=r).loop(), rtt_min=1e-6, rtt_max=1e-2
        )
        assert crit == pytest.approx(search, rel=1e-8)
    assert res.worst_delay_margin_s == pytest.approx(
        min(res.critical_rtt_s.values()) - ranges.rtt_grid()[-1], rel=1e-9
    )


def test_confirm_points_straddle_the_boundary_of_the_worst_n():
    # the worst N is the one with the smallest positive critical RTT (N = 10 here; N = 50 has
    # none, N = 20 a larger one): 0.8 x and 1.25 x its critical RTT, where the model predicts
    # stable and unstable, then the worst point of the ranges (no simulation here)
    from types import SimpleNamespace

    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.studies.confirm import confirm_points

    model = QCNFluidModel(QCNParams(), n_flows=10)
    crit = 315.5e-6  # the model's critical RTT at N = 10 (printed by critical_rtt: 315.5 us)
    res = SimpleNamespace(worst_point={"n_flows": 10, "rtt_s": 1e-3},
                          critical_rtt_s={50: -2e-4, 20: 4e-4, 10: crit, 1: np.inf})  # fmt: skip
    pts = confirm_points(res, CheckRanges(rtt=(2e-6, 1e-3), flows=(10, 10)), model)
    assert [p["role"] for p in pts] == [
        "0.8 x critical RTT at the worst N = 10 (315.5 us)",
        "1.25 x critical RTT at the worst N = 10 (315.5 us)",
        "worst point of the ranges",
    ]
    assert [p["rtt_s"] for p in pts] == pytest.approx([0.8 * crit, 1.25 * crit, 1e-3])
    assert [p["stable"] for p in pts] == [True, False, False]
    # a worst point that is one of the boundary points is not simulated twice
    res.worst_point = {"n_flows": 10, "rtt_s": 1.25 * crit}
    assert len(confirm_points(res, CheckRanges(rtt=(2e-6, 1e-3), flows=(10, 10)), model)) == 2


def test_confirm_points_fall_back_without_a_finite_critical_rtt():
    # no N with a positive finite critical RTT: the worst point and, as it is predicted
    # unstable, the grid point with the largest phase margin; both rows say why
    from types import SimpleNamespace

    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.studies.confirm import confirm_points
    from qcnmodel.studies.verdict import scan

    # a model judged by its linearisation (the packet-fidelity model's trajectories judge by
    # the critical RTT itself, so it has no stable point to fall back on without one)
    model = QCNFluidModel(QCNParams(), n_flows=10, fidelity="paper")
    ranges = CheckRanges(rtt=(50e-6, 1e-3), flows=(10, 10), n_rtt=4, n_flows=1)
    res = SimpleNamespace(worst_point={"n_flows": 10, "rtt_s": 1e-3},
                          critical_rtt_s={10: np.inf, 100: np.nan})  # fmt: skip
    pts = confirm_points(res, ranges, model)
    why = "fallback: the model has no finite critical RTT at any N of the ranges"
    assert [p["role"] for p in pts] == [f"worst point of the ranges ({why})",
                                        f"largest phase margin in the ranges ({why})"]  # fmt: skip
    pm, st = scan(model, ranges)[10]
    k = int(np.argmax(np.where(st, pm, -np.inf)))
    assert pts[1]["rtt_s"] == ranges.rtt_grid()[k] and pts[1]["stable"]
    # a boundary too long for the run is not simulated either (1.25 x 315.5 us x 10 RTTs
    # does not fit into the analysed 2.5 ms of a 5 ms run)
    res.critical_rtt_s = {10: 315.5e-6}
    pts = confirm_points(res, ranges, model, duration=0.005)
    assert (
        "fallback: the critical RTT 315.5 us at N = 10 is too long for a 0.005 s run"
        in (pts[0]["role"])
    )
    # the worst point (1 ms) is not run either: 10 RTTs in the analysed half need 20 ms
    assert pts[0]["skip"] == "RTT too long for a 0.005 s run (needs at least 0.02 s)"
    assert pts[1]["skip"] is None  # the largest margin, at 50 us, fits
    assert [p["skip"] for p in confirm_points(res, ranges, model)] == [None, None, None]


def test_confirm_refuses_a_run_too_short_for_every_point():
    from types import SimpleNamespace

    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.studies.confirm import confirm_verdict

    p = QCNParams()
    res = SimpleNamespace(worst_point={"n_flows": 10, "rtt_s": 1e-3}, critical_rtt_s={10: np.inf})
    ranges = CheckRanges(rtt=(200e-6, 1e-3), flows=(10, 10), n_rtt=3, n_flows=1)
    # the shortest point (200 us) needs 2 x 10 x 200 us = 4 ms
    with pytest.raises(ValueError, match=r"confirm: every point's RTT is too long for a "
                       r"0.002 s run .* give at least 0.004 s"):  # fmt: skip
        confirm_verdict(p, res, ranges, QCNFluidModel(p, n_flows=10, fidelity="paper"),
                        duration=0.002)  # fmt: skip


def test_confirm_jobs():
    from qcnmodel.studies.confirm import confirm_jobs
    from qcnmodel.studies.sweep import free_cores

    assert confirm_jobs(8, 3) == 3 and confirm_jobs(2, 3) == 2 and confirm_jobs(1, 3) == 1
    assert 1 <= confirm_jobs(None, 3) <= min(3, free_cores())
    assert 1 <= confirm_jobs(-1, 2) <= 2
    for bad in (0, -2, 1.5, "2", True):
        with pytest.raises(ValueError, match="jobs: expected a whole number"):
            confirm_jobs(bad, 3)


def test_confirm_in_parallel_equals_sequential_bit_for_bit():
    # the same points, seed and run length with one process and with two: identical rows
    # and traces (each point's run depends on its inputs only)
    from types import SimpleNamespace

    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.studies.confirm import confirm_verdict

    p = QCNParams()
    model = QCNFluidModel(p, n_flows=4)
    res = SimpleNamespace(worst_point={"n_flows": 4, "rtt_s": 1e-3},
                          critical_rtt_s={4: 200e-6})  # fmt: skip
    ranges = CheckRanges(rtt=(50e-6, 1e-3), flows=(4, 4))
    seq = confirm_verdict(p, res, ranges, model, duration=0.03, seed=3, jobs=1)
    par = confirm_verdict(p, res, ranges, model, duration=0.03, seed=3, jobs=2)
    assert seq["jobs"] == 1 and par["jobs"] == 2 and len(seq["rows"]) == 3
    for a, b in zip(seq["rows"], par["rows"], strict=True):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], np.ndarray):
                assert np.array_equal(a[key], b[key]), key
            else:
                assert a[key] == b[key] or (a[key] != a[key] and b[key] != b[key]), key


def test_outside_the_packet_models_domain_the_paper_model_answers_and_says_so():
    # the teak-2007 set uses drift, which the packet-fidelity model does not model
    p = QCNParams.preset("teak-2007")
    res = check_params(p, CheckRanges(rtt=(2e-6, 20e-6), flows=(2, 20), **SMALL),
                       recommend=False)  # fmt: skip
    assert res.model_variant == "paper"
    assert "does not cover this parameter set (drift_period" in res.headline
    assert "published cycle-averaged equations" in res.headline
    with pytest.raises(ValueError, match="drift_period"):  # an explicit variant is not replaced
        check_params(p, CheckRanges(rtt=(2e-6, 20e-6), flows=(2, 20), **SMALL),
                     recommend=False, variant="packet")  # fmt: skip


def test_headline_explains_a_margin_beyond_minus_180():
    from types import SimpleNamespace

    from qcnmodel.studies.verdict import headline

    r = SimpleNamespace(verdict="unstable", worst_point={"n_flows": 1, "rtt_s": 1e-3},
                        worst_phase_margin_deg=-275.8, critical_rtt_s={1: 178e-6},
                        model_label="M", pm_threshold_deg=30.0, fix=None, searched={},
                        fallback="")  # fmt: skip
    h = headline(r, CheckRanges(rtt=(2e-6, 1e-3), flows=(1, 1)))
    # -275.8 deg wraps to +84.2 deg: the text must not read as a healthy margin
    assert "phase margin below -180 deg (-276 deg unwrapped, 84.2 deg wrapped" in h
    assert "exceeds the critical RTT there (178 us) by 822 us" in h


def test_headline_says_a_missing_critical_rtt_in_words():
    from types import SimpleNamespace

    from qcnmodel.studies.verdict import headline

    def worst(crit):
        r = SimpleNamespace(verdict="unstable", worst_point={"n_flows": 28, "rtt_s": 2e-6},
                            worst_phase_margin_deg=2.7, critical_rtt_s={28: crit},
                            judged_flows=(28,), model_label="M", pm_threshold_deg=30.0,
                            fix=None, searched={}, fallback="")  # fmt: skip
        return headline(r, CheckRanges(rtt=(2e-6, 1e-3), flows=(28, 28)))

    nan = worst(float("nan"))  # the runs cycle from the search's start
    assert "nan" not in nan and "no critical RTT: their runs are unstable" in nan
    assert "critical RTT 350 us;" in worst(350e-6)


def test_confirm_classify_names_a_drifting_queue():
    # synthetic traces (bins of 50 us over 0.2 s, Qeq 26 KB): a flat queue at Qeq, the same
    # plus a ramp of 2 x Qeq (a trend the oscillation detector alone reads as stable), a
    # ramp of half Qeq, and a sustained swing of +/- Qeq/2 with a 2 ms period
    from qcnmodel.studies.confirm import classify

    dt, qeq = 50e-6, 26e3
    t = np.arange(4000) * dt
    flat = np.full(t.size, qeq) + 100 * np.sin(2 * np.pi * t / 1.3e-4)
    ramp = flat + 2 * qeq * t / t[-1]
    assert classify(flat, dt, qeq)["verdict"] == "stable"
    from qcnmodel.analysis.timeseries import oscillation

    assert oscillation(ramp, dt, qeq)["verdict"] == "stable"
    out = classify(ramp, dt, qeq)
    assert out["verdict"] == "drifting"
    assert out["drift"] == pytest.approx(2 * qeq, rel=1e-3)  # the fitted trend is the ramp
    assert classify(flat + 0.5 * qeq * t / t[-1], dt, qeq)["verdict"] == "stable"
    swing = qeq + 0.5 * qeq * np.sin(2 * np.pi * t / 2e-3)
    assert classify(swing, dt, qeq)["verdict"] == "oscillating"


def test_validity_lists_the_regions_the_ranges_reach(capsys):
    """N from 1 reaches the single-flow region; N = 10 with RTT below 100 us stays inside the
    validated domain (critical RTTs there are ~0.3-0.5 ms at 10 Gb/s)."""
    from qcnmodel.params import QCNParams
    from qcnmodel.studies.check import CheckRanges, check_params

    p = QCNParams.preset("802.1qau")
    wide = check_params(p, CheckRanges(rtt=(10e-6, 200e-6), flows=(1, 10), n_rtt=8,
                                       n_flows=3), recommend=False)  # fmt: skip
    assert "single flow" in {v["finding"] for v in wide.validity}
    assert "validity" in wide.to_dict()
    narrow = check_params(p, CheckRanges(rtt=(10e-6, 100e-6), flows=(10, 10), n_rtt=8,
                                         n_flows=3), recommend=False)  # fmt: skip
    assert narrow.validity == []


def test_mode_time_constant_matches_a_known_second_order_loop():
    """L(s) = k / (s (s + 1)) with k = 1: the closed loop s^2 + s + 1 has poles
    -0.5 +- j 0.866, time constant 2 s; the first-order estimate from the crossover (PM =
    51.8 deg, not small) is within 25 %, and it becomes exact as PM -> 0 (k = 100: poles
    -0.5 +- j 9.99, time constant 2 s; PM 5.7 deg)."""
    from qcnmodel.analysis.loop import DelayedLoop
    from qcnmodel.studies.confirm import mode_time_constant

    for k, tol in ((1.0, 0.25), (100.0, 0.02)):
        loop = DelayedLoop([k], [1.0, 1.0, 0.0], 0.0)
        assert mode_time_constant(loop) == pytest.approx(2.0, rel=tol)


def test_auto_run_length_holds_three_time_constants():
    from qcnmodel.studies.confirm import DEFAULT_DURATION, MAX_DURATION, auto_duration

    assert auto_duration([{"time_constant_s": 0.001}]) == DEFAULT_DURATION
    assert auto_duration([{"time_constant_s": 0.25}, {"time_constant_s": 0.01}]) == 1.5
    assert auto_duration([{"time_constant_s": float("inf")}]) == MAX_DURATION


def test_the_fix_search_reads_its_fields_and_candidates_from_the_config(monkeypatch):
    from qcnmodel import config
    from qcnmodel.studies.verdict import search_fields, search_steps

    p = QCNParams()  # the sampling table: ps_fixed is not searched
    assert search_steps(p) == (len(search_fields()) - 1) * 6
    monkeypatch.setitem(config.defaults, "studies.check_candidates", 3)
    monkeypatch.setitem(config.defaults, "studies.check_search", {"w": (1.0, 4.0)})
    assert search_steps(p) == 3
    res = check_params(p, CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), **SMALL))
    assert res.searched == {"w": [1.0, 4.0]}
    monkeypatch.setitem(config.defaults, "studies.check_candidates", 1)
    with pytest.raises(ValueError, match="studies.check_candidates"):
        search_steps(p)


@pytest.mark.parametrize("model", ["dcqcn", "ecm"])
def test_a_model_of_another_protocol_points_to_its_commands(model, capsys):
    with pytest.raises(SystemExit) as exc:  # refused by the parser: the help does not offer it
        main(["check", "--preset", "802.1qau", "--model", model, "--no-recommend"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--model: this command takes qcn, fopdt" in err
    assert f"qcnmodel margins --model {model}" in err and f"qcnmodel sweep --model {model}" in err


@pytest.mark.slow
def test_a_range_above_the_low_rtt_cycle_is_judged_from_its_start(tmp_path):
    # 802.1Qau defaults at 10 Gb/s, N = 50: the packets' queue cycles with the timers in step
    # at 50-100 us (3 and 2 of 3 seeds, 0.6 s runs) and is stable at 200 and 300 us (0 of 3,
    # ACF 0.3-0.4), as are most of the model's runs at 300 us (2 of 9). 300 us lies in the
    # model's stable band above the cycle: a check of 300 us alone is stable
    code, d = _check_json(tmp_path, "--flows", "50", "--rtt", "300us")
    assert (code, d["verdict"], d["critical_rtt_s"]["50"]) == (0, "stable", None)
    lo, hi = d["stable_band_s"]["50"]
    assert lo <= 300e-6 < hi
    # margins at that point reads the same band, the model's own
    m_out = tmp_path / "m.json"
    assert main(["margins", "--flows", "50", "--rtt", "300us", "--rate", "10Gbps",
                 "--out", str(m_out), "--quiet"]) == 0  # fmt: skip
    m = json.loads(m_out.read_text())
    assert m["stable"] is True and m["critical_rtt_s"] is None
    assert m["stable_band_s"] == [lo, hi] and m["critical_rtt_from_rtt_s"] == hi
    # over the whole default RTT range the cycle at small RTTs decides, with the same band
    code, d = _check_json(tmp_path, "--flows", "50")
    assert (code, d["verdict"], d["critical_rtt_s"]["50"]) == (1, "unstable", None)
    assert d["stable_band_s"]["50"] == [lo, hi]


@pytest.mark.slow
def test_a_point_s_verdict_does_not_depend_on_the_range_it_is_asked_in(tmp_path):
    # 802.1Qau defaults at 10 Gb/s, N = 10: the model's critical RTT is about 240 us (240.5 us
    # in the full validation run of the lattice search; 251.5 us before it). A check of one
    # RTT just below it once searched from that RTT, found it and 1.5 x it unstable and called
    # N = 10 "unstable from the smallest RTT", while a check over a range ending there and
    # margins gave a critical RTT above it and stable. One boundary, the model's own, now
    code, alone = _check_json(tmp_path, "--flows", "10", "--rtt", "235us")
    code2, wider = _check_json(tmp_path, "--flows", "10", "--rtt", "200us..235us")
    assert alone["critical_rtt_s"]["10"] == wider["critical_rtt_s"]["10"] > 235e-6
    assert (code, alone["verdict"], code2) == (0, "stable", 0)


def test_a_fix_outside_the_validated_pairs_is_said_so():
    import dataclasses

    from qcnmodel.studies.verdict import _untested, headline

    ranges = CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), **SMALL)
    # the matched pairs ran W = 2 .. 32 (qcnmodel.validation.envelope)
    assert _untested(QCNParams(), "w", 36.76, ranges) == "w = 36.76 (pairs: 2 .. 32)"
    assert _untested(QCNParams(), "w", 8.0, ranges) == ""
    res = check_params(QCNParams(), ranges, recommend=False, boundary="linearisation")
    assert res.verdict != "stable"
    fix = {"field": "w", "table": "qcn", "current": 2.0, "value": 36.76,
           "worst_phase_margin_deg": 31.0, "worst_point": res.worst_point,
           "untested": "w = 36.76 (pairs: 2 .. 32)"}  # fmt: skip
    h = headline(dataclasses.replace(res, recommendations=[fix]), ranges)
    assert "set w = 36.76 in [qcn] (now 2; outside the validation's matched pairs: w = " in h
    h = headline(dataclasses.replace(res, recommendations=[{**fix, "untested": ""}]), ranges)
    assert "(now 2); recomputed" in h


def test_a_flow_count_cycling_at_small_rtts_is_given_its_stable_band(tmp_path):
    # 802.1Qau defaults at 10 Gb/s, N = 43: the packet simulator's queue cycles with the
    # timers in step at 20-100 us (2 of 3 seeds, 0.6 s runs), is stable at 200-450 us (0-1 of
    # 3) and cycles again at 600 us (3 of 3). Over 20 us .. 1 ms the check is unstable, with
    # no critical RTT from the range's start, and it names the band between
    code, d = _check_json(tmp_path, "--flows", "43", "--rtt", "20us..1ms")
    assert (code, d["verdict"], d["critical_rtt_s"]["43"]) == (1, "unstable", None)
    lo, hi = d["stable_band_s"]["43"]
    assert 100e-6 < lo <= 300e-6 and 450e-6 < hi < 600e-6
    assert "stable from" in d["headline"]


def _check_json(tmp_path, *args) -> tuple[int, dict]:
    """(exit code, JSON) of ``check`` on the 802.1Qau defaults at 10 Gb/s with ``args``."""
    f = tmp_path / "p.toml"
    f.write_text("[qcn]\nw = 2\n")
    out = tmp_path / "c.json"
    code = main(["check", str(f), *args, "--no-recommend", "--out", str(out)])
    return code, json.loads(out.read_text())


def test_the_fix_search_on_workers_finds_what_it_finds_here():
    # the fields are searched side by side on forked workers: the same fixes, in order
    import functools

    import qcnmodel as qm
    from qcnmodel.studies.check import _rebuilt
    from qcnmodel.studies.verdict import scan, search_fix

    p = QCNParams()
    ranges = CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), **SMALL)
    build = functools.partial(_rebuilt, qm.QCNFluidModel(p))
    table = scan(build(p), ranges, method="linearisation")
    here = search_fix(p, build, ranges, table, candidates=5, jobs=1)
    assert here["fixes"] and len(here["searched"]) > 1  # several fields, one fix at least
    assert search_fix(p, build, ranges, table, candidates=5, jobs=2) == here


def test_a_trajectory_point_takes_the_majority_of_as_many_runs_as_the_model():
    from qcnmodel import config
    from qcnmodel.studies.confirm import _majority, auto_duration, conclusive, runs_at

    traj = {"judged_by": "trajectories", "time_constant_s": 50.0}
    lin = {"judged_by": "linearisation", "time_constant_s": 0.05}
    run = config.defaults["models.verdict_run"]
    assert runs_at(traj) == run["seeds"] and runs_at(lin) == 1
    # the model's own run length, not the linearisation's time constant, for its points
    assert auto_duration([traj]) == max(run["duration"], 2 * run["settle"])
    assert auto_duration([traj, lin]) == auto_duration([traj])  # 0.3 s for the other
    assert conclusive(traj, 2 * run["settle"]) and not conclusive(traj, 0.4)
    assert conclusive(lin, 0.31) and not conclusive(lin, 0.29)  # 3 x 0.05 s in the half

    def r(seed, verdict):
        return {"seed": seed, "verdict": verdict, "std": float(seed)}

    runs = [r(0, "stable"), r(1, "underflow"), r(2, "oscillating"), r(3, "oscillating")]
    m = _majority(runs)  # 3 of 4 not stable: unstable, the most frequent class shown
    assert (m["verdict"], m["runs"], m["runs_unstable"], m["shown_seed"]) == (
        "oscillating",
        4,
        3,
        2,
    )
    assert m["std"] == 2.0 and "seed" not in m
    m = _majority(runs[:2] + [r(4, "stable")])  # 1 of 3: stable, its first run shown
    assert (m["verdict"], m["runs_unstable"], m["shown_seed"]) == ("stable", 1, 0)
    assert _majority(runs[:2])["verdict"] == "stable"  # a tie is not a majority unstable


def test_a_contradiction_where_the_trajectories_judge_must_be_significant():
    from qcnmodel.studies.confirm import ODDS_ALPHA, _odds_test, outcome

    class Model:  # the model's own runs at the point: k of 9 unstable
        def __init__(self, k):
            self.k = k

        def replace(self, **kw):
            return self

        def trajectory_verdicts(self):
            return ("oscillating",) * self.k + ("stable",) * (9 - self.k)

    pt = {"n_flows": 28, "rtt_s": 2e-6}
    packets = {"runs_unstable": 3, "runs": 9}
    near = _odds_test(Model(5), pt, packets)  # 3 of 9 against 5 of 9: p = 0.64
    assert near["odds_p"] == pytest.approx(0.637, abs=0.01) and near["conclusive"] is False
    assert "3 of 9 packet runs and 5 of 9 model runs" in near["open_reason"]
    row = {"conclusive": True, "agree": False, **near}
    assert outcome(row) == "inconclusive"
    apart = _odds_test(Model(9), pt, {"runs_unstable": 1, "runs": 9})  # p < 0.001
    assert apart["odds_p"] < ODDS_ALPHA and "conclusive" not in apart
    assert outcome({"conclusive": True, "agree": False, **apart}) == "DISAGREE"


def test_a_check_says_what_compiles_without_a_terminal(capsys, tmp_path, monkeypatch, small_grid):
    # stderr is not a terminal here (no progress bar): the compile notices are still said,
    # unless --quiet
    from qcnmodel.studies import compiling

    f = tmp_path / "p.toml"
    f.write_text('[ranges]\nrtt = "50us..100us"\nflows = "10..10"\n')
    for quiet in (False, True):
        monkeypatch.setattr(compiling, "_ANNOUNCED", set())
        monkeypatch.setattr(compiling, "_ready", lambda what, family="qcn": False)
        code = main(["check", str(f), "--no-recommend"] + (["--quiet"] if quiet else []))
        err = capsys.readouterr().err
        assert code in (0, 1)  # a verdict, not a usage error
        said = [ln for ln in err.splitlines() if ln.startswith("qcnmodel: compiling")]
        if quiet:
            assert said == []
        else:  # the cohort kernel first, then the trajectory kernel before its first runs
            assert len(said) == 2 and "cohort kernel" in said[0]
            assert "trajectory kernel" in said[1]


def test_a_threshold_that_decides_nothing_is_said_so():
    ranges = CheckRanges(rtt=(20e-6, 20e-6), flows=(3, 3), n_rtt=1, n_flows=1, pm_threshold=89)
    judged = check_params(QCNParams(), ranges, recommend=False)  # the trajectories judge N = 3
    assert judged.judged_flows == (3,)
    assert any(n.startswith("pm_threshold = 89 deg does not enter") for n in judged.notes)
    linear = check_params(QCNParams(), ranges, model="fopdt", recommend=False)
    assert linear.verdict == "marginal"  # the threshold decides there
    assert not any("does not enter" in n for n in linear.notes)
    # one flow at the line rate leaves the port uncongested: an infinite margin, which no
    # threshold can fail; with N = 3 judged by the trajectories the threshold still decides
    # nothing (the note was suppressed because N = 1 is judged by its linearised loop)
    both = CheckRanges(rtt=(20e-6, 20e-6), flows=(1, 3), n_rtt=1, n_flows=2, pm_threshold=89)
    mixed = check_params(QCNParams(), both, recommend=False)
    assert mixed.judged_flows == (3,) and 1 not in mixed.judged_flows
    assert any(n.startswith("pm_threshold = 89 deg does not enter") for n in mixed.notes)


def test_without_a_standing_queue_the_trajectories_judge(capsys, tmp_path, monkeypatch):
    """9000-B frames with the 802.1Qau Qeq (26 KB, under three frames): at N = 4 the mean
    field balances only below an empty queue, so there is no linearised loop; the model's
    trajectories from idle still run and underflow (9 of 9), while the packets' queue sits
    within one frame of empty (94-96 % of the bins under one frame: idle). The check gives
    that verdict (exit 1) instead of calling the input bad (exit 2), and --confirm puts it to
    the packets, whose idle queue confirms nothing (inconclusive)."""
    monkeypatch.chdir(tmp_path)  # the confirmation's figure is written here
    argv = ["check", "--preset", "802.1qau", "--set", "frame_size=9000", "--flows", "4..4",
            "--rtt", "20us..50us", "--no-recommend"]  # fmt: skip
    assert main([*argv, "--confirm", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "unstable" and out["no_standing_queue"] == [4]
    assert out["judged_by_trajectories"] == [4] and out["critical_rtt_s"]["4"] is None  # nan
    assert any(n.startswith("N = 4: no linearised loop") for n in out["notes"])
    assert "no linearised loop: no equilibrium with a standing queue" in out["headline"]
    rows = out["confirmation"]["rows"]
    # the packets' queue sits within one frame of empty (the detector's "idle"): no standing
    # queue, so nothing to confirm either way
    assert rows and out["confirmation"]["outcome"] == "inconclusive"
    assert all(r["verdict"] == "idle" and not r["predicted_stable"] for r in rows)
    assert all("confirms neither stability nor instability" in r["open_reason"] for r in rows)
    assert main(["margins", "--set", "frame_size=9000", "--flows", "4", "--rtt", "50us"]) == 0
    text = capsys.readouterr().out
    assert "judged by         the model's trajectories" in text and "UNSTABLE" in text


def test_a_confirmation_longer_than_its_range_names_that_range(capsys):
    # '1e9s' was "above the largest time accepted, 10000 s" though 11 s is refused too
    for value in ("1e9s", "11s", "0s"):
        assert main(["check", "--confirm", value, "--quiet"]) == 2
        assert "confirm: run length must be in (0, 10] s" in capsys.readouterr().err


def test_an_operating_point_given_with_set_points_to_its_flag(capsys):
    # "QCNParams: unknown field 'rtt'" gave no hint that --rtt sets the range
    for key, flag in (("rtt=5us", "--rtt"), ("n_flows=4", "--flows"), ("capacity=5Gbps", "--rate")):
        assert main(["check", "--set", key, "--quiet"]) == 2
        assert f"give it with {flag}" in capsys.readouterr().err


def test_the_lowest_phase_margin_is_the_grids_and_is_named_apart_from_the_worst_point(capsys):
    # the printed "worst phase margin" was the linearised margin at the verdict's worst point,
    # while the gain and delay lines were minima over the grid; the grid's lowest phase margin
    # is now given too, recomputed here point by point with each point's own loop
    from qcnmodel.models.fopdt import FOPDTModel
    from qcnmodel.studies.check_text import render

    ranges = CheckRanges(rtt=(2e-6, 1e-3), flows=(2, 20), n_rtt=6, n_flows=3)
    res = check_params(QCNParams(), ranges, model="fopdt", recommend=False)
    pm, n, rtt = res.lowest_phase_margin
    grid = {(int(k), float(t)): FOPDTModel(n_flows=int(k), rtt=float(t)).loop().margins()
            for k in ranges.flow_grid() for t in ranges.rtt_grid()}  # fmt: skip
    (n_ref, t_ref), m_ref = min(grid.items(), key=lambda kv: kv[1].phase_margin_deg)
    assert (n, rtt) == (n_ref, t_ref)
    assert pm == pytest.approx(m_ref.phase_margin_deg, abs=1e-6)
    assert pm <= res.worst_phase_margin_deg
    d = res.to_dict()
    assert d["lowest_phase_margin_unwrapped_deg"] == pm
    assert d["lowest_phase_margin_point"] == {"n_flows": n, "rtt_s": rtt}
    text = render(res, ranges, "p.toml")
    assert "phase margin at the worst point" in text and "worst phase margin" not in text
    assert ("lowest phase margin" in text) == ((n, rtt) != (res.worst_point["n_flows"],
                                                            res.worst_point["rtt_s"]))  # fmt: skip
    assert "nan with a band: stable in the band only" in text


def test_every_listed_change_says_what_it_was_put_to():
    """Only the headline's change is put to the model's trajectories; the others stabilise
    the linearised loop alone. netfpga-1g: bc_limit = 37500 makes check STABLE, timer =
    5.2 ms leaves N = 20 oscillating, and both read like the first ('make the linearised
    loop stable') with nothing about the flow counts the trajectories judge."""
    from qcnmodel.studies.check_text import _trajectory_words

    ranges = CheckRanges(rtt=(20e-6, 500e-6), flows=(1, 20))
    fix = {"field": "timer", "value": 0.005228}
    assert _trajectory_words(fix, (), ranges) == ""  # nothing judged by trajectories
    words = _trajectory_words(fix, (4, 20), ranges)
    assert "not put to the model's trajectories, which judge N = 4, 20" in words
    assert "check --set timer=" in words
    bad = _trajectory_words({**fix, "trajectories_unstable_n": [20]}, (4, 20), ranges)
    assert bad == "; the model's trajectories at 500 us still oscillate at N = 20"
    ok = _trajectory_words({**fix, "trajectories_unstable_n": []}, (4, 20), ranges)
    assert ok == "; the model's trajectories at 500 us are stable at every N they judge"


def test_rtts_below_the_trajectories_first_rtt_are_said_to_be_extrapolated():
    """The model's trajectories are run from 20 us; a range reaching below (the default check
    and report ranges start at 2 us; --rtt 100ns..1us read STABLE with no word) is judged
    there by the verdict at 20 us, and the check says so."""
    from qcnmodel.models.qcn import QCNFluidModel
    from qcnmodel.studies.check import _extrapolated_note

    models = {n: QCNFluidModel(n_flows=n) for n in (1, 2, 4)}
    low = CheckRanges(rtt=(0.1e-6, 1e-6), flows=(1, 4))
    (note,) = _extrapolated_note(low, models, (2, 4))
    assert note.startswith("RTTs below 20 us, the smallest the model's trajectories are run at")
    assert "at N = 2, 4" in note
    assert _extrapolated_note(CheckRanges(rtt=(20e-6, 1e-3), flows=(1, 4)), models, (2, 4)) == []
    assert _extrapolated_note(low, models, ()) == []  # nothing judged by trajectories
