"""Input files and range texts that used to end in a traceback or in a range the user did
not write: TOML nested deeper than the parser's recursion allows (a 10 kB file), a range
written with three dots (``2us...1ms`` read as ``2us`` .. ``.1ms``), and a topology file of
any size read whole. Each is refused with one line naming the file or field, exit 2, before
any model or simulation work."""

from __future__ import annotations

import pytest

import qcnmodel as qm
from qcnmodel.cli import main

SIM = ["simulate", "--scenario", "og-hotspot", "--duration", "1ms"]


def _refused(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("qcnmodel: compiling ")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def deep(tmp_path):
    f = tmp_path / "deep.toml"
    f.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    return str(f)


FILE_ARGS = [
    ["check", "{f}"],
    ["margins", "--params", "{f}"],
    [*SIM, "--params", "{f}"],
    ["simulate", "--topology", "{f}", "--duration", "1ms"],
]


@pytest.mark.parametrize("argv", FILE_ARGS)
def test_toml_nested_too_deeply_is_an_invalid_file(capsys, deep, argv):
    line = _refused(capsys, [a.format(f=deep) for a in argv])
    assert deep in line and "nested too deeply" in line


def test_load_params_names_the_file_nested_too_deeply(deep):
    with pytest.raises(ValueError, match="deep.toml: invalid TOML: .*nested too deeply"):
        qm.load_params(deep)


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["check", "--preset", "802.1qau", "--flows", "10", "--rtt", "2us...1ms"], "rtt"),
        (["check", "--preset", "802.1qau", "--flows", "1...10", "--rtt", "100us"], "flows"),
        (["margins", "--rtt", "2us...1ms"], "rtt"),
        (["sweep", "--model", "fopdt", "--grid", "rtt=2us...1ms:3"], "--grid rtt"),
    ],
)
def test_a_range_with_three_dots_is_refused(capsys, argv, field):
    line = _refused(capsys, argv)
    assert f"{field}: '" in line and "three dots" in line


def test_a_file_range_with_three_dots_is_refused(capsys, tmp_path):
    f = tmp_path / "r.toml"
    f.write_text('[ranges]\nrtt = "2us...1ms"\nflows = "10..10"\n')
    line = _refused(capsys, ["check", str(f)])
    assert "rtt" in line and "three dots" in line


def test_a_topology_file_larger_than_the_bound_is_not_read(monkeypatch, tmp_path):
    from qcnmodel.sim import topology

    f = tmp_path / "big.toml"
    f.write_text("# " + "x" * 5000 + "\n")
    monkeypatch.setattr(topology, "MAX_TOPOLOGY_FILE_BYTES", 4096)
    with pytest.raises(ValueError, match="larger than 4096 bytes; not a topology file"):
        topology.read_topology(f)


def test_a_grid_range_after_its_colon_is_refused(capsys):
    # 'w=:..nan:1' has '..' only after a ':' (the point count's place): no range to read
    line = _refused(capsys, ["sweep", "--model", "qcn", "--grid", "w=:..nan:1"])
    assert "--grid w: expected lo..hi:n[:log], got ':..nan:1'" in line
