"""Operating regime of the DCQCN fluid model: linear margin, limit cycle and CNP shot noise.

The exact linearisation of :class:`~qcnmodel.models.dcqcn.DCQCNFluidModel` answers a local
question: do small deviations from the fixed point decay? What a packet system at the same
operating point does depends on three more things, each computed here from the model and
measured with the oscillation detector (:func:`~qcnmodel.analysis.timeseries.oscillation`),
so that the fluid prediction and the simulated trace are read alike:

1. **No equilibrium on the ramp** (p* > pmax): the fluid queue relaxes between empty and
   Kmax, where the marking jumps to 1 (a relaxation cycle).
2. **A coexisting limit cycle.** The marking curve is discontinuous at Kmax. With a small
   phase margin the fixed point can be locally stable while a large cycle through Kmax and
   an empty queue also attracts. :func:`regime` integrates the nonlinear equations from a
   cold start (:func:`cold_start`: empty queue, every flow at the fair share C/N, alpha at its
   fixed point) and measures the trajectory.
3. **CNP shot noise** (:func:`queue_noise`). In the packet system each flow's rate moves in
   discrete CNP cuts. Take the CNPs of each flow as a Poisson process with the model's own
   rate lambda = a/tau (a = 1 - (1-p*)^(tau R*), one CNP per interval tau that saw a mark).
   Each CNP moves R_C by -R_C alpha/2 and R_T by -(R_T - R_C) (R_T := R_C). Compensated, this
   is white noise of intensity lambda per flow. The queue moves with the mean of the N flows
   (intensity lambda/N) through the linearised loop:

       S_q(w) = (lambda / N) |e_q' (jw I - A0 - A1 exp(-jw tau))^-1 b|^2,
       b = (0, 0, -(R_T* - R_C*), -R_C* alpha*/2),  var q = (1/pi) int_0^inf S_q dw.

   The stationary queue is then Gaussian, N(q*, var q): its standard deviation, its
   autocorrelation, the fraction of time below one packet (underflow) and the fraction above
   Kmax (the marking cliff). No parameter is fitted. The Gaussian form is not valid near a
   zero phase margin (the variance diverges) and ignores the floor at q = 0.

**Escape rule** (:data:`ESCAPE_MIN`). A fixed point that is linearly stable while a cycle
coexists ("bistable") is predicted to oscillate when its noise is above Kmax at least 1 % of
the time: the noise carries the packet system onto the cycle. The 1 % is the detector's
underflow threshold; the rule itself was chosen after the simulator had been seen to
oscillate at such a point (N = 10, 25 us), so its agreement there is not an independent
prediction (:attr:`Regime.escape` marks the points it decides).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from qcnmodel.analysis.timeseries import ACF_MIN, AMPLITUDE_MIN, UNDERFLOW_MIN, oscillation
from qcnmodel.models import _dcqcn_eqs as eq

__all__ = [
    "ESCAPE_MIN",
    "Regime",
    "acf_peak",
    "cold_start",
    "fluid_trace",
    "queue_noise",
    "regime",
]

#: fraction of time the predicted queue noise must spend above Kmax for a bistable fixed
#: point to count as left for the cycle (the detector's underflow threshold; the rule was
#: chosen after seeing the simulator: module docstring)
ESCAPE_MIN = 0.01
#: one packet: below it the queue counts as empty
_EMPTY_PACKETS = 1.0


def _omega_grid(wc: float) -> np.ndarray:
    """Frequencies (rad/s) of the variance integral: log-spaced, dense near the crossover."""
    dense = np.linspace(0.3 * wc, 3.0 * wc, 6000) if wc > 0 else np.empty(0)
    return np.unique(np.concatenate([np.geomspace(1.0, 1e7, 12000), dense]))


def queue_noise(model, lags=None) -> dict:
    """Stationary queue statistics of the CNP shot noise (module docstring, item 3).

    Parameters
    ----------
    model : DCQCNFluidModel
        A model with a linearly stable fixed point on the ramp (symmetric form).
    lags : array_like, optional
        Lags (s) of the returned autocorrelation (default 0 .. 20 ms in 10 us steps).

    Returns
    -------
    dict
        ``q_star`` and ``std`` (bytes), ``cnp_rate`` (CNPs/s per flow), ``underflow`` (P(q <
        one packet)), ``above_kmax`` (P(q > Kmax)), ``lags`` (s) and ``acf``.

    Raises
    ------
    ValueError
        No fixed point on the ramp, or a linearly unstable one (no stationary variance).
    """
    mg = model.loop().margins()
    if not mg.phase_margin_deg > 0:
        raise ValueError(
            f"queue_noise: the fixed point is linearly unstable (phase margin "
            f"{mg.phase_margin_deg:.1f} deg): no stationary variance"
        )
    lin = model.linearise()
    q, al, rt, rc = lin.x_star
    pv = model.param_vector()
    pm = (q - pv[eq.P_KMIN]) / (pv[eq.P_KMAX] - pv[eq.P_KMIN]) * pv[eq.P_PMAX]
    tau = pv[eq.P_TAU]
    lam = -math.expm1(tau * rc * math.log1p(-pm)) / tau
    b = np.array([0.0, 0.0, -(rt - rc), -rc * al / 2.0])
    w = _omega_grid(mg.crossover_rad_s)
    mats = (
        1j * w[:, None, None] * np.eye(4)
        - lin.a0
        - lin.a1 * np.exp(-1j * w * lin.delay)[:, None, None]
    )
    h = np.linalg.solve(mats, np.broadcast_to(b, (len(w), 4))[..., None])[:, 0, 0]
    s = lam / model.n_flows * np.abs(h) ** 2
    var = np.trapezoid(s, w) / math.pi
    lags = np.arange(0.0, 20e-3, 10e-6) if lags is None else np.asarray(lags, float)
    acf = np.array([np.trapezoid(s * np.cos(w * t), w) for t in lags]) / math.pi / var
    sd = math.sqrt(var)
    pk = model.params.packet_size
    return {
        "q_star": q * pk,
        "std": sd * pk,
        "cnp_rate": lam,
        "underflow": float(norm.cdf((_EMPTY_PACKETS - q) / sd)),
        "above_kmax": float(norm.sf((pv[eq.P_KMAX] - q) / sd)),
        "lags": lags,
        "acf": acf,
    }


def acf_peak(lags, acf) -> tuple[float, float]:
    """(peak, lag) as the detector reads an autocorrelation: the first maximum after its
    first zero crossing; (0, nan) without a crossing."""
    acf = np.asarray(acf)
    neg = np.nonzero(acf < 0)[0]
    if not len(neg):
        return 0.0, math.nan
    z = neg[0]
    k = z + int(np.argmax(acf[z:]))
    return float(acf[k]), float(lags[k])


def cold_start(model) -> dict:
    """Initial state of the limit-cycle search (``x0`` of ``simulate``): empty queue, every
    flow at C/N with R_T = R_C, alpha at the fixed point (that of the extended ramp when there
    is no fixed point on the ramp)."""
    c = model.params.line_rate
    try:
        al = model.fixed_point()["alpha"]
    except ValueError:
        al = model.replace(ramp="extend").fixed_point()["alpha"]
    r = c / model.n_flows
    return {"q": 0.0, "alpha": al, "rate_current": r, "rate_target": r}


def fluid_trace(model, duration: float, dt: float, x0=None):
    """Nonlinear trajectory binned like the simulator's traces (bin means over (t-dt, t]).

    Returns
    -------
    t, q, thr : numpy.ndarray
        Bin end times (s), queue (bytes) and CP departure rate (bit/s).
    """
    ds = model.simulate(duration, x0=x0, record_dt=dt, method="compiled")
    t = ds.time.values
    q, rc = ds.q.values, ds.rate_current.values
    c = model.params.line_rate
    dep = np.where(q > 0, c, np.minimum(model.n_flows * rc, c))
    return t[1:], 0.5 * (q[1:] + q[:-1]), 0.5 * (dep[1:] + dep[:-1])


@dataclass(frozen=True)
class Regime:
    """What the fluid model predicts at one operating point (module docstring).

    Attributes
    ----------
    kind : str
        "stable" (linearly stable, the cold start converges), "bistable" (linearly stable,
        the cold start ends on a cycle), "unstable" (negative phase margin) or
        "no_equilibrium" (p* > pmax).
    phase_margin_deg : float
        Exact phase margin (nan without a fixed point on the ramp).
    escape : bool
        A bistable point whose noise reaches Kmax at least :data:`ESCAPE_MIN` of the time
        (the escape rule, chosen after seeing the simulator).
    oscillates : bool
        The prediction for the packet system: unstable, no_equilibrium, or bistable with
        escape.
    stats : dict
        The detector's quantities predicted for the packet queue (``mean``, ``std``,
        ``underflow``, ``acf_peak``, ``period_acf``, ``period_spread``, ``verdict``, ``thr``,
        ``above_kmax``): the cycle's trace measurement when it oscillates, else the Gaussian
        noise's.
    cycle : dict
        The detector's reading of the cold-start trajectory (with ``thr``, ``above_kmax``).
    noise : dict or None
        :func:`queue_noise` where the fixed point is linearly stable.
    """

    kind: str
    phase_margin_deg: float
    escape: bool
    oscillates: bool
    stats: dict
    cycle: dict
    noise: dict | None


def _noise_stats(noise: dict, model, qref: float) -> dict:
    """The detector's quantities of the Gaussian queue noise (same thresholds)."""
    peak, lag = acf_peak(noise["lags"], noise["acf"])
    stats = {"mean": noise["q_star"], "std": noise["std"], "underflow": noise["underflow"],
             "acf_peak": peak, "period_acf": lag, "thr": model.params.line_rate,
             "above_kmax": noise["above_kmax"], "period_spread": math.nan}  # fmt: skip
    if stats["underflow"] >= UNDERFLOW_MIN:
        stats["verdict"] = "underflow"
    elif peak >= ACF_MIN and stats["std"] >= AMPLITUDE_MIN * qref:
        stats["verdict"] = "oscillating"
    else:
        stats["verdict"] = "stable"
    return stats


def regime(model, qref: float, duration: float = 0.15, settle: float = 0.05,
           dt: float = 10e-6) -> Regime:  # fmt: skip
    """Classify ``model``'s operating point and predict the detector's quantities.

    Parameters
    ----------
    model : DCQCNFluidModel
        The model at the operating point (any options; symmetric form).
    qref : float
        The detector's amplitude reference (bytes), as for the simulated trace.
    duration, settle, dt : float
        Cold-start trajectory length, the part dropped before measuring, and the bin (s).

    Returns
    -------
    Regime
    """
    _, q, thr = fluid_trace(model, duration, dt, cold_start(model))
    w = int(round(settle / dt))
    cycle = oscillation(q[w:], dt, qref)
    cycle["thr"] = float(np.mean(thr[w:]))
    cycle["above_kmax"] = float(np.mean(q[w:] > model.params.kmax))
    try:
        pm = model.loop().margins().phase_margin_deg
    except ValueError:  # no fixed point on the ramp
        pm = math.nan
    noise = None
    if math.isnan(pm):
        kind = "no_equilibrium"
    elif pm <= 0:
        kind = "unstable"
    else:
        noise = queue_noise(model)
        kind = "stable" if cycle["verdict"] == "stable" else "bistable"
    escape = kind == "bistable" and noise["above_kmax"] >= ESCAPE_MIN
    oscillates = kind in ("unstable", "no_equilibrium") or escape
    stats = dict(cycle) if oscillates else _noise_stats(noise, model, qref)
    return Regime(kind, pm, escape, oscillates, stats, cycle, noise)
