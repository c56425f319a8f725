"""One QCN flow as a hybrid (impulsive) system: the model of a single reaction point.

The packet-fidelity mean field (:mod:`.qcn_packet`) describes a *population* of reaction
points (RPs): each receives CNMs as a hazard, and the cohorts' recoveries overlap, so the
aggregate rate moves smoothly. With one flow there is no population. Every sample of the
congestion point (CP) lands on that flow, one per sampling interval (150 KB of arrivals at the
base probability, down to 15 KB at the top of the sampling table of IEEE 802.1Qau); each CNM
cuts the whole offered load at once, and the recovery that follows is a staircase of
byte-counter and timer expiries at fixed byte counts and times. The loop is a sampled,
impulsive system, which the mean field smooths away.

This model keeps those impulses and nothing finer:

* **Queue**: a fluid, ``dq/dt = A(t) - C`` (floored at empty), with ``A(t)`` the flow's rate
  one forward delay earlier. The rate is piecewise constant between RP events, so the queue is
  piecewise linear and every event time is solved exactly (no time step).
* **Congestion point**: the IEEE 802.1Qau countdown of arriving bytes, run on the fluid
  arrivals: a sample when the countdown reaches zero, Fb on the queue *at that arrival* (the
  fluid queue plus the arriving frame), the 6-bit quantiser, Qold, and the countdown reloaded
  from the sampling table. These are the rule bodies of :mod:`qcnmodel.sim.protocols.qcn`
  (one home for every QCN rule), called with the fluid quantities.
* **Reaction point**: the RP state machine of the Stanford deck "QCN: Description and
  Benchmark Simulations" (fast recovery, active and hyperactive increase, the 150 KB byte
  counter and 15 ms timer with their +-15 % jitter, the TR/8 rule, release at line rate), again
  the same rule bodies, called at the exact byte count or time at which each cycle ends.
* **Loop delay**: a CNM reaches the RP half an RTT after its sample, and the RP's new rate
  reaches the CP half an RTT later.

What it leaves out is the frame: the queue has no service granularity and the source no
frame clock. The protocol's own jitter draws come from the RP's and CP's random streams of
:mod:`qcnmodel.sim.rng` (the same rules as the standard's, with their own seed), so a
trajectory is reproducible from ``seed``.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from qcnmodel.sim.protocols import qcn as R

__all__ = ["integrate"]

#: queue below this many bytes is empty (the event solver's resolution)
_EMPTY = 1e-6
#: events at one instant before the solver calls it a stall (there are at most a handful)
_MAX_STALL = 1000


def _ns(t: float) -> np.int64:
    return np.int64(math.floor(t * 1e9 + 0.5))


def integrate(p, rtt, capacity, offered, duration, record_dt, hotspot=None, seed=0,
              start="idle", q0=0.0):  # fmt: skip
    """Trajectory of the single-flow hybrid model.

    Parameters
    ----------
    p : QCNParams
        Protocol parameters.
    rtt : float
        Loop delay CP -> RP -> CP (s), split evenly between the two directions.
    capacity : float
        CP service rate (bit/s).
    offered : float
        The flow's offered rate (bit/s): what it sends while its rate limiter is inactive,
        and the most it sends otherwise.
    duration, record_dt : float
        Simulated time and record interval (s).
    hotspot : tuple, optional
        ``(t_on, t_off, capacity_bps)``: the CP serves at that capacity inside the window.
    seed : int
        Seed of the protocol's jitter draws.
    start : {"idle", "equilibrium"}
        Rate limiter inactive (the flow at its offered rate), or active at CR = TR = the CP's
        capacity with the queue at ``q0``.
    q0 : float
        Initial queue (bytes).

    Returns
    -------
    numpy.ndarray
        Shape ``(n_records + 1, 6)``: time, queue (bytes), sending rate, CR, TR (bit/s), and
        the Fb of the last sample (bytes), at every record instant from 0 to ``duration``.
    """
    fwd = 0.5 * rtt
    back = rtt - fwd
    pc = R.pack_cp_params(p)
    pr = R.pack_rp_params(p)
    cp = R.new_cp_state(1)
    rp = R.new_rp_state(1, p.line_rate)
    out = np.zeros(R.OUT_N)
    enq = float(p.frame_size)  # the arriving frame is in the queue the CP samples
    R.cp_on_arrival(cp, 0, 0.0, 0.0, seed, pc, out)  # draw the first countdown
    t_on, t_off, c_hot = hotspot if hotspot is not None else (math.inf, math.inf, capacity)
    if start == "equilibrium":
        rp[R.RP_ACTIVE, 0] = 1.0
        rp[R.RP_CR, 0] = rp[R.RP_TR, 0] = min(capacity, offered)
        rp[R.RP_BC_LEFT, 0] = p.bc_limit
        rp[R.RP_DEADLINE, 0] = float(_ns(p.timer))

    def source_rate():
        return min(rp[R.RP_CR, 0], offered) if rp[R.RP_ACTIVE, 0] > 0.0 else offered

    rate = source_rate()
    arrivals = deque([(fwd, rate)]) if start == "idle" else deque()
    a = 0.0 if start == "idle" else rate  # arrival rate at the CP
    q = float(q0)
    cnms: deque = deque()  # (arrival time at the RP, qFb)
    n_rec = int(round(duration / record_dt))
    rec = np.zeros((n_rec + 1, 6))
    rec[0] = (0.0, q, rate, rp[R.RP_CR, 0], rp[R.RP_TR, 0], 0.0)
    k = 1
    t = 0.0
    fb_last = 0.0
    stalled = 0
    while k <= n_rec:
        c = c_hot if t_on <= t < t_off else capacity
        active = rp[R.RP_ACTIVE, 0] > 0.0
        t_next = k * record_dt
        for edge in (t_on, t_off):
            if t < edge < t_next:
                t_next = edge
        if cnms:
            t_next = min(t_next, cnms[0][0])
        if arrivals:
            t_next = min(t_next, arrivals[0][0])
        if active:
            if rp[R.RP_DEADLINE, 0] >= 0.0:
                t_next = min(t_next, rp[R.RP_DEADLINE, 0] * 1e-9)
            t_next = min(t_next, t + max(rp[R.RP_BC_LEFT, 0], 0.0) * 8.0 / rate)
        if a > 0.0:
            t_next = min(t_next, t + max(cp[R.CP_TO_SAMPLE, 0], 0.0) * 8.0 / a)
        if a < c and q > _EMPTY:
            t_next = min(t_next, t + q * 8.0 / (c - a))
        h = max(t_next - t, 0.0)
        stalled = stalled + 1 if h == 0.0 else 0
        if stalled > _MAX_STALL:  # every event consumes state; a stall is a defect
            raise RuntimeError(f"single-flow hybrid model stalled at t = {t!r} s")
        q = q + (a - c) * h / 8.0
        if q < _EMPTY:
            q = 0.0
        sent, arrived = rate * h / 8.0, a * h / 8.0
        t = t_next
        now = _ns(t)
        if active:  # the byte counter: an expiry exactly when its bytes are sent
            if sent >= rp[R.RP_BC_LEFT, 0] - _EMPTY:
                sent = max(sent, rp[R.RP_BC_LEFT, 0])
            R.rp_on_tx(rp, 0, sent, now, seed, pr)
        if arrived > 0.0:  # the CP's countdown: a sample exactly when it reaches zero
            if arrived >= cp[R.CP_TO_SAMPLE, 0] - _EMPTY:
                arrived = max(arrived, cp[R.CP_TO_SAMPLE, 0])
            if R.cp_on_arrival(cp, 0, q + enq, arrived, seed, pc, out):
                cnms.append((t + back, out[R.OUT_QFB]))
            if out[R.OUT_SAMPLED] > 0.0:
                fb_last = -(out[R.OUT_QOFF] + p.w * out[R.OUT_QDELTA])
        while cnms and cnms[0][0] <= t:
            R.rp_on_cnm(rp, 0, cnms.popleft()[1], 0, now, seed, pr)
        dl = rp[R.RP_DEADLINE, 0]
        if rp[R.RP_ACTIVE, 0] > 0.0 and 0.0 <= dl and dl * 1e-9 <= t:
            R.rp_on_timer(rp, 0, R.rp_timer_gen(rp, 0), np.int64(dl), seed, pr)
        while arrivals and arrivals[0][0] <= t:
            a = arrivals.popleft()[1]
        new = source_rate()
        if new != rate:
            rate = new
            arrivals.append((t + fwd, rate))
        if t >= k * record_dt:
            rec[k] = (t, q, rate, rp[R.RP_CR, 0], rp[R.RP_TR, 0], fb_last)
            k += 1
    return rec
