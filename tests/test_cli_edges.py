"""Edge cases of the input checks: files that are not UTF-8, NaN values, and metrics over
windows where the hotspot is not active."""

import dataclasses
import math
from pathlib import Path

import pytest

from qcnmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]
_NOT_UTF8 = b'rtt = "5us"\n# caf\xe9 \xff\xfe\n'


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_non_utf8_parameter_file_names_the_file(tmp_path, capsys):
    f = tmp_path / "latin1-params.toml"
    f.write_bytes(_NOT_UTF8)
    assert main(["margins", "--params", str(f)]) == 2
    err = _err(capsys)
    assert "latin1-params.toml" in err and "UTF-8" in err, err


def test_non_utf8_parameter_file_through_the_api_names_the_file(tmp_path):
    from qcnmodel.params import load_params

    f = tmp_path / "latin1-api.toml"
    f.write_bytes(_NOT_UTF8)
    with pytest.raises(ValueError, match="latin1-api.toml.*UTF-8"):
        load_params(f)


def test_non_utf8_topology_file_names_the_file(tmp_path, capsys):
    f = tmp_path / "latin1-net.toml"
    f.write_bytes(_NOT_UTF8)
    assert main(["simulate", "--topology", str(f), "--duration", "1ms"]) == 2
    err = _err(capsys)
    assert "latin1-net.toml" in err and "UTF-8" in err, err


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan"])
def test_flows_nan_names_the_field(value, capsys):
    assert main(["margins", "--flows", value]) == 2
    assert "flows" in _err(capsys)


def _spec():
    from qcnmodel.sim.topology import load_topology

    return load_topology(ROOT / "examples/topologies/two-switch.toml")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: {"measure": (math.nan, 1.0)}, "measure"),
        (lambda s: {"measure": (0.0, math.nan)}, "measure"),
        (lambda s: {"measure": (0.5, 0.1)}, "measure"),
        (lambda s: {"frame_size": math.nan}, "frame_size"),
        (lambda s: {"links": (dataclasses.replace(s.links[0], rate=math.nan),) + s.links[1:]},
         "rate"),
        (lambda s: {"buffers": dataclasses.replace(s.buffers, switch_memory=math.nan)},
         "switch_memory"),
    ],
)  # fmt: skip
def test_nan_in_a_network_spec_names_the_field(change, field):
    from qcnmodel.sim.network.compile import compile_network

    spec = _spec()
    with pytest.raises(ValueError, match=field):
        compile_network(dataclasses.replace(spec, **change(spec)))


def test_mean_capacity_weights_the_hotspot_by_its_active_time():
    from qcnmodel.sim.metrics import mean_capacity

    # 10 Gb/s link, 1 Gb/s hotspot from 0.1 s to 1 s
    assert mean_capacity(10e9, 1e9, 0.1, 1.0, 0.0, 0.05) == 10e9  # not started
    assert mean_capacity(10e9, 1e9, 0.1, 1.0, 0.2, 0.5) == 1e9  # active throughout
    assert mean_capacity(10e9, 1e9, 0.1, 1.0, 0.0, 0.2) == pytest.approx(5.5e9)  # half, half
    assert mean_capacity(10e9, 20e9, 0.1, 1.0, 0.2, 0.5) == 10e9  # never above the link


def test_metrics_before_the_hotspot_starts_are_against_the_link(capsys):
    import json

    # og-hotspot: hotspot 0.1 s .. 1 s; the run ends at 50 ms, before it starts
    assert main(["simulate", "--scenario", "og-hotspot", "--duration", "50ms", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fairness_error"] is None
    assert "not active" in out["metrics_note"]
    # 85% uniform load from 9 sources onto the hot node's 10 Gb/s port: ~0.85; the 0.02
    # margin covers the Bernoulli arrivals (~39000 frames: relative spread ~0.5%)
    assert out["hot_port_utilisation"] == pytest.approx(0.85, abs=0.02)
    assert out["hot_port_utilisation"] <= 1.0


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--model", "qcn", "--grid", "n_flows=1..10:3"], "n_flows"),  # 5.5 flows
        (["--model", "qcn", "--grid", "w=2..-1:4"], "w"),  # the last value is out of range
        (["--model", "qcn", "--grid", "rtt=5us,10us", "--grid", "qeq=30KB,-1KB"], "qeq"),
        (["--scenario", "og-hotspot", "--grid", "load=0.5,0.9,-1", "--duration", "1ms"], "load"),
        (["--scenario", "og-hotspot", "--grid", "n_nodes=2..10:4", "--duration", "1ms"],
         "n_nodes"),
    ],
)  # fmt: skip
def test_sweep_refuses_a_bad_grid_value_before_any_point(argv, field, tmp_path, capsys,
                                                        monkeypatch):  # fmt: skip
    import qcnmodel.studies.points as points

    computed = []
    for name in ("analysis_point", "simulation_point"):
        real = getattr(points, name)

        def counting(*a, _real=real, **k):
            computed.append(k)
            return _real(*a, **k)

        monkeypatch.setattr(points, name, counting)
    out = tmp_path / "s.nc"
    assert main(["sweep", *argv, "--out", str(out), "--quiet"]) == 2
    assert field in _err(capsys)
    assert computed == []  # not even the first point
    assert not Path(str(out) + ".partial").exists()  # no checkpoint written
