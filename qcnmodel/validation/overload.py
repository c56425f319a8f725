"""The largest flow count the feedback holds: the model's against the packets'.

Past some N the QCN reaction points cannot hold the fair share C/N: a CNM cuts a flow by at
most half (Gd Fbmax = 1/2 in IEEE 802.1Qau), the CP samples a flow about once per 10-100 of
its frames, and between CNMs the rate climbs back (fast recovery, then additive increase
every byte-counter and timer cycle, at 5 Mb/s per 15 ms timer cycle whatever the flow's
rate) and never falls below MinRate. The model answers with the largest N at which it has an
equilibrium (:func:`qcnmodel.analysis.overload.held_flows`); past it the port's queue grows
without bound.

The packets: N greedy sources (each offering 2 C / N from idle, as in every matched pair)
into one port for :data:`DURATION` s, on a grid of flow counts set as fractions
:data:`FRACTIONS` of the floor's count C / MinRate (from which the flows at their rate floor
alone fill the port). A run is *overloaded* when, over its second half, its hot queue's
least-squares trend rises by more than the set point Qeq and the queue never falls below Qeq
(:func:`climbs`): a held queue drains the start's backlog and then swings about a level,
below Qeq part of the time (15-35 % of the 1 ms bins at 400-1000 flows, its trend within
+-70 KB), while an overloaded port never idles (its queue stays above 150 MB at 600 flows
into 5 Gb/s and climbs by 48 MB). The first overloaded N of the grid and
the largest held N below it bracket the threshold: the row passes when the model's N lies
in ``[held, overloaded)``, the grid's step as for the boundary rows.
"""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.validation.rows import Row
from qcnmodel.validation.traces import Case, model_of, sim_trace

__all__ = ["DURATION", "FRACTIONS", "check_overload", "climbs", "floor_flows", "overloaded"]

#: packet run length, s: from idle the offered 2 C fills the queue for ~0.1 s, and near the
#: threshold a held queue takes seconds to drain that backlog (N = 1100 at 10 Gb/s: 47 MB/s)
DURATION = 3.0
#: the packets' grid of flow counts, fractions of the floor's count C / MinRate
FRACTIONS = (0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8)
#: the quick run's grid
QUICK_FRACTIONS = (0.5, 0.6, 0.7)
#: trace bin, s (the trend needs no finer one)
BIN = 1e-3


def floor_flows(case: Case) -> int:
    """C / MinRate rounded up: from this many flows their rate floor alone fills the port."""
    return int(math.ceil(case.capacity / case.params.min_rate))


def climbs(t, q, qeq: float) -> tuple[bool, float]:
    """(overloaded, trend in bytes) of a hot-queue trace ``q`` (bytes) at times ``t`` (s)
    over its second half: the least-squares trend rises by more than ``qeq`` and the queue
    never falls below ``qeq`` (module docstring)."""
    t, q = np.asarray(t, float), np.asarray(q, float)
    keep = t > t[0] + (t[-1] - t[0]) / 2 if t.size else np.zeros(0, bool)
    t, q = t[keep], q[keep]
    if t.size < 2:
        return False, 0.0
    drift = float(np.polyfit(t, q, 1)[0] * (t[-1] - t[0]))
    return bool(drift > qeq and float(np.min(q)) > qeq), drift


def overloaded(case: Case, seed: int = 0, duration: float = DURATION) -> tuple[bool, float]:
    """(overloaded, the queue's trend over the run's second half in bytes) of one packet run
    of ``case`` (:func:`climbs`)."""
    tr = sim_trace(case, duration, seed, BIN)
    return climbs(tr.t, tr.q, case.params.qeq)


def _bracket(flags: list[tuple[int, bool]]) -> tuple[int | None, int | None]:
    """(largest held N below the first overloaded one, first overloaded N) of a grid."""
    hi = next((n for n, bad in flags if bad), None)
    held = [n for n, bad in flags if not bad and (hi is None or n < hi)]
    return (max(held) if held else None), hi


def check_overload(case: Case, variants, fractions=FRACTIONS, seed: int = 0) -> list[Row]:
    """The model's largest held N against the packets' bracket at ``case`` (its ``n`` is not
    used: the flow counts are the grid's)."""
    from qcnmodel.analysis.overload import held_flows

    n_floor = floor_flows(case)
    grid = sorted({max(1, round(f * n_floor)) for f in fractions})
    flags = []
    for n in grid:
        c = Case(n, case.rtt, case.capacity, case.line, case.preset, case.changes)
        flags.append((n, overloaded(c, seed)[0]))
    lo, hi = _bracket(flags)
    marks = ", ".join(f"{n}{'+' if bad else '-'}" for n, bad in flags)
    sim = f"[{'?' if lo is None else lo}, {'?' if hi is None else hi})"
    par = case.label(f"grid {grid[0]}-{grid[-1]} flows, {DURATION:g} s runs", rtt=True)
    par = par.replace(f"N={case.n}, ", "")
    rows = []
    for v in variants:
        n_model = held_flows(model_of(v, case), n_floor)
        ok = (lo is None or n_model >= lo) and (hi is None or n_model < hi)
        rows.append(Row(
            "overload", "largest N held (equilibrium)", par, v, n_model, sim,
            "" if ok else "outside", "grid bracket",
            "the grid's step: the packets are run at the grid's flow counts, the model's "
            "largest held N must lie between the largest held and the first overloaded one",
            ok, "flows",
            f"model: the largest N with an equilibrium (qcnmodel.analysis.overload.held_flows,"
            f" searched up to C/MinRate = {n_floor}); sim (- held, + queue climbing by more "
            f"than Qeq over the second half, never below it, seed {seed}): {marks}",
            key=f"overload|largest N held|C={case.capacity:g},line={case.line:g},"
                f"rtt={case.rtt:g},{case.preset},{case.changes}|{v}",
        ))  # fmt: skip
    return rows
