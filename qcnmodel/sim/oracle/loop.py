"""Pure-Python twin of the compiled kernel: the simulator's test oracle.

Same event semantics as :mod:`qcnmodel.sim.kernel.loop` (read its module docstring), written as
plain objects with :mod:`heapq`, the plain-Python rule classes of every protocol (through
one adapter per protocol family, :mod:`qcnmodel.sim.oracle.dispatch`) and the random numbers
of :func:`qcnmodel.sim.rng.uniform01_py`. It runs no compiled code. Every
event is pushed in the same order as in the kernel, so the (time, sequence) order, the event
log, the counters and the traces agree bit for bit on any network (tests/sim/test_oracle.py,
tests/sim/test_protocols_kernel.py). It is slow (about 1 us of Python per
line executed); use it on small cases and for the speed ratio in ``benchmarks/simulator.py``.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from qcnmodel.sim.kernel.pacing import RL_CARRY_UNIT
from qcnmodel.sim.kernel.state import (
    INF_NS,
    K_ARRIVE,
    K_AUX,
    K_CNM,
    K_DRIFT,
    K_HOT,
    K_PAUSE,
    K_SAMPLE,
    K_TIMER,
    K_TXDONE,
    K_WAKE,
    TG_ROWS,
    TQ_MAX,
    TQ_ROWS,
    TR_ROWS,
    initial_events,
    protocol_config,
)
from qcnmodel.sim.network import CompiledNetwork
from qcnmodel.sim.oracle.dispatch import make_adapter
from qcnmodel.sim.rng import STREAM_DEST, STREAM_ONOFF, STREAM_TRAFFIC, stream_key_py, uniform01_py


class _Port:
    __slots__ = (
        "src", "dst", "prop", "host", "busy", "paused", "psent", "q", "queue", "qarea", "qt",
        "qmax", "txb", "drops", "part", "plim", "oqlim", "xoff", "xon", "nspb", "nspb_base", "cp",
        "carry",
    )  # fmt: skip


class _Flow:
    __slots__ = ("src", "dst", "L", "vn", "vlim", "rnext", "rprev", "na", "trow", "dbytes")
    __slots__ += ("wbytes", "deliv", "rlcarry")


class _Gen:
    __slots__ = ("host", "kind", "flow", "ds", "dc", "k", "base", "next", "ct", "cd", "co")
    __slots__ += ("stop", "onend", "start", "st", "sd", "so", "prob", "gap", "on", "off")


class _Frame:
    __slots__ = ("flow", "back", "inlink", "aux")

    def __init__(self, flow: int, aux: int = 0) -> None:
        self.flow = flow
        self.back = 0
        self.inlink = -1
        self.aux = aux


class Oracle:
    """One run of the reference simulator (the arguments of ``kernel.state.build_state``)."""

    def __init__(self, net: CompiledNetwork, params, *, qcn, seed, end_ns, bin_ns, measure_ns,
                 traced_flows, log_events: int = 0, proto=None):  # fmt: skip
        proto = protocol_config(params, qcn, proto)
        self.net, self.p, self.seed = net, params, int(seed)
        self.end, self.bin = int(end_ns), int(bin_ns)
        self.nbins = max(1, -(-self.end // self.bin))
        self.ma, self.mb = (int(x) for x in measure_ns)
        self.cplat = int(round(params.cp_latency * 1e9))
        self.proto = proto
        self.fam = make_adapter(self, proto, net.n_ports, net.n_flows, int(seed))
        self.cps, self.rps, self.nps = self.fam.cps, self.fam.rps, self.fam.nps
        self.drift = self.fam.drift
        self.heap: list = []
        self.seq = 0
        self.now = 0
        self.c = dict.fromkeys(
            ("events", "offered", "blocked", "sent", "deliv", "drop", "pause", "cnm"), 0
        )
        self.c.update(deliv_bytes=0, tail=0)
        self.log: list = []
        self.log_cap = log_events
        self.ports = []
        for p in range(net.n_ports):
            o = _Port()
            o.src, o.dst = int(net.port_src[p]), int(net.port_dst[p])
            o.prop, o.host = int(net.port_prop_ns[p]), int(net.node_host[net.port_src[p]])
            o.busy = o.paused = o.psent = o.q = o.qarea = o.qt = o.qmax = o.txb = o.drops = 0
            o.part, o.queue = 0, []
            o.plim, o.oqlim = int(net.port_part_limit[p]), int(net.port_oq_limit[p])
            o.xoff, o.xon = int(net.port_xoff[p]), int(net.port_xon[p])
            o.cp = bool(net.port_cp[p])
            o.nspb = o.nspb_base = float(np.float64(8e9) / net.port_rate[p])
            o.carry = 0.0
            self.ports.append(o)
        self.flows = []
        trow = {int(f): r for r, f in enumerate(traced_flows)}
        for f in range(net.n_flows):
            o = _Flow()
            o.src, o.dst, o.L = int(net.flow_src[f]), int(net.flow_dst[f]), int(net.frame_size)
            o.vn, o.vlim, o.rnext, o.rprev, o.na = 0, int(net.flow_voq_limit[f]), -1, -1, 0
            o.rlcarry = 0
            o.trow, o.dbytes, o.wbytes, o.deliv = trow.get(f, -1), 0, 0, 0
            self.flows.append(o)
        self.tr_flows = [int(f) for f in traced_flows]
        self.gens = []
        for g in range(len(net.gen_host)):
            o = _Gen()
            o.host, o.kind, o.flow = (
                int(net.gen_host[g]),
                int(net.gen_kind[g]),
                int(net.gen_flow[g]),
            )
            o.ds, o.dc = int(net.gen_dst_start[g]), int(net.gen_dst_count[g])
            o.start, o.stop = int(net.gen_start_ns[g]), int(net.gen_stop_ns[g])
            o.k = o.base = o.ct = o.cd = o.co = o.onend = 0
            o.next = INF_NS
            o.st = stream_key_py(STREAM_TRAFFIC, g)
            o.sd = stream_key_py(STREAM_DEST, g)
            o.so = stream_key_py(STREAM_ONOFF, g)
            o.prob, o.gap = float(net.gen_prob[g]), float(net.gen_gap_ns[g])
            o.on, o.off = float(net.gen_on_ns[g]), float(net.gen_off_ns[g])
            self.gens.append(o)
        nh = net.n_hosts
        self.h_port = [int(x) for x in net.host_port]
        self.h_rr, self.h_wake = [-1] * nh, [-1] * nh
        gs, gc = net.host_gen_start, net.host_gen_count
        self.h_gens = [list(range(int(gs[h]), int(gs[h] + gc[h]))) for h in range(nh)]
        self.node_host = [int(x) for x in net.node_host]
        self.lat = [int(x) for x in net.node_latency_ns]
        self.sw_route = net.routing.sw_route.tolist()
        self.node_sw = [int(x) for x in net.routing.node_sw]
        up, back = net.flow_route()
        self.f_up, self.f_back = up.tolist(), back.tolist()
        self.dst_flow = net.dst_flow.tolist()
        ntr = len(self.tr_flows)
        self.TQ = np.zeros((TQ_ROWS, net.n_ports, self.nbins), np.int64)
        self.TG = np.zeros((TG_ROWS, self.nbins), np.int64)
        self.TFB = np.zeros((max(ntr, 1), self.nbins), np.int64)
        self.TRP = np.zeros((TR_ROWS, max(ntr, 1), self.nbins))

    # ------------------------------------------------------------------ scheduling
    def push(self, t, kind, a, b, c, x=None):
        heapq.heappush(self.heap, (t, self.seq, kind, a, b, c, x))
        self.seq += 1

    # ------------------------------------------------------------------ traffic
    def gen_advance(self, g: _Gen) -> None:
        k = g.k + 1
        if g.kind == 0:
            if g.prob < 1.0:
                limit = g.stop - g.base
                while True:
                    u = uniform01_py(self.seed, g.st, g.ct)
                    g.ct += 1
                    if u < g.prob:
                        break
                    k += 1
                    if k * g.gap >= limit:
                        break
            t = g.base + int(k * g.gap + 0.5)
        else:
            t = g.base + int(k * g.gap + 0.5)
            if g.on > 0.0:
                while t >= g.onend and t < g.stop:
                    u = uniform01_py(self.seed, g.so, g.co)
                    g.co += 1
                    off = -g.off * math.log(1.0 - u)
                    u = uniform01_py(self.seed, g.so, g.co)
                    g.co += 1
                    on = -g.on * math.log(1.0 - u)
                    g.base = g.onend + int(off + 0.5)
                    g.onend = g.base + int(on + 0.5)
                    k = 0
                    t = g.base
        g.k = k
        g.next = INF_NS if t >= g.stop else t

    def gen_init(self, g: _Gen) -> None:
        g.k, g.base = -1, g.start
        if g.kind == 1 and g.on == 0.0:
            u = uniform01_py(self.seed, g.st, g.ct)
            g.ct += 1
            g.base = g.start + int(u * g.gap)
        if g.on > 0.0:
            u = uniform01_py(self.seed, g.so, g.co)
            g.co += 1
            g.onend = g.start + int(-g.on * math.log(1.0 - u) + 0.5)
        self.gen_advance(g)

    def catch_up(self, h: int, now: int) -> None:
        flows = self.flows
        while True:
            best, bt = None, INF_NS
            for gi in self.h_gens[h]:
                g = self.gens[gi]
                if g.next < bt:
                    best, bt = g, g.next
            if best is None or bt > now:
                return
            g = best
            if g.kind == 0:
                u = uniform01_py(self.seed, g.sd, g.cd)
                g.cd += 1
                f = self.dst_flow[g.ds + int(u * g.dc)]
            else:
                f = g.flow
            self.c["offered"] += 1
            fl = flows[f]
            if fl.vn < fl.vlim:
                self.c["sent"] += 1
                fl.vn += 1
                if fl.vn == 1:  # ring insertion before the RR pointer
                    rr = self.h_rr[h]
                    if rr < 0:
                        fl.rnext = fl.rprev = f
                        self.h_rr[h] = f
                    else:
                        prev = flows[rr].rprev
                        flows[prev].rnext = f
                        fl.rprev, fl.rnext = prev, rr
                        flows[rr].rprev = f
            else:
                self.c["blocked"] += 1
            self.gen_advance(g)

    # ------------------------------------------------------------------ ports
    def deliver(self, f: int, L: int, t: int) -> None:
        if t > self.end:
            self.c["tail"] += 1
            return
        fl = self.flows[f]
        self.c["deliv"] += 1
        self.c["deliv_bytes"] += L
        fl.deliv += 1
        fl.dbytes += L
        if self.ma <= t < self.mb:
            fl.wbytes += L
        if fl.trow >= 0 and t // self.bin < self.nbins:
            self.TFB[fl.trow, t // self.bin] += L

    def transmit(self, p: int, fr: _Frame, nbytes: int, inlink: int, now: int) -> None:
        o = self.ports[p]
        exact = nbytes * o.nspb + o.carry  # the kernel's PF_CARRY
        tx = int(exact + 0.5)
        o.carry = exact - tx
        o.busy = 1
        o.txb += nbytes
        self.push(now + tx, K_TXDONE, p, inlink, nbytes)
        d = o.prop + self.lat[o.dst]
        if self.node_host[o.dst] >= 0:
            self.deliver(fr.flow, nbytes, now + tx + d)
            self.fam.np_deliver(fr, fr.flow, now + tx + d, d)
        else:
            fr.back += d
            self.push(now + tx + d, K_ARRIVE, fr, p, 0)

    def q_touch(self, o: _Port, now: int) -> None:
        o.qarea += o.q * (now - o.qt)
        o.qt = now

    def switch_service(self, p: int, now: int) -> None:
        o = self.ports[p]
        if o.busy or o.paused or not o.queue:
            return
        fr = o.queue.pop(0)
        L = self.flows[fr.flow].L
        self.q_touch(o, now)
        o.q -= L
        if o.cp:
            self.fam.cp_dequeue(fr, p, o.q, L, now)
        self.transmit(p, fr, L, fr.inlink, now)

    def host_service(self, h: int, now: int) -> None:
        self.catch_up(h, now)
        p = self.h_port[h]
        o = self.ports[p]
        if o.busy or o.paused:
            return
        flows = self.flows
        f0 = self.h_rr[h]
        chosen, wmin = -1, INF_NS
        if f0 >= 0:
            f = f0
            while True:
                na = flows[f].na
                if na <= now:
                    chosen = f
                    break
                wmin = min(wmin, na)
                f = flows[f].rnext
                if f == f0:
                    break
        if chosen < 0:
            for gi in self.h_gens[h]:
                wmin = min(wmin, self.gens[gi].next)
            if wmin < INF_NS and wmin != self.h_wake[h]:
                self.h_wake[h] = wmin
                self.push(wmin, K_WAKE, h, 0, 0)
            return
        f = chosen
        fl = flows[f]
        L = fl.L
        fl.vn -= 1
        nxt = fl.rnext
        if fl.vn == 0:
            if nxt == f:
                self.h_rr[h] = -1
            else:
                flows[fl.rprev].rnext = nxt
                flows[nxt].rprev = fl.rprev
                self.h_rr[h] = nxt
        else:
            self.h_rr[h] = nxt
        fl.na = now
        tag = self.fam.rl_send(f, L, now)
        rp = self.rps[f]
        if rp.active:  # the spacing's rounding remainder carries on (kernel's rl_spacing)
            exact = L * 8e9 / rp.cr + fl.rlcarry * RL_CARRY_UNIT
            gap = math.floor(exact + 0.5)
            fl.rlcarry = math.floor((exact - gap) / RL_CARRY_UNIT + 0.5)
            fl.na = now + gap
        self.transmit(p, _Frame(f, tag), L, -1, now)

    def next_port(self, node: int, f: int) -> int:
        """Egress port of switch ``node`` for flow ``f`` (twin of the kernel's ``next_port``)."""
        s, u = self.node_sw[node], self.f_up[f]
        return self.f_back[f] if u == s else self.sw_route[s][u]

    def on_arrive(self, fr: _Frame, link: int, now: int) -> int:
        fl = self.flows[fr.flow]
        L = fl.L
        lk = self.ports[link]
        node = lk.dst
        out = self.next_port(node, fr.flow)
        oo = self.ports[out]
        if lk.part + L > lk.plim or (oo.oqlim >= 0 and oo.q + L > oo.oqlim):
            self.c["drop"] += 1
            oo.drops += 1
            return -1
        lk.part += L
        fr.inlink = link
        oo.queue.append(fr)
        self.q_touch(oo, now)
        oo.q += L
        oo.qmax = max(oo.qmax, oo.q)
        if lk.xoff >= 0 and not lk.psent and lk.part >= lk.xoff:
            lk.psent = 1
            self.c["pause"] += 1
            self.push(now + lk.prop, K_PAUSE, link, 1, 0)
        if oo.cp:
            delay = self.cplat + fr.back - self.lat[node]
            self.fam.cp_enqueue(fr, fr.flow, out, oo.q, L, delay, now)
        return out

    def record_bin(self, b: int, now: int) -> None:
        """Bin ``b``'s cumulative counters at ``now`` (the kernel's ``record_bin``)."""
        for p, o in enumerate(self.ports):
            self.q_touch(o, now)
            qmax = max(int(self.TQ[TQ_MAX, p, b]), o.qmax)
            self.TQ[:, p, b] = (o.q, o.qarea, qmax, o.txb, o.drops)
            o.qmax = o.q
        c = self.c
        self.TG[:, b] = (c["cnm"], c["pause"], c["drop"], c["deliv"], c["sent"], c["blocked"],
                         c["deliv_bytes"])  # fmt: skip

    def on_sample(self, b: int, now: int) -> None:
        self.record_bin(b, now)
        for r, f in enumerate(self.tr_flows):
            self.TRP[:, r, b] = self.fam.trace_rl(f)
        if b + 1 < self.nbins:
            self.push(min((b + 2) * self.bin, self.end), K_SAMPLE, b + 1, 0, 0)

    # ------------------------------------------------------------------ run
    def run(self) -> Oracle:
        """Run to the end time; returns ``self`` (counters in ``.c``, traces ``TQ``...)."""
        net = self.net
        for i in range(len(net.hs_port)):
            self.push(int(net.hs_start_ns[i]), K_HOT, i, 1, 0)
            self.push(int(net.hs_stop_ns[i]), K_HOT, i, 0, 0)
        self.push(min(self.bin, self.end), K_SAMPLE, 0, 0, 0)
        if self.drift > 0:
            self.push(self.drift, K_DRIFT, 0, 0, 0)
        for h in range(net.n_hosts):
            wmin = INF_NS
            for gi in self.h_gens[h]:
                self.gen_init(self.gens[gi])
                wmin = min(wmin, self.gens[gi].next)
            if wmin < INF_NS:
                self.h_wake[h] = wmin
                self.push(wmin, K_WAKE, h, 0, 0)
        if len(self.heap) > initial_events(net):  # the kernel sizes its heap by this bound
            raise RuntimeError(
                f"oracle: {len(self.heap)} initial events exceed the kernel's heap bound "
                f"{initial_events(net)} (qcnmodel.sim.kernel.state.initial_events)"
            )
        while self.heap and self.heap[0][0] <= self.end:
            now, _, kind, a, b, c, x = heapq.heappop(self.heap)
            self.now = now
            if len(self.log) < self.log_cap:
                self.log.append((now, kind, a if kind != K_ARRIVE else -1, b, c))
            self.c["events"] += 1
            hsvc = psvc = -1
            if kind == K_ARRIVE:
                psvc = self.on_arrive(a, b, now)
            elif kind == K_TXDONE:
                o = self.ports[a]
                o.busy = 0
                if b >= 0:
                    lk = self.ports[b]
                    lk.part -= c
                    if lk.psent and lk.part <= lk.xon:
                        lk.psent = 0
                        self.c["pause"] += 1
                        self.push(now + lk.prop, K_PAUSE, b, 0, 0)
                hsvc = o.host
                if hsvc < 0:
                    psvc = a
            elif kind == K_WAKE:
                if self.h_wake[a] == now:
                    self.h_wake[a] = -1
                    hsvc = a
            elif kind == K_CNM or kind == K_TIMER or kind >= K_AUX:
                self.fam.on_event(kind, a, b, c, x, now)
            elif kind == K_PAUSE:
                o = self.ports[a]
                o.paused = b
                if b == 0:
                    hsvc = o.host
                    if hsvc < 0:
                        psvc = a
            elif kind == K_HOT:
                o = self.ports[int(net.hs_port[a])]
                o.nspb = float(np.float64(8e9) / net.hs_rate[a]) if b else o.nspb_base
            elif kind == K_SAMPLE:
                self.on_sample(a, now)
            elif kind == K_DRIFT:
                self.fam.on_drift()
                self.push(now + self.drift, K_DRIFT, 0, 0, 0)
            if hsvc >= 0:
                self.host_service(hsvc, now)
            elif psvc >= 0:
                self.switch_service(psvc, now)
        for h in range(net.n_hosts):
            self.catch_up(h, self.end)
        if self.nbins > 0:  # events at the end time, after the last sample, count too
            self.record_bin(self.nbins - 1, self.end)
        return self

    def in_network(self) -> int:
        """Frames inside the network (VOQs, switch queues, links)."""
        voq = sum(f.vn for f in self.flows)
        queued = sum(len(o.queue) for o in self.ports)
        links = sum(1 for e in self.heap if e[2] == K_ARRIVE)
        return voq + queued + links + self.c["tail"]
