"""`qcnmodel report --confirm {auto,yes,no}`: a first report on a fresh install leaves out what
is not compiled yet (the packet confirmation, the nonlinear trajectories), says so, and names
the command that runs everything; with the kernels compiled it runs them as before.

The fast tests replace the "is it compiled" answers of :mod:`qcnmodel.studies.compiling`
(monkeypatch) so that nothing compiles; one test asks a fresh process with an empty numba
cache for the real answers, and a slow test runs the whole first report that way.
"""

import dataclasses
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from qcnmodel.cli import build_parser, main
from qcnmodel.cli.report import confirm_command, report_config
from qcnmodel.studies import compiling
from qcnmodel.studies.report import ReportConfig, write_report
from qcnmodel.studies.report_tasks import resolve_auto

ROOT = Path(__file__).resolve().parents[2]


def _cfg(*argv):
    return report_config(build_parser().parse_args(["report", *argv]))


def _small(**kw):
    # a small report (one W and Ps, two N, one point): seconds, not the default's tens
    return ReportConfig(n_rtt=6, flows=(1, 10), weights=(2.0,), ps_values=(0.01,),
                        point_flows=(10,), point_rtts=(100e-6,), recommend=False,
                        **kw)  # fmt: skip


def _compiled(monkeypatch, sim: bool, trajectories: bool) -> None:
    monkeypatch.setattr(compiling, "sim_ready", lambda family="qcn": sim)
    monkeypatch.setattr(compiling, "trajectories_ready", lambda: trajectories)


@pytest.mark.parametrize(
    ("argv", "packet", "trajectories"),
    [
        ([], "auto", "auto"),  # the default
        (["--confirm", "auto"], "auto", "auto"),
        (["--confirm"], True, True),  # bare: yes
        (["--confirm", "yes"], True, True),
        (["--confirm", "no"], False, "auto"),
        (["--no-packet"], False, "auto"),
        (["--no-packet", "--confirm", "no"], False, "auto"),
    ],
)
def test_confirm_values(argv, packet, trajectories):
    cfg = _cfg(*argv)
    assert cfg.packet == packet and cfg.trajectories == trajectories


def test_bad_confirm_value_is_a_usage_error_naming_the_choices(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--out", str(tmp_path / "r"), "--confirm", "maybe"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "--confirm: invalid choice: 'maybe'" in err
    assert "'auto', 'yes', 'no'" in err  # the allowed values
    assert not (tmp_path / "r").exists()  # refused before any work


@pytest.mark.parametrize("confirm", [["--confirm"], ["--confirm", "yes"], ["--confirm", "auto"]])
def test_confirm_contradicting_no_packet_exits_2(confirm, tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "r"), "--no-packet", *confirm]) == 2
    err = capsys.readouterr().err
    assert "qcnmodel report: error: confirm: --confirm" in err and "--no-packet" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_bad_packet_value_in_the_api():
    with pytest.raises(ValueError, match="packet: expected True, False or 'auto'"):
        ReportConfig(packet="yes")
    with pytest.raises(ValueError, match="trajectories: expected True, False or 'auto'"):
        ReportConfig(trajectories=1)  # not a bool: refused, not taken for True


def test_confirm_command_is_the_same_report_with_confirm_yes():
    argv = ["--out", "my report", "--preset", "802.1qau", "--set", "w=4", "--rtt", "5us..2ms",
            "--flows", "2..50", "--quiet", "--jobs", "1"]  # fmt: skip
    args = build_parser().parse_args(["report", *argv])
    cmd = confirm_command(args)
    assert cmd == ("qcnmodel report --out 'my report' --preset 802.1qau --set w=4 --rtt 5us..2ms "
                   "--flows 2..50 --confirm yes")  # fmt: skip
    # run as given, it is this report with everything on
    again = build_parser().parse_args(shlex.split(cmd)[1:])
    assert again.out == "my report"
    # (--jobs and --quiet are left out: they do not change the report)
    want = dataclasses.replace(_cfg(*argv), packet=True, trajectories=True, jobs=None)
    assert report_config(again) == want
    # the defaults are not repeated
    assert confirm_command(build_parser().parse_args(["report"])) == (
        "qcnmodel report --confirm yes"
    )


@pytest.mark.parametrize(("sim", "traj"), [(False, False), (True, False), (False, True),
                                           (True, True)])  # fmt: skip
def test_auto_follows_what_is_compiled(monkeypatch, sim, traj):
    _compiled(monkeypatch, sim, traj)
    cfg, left = resolve_auto(_small(packet="auto", trajectories="auto"))
    assert (cfg.packet, cfg.trajectories) == (sim, traj)
    assert left == [k for k, ok in (("sim", sim), ("trajectories", traj)) if not ok]
    # True and False are kept whatever is compiled
    cfg, left = resolve_auto(_small(packet=True, trajectories=False))
    assert (cfg.packet, cfg.trajectories, left) == (True, False, [])


def test_published_equations_draw_their_trajectories_whatever_is_compiled(monkeypatch):
    # the paper variant's trajectories do not run the packet-fidelity model's kernels
    _compiled(monkeypatch, False, False)
    cfg, left = resolve_auto(_small(packet="auto", trajectories="auto", variant="paper"))
    assert cfg.trajectories is True and left == ["sim"]


def test_a_fresh_cache_has_nothing_compiled():
    # the real answers, in a process whose numba cache is a new, empty directory
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        code = ("from qcnmodel.studies.compiling import sim_ready, trajectories_ready; "
                "print(sim_ready('qcn'), trajectories_ready())")  # fmt: skip
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, timeout=120).stdout  # fmt: skip
    assert out.split() == ["False", "False"]


def test_first_report_leaves_out_what_is_not_compiled_and_says_so(tmp_path, capsys,
                                                                  monkeypatch):  # fmt: skip
    _compiled(monkeypatch, False, False)
    cmd = "qcnmodel report --out x --confirm yes"
    paths = write_report(tmp_path / "r", _small(packet="auto", trajectories="auto"),
                         progress=False, command=cmd)  # fmt: skip
    assert paths["packet"] == "not compiled" and paths["trajectories"] == "not compiled"
    err = capsys.readouterr().err
    notice = [ln for ln in err.splitlines() if ln.startswith("qcnmodel: not compiled yet")]
    assert len(notice) == 1  # one line on stderr
    assert "packet simulator" in notice[0] and "trajectory kernels" in notice[0]
    assert f"`{cmd}`" in notice[0]
    md = (tmp_path / "r" / "report.md").read_text()
    html = (tmp_path / "r" / "report.html").read_text()
    for text in (md, html):
        assert "Packet-level confirmation" in text and "Not run" in text
        assert "Not drawn" in text and cmd in text
    assert "15-50 s on 2 cores" in md  # how long compiling takes, once
    names = sorted(Path(f).name for f in paths["figures"])
    assert "nonlinear.png" not in names and "verdict_confirmation.png" not in names
    assert not (tmp_path / "r" / "figures" / "nonlinear.png").exists()
    assert html.count("data:image/png;base64,") == len(paths["figures"])


def test_off_and_compiled_say_nothing(tmp_path, capsys, monkeypatch):
    # --confirm no with the trajectories compiled: no notice, no "Not run" section
    _compiled(monkeypatch, False, True)
    paths = write_report(tmp_path / "r", _small(packet=False, trajectories="auto"),
                         progress=False)  # fmt: skip
    assert paths["packet"] == "off" and paths["trajectories"] == "run"
    assert "not compiled yet" not in capsys.readouterr().err
    md = (tmp_path / "r" / "report.md").read_text()
    assert "Packet-level confirmation" not in md and "Not drawn" not in md
    assert "nonlinear.png" in [Path(f).name for f in paths["figures"]]


def test_notice_for_one_part():
    from qcnmodel.studies.report_packet import CONFIRM_COMMAND, deferred_notice

    line = deferred_notice(["sim"])
    assert line.startswith("qcnmodel: not compiled yet: the packet simulator (once")
    assert "trajectory" not in line and f"`{CONFIRM_COMMAND}` compiles it " in line
    assert "\n" not in deferred_notice(["sim", "trajectories"], "qcnmodel report --confirm yes")


@pytest.mark.slow  # a whole first report in a fresh process: ~30-60 s on 2 shared cores
def test_first_report_on_a_fresh_cache(tmp_path):
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
        r = subprocess.run([sys.executable, "-m", "qcnmodel", "report", "--quiet", "--out",
                            str(tmp_path / "r")], env=env, capture_output=True, text=True,
                           timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    notice = [ln for ln in r.stderr.splitlines() if ln.startswith("qcnmodel: not compiled yet")]
    assert len(notice) == 1 and "--confirm yes" in notice[0]
    assert "Traceback" not in r.stderr
    md = (tmp_path / "r" / "report.md").read_text()
    assert "Not run" in md and "Not drawn" in md and "## Verdict" in md


def test_closing_the_report_workers_leaves_no_error_for_the_pools_thread(tmp_path):
    # Ctrl-C while a worker runs: close() terminates it, and CPython 3.11's pool thread then
    # calls set_exception(BrokenProcessPool) on every future still queued, cancelled ones
    # included; on a cancelled future that raised InvalidStateError (a traceback in the
    # thread). After close() it must not raise.
    from concurrent.futures.process import BrokenProcessPool

    from qcnmodel.studies.report_tasks import Tasks

    tasks = Tasks(_small(jobs=2, packet=False), tmp_path, workers=1)
    queued = list(tasks.futs.values())
    # a part not handed to the worker yet (the pool moves one call beyond its workers into
    # its call queue, which cannot be cancelled; on a busy machine that may be the last)
    cancelled = next((f for f in reversed(queued) if f.cancel()), None)
    if cancelled is None:
        tasks.close()
        pytest.skip("every part reached the worker's call queue before it could be cancelled")
    tasks.close()
    for fut in queued:
        if fut.cancelled():
            fut.set_exception(BrokenProcessPool("terminated"))  # what the pool's thread does
    assert cancelled.cancelled()
