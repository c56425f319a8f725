"""The QCN loop as N reaction points, each a hybrid (impulsive) system, on a fluid queue.

The packet-fidelity mean field (:mod:`._qcn_cohort`) describes the reaction points (RPs) as a
*population*: CNMs arrive as a hazard and the cohorts' recoveries overlap, so the aggregate
rate moves smoothly. Two things it closes away are individual: which flow a sample lands on,
and where each flow stands in its own byte-counter and timer cycles. With one flow every
sample lands on it, and each CNM cuts the whole offered load at once; with many flows, flows
cut together recover together, step for step, and their timers stay in phase (the
timer-synchronised cycle of many flows). This model keeps every flow:

* **Queue**: a fluid, ``dq/dt = A(t) - C`` (floored at empty), with ``A(t)`` the sum of the
  flows' rates one forward delay earlier. Rates are piecewise constant between RP events, so
  the queue is piecewise linear and every event time is solved exactly (no time step).
* **Congestion point**: the IEEE 802.1Qau countdown of arriving bytes, on the fluid arrivals:
  a sample when the countdown reaches zero; the sampled frame belongs to flow i with
  probability ``A_i / A`` (the flows' frames interleave at the port); Fb on the queue at that
  arrival, the 6-bit quantiser, Qold, the countdown reloaded from the sampling table. The
  queue sampled is the fluid backlog plus the frames that collide at the port plus the
  arriving frame. N paced flows' frames collide and wait even below full load (the N*D/D/1
  queue, whose mean at the current load ``A/C``, loads above one taking its value at one,
  :func:`collision_queue` reads from :func:`qcnmodel.models._ndd1.waiting_table`); a packet
  port's busy period starts from those frames and, the port never idling while the backlog
  lasts, they stay in its queue (work conservation): the backlog adds to them. For one flow
  the collision queue is empty. A packet queue sampled at an arrival deviates from its
  local mean by whole frames: N paced flows' frames arrive with independent sawtooth phases,
  standard deviation sqrt(N/12) frames, no correlation between successive samples (a
  sampling interval spans many frame times; in the packet simulator at 10 flows this is what
  the sampled queue shows, at W = 2 and 32). ``noise=True`` draws it (:func:`frame_noise`);
  the packet-fidelity model does by default.
* **Reaction points**: the RP state machine of the Stanford deck "QCN: Description and
  Benchmark Simulations" (fast recovery, active and hyperactive increase, the 150 KB byte
  counter and 15 ms timer with their +-15 % jitter, the TR/8 rule, release at line rate),
  each rule called at the exact byte count or time at which it fires.
* **Loop delay**: a CNM reaches its RP half a loop delay after the sample, and the RP's new
  rate reaches the CP half a loop delay later.
* **Sources**: each offers a constant rate; what its rate limiter holds back waits in the
  adapter's buffer (``source_buffer`` bytes, the VOQ of IEEE 802.1Qau; beyond it the offer
  is refused), and while that backlog lasts the flow sends at CR, above its offer once CR
  exceeds it (at the line rate while the rate limiter is inactive).

The CP and RP rules are the bodies of :mod:`qcnmodel.sim.protocols.qcn` (one home for every
QCN rule), called with fluid quantities. What the model leaves out is the frame, but for the
collision queue and the sampled queue's noise above: no service granularity, no frame clock
at the sources (the queue a packet port would show is realised from the flows' bytes
afterwards, :mod:`._port`). Every random draw (the protocol's jitter, the
sampled flow) comes from the counter-based streams of
:mod:`qcnmodel.sim.rng`, so a trajectory is reproducible from ``seed``.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from numba import njit

from qcnmodel.models._ndd1 import waiting_table
from qcnmodel.sim.protocols import qcn as R
from qcnmodel.sim.rng import STREAM_USER, stream_key, uniform01

__all__ = ["integrate"]

#: queue below this many bytes is empty (the event solver's resolution)
_EMPTY = 1e-6
#: events at one instant before the solver calls it a stall (there are at most a handful)
_MAX_STALL = 1000
#: relative resolution of the clock: two instants closer than t * _TIME_RES (about 4.5 units
#: in the last place of a float) are one
_TIME_RES = 1e-15


@njit(cache=True)
def _due(rate, t):
    """Bytes short of a threshold at which a quantity growing at ``rate`` (bit/s) counts as
    having reached it at time ``t``: :data:`_EMPTY`, or what it gains within the clock's
    resolution where that is more (many flows at the line rate, a long run). Without it an
    event closer than the clock can resolve would never come: the step to it is zero.
    ``rate`` may be an array (one threshold per flow)."""
    return np.maximum(_EMPTY, rate * t * _TIME_RES / 8.0)


@njit(cache=True)
def collision_queue(rho, table, frame):
    """Bytes of colliding frames at a port loaded ``rho`` (arrivals over service rate):
    ``table`` holds the N*D/D/1 queue's mean waiting frames at loads 0, 1/m, ... 1
    (:func:`qcnmodel.models._ndd1.waiting_table`), linearly interpolated; a load above 1
    takes the value at 1. The one body the kernel and its twin call."""
    m = table.shape[0] - 1
    x = min(max(rho, 0.0), 1.0) * m
    k = min(int(x), m - 1)
    return (table[k] + (x - k) * (table[k + 1] - table[k])) * frame


_S_PICK = stream_key(STREAM_USER, 0)  #: which flow a sample lands on
_S_NOISE = stream_key(STREAM_USER, 1)  #: the sampled queue's frame phases
#: uniform phases summed per sample (exact up to this many flows, the same variance beyond)
_NOISE_TERMS = 12


@njit(cache=True)
def frame_noise(seed, k, n, frame):
    """Whole-frame deviation (bytes) of the queue seen by sample ``k`` from the fluid queue.

    Each of the ``n`` paced flows' cumulative arrivals deviates from its fluid line by a
    sawtooth of one frame with a uniform phase, independent of the others': the sum of ``n``
    uniform phases, variance n/12 frames^2 (as the packet-fidelity analysis takes it), drawn
    afresh at each sample, a sampling interval being many frame times. Exact up to
    :data:`_NOISE_TERMS` flows; beyond, that many terms scaled to the same variance."""
    m = min(n, _NOISE_TERMS)
    acc = 0.0
    for j in range(m):
        acc += uniform01(seed, np.int64(_S_NOISE), np.int64(k * _NOISE_TERMS + j)) - 0.5
    return acc * math.sqrt(n / m) * frame


def _ns(t: float) -> np.int64:
    return np.int64(math.floor(t * 1e9 + 0.5))


class _Agents:
    """The state of the N rate limiters and the bytes each sent since its last rule call."""

    def __init__(self, p, n, offered, start, capacity, seed, buffer=0.0):
        self.rp = R.new_rp_state(n, p.line_rate)
        self.pr = R.pack_rp_params(p)
        self.offered = offered
        self.line = float(p.line_rate)
        self.buffer = float(buffer)
        self.seed = seed
        self.pending = np.zeros(n)
        self.backlog = np.zeros(n)
        if start == "equilibrium":  # active at the fair share, cycles spread over a period
            rp = self.rp
            phase = (np.arange(n) + 0.5) / n
            rp[R.RP_ACTIVE] = 1.0
            rp[R.RP_CR] = rp[R.RP_TR] = min(capacity / n, offered)
            rp[R.RP_BC_LEFT] = p.bc_limit * phase
            rp[R.RP_DEADLINE] = np.floor(p.timer * phase * 1e9 + 0.5)
            if offered > capacity / n:  # held back at the fair share: the buffer is full
                self.backlog[:] = self.buffer
        self.rate = self.rates()

    def rates(self):
        """Sending rates: a flow with a backlog sends at CR (at the line rate while its rate
        limiter is inactive), one without at most its offered rate."""
        rp = self.rp
        held = self.backlog > _EMPTY
        return np.where(rp[R.RP_ACTIVE] > 0.0,
                        np.where(held, rp[R.RP_CR], np.minimum(rp[R.RP_CR], self.offered)),
                        np.where(held, self.line, self.offered))  # fmt: skip

    def drain(self, h, t):
        """Advance the source buffers by ``h`` s to time ``t``: frames offered minus frames
        sent, within [0, buffer] (the adapter refuses what does not fit)."""
        b = np.clip(self.backlog + (self.offered - self.rate) * (h / 8.0), 0.0, self.buffer)
        b[b < _due(np.maximum(self.rate - self.offered, 0.0), t)] = 0.0
        self.backlog = b

    def flush(self, i, now):
        """Count flow i's pending bytes (an expiry iff they reach its byte counter)."""
        if self.rp[R.RP_ACTIVE, i] > 0.0 and self.pending[i] > 0.0:
            R.rp_on_tx(self.rp, i, self.pending[i], now, self.seed, self.pr)
        self.pending[i] = 0.0


def integrate(p, n, rtt, capacity, offered, duration, record_dt, hotspot=None, seed=0,
              start="idle", q0=0.0, per_flow=False, compiled=True, source_buffer=0.0,
              noise=False):  # fmt: skip
    """Trajectory of the hybrid model of ``n`` flows.

    Parameters
    ----------
    p : QCNParams
        Protocol parameters.
    n : int
        Number of flows.
    rtt : float
        Loop delay CP -> RP -> CP (s), split evenly between the two directions.
    capacity : float
        CP service rate (bit/s).
    offered : float
        Each flow's offered rate (bit/s): what it sends while its rate limiter is inactive,
        and the most it sends otherwise.
    duration, record_dt : float
        Simulated time and record interval (s).
    hotspot : tuple, optional
        ``(t_on, t_off, capacity_bps)``: the CP serves at that capacity inside the window.
    seed : int
        Seed of every random draw.
    start : {"idle", "equilibrium"}
        Rate limiters inactive (the flows at their offered rate, nothing in flight), or
        active at CR = TR = the fair share with their cycles spread evenly over one period
        and the queue at ``q0``.
    q0 : float
        Initial queue (bytes).
    per_flow : bool
        Also record each flow's cumulative bytes sent (the caller bounds its size).
    compiled : bool
        Run the compiled kernel (:mod:`._qcn_hybrid_kernel`); False runs this module's
        readable twin, its oracle.
    source_buffer : float
        Bytes each source holds back when its rate limiter sends less than it offers (the
        adapter's VOQ, IEEE 802.1Qau: frames wait at the source, not at the switch). A flow
        with a backlog sends at CR, above its offered rate once CR exceeds it, until the
        backlog drains; 0 (default): what the rate limiter holds back is refused at once.
    noise : bool
        Add the frame-granularity deviation of the sampled queue (:func:`frame_noise`) at
        each sample, the queue seen floored at empty before the arriving frame is added.

    Returns
    -------
    rec : numpy.ndarray
        Shape ``(n_records + 1, 6)``: time, queue (bytes), per-flow mean sending rate, mean
        CR, mean TR (bit/s), and the Fb of the last sample (bytes), at every record instant
        from 0 to ``duration``.
    sent : numpy.ndarray or None
        Shape ``(n_records + 1, n)``: bytes each flow sent from 0 to each record instant.
    """
    fwd = 0.5 * rtt
    n_rec = int(round(duration / record_dt))
    t_on, t_off, c_hot = hotspot if hotspot is not None else (math.inf, math.inf, capacity)
    if not compiled:
        return _integrate_twin(p, n, fwd, rtt - fwd, capacity, offered, n_rec, record_dt,
                               (t_on, t_off, c_hot), seed, start, q0, per_flow,
                               source_buffer, noise)  # fmt: skip
    from qcnmodel.models._qcn_hybrid_kernel import integrate_compiled

    rec, sent = integrate_compiled(
        R.pack_cp_params(p), R.pack_rp_params(p), int(n), fwd, rtt - fwd, float(capacity),
        float(t_on), float(t_off), float(c_hot), float(offered), float(p.frame_size),
        float(p.w), n_rec, float(record_dt), np.int64(seed), start == "equilibrium",
        float(q0), float(p.bc_limit), float(p.timer), bool(per_flow), _S_PICK,
        float(source_buffer), float(p.line_rate), bool(noise), waiting_table(n))  # fmt: skip
    return rec, (sent if per_flow else None)


def _integrate_twin(p, n, fwd, back, capacity, offered, n_rec, record_dt, hotspot, seed, start,
                    q0, per_flow, buffer=0.0, noise=False):  # fmt: skip
    """:func:`integrate` in plain Python (numpy): the compiled kernel's oracle."""
    table = waiting_table(n)
    pc = R.pack_cp_params(p)
    cp = R.new_cp_state(1)
    out = np.zeros(R.OUT_N)
    frame = float(p.frame_size)
    ag = _Agents(p, n, offered, start, capacity, seed, buffer)
    rp = ag.rp
    R.cp_on_arrival(cp, 0, 0.0, 0.0, seed, pc, out)  # draw the first countdown
    t_on, t_off, c_hot = hotspot
    rate = ag.rate
    arrivals: deque = deque()  # (time at the CP, flow, rate)
    a = np.zeros(n)
    if start == "idle":
        arrivals.extend((fwd, i, rate[i]) for i in range(n))
    else:
        a[:] = rate
    a_sum = float(a.sum())
    q = float(q0)
    cnms: deque = deque()  # (arrival time at the RP, flow, qFb)
    rec = np.zeros((n_rec + 1, 6))
    rec[0] = (0.0, q, rate.mean(), rp[R.RP_CR].mean(), rp[R.RP_TR].mean(), 0.0)
    total = np.zeros(n)
    sent = np.zeros((n_rec + 1, n)) if per_flow else None
    k, t, fb_last, stalled, draws = 1, 0.0, 0.0, 0, 0
    while k <= n_rec:
        c = c_hot if t_on <= t < t_off else capacity
        active = rp[R.RP_ACTIVE] > 0.0
        t_next = k * record_dt
        for edge in (t_on, t_off):
            if t < edge < t_next:
                t_next = edge
        if cnms:
            t_next = min(t_next, cnms[0][0])
        if arrivals:
            t_next = min(t_next, arrivals[0][0])
        if active.any():
            left = np.maximum(rp[R.RP_BC_LEFT] - ag.pending, 0.0)
            t_bc = np.where(active, left * 8.0 / rate, np.inf)
            dl = np.where(active & (rp[R.RP_DEADLINE] >= 0.0), rp[R.RP_DEADLINE] * 1e-9, np.inf)
            t_next = min(t_next, t + float(t_bc.min()), float(dl.min()))
        if a_sum > 0.0:
            t_next = min(t_next, t + max(cp[R.CP_TO_SAMPLE, 0], 0.0) * 8.0 / a_sum)
        if a_sum < c and q > _EMPTY:
            t_next = min(t_next, t + q * 8.0 / (c - a_sum))
        gone = (ag.backlog > _EMPTY) & (rate > offered)  # a source buffer drains empty
        if gone.any():
            t_next = min(t_next, t + float((ag.backlog[gone] * 8.0 / (rate[gone] - offered)).min()))
        h = max(t_next - t, 0.0)
        stalled = stalled + 1 if h == 0.0 else 0
        if stalled > _MAX_STALL:  # every event consumes state; a stall is a defect
            raise RuntimeError(f"hybrid QCN model stalled at t = {t!r} s")
        q = q + (a_sum - c) * h / 8.0
        if q < _due(max(c - a_sum, 0.0), t_next):
            q = 0.0
        ag.drain(h, t_next)
        step = rate * (h / 8.0)
        total += step
        ag.pending += np.where(active, step, 0.0)
        arrived = a_sum * h / 8.0
        t = t_next
        now = _ns(t)
        # byte counters whose cycle ends now (the pending bytes reach them)
        for i in np.flatnonzero(active & (ag.pending >= rp[R.RP_BC_LEFT] - _due(rate, t))):
            ag.pending[i] = max(ag.pending[i], rp[R.RP_BC_LEFT, i])
            ag.flush(i, now)
        if arrived > 0.0:  # the CP's countdown: a sample exactly when it reaches zero
            if arrived >= cp[R.CP_TO_SAMPLE, 0] - _due(a_sum, t):
                arrived = max(arrived, cp[R.CP_TO_SAMPLE, 0])
                u = uniform01(seed, np.int64(_S_PICK), np.int64(draws))
                z = frame_noise(seed, np.int64(draws), n, frame) if noise else 0.0
                draws += 1
                seen = q + collision_queue(a_sum / c, table, frame)
                if R.cp_on_arrival(cp, 0, max(seen + z, 0.0) + frame, arrived, seed, pc, out):
                    i = min(int(np.searchsorted(np.cumsum(a), u * a_sum, side="right")), n - 1)
                    cnms.append((t + back, i, out[R.OUT_QFB]))
                fb_last = -(out[R.OUT_QOFF] + p.w * out[R.OUT_QDELTA])
            else:
                R.cp_on_arrival(cp, 0, q + frame, arrived, seed, pc, out)
        while cnms and cnms[0][0] <= t:
            _, i, qfb = cnms.popleft()
            ag.flush(i, now)
            R.rp_on_cnm(rp, i, qfb, 0, now, seed, ag.pr)
        due = (rp[R.RP_ACTIVE] > 0.0) & (rp[R.RP_DEADLINE] >= 0.0)
        for i in np.flatnonzero(due & (rp[R.RP_DEADLINE] * 1e-9 <= t)):
            ag.flush(i, now)
            R.rp_on_timer(rp, i, R.rp_timer_gen(rp, i), np.int64(rp[R.RP_DEADLINE, i]), seed,
                          ag.pr)  # fmt: skip
        while arrivals and arrivals[0][0] <= t:
            _, i, r = arrivals.popleft()
            a[i] = r
            a_sum = float(a.sum())
        new = ag.rates()
        for i in np.flatnonzero(new != rate):
            arrivals.append((t + fwd, i, new[i]))
        rate = ag.rate = new
        if t >= k * record_dt:
            rec[k] = (t, q, rate.mean(), rp[R.RP_CR].mean(), rp[R.RP_TR].mean(), fb_last)
            if sent is not None:
                sent[k] = total
            k += 1
    return rec, sent
