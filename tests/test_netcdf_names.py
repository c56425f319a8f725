"""A netCDF writer refuses a file name of another format: ``SimResult.to_netcdf("x.csv")``
wrote netCDF under a .csv name without a word."""

import pytest

from qcnmodel._io import NETCDF_SUFFIXES, check_suffix


@pytest.mark.parametrize("name", ["x.nc", "x.NC", "x.nc4", "x.netcdf", "x", "dir.d/x"])
def test_netcdf_names_are_accepted(name):
    assert str(check_suffix(name, NETCDF_SUFFIXES)) == name


@pytest.mark.parametrize("name", ["x.csv", "x.json", "x.nc.tmp"])
def test_other_formats_are_refused_naming_the_argument(name):
    with pytest.raises(ValueError, match=r"^path: a netCDF file is named \*\.nc, \*\.nc4"):
        check_suffix(name, NETCDF_SUFFIXES, "path")


def test_sim_result_to_netcdf_refuses_a_csv_name(tmp_path):
    import qcnmodel as qm

    r = qm.simulate("og-hotspot", duration="1ms", engine="oracle", trace=True)
    with pytest.raises(ValueError, match="path: a netCDF file is named"):
        r.to_netcdf(tmp_path / "x.csv")
    assert list(tmp_path.iterdir()) == []
    r.to_netcdf(tmp_path / "x.nc")
    assert (tmp_path / "x.nc").stat().st_size > 0
