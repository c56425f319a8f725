"""Property: the command line's value checks (:mod:`qcnmodel.cli.common`) return a value in
their documented range or raise a ValueError whose message starts with the field name; no
other exception, whatever the text typed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcnmodel import config
from qcnmodel.cli import common

_texts = st.one_of(
    st.text(max_size=16),
    st.builds(
        lambda n, u: f"{n}{u}",
        st.one_of(st.floats().map(repr), st.integers(-(10**30), 10**30).map(str)),
        st.sampled_from(["", "us", "ms", "s", "ps", "min", "Gbps", "bps", "Tbps", "%", "/7"]),
    ),
)


def _in_range(name, x):
    d = config.defaults
    if name == "rtt_value":
        return 0 <= x <= d["cli.max_rtt"]
    if name == "cli_time":
        return 0 <= x <= d["cli.max_time"]
    if name == "cli_rate":
        return 0 < x <= d["cli.max_rate"]
    if name == "flows_value":
        return isinstance(x, int) and 1 <= x <= d["cli.max_flows"]
    if name == "seed_value":
        return isinstance(x, int) and 0 <= x <= 2**63 - 1
    if name == "positive_int":
        return isinstance(x, int) and x >= 1
    if name == "jobs_value":
        return isinstance(x, int) and 1 <= x <= common.max_jobs()
    raise AssertionError(name)


CHECKS = ["rtt_value", "cli_time", "cli_rate", "flows_value", "seed_value", "positive_int",
          "jobs_value"]  # fmt: skip


@pytest.mark.parametrize("name", CHECKS)
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(text=_texts)
def test_value_checks_answer_in_range_or_name_the_field(name, text):
    check = getattr(common, name)
    try:
        x = check(text, "fld")
    except ValueError as exc:
        assert str(exc).startswith("fld"), str(exc)
    else:
        assert not (isinstance(x, float) and math.isnan(x))
        assert _in_range(name, x), (text, x)
