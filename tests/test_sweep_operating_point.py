"""An analytical sweep's file says at which operating point it ran: the flow count, RTT and
port capacity it does not sweep are attributes (``n_flows``, ``rtt_s``, ``capacity_bps``);
``--out``'s default file is named in ``--help``."""

from __future__ import annotations

import pytest
import xarray as xr

from qcnmodel.cli import main


def _attrs(path) -> dict:
    with xr.open_dataset(path) as ds:
        return dict(ds.attrs)


def test_the_fixed_operating_point_is_in_the_attributes(tmp_path):
    out = tmp_path / "s.nc"
    argv = ["sweep", "--model", "fopdt", "--grid", "rtt=50us,100us", "--set", "n_flows=7",
            "--set", "capacity=5Gbps", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    a = _attrs(out)
    assert (int(a["n_flows"]), a["capacity_bps"]) == (7, pytest.approx(5e9, rel=1e-12))
    assert "rtt_s" not in a  # swept: a coordinate, not an attribute


def test_the_defaults_are_recorded_too(tmp_path):
    out = tmp_path / "d.nc"
    argv = ["sweep", "--model", "fopdt", "--grid", "n_flows=1,10", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    a = _attrs(out)
    # the port serves at the 802.1Qau set's line rate, 10 Gb/s, unless told otherwise
    assert a["capacity_bps"] == pytest.approx(10e9, rel=1e-12) and "n_flows" not in a
    assert a["rtt_s"] > 0


def test_the_help_names_the_default_output(capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert "(default sweep.nc)" in " ".join(capsys.readouterr().out.split())
