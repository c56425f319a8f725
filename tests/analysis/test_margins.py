"""Margins at the stability boundary."""

import qcnmodel as qm


def test_exactly_critical_delay_is_not_stable():
    # At the critical delay the contour passes through -1: a closed-loop pole on the imaginary
    # axis, i.e. the stability boundary. Reported as not (asymptotically) stable, no exception.
    model = qm.QCNFluidModel(qm.QCNParams(), rtt=1e-4, n_flows=10, capacity=5e9)
    crit = model.loop().margins().critical_delay_s
    m = model.replace(rtt=crit).loop().margins()
    assert not m.stable
    assert abs(m.phase_margin_deg) < 1e-6  # PM is zero there up to rounding
    assert model.replace(rtt=0.999 * crit).loop().margins().stable
