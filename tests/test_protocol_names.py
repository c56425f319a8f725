"""Protocol names are read without regard to case at the edges, as units are.

``--protocol``, ``--protocols`` and :func:`qcnmodel.studies.compare.compare` take ``QCN`` or
`` Ecm `` for ``qcn`` and ``ecm``; an unknown name is still refused with a message naming
the flag and listing the known names.
"""

import pytest

import qcnmodel.sim.api as sim_api
from qcnmodel.cli import main
from qcnmodel.sim.protocols.registry import PROTOCOLS, get_protocol, protocol_name


class _Stop(ValueError):
    """Raised by the stand-in simulator: the run would start here."""


@pytest.fixture
def seen(monkeypatch):
    """The protocols the simulator is asked to run (the run itself is not done)."""
    names = []

    def fake(scenario, protocol="qcn", **kw):
        names.append(protocol)
        raise _Stop(f"stand-in simulator: protocol {protocol}")

    monkeypatch.setattr(sim_api, "simulate", fake)
    return names


def test_protocol_name_reads_any_case():
    assert protocol_name("QCN") == "qcn"
    assert protocol_name(" Ecm-Q ") == "ecm-q"
    assert all(protocol_name(n.upper()) == n for n in PROTOCOLS)
    with pytest.raises(ValueError, match=r"^protocols: unknown protocol 'QCNX'.*\(allowed: none, "):
        protocol_name("QCNX", "protocols")
    with pytest.raises(ValueError, match="protocol: unknown protocol 3"):
        protocol_name(3)
    with pytest.raises(ValueError, match="did you mean 'qcn'"):  # the strict lookup says why
        get_protocol("QCN")


def test_compare_api_normalises(seen):
    from qcnmodel.studies.compare import compare

    with pytest.raises(_Stop):
        compare("og-hotspot", "QCN, Ecm", duration="1ms")
    assert seen == ["qcn"]


def test_simulate_cli_normalises(seen, capsys):
    argv = ["simulate", "--scenario", "og-hotspot", "--protocol", "NONE", "--duration", "1ms"]
    assert main(argv) == 2
    assert seen == ["none"] and "stand-in simulator: protocol none" in capsys.readouterr().err


def test_compare_cli_normalises_and_names_the_flag(tmp_path, capsys):
    out = str(tmp_path / "c")
    base = ["compare", "--scenario", "og-hotspot", "--duration", "1ms", "--out", out]
    assert main([*base, "--protocols", "QCN,qcn"]) == 2  # the same protocol twice
    assert "protocols: 'qcn' given twice" in capsys.readouterr().err
    assert main([*base, "--protocols", "QCN,BOGUS"]) == 2
    err = capsys.readouterr().err
    assert "protocols: unknown protocol 'BOGUS'" in err and "allowed: none, qcn" in err


def test_sweep_cli_normalises(tmp_path, capsys):
    out = str(tmp_path / "e.nc")
    argv = ["sweep", "--scenario", "og-hotspot", "--protocol", "ECM", "--grid",
            "proto.qeq=-5KB,10KB", "--duration", "5ms", "--out", out]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown protocol" not in err and "qeq" in err  # past the name, to the value


def test_the_simulate_api_reads_any_case():
    """qm.simulate(protocol="QCN") runs qcn (the result names the registry name), exactly as
    protocol="qcn"; check_inputs reads it the same way; an unknown name is still refused."""
    import qcnmodel as qm
    from qcnmodel.sim.api import check_inputs

    kw = dict(duration="1ms", engine="oracle", trace=False)
    upper, lower = (
        qm.simulate("og-hotspot", protocol=" QCN ", **kw),
        qm.simulate("og-hotspot", protocol="qcn", **kw),
    )
    assert upper.protocol == "qcn" and upper.counters == lower.counters
    check_inputs("og-hotspot", protocol="Dcqcn", duration="1ms")
    with pytest.raises(ValueError, match="protocol: unknown protocol 'qnc'"):
        qm.simulate("og-hotspot", protocol="qnc", **kw)
