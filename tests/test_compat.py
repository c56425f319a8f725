"""The front door and the deprecated import paths of the modules that moved."""

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

import qcnmodel as qm
from qcnmodel._compat import MOVED

ROOT = Path(__file__).resolve().parents[1]
#: every old path of MOVED (the simulator's aliases are also tested in tests/sim/test_layout.py)
OURS = dict(MOVED)

#: names the README, the package docstring and docs/architecture.md promise on ``qm``
DOCUMENTED = [
    "PRESETS", "QCNParams", "load_params", "parse_number", "parse_rate", "parse_size",
    "parse_time", "config", "__version__", "DelayedLoop", "Margins", "margins_over_delay",
    "critical_rtt", "stability_map", "FOPDTModel", "QCNFluidModel", "QCNClassesFluidModel",
    "DCQCNFluidModel", "DCQCNParams", "ECMFluidModel", "ECMParams", "MODELS", "build_model",
    "summary", "simulate", "SimResult",
]  # fmt: skip


def _fresh_import(name):
    """Import ``name`` as if for the first time (the proxy warns when it is created)."""
    parent, _, child = name.rpartition(".")
    sys.modules.pop(name, None)
    if parent in sys.modules and child in vars(sys.modules[parent]):
        delattr(sys.modules[parent], child)
    return importlib.import_module(name)


@pytest.mark.parametrize("old", sorted(OURS))
def test_every_old_path_imports_and_warns(old):
    new = OURS[old]
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = _fresh_import(old)
    target = importlib.import_module(new)
    public = getattr(target, "__all__", None) or [n for n in vars(target) if not n[0] == "_"]
    for name in public:
        assert getattr(module, name) is getattr(target, name), (old, name)


def test_old_names_that_moved_within_a_module_still_resolve():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from qcnmodel.fluid_dcqcn import DCQCNParams
        from qcnmodel.margins import critical_rtt
        from qcnmodel.sim.protocol_params import DCQCNSimParams, ECMParams

        from qcnmodel.params import _NUMERIC, _line_of, _parse_bool, check_field_names

    assert critical_rtt is qm.critical_rtt and DCQCNParams is qm.DCQCNParams
    assert ECMParams is qm.ECMParams and issubclass(DCQCNSimParams, qm.DCQCNParams)
    assert callable(_line_of) and "qeq" in _NUMERIC and _parse_bool("on", "x") is True
    assert callable(check_field_names)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_documented_public_names(name):
    assert getattr(qm, name) is not None
    assert name in dir(qm)


def test_dir_lists_every_lazy_name_and_each_resolves():
    for name in qm.__all__:
        assert name in dir(qm)
        getattr(qm, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        qm.nope  # noqa: B018


def test_dir_shows_no_stray_name():
    """Every public name of ``dir(qm)`` is documented in ``__all__`` or is a subpackage (a
    ``from __future__ import annotations`` once showed as ``qm.annotations``)."""
    import types

    stray = [n for n in dir(qm) if not n.startswith("_") and n not in qm.__all__
             and not isinstance(getattr(qm, n), types.ModuleType)]  # fmt: skip
    assert stray == []


def _imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_our_code_imports_only_the_new_paths():
    roots = [ROOT / "qcnmodel", ROOT / "tests", ROOT / "benchmarks", ROOT / "notebooks" / "src"]
    skip = (Path(__file__), ROOT / "tests" / "sim" / "test_layout.py")
    bad = []
    for root in roots:
        for path in root.rglob("*.py"):
            if any(path == s or s in path.parents for s in skip):
                continue
            bad += [f"{path.relative_to(ROOT)}: {m}" for m in _imports(path) if m in OURS]
    assert not bad, bad
