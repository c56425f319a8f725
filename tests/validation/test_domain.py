"""The validity domain: regions where the validation found model and packets apart."""

import math

from qcnmodel.validation.domain import DOMAIN, Region, validity_notes
from qcnmodel.validation.findings import FINDINGS


def _applying(notes):
    return {(n.finding, n.where) for n in notes if n.applies}


def test_every_region_names_a_known_finding():
    for regions in DOMAIN.values():
        for r in regions:
            assert r.finding in FINDINGS, r.finding


def test_the_default_check_ranges_touch_the_single_flow_and_large_rtt_regions():
    notes = validity_notes("qcn", "packet", (1, 100), (2e-6, 1e-3), {1: 5.7e-4, 100: 1e-2})
    got = _applying(notes)
    assert ("single flow", "one flow per congestion point") in got
    # a few flows: the model's trajectories agree with the packets there (N = 3: 474 vs
    # 476-519 us), so no region (the linearisation's disagreement is not the model's)
    assert not any(f == "few flows" for f, _ in got)
    assert ("tens of flows", "N = 11 to 49 flows per congestion point") in got
    assert ("slow breakdown", "RTT >= 1 ms") in got
    assert ("10 Gb/s many flows", "N >= 50 flows per congestion point") in got
    # the critical-RTT band is not reached at N = 100 (1 ms < 0.75 x 10 ms)
    assert ("early large cycles", "RTT from 0.75 x to 1 x the critical RTT") not in got


def test_ranges_inside_the_domain_have_no_applying_region():
    notes = validity_notes("qcn", "packet", (10, 10), (10e-6, 100e-6), {10: 5e-4})
    assert _applying(notes) == set()
    assert len(notes) == len(DOMAIN[("qcn", "packet")])  # every region is listed


def test_critical_rtt_band_is_judged_per_flow_count():
    band = "RTT from 0.75 x to 1 x the critical RTT"
    # 0.75 x 500 us = 375 us: a range up to 380 us reaches it, one up to 370 us does not
    hit = validity_notes("qcn", "packet", (10, 10), (100e-6, 380e-6), {10: 5e-4})
    miss = validity_notes("qcn", "packet", (10, 10), (100e-6, 370e-6), {10: 5e-4})
    assert ("early large cycles", band) in _applying(hit)
    assert ("early large cycles", band) not in _applying(miss)
    # a critical RTT for an N outside the checked range does not count
    other = validity_notes("qcn", "packet", (10, 10), (100e-6, 380e-6), {20: 5e-4})
    assert ("early large cycles", band) not in _applying(other)
    # no critical RTT (stable everywhere): the band is empty
    inf = validity_notes("qcn", "packet", (10, 10), (100e-6, 380e-6), {10: math.inf})
    assert ("early large cycles", band) not in _applying(inf)


def test_fixed_sampling_region_only_with_fixed_sampling():
    from qcnmodel.validation.domain import Region

    region = Region("x", "fixed sampling probability", "", fixed_sampling=True)
    assert region.applies((10, 10), (10e-6, 1e-4), fixed_sampling=True)
    assert not region.applies((10, 10), (10e-6, 1e-4), fixed_sampling=False)
    either = Region("y", "every operating point", "")
    assert either.applies((10, 10), (10e-6, 1e-4), fixed_sampling=False)
    # the default model agrees with fixed 1 % and 10 % sampling (N = 1, 10): no region
    fixed = validity_notes("qcn", "packet", (10, 10), (10e-6, 1e-4), fixed_sampling=True)
    assert not any(n.applies for n in fixed)


def test_unvalidated_configuration_says_so():
    (note,) = validity_notes("qcn", "no-such-variant", (1, 2), (1e-6, 1e-5))
    assert note.applies and note.finding == "not validated"


def test_dcqcn_regions_by_flow_count():
    got = {n.finding for n in validity_notes("dcqcn", "cnp-lag+stage-memory", (8, 16),
                                             (25e-6, 1e-4)) if n.applies}  # fmt: skip
    assert got == set()
    got = {n.finding for n in validity_notes("dcqcn", "cnp-lag+stage-memory", (2, 64),
                                             (25e-6, 1e-4)) if n.applies}  # fmt: skip
    assert got == {"dcqcn noise coherence", "dcqcn cliff cycle"}


def test_region_bounds_are_inclusive():
    r = Region("single flow", "N <= 2", "x", n_max=2)
    assert r.applies((2, 5), (1e-6, 1e-3))
    assert not r.applies((3, 5), (1e-6, 1e-3))
    assert validity_notes("qcn", "packet", (1, 1), (1e-6, 1e-5))[0].to_dict()["applies"]


def test_dcqcn_default_names_agree():
    from qcnmodel.validation.dcqcn_pairs import DEFAULT_VARIANT
    from qcnmodel.validation.findings import DCQCN_DEFAULT

    assert DCQCN_DEFAULT == DEFAULT_VARIANT
    assert ("dcqcn", DEFAULT_VARIANT) in DOMAIN


def test_point_validity_uses_the_critical_rtt_band():
    from qcnmodel.validation.domain import point_validity

    inside = point_validity("qcn", "packet", 10, 400e-6, critical_rtt=500e-6)
    assert [v["finding"] for v in inside] == ["early large cycles"]
    assert point_validity("qcn", "packet", 10, 300e-6, critical_rtt=500e-6) == []
    assert point_validity("qcn", "packet", 10, 400e-6) == []  # no critical RTT known
