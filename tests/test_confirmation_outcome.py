"""The packet confirmation's overall answer in its JSON (``confirmation["outcome"]``) is the
word its text gives (DISAGREES / AGREES / INCONCLUSIVE), also when no point is conclusive."""

from __future__ import annotations

import pytest

from qcnmodel.studies.check_text import confirmation_lines
from qcnmodel.studies.confirm import tally

TEXT = {"agree": "AGREES", "DISAGREE": "DISAGREES", "inconclusive": "INCONCLUSIVE"}


def _row(conclusive: bool, agree: bool) -> dict:
    """A confirmation row with the fields the text reads (a stable packet run where the
    model predicted stability: it agrees unless ``agree`` is False)."""
    return {"n_flows": 4, "rtt_s": 1e-4, "role": "worst point", "predicted_stable": agree,
            "judged_by": "linearised", "phase_margin_deg": 20.0, "time_constant_s": 0.01,
            "verdict": "stable", "std": 1e3, "underflow": 0.0, "acf_peak": 0.1, "runs": 1,
            "conclusive": conclusive, "agree": agree}  # fmt: skip


@pytest.mark.parametrize(
    ("rows", "word", "n_agree", "n_open"),
    [
        ([_row(False, True), _row(False, True), _row(False, False)], "inconclusive", 0, 3),
        ([_row(True, True), _row(False, False)], "agree", 1, 1),
        ([_row(True, True), _row(True, False), _row(False, True)], "DISAGREE", 1, 1),
    ],
)
def test_the_json_outcome_is_the_texts(rows, word, n_agree, n_open):
    conf = {**tally(rows), "duration_s": 0.02, "seed": 0, "jobs": 1, "rows": rows}
    assert conf["outcome"] == word
    assert (conf["points_agree"], conf["points_inconclusive"]) == (n_agree, n_open)
    assert [r["outcome"] for r in rows] == [
        "inconclusive" if not r["conclusive"] else "agree" if r["agree"] else "DISAGREE"
        for r in rows
    ]
    head = confirmation_lines(conf)[0]
    assert f"): {TEXT[word]} ({n_agree} of {len(rows)} points agree" in head
    # ``agree``: the same answer as a flag, None when no point decides (it said True)
    assert conf["agree"] is {"agree": True, "DISAGREE": False, "inconclusive": None}[word]


def test_a_confirmation_point_in_a_stable_band_is_predicted_stable():
    """A flow count whose runs cycle at small RTTs has no critical RTT (nan) but a stable
    band; a confirmation point inside it is the model's "stable", as the check's verdict
    (the band was not passed on, and every such point read "unstable")."""
    import math

    import qcnmodel as qm
    from qcnmodel.studies.confirm import _predict

    model = qm.QCNFluidModel(n_flows=50, rtt=300e-6)
    band = (150e-6, 500e-6)
    assert _predict(model, 50, 300e-6, None, math.nan, band)["stable"] is True
    assert _predict(model, 50, 600e-6, None, math.nan, band)["stable"] is False
    assert _predict(model, 50, 100e-6, None, math.nan, band)["stable"] is False
    assert _predict(model, 50, 300e-6, None, math.nan)["stable"] is False  # no band: nowhere
