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
    _keyed,
    sim_point,
)
from qcnmodel.validation.rows import Row

__all__ = ["check_critical_rtt"]


def _text(crit: float, lo_search: float, hi_search: float) -> str:
    if math.isnan(crit):
        return f"< {lo_search * 1e6:g} us (unstable from the search's start)"
    if math.isinf(crit):
        return f"> {hi_search * 1e6:g} us (stable across the search)"
    return f"{crit * 1e6:.0f} us"


def check_critical_rtt(n: int, taus=TAUS, seeds=BOUNDARY_SEEDS, sim_overrides=()) -> list[Row]:
    """The default's critical RTT at ``n`` flows against the simulated delay bracket over
    ``taus`` (module docstring)."""
    from qcnmodel.analysis.margins import critical_rtt
    from qcnmodel.models.dcqcn import DCQCNFluidModel

    flags = []
    for tau in taus:
        votes = sum(sim_point(n, tau, s, overrides=tuple(sim_overrides))["cliff_cycle"]
                    for s in seeds)  # fmt: skip
        flags.append(2 * votes > len(seeds))
    lo = hi = None
    for tau, cycles in zip(taus, flags):
        if cycles:
            hi = tau
            break
        lo = tau
    model = DCQCNFluidModel(PARAMS, rtt=taus[0], n_flows=n, **DCQCN_VARIANTS[DEFAULT_VARIANT])
    crit = float(critical_rtt(model))
    above = lo is None or (not math.isnan(crit) and crit > lo)
    below = hi is None or math.isnan(crit) or crit <= hi
    if lo is None:
        sim = f"< {hi * 1e6:g} us"
    elif hi is None:
        sim = f"> {lo * 1e6:g} us"
    else:
        sim = f"({lo * 1e6:g}, {hi * 1e6:g}] us"
    marks = ", ".join(f"{t * 1e6:g}{'U' if f else 'S'}" for t, f in zip(taus, flags))
    ok = above and below
    row = Row("dcqcn-boundary", "critical RTT (every-flow runs)",
              f"N={n}, C={LINE / 1e9:g} Gb/s, {len(seeds)} seed(s), majority",
              DEFAULT_VARIANT, _text(crit, *model.trajectory_rtt_search), sim,
              "" if ok else "differ", "same grid bracket",
              "the grid step: the packets are classed on the grid's delays, the critical RTT "
              "must fall between the last delay without a cycle and the first with one", ok,
              "", f"the critical RTT that margins, sweeps and maps give (where the odds of a "
              f"run cycling through Kmax or staying above it pass one half, "
              f"qcnmodel.analysis.margins.critical_rtt); sim {marks}")  # fmt: skip
    return _keyed([row], f"N={n}")
