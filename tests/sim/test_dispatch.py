"""One protocol-family dispatch: every family has one kernel and one oracle adapter, and each
adapter has every hook, with the interface's arguments."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from qcnmodel.sim.kernel import dispatch as kd
from qcnmodel.sim.kernel.state import C_FAM, C_N, FAMILY_CODES
from qcnmodel.sim.oracle import dispatch as od
from qcnmodel.sim.protocols.registry import FAMILIES, PROTOCOLS, make_config

HOOKS = ("rl_send", "cp_enqueue", "cp_dequeue", "np_deliver", "on_event", "on_drift", "trace_rl")


def _sig(fn):
    return inspect.signature(getattr(fn, "py_func", fn))


def _hook_sig(fn):
    """A dispatch hook's signature without its first parameter (the family marker)."""
    sig = _sig(fn)
    return sig.replace(parameters=list(sig.parameters.values())[1:])


def test_every_family_has_both_adapters():
    # the kernel has one adapter more: the QCN variants with aux timers, probes or SONAR
    assert set(FAMILIES) == set(od.ADAPTERS) == set(kd.ADAPTERS) - {"qcn-variants"}
    assert set(kd.ADAPTERS) == set(FAMILY_CODES) == set(kd.MARKER_DTYPES) == set(kd.WARM_PROTOCOLS)
    assert {p.family for p in PROTOCOLS.values()} == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(kd.ADAPTERS))
def test_each_kernel_family_warms_up_with_a_protocol_of_its_own(family):
    assert kd.kernel_family(make_config(kd.WARM_PROTOCOLS[family])) == family


def test_plain_qcn_runs_without_the_variants_machinery():
    kinds = {name: kd.kernel_family(make_config(name)) for name in PROTOCOLS}
    # probes (a probe path) or SONAR: the aux timer and its events
    variants = {n for n, p in PROTOCOLS.items() if p.probe_path is not None or "sonar" in n}
    assert {n for n, k in kinds.items() if k == "qcn-variants"} == variants
    assert kinds["qcn"] == kinds["qcn-h"] == "qcn"
    assert {"qcn-p", "qcn-sp", "qcn-pp", "qcn-sonar"} <= variants


@pytest.mark.parametrize("family", sorted(kd.ADAPTERS))
def test_kernel_adapter_has_every_hook_with_the_interface_arguments(family):
    mod = kd.ADAPTERS[family]
    for hook in HOOKS:
        assert _sig(getattr(mod, hook)) == _hook_sig(getattr(kd, hook)), hook
    assert callable(mod.configure)


@pytest.mark.parametrize("family", sorted(od.ADAPTERS))
def test_oracle_adapter_has_every_hook(family):
    cls = od.ADAPTERS[family]
    for hook in HOOKS:
        assert _sig(getattr(cls, hook)) == _sig(getattr(od.NoneFamily, hook)), hook


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_configure_names_the_family(name):
    import numpy as np

    C = np.zeros(C_N, np.int64)
    kd.configure(C, make_config(name))
    assert C[C_FAM] == FAMILY_CODES[kd.kernel_family(make_config(name))]
    assert kd.kernel_family(make_config(name)) in (PROTOCOLS[name].family, "qcn-variants")


@pytest.mark.parametrize("family", sorted(kd.ADAPTERS))
def test_each_family_has_its_own_marker(family):
    m = kd.marker(family)
    assert m.size == 0 and np.array_equal(kd.marker(FAMILY_CODES[family]), m)
    others = {kd.marker(f).dtype for f in kd.ADAPTERS if f != family}
    assert m.dtype not in others


def test_a_run_compiles_only_its_family():
    from simnets import star

    from qcnmodel.params import QCNParams
    from qcnmodel.sim.kernel import loop
    from qcnmodel.sim.kernel.state import build_state
    from qcnmodel.sim.network import compile_network

    net = compile_network(star(n=3))
    st = build_state(net, QCNParams(), qcn=True, seed=1, end_ns=200_000, bin_ns=100_000,
                     measure_ns=(0, 200_000), traced_flows=np.arange(2),
                     proto=make_config("ecm"))  # fmt: skip
    loop.run_compiled(st)
    compiled = {str(sig[0].dtype) for sig in loop.run_until.signatures}
    assert "int16" in compiled  # the ECM marker
