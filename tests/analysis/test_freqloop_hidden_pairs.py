"""A pair of gain crossovers between two points of a FrequencyLoop's table is not lost.

The loop is an integrator with a narrow notch (``G(s) = K/s * (s^2 + 2 z1 w0 s + w0^2) /
(s^2 + 2 z2 w0 s + w0^2)``): the notch takes ``|G|`` below 1 and back within 0.8 % of
frequency, against the table's 3.9 % spacing (60 points per decade), and the grid point
nearest the notch stays above 1, so the table shows no sign change there, only a local
minimum of ``log|G|``. The expected crossovers come from an independent dense search
(400 000 points over three decades and ``brentq`` on ``log|G|``), not from the code under
test.
"""

import numpy as np
import pytest
from scipy.optimize import brentq

from qcnmodel.analysis.freqloop import FrequencyLoop

W0, Z2 = 1004.0, 0.004  # the notch's centre (rad/s) and its poles' damping
Z1 = 0.7 * Z2  # its zeros' damping: |notch(j w0)| = 0.7
K = 1170.6  # the integrator's gain: log|G| = +0.010 at the grid point 1000 rad/s


def g(s):
    s = np.asarray(s, complex)
    return K / s * (s**2 + 2 * Z1 * W0 * s + W0**2) / (s**2 + 2 * Z2 * W0 * s + W0**2)


def dense_crossovers() -> list[float]:
    w = np.logspace(2, 5, 400_000)
    lm = np.log(np.abs(g(1j * w)))
    idx = np.nonzero(np.sign(lm[1:]) != np.sign(lm[:-1]))[0]
    return [brentq(lambda x: np.log(abs(g(1j * x))), w[j], w[j + 1], rtol=1e-13) for j in idx]


def test_the_table_alone_shows_one_crossover_only():
    # the premise: no sign change of log|G| on the table near the notch
    w, gt = FrequencyLoop(g, 0.0, "notch")._table
    lm = np.log(np.abs(gt))
    assert np.count_nonzero(np.sign(lm[1:]) != np.sign(lm[:-1])) == 1
    assert lm[np.argmin(np.abs(w - 1000.0))] > 0


def test_the_pair_inside_one_grid_interval_is_found():
    expected = dense_crossovers()
    assert len(expected) == 3  # into the notch, out of it, and the integrator's crossover
    wc, pm0, direction = FrequencyLoop(g, 0.0, "notch")._crossovers
    # brentq's rtol=1e-12 on both sides: agreement to 1e-9 relative is far inside it
    assert wc == pytest.approx(expected, rel=1e-9)
    assert list(direction) == [1, -1, 1]  # |G| falls into the notch, rises out, falls
    # the phase there: -90 deg of the integrator plus the notch's own phase, from numpy
    phase = np.angle(g(1j * np.array(expected)))
    assert pm0 == pytest.approx(np.remainder(phase + 2 * np.pi, 2 * np.pi) - np.pi, abs=1e-9)
