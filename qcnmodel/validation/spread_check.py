"""The per-flow rate spread row: the packet-fidelity model's prediction (:mod:`.spread`)
against the simulated spread of the flows' window-mean rates."""

from __future__ import annotations

import math

import numpy as np

from qcnmodel.validation.network import source_rate
from qcnmodel.validation.pairs import DURATION, SETTLE, _window
from qcnmodel.validation.rows import Row
from qcnmodel.validation.spread import flow_spread, predicted_spread
from qcnmodel.validation.traces import DEFAULT_VARIANT, Case, model_trace, sim_trace

__all__ = ["check_spread"]


def check_spread(case: Case, seeds=(0,), replicas: int = 12) -> list[Row]:
    """Coefficient of variation across flows of their mean rates over the settled window."""
    if case.n < 2:
        return []
    sims = []
    for seed in seeds:
        st = sim_trace(case, DURATION, seed)
        sims.append(flow_spread(st.flow_thr[:, _window(st, SETTLE)].mean(axis=1)))
    sim = float(np.mean(sims))
    # sampling error of a coefficient of variation from N flows: CV / sqrt(2 (N - 1)) per run
    se_sim = (float(np.std(sims, ddof=1) / math.sqrt(len(sims))) if len(sims) > 2
              else sim / math.sqrt(2 * (case.n - 1) * len(sims)))  # fmt: skip
    mt = model_trace(DEFAULT_VARIANT, case, DURATION, per_flow=True)
    if "flow_sent" in mt.extra:  # the model follows every flow: its own spread
        how = "the model's flows (its trajectories, one per seed)"
        cvs = []
        for seed in range(replicas):
            tr = model_trace(DEFAULT_VARIANT, case, DURATION, seed=seed, per_flow=True)
            cvs.append(flow_spread(tr.extra["flow_sent"][:, _window(tr, SETTLE)].mean(axis=1)))
        model, se_model = float(np.mean(cvs)), float(np.std(cvs, ddof=1) / math.sqrt(replicas))
    else:
        how = "N exact reaction points driven by the model's CP signals"
        r0 = source_rate(case.n, case.capacity, case.line, "greedy")
        model, se_model = predicted_spread(mt.extra["model"], mt, r0, (SETTLE, DURATION),
                                           replicas=replicas)  # fmt: skip
    tol = 3 * math.hypot(se_sim, se_model)
    par = case.label(f"window {SETTLE:g}-{DURATION:g} s, {len(seeds)} seed(s), "
                     f"{replicas} model replicas")  # fmt: skip
    return [Row("spread", "per-flow rate spread (CV of window means)", par, DEFAULT_VARIANT,
                model, sim, model - sim, tol, "3 x the combined standard error of the simulated "
                "CV (across seeds, or CV/sqrt(2(N-1)) per run) and of the model's replicas",
                abs(model - sim) <= tol, "",
                f"simulated CV per seed {', '.join(f'{x:.3f}' for x in sims)}; model: {how}",
                key=f"spread|cv|{case}|{DEFAULT_VARIANT}")]  # fmt: skip
