"""Harmonic balance: the amplitude and period of the QCN loop's limit cycle.

The describing-function method (Krylov-Bogoliubov; e.g. Slotine and Li, *Applied Nonlinear
Control*, ch. 5): let the CP's feedback oscillate, :math:`Fb(t) = Fb^* + A \\sin \\omega t`,
replace each static nonlinearity of the congestion point by the gain of its first harmonic,
and ask where the loop then reproduces the oscillation, :math:`1 + L_A(j\\omega) = 0`. For the
packet-fidelity model the CP has two outputs, both static functions of Fb taken over the
sampled-queue noise (:func:`~._qcn_cp.cp_signals`): the CNM probability per frame
:math:`\\kappa(Fb)` -- the one-sided switch "a CNM iff Fb < 0" and the sampling table -- and the
cut flux :math:`f(Fb) = \\kappa(Fb)\\,cut(Fb)` -- the 6-bit quantiser, its full-scale cap and
the MIN_DEC limit of the cut. Their describing functions :math:`N_\\kappa(A)`,
:math:`N_f(A)` scale the two channels of the reaction points' linear response (the
renewal population, :func:`~._qcn_stationary.response`), so

.. math::

    L_A(s) = Q(s)\\,e^{-s\\,rtt}\\,\\Bigl[\\bigl(H_K - \\tfrac{cut^*}{\\kappa^*} H_U\\bigr)
             N_\\kappa(A) + \\tfrac{1}{\\kappa^*} H_U\\,N_f(A)\\Bigr],

with :math:`Q(s)` the queue's integrator, the CP's Qoff + w Qdelta and the rate limiter's
half gap (:meth:`~.qcn_packet.QCNPacketModel.transfer`). At small A the describing functions
are the slopes and :math:`L_A` is the linearised loop. A limit cycle is an amplitude where
the loop gain at its -180 deg crossing is one. The method neglects the higher harmonics and
the queue's floor at zero: when the predicted queue amplitude exceeds the mean queue, the
cycle empties the queue and the estimate is rougher (:attr:`LimitCycle.empties_queue`).
Because the CP's nonlinearities are expansive (the one-sided CNM switch and the sampling
table raise the gain with the amplitude), the cycles of the many-flow regime are limited by
that floor and by the rate limiters, which the method leaves out: there the harmonic balance
finds no cycle although the loop oscillates. ``method="trajectory"`` measures the cycle of the
model itself instead: its nonlinear trajectory from a perturbed equilibrium, after the
transient, with the validation's definitions (the period rows' mean full-cycle length between
mean crossings over 0.3-3 s, which an irregular cycle needs: its autocorrelation peak can
pick a multiple of the cycle; amplitude sqrt(2) x the standard deviation of the queue).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from qcnmodel.units import parse_time

__all__ = ["LimitCycle", "limit_cycle"]


@dataclass(frozen=True)
class LimitCycle:
    """Harmonic-balance prediction of the loop's limit cycle.

    Attributes
    ----------
    exists : bool
        A stable solution of the harmonic balance was found in the amplitude range: the loop
        gain at the -180 deg crossing falls through 1 as the amplitude grows (Loeb's
        criterion). A gain that rises through 1 marks a threshold amplitude, not a cycle.
    period_s : float
        Period of the cycle, s (nan if none).
    amplitude_fb_bytes : float
        Amplitude A of Fb, bytes.
    amplitude_queue_bytes : float
        Amplitude of the queue, bytes (A divided by the CP's |1 + w - w e^{-j w Ts}|).
    mean_queue_bytes : float
        The equilibrium queue the cycle is centred on, bytes.
    empties_queue : bool
        The cycle's queue amplitude exceeds the mean queue (the floor at zero, neglected by
        the method, is reached).
    amplitudes, gains, frequencies : ndarray
        The scan: Fb amplitude A (bytes), the loop gain |L_A| at its -180 deg crossing and
        that crossing's frequency (rad/s); a limit cycle where the gain is 1 (empty for
        ``method="trajectory"``).
    model : str
        Which model produced it.
    method : str
        ``"harmonic-balance"`` or ``"trajectory"``.
    trace : object
        The trajectory (xarray Dataset) for ``method="trajectory"``.
    """

    exists: bool
    period_s: float
    amplitude_fb_bytes: float
    amplitude_queue_bytes: float
    mean_queue_bytes: float
    empties_queue: bool
    amplitudes: np.ndarray = field(repr=False)
    gains: np.ndarray = field(repr=False)
    frequencies: np.ndarray = field(repr=False)
    model: str = ""
    method: str = "harmonic-balance"
    trace: object = field(default=None, repr=False)

    def plot(self, ax=None):
        """The loop gain at the -180 deg crossing against the amplitude (the cycle where it
        is one) and the crossing's period (:func:`qcnmodel.analysis.limit_cycle_plot`).

        For ``method="trajectory"`` the plot is instead the model's queue over time with the
        equilibrium queue and the measured cycle in the title.

        Parameters
        ----------
        ax : sequence of matplotlib Axes, optional
            Two axes (gain, period) for the harmonic balance; for a trajectory one Axes (or a
            sequence whose first is used). A new figure if omitted.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from qcnmodel.analysis.limit_cycle_plot import plot_harmonic_balance

        return plot_harmonic_balance(self, ax=ax)


def _describing(fn, fb0: float, amps: np.ndarray, n: int = 256) -> np.ndarray:
    """First-harmonic gain of fn(fb0 + A sin t) for each amplitude A (midpoint rule)."""
    th = (np.arange(n) + 0.5) * (2 * np.pi / n)
    out = np.empty(len(amps))
    for i, a in enumerate(amps):
        vals = np.array([fn(fb0 + a * math.sin(t)) for t in th])
        out[i] = 2.0 * np.mean(vals * np.sin(th)) / a
    return out


#: the trajectory's transient, dropped before its cycle is measured (s; at most half the run)
_SETTLE = 0.3


def _trajectory_cycle(pm, duration) -> LimitCycle:
    from qcnmodel.analysis.timeseries import oscillation

    fp = pm.fixed_point()
    ds = pm.simulate(duration, start="equilibrium", x0={"q": 1.5 * fp["q"]},
                     record_dt=50e-6)  # fmt: skip
    settle = min(_SETTLE, duration / 2)  # the transient from the perturbed equilibrium
    q = ds.q.values[int(round(settle / 50e-6)) :]
    st = oscillation(q, 50e-6, pm.params.qeq)
    exists = st["verdict"] != "stable"
    return LimitCycle(exists, st["period_zc"] if exists else math.nan,
                      math.nan, math.sqrt(2.0) * st["std"] if exists else math.nan,
                      float(fp["q"]), st["underflow"] > 0.0, np.zeros(0), np.zeros(0),
                      np.zeros(0), "qcn packet", "trajectory", ds)  # fmt: skip


def limit_cycle(model, amplitudes=None, method: str | None = None,
                duration: float = 3.0) -> LimitCycle:  # fmt: skip
    """The limit cycle of ``model`` (the packet-fidelity QCN model) at its RTT.

    Parameters
    ----------
    model : QCNFluidModel or QCNPacketModel
        At ``fidelity="packet"``.
    amplitudes : array_like, optional
        Fb amplitudes to scan, bytes (default: 40 values from a tenth of the Fb noise to
        Fb_max); harmonic balance only.
    method : {"harmonic-balance", "trajectory"}, optional
        The describing-function prediction, or the model's own nonlinear trajectory.
        Default: the trajectory where the model judges its stability by its trajectories
        (a congested port: the describing functions would linearise the mean field, which
        misses the packets' boundary at few and at tens of flows) and no ``amplitudes`` are
        given, else the harmonic balance.
    duration : float
        Simulated time of ``method="trajectory"`` (s); measured after its first 0.3 s (or
        its second half, if shorter than 0.6 s). The default, 3 s, holds hundreds of a few
        flows' cycles of a few ms and tens of a slow mode's of 50-100 ms.

    Returns
    -------
    LimitCycle
    """
    from qcnmodel.models import _qcn_cp as cp
    from qcnmodel.models._qcn_stationary import _signals, response

    pm = getattr(model, "engine", model)
    if type(pm).__name__ != "QCNPacketModel":
        raise ValueError("limit_cycle: available for the packet-fidelity QCN model "
                         "(QCNFluidModel(fidelity='packet'))")  # fmt: skip
    if method is None:
        from qcnmodel.analysis.boundary import judged_by_trajectories

        trajectories = judged_by_trajectories(pm)
        method = "trajectory" if trajectories and amplitudes is None else "harmonic-balance"
    if method not in ("harmonic-balance", "trajectory"):
        raise ValueError(f"method: 'harmonic-balance' or 'trajectory', got {method!r}")
    if method == "trajectory" and amplitudes is not None:
        raise ValueError("amplitudes: only method='harmonic-balance' scans amplitudes")
    duration = parse_time(duration, "duration")
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration: must be in (0, inf) s, got {duration!r}")
    if not pm.congested:  # an open loop: no feedback, no cycle
        empty = np.zeros(0)
        return LimitCycle(False, math.nan, math.nan, math.nan, 0.0, False, empty, empty, empty,
                          "qcn packet (no congestion)", method)  # fmt: skip
    if method == "trajectory":
        return _trajectory_cycle(pm, duration)
    fb0, st = pm._equilibrium
    k = st.k
    fr = float(pm.params.frame_size)
    target = k[cp.K_C] / k[cp.K_N]
    if amplitudes is None:
        amps = np.geomspace(max(0.1 * k[cp.K_SIGMA], 0.05), k[cp.K_FBMAX], 40)
    else:
        amps = np.asarray(amplitudes, float) / fr
        if amps.ndim != 1 or amps.size < 2 or not np.all(np.isfinite(amps) & (amps > 0)):
            raise ValueError(f"amplitudes: must be at least two finite Fb amplitudes > 0 "
                             f"bytes, got {amplitudes!r}")  # fmt: skip

    def kappa(fb):
        return _signals(k, fb, target)[0]

    def flux(fb):
        kk, cc = _signals(k, fb, target)
        return kk * cc

    n_k = _describing(kappa, fb0, amps)
    n_f = _describing(flux, fb0, amps)
    w = np.geomspace(1.0, 3e5, 1500)
    s = 1j * w
    hk, hu = response(st, s)
    q_part = pm.transfer(s) / (hk * _slope(kappa, fb0, k) + hu * _slope(lambda f: _signals(
        k, f, target)[1], fb0, k))  # Q(s): transfer() without the RP channel  # fmt: skip
    ch_k = (hk - hu * st.cut / st.kappa) * q_part * np.exp(-s * pm.rtt)
    ch_f = hu / st.kappa * q_part * np.exp(-s * pm.rtt)
    gains = np.full(len(amps), np.nan)
    freqs = np.full(len(amps), np.nan)
    for i in range(len(amps)):
        loop = ch_k * n_k[i] + ch_f * n_f[i]
        ph = np.unwrap(np.angle(loop))
        lev = np.floor((ph + np.pi) / (2 * np.pi))
        idx = np.nonzero(lev[1:] != lev[:-1])[0]
        if idx.size:
            j = idx[np.argmax(np.abs(loop[idx]))]
            gains[i] = abs(loop[j])
            freqs[i] = w[j]
    ok = np.isfinite(gains)
    cross = np.nonzero(ok[1:] & ok[:-1] & (np.sign(gains[1:] - 1) != np.sign(gains[:-1] - 1)))[0]
    q_mean = (k[cp.K_QEQ] - k[cp.K_ENQ] - fb0) * fr
    name = "qcn packet"
    # a cycle is where the gain falls through 1 as the amplitude grows (Loeb's criterion: a
    # larger swing then meets less gain and shrinks back); a rising crossing is a threshold
    # (a larger swing grows, a smaller one decays), no cycle the loop settles on
    falling = [i for i in cross if gains[i + 1] < gains[i]]
    if not falling:
        return LimitCycle(False, math.nan, math.nan, math.nan, q_mean, False, amps * fr, gains,
                          freqs, name)  # fmt: skip
    i = falling[-1]  # the stable cycle of the largest amplitude
    x0, x1 = math.log(amps[i]), math.log(amps[i + 1])
    g0, g1 = math.log(gains[i]), math.log(gains[i + 1])
    a_star = math.exp(x0 + (0 - g0) * (x1 - x0) / (g1 - g0))
    w_star = math.exp(np.interp(math.log(a_star), [x0, x1], [math.log(freqs[i]),
                                                             math.log(freqs[i + 1])]))  # fmt: skip
    xs = 1j * w_star * k[cp.K_TS]
    jit = pm.params.jitter
    phi = (np.exp(-xs * (1 - jit)) - np.exp(-xs * (1 + jit))) / (2 * jit * xs) if jit > 0 else (
        np.exp(-xs))  # fmt: skip
    aq = a_star * fr / abs(1 + k[cp.K_W] - k[cp.K_W] * phi)
    return LimitCycle(True, 2 * math.pi / w_star, a_star * fr, float(aq), q_mean, aq > q_mean,
                      amps * fr, gains, freqs, name)  # fmt: skip


def _slope(fn, fb0, k):
    from qcnmodel.models import _qcn_cp as cp

    h = 1e-4 * max(k[cp.K_SIGMA], 1.0)
    return (fn(fb0 + h) - fn(fb0 - h)) / (2 * h)
