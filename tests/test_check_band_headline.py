"""The words ``qcnmodel check`` gives a flow count that its stable band judges.

Where the runs of the model's trajectories cycle at the smallest RTTs (many flows with their
timers in step) and are stable in a band above, a point is stable inside the band only: the
headline's rule, the worst point's explanation and the verdict line must say so. The results
are constructed (the band of the 802.1Qau defaults at N = 40, 10 Gb/s, 269.6-505.6 us, as
``check --flows 40`` finds it), so the text alone is under test.
"""

import dataclasses
import math

from qcnmodel.studies.check import CheckRanges, CheckResult
from qcnmodel.studies.check_text import render
from qcnmodel.studies.verdict import headline

BAND = (269.6e-6, 505.6e-6)


def _result(verdict: str, rtt: float, rtts=(300e-6, 400e-6), bands=None) -> tuple:
    ranges = CheckRanges(rtt=rtts, flows=(40, 40))
    r = CheckResult(verdict=verdict, pm_threshold_deg=30.0, worst_phase_margin_deg=-20.8,
                    worst_gain_margin_db=-3.0, worst_delay_margin_s=math.nan,
                    worst_point={"n_flows": 40, "rtt_s": rtt},
                    critical_rtt_s={40: math.nan}, model_label="M", judged_flows=(40,),
                    stable_bands={40: BAND} if bands is None else bands)  # fmt: skip
    return dataclasses.replace(r, headline=headline(r, ranges)), ranges


def _headline(r, ranges) -> str:
    """The headline as ``check`` prints it (the paragraph after the file's line)."""
    return render(r, ranges, "p.toml").split("\n")[2]


def test_a_stable_headline_at_a_banded_count_names_the_band_and_its_binding_bound():
    r, ranges = _result("stable", 300e-6)
    h = _headline(r, ranges)
    assert "or inside its stable band" in h
    assert "stable from 269.6 to 505.6 us, a band above the cycling at small RTTs" in h
    # 300 us is nearer 269.6 than 505.6 us (in ratio): the start binds
    assert "the band's start binds, 30.4 us below this point" in h
    assert "oscillate from the smallest RTT they are run at" not in h
    text = render(r, ranges, "p.toml")
    assert "verdict: STABLE (stable needs every point below its critical RTT, or inside its " \
           "stable band)" in text  # fmt: skip


def test_the_band_end_binds_a_point_near_it():
    r, ranges = _result("stable", 480e-6)
    assert "the band's end binds, 25.6 us above this point" in _headline(r, ranges)


def test_an_unstable_point_below_or_above_the_band_says_which_side():
    r, ranges = _result("unstable", 100e-6, rtts=(100e-6, 400e-6))
    h = _headline(r, ranges)
    assert ("unstable: below the band where its runs are stable (from 269.6 to 505.6 us)"
            in h)  # fmt: skip
    assert "or inside its stable band" in h
    r, ranges = _result("unstable", 600e-6, rtts=(300e-6, 600e-6))
    assert "unstable: at or above the end of the band where its runs are stable (from " \
           "269.6 to 505.6 us)" in _headline(r, ranges)  # fmt: skip


def test_a_count_without_band_keeps_its_words():
    r, ranges = _result("unstable", 300e-6, bands={})
    assert _headline(r, ranges) == r.headline
    assert "no critical RTT: their runs are unstable" in r.headline
    assert "stable band" not in render(r, ranges, "p.toml").split("verdict:")[1].split("\n")[0]
