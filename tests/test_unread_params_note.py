"""A QCN parameter set given to a protocol that does not read it is noted on stderr.

``--set w=2`` with ``--protocol none`` is refused (the one field set would change nothing).
A parameter set (``--params FILE``, ``--preset NAME``) comes with every field, of which every
protocol still reads ``cp_latency`` (and the network replaces line_rate and frame_size), so it
is not refused: one line on stderr says which protocols read no other field of it.
"""

import pytest

import qcnmodel.sim.api as sim_api
from qcnmodel.cli import main
from qcnmodel.sim.protocols.registry import unread_params_note

NOTE = "reads no QCN parameter but line_rate, frame_size, cp_latency"


class _Stop(ValueError):
    """Raised by the stand-in simulator: the run would start here."""


@pytest.fixture
def no_runs(monkeypatch):
    def fake(*a, **kw):
        raise _Stop("stand-in simulator")

    monkeypatch.setattr(sim_api, "simulate", fake)


def test_the_note_names_the_protocols_that_do_not_read_it():
    assert unread_params_note(["qcn", "qcn-sonar"], "--preset x") is None
    note = unread_params_note(["qcn", "none", "dcqcn"], "--preset netfpga-1g")
    assert note.startswith("--preset netfpga-1g: protocols none, dcqcn " + NOTE)


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--protocol", "none", "--params", "examples/802.1qau.toml"], True),
        (["--protocol", "dcqcn", "--preset", "netfpga-1g"], True),
        (["--protocol", "qcn", "--preset", "netfpga-1g"], False),
        (["--protocol", "none"], False),
    ],
)
def test_simulate_notes_it(argv, said, no_runs, capsys):
    assert main(["simulate", "--scenario", "og-hotspot", "--duration", "1ms", *argv]) == 2
    err = capsys.readouterr().err
    assert (NOTE in err) == said and "stand-in simulator" in err


def test_compare_notes_it(no_runs, tmp_path, capsys):
    argv = ["compare", "--scenario", "og-hotspot", "--protocols", "qcn,ecm", "--duration",
            "1ms", "--preset", "802.1qau", "--out", str(tmp_path / "c")]  # fmt: skip
    assert main(argv) == 2
    assert f"--preset 802.1qau: protocol 'ecm' {NOTE}" in capsys.readouterr().err


def test_a_set_of_one_unread_field_is_still_refused(capsys):
    argv = ["simulate", "--scenario", "og-hotspot", "--protocol", "none", "--set", "w=2"]
    assert main(argv) == 2
    assert "w: a QCN parameter, which protocol 'none' does not read" in capsys.readouterr().err
