"""DCQCN: the critical RTT that the surfaces give, against the packets' delay bracket.

``qcnmodel margins``, ``qcnmodel sweep``, ``critical_rtt`` and ``stability_map`` judge the
registry's default DCQCN model (``packet``) by the critical RTT of its every-flow runs
(:class:`qcnmodel.models.dcqcn_runs.RunsJudged`): a point is stable when its RTT lies below
it. The grid rows of :mod:`.dcqcn_pairs` compare the runs' class point by point; these rows
compare that critical RTT itself, the number a user reads, with the packet simulator's
classes over the loop delays of the grid at the same N: the simulated bracket ``(lo, hi]``
(no cycle through Kmax at ``lo``, a cycle at ``hi``, majority over the seeds) must hold it
(``lo < critical <= hi``, as ``stable = rtt < critical`` reads; ``> 100 us`` when no delay
of the grid cycles, ``< 25 us`` when all do, an unstable-from-the-start ``nan`` included).
The tolerance is the grid's step, as for the grid's own boundary rows.

Where no delay of the grid cycles (N = 2-6 at the defaults), the full run goes on to the
longer delays :data:`LONG_TAUS` until one does, each packet run as long as the every-flow
runs' at that delay (:func:`~qcnmodel.models.dcqcn_runs.run_length_at`: at least 50 RTTs of
settling and 400 of window), so that the runs' critical RTT beyond 100 us is compared too
(N = 2: 876 us against a first cycle between 650 and 1000 us; N = 4: 430 against 400-650;
N = 6: 204 against 150-250).
"""

from __future__ import annotations

import math

from qcnmodel.validation.dcqcn_pairs import (
    BOUNDARY_SEEDS,
    DCQCN_VARIANTS,
    DEFAULT_VARIANT,
    LINE,
    PARAMS,
    TAUS,
    _bracket,
    _first,
    _keyed,
    _majority,
    _marks,
)
from qcnmodel.validation.rows import Row

__all__ = ["LONG_TAUS", "check_critical_rtt"]

#: loop delays beyond the grid (s), run in turn until the packets cycle (about x1.6 apart)
LONG_TAUS = (150e-6, 250e-6, 400e-6, 650e-6, 1000e-6, 1600e-6)


def _text(crit: float, lo_search: float, hi_search: float) -> str:
    if math.isnan(crit):
        return f"< {lo_search * 1e6:g} us (unstable from the search's start)"
    if math.isinf(crit):
        return f"> {hi_search * 1e6:g} us (stable across the search)"
    return f"{crit * 1e6:.0f} us"


def check_critical_rtt(n: int, taus=TAUS, seeds=BOUNDARY_SEEDS, sim_overrides=(),
                       longer=()) -> list[Row]:  # fmt: skip
    """The default's critical RTT at ``n`` flows against the simulated delay bracket over
    ``taus``, then over ``longer`` delays until the packets cycle (module docstring)."""
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models.dcqcn import DCQCNFluidModel

    flags = [_majority(n, t, seeds, sim_overrides) for t in taus]
    taus = list(taus)
    for t in longer if not any(flags) else ():
        taus.append(t)
        flags.append(_majority(n, t, seeds, sim_overrides))
        if flags[-1]:
            break
    us = [t * 1e6 for t in taus]
    lo, hi = _first(flags, us)  # the grid's bracket of the first cycle, us
    model = DCQCNFluidModel(PARAMS, rtt=taus[0], n_flows=n, **DCQCN_VARIANTS[DEFAULT_VARIANT])
    crit = float(critical_rtt(model))
    above = lo is None or (not math.isnan(crit) and crit * 1e6 > lo)
    below = hi is None or math.isnan(crit) or crit * 1e6 <= hi
    ok = above and below
    row = Row("dcqcn-boundary", "critical RTT (every-flow runs)",
              f"N={n}, C={LINE / 1e9:g} Gb/s, {len(seeds)} seed(s), majority",
              DEFAULT_VARIANT, _text(crit, *model.trajectory_rtt_search),
              _bracket(lo, hi, " us"),
              "" if ok else "differ", "same grid bracket",
              "the grid step: the packets are classed on the grid's delays, the critical RTT "
              "must fall between the last delay without a cycle and the first with one", ok,
              "", f"the critical RTT that margins, sweeps and maps give (where the odds of a "
              f"run cycling through Kmax or staying above it pass one half, "
              f"qcnmodel.analysis.margins.critical_rtt); sim {_marks(us, flags)}")  # fmt: skip
    return _keyed([row], f"N={n}")
