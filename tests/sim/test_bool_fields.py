"""Boolean fields refuse values that are not booleans (NaN, 2, "maybe", None) with an error
naming the field, in the network description and in every parameter class."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qcnmodel.params import DCQCNParams, QCNParams
from qcnmodel.params.protocols import ECMParams, EFRParams, QCNPlusParams
from qcnmodel.sim.network import PauseConfig

BAD = [math.nan, 2, -1, 0.5, "maybe", None, "yes"]


@pytest.mark.parametrize("value", BAD)
def test_pause_enabled_must_be_a_bool(value):
    with pytest.raises(ValueError, match="pause enabled: expected True or False"):
        PauseConfig(enabled=value)


def test_pause_enabled_accepts_bools():
    assert PauseConfig(enabled=True).enabled is True
    assert PauseConfig(enabled=np.bool_(False)).enabled is False


FIELDS = [(QCNParams, "hai"), (QCNParams, "cnm_requires_qfb_positive"),
          (DCQCNParams, "release"), (ECMParams, "ecm_max"), (ECMParams, "ecm00"),
          (EFRParams, "efr"), (EFRParams, "efr_max"), (QCNPlusParams, "one_neg_per_rtt"),
          (QCNPlusParams, "to_thresh_rtt")]  # fmt: skip


@pytest.mark.parametrize("cls,name", FIELDS)
@pytest.mark.parametrize("value", [math.nan, 2, 0.5, "maybe", None])
def test_parameter_bool_fields_refuse_non_booleans(cls, name, value):
    # the parameter files and --set accept the documented spellings (true/false, on/off,
    # yes/no, 1/0); anything else is refused naming the field
    with pytest.raises(ValueError, match=rf"{name}: expected a boolean"):
        cls(**{name: value})


def test_topology_pause_enabled_string_exits_2(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "t.toml"
    f.write_text('nodes = ["a", "b"]\nswitches = ["s"]\n[[links]]\na = "a"\nb = "s"\n'
                 '[[links]]\na = "b"\nb = "s"\n[[flows]]\nsource = "a"\ndest = "b"\n'
                 'rate = "1Gbps"\n[pause]\nenabled = "yes"\n')  # fmt: skip
    cmd = [sys.executable, "-m", "qcnmodel", "simulate", "--topology", str(f), "--duration",
           "100us", "--quiet"]  # fmt: skip
    import os
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "enabled" in out.stderr and "Traceback" not in out.stderr
