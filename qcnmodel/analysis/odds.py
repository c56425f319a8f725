"""The odds that a stochastic model's trajectories turn unstable, over RTT, and where they
pass one half (:mod:`qcnmodel.analysis.boundary` searches for that crossing; these give the
odds over a grid and the crossing of given odds), and the counts at one RTT that a search
takes (:func:`trajectory_odds`, each counted once per process).

Like the rest of this layer it knows no protocol: a model is anything with ``rtt``,
``.replace(rtt=...)`` and ``.trajectory_verdicts()``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["odds_crossing", "trajectory_odds", "unstable_fraction"]


#: the detector's classes of a run that empties the queue (an idle run is counted with them:
#: it is not stable either, :func:`qcnmodel.analysis.timeseries.oscillation`)
_EMPTIES = ("underflow", "idle")


def unstable_fraction(model, rtts, seeds: int | None = None, progress: bool = False):
    """Fraction of a stochastic model's runs that oscillate or underflow, at each RTT.

    Parameters
    ----------
    model : model with ``trajectory_verdicts``
        E.g. ``QCNFluidModel(p, n_flows=20)`` (packet fidelity): ``model.replace(rtt=r)
        .trajectory_verdicts(seeds)`` gives the detector's class of each run.
    rtts : array_like
        RTTs (s), each finite and > 0 (unit strings accepted).
    seeds : int, optional
        Runs per RTT (seeds 0 .. seeds - 1; default the verdict's,
        ``config.defaults["models.verdict_run"]["seeds"]``).
    progress : bool
        Show a progress bar (one step per RTT).

    Returns
    -------
    xarray.DataArray
        ``unstable_fraction`` over ``rtt``, with ``oscillating`` and ``underflow`` (run
        counts) as coordinates and ``seeds`` in the attributes. The model's verdict
        (``trajectory_unstable``) is "unstable" where the fraction exceeds one half.

    Notes
    -----
    The runs are those of the verdict (same seeds, length and detector), every one run.
    Plot with :func:`qcnmodel.analysis.plot.plot_unstable_fraction`.
    """
    import xarray as xr

    from qcnmodel.units import parse_time

    if not hasattr(model, "replace") or not hasattr(model, "trajectory_verdicts"):
        raise TypeError(f"model: {type(model).__name__} has no trajectory_verdicts(); the "
                        "odds need a model with stochastic trajectories (e.g. QCNFluidModel "
                        "at packet fidelity)")  # fmt: skip
    from qcnmodel import config

    values = np.atleast_1d(np.asarray([rtts] if isinstance(rtts, str) else rtts, object))
    cap = int(config.defaults["analysis.map_max_points"])
    if values.ndim != 1 or values.size > cap:
        raise ValueError(f"rtts: need a 1-D list of at most {cap} RTTs "
                         f"(analysis.map_max_points), got shape {values.shape}")  # fmt: skip
    grid = np.array([parse_time(r, "rtts") for r in values.tolist()], float)
    if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ValueError(f"rtts: need at least one RTT, each finite and > 0 s, got {rtts!r}")
    osc, under = np.zeros(grid.size, int), np.zeros(grid.size, int)
    n = 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=grid.size, desc="runs per RTT", unit="RTT")
    try:
        for i, r in enumerate(grid.tolist()):
            verdicts = model.replace(rtt=r).trajectory_verdicts(seeds)  # checks seeds
            n = len(verdicts)
            under[i] = sum(v in _EMPTIES for v in verdicts)
            osc[i] = sum(v != "stable" and v not in _EMPTIES for v in verdicts)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return xr.DataArray((osc + under) / n, dims=("rtt",),
                        coords={"rtt": ("rtt", grid, {"units": "s"}),
                                "oscillating": ("rtt", osc), "underflow": ("rtt", under)},
                        name="unstable_fraction",
                        attrs={"seeds": n, "long_name": "runs unstable (fraction)"})  # fmt: skip


def odds_crossing(odds, rtts=None, full: bool = False, weights=None):
    """The RTT at which a model's odds of an unstable run pass one half.

    The odds counted at each RTT are noisy (binomial); they are fitted by the closest
    non-decreasing sequence (isotonic regression, equal weights: the boundary is assumed to be
    crossed once, as the RTT grows), and the crossing is interpolated linearly in log RTT
    between the last RTT whose fit is at most one half and the next.

    Parameters
    ----------
    odds : array_like or xarray.DataArray
        Fraction of unstable runs at each RTT, in [0, 1] (e.g. :func:`unstable_fraction`'s
        result, whose ``rtt`` coordinate is used when ``rtts`` is not given).
    rtts : array_like, optional
        The RTTs (s, or unit strings such as ``"250us"``), finite, > 0 and distinct; any
        order.
    full : bool
        Also return the bracket: the RTTs on either side of the crossing.
    weights : array_like, optional
        The isotonic fit's weight of each RTT's odds, e.g. the runs counted there (default
        equal), each finite and > 0.

    Returns
    -------
    float or (float, float, float)
        The crossing (s): ``0.0`` if the fit exceeds one half already at the smallest RTT,
        ``inf`` if it never does. With ``full``: ``(crossing, lo, hi)``, ``lo`` the largest
        RTT whose fit is at most one half (0 if none) and ``hi`` the next (inf if none).
    """
    from scipy.optimize import isotonic_regression

    if rtts is None:
        if not hasattr(odds, "coords") or "rtt" not in odds.coords:
            raise ValueError("rtts: needed unless odds is a DataArray with an 'rtt' coordinate")
        rtts = odds["rtt"].values
    from qcnmodel.units import parse_time

    values = np.asarray([rtts] if isinstance(rtts, str) else rtts, object)
    try:
        f = np.asarray(odds, float)
    except (TypeError, ValueError):
        raise ValueError(f"odds: need fractions in [0, 1], got {odds!r}") from None
    if values.ndim != 1 or f.ndim != 1:
        raise ValueError(f"odds, rtts: need two 1-D lists, got shapes {f.shape} and "
                         f"{values.shape}")  # fmt: skip
    r = np.array([parse_time(v, "rtts") for v in values.tolist()], float)
    if r.size == 0 or r.size != f.size:
        raise ValueError(f"odds, rtts: need as many odds as RTTs (at least one), got "
                         f"{f.size} and {r.size}")  # fmt: skip
    if not np.all(np.isfinite(r) & (r > 0)) or np.unique(r).size != r.size:
        raise ValueError(f"rtts: need distinct RTTs, each finite and > 0 s, got {r.tolist()!r}")
    if not np.all((f >= 0) & (f <= 1)):
        raise ValueError(f"odds: need fractions in [0, 1], got {f.tolist()!r}")
    if weights is None:
        wts = np.ones(r.size)
    else:
        wts = np.asarray(weights, float)
        if wts.shape != r.shape or not np.all(np.isfinite(wts) & (wts > 0)):
            raise ValueError(f"weights: need one finite weight > 0 per RTT, got {weights!r}")
    order = np.argsort(r)
    r, f = r[order], isotonic_regression(f[order], weights=wts[order]).x
    above = np.flatnonzero(f > 0.5)
    if above.size == 0:
        out = (math.inf, float(r[-1]), math.inf)
    elif above[0] == 0:
        out = (0.0, 0.0, float(r[0]))
    else:
        i = int(above[0])
        x = (0.5 - f[i - 1]) / (f[i] - f[i - 1])
        cross = math.exp(math.log(r[i - 1]) + x * math.log(r[i] / r[i - 1]))
        out = (cross, float(r[i - 1]), float(r[i]))
    return out if full else out[0]


#: the counts of :func:`trajectory_odds` in this process, by model (at its RTT) and count
_ODDS: dict = {}
#: counts kept in :data:`_ODDS` at most (the oldest are dropped first)
_ODDS_SIZE = 4096


def trajectory_odds(model, seeds: int | None = None, unanimous: int | None = 5
                    ) -> tuple[int, int]:  # fmt: skip
    """``model.trajectory_odds(seeds, unanimous)``, counted once per process.

    The runs are deterministic (seeds 0, 1, ... of the model at its RTT), so the same count
    asked again, e.g. the first count at the start of a stable band, which the band's climb
    and the search from that start both take, is a lookup. The key is the model itself (its
    parameters and RTT), the count's settings and every model setting of
    :mod:`qcnmodel.config` (``models.*``: the runs' length and seeds, the integration's
    method and noise); a model that cannot be hashed is counted every time."""
    from qcnmodel import config

    try:
        runs = repr(sorted((k, v) for k, v in config.defaults.items() if k.startswith("models.")))
        key = (model, seeds, unanimous, runs)
        hash(key)
    except (TypeError, ValueError, AttributeError):
        return model.trajectory_odds(seeds, unanimous)
    if key not in _ODDS:
        if len(_ODDS) >= _ODDS_SIZE:
            _ODDS.pop(next(iter(_ODDS)))
        _ODDS[key] = model.trajectory_odds(seeds, unanimous)
    return _ODDS[key]
