"""The simulator's module layout: old import paths keep working (deprecated) for one release."""

from __future__ import annotations

import subprocess
import sys

import pytest

from qcnmodel import _compat

SIM_MOVED = {old: new for old, new in _compat.MOVED.items() if new.startswith("qcnmodel.sim.")}


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                         capture_output=True, text=True)  # fmt: skip
    return out.stdout + out.stderr


def test_sim_section_lists_the_moved_modules():
    assert "qcnmodel.sim.rules" in SIM_MOVED and "qcnmodel.fairness" in SIM_MOVED
    for new in SIM_MOVED.values():
        __import__(new)  # every target exists


@pytest.mark.parametrize("old", sorted(SIM_MOVED))
def test_old_path_warns_and_forwards(old):
    import importlib
    import warnings

    new = importlib.import_module(SIM_MOVED[old])
    public = [n for n in dir(new) if not n.startswith("_")]
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    assert any(issubclass(x.category, DeprecationWarning) and SIM_MOVED[old] in str(x.message)
               for x in w)  # fmt: skip
    for name in public[:5]:
        assert getattr(mod, name) is getattr(new, name)


def test_old_package_names_are_reexported():
    code = (
        "import qcnmodel.sim\n"
        "from qcnmodel.sim.kernel import run_compiled, warm_up\n"
        "from qcnmodel.sim.oracle import Oracle\n"
        "from qcnmodel.sim.protocols import PROTOCOLS, PROTO_CODES, get_protocol, make_config\n"
        "from qcnmodel.sim.scenarios import SCENARIOS, Scenario, build_scenario, get_scenario\n"
        "print('ok')\n"
    )
    assert _run(code).strip() == "ok"  # and no DeprecationWarning (raised as an error)


def test_named_sweeps_moved_with_a_warning():
    import warnings

    from qcnmodel.sim.scenarios import catalogue
    from qcnmodel.studies import named_sweeps

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert catalogue.NAMED_SWEEPS is named_sweeps.NAMED_SWEEPS
    assert issubclass(w[0].category, DeprecationWarning)
    with pytest.raises(AttributeError):
        catalogue.no_such_name  # noqa: B018
