"""``assert_stable(confirm="packets")`` runs the packets at least as long as the model's own
verdict runs where its trajectories judge: where the loop is slow those are stretched (2.4 s
at a 0.2 Gb/s port with 20 flows, against the shipped 0.6 s), and ``check --confirm`` runs
them that long; a 0.6 s packet run there saw only the start-up backlog draining and failed
the point as "drifting". The packet simulator is replaced by a recorder: what is tested is
the run asked for."""

from __future__ import annotations

import numpy as np

from qcnmodel.params import QCNParams
from qcnmodel.testing import stability


class _SlowModel:
    boundary_method = "trajectories"
    verdict_run = (2.4, 1.2)  # (duration, settle), s: a stretched verdict run


class _FastModel(_SlowModel):
    verdict_run = (0.6, 0.3)  # the shipped run


def _asked(monkeypatch, model, duration=None) -> list:
    asked = []

    def packets(p, n, rtt, cap, run_s, settle_s, seed, bw):
        asked.append((run_s, settle_s))
        t = np.arange(10.0)
        return {"verdict": "stable", "drift": 0.0}, t, np.full(10, 26e3)

    monkeypatch.setattr(stability, "_packets", packets)
    monkeypatch.setattr(stability, "_packet_words", lambda *a: "")
    pt = {"rtt": 300e-6, "n": 20, "text": ""}
    stability._confirm_point(pt, QCNParams(), 0.2e9, (duration, None, 0, 1e-3), [], model)
    return asked


def test_the_packets_run_as_long_as_the_models_stretched_runs(monkeypatch):
    # half the run analysed, as check --confirm: 2.4 s, its second half from 1.2 s
    assert _asked(monkeypatch, _SlowModel()) == [(2.4, 1.2)]


def test_a_fast_loop_keeps_the_default_run(monkeypatch):
    run, settle, _ = stability.packet_run(300e-6)
    assert _asked(monkeypatch, _FastModel()) == [(run, settle)]


def test_a_given_duration_is_kept(monkeypatch):
    assert _asked(monkeypatch, _SlowModel(), duration=1.0) == [(1.0, 0.5)]
