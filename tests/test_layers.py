"""The architecture holds: no import runs against the layer order of docs/layers.py."""

import importlib.util
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]


def _layers():
    spec = importlib.util.spec_from_file_location("layers", ROOT / "docs" / "layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_runs_against_the_layer_order():
    layers = _layers()
    assert layers.violations() == []


def test_every_module_has_a_layer_and_the_parse_sees_the_lazy_imports():
    layers = _layers()
    pairs = layers.imports()
    for a, b in pairs:
        layers.layer_of(a), layers.layer_of(b)  # raises for a module without a layer
    # a lazy import inside a function counts (studies.report -> models.summary)
    assert ("qcnmodel.studies.report", "qcnmodel.models.summary") in pairs
    # the simulator reads the protocols' parameter classes from the parameter layer
    assert ("qcnmodel.sim.protocols.registry", "qcnmodel.params.protocols") in pairs
    # the analysis layer knows no protocol
    below = {(layers.layer_of(a), layers.layer_of(b)) for a, b in pairs}
    assert ("analysis", "params") not in below and ("analysis", "models") not in below


def test_a_forbidden_import_is_reported(monkeypatch):
    layers = _layers()
    real = layers.imports()
    monkeypatch.setattr(
        layers, "imports", lambda: [*real, ("qcnmodel.analysis.loop", "qcnmodel.models.qcn")]
    )
    assert layers.violations() == [("qcnmodel.analysis.loop", "qcnmodel.models.qcn")]


def test_the_picture_is_drawn(tmp_path):
    out = _layers().draw(tmp_path / "layers.png")
    assert out.stat().st_size > 10_000 and out.read_bytes()[:4] == b"\x89PNG"
