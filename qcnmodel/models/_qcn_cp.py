"""The congestion point as the renewal (packet-fidelity) QCN model sees it.

Parameter-vector layout ``K_*`` of the compiled kernels (frames of ``frame_size`` bytes,
frames/s, seconds) and :func:`cp_signals`, the CP's map from the fluid queue to what the
reaction points receive: the CNM probability per frame and the mean cut per CNM.

**The sampled feedback is noisy.** At a sample the CP computes
:math:`Fb = -(Q - Q_{eq} + w (Q - Q_{old}))` from the queue *at that arrival*, after enqueue
(IEEE 802.1Qau CP). The fluid queue q is a time average; at arrival instants the queue of N
paced flows carries a frame-granularity term: each flow's arrivals deviate from its fluid
line by a sawtooth of one frame, independent phases give a variance of N/12 frames\\ :sup:`2`,
and the arriving frame itself adds one frame to the mean (the enqueue offset). Two samples
one sampling interval apart are independent at that scale, so the noise of Fb has variance
:math:`((1 + w)^2 + w^2) N / 12` frames\\ :sup:`2`. :func:`cp_signals` takes the expectation of
everything the CP decides over that Gaussian noise, exactly: whether a CNM is sent
(Fb < 0, or qFb > 0 with ``cnm_requires_qfb_positive``), the quantised qFb of the standard's
6-bit quantiser (floor, round or the 64-level capped variant), the sampling-table entry that
qFb selects, and the cut ``min(Gd qFb, min_dec)``. No width is chosen: the noise follows from
the frame size, N and w.
"""

from __future__ import annotations

import math

import numba as nb

__all__ = ["cp_signals", "fb_noise_frames"]

# parameter vector layout (shared with the cohort kernels)
(K_N, K_C, K_QEQ, K_W, K_PS, K_FBMAX, K_FS, K_GD, K_MINDEC, K_RLINE, K_RMIN, K_RAI, K_RHAI,
 K_HAI, K_F, K_TAU, K_SIGMA, K_ROFF, K_ENQ, K_TABLE) = range(20)  # fmt: skip
K_TAB0 = 20  #: 8 sampling probabilities of the table (frame_size / interval)
K_TON, K_TOFF, K_CHOT = 28, 29, 30  #: hotspot window and capacity
K_RMERGE, K_DCDIV = 31, 32  #: cohort merging ratio and birth-bin divisor
K_TS = 33  #: sampling interval at the base probability (s): Qold is q this long before
K_QUANT, K_QFBPOS, K_TRDIV8 = 34, 35, 36  #: quantiser code, cnm_requires_qfb_positive, TR/8 rule
N_K = 37

#: quantiser codes (floor63, round63, floor64cap)
Q_FLOOR, Q_ROUND, Q_FLOOR64 = 0, 1, 2


def fb_noise_frames(n_flows: float, w: float) -> float:
    """Standard deviation (frames) of the sampled Fb around the fluid Fb (module docstring)."""
    return math.sqrt(((1.0 + w) ** 2 + w**2) * n_flows / 12.0)


@nb.njit(cache=True, inline="always")
def _norm_cdf(z):
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@nb.njit(cache=True)
def cp_signals(qd, rd, cap, k, qold):
    """(CNM probability per frame, mean cut per CNM, fluid Fb) seen by the reaction points.

    Parameters
    ----------
    qd : float
        Fluid queue (frames) when the sampled frames arrived.
    rd : float
        Per-flow arrival rate then (frames/s), used for Qdelta when ``qold < 0``.
    cap : float
        CP service rate then (frames/s).
    k : ndarray
        Parameter vector (``K_*``).
    qold : float
        Fluid queue one sampling interval earlier (frames), or < 0 to use the derivative
        form ``Qdelta = (N rd - cap) / (p cap)``.
    """
    if qold >= 0.0:
        qdelta = qd - qold
    else:
        qdelta = (k[K_N] * rd - cap) / (k[K_PS] * cap)
    fb = -(qd + k[K_ENQ] - k[K_QEQ] + k[K_W] * qdelta)
    mu = -fb  # mean of v = -Fb at the sample; a CNM iff v > 0
    sig = k[K_SIGMA]
    fs = int(k[K_FS])
    quant = int(k[K_QUANT])
    if quant == Q_FLOOR64:
        step = k[K_FBMAX] / (k[K_FS] + 1.0)
        lo_off = 0.0
    elif quant == Q_ROUND:
        step = k[K_FBMAX] / k[K_FS]
        lo_off = 0.5
    else:
        step = k[K_FBMAX] / k[K_FS]
        lo_off = 0.0
    kap = 0.0
    kc = 0.0
    c_lo = _norm_cdf((0.0 - mu) / sig) if sig > 0.0 else (1.0 if mu <= 0.0 else 0.0)
    for q in range(fs + 1):
        # qFb = q on v in [max(0, (q - lo_off) step), (q + 1 - lo_off) step), q = FS beyond
        if q < fs:
            edge = (q + 1.0 - lo_off) * step
            if sig > 0.0:
                c_hi = _norm_cdf((edge - mu) / sig)
            else:
                c_hi = 1.0 if mu < edge else 0.0
        else:
            c_hi = 1.0
        pq = c_hi - c_lo
        c_lo = c_hi
        if pq <= 0.0 or (q == 0 and k[K_QFBPOS] > 0.0):
            continue
        if k[K_TABLE] > 0.0:
            it = int(q * 8.0 / (k[K_FS] + 1.0))
            if it > 7:
                it = 7
            p = k[K_TAB0 + it]
        else:
            p = k[K_PS]
        cut = k[K_GD] * q
        if cut > k[K_MINDEC]:
            cut = k[K_MINDEC]
        kap += p * pq
        kc += p * pq * cut
    cut_mean = kc / kap if kap > 0.0 else 0.0
    return kap, cut_mean, fb
