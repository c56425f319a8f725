"""One summary of a loop model: which model, its margins, its critical RTT, its fixed point.

:func:`summary` is what ``qcnmodel margins`` prints and what the sweeps, the check and the
report read: the model's registry name and variant (:func:`qcnmodel.models.identify`), the
operating point, the gain, phase and delay margins of its linearised loop with the exact delay
(``stable`` from the Nyquist count), and the critical RTT. The critical RTT has one home,
:func:`qcnmodel.analysis.margins.critical_rtt`, re-exported here: the critical loop delay
minus the model's extra loop delay (``loop_delay - rtt``, e.g. the CP's sampling lag or the
FOPDT view's zero-order hold), so it is an RTT, comparable with the ``rtt`` the model was
built with.
"""

from __future__ import annotations

import math

from qcnmodel.analysis.boundary import (
    boundary_method,
    judged_by_trajectories,
    judged_stable,
    trajectory_boundary,
)
from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.models import identify
from qcnmodel.models._base import Overloaded

__all__ = ["critical_rtt", "summary"]


def summary(model, loop=None, fixed_point: bool = True, method: str = "model") -> dict:
    """Margins, critical RTT and (optionally) fixed point of ``model`` as a plain dict.

    Parameters
    ----------
    model : loop model
        A model of :data:`qcnmodel.models.MODELS` (any object with ``rtt``, ``n_flows``,
        ``loop()`` and ``replace()`` works; it is then named by its class, variant
        ``"custom"``).
    loop : DelayedLoop, optional
        ``model.loop()`` if the caller already has it.
    fixed_point : bool
        Include ``model.fixed_point()`` (numbers as floats).
    method : {"model", "linearisation"}
        How ``critical_rtt_s`` and ``stable`` are found: the model's own boundary method, or
        the linearised loop's phase margin throughout.

    Returns
    -------
    dict
        ``model``, ``model_variant``, ``model_class``, ``rtt_s``, ``loop_delay_s``,
        ``n_flows``, ``phase_margin_deg``, ``gain_margin_db``, ``delay_margin_s``,
        ``crossover_rad_s``, ``phase_crossover_rad_s``, ``critical_rtt_s``, ``stable``,
        ``boundary_method`` and ``fixed_point``. With ``boundary_method = "trajectories"``
        (the congested packet-fidelity QCN model, DCQCN's ``packet``) ``critical_rtt_s``
        comes from the model's trajectories and ``stable`` means ``rtt_s <
        critical_rtt_s``; the margins remain those of the linearised loop, whose critical
        RTT is ``critical_rtt_linearised_s`` and verdict ``stable_linearised``. Where such a
        model has no fixed point (the loop raises a ``ValueError`` naming the equilibrium)
        but its trajectories need none (``trajectory_needs_loop = False``: DCQCN's
        every-flow runs past the marking ramp), the margins are NaN, ``no_fixed_point``
        says why and the trajectories still judge. Where the port stays overloaded (no
        feedback level holds the flows at C/N) the answer is ``stable = False`` at every
        RTT, NaN margins and critical RTT, ``boundary_method = "overload"`` and
        ``overloaded`` the flows' rate over C/N at full feedback; elsewhere a missing fixed
        point raises ``ValueError``.
    """
    if not (hasattr(model, "loop") and hasattr(model, "replace")):
        raise ValueError(f"model: must be a loop model (with loop() and replace()), got "
                         f"{type(model).__name__}")  # fmt: skip
    name, variant = identify(model)
    why, over = None, None  # why there is no loop; the overload that says so, if one does
    try:
        loop = model.loop() if loop is None else loop
        m = loop.margins()
    except Overloaded as exc:  # a verdict: the port stays overloaded at any RTT
        loop, m, why, over = None, None, str(exc), exc
    except ValueError as exc:  # no fixed point: trajectories that need none still judge
        if ("equilibrium" not in str(exc) or not judged_by_trajectories(model, method)
                or getattr(model, "trajectory_needs_loop", True)):  # fmt: skip
            raise
        loop, m, why = None, None, str(exc)
    out = {
        "model": name,
        "model_variant": variant,
        "model_class": type(model).__name__,
        "rtt_s": float(model.rtt),
        "loop_delay_s": float(
            getattr(model, "loop_delay", model.rtt) if m is None else loop.delay
        ),  # fmt: skip
        "n_flows": int(model.n_flows),
        **{k: math.nan if m is None else float(getattr(m, k)) for k in _MARGINS},
        "critical_rtt_s": (math.nan if over is not None else
                           float(critical_rtt(model, loop=loop, method=method))),
        "stable": None if m is None else bool(m.stable),
        "boundary_method": ("overload" if over is not None else
                            boundary_method(model) if method == "model" else method),
    }  # fmt: skip
    if judged_by_trajectories(model, method):
        out["stable_linearised"] = out["stable"]
        crit = out["critical_rtt_s"]
        band = None if over is not None else trajectory_boundary(model)[1]  # searched above
        if band is not None:  # the model's band, whatever the point's RTT
            out["stable_band_s"] = [float(band[0]), float(band[1])]
            if model.rtt >= band[0]:
                out["critical_rtt_from_rtt_s"] = float(band[1])
        out["stable"] = bool(judged_stable(model, [model.rtt], None, crit, band)[0])
        out["critical_rtt_linearised_s"] = (
            math.nan if m is None else float(critical_rtt(model, loop=loop, method="linearisation"))
        )
    if over is not None:  # unstable at every RTT; the flows' rate over C/N at full feedback
        out.update(stable=False, overloaded=over.ratio)
    if why is not None:
        out["no_fixed_point"] = why
    if fixed_point:
        fp = {} if m is None else model.fixed_point()
        out["fixed_point"] = {k: _num(v) for k, v in fp.items()}
    return out


#: the linearised loop's margins a summary gives (``Margins`` attributes of the same names)
_MARGINS = ("phase_margin_deg", "gain_margin_db", "delay_margin_s", "crossover_rad_s",
            "phase_crossover_rad_s")  # fmt: skip


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v
