"""The crossings of a FrequencyLoop are refined from its table: the tolerance of brentq
(rtol 1e-12) in a few vectorised evaluations of G, not one bracket search per crossing."""

import numpy as np
from scipy.optimize import brentq

from qcnmodel.analysis.freqloop import FrequencyLoop

# k/s with a lag and a notch: three gain crossovers (the notch's pair and the integrator's)
W0 = 10 ** (3 + 0.5 / 60)
NUM = np.polymul([1.5 * W0], [1.0, 2 * 0.01 * W0, W0**2])
DEN = np.polymul([1.0, 0.0], [1.0, 2 * 0.02 * W0, W0**2])


class _Counted:
    """``G`` of a rational loop (default NUM/DEN), counting its calls once the table is
    made."""

    def __init__(self, num=NUM, den=DEN):
        self.calls, self.num, self.den = 0, num, den

    def __call__(self, s):
        self.calls += 1
        return np.polyval(self.num, s) / np.polyval(self.den, s)


def _loop(delay=1e-4, *rational):
    g = _Counted(*rational)
    loop = FrequencyLoop(g, delay)
    loop._table  # noqa: B018 (tabulated before counting)
    g.calls = 0
    return loop, g


def _brentq_crossovers():
    def log_gain(w):
        return np.log(np.abs(np.polyval(NUM, 1j * w) / np.polyval(DEN, 1j * w)))

    loop, _ = _loop()
    w, g = loop._table
    lm = np.log(np.abs(g))
    idx = np.nonzero(np.sign(lm[1:]) != np.sign(lm[:-1]))[0]
    pairs = [(a, b) for a, b, *_ in loop._hidden_pairs(w, lm)]
    return sorted(brentq(log_gain, a, b, rtol=1e-12) for a, b in
                  [(w[i], w[i + 1]) for i in idx] + pairs)  # fmt: skip


def test_gain_crossovers_are_brentqs_to_its_tolerance():
    loop, _ = _loop()
    wc, pm0, direction = loop._crossovers
    ref = np.array(_brentq_crossovers())
    assert len(wc) == 3 and list(direction) == [1, -1, 1]
    # both within brentq's tolerance xtol + rtol |w| (2e-12 + 1e-12 w) of a root
    np.testing.assert_allclose(wc, ref, rtol=2e-12, atol=4e-12)
    exact = np.angle(np.polyval(NUM, 1j * wc) / np.polyval(DEN, 1j * wc))
    np.testing.assert_allclose(pm0, np.remainder(exact + 2 * np.pi, 2 * np.pi) - np.pi,
                               atol=1e-12)  # fmt: skip


#: a loop with one smooth gain crossover (near 98 rad/s) and no pair between two nodes:
#: k (s/z + 1)^2 / (s (s/p1 + 1)^2 (s/p2 + 1))
SMOOTH = (np.polymul([2e3], np.polymul([1 / 200.0, 1.0], [1 / 200.0, 1.0])),
          np.polymul([1.0, 0.0], np.polymul(np.polymul([1 / 20.0, 1.0], [1 / 20.0, 1.0]),
                                            [1 / 1e5, 1.0])))  # fmt: skip


def test_gain_crossovers_take_a_few_evaluations():
    loop, g = _loop(1e-4, *SMOOTH)
    wc, _, _ = loop._crossovers
    assert len(wc) == 1
    # from the table's interpolation, one call per iteration, the phase there from the last
    # one (brentq from the bracket: 7 calls, then one more for the phase); every crossover
    # of a loop is refined in the same calls
    assert g.calls <= 5


def test_phase_crossovers_of_many_delays_take_a_few_evaluations():
    loop, g = _loop(1e-4, *SMOOTH)
    loop._crossovers  # noqa: B018
    g.calls = 0
    taus = np.geomspace(1e-5, 1e-2, 50)
    m = loop.margins_over_delay(taus)
    assert g.calls <= 5  # the phase crossovers of all 50 delays at once (Illinois: 7)
    wpc = np.asarray(m.phase_crossover_rad_s)
    assert np.all(np.isfinite(wpc))
    gw = np.polyval(SMOOTH[0], 1j * wpc) / np.polyval(SMOOTH[1], 1j * wpc)
    # the phase at each crossover is -180 deg (mod 360) to the tolerance, rtol 1e-12 in w
    # times the phase's slope in w (tau + |d arg G / dw|, below 0.1 s here): 1e-12 rad and
    # rounding
    err = np.remainder(np.angle(gw) - wpc * taus + np.pi, 2 * np.pi)
    err = np.minimum(err, 2 * np.pi - err)
    assert np.all(err < 1e-9)
    np.testing.assert_allclose(np.asarray(m.gain_margin), 1 / np.abs(gw), rtol=1e-12)
