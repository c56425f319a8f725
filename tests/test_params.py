"""QCNParams: presets, validation, replace() and TOML round trips."""

import dataclasses
import re

import numpy as np
import pytest

from qcnmodel import PRESETS, QCNParams, load_params


def test_defaults_are_the_mib_defaults():
    # qcn-algorithm.md §3.1 (IEEE8021-CN-MIB).
    p = QCNParams.preset("802.1qau")
    assert p == QCNParams()
    assert (p.qeq, p.w, p.gd, p.min_dec, p.min_rate) == (26000, 2.0, 1 / 128, 0.5, 5e6)
    assert (p.bc_limit, p.timer, p.fr_th, p.r_ai, p.r_hai) == (150000, 15e-3, 5, 5e6, 50e6)
    assert p.fb_max == 130000  # §1.3: Qeq (2w+1)
    assert p.fb_full_scale == 63
    assert p.ps == pytest.approx(0.01)  # 1500 B / 150000 B


def test_every_preset_of_the_reference_exists():
    expected = {
        "802.1qau",
        "stanford-baseline",
        "netfpga-1g",
        "ibm-zurich",
        "teak-003",
        "teak-2007",
        "teak-2007-hai",
    }
    assert expected <= set(PRESETS)


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("stanford-baseline", "qeq", 33000),
        ("stanford-baseline", "min_rate", 10e6),
        ("netfpga-1g", "line_rate", 1e9),
        ("netfpga-1g", "r_ai", 0.5e6),
        ("netfpga-1g", "timer", 25e-3),
        ("ibm-zurich", "qeq", 375000),
        ("ibm-zurich", "fb_bits", 8),
        ("ibm-zurich", "r_ai", 12e6),
        ("ibm-zurich", "gd", 0.5 / 255),  # seed 000's common settings: "Gd = 0.5/255"
        ("teak-2007", "sampling", "fixed"),
        ("teak-2007", "ps_fixed", 0.012),
        ("teak-2007", "hai", False),
        ("teak-2007-hai", "hai", True),
        ("teak-2007-hai", "sampling", "table"),
    ],
)
def test_preset_values_match_the_seed_tables(name, field, value):
    # Values transcribed from qcn-algorithm.md §3.2.
    assert getattr(QCNParams.preset(name), field) == value


def test_sample_table_matches_reference():
    np.testing.assert_array_equal(
        QCNParams().sample_table(), [150000, 75000, 50000, 37500, 30000, 25000, 21500, 18500]
    )


def test_unit_strings_and_frozen():
    p = QCNParams(qeq="33KB", timer="25ms", line_rate="1Gbps", min_rate="0.5Mbps", gd="1/128")
    assert (p.qeq, p.timer, p.line_rate, p.min_rate, p.gd) == (33000, 25e-3, 1e9, 0.5e6, 1 / 128)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.qeq = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"qeq": -1}, "qeq"),
        ({"gd": 0}, "gd"),
        ({"ps_fixed": 1.5}, "ps_fixed"),
        ({"jitter": 1.0}, "jitter"),
        ({"quantiser": "floor62"}, "quantiser"),
        ({"fr_th": 2.5}, "fr_th"),
        ({"timer": "-1ms"}, "timer"),
        ({"min_rate": "20Gbps"}, "min_rate"),
        ({"hai": "maybe"}, "hai"),
    ],
)
def test_bad_values_name_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        QCNParams().replace(**changes)


def test_unknown_field_suggests():
    with pytest.raises(ValueError, match="did you mean 'qeq'"):
        QCNParams().replace(qeqq=1)


def test_toml_round_trip(tmp_path):
    p = QCNParams.preset("netfpga-1g").replace(w=8)
    path = tmp_path / "p.toml"
    p.to_toml(path)
    assert load_params(path) == p


def test_toml_preset_and_units(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('preset = "stanford-baseline"\n[qcn]\ntimer = "25ms"\nqeq = "40KB"\n')
    p = load_params(path)
    assert p == QCNParams.preset("stanford-baseline").replace(timer=0.025, qeq=40000)


def test_toml_errors_name_field_and_line(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('[qcn]\nqeq = "33KB"\ngd = 3\n')
    with pytest.raises(ValueError, match=r"line 3: gd"):
        load_params(path)
    path.write_text('[qcn]\nqeq = "33KB"\n\nqeqq = 4\n')
    with pytest.raises(ValueError, match=r"line 4: .*'qeqq'.*did you mean 'qeq'"):
        load_params(path)
    path.write_text('preset = "8021qau"\n')
    with pytest.raises(ValueError, match="line 1: preset"):
        load_params(path)


def test_example_files_are_the_presets():
    # examples/ ships one file per preset for `qcnmodel check` (issue 6); each must load back to
    # exactly its preset, with the [ranges] table left to the caller.
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples"
    files = sorted(root.glob("*.toml"))
    assert {f.stem for f in files} == set(PRESETS)
    for f in files:
        assert load_params(f, extra_tables=("ranges",)) == PRESETS[f.stem], f.name
        assert load_params(f) == PRESETS[f.stem], f.name  # [ranges] is part of the format
        with pytest.raises(ValueError, match=r"unknown table \[ranges\]"):
            load_params(f, extra_tables=())


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"timer": "5 parsecs"}, "timer: unknown time unit"),
        ({"qeq": "abc"}, "qeq: cannot parse"),
        ({"frame_size": "nan"}, "frame_size: value 'nan' is not a finite number"),
    ],
)
def test_an_unreadable_value_also_gives_the_allowed_range(changes, expected):
    from qcnmodel.params._validate import range_text
    from qcnmodel.params.qcn import _NUMERIC

    ((name, _),) = changes.items()
    _, lo, hi, lo_open, hi_open, unit, _ = _NUMERIC[name]
    with pytest.raises(ValueError) as err:
        QCNParams(**changes)
    assert expected in str(err.value)
    assert f"must be in {range_text(lo, hi, lo_open, hi_open, unit)}" in str(err.value)


def test_rates_sizes_and_times_have_finite_upper_bounds():
    # a line rate of 1e300 bit/s was accepted and overflowed in the models' arithmetic
    # ("(34, 'Numerical result out of range')", an OverflowError naming nothing)
    import qcnmodel as qm

    for cls, field, value, needle in (
        (qm.QCNParams, "line_rate", 1e300, "(0, 1e+13] bit/s"),
        (qm.QCNParams, "qeq", "2000GB", "(0, 1e+12] B"),
        (qm.QCNParams, "timer", 1e5, "(0, 10000] s"),
        (qm.DCQCNParams, "kmax", 1e300, "(0, 1e+12] B"),
    ):
        with pytest.raises(ValueError, match=rf"^{field}: .*{re.escape(needle)}"):
            cls(**{field: value})
    assert qm.QCNParams(line_rate="10Tbps").line_rate == 1e13  # the largest


def test_a_parameter_file_with_a_byte_order_mark_is_read(tmp_path):
    # Windows editors save UTF-8 with a BOM: "invalid TOML ... (at line 1, column 1)"
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[qcn]\nw = 4\n")
    assert load_params(path).w == 4.0
