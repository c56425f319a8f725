"""Compiled kernels of the renewal (packet-fidelity) QCN model: the reaction points as a
population of *cohorts*, the flows whose last CNM came at the same time.

A cohort carries its mass m (fraction of the flows), age a (s since its CNM), frames sent
since then b, mean target rate T, the gap it was born with g0 = T0 - c0, the increase part of
the gap g_AI, its birth target T0 and whether its rate limiter is active. Its mean current
rate is

.. math::  c = T - g_0\\,\\Phi_t(a)\\,\\Phi_b(b) - g_{AI},

where :math:`\\Phi = E[2^{-K}]` are the fast-recovery factors of the two counters
(:mod:`._renewal`): each expiry halves the gap (CR <- (CR + TR)/2). Between CNMs T grows by
the expected AI and HAI increments of the expiries (exactly one counter past F: R_AI; both:
R_HAI (min stage - F)), the TR/8 rule acts at a counter's first expiry when TR > 10 CR, and
the increase part of the gap is halved at every expiry. A CNM reaches a flow of a cohort
with the hazard kappa x (frames it sends); the flow joins the newest cohort with its rate cut
(CR (1 - cut), at least the minimum rate) and its target kept if its byte counter has not
expired since its last CNM, else set to its rate (the standard's rule; a released rate
limiter restarts at the line rate). Units: frames of ``frame_size`` bytes, frames/s, s.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from qcnmodel._borrow import borrow
from qcnmodel.models._qcn_cp import (
    K_C,
    K_CHOT,
    K_DCDIV,
    K_HAI,
    K_N,
    K_RAI,
    K_RHAI,
    K_RLINE,
    K_RMERGE,
    K_RMIN,
    K_ROFF,
    K_TAU,
    K_TOFF,
    K_TON,
    K_TRDIV8,
    K_TS,
    cp_signals,
)

# cohort state rows
C_M, C_A, C_B, C_T, C_G0, C_GAI, C_ACT, C_TFIRST, C_TLAST, C_TDOT, C_GDOT, C_T0 = range(12)
N_C = 12
#: renewal-table tuple slots (RenewalTable.arrays())
R_H, R_PHI, R_DPHI, R_P0, R_NU, R_NUFR, R_PGT, R_NUTAIL, R_PTAIL, R_PERIOD, R_NU1 = range(11)


@nb.njit(cache=True, inline="always")
def _lk(arr, h, x, beyond):
    """Linear interpolation of a table at clock ``x`` (``beyond`` past its end)."""
    i = x / h
    if i >= arr.shape[0] - 1:
        return beyond
    j = int(i)
    f = i - j
    return arr[j] * (1.0 - f) + arr[j + 1] * f


@nb.njit(cache=True, inline="always")
def _lk2(arr, m, h, x, beyond):
    i = x / h
    if i >= arr.shape[1] - 1:
        return beyond
    j = int(i)
    f = i - j
    return arr[m, j] * (1.0 - f) + arr[m, j + 1] * f


@nb.njit(cache=True, inline="always")
def _phi2(a, b, tt, tb):
    return _lk(tt[R_PHI], tt[R_H], a, 0.0) * _lk(tb[R_PHI], tb[R_H], b, 0.0)


@nb.njit(cache=True, inline="always")
def cohort_rate(st, i, k, tt, tb):
    """Mean current rate (frames/s) of cohort ``i``, within [min rate, line rate]."""
    if st[C_ACT, i] == 0.0:
        return k[K_RLINE]
    c = st[C_T, i] - st[C_G0, i] * _phi2(st[C_A, i], st[C_B, i], tt, tb) - st[C_GAI, i]
    return min(max(c, k[K_RMIN]), k[K_RLINE])


@nb.njit(cache=True)
def increase_rates(a, b, sent, gai, tr, tr0, g0, k, tt, tb):
    """(dT/dt, dg_AI/dt) of a cohort at age ``a`` with ``b`` frames sent since its CNM, sending
    ``sent`` frames/s: the expected increments of both counters' expiries (renewal tables),
    the halving of the increment part of the gap, and the TR/8 rule."""
    ht = tt[R_H]
    hb = tb[R_H]
    inv_t = 1.0 / tt[R_PERIOD]
    inv_b = 1.0 / tb[R_PERIOD]
    nu_t = _lk(tt[R_NU], ht, a, inv_t)
    nufr_t = _lk(tt[R_NUFR], ht, a, 0.0)
    pgt_t = _lk(tt[R_PGT], ht, a, 1.0)
    nu_b = _lk(tb[R_NU], hb, b, inv_b) * sent
    nufr_b = _lk(tb[R_NUFR], hb, b, 0.0) * sent
    pgt_b = _lk(tb[R_PGT], hb, b, 1.0)
    rai = k[K_RAI]
    # additive increase: exactly one counter past F
    inc = rai * ((nu_t - nufr_t) * (1.0 - pgt_b) + nufr_t * pgt_b)
    inc += rai * ((nu_b - nufr_b) * (1.0 - pgt_t) + nufr_b * pgt_t)
    if k[K_HAI] > 0.0 and pgt_t > 1e-12 and pgt_b > 1e-12:
        # both past F: R_HAI (min(k_t, k_b) - F) = R_HAI sum_m 1{k_t >= F+m} 1{k_b >= F+m}
        s = 0.0
        for m in range(tt[R_NUTAIL].shape[0]):
            s += _lk2(tt[R_NUTAIL], m, ht, a, inv_t) * _lk2(tb[R_PTAIL], m, hb, b, 1.0)
            s += _lk2(tb[R_NUTAIL], m, hb, b, inv_b) * sent * _lk2(tt[R_PTAIL], m, ht, a, 1.0)
        inc += k[K_RHAI] * s
    elif k[K_HAI] == 0.0:
        inc += rai * ((nu_t - nufr_t) * pgt_b + (nu_b - nufr_b) * pgt_t)
    gdot = 0.5 * (inc - (nu_t + nu_b) * gai)
    if k[K_TRDIV8] > 0.0 and tr0 > 0.0:
        # TR/8 at a counter's first expiry if TR > 10 CR, judged on the flows that have not
        # expired on that counter yet (birth TR, rate halved by the other counter only)
        rate = 0.0
        n1t = _lk(tt[R_NU1], ht, a, 0.0)
        if n1t > 0.0 and tr0 > 10.0 * (tr0 - g0 * _lk(tb[R_PHI], hb, b, 0.0)):
            rate += n1t
        n1b = _lk(tb[R_NU1], hb, b, 0.0) * sent
        if n1b > 0.0 and tr0 > 10.0 * (tr0 - g0 * _lk(tt[R_PHI], ht, a, 0.0)):
            rate += n1b
        if rate > 0.0:
            inc -= rate * 0.875 * tr
            gdot -= rate * 0.4375 * tr
    return inc, gdot


@nb.njit(cache=True)
def cohort_path(tr0, g0, kappa, roff, k, tt, tb, ages):
    """One cohort's mean path on the increasing grid ``ages`` (midpoint rule in age; where a
    step is too long for the explicit rule on the increase gap's decay, that decay is taken
    exactly over the step, :func:`_relax`).

    Returns rows (c, sent, T, b, psi, log survival), with psi = p0(b) T + (1 - p0(b)) c the
    target a CNM leaves (kept while the byte counter has not expired) and the survival
    exp(-kappa int sent).
    """
    n = ages.shape[0]
    out = np.zeros((6, n))
    tr = tr0
    gai = 0.0
    b = 0.0
    ls = 0.0
    rline = k[K_RLINE]
    rmin = k[K_RMIN]
    for i in range(n):
        a = ages[i]
        c = min(max(tr - g0 * _phi2(a, b, tt, tb) - gai, rmin), rline)
        sent = min(c, roff)
        p0 = _lk(tb[R_P0], tb[R_H], b, 0.0)
        out[0, i] = c
        out[1, i] = sent
        out[2, i] = tr
        out[3, i] = b
        out[4, i] = p0 * tr + (1.0 - p0) * c
        out[5, i] = ls
        if i == n - 1:
            break
        h = ages[i + 1] - a
        inc1, gd1 = increase_rates(a, b, sent, gai, tr, tr0, g0, k, tt, tb)
        lam1 = _gap_decay(a, b, sent, tt, tb)
        if h * lam1 <= 2.0:  # the explicit rule is stable for this step
            gm = gai + 0.5 * h * gd1
        else:
            gm = _relax(gai, 0.5 * h, 0.5 * inc1, lam1)
        trm = tr + 0.5 * h * inc1
        bm = b + 0.5 * h * sent
        cm = min(max(trm - g0 * _phi2(a + 0.5 * h, bm, tt, tb) - gm, rmin), rline)
        sm = min(cm, roff)
        inc2, gd2 = increase_rates(a + 0.5 * h, bm, sm, gm, trm, tr0, g0, k, tt, tb)
        lam2 = _gap_decay(a + 0.5 * h, bm, sm, tt, tb)
        if h * lam2 <= 2.0:
            gai += h * gd2
        else:
            gai = _relax(gai, h, 0.5 * inc2, lam2)
        tr = min(tr + h * inc2, 2.0 * rline)
        b += h * sm
        ls -= h * kappa * sm
    return out


@nb.njit(cache=True, inline="always")
def _gap_decay(a, b, sent, tt, tb):
    """Rate (1/s) at which the increase gap g_AI decays: half the two counters' expiry rates
    (every expiry halves it; :func:`increase_rates`' dg_AI/dt = inc / 2 - this x g_AI)."""
    nu_t = _lk(tt[R_NU], tt[R_H], a, 1.0 / tt[R_PERIOD])
    nu_b = _lk(tb[R_NU], tb[R_H], b, 1.0 / tb[R_PERIOD]) * sent
    return 0.5 * (nu_t + nu_b)


@nb.njit(cache=True, inline="always")
def _relax(g, h, forcing, lam):
    """g after ``h`` s of dg/dt = forcing - lam g with both held: exact, so stable for any
    step (where lam h > 2 the explicit midpoint rule is not: e.g. a cohort at the line rate
    whose byte counter expires every few frames, at ages whose steps were sized at C/N)."""
    e = math.exp(-lam * h)
    return g * e + forcing / lam * (1.0 - e)


@nb.njit(cache=True)
def _refresh(st, nc, k, tt, tb):
    """Recompute each cohort's dT/dt and dg_AI/dt (held until the next refresh)."""
    for i in range(nc):
        if st[C_ACT, i] == 0.0:
            st[C_TDOT, i] = 0.0
            st[C_GDOT, i] = 0.0
            continue
        c = cohort_rate(st, i, k, tt, tb)
        sent = min(c, k[K_ROFF])
        inc, gd = increase_rates(st[C_A, i], st[C_B, i], sent, st[C_GAI, i], st[C_T, i],
                                 st[C_T0, i], st[C_G0, i], k, tt, tb)  # fmt: skip
        st[C_TDOT, i] = inc
        st[C_GDOT, i] = gd


@nb.njit(cache=True)
def _absorb(st, j, i, k, tt, tb):
    """Merge cohort ``i`` into ``j``: masses add, the state is mass-weighted, and g0 is set so
    that the merged mean rate is the mass-weighted rate."""
    mj = st[C_M, j]
    mi = st[C_M, i]
    mt = mj + mi
    if mt > 0.0:
        c = (mj * cohort_rate(st, j, k, tt, tb) + mi * cohort_rate(st, i, k, tt, tb)) / mt
        for row in (C_A, C_B, C_T, C_GAI, C_T0):
            st[row, j] = (mj * st[row, j] + mi * st[row, i]) / mt
        phi = _phi2(st[C_A, j], st[C_B, j], tt, tb)
        if phi > 1e-9:
            st[C_G0, j] = (st[C_T, j] - st[C_GAI, j] - c) / phi
        else:
            st[C_G0, j] = 0.0
            st[C_GAI, j] = st[C_T, j] - c
        st[C_M, j] = mt
    st[C_TLAST, j] = st[C_TLAST, i]


@nb.njit(cache=True)
def _merge(st, nc, t, k, tt, tb):
    """Merge neighbouring cohorts whose spread of birth times is small against their age
    (ratio ``K_RMERGE``) and drop empty ones; the newest cohort is never merged away.
    Returns the new count."""
    r = k[K_RMERGE]
    out = 0
    for i in range(nc):
        last = i == nc - 1
        if out > 0 and not last:
            j = out - 1
            empty = st[C_M, i] <= 1e-15
            young = t - st[C_TLAST, i]
            close = st[C_ACT, i] == st[C_ACT, j] and young > r * (st[C_TLAST, i] - st[C_TFIRST, j])
            if empty or close:
                _absorb(st, j, i, k, tt, tb)
                continue
        if out != i:
            st[:, out] = st[:, i]
        out += 1
    return out


@nb.njit(cache=True)
def _birth_bin(st, nc, k, tt, tb, dt):
    """Width (s) of the birth bins: 1/K_DCDIV of the shortest cycle of an active cohort."""
    cmax = 0.0
    for i in range(nc):
        if st[C_ACT, i] > 0.0:
            cmax = max(cmax, cohort_rate(st, i, k, tt, tb))
    cyc = 2.0 * tt[R_PERIOD]
    if cmax > 0.0:
        cyc = min(cyc, 2.0 * tb[R_PERIOD] / min(cmax, k[K_ROFF]))
    return max(dt, cyc / k[K_DCDIV])


@nb.njit(cache=True, inline="always")
def _borrowed(tab):
    """The renewal-table tuple (:data:`R_H` ...) with its arrays borrowed (:mod:`qcnmodel._borrow`):
    every lookup takes a row of a table, a view numba would otherwise count."""
    return (tab[0], borrow(tab[1]), borrow(tab[2]), borrow(tab[3]), borrow(tab[4]),
            borrow(tab[5]), borrow(tab[6]), borrow(tab[7]), borrow(tab[8]), tab[9],
            borrow(tab[10]))  # fmt: skip


@nb.njit(cache=True)
def integrate(k, tt, tb, st0, q0, q_hist, r_hist, duration, dt, rec_every, cap_max):
    """Integrate the cohort model for ``duration`` s with step ``dt``.

    ``st0`` is the initial population (rows ``C_*``, oldest cohort first); ``q_hist`` and
    ``r_hist`` the constant queue (frames) and per-flow sending rate before t = 0. The
    queue is reflected at 0. Returns ``rec`` (columns t, q, per-flow sending rate, mean CR,
    mean TR, cohorts, CNM probability per frame, mean cut per CNM, fluid Fb at the CP; one row
    every ``rec_every`` steps) and the final population.
    """
    n_steps = int(duration / dt + 0.5)
    nd = int(k[K_TAU] / dt + 0.5)
    nts = int(k[K_TS] / dt + 0.5)
    nbuf = nd + nts + 1
    n_rec = n_steps // rec_every + 1
    rec = np.zeros((n_rec, 9))
    own = np.zeros((N_C, cap_max))
    # the loop works on borrowed views (this function holds the arrays, its caller the rest)
    st, k, tt, tb = borrow(own), borrow(k), _borrowed(tt), _borrowed(tb)
    nc = st0.shape[1]
    st[:, :nc] = st0
    hq = np.full(nbuf, q_hist)
    hr = np.full(nbuf, r_hist)
    q = q0
    hpos = 0
    ir = 0
    t_coarse = -1.0
    dc = dt
    for step in range(n_steps + 1):
        t = step * dt
        if t >= t_coarse:
            _refresh(st, nc, k, tt, tb)
            nc = _merge(st, nc, t, k, tt, tb)
            dc = _birth_bin(st, nc, k, tt, tb, dt)
            t_coarse = t + 2.0 * dc  # the increase rates are refreshed every 1/16 cycle
        hot = k[K_TON] <= t < k[K_TOFF]
        cap = k[K_CHOT] if hot else k[K_C]
        td = t - k[K_TAU]
        cap_d = k[K_CHOT] if k[K_TON] <= td < k[K_TOFF] else k[K_C]
        iq = hpos + nts  # hpos holds q(t - (nd + nts) dt), the sample's Qold
        if iq >= nbuf:
            iq -= nbuf
        qold = hq[hpos] if nts > 0 else -1.0
        kappa, cut, fb = cp_signals(hq[iq], hr[iq], cap_d, k, qold)
        rsum = 0.0
        csum = 0.0
        tsum = 0.0
        bm = 0.0
        bc = 0.0
        btr = 0.0
        for i in range(nc):
            m = st[C_M, i]
            if m <= 0.0:
                continue
            active = st[C_ACT, i] > 0.0
            c = cohort_rate(st, i, k, tt, tb)
            sent = min(c, k[K_ROFF])
            rsum += m * sent
            csum += m * c
            tsum += m * (st[C_T, i] if active else c)
            h = kappa * sent
            if h > 0.0:
                dm = -m * math.expm1(-h * dt)
                st[C_M, i] = m - dm
                bm += dm
                bc += dm * max(c * (1.0 - cut), k[K_RMIN])
                if not active or c >= k[K_RLINE]:
                    btr += dm * k[K_RLINE]  # a fresh rate limiter starts at the line rate
                else:
                    p0 = _lk(tb[R_P0], tb[R_H], st[C_B, i], 0.0)
                    btr += dm * (p0 * st[C_T, i] + (1.0 - p0) * c)
            st[C_A, i] += dt
            st[C_B, i] += sent * dt
            st[C_T, i] += st[C_TDOT, i] * dt
            st[C_GAI, i] += st[C_GDOT, i] * dt
            if active and c >= k[K_RLINE]:
                st[C_ACT, i] = 0.0  # released: inactive until its next CNM
        if bm > 0.0:
            j = nc - 1
            if nc == 0 or st[C_ACT, j] == 0.0 or t - st[C_TFIRST, j] >= dc:
                if nc >= cap_max:
                    nc = _merge(st, nc, t, k, tt, tb)
                if nc >= cap_max:
                    raise ValueError("cohort capacity exceeded")
                j = nc
                nc += 1
                st[:, j] = 0.0
                st[C_ACT, j] = 1.0
                st[C_TFIRST, j] = t
            mj = st[C_M, j]
            cj = cohort_rate(st, j, k, tt, tb) if mj > 0.0 else 0.0
            mt = mj + bm
            tr = (mj * st[C_T, j] + btr) / mt
            cn = (mj * cj + bc) / mt
            st[C_A, j] *= mj / mt
            st[C_B, j] *= mj / mt
            st[C_GAI, j] *= mj / mt
            st[C_T, j] = tr
            st[C_T0, j] = (mj * st[C_T0, j] + btr) / mt
            st[C_G0, j] = (tr - st[C_GAI, j] - cn) / _phi2(st[C_A, j], st[C_B, j], tt, tb)
            st[C_M, j] = mt
            st[C_TLAST, j] = t
        if step % rec_every == 0 and ir < n_rec:
            rec[ir, 0] = t
            rec[ir, 1] = q
            rec[ir, 2] = rsum
            rec[ir, 3] = csum
            rec[ir, 4] = tsum
            rec[ir, 5] = nc
            rec[ir, 6] = kappa
            rec[ir, 7] = cut
            rec[ir, 8] = fb
            ir += 1
        q = max(q + (k[K_N] * rsum - cap) * dt, 0.0)
        hq[hpos] = q
        hr[hpos] = rsum
        hpos += 1
        if hpos >= nbuf:
            hpos = 0
    return rec, own[:, :nc].copy()
