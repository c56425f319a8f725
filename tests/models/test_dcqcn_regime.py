"""The DCQCN fluid model's operating regime: CNP shot noise, cold start and the regime classes.

Expected values come from the definitions (exact identities, limits) or from physics that the
code does not encode (the variance grows as the margin shrinks); none is produced by the code
under test.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from qcnmodel.models.dcqcn import DCQCNFluidModel, DCQCNParams
from qcnmodel.models.dcqcn_regime import (
    ESCAPE_MIN,
    acf_peak,
    cold_start,
    fluid_trace,
    queue_noise,
    regime,
)

P = DCQCNParams()
QREF = 102.5e3


def test_queue_noise_grows_as_the_margin_shrinks():
    sds = []
    for rtt in (10e-6, 25e-6, 50e-6):
        nz = queue_noise(DCQCNFluidModel(P, rtt=rtt, n_flows=2))
        sds.append(nz["std"])
        assert nz["acf"][0] == pytest.approx(1.0, rel=1e-9)
        assert nz["underflow"] == pytest.approx(norm.cdf((1.0e3 - nz["q_star"]) / nz["std"]))
    assert sds[0] < sds[1] < sds[2]


def test_queue_noise_cnp_rate_is_the_models():
    m = DCQCNFluidModel(P, rtt=25e-6, n_flows=4)
    fp = m.fixed_point()
    r = fp["rate_current"] / (8 * P.packet_size)
    assert queue_noise(m)["cnp_rate"] == pytest.approx(
        (1 - (1 - fp["p"]) ** (P.tau * r)) / P.tau, rel=1e-9
    )


def test_queue_noise_refuses_an_unstable_point():
    with pytest.raises(ValueError, match="unstable"):
        queue_noise(DCQCNFluidModel(P, rtt=100e-6, n_flows=4))


def test_acf_peak_reads_like_the_detector():
    lags = np.arange(0, 10e-3, 1e-5)
    acf = np.cos(2 * math.pi * lags / 2e-3) * np.exp(-lags / 5e-3)
    peak, lag = acf_peak(lags, acf)
    w, tc = 2 * math.pi / 2e-3, 5e-3
    t_star = (2 * math.pi - math.atan(1 / (w * tc))) / w  # d/dt [cos(wt) e^(-t/tc)] = 0
    assert lag == pytest.approx(t_star, abs=1e-5)
    assert peak == pytest.approx(math.cos(w * t_star) * math.exp(-t_star / tc), rel=1e-4)
    assert acf_peak(lags, np.exp(-lags / 1e-3)) == (0.0, pytest.approx(math.nan, nan_ok=True))


@pytest.mark.parametrize(
    "n, rtt, kind, oscillates",
    [
        (2, 25e-6, "stable", False),  # PM 14 deg, the cold start converges
        (4, 100e-6, "unstable", True),  # PM -5 deg
        (10, 25e-6, "bistable", True),  # PM 5.5 deg, a cycle through Kmax coexists
        (64, 50e-6, "no_equilibrium", True),  # p* = 0.059 > pmax
    ],
)
def test_regime_classes(n, rtt, kind, oscillates):
    r = regime(DCQCNFluidModel(P, rtt=rtt, n_flows=n), QREF)
    assert r.kind == kind and r.oscillates == oscillates
    if kind == "bistable":
        assert r.escape and r.noise["above_kmax"] >= ESCAPE_MIN
        assert r.cycle["above_kmax"] > 0.01 and r.cycle["underflow"] > 0.01
    if not oscillates:  # the prediction is the Gaussian noise's, centred on the fixed point
        assert r.stats["mean"] == pytest.approx(r.noise["q_star"])
        assert r.stats["std"] == r.noise["std"]


def test_cold_start_without_equilibrium_uses_the_extended_ramp_alpha():
    m = DCQCNFluidModel(P, n_flows=64)
    x0 = cold_start(m)
    assert x0["alpha"] == m.replace(ramp="extend").fixed_point()["alpha"]
    assert x0["q"] == 0.0 and x0["rate_current"] == P.capacity / 64


def test_fluid_trace_bins_like_the_simulator():
    # bin means over (t - dt, t]: an empty queue with every flow at C/N departs at C
    m = DCQCNFluidModel(P, rtt=25e-6, n_flows=2)
    t, q, thr = fluid_trace(m, 1e-3, 10e-6, cold_start(m))
    assert len(t) == len(q) == len(thr) == 100 and t[0] == pytest.approx(10e-6)
    assert thr[0] == pytest.approx(P.capacity, rel=1e-12)
    assert np.all(thr <= P.capacity * (1 + 1e-12))
