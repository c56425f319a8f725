"""The report's sections that judge its ranges: the worst case per setting of the linearised
grid, the captions of that grid (its fixed Ps), and the IBM Zurich deck's claim."""

from types import SimpleNamespace

import numpy as np
import xarray as xr

from qcnmodel.document import Document
from qcnmodel.params import QCNParams
from qcnmodel.studies.report import ReportConfig

INF, NAN = np.inf, np.nan
FLOWS = (1, 5, 22, 100)
RTTS = (20e-6, 1e-4, 1e-3)


def _grid(settings: dict) -> xr.Dataset:
    """A margins grid shaped like the report's: ``settings[(w, ps)] = (critical_rtt over N,
    stable over N x RTT, valid over N x RTT)``."""
    ws = sorted({w for w, _ in settings})
    pss = sorted({ps for _, ps in settings})
    crit = np.full((len(ws), len(pss), len(FLOWS)), NAN)
    stable = np.zeros((*crit.shape, len(RTTS)), bool)
    valid = np.ones_like(stable)
    for (w, ps), (c, s, v) in settings.items():
        i, j = ws.index(w), pss.index(ps)
        crit[i, j], stable[i, j], valid[i, j] = c, s, v
    dims = ("w", "ps", "n_flows", "rtt")
    coords = {"w": ws, "ps": pss, "n_flows": list(FLOWS), "rtt": list(RTTS)}
    return xr.Dataset({"critical_rtt": (dims[:3], crit), "stable": (dims, stable),
                       "valid": (dims, valid)}, coords=coords)  # fmt: skip


def _rows(*rows) -> np.ndarray:
    return np.array(rows, bool)


ALL, NONE, FIRST = [1, 1, 1], [0, 0, 0], [1, 0, 0]


def _worst_case_text(settings: dict) -> str:
    from qcnmodel.studies.report import _worst_case_section

    ws = tuple(sorted({w for w, _ in settings}))
    pss = tuple(sorted({ps for _, ps in settings}))
    cfg = ReportConfig(rtt_min=RTTS[0], rtt_max=RTTS[-1], n_rtt=len(RTTS), flows=FLOWS,
                       weights=ws, ps_values=pss, packet=False)  # fmt: skip
    doc = Document("t")
    _worst_case_section(doc, cfg, _grid(settings))
    return doc.to_markdown()


def test_a_setting_with_a_flow_count_without_a_critical_rtt_has_no_worst_case():
    # W=32, Ps=2% of the 802.1Qau report over N = 1 .. 100: N = 1 uncongested (inf), no
    # equilibrium at N = 5, 22, 100. Dropping the NaN made it inf, the best setting, though it
    # is stable at a quarter of its grid; W=32, Ps=1%, stable everywhere, is the best.
    settings = {
        (32.0, 0.02): ([INF, NAN, NAN, NAN], _rows(ALL, NONE, NONE, NONE),
                       _rows(ALL, NONE, NONE, NONE)),
        (32.0, 0.01): ([INF, 2.5e-3, 4.5e-3, 2.5e-3], _rows(ALL, ALL, ALL, ALL),
                       _rows(ALL, ALL, ALL, ALL)),
        (8.0, 0.02): ([INF, 3e-4, NAN, NAN], _rows(ALL, [1, 1, 0], NONE, NONE),
                      _rows(ALL, ALL, ALL, NONE)),
        (8.0, 0.01): ([INF, 3e-4, 1e-4, -5e-4], _rows(ALL, [1, 1, 0], FIRST, NONE),
                      _rows(ALL, ALL, ALL, ALL)),
    }  # fmt: skip
    md = _worst_case_text(settings)
    assert "| W=32, Ps=2% | none | N = 5, 22, 100: no equilibrium | 0.25 |" in md
    assert "| W=8, Ps=2% | none | N = 22: no stable RTT; N = 100: no equilibrium |" in md
    assert "| W=32, Ps=1% | 2500 | N = 5 | 1 |" in md  # N = 5 and 100 tie: the first
    assert "| W=8, Ps=1% | -500 | N = 100 |" in md  # a number: unstable at every RTT
    assert "the setting with the largest worst-case critical RTT is W=32, Ps=1% (2500 us)" in md
    assert "inf us" not in md


def test_no_setting_with_a_worst_case_is_said_and_a_negative_one_still_ranks_above():
    no_queue = ([INF, NAN, NAN, NAN], _rows(ALL, NONE, NONE, NONE), _rows(ALL, NONE, NONE, NONE))
    md = _worst_case_text({(2.0, 0.01): no_queue})
    assert "no setting has a worst-case critical RTT" in md
    negative = ([INF, -1e-4, -2e-4, -3e-4], _rows(ALL, NONE, NONE, NONE),
                _rows(ALL, ALL, ALL, ALL))  # fmt: skip
    md = _worst_case_text({(2.0, 0.01): no_queue, (2.0, 0.02): negative})
    assert "largest worst-case critical RTT is W=2, Ps=2% (-300 us)" in md


def test_the_models_grid_marks_a_flow_count_without_equilibrium():
    # the case above from the model itself: W=32, Ps=2% has no equilibrium at N = 5 (the
    # mean field balances only below an empty queue); the grid says so in ``valid``
    from qcnmodel.studies.report import _grid_block
    from qcnmodel.studies.report_worst import worst_case

    cfg = ReportConfig(n_rtt=2, flows=(1, 5), weights=(32.0,), ps_values=(0.02,), packet=False)
    block = _grid_block(cfg, 32.0, 0.02).isel(ps=0)
    assert not block["valid"].sel(n_flows=5).any() and block["valid"].sel(n_flows=1).all()
    assert worst_case(block) == (None, "N = 5: no equilibrium")


def _linearised_caption(params: QCNParams, **kw) -> str:
    from qcnmodel.studies.report import _critical_section

    cfg = ReportConfig(params=params, flows=(1, 22), weights=(2.0, 8.0), ps_values=(0.01, 0.05),
                       packet=False, **kw)  # fmt: skip
    coords = {"w": [2.0, 8.0], "ps": [0.01, 0.05], "n_flows": [1, 22]}
    crit = xr.DataArray(np.full((2, 2, 2), 1e-4), dims=("w", "ps", "n_flows"), coords=coords)
    doc = Document("t")
    _critical_section(doc, cfg, xr.Dataset({"critical_rtt": crit}))
    return doc.to_markdown()


def test_the_linearised_grid_says_that_its_ps_is_fixed():
    # 802.1Qau samples by a table of the queue level; the grid's columns fix Ps instead, so
    # "W=2" at Ps = 1 % is not the parameter set's own loop (150.5 against 125 us at N = 22)
    md = _linearised_caption(QCNParams())
    assert "it replaces the parameter set's sampling table" in md
    assert "no column is the parameter set's own loop" in md
    assert "| N | W=2 | W=8 | Ps=1% | Ps=5% |" in md
    # the published equations sample at the base Ps: the column at it is their own point
    md = _linearised_caption(QCNParams(), variant="paper")
    assert "as the published equations sample (Ps = 0.01, W = 2)" in md
    assert "| N | W=2* | W=8 | Ps=1%* | Ps=5% |" in md
    # a parameter set that samples at a fixed Ps: its own column is marked, if there is one
    fixed = QCNParams(sampling="fixed", ps_fixed=0.05, w=2.0)
    md = _linearised_caption(fixed)
    assert "as the parameter set samples (Ps = 0.05, W = 2)" in md
    assert "the columns marked * are the parameter set's own point" in md
    assert "| N | W=2 | W=8 | Ps=1% | Ps=5%* |" in md
    md = _linearised_caption(fixed.replace(ps_fixed=0.012))
    assert "no column is the parameter set's own point" in md and "*" not in md


def _claim_text(verdict) -> str:
    from qcnmodel.studies.report import _claim_section

    doc = Document("t")
    _claim_section(doc, ReportConfig(flows=FLOWS, packet=False), verdict)
    return doc.to_markdown()


def test_the_deck_claim_is_judged_with_the_verdicts_critical_rtts():
    # the 802.1Qau report over N = 1 .. 100: the verdict's (trajectories') critical RTTs are
    # 290.6, 112.6 and 315.4 us at N = 5, 22, 100; the section compared the fixed-Ps grid's
    # linearised ones (1.25 .. 3.95 T over N = 5 .. 22, "N = 100 has no stable RTT").
    # T = 1/(1 % x 10 Gb/s / 12000 bit) = 120 us.
    verdict = SimpleNamespace(critical_rtt_s={1: INF, 5: 2.906e-4, 22: 1.126e-4, 100: 3.154e-4},
                              judged_flows=(5, 22, 100), stable_bands={},
                              overloaded={})  # fmt: skip
    md = _claim_text(verdict)
    assert "is 120 us here (Ps = 0.01, the parameter set's base sampling probability" in md
    assert "the verdict's (the table of the critical RTT per N above)" in md
    assert "the model's trajectories at N = 5, 22, 100, its linearised loop at N = 1" in md
    assert "290.6 us = 2.42 T at N = 5, 112.6 us = 0.938 T at N = 22, 315.4 us = 2.63 T at " \
           "N = 100; N = 1 is stable at every RTT: " in md  # fmt: skip
    assert "rule of thumb, not a boundary" in md


def test_the_deck_claim_names_a_stable_band_and_an_overloaded_flow_count():
    verdict = SimpleNamespace(critical_rtt_s={5: 1.2e-4, 22: 1.3e-4, 100: NAN, 600: NAN},
                              judged_flows=(5, 22, 100), stable_bands={100: (1.8e-4, 5.1e-4)},
                              overloaded={600: 1.5})  # fmt: skip
    md = _claim_text(verdict)
    assert "N = 100 is stable only in the band 180 .. 510 us = 1.5 .. 4.25 T" in md
    assert "N = 600 is overloaded" in md
    assert "the claim holds to within a factor of two at every such N" in md
    none = SimpleNamespace(critical_rtt_s={22: NAN}, judged_flows=(), stable_bands={},
                           overloaded={})  # fmt: skip
    md = _claim_text(none)
    assert "its linearised loop, with the sampling of the verdict's model" in md
    assert "cannot be compared (N = 22 has no stable RTT)." in md
