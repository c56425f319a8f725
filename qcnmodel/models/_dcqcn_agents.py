"""The DCQCN loop as N reaction points, each following the packet rules, on a fluid queue.

The DCQCN fluid model (Zhu et al., CoNEXT 2016) is a mean field: one symmetric flow whose
cuts, alpha and timers take their expectations over the marks. Three things it closes away
are individual: which flow a mark lands on (the "CNP lottery": a flow's rate over 0.1 s
depends on its own marks), the queue's reflection at empty (between cuts a flow gets no
marks at all, so the aggregate rate and the queue are noisy and the link idles when the
queue empties), and the synchronised cut of every flow when the queue crosses Kmax (each
flow is cut by its own alpha, at its own CNP time). This model keeps every flow:

* **Queue**: a fluid, ``dq/dt = A(t) - C`` floored at empty, with ``A(t)`` the sum of the
  flows' rates one forward delay earlier (the rate limiter to the CP: ``d + 8F/R``), on a
  fixed step of ``dt`` (:func:`default_step`: one packet time at the line rate, at most
  ``config.defaults["models.dcqcn_agents_max_dt"]``).
* **Congestion point**: RED/ECN marking, one Bernoulli draw per frame against the queue
  including that frame, p(Q) the RED ramp of
  :func:`qcnmodel.sim.protocols.dcqcn.mark_probability`: at dequeue (DCQCN's egress marking,
  SIGCOMM 2015; the default) on each flow's departing frames, departures shared among the
  flows in proportion to their arrival rates; or at enqueue (``mark_at="enqueue"`` of
  :class:`~qcnmodel.params.dcqcn.DCQCNSimParams`) on its arriving frames, the mark then
  leaving with the frame a queueing delay later.
* **Notification point**: the rule of :func:`~qcnmodel.sim.protocols.dcqcn.dcqcn_np_on_packet`
  (``cnp_mode`` of :class:`~qcnmodel.params.dcqcn.DCQCNSimParams`; by default the coalescing
  NP of the SIGCOMM 2015 NIC: at most one CNP per interval, a mark inside the interval sends
  one when it ends). A CNP reaches its RP the rest of the loop
  delay after the mark (``tau* - d - 8F/R``).
* **Reaction points**: the rules of :mod:`qcnmodel.sim.protocols.dcqcn` (cut by alpha/2, alpha
  update, alpha timer, byte counter and rate timer with fast recovery, additive and hyper
  increase, release at the line rate), each called at the time its timer, CNP or byte count
  fires; every source is backlogged and sends at the line rate while its rate limiter is
  inactive.
* **Rate limiter**: a frame's start fixes the gap to the next one, 8F/CR with CR after the
  frame's byte count; a CNP or timer inside the gap changes CR, and the flow's rate, from the
  next frame on (a rate limiter spaces frames; the rule of the IEEE 802.1Qau reaction point
  and of the simulator). With few fast flows that is a fraction of a microsecond; at 64 flows
  of 0.6 Gb/s, 1000-byte frames, a cut waits 7 us on average.

The rules are the simulator's own bodies (one home for every DCQCN rule), called with fluid
quantities. What the model leaves out is the frame on the wire: no service granularity, and
each gap's frame spread over it as a fluid. Every random draw comes
from the counter-based streams of :mod:`qcnmodel.sim.rng`, so a trajectory is reproducible
from ``seed``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from qcnmodel import config
from qcnmodel.sim.protocols import dcqcn as D
from qcnmodel.sim.rng import STREAM_USER, stream_key, uniform01

__all__ = ["agents_dataset", "agents_trace", "agents_work", "default_step", "link_delay"]

_STREAM_MARK = STREAM_USER + 12  #: per-frame marking draws, index = flow
_NEVER = np.int64(2**62)  #: no event pending


@njit(cache=True)
def _rp_events(rp, i, now, cnp, head, count, seed, rpp):
    """Apply flow ``i``'s due RP events (CNP arrivals, rate timer, alpha timer) in time order
    up to ``now`` (ns). Returns the new (head, count) of its CNP ring and the time of its
    next event (``_NEVER`` if none)."""
    while True:
        t_best = _NEVER
        kind = -1
        if count > 0:
            t_best, kind = cnp[i, head], 0
        if rp[D.D_ACTIVE, i] > 0.0:
            dl = np.int64(rp[D.D_DEADLINE, i])
            if 0 <= dl < t_best:
                t_best, kind = dl, 1
            da = np.int64(rp[D.D_ALPHA_DEADLINE, i])
            if 0 <= da < t_best:
                t_best, kind = da, 2
        if kind < 0 or t_best > now:
            return head, count, t_best
        if kind == 0:
            D.dcqcn_rp_on_cnp(rp, i, t_best, seed, rpp)
            head = (head + 1) % cnp.shape[1]
            count -= 1
        elif kind == 1:
            gen = np.int64(rp[D.D_TIMER_GEN, i])
            if D.dcqcn_rp_on_rate_timer(rp, i, gen, t_best, seed, rpp) < 0:
                rp[D.D_DEADLINE, i] = -1.0
        else:
            gen = np.int64(rp[D.D_ALPHA_GEN, i])
            D.dcqcn_rp_on_alpha_timer(rp, i, gen, t_best, rpp)


@njit(cache=True)
def _roomy(cnp, head, count, more):
    """The CNP rings with room for ``more`` CNPs beyond each flow's ``count``: ``cnp``
    itself, or rings of at least twice the room with each flow's CNPs in order from slot 0.

    The caller makes room once per step for the most a flow can be sent in it and never
    replaces the rings inside its per-flow loops: numba updates the reference count of an
    array rebound in a loop (two atomic operations) at every iteration of it.
    """
    n, cap = cnp.shape
    most = 0
    for j in range(n):
        most = max(most, count[j])
    if most + more <= cap:
        return cnp
    new_cap = 2 * cap
    while new_cap < most + more:
        new_cap *= 2
    out = np.zeros((n, new_cap), np.int64)
    for j in range(n):
        for k in range(count[j]):
            out[j, k] = cnp[j, (head[j] + k) % cap]
        head[j] = 0
    return out


@njit(cache=True)
def integrate_agents(cpp, npp, rpp, n, frame, dt_ns, fwd_steps, back_ns, nsteps, bin_steps,
                     seed, cap):  # fmt: skip
    """Integrate the loop (module docstring) for ``nsteps`` steps of ``dt_ns``; ``cap``: the
    room for one flow's CNPs in flight to start with (:func:`_in_flight`; it grows).

    Returns
    -------
    q, dep : ndarray (nbins,)
        Bin means of the queue (bytes) and of the departure rate (bit/s).
    flows : ndarray (n, nbins)
        Bin means of each flow's departure rate (bit/s).
    ncnp : ndarray (n,)
        CNPs received per flow.
    tally : ndarray (5,)
        Bytes sent, arrived at the queue and departed over the run, the queue at its end,
        and the bytes still on the way (sent, not arrived): sent = arrived + on the way,
        arrived = departed + queue.
    """
    c = rpp[D.DRP_C]
    dt = dt_ns * 1e-9
    rp = np.zeros((D.D_NFIELDS, n))
    rp[D.D_CR, :] = c
    rp[D.D_TR, :] = c
    rp[D.D_DEADLINE, :] = -1.0
    rp[D.D_ALPHA_DEADLINE, :] = -1.0
    nps = np.zeros((D.NP_NFIELDS, n))
    nps[D.NP_LAST_CNP, :] = -1.0
    hist = np.zeros((fwd_steps + 1, n))  # sending rates, one forward delay of history
    tx_acc = np.zeros(n)  # the part of the current frame gap sent
    gap = np.full(n, c)  # the rate of the current gap, set when its frame started
    mark_acc = np.zeros(n)  # frames towards the next marking draw
    enqueue = cpp[D.DCP_MARK_AT] == D.MARK_ENQUEUE
    ctr = np.zeros(n, np.int64)
    cnp = np.zeros((n, cap), np.int64)
    # the most CNPs one flow can be sent in a step: one per marking draw, and a flow's draws
    # in a step are its carry (< 1 frame) plus at most c dt / 8 bytes (it sends, and the
    # queue serves, at most at the line rate)
    per_step = 1 + int(math.ceil(c * dt / (8.0 * frame)))
    head = np.zeros(n, np.int64)
    count = np.zeros(n, np.int64)
    nxt = np.full(n, _NEVER)
    nb = nsteps // bin_steps
    qb = np.zeros(nb)
    db = np.zeros(nb)
    fb = np.zeros((n, nb))
    q = 0.0
    sent = arrived = departed = 0.0  # bytes: the conservation tally
    for k in range(nsteps):
        now = np.int64(k) * dt_ns
        slot = k % (fwd_steps + 1)
        for i in range(n):
            if nxt[i] <= now:  # nxt: no later than the flow's next event (a CNP, a timer)
                head[i], count[i], nxt[i] = _rp_events(rp, i, now, cnp, head[i], count[i],
                                                       seed, rpp)  # fmt: skip
            r = gap[i]
            hist[slot, i] = r
            sent += r * dt / 8.0
            tx_acc[i] += r * dt / (8.0 * frame)
            while tx_acc[i] >= 1.0:  # a frame starts: the byte counter, then the next gap
                over = (tx_acc[i] - 1.0) / r  # the step's rest, in frame times at 1 bit/s
                D.dcqcn_rp_on_tx(rp, i, frame, seed, rpp)
                r = rp[D.D_CR, i] if rp[D.D_ACTIVE, i] > 0.0 else c
                gap[i] = r
                tx_acc[i] = over * r
        arr_slot = (k + 1) % (fwd_steps + 1)  # the rates of fwd_steps steps ago
        a_tot = 0.0
        for i in range(n):
            a_tot += hist[arr_slot, i]
        q_arr = q
        served = min(q + a_tot * dt / 8.0, c * dt / 8.0)  # bytes that leave in this step
        arrived += a_tot * dt / 8.0
        departed += served
        q = q + a_tot * dt / 8.0 - served
        if q < 0.0:
            q = 0.0
        # the RED ramp against the queue including the frame: the one it finds on arrival
        # (enqueue) or the one it leaves (dequeue)
        p = D.mark_probability((q_arr if enqueue else q) + frame, cpp)
        b = k // bin_steps  # < nb: nsteps is a whole number of bins
        qb[b] += q / bin_steps
        db[b] += served * 8.0 / dt / bin_steps
        if a_tot <= 0.0:
            continue
        t_enq = now + np.int64(q_arr * 8.0 / c * 1e9)  # when an arriving frame leaves
        cnp = _roomy(cnp, head, count, per_step)
        for i in range(n):
            share = served * hist[arr_slot, i] / a_tot
            fb[i, b] += share * 8.0 / dt / bin_steps
            if enqueue:
                mark_acc[i] += hist[arr_slot, i] * dt / (8.0 * frame)
            else:
                mark_acc[i] += share / frame
            while mark_acc[i] >= 1.0:
                mark_acc[i] -= 1.0
                if p <= 0.0:
                    continue
                u = uniform01(seed, stream_key(_STREAM_MARK, i), ctr[i])
                ctr[i] += 1
                if u >= p:
                    continue
                t_np = D.dcqcn_np_on_packet(nps, i, True, t_enq if enqueue else now, npp)
                if t_np >= 0:
                    cnp[i, (head[i] + count[i]) % cnp.shape[1]] = t_np + back_ns
                    count[i] += 1
                    nxt[i] = min(nxt[i], t_np + back_ns)
    pipe = 0.0  # sent, not yet arrived: the last fwd_steps steps' rates
    for j in range(1, fwd_steps + 1):  # steps nsteps - fwd_steps .. nsteps - 1
        for i in range(n):
            pipe += hist[(nsteps + j) % (fwd_steps + 1), i] * dt / 8.0
    tally = np.array([sent, arrived, departed, q, pipe])
    return qb, db, fb, rp[D.D_NCNP, :].copy(), tally


def default_step(params) -> float:
    """The default step (s): one packet time at the line rate, at most
    ``config.defaults["models.dcqcn_agents_max_dt"]`` (a rate change and a mark take effect
    at a step's start), and at least 1 ns (the clock)."""
    dt = min(8.0 * params.packet_size / params.line_rate,
             config.defaults["models.dcqcn_agents_max_dt"])  # fmt: skip
    return max(dt, 1e-9)


def agents_work(params, n_flows: int, duration: float, dt: float | None = None) -> float:
    """What a run costs: flow-steps of ``dt`` (default :func:`default_step`) plus the most
    timer firings (each active flow's rate and alpha timers, one per period) over
    ``duration`` (s)."""
    dt_ns = max(1, int(round((default_step(params) if dt is None else dt) * 1e9)))
    steps = math.ceil(duration * 1e9 / dt_ns)
    firings = duration / params.rate_timer + duration / params.alpha_timer
    return float(n_flows) * (steps + firings)


def _in_flight(back_ns: int, interval: float) -> int:
    """Room for one flow's CNPs in flight: the NP sends at most one per CNP interval (> 0 in
    the model) over the return path, plus the one pending at the NP and the frame counter's
    carry. Marks drawn at enqueue also wait out the queue, so the room grows when it is
    short."""
    return int(back_ns) // max(int(math.floor(interval * 1e9)), 1) + 3


def link_delay(tau: float, frame: float, line: float, field: str = "rtt") -> float:
    """The link delay d (s) of the matched DCQCN network at loop delay ``tau``: sources and
    port at the line rate ``line``, a rate change reaches the queue d + 8F/R after the rate
    limiter, a mark drawn at dequeue the reaction point 8F/C + 3 d after the queue, so
    tau* = 4 d + 8F/R + 8F/C (ValueError naming ``field`` below that floor)."""
    d = (tau - 2.0 * 8.0 * frame / line) / 4.0
    if d < 0.0:
        raise ValueError(f"{field}: {tau:g} s is below the serialisation floor "
                         f"{16.0 * frame / line:g} s")  # fmt: skip
    return d


def agents_trace(model, duration: float, bin_dt: float, seed: int = 0, dt: float | None = None):
    """Trajectory of ``model``'s operating point with every flow followed (module docstring),
    from an empty queue and every source at the line rate (as a packet simulation starts).

    Parameters
    ----------
    model : DCQCNFluidModel
        The operating point: its parameters, ``n_flows`` and ``rtt`` (the loop delay tau*),
        and the notification rule of ``params.cnp_mode`` when it has one (else coalescing).
    duration, bin_dt : float
        Length and bin of the trace (s); the bins are means over (t - bin_dt, t].
    seed : int
        Seed of the marking draws.
    dt : float, optional
        Step (s); default :func:`default_step`.

    Returns
    -------
    dict
        ``t`` (bin end times), ``q`` (bytes), ``thr`` (departure rate, bit/s), ``flows``
        (per-flow departure rates, bit/s, shape (n, bins)), ``ncnp`` (CNPs per flow) and
        ``tally`` (the bytes' conservation, :func:`integrate_agents`).
    """
    p = model.params
    frame = float(p.packet_size)
    c = float(p.line_rate)
    dt = default_step(p) if dt is None else float(dt)
    dt_ns = max(1, int(round(dt * 1e9)))
    tau = float(model.rtt)
    fwd = link_delay(tau, frame, c) + 8.0 * frame / c
    fwd_steps = max(0, int(round(fwd * 1e9 / dt_ns)))
    back_ns = max(0, int(round((tau - fwd) * 1e9)))
    bin_steps = max(1, int(round(bin_dt * 1e9 / dt_ns)))
    nsteps = int(math.ceil(duration * 1e9 / dt_ns / bin_steps)) * bin_steps
    n = int(model.n_flows)
    work = agents_work(p, n, nsteps * dt_ns * 1e-9, dt_ns * 1e-9)
    cap_work = config.defaults["models.max_steps"]
    if work > cap_work or n * (nsteps // bin_steps) > config.defaults["models.max_records"]:
        raise ValueError(
            f"duration: {duration:g} s of {n} flows is {work:.3g} flow-steps of "
            f"{dt_ns} ns and timer firings, and {n * (nsteps // bin_steps):.3g} records (limits "
            f"{cap_work:.3g} and {config.defaults['models.max_records']:.3g}, "
            'config.defaults["models.max_steps"] and ["models.max_records"]): shorten the '
            "duration, widen record_dt or use the mean field (method='compiled')"
        )
    cap = _in_flight(back_ns, float(p.cnp_interval))
    held = n * (fwd_steps + 1 + cap)  # one forward delay of rates, the CNPs in flight
    if held > config.defaults["models.max_records"]:
        raise ValueError(
            f"rtt: {tau:g} s with {n} flows holds {held:.3g} values in flight (a forward delay "
            f"of every flow's rate in {dt_ns} ns steps and the CNPs on the return path; limit "
            f'{config.defaults["models.max_records"]:.3g}, config.defaults["models.'
            'max_records"]): the every-flow model is for loop delays of microseconds to '
            "milliseconds; use the mean field (method='compiled')"
        )
    qb, db, fb, ncnp, tally = integrate_agents(
        D.pack_dcqcn_cp_params(p), D.pack_dcqcn_np_params(p), D.pack_dcqcn_rp_params(p),
        n, frame, np.int64(dt_ns), fwd_steps, np.int64(back_ns), nsteps, bin_steps,
        np.int64(seed), cap,
    )  # fmt: skip
    t = (np.arange(qb.size) + 1) * bin_steps * dt_ns * 1e-9
    return {"t": t, "q": qb, "thr": db, "flows": fb, "ncnp": ncnp, "tally": tally}


def agents_dataset(model, duration: float, record_dt: float, seed: int = 0,
                   dt: float | None = None):  # fmt: skip
    """:func:`agents_trace` as the xarray Dataset of a simulation: ``q`` (bytes), ``throughput``
    (departure rate, bit/s) and ``rate_current`` (each flow's departure rate, bit/s, over
    ``flow``), bin means over ``record_dt``; ``cnps`` (per flow) counts the CNPs received."""
    import xarray as xr

    tr = agents_trace(model, duration, record_dt, seed=seed, dt=dt)
    flows = np.arange(tr["flows"].shape[0])
    return xr.Dataset(
        {
            "q": ("time", tr["q"], {"units": "B"}),
            "throughput": ("time", tr["thr"], {"units": "bit/s"}),
            "rate_current": (("flow", "time"), tr["flows"], {"units": "bit/s"}),
            "cnps": ("flow", tr["ncnp"]),
        },
        coords={"time": ("time", tr["t"], {"units": "s"}), "flow": flows},
        attrs={"model": type(model).__name__, "method": "agents", "seed": int(seed),
               "n_flows": int(model.n_flows), "rtt": float(model.rtt)},
    )  # fmt: skip
