"""The pytest plugin's run cache holds one run per simulation, however its times are
written."""

from qcnmodel.testing._sim import cache_key


def test_one_duration_written_three_ways_is_one_key():
    keys = {cache_key("og-hotspot", {"duration": d}) for d in ("1ms", "1000us", 0.001, "1 ms")}
    assert len(keys) == 1


def test_different_runs_keep_different_keys():
    base = cache_key("og-hotspot", {"duration": "1ms"})
    assert cache_key("og-hotspot", {"duration": "2ms"}) != base
    assert cache_key("og-hotspot", {"duration": "1ms", "seed": 1}) != base
    assert cache_key("og-hotspot", {"duration": "1ms", "bin_width": "10us"}) != base
    assert cache_key("og-hotspot", {"duration": "1ms", "bin_width": "10us"}) == cache_key(
        "og-hotspot", {"duration": 0.001, "bin_width": 1e-5}
    )


def test_a_bad_time_still_makes_a_key_and_is_left_to_simulate():
    assert cache_key("og-hotspot", {"duration": "soon"}) != cache_key("og-hotspot", {})
