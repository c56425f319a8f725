"""FrequencyLoop (a loop known by its exact frequency response) against DelayedLoop on
rational loops, where both are exact."""

import numpy as np
import pytest

from qcnmodel.analysis.freqloop import FrequencyLoop
from qcnmodel.analysis.loop import DelayedLoop
from qcnmodel.analysis.margins import margins_over_delay

LOOPS = [([2000.0, 1e6], [1.0, 300.0, 0.0]), ([5e5], [1.0, 80.0, 2000.0, 0.0])]


def _pair(num, den, tau):
    return DelayedLoop(num, den, tau), FrequencyLoop(
        lambda s: np.polyval(num, s) / np.polyval(den, s), tau
    )


@pytest.mark.parametrize("num, den", LOOPS)
def test_margins_match_the_rational_loop_over_delays(num, den):
    d, f = _pair(num, den, 0.0)
    taus = np.array([0.0, 1e-4, 4e-4, 1e-3, 3e-3])
    md, mf = margins_over_delay(d, taus), margins_over_delay(f, taus)
    assert np.allclose(md.phase_margin_deg, mf.phase_margin_deg, atol=1e-6)
    assert np.allclose(md.critical_delay_s, mf.critical_delay_s, rtol=1e-9)
    assert np.array_equal(md.stable, mf.stable)
    assert np.allclose(md.gain_margin, mf.gain_margin, rtol=1e-6)


def test_exactly_at_the_critical_delay_is_not_stable():
    d, f = _pair(*LOOPS[0], 0.0)
    crit = f.critical_delay()
    assert not f.with_delay(crit).margins().stable
    assert f.with_delay(0.999 * crit).margins().stable
    assert f.with_delay(0.999 * crit).nyquist_count().closed_loop_rhp_poles == 0
    assert f.with_delay(1.5 * crit).nyquist_count().closed_loop_rhp_poles == 2


def test_step_response_matches_a_high_order_pade_of_the_rational_loop():
    d, f = _pair(*LOOPS[0], 2e-4)
    sf = f.step_response()
    sd = d.step_response(T=sf.time, pade_order=14)
    # the Pade approximant converges (checked against order 10 by the analysis tests); the
    # Fourier inversion is tabulation-limited: within 2 % of the unit step
    assert np.max(np.abs(sf.output - sd.output)) < 0.02
    with pytest.raises(ValueError, match="unstable"):
        f.with_delay(5e-3).step_response()


def test_frequency_response_of_a_model_named_with_a_decimal_point():
    """python-control refuses '.' in system names; a loop named after RTT 41.6 us still
    gives its frequency response (and so its Bode plot)."""
    import numpy as np

    from qcnmodel.models.qcn import QCNFluidModel

    loop = QCNFluidModel(n_flows=28, rtt="41.6us").loop()
    assert "." in loop.name
    fr = loop.frequency_response(np.array([100.0, 1000.0]))
    assert np.all(np.isfinite(np.asarray(fr.fresp)))


def _notch_loop():
    """k/s times a notch at w0, placed midway between two grid points of the table (60 per
    decade, 3.9 % apart): |G| is 1.2 at both and dips to 0.75 between them."""
    w0 = 10 ** (3 + 0.5 / 60)
    z1, z2, k = 0.01, 0.02, 1.5 * w0
    num = np.polymul([k], [1.0, 2 * z1 * w0, w0**2])
    den = np.polymul([1.0, 0.0], [1.0, 2 * z2 * w0, w0**2])
    return num, den


def test_gain_crossovers_closer_than_the_grid_spacing_are_found():
    num, den = _notch_loop()
    # independent: sign changes of log|G| on a grid 10^4 times denser than the table's
    ws = np.logspace(2, 5, 2_000_001)
    lg = np.log(np.abs(np.polyval(num, 1j * ws) / np.polyval(den, 1j * ws)))
    expected = ws[np.nonzero(np.sign(lg[1:]) != np.sign(lg[:-1]))[0]]
    assert len(expected) == 3  # into the notch, out of it, and the integrator's crossover
    f = FrequencyLoop(lambda s: np.polyval(num, s) / np.polyval(den, s), 1e-4)
    w, g = f._table
    assert not np.any((w > expected[0] / 1.04) & (w < expected[1] * 1.04) & (np.abs(g) < 1))
    wc, _, direction = f._crossovers
    assert np.allclose(wc, expected, rtol=1e-5)  # the dense grid's own spacing
    assert list(direction) == [1, -1, 1]
    md, mf = DelayedLoop(num, den, 1e-4).margins(), f.margins()
    assert mf.phase_margin_deg == pytest.approx(md.phase_margin_deg, abs=1e-6)
    assert mf.critical_delay_s == pytest.approx(md.critical_delay_s, rel=1e-9)
    assert mf.stable == md.stable


def test_critical_rtt_of_a_frequency_loop_is_its_critical_delay():
    # a FrequencyLoop is callable (L(s)): it must not be taken for an rtt -> loop factory
    from qcnmodel.analysis.margins import critical_rtt

    num, den = LOOPS[0]
    d, f = _pair(num, den, 2e-4)
    assert critical_rtt(f) == pytest.approx(critical_rtt(d), rel=1e-9)
    assert critical_rtt(f) == pytest.approx(f.margins().critical_delay_s, rel=1e-12)
