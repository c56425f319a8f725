"""The fixes of ``qcnmodel check`` put to the model's trajectories, and sized by them.

The fix search (:func:`qcnmodel.studies.verdict.search_fix`) sizes every change by the
linearised loop: the smallest change that leaves a phase margin of ``pm_threshold`` to spare.
Where the model's verdict at a flow count comes from its nonlinear trajectories, that
threshold is not what the verdict asks for, and the change it sizes can be too small for the
trajectories (or larger than they need). :func:`put_to_trajectories` puts the changes to the
trajectories at the largest RTT checked and, where a change falls short, continues along its
field, away from the current value, to the smallest change the trajectories accept.
"""

from __future__ import annotations

import numpy as np

from qcnmodel.studies.verdict import (
    _LIN,
    _bounds,
    _relative_change,
    _untested,
    _verdict_of,
    scan,
    wrap_phase,
)

#: values put to the trajectories along a field past its linearised value: ``_RUNGS``
#: log-spaced rungs out to the field's search bound (nearest first, up to the first the
#: trajectories accept), then ``_HALVINGS`` bisections between it and the rung before
_RUNGS, _HALVINGS = 3, 2


def unstable_at(model, judged, rtt: float) -> list[int]:
    """The flow counts of ``judged`` at which most of the trajectories of ``model`` at the
    RTT ``rtt`` oscillate (:meth:`trajectory_unstable`), in the order of ``judged``."""
    return [int(n) for n in judged
            if model.replace(n_flows=int(n), rtt=float(rtt)).trajectory_unstable()]  # fmt: skip


def put_to_trajectories(fixes: list, base, judged, ranges) -> list:
    """``fixes`` (smallest relative change first) put to the model's trajectories at the
    flow counts ``judged``, at the largest RTT checked, each with ``trajectories_unstable_n``
    (the flow counts whose runs still oscillate; empty: none).

    The changes are taken smallest first. A change whose trajectories still oscillate is
    continued along its field, away from the current value, up to the field's search bound
    (:func:`continue_field`); a field is no longer tried once its linearised change is at
    least the smallest change the trajectories have accepted (no field is sized below its
    linearised value). The smallest accepted change is put first; where none is, the list
    keeps its order and the first change says where the trajectories still oscillate.

    Parameters
    ----------
    fixes : list of dict
        The changes of :func:`~qcnmodel.studies.verdict.search_fix`.
    base : model
        The checked model; ``base.replace(params=...)`` builds a changed one.
    judged : sequence of int
        The flow counts the model's trajectories judge.
    ranges : CheckRanges
        The checked ranges and threshold.

    Returns
    -------
    list of dict
        The changes, each tried one with ``trajectories_unstable_n``; one sized by the
        trajectories also has ``sized_by = "trajectories"``, ``linearised_value`` and
        ``linearised_unstable_n`` (its linearised value, and where the trajectories
        oscillate there).

    Notes
    -----
    The cost is in trajectory verdicts (seconds each): one per judged flow count for the
    linearised value of a tried field, and at most ``_RUNGS + _HALVINGS`` (five) further
    values per field, each put first to the flow counts that failed and not further than
    the first that oscillates.
    """
    out = list(fixes)
    best = None
    for i, fix in enumerate(fixes):
        if best is not None and _relative_change(fix) >= _relative_change(out[best]):
            break  # no change of this field or later ones is smaller
        out[i] = continue_field(fix, base, judged, ranges)
        if not out[i]["trajectories_unstable_n"] and (
            best is None or _relative_change(out[i]) < _relative_change(out[best])
        ):
            best = i
    if best is None:
        return out
    return [out[best]] + [f for i, f in enumerate(out) if i != best]


def continue_field(fix: dict, base, judged, ranges) -> dict:
    """``fix`` put to the trajectories (:func:`put_to_trajectories`); where they still
    oscillate, the smallest change of its field that they accept, searched from its value out
    to the field's search bound (``_RUNGS`` log-spaced rungs, nearest first, then
    ``_HALVINGS`` bisections (log scale) between the first accepted and the rung before);
    each value must also keep the linearised loop stable over the ranges, with the
    phase-margin threshold to spare at the flow counts not in ``judged``. Where no value
    is accepted: ``fix`` with the flow counts that oscillate at its value."""
    name, cur, first = fix["field"], fix["current"], float(fix["value"])
    rtt = ranges.rtt[1]
    bad = unstable_at(_changed(base, name, first), judged, rtt)
    if not bad:
        return {**fix, "trajectories_unstable_n": []}
    order = bad + [int(n) for n in judged if int(n) not in bad]
    lo, hi = _bounds(base.params, name)
    end = hi if first > cur else lo
    failed = {**fix, "trajectories_unstable_n": bad}
    if not (first > 0 and end > 0 and end != first):
        return failed
    span = np.log(end / first)

    def accepted(t):
        return _judged(fix, base, _changed(base, name, first * np.exp(t * span)), order, ranges)

    # fractions of the log span: the last value that failed, the first accepted
    low, high, ok = 0.0, 1.0, None
    for k in range(1, _RUNGS + 1):
        ok = accepted(k / _RUNGS)
        if ok is not None:
            high = k / _RUNGS
            break
        low = k / _RUNGS
    if ok is None:  # none out to the bound: the linearised value, said
        return {**failed, "trajectories_searched_to": float(end)}
    for _ in range(_HALVINGS):
        mid = 0.5 * (low + high)
        got = accepted(mid)
        if got is None:
            low = mid
        else:
            ok, high = got, mid
    return {**ok, "linearised_value": first, "linearised_unstable_n": bad}


def _changed(base, name: str, value: float):
    """``base`` with the ``[qcn]`` field ``name`` set to ``value``."""
    return base.replace(params=base.params.replace(**{name: float(value)}))


def _judged(fix: dict, base, model, order, ranges) -> dict | None:
    """The change to ``model``'s value as a fix sized by the trajectories, or None where the
    linearised loop is not stable over the ranges (the threshold to spare where the flow
    counts are not in ``order``) or the trajectories oscillate at a flow count of
    ``order`` (put to them in that order, up to the first that oscillates)."""
    name = fix["field"]
    value = float(getattr(model.params, name))
    try:
        table = scan(model, ranges, method=_LIN)
        verdict, pm, n, k = _verdict_of(table, ranges.pm_threshold, judged=tuple(order))
        if verdict != "stable" or any(unstable_at(model, (m,), ranges.rtt[1]) for m in order):
            return None
    except ValueError:  # no answer at this value
        return None
    point = {"n_flows": n, "rtt_s": float(ranges.rtt_grid()[k])}
    return {**fix, "value": value, "worst_phase_margin_deg": wrap_phase(pm),
            "worst_point": point, "untested": _untested(base.params, name, value, ranges),
            "trajectories_unstable_n": [], "sized_by": "trajectories"}  # fmt: skip


def fix_sentence(fix: dict, threshold: float) -> str:
    """The headline's sentence of a fix: the change, the linearised loop's worst phase margin
    with it and, where the model's trajectories judge some flow counts, what they do at the
    largest RTT checked; for a change sized by them, where the change the phase-margin
    threshold asks of the linearised loop left them oscillating; for one they reject out to
    the field's search bound, that they were put to every value out to it."""
    from qcnmodel.studies.verdict import _us

    fp, name = fix["worst_point"], fix["field"]
    bad = fix.get("trajectories_unstable_n")
    untested = f"; outside the validation's matched pairs: {fix['untested']}"
    text = (f"{'A change that stabilises the linearised loop only' if bad else 'Fix'}: set "
            f"{name} = {fix['value']:.4g} in [qcn] (now {fix['current']:.4g}"
            f"{untested if fix.get('untested') else ''}); recomputed over the same ranges, "
            f"the linearised loop is stable, worst phase margin "
            f"{fix['worst_phase_margin_deg']:.1f} deg at N = {fp['n_flows']}, RTT = "
            f"{_us(fp['rtt_s'])}")  # fmt: skip
    if bad is None:
        return text + "."
    text += "; the model's trajectories at the largest RTT checked " + (
        f"still oscillate at N = {', '.join(map(str, bad))}" if bad else "are stable at every N"
    )
    if "trajectories_searched_to" in fix:
        text += (f"; of {_RUNGS} values of {name} further out, up to "
                 f"{fix['trajectories_searched_to']:.4g} (the end of its search), none keeps "
                 "both them and the linearised loop stable")  # fmt: skip
    if fix.get("sized_by") == "trajectories":
        again = ", ".join(map(str, fix["linearised_unstable_n"]))
        text += (f"; the change is sized by them: at {name} = {fix['linearised_value']:.4g}, "
                 f"the change a phase margin of {threshold:g} deg asks of the linearised "
                 f"loop, they still oscillate at N = {again}")  # fmt: skip
    return text + "."
