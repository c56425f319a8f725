"""Two sections of the stability report (:mod:`qcnmodel.studies.report`) that judge its ranges.

* The worst case over the ranges per setting (W, Ps) of the linearised margins grid: the
  smallest critical RTT over the flow counts, i.e. the largest RTT at which every flow count is
  stable. A flow count with no critical RTT (no equilibrium, or no RTT where it is stable) leaves
  its setting without one: no RTT is stable at every flow count there.
* The IBM Zurich deck's claim ("Toward a Scalable and Robust QCN") that the loop becomes unstable
  once the delay exceeds the sampling lag T = 1/(Ps n lambda), judged with the critical RTTs of
  the report's verdict (:func:`qcnmodel.studies.check.check_params`): the sampling of the
  verdict's model (not a fixed Ps of the grid), and the model's trajectories where they judge.
"""

from __future__ import annotations

import numpy as np

__all__ = ["claim_section", "sampling_lag", "worst_case_section"]


def sampling_lag(params, ps: float, capacity: float) -> float:
    """The IBM Zurich deck's lag T = 1/(Ps n lambda): the mean time between samples at the CP
    (s); at equilibrium the arrival rate n*lambda is the CP capacity in frames/s."""
    return 1.0 / (ps * capacity / (8.0 * params.frame_size))


def _flows(ns) -> str:
    return "N = " + ", ".join(str(int(n)) for n in ns)


def _missing(sub) -> str:
    """Why the flow counts of one setting's grid ``sub`` whose critical RTT is NaN have none,
    grouped by reason: no equilibrium (no valid point on the row), no stable RTT (stable at no
    RTT of the grid), or unstable without delay (no critical RTT, though some RTT of the grid
    falls in a window where it is stable)."""
    reasons: dict[str, list[int]] = {}
    for n in sub.n_flows.values[np.isnan(sub["critical_rtt"].values)]:
        row = sub.sel(n_flows=n)
        if "valid" in row and not bool(row["valid"].any()):
            why = "no equilibrium"
        elif not bool(row["stable"].any()):
            why = "no stable RTT"
        else:
            why = "unstable without delay"
        reasons.setdefault(why, []).append(int(n))
    return "; ".join(f"{_flows(ns)}: {why}" for why, ns in reasons.items())


def worst_case(sub) -> tuple[float | None, str]:
    """The worst-case critical RTT (s) of one setting's grid ``sub`` (over ``n_flows`` x
    ``rtt``, with ``critical_rtt`` over ``n_flows``) and where it occurs.

    Returns
    -------
    tuple
        ``(value, where)``: the smallest critical RTT over the flow counts and ``"N = n"``
        where it is reached; or ``(None, reasons)`` when some flow count has none (NaN: no
        equilibrium or no stable RTT), which leaves no RTT stable at every flow count.
    """
    crit = sub["critical_rtt"].values
    if np.isnan(crit).any():
        return None, _missing(sub)
    k = int(np.argmin(crit))
    return float(crit[k]), _flows([sub.n_flows.values[k]])


def worst_case_section(doc, cfg, grid) -> None:
    """The worst case over the ranges per (W, Ps) of the linearised margins ``grid`` (the
    dataset of :func:`~qcnmodel.studies.report.compute_margins_grid`), and the setting with
    the largest one. A setting without a worst-case critical RTT ranks below every setting
    with one."""
    doc.heading("Worst case over the ranges (linearised loop)")
    rows, best = [], None
    for w in cfg.weights:
        for ps in cfg.ps_values:
            sub = grid.sel(w=w, ps=ps)
            value, where = worst_case(sub)
            name = f"W={w:g}, Ps={ps:.0%}"
            rows.append([name, "none" if value is None else value * 1e6, where,
                         float(sub["stable"].mean())])  # fmt: skip
            if value is not None and (best is None or value > best[1]):
                best = (name, value)
    doc.paragraph(
        "For each setting (sampling probability fixed at Ps): the smallest critical RTT over N "
        "(the largest RTT at which every N in the range is stable; negative: some N is "
        "unstable at every RTT), the N where it occurs, and the fraction of grid points "
        "(RTT x N) that are stable. A setting with an N that has no critical RTT has none "
        "(no RTT is stable at every N); the next column then names those N and why: no "
        "equilibrium (no feedback level holds the flows at their fair share with a standing "
        "queue), or no stable RTT in the grid."
    )
    doc.table(["setting", "smallest critical RTT (us)", "at N", "stable fraction"], rows)
    doc.paragraph(f"Over RTT {cfg.rtt_min * 1e6:g} us .. {cfg.rtt_max * 1e3:g} ms and N "
                  f"{min(cfg.flows)} .. {max(cfg.flows)}, " + (
                      "no setting has a worst-case critical RTT: in each, some N has no "
                      "equilibrium or no stable RTT." if best is None else "the setting with "
                      f"the largest worst-case critical RTT is {best[0]} ({best[1] * 1e6:.4g} "
                      "us)."))  # fmt: skip


def _judged(verdict) -> set:
    """The flow counts whose critical RTT the verdict takes from the model's trajectories."""
    return set(getattr(verdict, "judged_flows", ()) or ())


def _judged_by(verdict, ns) -> str:
    """Whose critical RTTs the verdict's are at the flow counts ``ns``."""
    judged = _judged(verdict)
    traj = [n for n in ns if n in judged]
    lin = [n for n in ns if n not in judged]
    if not traj:
        return "its linearised loop"
    if not lin:
        return "the model's trajectories"
    return f"the model's trajectories at {_flows(traj)}, its linearised loop at {_flows(lin)}"


def _others(verdict, crit: dict, ok, lag: float) -> list[str]:
    """What the flow counts of the verdict without a finite, positive critical RTT have (a
    band of stable RTTs is given in units of the sampling lag ``lag`` too)."""
    bands = getattr(verdict, "stable_bands", {}) or {}
    over = getattr(verdict, "overloaded", {}) or {}
    out = []
    for n, c in crit.items():
        if n in ok:
            continue
        if n in bands:
            lo, hi = bands[n]
            out.append(f"N = {n} is stable only in the band {lo * 1e6:.4g} .. {hi * 1e6:.4g} us "
                       f"= {lo / lag:.3g} .. {hi / lag:.3g} T (unstable at smaller "
                       "RTTs)")  # fmt: skip
        elif n in over:
            out.append(f"N = {n} is overloaded (no feedback holds the flows at C/N)")
        elif np.isinf(c) and c > 0:
            out.append(f"N = {n} is stable at every RTT")
        else:
            out.append(f"N = {n} has no stable RTT")
    return out


def claim_section(doc, cfg, verdict) -> None:
    """The IBM Zurich deck's claim that a delay beyond the sampling lag destabilises, judged
    with the critical RTT of the report's ``verdict`` per flow count (the sampling of its
    model, not a fixed Ps of the grid; the model's trajectories where they judge); a flow
    count stable only in a band of RTTs, overloaded, with no stable RTT or stable at every RTT
    is named as such."""
    p = cfg.params
    capacity = p.line_rate if cfg.capacity is None else cfg.capacity
    lag = sampling_lag(p, p.ps, capacity)
    crit = {int(n): float(c) for n, c in verdict.critical_rtt_s.items()}
    bands = getattr(verdict, "stable_bands", {}) or {}
    ok = [n for n, c in crit.items() if np.isfinite(c) and c > 0 and n not in bands]
    doc.heading("The IBM Zurich deck's claim: delay beyond the sampling lag destabilises")
    base = ("base sampling probability of its table" if p.sampling == "table"
            else "fixed sampling probability")  # fmt: skip
    table = " (the table of the critical RTT per N above)" if _judged(verdict) else ""
    text = (f"The sampling lag T = 1/(Ps n lambda) at equilibrium is {lag * 1e6:.4g} us here "
            f"(Ps = {p.ps:.3g}, the parameter set's {base}). The critical RTTs compared with it "
            f"are the verdict's{table}: {_judged_by(verdict, crit)}, with the sampling of the "
            "verdict's model (not a fixed Ps of the grid). ")  # fmt: skip
    others = _others(verdict, crit, ok, lag)
    if not ok:
        doc.paragraph(
            text + "No flow count has a finite, positive critical RTT, so the claim "
            "cannot be compared" + (f" ({'; '.join(others)})." if others else ".")
        )
        return
    r = np.array([crit[n] for n in ok]) / lag
    each = ", ".join(f"{crit[n] * 1e6:.4g} us = {x:.3g} T at N = {n}" for n, x in zip(ok, r))
    doc.paragraph(
        text + f"They are {each}"
        + (f"; {'; '.join(others)}" if others else "") + ": "
        + ("the claim holds to within a factor of two at every such N."
           if np.all((r > 0.5) & (r < 2))
           else "the loop does not lose stability where the RTT equals the sampling lag at "
           "every N, so the claim is a rule of thumb, not a boundary.")
    )  # fmt: skip
