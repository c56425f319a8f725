"""One protocol-family dispatch: every family has one kernel and one oracle adapter, and each
adapter has every hook, with the interface's arguments."""

from __future__ import annotations

import inspect

import pytest

from qcnmodel.sim.kernel import dispatch as kd
from qcnmodel.sim.kernel.state import C_FAM, C_N, FAMILY_CODES
from qcnmodel.sim.oracle import dispatch as od
from qcnmodel.sim.protocols.registry import FAMILIES, PROTOCOLS, make_config

HOOKS = ("rl_send", "cp_enqueue", "cp_dequeue", "np_deliver", "on_event", "on_drift", "trace_rl")


def _sig(fn):
    return inspect.signature(getattr(fn, "py_func", fn))


def test_every_family_has_both_adapters():
    assert set(FAMILIES) == set(kd.ADAPTERS) == set(od.ADAPTERS) == set(FAMILY_CODES)
    assert {p.family for p in PROTOCOLS.values()} == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(kd.ADAPTERS))
def test_kernel_adapter_has_every_hook_with_the_interface_arguments(family):
    mod = kd.ADAPTERS[family]
    for hook in HOOKS:
        assert _sig(getattr(mod, hook)) == _sig(getattr(kd, hook)), hook
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
    assert C[C_FAM] == FAMILY_CODES[PROTOCOLS[name].family]
