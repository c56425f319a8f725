"""Oscillation of a sampled signal: the sustained-oscillation detector used on every queue
trace (packet simulations and model trajectories alike).

:func:`oscillation` classifies a queue trace on a uniform grid as stable, oscillating,
underflowing or idle (from its autocorrelation, its amplitude and the time it spends empty)
and measures the period (first autocorrelation peak, and mean crossings). Thresholds are
fixed constants, chosen before any comparison was run.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ACF_MIN", "AMPLITUDE_MIN", "EMPTY_BYTES", "UNDERFLOW_MIN", "class_group", "oscillation"]

#: Classification thresholds, fixed before any comparison was run (not tuned):
#: a *sustained* oscillation repeats (half of the queue variance recurs one period later,
#: ACF >= 0.5) and is large (queue std >= Qeq/4, well above the +-1 quantisation step noise
#: Fbmax/63 = Qeq(2w+1)/63 = Qeq/12.6 at w = 2); an *underflow* regime empties the queue for
#: at least 1 % of the time (throughput is lost) while it swings by more than one frame; a
#: queue that empties as often but stays within one frame is *idle*: no standing queue (an
#: uncongested port, or a set point under a few frames), neither an equilibrium nor a cycle.
ACF_MIN = 0.5
AMPLITUDE_MIN = 0.25
UNDERFLOW_MIN = 0.01
#: a bin counts as empty below one frame (1500 B, the default frame): the binned mean of a
#: queue that touches 0
EMPTY_BYTES = 1500.0


def _acf(x: np.ndarray) -> np.ndarray:
    x = x - x.mean()
    n = len(x)
    f = np.fft.rfft(x, 2 * n)
    r = np.fft.irfft(f * np.conj(f))[:n]
    return r / r[0] if r[0] > 0 else np.zeros(n)


def oscillation(
    q, dt: float, qeq: float, max_period: float | None = None, empty: float = EMPTY_BYTES
) -> dict:
    """Classify a queue trace as stable or sustained-oscillating and measure its period.

    Parameters
    ----------
    q : array
        Queue (bytes) on a uniform grid of step ``dt`` (s), settling already removed.
    qeq : float
        Set point (bytes): the amplitude threshold is ``AMPLITUDE_MIN * qeq``.
    max_period : float, optional
        Longest period searched (default: a third of the trace).
    empty : float, optional
        A bin whose mean queue is below this many bytes counts as empty: one frame
        (default :data:`EMPTY_BYTES`, a 1500-B frame; pass the frame size for others).

    Returns
    -------
    dict
        ``mean``, ``std`` (bytes), ``underflow`` (fraction of bins below one frame),
        ``acf_peak`` (first ACF maximum after its first zero crossing), ``period_acf`` (s,
        lag of that peak), ``period_zc`` (s, twice the mean spacing of mean-crossings of the
        queue smoothed over a tenth of ``period_acf``), ``period_spread`` (s, std of the
        full-cycle lengths between alternate crossings), ``verdict`` ("stable",
        "oscillating", "underflow" or "idle": empty at least ``UNDERFLOW_MIN`` of the time with
        a std below ``empty``, i.e. no queue to speak of; every class but "stable" is read as
        not stable).
    """
    q = np.asarray(q, dtype=float)
    out = dict(mean=float(q.mean()), std=float(q.std()),
               underflow=float(np.mean(q < empty)), acf_peak=0.0,
               period_acf=math.nan, period_zc=math.nan, period_spread=math.nan)  # fmt: skip
    a = _acf(q)
    lmax = len(q) // 3 if max_period is None else min(len(q) // 2, int(max_period / dt))
    neg = np.nonzero(a[:lmax] < 0)[0]
    if len(neg) and out["std"] > 0:
        z = neg[0]
        pk = z + int(np.argmax(a[z:lmax])) if lmax > z else z
        out["acf_peak"] = float(a[pk])
        out["period_acf"] = pk * dt
        w = max(1, int(round(0.1 * pk)))
        s = np.convolve(q - q.mean(), np.ones(w) / w, mode="valid")
        cross = np.nonzero(np.diff(np.sign(s)) != 0)[0]
        if len(cross) >= 3:
            full = (cross[2:] - cross[:-2]) * dt
            out["period_zc"] = float(np.mean(full))
            out["period_spread"] = float(np.std(full))
    if out["underflow"] >= UNDERFLOW_MIN:
        out["verdict"] = "underflow" if out["std"] >= empty else "idle"
    elif out["acf_peak"] >= ACF_MIN and out["std"] >= AMPLITUDE_MIN * qeq:
        out["verdict"] = "oscillating"
    else:
        out["verdict"] = "stable"
    return out


def class_group(verdict: str) -> str:
    """A class of :func:`oscillation` as two traces' classes are compared: "stable", "idle"
    (no standing queue) or "unstable" (oscillating and underflow alike:
    the irregular cycles of a large oscillation empty the queue at random instants)."""
    return verdict if verdict in ("stable", "idle") else "unstable"
