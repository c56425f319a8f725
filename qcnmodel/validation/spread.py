"""Per-flow rate spread: N reaction points driven by the packet-fidelity model's CP signals.

The packet-fidelity model (:class:`~qcnmodel.models.qcn_packet.QCNPacketModel`) is a mean
field: it predicts the population's mean rate, not how far single flows stray from it. The
spread follows from the same model by driving N *individual* reaction points with what the
model's congestion point sends: at each frame a flow is sampled and receives a CNM as the
model's CP decides (the fluid Fb of the model's own trajectory plus the sampled-queue noise,
the 6-bit quantiser, the sampling table), and each flow runs the exact RP rules (the
simulator's compiled rules, :mod:`qcnmodel.sim.protocols.qcn`). The flows start like the
packet simulation's (idle rate limiters at the offered rate) and the spread is measured over
the same window: the coefficient of variation across flows of their window-mean rates.
Nothing here is taken from the packet simulation.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from qcnmodel.sim.protocols import qcn as R
from qcnmodel.sim.rng import stream_key, uniform01

__all__ = ["flow_spread", "predicted_spread"]

_STREAM_CNM = 11  # random streams of this driver (not used by the simulator's rules)


@nb.njit(cache=True)
def _drive(prm, n, frame_bits, offered, fb, dt_cp, sigma, fbmax, fs, table, fixed_p,
           t_end, w0, w1, seed):  # fmt: skip
    rp = np.zeros((R.RP_NFIELDS, n))
    rp[R.RP_DEADLINE, :] = -1.0
    sent = np.zeros(n)
    nbin = fb.shape[0]
    for i in range(n):
        t = 0.0
        ctr = 0
        while t < t_end:
            active = rp[R.RP_ACTIVE, i] > 0.0
            cr = rp[R.RP_CR, i] if active else prm[R.RPP_C]
            rate = min(cr, offered)
            tn = t + frame_bits / rate
            while (rp[R.RP_ACTIVE, i] > 0.0 and rp[R.RP_DEADLINE, i] >= 0.0
                   and rp[R.RP_DEADLINE, i] * 1e-9 <= tn):  # fmt: skip
                gen = np.int64(rp[R.RP_TIMER_GEN, i])
                if R.rp_on_timer(rp, i, gen, np.int64(rp[R.RP_DEADLINE, i]), seed, prm) < 0:
                    break
            if tn > w0 and t < w1:
                sent[i] += rate * (min(tn, w1) - max(t, w0))
            t = tn
            now = np.int64(t * 1e9)
            R.rp_on_tx(rp, i, frame_bits / 8.0, now, seed, prm)
            k = int(t / dt_cp)
            if k >= nbin:
                k = nbin - 1
            u1 = uniform01(seed, stream_key(_STREAM_CNM, i), np.int64(ctr))
            u2 = uniform01(seed, stream_key(_STREAM_CNM, i), np.int64(ctr + 1))
            u3 = uniform01(seed, stream_key(_STREAM_CNM, i), np.int64(ctr + 2))
            ctr += 3
            z = math.sqrt(-2.0 * math.log(max(u1, 1e-300))) * math.cos(2.0 * math.pi * u2)
            v = -fb[k] + sigma * z  # -Fb at this sample
            if v <= 0.0:
                continue
            q = int(fs * min(v, fbmax) / fbmax)
            p = fixed_p if fixed_p > 0.0 else table[min(q * 8 // (int(fs) + 1), 7)]
            if u3 < p:
                R.rp_on_cnm(rp, i, q, 0, now, seed, prm)
    return sent / (w1 - w0)


@nb.njit(cache=True)
def _drive_countdown(prm, n, frame_bits, offered, fb, dt_cp, sigma, fbmax, fs, intervals,
                     fixed_interval, jitter, t_end, w0, w1, seed):  # fmt: skip
    """As :func:`_drive`, with the CP's own sampling: a countdown of arriving bytes over all
    flows, reloaded at every sample with the table's interval (or the fixed one) times U."""
    rp = np.zeros((R.RP_NFIELDS, n))
    rp[R.RP_DEADLINE, :] = -1.0
    sent = np.zeros(n)
    nxt = np.zeros(n)
    for i in range(n):
        nxt[i] = (i + 0.5) * frame_bits / min(prm[R.RPP_C], offered) / n
    nbin = fb.shape[0]
    frame = frame_bits / 8.0
    ctr = 0
    u0 = uniform01(seed, stream_key(_STREAM_CNM, n), np.int64(0))
    countdown = (fixed_interval if fixed_interval > 0.0 else intervals[0]) * (
        1.0 + jitter * (2.0 * u0 - 1.0)
    )
    while True:
        i = int(np.argmin(nxt))
        t = nxt[i]
        if t >= t_end:
            break
        while (rp[R.RP_ACTIVE, i] > 0.0 and rp[R.RP_DEADLINE, i] >= 0.0
               and rp[R.RP_DEADLINE, i] * 1e-9 <= t):  # fmt: skip
            gen = np.int64(rp[R.RP_TIMER_GEN, i])
            if R.rp_on_timer(rp, i, gen, np.int64(rp[R.RP_DEADLINE, i]), seed, prm) < 0:
                break
        now = np.int64(t * 1e9)
        R.rp_on_tx(rp, i, frame, now, seed, prm)
        countdown -= frame
        if countdown <= 0.0:
            k = min(int(t / dt_cp), nbin - 1)
            u1 = uniform01(seed, stream_key(_STREAM_CNM, n), np.int64(ctr + 1))
            u2 = uniform01(seed, stream_key(_STREAM_CNM, n), np.int64(ctr + 2))
            u3 = uniform01(seed, stream_key(_STREAM_CNM, n), np.int64(ctr + 3))
            ctr += 3
            z = math.sqrt(-2.0 * math.log(max(u1, 1e-300))) * math.cos(2.0 * math.pi * u2)
            v = -fb[k] + sigma * z
            q = int(fs * min(v, fbmax) / fbmax) if v > 0.0 else 0
            if v > 0.0:
                R.rp_on_cnm(rp, i, q, 0, now, seed, prm)
            base = (
                fixed_interval
                if fixed_interval > 0.0
                else intervals[min(q * 8 // (int(fs) + 1), 7)]
            )
            countdown = base * (1.0 + jitter * (2.0 * u3 - 1.0))
        cr = rp[R.RP_CR, i] if rp[R.RP_ACTIVE, i] > 0.0 else prm[R.RPP_C]
        rate = min(cr, offered)
        tn = t + frame_bits / rate
        if tn > w0 and t < w1:
            sent[i] += rate * (min(tn, w1) - max(t, w0))
        nxt[i] = tn
    return sent / (w1 - w0)


def flow_spread(rates) -> float:
    """Coefficient of variation across flows of their window-mean rates."""
    rates = np.asarray(rates, float)
    return float(np.std(rates, ddof=1) / np.mean(rates))


def predicted_spread(model, trace, offered: float, window: tuple[float, float],
                     replicas: int = 12, seed: int = 0,
                     countdown: bool = True) -> tuple[float, float]:  # fmt: skip
    """(mean, standard error) over ``replicas`` of the predicted coefficient of variation.

    Parameters
    ----------
    model : QCNFluidModel or QCNPacketModel
        The packet-fidelity model whose trajectory ``trace`` is (its ``extra["cp"]`` holds
        the CP signals on the trace's grid).
    trace : Trace
        :func:`qcnmodel.validation.traces.model_trace` of the model.
    offered : float
        Per-flow offered rate, bit/s.
    window : (float, float)
        Measurement window, s.
    """
    pm = getattr(model, "engine", model)
    p = pm.params
    prm = R.pack_rp_params(p)
    fr = float(p.frame_size)
    fb = np.ascontiguousarray(trace.extra["cp"]["fb"], dtype=float) / fr
    table = np.minimum(1.0, fr / p.sample_table())
    fixed = pm.p_sample if pm.fixed_sampling else 0.0
    sigma = pm.fb_noise_bytes / fr
    cvs = []
    intervals = np.asarray(p.sample_table(), float)
    fixed_interval = fr / pm.p_sample if pm.fixed_sampling else 0.0
    for r in range(replicas):
        if countdown:
            sent = _drive_countdown(prm, pm.n_flows, 8.0 * fr, float(offered), fb, trace.dt,
                                    sigma, p.fb_max / fr, float(p.fb_full_scale), intervals,
                                    fixed_interval, float(p.jitter), float(window[1]),
                                    float(window[0]), float(window[1]),
                                    np.int64(1000 * seed + r))  # fmt: skip
        else:
            sent = _drive(prm, pm.n_flows, 8.0 * fr, float(offered), fb, trace.dt, sigma,
                          p.fb_max / fr, float(p.fb_full_scale), table, fixed,
                          float(window[1]), float(window[0]), float(window[1]),
                          np.int64(1000 * seed + r))  # fmt: skip
        cvs.append(flow_spread(sent))
    cvs = np.array(cvs)
    return float(cvs.mean()), float(cvs.std(ddof=1) / math.sqrt(len(cvs)))
