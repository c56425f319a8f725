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


def _long_delay_loop():
    # L = 2/(s (s+1)) e^{-s tau}: two closed-loop roots cross into the right half plane at every
    # tau_k = (PM0 + 2 pi k)/w_c, so the count of unstable roots at a long delay is known
    return qm.DelayedLoop([2.0], [1.0, 1.0, 0.0], delay=0.0)


def test_margins_at_a_long_delay_use_the_delay_sweep(monkeypatch):
    from qcnmodel import config
    from qcnmodel.analysis.margins import nyquist_count

    loop = _long_delay_loop()
    short = loop.with_delay(0.5)  # a contour of a few hundred points: both counts agree
    assert short.margins().stable == bool(qm.margins_over_delay(loop, [0.5]).stable[0])
    monkeypatch.setitem(config.defaults, "analysis.nyquist_max_points", 1000)
    far = loop.with_delay(500.0)  # w*tau turns ~100 times: past 16 x 1000 contour points
    m = far.margins()
    sweep = qm.margins_over_delay(loop, [500.0])
    assert m.stable is False and bool(sweep.stable[0]) is False
    assert m.critical_delay_s == sweep.critical_delay_s[0]
    try:
        nyquist_count(far)
    except ValueError as exc:  # a bounded answer naming the delay, not a runaway contour
        assert str(exc).startswith("delay: 500 s is too long")
    else:
        raise AssertionError("the contour of a 500-s delay was traced past its point limit")


def test_fopdt_rtt_and_flows_are_bounded():
    import pytest

    with pytest.raises(ValueError, match=r"rtt: must be in \[0, 1000\] s \(models.max_rtt\)"):
        qm.FOPDTModel(qm.QCNParams(), rtt=1e4)
    with pytest.raises(ValueError, match=r"n_flows: .*models.max_flows"):
        qm.FOPDTModel(qm.QCNParams(), n_flows=10**10)
    assert qm.FOPDTModel(qm.QCNParams(), rtt="1ms").rtt == 1e-3


def test_fopdt_without_a_finite_loop_names_its_parameters():
    # qeq = 1e-297 B overflowed the loop's coefficients: "num must contain finite numbers",
    # with a RuntimeWarning on stderr
    import warnings

    import pytest

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"no finite loop: .* qeq = 1e-297 B"):
            qm.FOPDTModel(qm.QCNParams(qeq=1e-297)).loop()


def test_delayed_loop_methods_refuse_arguments_outside_their_domain():
    # T = -1 returned outputs of 1e30 and more, pade(80) a bare ZeroDivisionError, a negative
    # or NaN frequency a response without a word
    import pytest

    loop = qm.FOPDTModel(qm.QCNParams(), rtt="100us", n_flows=10).loop()
    for call, needle in (
        (lambda: loop.step_response(T=-1), "T: the end time must be > 0 s"),
        (lambda: loop.step_response(T=[0.0, 2e-3, 1e-3]), "T: time points must increase"),
        (lambda: loop.step_response(pade_order=80), "pade_order: a Pade order must be"),
        (lambda: loop.pade(2.5), r"order: a Pade order must be a whole number in \[0, 40\]"),
        (lambda: loop.frequency_response([-1.0, 1.0]), "omega: values must be finite and >= 0"),
        (lambda: loop.frequency_response([float("nan")]), "omega: values must be finite"),
    ):
        with pytest.raises(ValueError, match=needle):
            call()
    assert loop.step_response(T="2ms").time[-1] == pytest.approx(2e-3)
