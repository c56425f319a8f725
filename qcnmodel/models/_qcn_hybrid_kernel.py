"""The compiled form of the hybrid QCN model (:mod:`._qcn_hybrid`, its readable twin).

Same events, same order, same rule bodies and random draws: for fewer than 8 flows the two
agree bit for bit (numpy sums 8 or more numbers pairwise, this kernel in sequence, so larger
populations agree to rounding). The two FIFOs of the loop delay (CNMs in flight to the
reaction points, rate changes in flight to the congestion point) are ring buffers that double
when full; everything else is the state arrays of :mod:`qcnmodel.sim.protocols.qcn`.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from qcnmodel._borrow import borrow
from qcnmodel.models._qcn_hybrid import _EMPTY, _MAX_STALL, _due, collision_queue, frame_noise
from qcnmodel.sim.protocols import qcn as R
from qcnmodel.sim.rng import uniform01

__all__ = ["integrate_compiled"]


@nb.njit(cache=True)
def _ns(t):
    return np.int64(math.floor(t * 1e9 + 0.5))


@nb.njit(cache=True)
def _room(buf, head, size, more):
    """The ring ``buf`` (rows) with room for ``more`` rows beyond its ``size``: itself, or a
    copy of at least twice its length with its rows from index 0; returns (buffer, head).
    Its callers pass int64 (as :func:`_record`'s): an integer that is still a constant while
    numba types the loop would compile a copy of its own."""
    cap = buf.shape[0]
    if size + more <= cap:
        return buf, head
    new_cap = 2 * cap
    while new_cap < size + more:
        new_cap *= 2
    new = np.empty((new_cap, 3))
    for k in range(size):
        new[k] = buf[(head + k) % cap]
    return new, 0


@nb.njit(cache=True, inline="always")
def _put(buf, head, size, t, i, x):
    """Append (t, i, x) to the ring ``buf``, which has room (:func:`_room`); returns the
    new size. The buffer is never replaced here, so a loop of puts keeps one reference to it
    (rebinding an array inside a loop costs numba two atomic reference-count updates per
    iteration)."""
    k = (head + size) % buf.shape[0]
    buf[k, 0] = t
    buf[k, 1] = i
    buf[k, 2] = x
    return size + 1


@nb.njit(cache=True)
def _rate(rp, i, offered, backlog, line):
    held = backlog[i] > _EMPTY
    if rp[R.RP_ACTIVE, i] > 0.0:
        return rp[R.RP_CR, i] if held else min(rp[R.RP_CR, i], offered)
    return line if held else offered


@nb.njit(cache=True)
def _record(rec, k, t, q, rate, rp, fb_last):
    n = rate.shape[0]
    s_r = 0.0
    s_c = 0.0
    s_t = 0.0
    for i in range(n):
        s_r += rate[i]
        s_c += rp[R.RP_CR, i]
        s_t += rp[R.RP_TR, i]
    rec[k, 0] = t
    rec[k, 1] = q
    rec[k, 2] = s_r / n
    rec[k, 3] = s_c / n
    rec[k, 4] = s_t / n
    rec[k, 5] = fb_last


@nb.njit(cache=True)
def _initial_rps(pr, n, capacity, offered, start_eq, bc_limit, timer):
    """The rate limiters at the start (as qcn_layout.new_rp_state, then the twin's start)."""
    rp = np.zeros((R.RP_NFIELDS, n))
    rp[R.RP_CR] = pr[R.RPP_C]
    rp[R.RP_TR] = pr[R.RPP_C]
    rp[R.RP_DEADLINE] = -1.0
    rp[R.RV_LAST_NEG_NS] = -1.0
    rp[R.RV_AUX_DEADLINE] = -1.0
    rp[R.RV_ARM] = -1.0
    if start_eq:
        share = min(capacity / n, offered)
        for i in range(n):
            phase = (i + 0.5) / n
            rp[R.RP_ACTIVE, i] = 1.0
            rp[R.RP_CR, i] = share
            rp[R.RP_TR, i] = share
            rp[R.RP_BC_LEFT, i] = bc_limit * phase
            rp[R.RP_DEADLINE, i] = math.floor(timer * phase * 1e9 + 0.5)
    return rp


@nb.njit(cache=True)
def _pick(a, x):
    """The flow whose share of the arrivals ``x`` falls in (cumulative, in flow order)."""
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i]
        if x < acc:
            return i
    return a.shape[0] - 1


@nb.njit(cache=True)
def _next_flow_event(rp, pending, rate, backlog, offered, t, t_next):
    """The earliest of ``t_next`` and each flow's next event: its byte counter's expiry, its
    timer's deadline, its source buffer draining empty."""
    for i in range(rate.shape[0]):
        if rp[R.RP_ACTIVE, i] > 0.0:
            left = max(rp[R.RP_BC_LEFT, i] - pending[i], 0.0)
            t_next = min(t_next, t + left * 8.0 / rate[i])
            if rp[R.RP_DEADLINE, i] >= 0.0:
                t_next = min(t_next, rp[R.RP_DEADLINE, i] * 1e-9)
        if backlog[i] > _EMPTY and rate[i] > offered:
            t_next = min(t_next, t + backlog[i] * 8.0 / (rate[i] - offered))
    return t_next


@nb.njit(cache=True)
def _flush(rp, pending, i, now, seed, pr):
    if rp[R.RP_ACTIVE, i] > 0.0 and pending[i] > 0.0:
        R.rp_on_tx(rp, i, pending[i], now, seed, pr)
    pending[i] = 0.0


@nb.njit(cache=True)
def integrate_compiled(pc, pr, n, fwd, back, capacity, t_on, t_off, c_hot, offered, frame,
                       w, n_rec, record_dt, seed, start_eq, q0, bc_limit, timer, per_flow,
                       s_pick, buffer, line, noise, table):  # fmt: skip
    """:func:`._qcn_hybrid.integrate`, compiled (arguments unpacked; see there)."""
    cp = np.zeros((R.CP_NFIELDS, 1))  # as qcn_layout.new_cp_state
    cp[R.CV_NC_SINCE] = -1.0
    rp = _initial_rps(pr, n, capacity, offered, start_eq, bc_limit, timer)
    out = np.zeros(R.OUT_N)
    pending = np.zeros(n)
    backlog = np.zeros(n)
    if start_eq and offered > capacity / n:
        backlog[:] = buffer
    R.cp_on_arrival(cp, 0, 0.0, 0.0, seed, pc, out)
    rate = np.empty(n)
    for i in range(n):
        rate[i] = _rate(rp, i, offered, backlog, line)
    a = np.zeros(n)
    arr = np.empty((max(16, 2 * n), 3))
    a_head, a_size = 0, 0
    if start_eq:
        for i in range(n):
            a[i] = rate[i]
    else:
        for i in range(n):
            a_size = _put(arr, a_head, a_size, fwd, i, rate[i])
    a_sum = 0.0
    for i in range(n):
        a_sum += a[i]
    q = q0
    cn = np.empty((64, 3))
    c_head, c_size = 0, 0
    rec = np.zeros((n_rec + 1, 6))
    sent = np.zeros((n_rec + 1 if per_flow else 1, n))
    total = np.zeros(n)
    _record(rec, np.int64(0), 0.0, q, rate, rp, 0.0)
    k, t, fb_last, stalled, draws = 1, 0.0, 0.0, 0, 0
    # the loop works on borrowed views (qcnmodel._borrow); this function holds the arrays
    # (the returned two through ``own``) and its caller the parameter vectors
    own = (rec, sent, cp, rp, out, pending, backlog, rate, a, total)
    cp, rp, out, pc, pr = borrow(cp), borrow(rp), borrow(out), borrow(pc), borrow(pr)
    pending, backlog, rate = borrow(pending), borrow(backlog), borrow(rate)
    a, rec, sent, total = borrow(a), borrow(rec), borrow(sent), borrow(total)
    while k <= n_rec:
        c = c_hot if t_on <= t < t_off else capacity
        t_next = k * record_dt
        if t < t_on < t_next:
            t_next = t_on
        if t < t_off < t_next:
            t_next = t_off
        if c_size > 0:
            t_next = min(t_next, cn[c_head, 0])
        if a_size > 0:
            t_next = min(t_next, arr[a_head, 0])
        t_next = _next_flow_event(rp, pending, rate, backlog, offered, t, t_next)
        if a_sum > 0.0:
            t_next = min(t_next, t + max(cp[R.CP_TO_SAMPLE, 0], 0.0) * 8.0 / a_sum)
        if a_sum < c and q > _EMPTY:
            t_next = min(t_next, t + q * 8.0 / (c - a_sum))
        h = max(t_next - t, 0.0)
        stalled = stalled + 1 if h == 0.0 else 0
        if stalled > _MAX_STALL:
            raise RuntimeError("hybrid QCN model stalled")
        q = q + (a_sum - c) * h / 8.0
        if q < _due(max(c - a_sum, 0.0), t_next):
            q = 0.0
        for i in range(n):
            step = rate[i] * (h / 8.0)
            total[i] += step
            if rp[R.RP_ACTIVE, i] > 0.0:
                pending[i] += step
            b = min(max(backlog[i] + (offered - rate[i]) * (h / 8.0), 0.0), buffer)
            backlog[i] = 0.0 if b < _due(max(rate[i] - offered, 0.0), t_next) else b
        arrived = a_sum * h / 8.0
        t = t_next
        now = _ns(t)
        for i in range(n):
            if rp[R.RP_ACTIVE, i] > 0.0 and pending[i] >= rp[R.RP_BC_LEFT, i] - _due(rate[i], t):
                pending[i] = max(pending[i], rp[R.RP_BC_LEFT, i])
                _flush(rp, pending, i, now, seed, pr)
        if arrived > 0.0:
            if arrived >= cp[R.CP_TO_SAMPLE, 0] - _due(a_sum, t):
                arrived = max(arrived, cp[R.CP_TO_SAMPLE, 0])
                u = uniform01(seed, s_pick, np.int64(draws))
                z = frame_noise(seed, np.int64(draws), n, frame) if noise else 0.0
                draws += 1
                seen = q + collision_queue(a_sum / c, table, frame)
                if R.cp_on_arrival(cp, 0, max(seen + z, 0.0) + frame, arrived, seed, pc, out):
                    if c_size == cn.shape[0]:
                        cn, c_head = _room(cn, np.int64(c_head), np.int64(c_size), np.int64(1))
                    c_size = _put(cn, c_head, c_size, t + back, _pick(a, u * a_sum),
                                  out[R.OUT_QFB])  # fmt: skip
                fb_last = -(out[R.OUT_QOFF] + w * out[R.OUT_QDELTA])
            else:
                R.cp_on_arrival(cp, 0, q + frame, arrived, seed, pc, out)
        while c_size > 0 and cn[c_head, 0] <= t:
            i = int(cn[c_head, 1])
            qfb = cn[c_head, 2]
            c_head = (c_head + 1) % cn.shape[0]
            c_size -= 1
            _flush(rp, pending, i, now, seed, pr)
            R.rp_on_cnm(rp, i, qfb, 0, now, seed, pr)
        for i in range(n):
            dl = rp[R.RP_DEADLINE, i]
            if rp[R.RP_ACTIVE, i] > 0.0 and dl >= 0.0 and dl * 1e-9 <= t:
                _flush(rp, pending, i, now, seed, pr)
                R.rp_on_timer(rp, i, R.rp_timer_gen(rp, i), np.int64(dl), seed, pr)
        changed = False
        while a_size > 0 and arr[a_head, 0] <= t:
            a[int(arr[a_head, 1])] = arr[a_head, 2]
            a_head = (a_head + 1) % arr.shape[0]
            a_size -= 1
            changed = True
        if changed:
            a_sum = 0.0
            for i in range(n):
                a_sum += a[i]
        if a_size + n > arr.shape[0]:
            arr, a_head = _room(arr, np.int64(a_head), np.int64(a_size), np.int64(n))
        for i in range(n):
            new = _rate(rp, i, offered, backlog, line)
            if new != rate[i]:
                a_size = _put(arr, a_head, a_size, t + fwd, i, new)
                rate[i] = new
        if t >= k * record_dt:
            _record(rec, np.int64(k), t, q, rate, rp, fb_last)
            if per_flow:
                sent[k] = total
            k += 1
    return own[0], own[1]
