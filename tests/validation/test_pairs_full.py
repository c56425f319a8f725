"""Matched pairs, the full grid (``-m slow``): every comparison of ``qcnmodel validate``.

Each case asserts the row verdict of the best model variant for that quantity. Cases where
model and simulation are known to disagree are ``xfail`` with the finding as the reason (see
the validation report's findings); they are not hidden by widening a tolerance.
"""

import pytest

from qcnmodel.validation import pairs as P
from qcnmodel.validation.suite import BOUNDARY_GRID

pytestmark = pytest.mark.slow

BEST = "reset=cnm+lag"
FULL = "reset=cnm+lag+enq+timer+hai"

UNFAIR = "finding: simulated per-flow rates stay unequal (0.77..1.38 x C/N over 1.5 s at N=10)"
N100 = (
    "finding: at N=100 the simulated queue oscillates (~17 ms, timer-synchronised cycles; "
    "per-flow CNM interval 1/(p R) ~ 24 ms exceeds the loop period), the fluid model does not"
)
PERIOD = "finding: nonlinear fluid limit-cycle periods differ from the simulated ones"
STAGE = (
    "finding: the fluid model's stage is memoryless ((1-p_c)^(F B) -> 1 as soon as CNMs stop):"
    " it skips the 5 fast-recovery cycles after a hotspot and recovers too early"
)


def _xf(reason):
    return pytest.mark.xfail(reason=reason, strict=True)  # an unexpected pass must be looked at


def _row(rows, variant, quantity):
    (r,) = [r for r in rows if r.model_variant == variant and r.quantity.startswith(quantity)]
    return r


@pytest.mark.parametrize(
    "n, rtt, quantity",
    [
        (1, 100e-6, "hot queue"),
        (10, 100e-6, "hot queue"),
        (10, 50e-6, "hot queue"),
        (100, 100e-6, "hot queue"),
        (1, 100e-6, "per-flow rate (mean"),
        (10, 100e-6, "per-flow rate (mean"),
        pytest.param(100, 100e-6, "per-flow rate (mean", marks=_xf(N100)),
        (1, 100e-6, "per-flow rate (worst"),
        pytest.param(10, 100e-6, "per-flow rate (worst", marks=_xf(UNFAIR)),
        pytest.param(100, 100e-6, "per-flow rate (worst", marks=_xf(UNFAIR)),
    ],
)
def test_equilibrium(n, rtt, quantity):
    assert _row(P.check_equilibrium(n, rtt, [BEST]), BEST, quantity).passed


@pytest.mark.parametrize(
    "n, rtt",
    [
        (1, 100e-6),
        (1, 500e-6),
        (10, 100e-6),
        pytest.param(10, 500e-6, marks=_xf("near the boundary: simulated bracket 519-566 us")),
        (10, 1000e-6),
        pytest.param(100, 100e-6, marks=_xf(N100)),
        (100, 500e-6),
    ],
)
def test_oscillation_class(n, rtt):
    assert _row(P.check_oscillation(n, rtt, [BEST]), BEST, "stable").passed


@pytest.mark.parametrize("n, rtt", [(1, 500e-6), (10, 1000e-6), (100, 500e-6)])
@_xf(PERIOD)
def test_oscillation_period(n, rtt):
    assert _row(P.check_oscillation(n, rtt, [BEST]), BEST, "oscillation period").passed


@pytest.mark.parametrize(
    "n",
    [
        pytest.param(1, marks=_xf("model 360 us vs simulated bracket [367, 400] us")),
        10,
        pytest.param(100, marks=_xf(N100)),
    ],
)
def test_boundary(n):
    rows = P.check_boundary(n, [BEST], BOUNDARY_GRID, bisect_steps=3, seeds=(0, 1, 2))
    assert _row(rows, BEST, "critical RTT").passed


@pytest.mark.parametrize(
    "args",
    [
        (1, 200e-6, 1e9, 0.2e9, (0.2, 1.2), 1.6, "netfpga-1g"),
        pytest.param((8, 200e-6, 1e9, 0.2e9, (0.2, 1.2), 1.6, "netfpga-1g"), marks=_xf(STAGE)),
        pytest.param((10, 20e-6, 10e9, 1e9, (0.1, 0.6), 1.0, "802.1qau"), marks=_xf(STAGE)),
    ],
)
def test_recovery(args):
    assert _row(P.check_recovery(*args, [FULL]), FULL, "recovery").passed


def test_rtt_classes_fair():
    # the class model predicts RTT-fair rates; the simulator agrees within seed noise
    (row,) = P.check_rtt_classes(seeds=(0, 1, 2, 3))
    assert row.passed
