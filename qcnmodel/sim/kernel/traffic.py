"""Traffic generators of the compiled kernel (the traffic models common to the decks).

* Kind 0, Bernoulli per slot: a slot is one frame time at the source's link rate; a frame
  arrives in each slot with probability ``prob`` (seeds 003/004); its destination is drawn
  uniformly from the generator's list (the decks' "uniform destination distribution").
* Kind 1, constant rate: arrival k at ``base + round(k * gap)``, ``base`` = start + a random
  phase in [0, gap); with ``on``/``off`` means > 0, exponential on and off periods
  (Stanford baseline #5, seed 002), each on period restarting the sequence.

Random numbers: ``uniform01(seed, stream_key(STREAM_TRAFFIC | STREAM_DEST | STREAM_ONOFF, g),
counter)``, one counter per generator and stream. Catch-up semantics: see :mod:`.loop`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from qcnmodel.sim.kernel.heap import S_BLOCKED, S_OFFERED, S_SENT
from qcnmodel.sim.kernel.state import (
    F_RNEXT,
    F_RPREV,
    F_VLIM,
    F_VN,
    G_BASE,
    G_CD,
    G_CO,
    G_CT,
    G_DC,
    G_DS,
    G_FLOW,
    G_K,
    G_KIND,
    G_NEXT,
    G_ONEND,
    G_SD,
    G_SO,
    G_ST,
    G_START,
    G_STOP,
    GF_GAP,
    GF_OFF,
    GF_ON,
    GF_PROB,
    H_GC,
    H_GS,
    H_RR,
    INF_NS,
)
from qcnmodel.sim.rng import uniform01


@njit(cache=True, inline="always")
def gen_advance(GI, GF, g, seed):
    """Compute generator ``g``'s next arrival time (ns) after arrival number ``G_K``."""
    k = GI[G_K, g] + 1
    gap = GF[GF_GAP, g]
    if GI[G_KIND, g] == 0:  # Bernoulli per slot
        p = GF[GF_PROB, g]
        if p < 1.0:
            limit = GI[G_STOP, g] - GI[G_BASE, g]
            while True:
                u = uniform01(seed, GI[G_ST, g], GI[G_CT, g])
                GI[G_CT, g] += 1
                if u < p:
                    break
                k += 1
                if k * gap >= limit:
                    break
        t = GI[G_BASE, g] + np.int64(k * gap + 0.5)
    else:  # constant rate, optional exponential on/off
        t = GI[G_BASE, g] + np.int64(k * gap + 0.5)
        if GF[GF_ON, g] > 0.0:
            while t >= GI[G_ONEND, g] and t < GI[G_STOP, g]:
                u = uniform01(seed, GI[G_SO, g], GI[G_CO, g])
                GI[G_CO, g] += 1
                off = -GF[GF_OFF, g] * math.log(1.0 - u)
                u = uniform01(seed, GI[G_SO, g], GI[G_CO, g])
                GI[G_CO, g] += 1
                on = -GF[GF_ON, g] * math.log(1.0 - u)
                GI[G_BASE, g] = GI[G_ONEND, g] + np.int64(off + 0.5)
                GI[G_ONEND, g] = GI[G_BASE, g] + np.int64(on + 0.5)
                k = 0
                t = GI[G_BASE, g]
    GI[G_K, g] = k
    if t >= GI[G_STOP, g]:
        t = INF_NS
    GI[G_NEXT, g] = t


@njit(cache=True, inline="always")
def gen_init(GI, GF, g, seed):
    """First arrival of generator ``g``.

    On/off sources draw their first on period; plain constant-rate flows start at a random
    phase within one inter-frame gap, so that flows of equal rates are not phase-locked (with
    drop-tail buffers a locked phase can starve a flow for the whole run).
    """
    GI[G_K, g] = -1
    GI[G_BASE, g] = GI[G_START, g]
    if GI[G_KIND, g] == 1 and GF[GF_ON, g] == 0.0:
        u = uniform01(seed, GI[G_ST, g], GI[G_CT, g])
        GI[G_CT, g] += 1
        GI[G_BASE, g] = GI[G_START, g] + np.int64(u * GF[GF_GAP, g])
    if GF[GF_ON, g] > 0.0:
        u = uniform01(seed, GI[G_SO, g], GI[G_CO, g])
        GI[G_CO, g] += 1
        GI[G_ONEND, g] = GI[G_START, g] + np.int64(-GF[GF_ON, g] * math.log(1.0 - u) + 0.5)
    gen_advance(GI, GF, g, seed)


@njit(cache=True, inline="always")
def host_catch_up(S, h, now, FI, HI, GI, GF, dst_flow, dst_list, seed):
    """Emit every pending arrival of host ``h``'s generators with time <= now."""
    gs = HI[H_GS, h]
    ge = gs + HI[H_GC, h]
    while True:
        best = -1
        bt = INF_NS
        for g in range(gs, ge):
            if GI[G_NEXT, g] < bt:
                bt = GI[G_NEXT, g]
                best = g
        if best < 0 or bt > now:
            return
        g = best
        if GI[G_KIND, g] == 0:
            u = uniform01(seed, GI[G_SD, g], GI[G_CD, g])
            GI[G_CD, g] += 1
            f = dst_flow[GI[G_DS, g] + np.int64(u * GI[G_DC, g])]
        else:
            f = GI[G_FLOW, g]
        S[S_OFFERED] += 1
        if FI[F_VN, f] < FI[F_VLIM, f]:
            S[S_SENT] += 1
            FI[F_VN, f] += 1
            if FI[F_VN, f] == 1:  # insert into the ring, just before the RR pointer
                rr = HI[H_RR, h]
                if rr < 0:
                    FI[F_RNEXT, f] = f
                    FI[F_RPREV, f] = f
                    HI[H_RR, h] = f
                else:
                    prev = FI[F_RPREV, rr]
                    FI[F_RNEXT, prev] = f
                    FI[F_RPREV, f] = prev
                    FI[F_RNEXT, f] = rr
                    FI[F_RPREV, rr] = f
        else:
            S[S_BLOCKED] += 1
        gen_advance(GI, GF, g, seed)
