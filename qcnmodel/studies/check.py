"""A standards editor's check of a parameter set over operating ranges (``qcnmodel check``).

Given a :class:`~qcnmodel.params.QCNParams` and ranges of RTT and flow count N, the linearised
QCN fluid loop (:mod:`qcnmodel.models.qcn`, exact delay) is evaluated over the whole range grid:

* worst-case phase, gain and delay margins over the grid;
* the critical RTT for each N (largest RTT with a positive phase margin);
* a verdict: **stable** when every grid point is closed-loop stable with a phase margin of at
  least ``pm_threshold`` degrees; **marginal** when every point is stable but some have less
  margin than that; **unstable** when some point is unstable;
* recommendations: for each of W, Ps and Gd, the value (others fixed) that maximises the
  worst-case delay margin over the ranges, i.e. ``min over N of critical_rtt(N) - rtt_max``,
  searched on a log grid of candidates and refined by bounded scalar minimisation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from qcnmodel import config
from qcnmodel._errors import unknown_name
from qcnmodel.params import QCNParams

__all__ = ["CheckRanges", "CheckResult", "check_params", "parse_range"]


def parse_range(text: str, parser, field: str, integer: bool = False) -> tuple[float, float]:
    """Parse ``"lo..hi"`` with a unit parser; ``lo`` must be positive and below ``hi``."""
    if not isinstance(text, str) or ".." not in text:
        raise ValueError(f"{field}: expected a range 'lo..hi' (e.g. 2us..1ms), got {text!r}")
    lo_s, hi_s = text.split("..", 1)
    lo, hi = parser(lo_s.strip(), field), parser(hi_s.strip(), field)
    if integer and (lo != int(lo) or hi != int(hi)):
        raise ValueError(f"{field}: range ends must be whole numbers, got {text!r}")
    if not (0 < lo <= hi):
        raise ValueError(f"{field}: need 0 < lo <= hi, got {text!r}")
    return lo, hi


def _default(key: str):
    return field(default_factory=lambda: config.defaults[key])


@dataclass(frozen=True)
class CheckRanges:
    """Operating ranges: RTT in seconds, flows as whole numbers, and the grid resolution.

    Defaults come from :mod:`qcnmodel.config` (``studies.check_*``) when the object is made:
    RTT 2 us .. 1 ms, N 1 .. 100, 60 x 12 points, phase-margin threshold 30 deg.
    """

    rtt: tuple[float, float] = _default("studies.check_rtt")
    flows: tuple[int, int] = _default("studies.check_flows")
    n_rtt: int = _default("studies.check_n_rtt")
    n_flows: int = _default("studies.check_n_flows")
    pm_threshold: float = _default("studies.check_pm_threshold")

    def __post_init__(self) -> None:
        if not (0 < self.rtt[0] <= self.rtt[1]):
            raise ValueError(f"rtt-range: need 0 < lo <= hi, got {self.rtt}")
        if not (1 <= self.flows[0] <= self.flows[1]):
            raise ValueError(f"flows: need 1 <= lo <= hi, got {self.flows}")
        if not (0 <= self.pm_threshold < 90):
            raise ValueError(f"pm-threshold: must be in [0, 90) degrees, got {self.pm_threshold}")

    def rtt_grid(self) -> np.ndarray:
        """Log-spaced RTT values (s)."""
        return np.geomspace(self.rtt[0], self.rtt[1], self.n_rtt)

    def flow_grid(self) -> np.ndarray:
        """Log-spaced whole flow counts, ends included."""
        lo, hi = self.flows
        return np.unique(np.round(np.geomspace(lo, hi, self.n_flows)).astype(int))


@dataclass(frozen=True)
class CheckResult:
    """Outcome of :func:`check_params` (see the module docstring)."""

    verdict: str
    pm_threshold_deg: float
    worst_phase_margin_deg: float
    worst_gain_margin_db: float
    worst_delay_margin_s: float
    worst_point: dict
    critical_rtt_s: dict
    recommendations: list = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 stable, 1 marginal or unstable."""
        return 0 if self.verdict == "stable" else 1

    def to_dict(self) -> dict:
        """Plain dict for JSON output."""
        return {
            "verdict": self.verdict,
            "pm_threshold_deg": self.pm_threshold_deg,
            "worst_phase_margin_deg": self.worst_phase_margin_deg,
            "worst_gain_margin_db": self.worst_gain_margin_db,
            "worst_delay_margin_s": self.worst_delay_margin_s,
            "worst_point": self.worst_point,
            "critical_rtt_s": {str(k): v for k, v in self.critical_rtt_s.items()},
            "recommendations": self.recommendations,
        }


#: the models a check can use (QCN parameter sets)
CHECK_MODELS = ("qcn", "fopdt")


def _model(params: QCNParams, model: str, variant: str | None = None):
    from qcnmodel.models import build_model

    if model not in CHECK_MODELS:
        raise unknown_name("model", "model", model, CHECK_MODELS, sort=False)
    return build_model(model, params, variant)


def _worst_delay_margin(model, ranges: CheckRanges) -> float:
    """min over N of (critical RTT(N) - rtt_max): the objective of the recommendations."""
    from qcnmodel.analysis.margins import critical_rtt

    worst = np.inf
    for n in ranges.flow_grid():
        try:
            m = model.replace(n_flows=int(n))
            loop = m.loop()
        except ValueError:
            return -np.inf
        worst = min(worst, critical_rtt(m, loop=loop) - ranges.rtt[1])
    return worst


def _recommend(
    params: QCNParams, model_name: str, ranges: CheckRanges, variant: str | None = None
) -> list[dict]:
    recs = []
    for name, (lo, hi) in config.defaults["studies.check_search"].items():

        def objective(logx, name=name):
            try:
                m = _model(params.replace(**_param_change(params, name, float(np.exp(logx)))),
                           model_name, variant)  # fmt: skip
                m = m.replace(ps=float(np.exp(logx))) if name == "ps" else m
            except ValueError:
                return np.inf
            return -_worst_delay_margin(m, ranges)

        xs = np.linspace(np.log(lo), np.log(hi), config.defaults["studies.check_candidates"])
        vals = np.array([objective(x) for x in xs])
        k = int(np.argmin(vals))
        a, b = xs[max(k - 1, 0)], xs[min(k + 1, len(xs) - 1)]
        res = optimize.minimize_scalar(objective, bounds=(a, b), method="bounded",
                                       options={"xatol": 1e-3})  # fmt: skip
        best_x, best_val = (res.x, res.fun) if res.fun <= vals[k] else (xs[k], vals[k])
        value = float(np.exp(best_x))
        current = _current(params, name)
        recs.append(
            {
                "parameter": name,
                "current": current,
                "recommended": value,
                "worst_delay_margin_s": float(-best_val),
                "stable_over_ranges": bool(-best_val > 0),
                "at_search_bound": bool(
                    min(abs(best_x - np.log(lo)), abs(best_x - np.log(hi))) < 1e-2
                ),
                "search_interval": [lo, hi],
            }
        )
    return recs


def _param_change(params: QCNParams, name: str, value: float) -> dict:
    return {} if name == "ps" else {name: value}


def _current(params: QCNParams, name: str) -> float:
    return float(params.ps if name == "ps" else getattr(params, name))


def check_params(
    params: QCNParams,
    ranges: CheckRanges | None = None,
    model: str = "qcn",
    recommend: bool = True,
    variant: str | None = None,
) -> CheckResult:
    """Worst-case margins, critical RTT per N, verdict and recommendations.

    Parameters
    ----------
    params : QCNParams
    ranges : CheckRanges, optional
        RTT and N ranges (default 2 us .. 1 ms and 1 .. 100) and the phase-margin threshold.
    model : {"qcn", "fopdt"}
        Which linearised model to use (default the QCN fluid model).
    variant : str, optional
        A named configuration of that model (:data:`qcnmodel.models.MODELS`).
    recommend : bool
        Search W, Ps and Gd for the best worst-case delay margin.

    Returns
    -------
    CheckResult
    """
    from qcnmodel.analysis.margins import critical_rtt, extra_delay, margins_over_delay

    ranges = ranges or CheckRanges()
    base = _model(params, model, variant)
    taus = ranges.rtt_grid()
    worst_pm, worst_gm, worst_dm = np.inf, np.inf, np.inf
    worst_point: dict = {}
    all_stable = True
    crit: dict[int, float] = {}
    for n in ranges.flow_grid():
        model_n = base.replace(n_flows=int(n))
        loop = model_n.loop()
        m = margins_over_delay(loop, taus + extra_delay(model_n))  # loop delays of the RTTs
        pm = np.asarray(m.phase_margin_deg, float)
        k = int(np.argmin(pm))
        if pm[k] < worst_pm:
            worst_pm = float(pm[k])
            worst_point = {"n_flows": int(n), "rtt_s": float(taus[k])}
        worst_gm = min(worst_gm, float(np.min(m.gain_margin_db)))
        worst_dm = min(worst_dm, float(np.min(m.delay_margin_s)))
        all_stable &= bool(np.all(m.stable))
        crit[int(n)] = float(critical_rtt(model_n, loop=loop))
    if not all_stable or worst_pm <= 0:
        verdict = "unstable"
    elif worst_pm < ranges.pm_threshold:
        verdict = "marginal"
    else:
        verdict = "stable"
    recs = _recommend(params, model, ranges, variant) if recommend else []
    return CheckResult(
        verdict=verdict,
        pm_threshold_deg=float(ranges.pm_threshold),
        worst_phase_margin_deg=worst_pm,
        worst_gain_margin_db=worst_gm,
        worst_delay_margin_s=worst_dm,
        worst_point=worst_point,
        critical_rtt_s=crit,
        recommendations=recs,
    )
