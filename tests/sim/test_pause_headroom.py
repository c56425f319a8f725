"""A PAUSE ``headroom_factor`` below 1 reserves less than what can still arrive after XOFF,
so PAUSE would drop frames: it is refused, naming the field and the allowed range [1, inf)
(exit status 2 at the command line, with the file and line of a topology file)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from qcnmodel.cli import main
from qcnmodel.sim.network import compile_network
from qcnmodel.sim.topology import read_topology

EXAMPLE = Path(__file__).parents[2] / "examples/topologies/two-switch.toml"


def _with_pause(tmp_path, factor: str) -> Path:
    text = EXAMPLE.read_text().replace(
        'switch_memory = "150KB"',
        f'switch_memory = "150KB"\n\n[pause]\nenabled = true\nheadroom_factor = {factor}',
    )
    path = tmp_path / "pause.toml"
    path.write_text(text)
    return path


def test_a_topology_file_below_one_is_refused_with_its_line(tmp_path, capsys):
    path = _with_pause(tmp_path, "0.5")
    line = 1 + path.read_text().splitlines().index("headroom_factor = 0.5")
    argv = ["simulate", "--topology", str(path), "--protocol", "none", "--duration", "1ms"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"pause.toml, [pause] (line {line}): headroom_factor: 0.5" in err
    assert "allowed range [1, inf)" in err and "drops frames" in err


def test_the_api_refuses_it_and_accepts_one_and_more(tmp_path):
    spec = read_topology(_with_pause(tmp_path, "1.5")).spec
    compile_network(spec)  # a larger headroom than the lossless one: accepted
    for factor in (0.0, 0.99):
        bad = dataclasses.replace(
            spec, pause=dataclasses.replace(spec.pause, headroom_factor=factor)
        )
        with pytest.raises(ValueError, match=r"headroom_factor: .* allowed range \[1, inf\)"):
            compile_network(bad)
