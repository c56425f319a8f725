"""Stability maps, critical RTT and plots (Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from qcnmodel.analysis import plot as plotting  # noqa: E402
from qcnmodel.analysis.loop import DelayedLoop  # noqa: E402
from qcnmodel.analysis.margins import critical_rtt  # noqa: E402
from qcnmodel.analysis.stability import critical_rtt_curve, rtt_offset, stability_map  # noqa: E402
from qcnmodel.models.fopdt import FOPDTModel  # noqa: E402

RTTS = np.logspace(-6, -3, 25)
NS = np.array([1, 2, 5, 10, 20, 50, 100])


@pytest.fixture(scope="module")
def fopdt_map():
    return stability_map(FOPDTModel(), x="rtt", x_values=RTTS, y="n_flows", y_values=NS)


def test_map_shape_coords_attrs(fopdt_map):
    ds = fopdt_map
    for v in ("phase_margin_deg", "gain_margin_db", "delay_margin_s", "crossover_rad_s", "stable"):
        assert ds[v].dims == ("n_flows", "rtt")
        assert ds[v].shape == (NS.size, RTTS.size)
    np.testing.assert_array_equal(ds["rtt"].values, RTTS)
    np.testing.assert_array_equal(ds["n_flows"].values, NS)
    assert ds.attrs["model"] == "FOPDT[first-order]"
    assert ds.attrs["fast_path"] == 1
    assert "qeq" in ds.attrs["params_toml"]
    assert ds.attrs["qcnmodel_version"]


def test_map_monotone_in_rtt_and_matches_pointwise(fopdt_map):
    pm = fopdt_map["phase_margin_deg"].values
    # one flow at the line rate cannot congest the port: an open loop, PM infinite
    assert NS[0] == 1 and np.all(np.isposinf(pm[0]))
    assert np.all(np.diff(pm[1:], axis=1) < 0)  # PM0 - w_c tau: strictly decreasing in RTT
    # stable exactly where PM > 0 for this single-crossover loop
    np.testing.assert_array_equal(fopdt_map["stable"].values, pm > 0)
    # fast path (one loop per row) == one loop per grid point
    for i, n in enumerate(NS[[0, 3, 6]]):
        for j in (0, 12, 24):
            m = FOPDTModel(rtt=RTTS[j], n_flows=int(n)).loop().margins()
            row = [0, 3, 6][i]
            # same formulas, evaluated once vs per point: rounding only
            assert pm[row, j] == pytest.approx(m.phase_margin_deg, rel=1e-12)
            assert bool(fopdt_map["stable"].values[row, j]) == m.stable  # vs Nyquist


def test_critical_rtt_consistency(fopdt_map):
    crit = fopdt_map["critical_rtt"].values
    curve = critical_rtt_curve(FOPDTModel(), "n_flows", NS)
    np.testing.assert_allclose(curve.values, crit, rtol=1e-12)  # same closed-form path
    # the generic bracket + brentq path must find the same PM = 0 point
    for n in (2, 10):  # (N = 1 at the line rate does not congest the port: no crossover)
        model = FOPDTModel(n_flows=n)
        generic = critical_rtt(_NoFastPath(model), rtt_min=1e-7, rtt_max=1e-2)
        # brentq xtol 1e-12 s + rtol 1e-10 on a smooth PM(rtt)
        assert generic == pytest.approx(critical_rtt(model.loop()), rel=1e-8)
    assert np.isposinf(crit[0])  # one flow at the line rate: an open loop
    assert np.all(np.diff(crit[1:]) > 0)  # more flows -> smaller K -> larger critical RTT


class _NoFastPath:
    """Wrap a model so stability code cannot use the delay fast path."""

    def __init__(self, model):
        self.model = model
        self.name = "wrapped"

    def replace(self, **kw):
        return _NoFastPath(self.model.replace(**kw))

    def loop(self):
        lp = self.model.loop()
        # num and den scaled by an RTT-dependent factor: same L(s), but the
        # coefficients now depend on the RTT, which disables the fast path
        f = 1.0 + self.model.rtt
        return DelayedLoop(lp.num * f, lp.den * f, lp.delay, "wrapped")


def test_generic_map_path_and_other_axes():
    wrapped = _NoFastPath(FOPDTModel())
    assert rtt_offset(wrapped) is None
    ds = stability_map(wrapped, x="rtt", x_values=RTTS[::6], y="n_flows", y_values=[5, 50])
    fast = stability_map(FOPDTModel(), x="rtt", x_values=RTTS[::6], y="n_flows", y_values=[5, 50])
    assert ds.attrs["fast_path"] == 0
    # same L(s), computed per point instead of per row: rounding only
    np.testing.assert_allclose(ds["phase_margin_deg"], fast["phase_margin_deg"], rtol=1e-10)
    np.testing.assert_array_equal(ds["stable"], fast["stable"])
    np.testing.assert_allclose(ds["critical_rtt"], fast["critical_rtt"], rtol=1e-8)
    for y, vals in (("w", [1.0, 2.0, 8.0]), ("ps", [0.005, 0.01, 0.05])):
        d = stability_map(FOPDTModel(), x="rtt", x_values=RTTS[::6], y=y, y_values=vals)
        assert d["phase_margin_deg"].dims == (y, "rtt")
        assert np.all(np.isfinite(d["phase_margin_deg"].values))
    d = stability_map(FOPDTModel(), x="n_flows", x_values=[1, 10], y="w", y_values=[2.0, 4.0])
    assert d["phase_margin_deg"].dims == ("w", "n_flows")
    assert "critical_rtt" not in d


def test_lead_weight_helps():
    """Larger w (stronger lead) raises the critical RTT of the FOPDT loop."""
    curve = critical_rtt_curve(FOPDTModel(n_flows=10), "w", [1.0, 2.0, 4.0])
    assert np.all(np.diff(curve.values) > 0)


@pytest.mark.parametrize("loop", [FOPDTModel().loop(), DelayedLoop([3.0], [1.0, 1.0], 0.2)])
def test_plots(loop):
    figs = [
        plotting.plot_bode(loop),
        plotting.plot_nyquist(loop),
        plotting.plot_step([loop, loop.step_response(pade_order=6)]),
        loop.plot_bode(),
        loop.plot_nyquist(),
    ]
    for fig in figs:
        assert fig.axes
    # Nyquist title reports the count
    assert "Z = 0" in figs[1].axes[0].get_title()
    plt.close("all")


def test_plot_stability_map(fopdt_map):
    fig = plotting.plot_stability_map(fopdt_map)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert ax.collections  # mesh + boundary contour
    plt.close("all")


def test_the_map_draws_points_without_crossover_and_leaves_undefined_ones_blank(fopdt_map):
    """N = 1 at the line rate cannot congest the port: an open loop, phase margin +inf. Those
    cells are drawn (hatched, named in the legend), not left blank as points without a value
    (NaN) are."""
    ds = fopdt_map.copy(deep=True)
    pm = ds["phase_margin_deg"].values
    assert np.isposinf(pm[0]).all() and np.isfinite(pm[1:]).all()  # the N = 1 row
    pm[2, :3] = np.nan  # three points without a value
    fig = plotting.plot_stability_map(ds)
    ax = fig.axes[0]
    shown = ax.collections[0].get_array()
    assert np.ma.count_masked(shown) == 3
    assert np.ma.getdata(shown).reshape(pm.shape)[0].tolist() == [90.0] * pm.shape[1]
    assert len(ax.patches) == pm.shape[1]  # one hatched cell per open-loop point
    assert "no 0 dB crossover" in ax.get_legend().get_texts()[0].get_text()
    plt.close("all")


class _NoEquilibriumAbove:
    """FOPDT wrapper whose loop() raises ValueError for n_flows > 20 (as a fluid
    model does when there is no equilibrium)."""

    def __init__(self, model):
        self.model = model
        self.name = "partial"

    def replace(self, **kw):
        return _NoEquilibriumAbove(self.model.replace(**kw))

    def loop(self):
        if self.model.n_flows > 20:
            raise ValueError("n_flows: no equilibrium")
        return self.model.loop()


def test_map_marks_points_without_loop():
    ds = stability_map(
        _NoEquilibriumAbove(FOPDTModel()), x_values=RTTS[::6], y="n_flows", y_values=[5, 50]
    )
    assert ds["valid"].values[0].all() and not ds["valid"].values[1].any()
    assert np.isnan(ds["phase_margin_deg"].values[1]).all()
    assert not ds["stable"].values[1].any()
    assert np.isfinite(ds["critical_rtt"].values[0]) and np.isnan(ds["critical_rtt"].values[1])
    curve = critical_rtt_curve(_NoEquilibriumAbove(FOPDTModel()), "n_flows", [5, 50])
    assert np.isfinite(curve.values[0]) and np.isnan(curve.values[1])
