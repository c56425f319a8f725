"""The parameters the matched pairs ran (validation.envelope) and the note for a set beyond."""

import math

import pytest

from qcnmodel.params import QCNParams
from qcnmodel.validation.domain import point_validity, validity_notes
from qcnmodel.validation.envelope import envelope, untested_fields, untested_note
from qcnmodel.validation.suite import pair_cases


def test_the_envelope_is_read_off_the_plan():
    env = envelope("qcn")
    cases = [k[0] if isinstance(k, tuple) else k for g in pair_cases(False).values() for k in g]
    lines = {c.params.line_rate for c in cases}
    assert env["line_rate"] == ("range", min(lines), max(lines))
    assert env["w"] == ("range", min(c.params.w for c in cases), max(c.params.w for c in cases))
    assert env["capacity"][1:] == (min(c.capacity for c in cases), max(c.capacity for c in cases))
    assert env["sampling"] == ("set", tuple(sorted({c.params.sampling for c in cases})))
    # the QCN pairs ran 1500-B frames only
    assert env["frame_size"] == ("range", 1500.0, 1500.0)


def test_the_802_1qau_defaults_and_the_pairs_own_sets_are_inside():
    assert untested_fields("qcn", QCNParams()) == []
    for group in pair_cases(False).values():
        for k in group:
            case = k[0] if isinstance(k, tuple) else k
            assert untested_fields("qcn", case.params, case.capacity) == [], case


def test_fields_beyond_the_pairs_are_named_with_what_the_pairs_ran():
    p = QCNParams(line_rate=100e9, frame_size=9000, w=64.0, hai=False)
    got = untested_fields("qcn", p)
    assert "line_rate = 1e+11 bit/s (pairs: 1e+09 .. 4e+10 bit/s)" in got
    assert "frame_size = 9000 B (pairs: 1500 B)" in got
    assert "w = 64 (pairs: 2 .. 32)" in got
    assert "hai = False (pairs: True)" in got
    # the port's rate: the line rate unless given
    assert any(f.startswith("capacity = 1e+11 bit/s") for f in got)
    assert not any(f.startswith("capacity") for f in untested_fields("qcn", p, 5e9))


def test_fields_without_effect_are_not_named():
    # with the sampling table the fixed probability is inactive, and r_hai without HAI
    p = QCNParams(sampling="table", ps_fixed=0.5, hai=False, r_hai=1e9)
    got = untested_fields("qcn", p)
    assert not any(f.startswith(("ps_fixed", "r_hai")) for f in got)
    assert any(f.startswith("ps_fixed") for f in untested_fields("qcn", p.replace(
        sampling="fixed")))  # fmt: skip


def test_the_note_joins_the_validity_of_check_and_margins():
    p = QCNParams(w=64.0)
    note = untested_note("qcn", p)
    assert note.finding == "untested parameters" and note.applies
    assert "w = 64 (pairs: 2 .. 32)" in note.effect
    assert untested_note("qcn", QCNParams()) is None
    notes = validity_notes("qcn", "packet", (10, 10), (10e-6, 100e-6), {10: 5e-4}, params=p)
    assert [n.finding for n in notes if n.applies] == ["untested parameters"]
    pts = point_validity("qcn", "packet", 10, 100e-6, 5e-4, params=p, capacity=5e9)
    assert [v["finding"] for v in pts] == ["untested parameters"]
    # no parameters given: no note (the regions alone, as before)
    assert point_validity("qcn", "packet", 10, 100e-6, 5e-4) == []


def test_a_model_without_pairs_has_no_envelope():
    assert envelope("fopdt") == {} and untested_fields("fopdt", QCNParams(w=64.0)) == []


def test_dcqcn_envelope_is_its_pairs_parameter_sets():
    from qcnmodel.params.dcqcn import DCQCNParams

    # the pairs ran the CoNEXT 2016 set at 40 Gb/s, and at 10 and 100 Gb/s and with 4 KB frames
    assert untested_fields("dcqcn", DCQCNParams()) == []
    assert untested_fields("dcqcn", DCQCNParams(line_rate=100e9)) == []
    got = untested_fields("dcqcn", DCQCNParams(line_rate=400e9))
    assert any(f.startswith("line_rate = 4e+11 bit/s (pairs: 1e+10 .. 1e+11") for f in got)
    got = untested_fields("dcqcn", DCQCNParams(packet_size=9000.0))
    assert any(f.startswith("packet_size = 9000") for f in got)
    assert any(f.startswith("kmax") for f in untested_fields("dcqcn", DCQCNParams(kmax=4e5)))


@pytest.mark.parametrize("value", [math.nan, math.inf, "abc"])
def test_a_value_that_is_no_number_is_outside(value):
    from qcnmodel.validation.envelope import _covers

    assert not _covers(("range", 1.0, 2.0), value)


def test_dcqcn_points_beyond_the_pairs_grid_are_named():
    """The DCQCN pairs run one grid (N = 2-64, loop delay 25-100 us, dcqcn_pairs.BOUNDARY_NS
    and TAUS): a point or range beyond it gets the untested-operating-point note, naming the
    part outside; QCN's pairs are scattered, and its domain regions speak instead."""
    from qcnmodel.validation.domain import point_validity, validity_notes
    from qcnmodel.validation.envelope import UNREACHED, unreached_note

    assert unreached_note("dcqcn", (2, 64), (25e-6, 100e-6)) is None
    far = unreached_note("dcqcn", (1, 10), (50e-6, 500e-6))
    assert far.applies and far.finding == UNREACHED
    assert "N = 1 .. 10 (pairs: 2 .. 64)" in far.effect
    assert "RTT 50 .. 500 us (pairs: 25 .. 100 us)" in far.effect
    said = "only the critical RTT (the verdict) is compared with packets, on delays up to 1600 us"
    assert said in far.effect
    assert "critical RTT" not in unreached_note("dcqcn", (1, 10), (50e-6, 100e-6)).effect
    assert unreached_note("qcn", (1, 1000), (1e-9, 1.0)) is None
    at = point_validity("dcqcn", "packet", 2, 500e-6)
    assert [v["finding"] for v in at].count(UNREACHED) == 1
    inside = validity_notes("dcqcn", "packet", (10, 10), (50e-6, 50e-6))
    assert not any(n.finding == UNREACHED for n in inside)
