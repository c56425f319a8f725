"""The congestion point's queue as a packet port holds it: the model's flows cut into frames.

The hybrid model (:mod:`._qcn_hybrid`) gives each flow's bytes sent over time; its fluid
queue is empty whenever the flows together send below the port's rate. A packet port is
not: the flows' frames arrive one by one and collide, and the queue between a backlog's
frames is that of N paced streams (the N*D/D/1 queue of :mod:`._ndd1`, whose *mean* alone
never empties a 50 us bin at loads near one, while its realisations do). This module
realises that port: each flow's cumulative bytes (linear between the records) are cut into
whole frames at a phase drawn per flow from the run's seed, the frames reach the port a
forward delay later, and a FIFO serves them at the port's rate (the hotspot's inside its
window; a frame in service finishes at the rate it started with, as the simulator's port
does), from an initial backlog of whole frames. The queue is the bytes *waiting*, the frame
in transmission excluded, as the packet simulator counts it (IEEE 802.1Qau's Q).

:func:`realised_queue` returns it at the record instants and its mean over each record
interval (the simulator's traces are bin means); the realisation is reproducible from the
seed (:mod:`qcnmodel.sim.rng`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.models._ndd1 import observed_queue
from qcnmodel.sim.rng import STREAM_USER, stream_key, uniform01

__all__ = ["realised_queue", "reported_queue"]

_S_PHASE = stream_key(STREAM_USER, 2)  #: each flow's frame phase


@njit(cache=True)
def _frame_times(t, sent, frame, fwd, phase, backlog):
    """Arrival times at the port of every whole frame of every flow, sorted, after
    ``backlog`` frames waiting at time 0: record interval by record interval (frames of
    different intervals are in order), each interval's frames sorted by :func:`_sort_span`
    in buffers sized to the largest interval (grown when an interval needs more)."""
    n_rec, n = sent.shape
    count = backlog
    for i in range(n):
        count += int(np.floor(sent[-1, i] / frame + phase[i]))
        count -= int(np.floor(sent[0, i] / frame + phase[i]))
    size = count + n  # room for a boundary that rounding puts either side
    out = np.empty(size)
    out[:backlog] = 0.0
    tmp, key, slots = np.empty(64), np.empty(64, np.int64), np.empty(66, np.int64)
    nxt = np.floor(sent[0] / frame + phase) + 1.0  # each flow's next frame boundary
    m = backlog
    for k in range(1, n_rec):
        first = m
        t0, dt = t[k - 1], t[k] - t[k - 1]
        for i in range(n):
            s0, s1, ph = sent[k - 1, i], sent[k, i], phase[i]
            nx = nxt[i]
            b = (nx - ph) * frame
            while b <= s1 and m < size:
                out[m] = t0 + dt * (b - s0) / (s1 - s0) + fwd
                m += 1
                nx += 1.0
                b = (nx - ph) * frame
            nxt[i] = nx
        if m - first > tmp.shape[0]:
            tmp, key = np.empty(2 * (m - first)), np.empty(2 * (m - first), np.int64)
            slots = np.empty(2 * (m - first) + 2, np.int64)
        _sort_span(out, first, m, t0 + fwd, t[k] + fwd, tmp, key, slots)
    return out[:m]


@njit(cache=True)
def _sort_span(x, first, last, lo, hi, tmp, key, slots):
    """Sort ``x[first:last]``, whose values lie about evenly in [lo, hi], in place: a bucket
    pass (one bucket per value, each value's bucket kept in ``key``) into ``tmp``, insertion
    sort there, which has next to nothing left to move, and a copy back. The result is the
    sorted values, whatever the buckets."""
    m = last - first
    if m < 2:
        return
    scale = m / (hi - lo) if hi > lo else 0.0
    slots[: m + 1] = 0
    for j in range(m):
        b = min(max(int((x[first + j] - lo) * scale), 0), m - 1)
        key[j] = b
        slots[b + 1] += 1
    for b in range(m):
        slots[b + 1] += slots[b]
    for j in range(m):
        tmp[slots[key[j]]] = x[first + j]
        slots[key[j]] += 1
    for j in range(1, m):
        v = tmp[j]
        h = j - 1
        while h >= 0 and tmp[h] > v:
            tmp[h + 1] = tmp[h]
            h -= 1
        tmp[h + 1] = v
    x[first:last] = tmp[:m]


@njit(cache=True)
def _starts(arrive, frame, capacity, t_on, t_off, c_hot):
    """Service start of each frame (FIFO, ``arrive`` sorted)."""
    starts = np.empty(arrive.shape[0])
    serve, serve_hot = frame * 8.0 / capacity, frame * 8.0 / c_hot
    free = 0.0
    for k in range(arrive.shape[0]):
        s = max(arrive[k], free)
        starts[k] = s
        free = s + (serve_hot if t_on <= s < t_off else serve)
    return starts


@njit(cache=True)
def _counted(x, times):
    """For each T of ``times`` (increasing): how many of the sorted ``x`` are <= T, and the
    time integral up to T of that count, sum of max(T - x, 0)."""
    count = np.empty(times.shape[0])
    area = np.empty(times.shape[0])
    j = 0
    acc = 0.0  # sum of the x passed
    for k in range(times.shape[0]):
        while j < x.shape[0] and x[j] <= times[k]:
            acc += x[j]
            j += 1
        count[k] = j
        area[k] = j * times[k] - acc
    return count, area


def realised_queue(t, sent, capacity, frame, fwd, seed, q0=0.0, hot=None):
    """The bytes waiting at a packet port fed by the flows' frames.

    Parameters
    ----------
    t : numpy.ndarray
        Record instants (s), increasing, ``t[0] = 0``.
    sent : numpy.ndarray
        Shape ``(len(t), n)``: bytes each flow had sent by each record instant.
    capacity : float
        The port's rate (bit/s).
    frame : float
        Frame size (bytes).
    fwd : float
        Delay from a source to the port (s).
    seed : int
        Seed of the frames' phases.
    q0 : float
        Bytes waiting at time 0 (whole frames).
    hot : tuple, optional
        ``(start, stop, rate)``: the port serves at ``rate`` inside the window.

    Returns
    -------
    q, q_mean : numpy.ndarray
        The bytes waiting at each record instant, and their mean over the record interval
        ending there (``q_mean[0] = q[0]``).
    """
    t = np.asarray(t, dtype=float)
    sent = np.ascontiguousarray(sent, dtype=float)
    n = sent.shape[1]
    phase = np.array([uniform01(np.int64(seed), np.int64(_S_PHASE), np.int64(i))
                      for i in range(n)])  # fmt: skip
    t_on, t_off, c_hot = hot if hot is not None else (np.inf, np.inf, float(capacity))
    backlog = int(round(max(float(q0), 0.0) / frame))  # whole frames waiting at time 0
    arrive = _frame_times(t, sent, float(frame), float(fwd), phase, backlog)
    starts = _starts(arrive, float(frame), float(capacity), float(t_on), float(t_off),
                     float(c_hot))  # fmt: skip
    n_in, in_area = _counted(arrive, t)
    n_out, out_area = _counted(starts, t)
    waiting = (n_in - n_out) * float(frame)
    area = (in_area - out_area) * float(frame)
    q_mean = np.empty_like(t)
    q_mean[0] = waiting[0]
    q_mean[1:] = np.diff(area) / np.diff(t)
    return waiting, q_mean


#: the compiled kernels a realised port runs (what compiles with the model's trajectories)
KERNELS = (_frame_times, _sort_span, _starts, _counted)


def reported_queue(rec, sent, n, capacity, frame, fwd, seed, idle, hot=None):
    """The queue the hybrid model reports, from its records ``rec`` (columns time, fluid
    queue, mean sending rate, ...) and each flow's bytes ``sent`` (or None): the port fed by
    the flows' frames (:func:`realised_queue`: the bytes waiting at the record instants and
    their mean over each record interval), or, where the flows' bytes were not kept (too many
    records), the fluid backlog or the collision queue's mean
    (:func:`qcnmodel.models._ndd1.observed_queue`) and no interval means (None); likewise
    past ``config.defaults["models.max_port_frames"]`` frames (memory: five numbers each)."""
    from qcnmodel import config

    if sent is not None:
        frames = float(np.sum(sent[-1] - sent[0])) / frame + sent.shape[1]
        budget = config.defaults["models.max_port_frames"]
        if frames <= budget:
            return realised_queue(rec[:, 0], sent, capacity, frame, fwd, seed, rec[0, 1], hot)
        import warnings

        msg = (
            f"the port would hold {frames:.3g} frames, more than models.max_port_frames "
            f"= {budget:g}: q is the fluid backlog or the collision queue's mean (no q_mean)"
        )
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    rate0 = 0.0 if idle else rec[0, 2]
    return observed_queue(rec[:, 0], rec[:, 1], rec[:, 2], n, capacity, fwd, rate0, frame,
                          hot), None  # fmt: skip
