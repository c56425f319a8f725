"""Protocol-family dispatch of the pure-Python oracle: twin of :mod:`qcnmodel.sim.kernel.dispatch`.

:data:`ADAPTERS` maps each protocol family to its adapter class; :func:`make_adapter` builds
the one a run needs. An adapter owns the family's CP / RP (and DCQCN notification point)
objects, the plain-Python twins of the compiled rules (:mod:`qcnmodel.sim.protocols`), and
has the kernel adapters' hooks: ``rl_send``, ``cp_enqueue``, ``cp_dequeue``,
``np_deliver``, ``on_event``, ``on_drift``, ``trace_rl``. Events are pushed in the kernel's
order; the semantics (probe timing, CNP path) are stated in the kernel adapters
(:mod:`qcnmodel.sim.kernel.families`).
"""

from __future__ import annotations

from qcnmodel.sim.kernel.state import (
    K_AUX,
    K_CNM,
    K_ECHO,
    K_PROBE,
    K_REPLY,
    K_TIMER,
    PROBE_CODES,
    PROBE_CP,
    PROBE_PATH,
)
from qcnmodel.sim.protocols.dcqcn_ref import (
    DCQCNCongestionPoint,
    DCQCNNotificationPoint,
    DCQCNReactionPoint,
)
from qcnmodel.sim.protocols.ecm_ref import MSG_00, MSG_NONE, ECMCongestionPoint, ECMReactionPoint
from qcnmodel.sim.protocols.probes import probe_replier_py
from qcnmodel.sim.protocols.qcn_ref import CongestionPoint, ReactionPoint
from qcnmodel.sim.protocols.qcn_variants_ref import VariantCongestionPoint, VariantReactionPoint

__all__ = ["ADAPTERS", "make_adapter"]


class NoneFamily:
    """No congestion management: idle plain-QCN objects, as the kernel's idle state arrays."""

    def __init__(self, sim, proto, n_ports: int, n_flows: int, seed: int) -> None:
        self.sim = sim
        self.C = float(sim.p.line_rate)
        self.drift = 0
        self.cps = [CongestionPoint(sim.p, seed, j) for j in range(n_ports)]
        self.rps = [ReactionPoint(sim.p, seed, i, self.C) for i in range(n_flows)]
        self.nps: list = []

    def rl_send(self, f: int, L: int, now: int) -> int:
        """A frame of RL ``f`` starts: the on-transmit rule; returns the frame's tag."""
        return 0

    def cp_enqueue(self, fr, f: int, o: int, q: int, L: int, delay: int, now: int) -> None:
        pass

    def cp_dequeue(self, fr, p: int, q: int, L: int, now: int) -> None:
        pass

    def np_deliver(self, fr, f: int, t: int, d: int) -> None:
        pass

    def on_event(self, kind: int, a: int, b: int, c: int, x, now: int) -> None:
        pass

    def on_drift(self) -> None:
        pass

    def trace_rl(self, f: int):
        """(CR, TR, bc stage, t stage, active, extra) of RL ``f`` (C when inactive)."""
        return self.C, self.C, 0, 0, 0.0, 0.0


class QCNFamily(NoneFamily):
    """QCN and its variants: VariantCongestionPoint / VariantReactionPoint objects."""

    def __init__(self, sim, proto, n_ports: int, n_flows: int, seed: int) -> None:
        self.sim = sim
        pp = proto.params
        q = pp["QCNParams"]
        self.qeq = q.qeq
        self.C = float(q.line_rate)
        self.drift = int(round(q.drift_period * 1e9))
        self.probe_mode = PROBE_CODES[proto.protocol.probe_path]
        self.sonar = "SonarParams" in pp
        self.aux = self.sonar or self.probe_mode != 0
        probe = pp.get("ProbeParams")
        self.first_neg = probe is not None and probe.reply == "first_negative"
        self.cps = [
            VariantCongestionPoint(q, seed, j, pp.get("FbHatParams"), pp.get("SonarParams"))
            for j in range(n_ports)
        ]
        self.rps = [VariantReactionPoint(q, seed, i, pp.get("EFRParams"), pp.get("QCNPlusParams"),
                                         pp.get("ProbeParams"), pp.get("SonarParams"), q.line_rate)
                    for i in range(n_flows)]  # fmt: skip
        self.nps = []

    def schedule_aux(self, i: int) -> None:
        rp = self.rps[i]
        d = rp.take_arm()
        if d >= 0:
            self.sim.push(d, K_AUX, i, rp.aux_gen, 0)

    def rl_send(self, f: int, L: int, now: int) -> int:
        self.rps[f].on_tx(float(L), now)
        if self.aux:
            self.schedule_aux(f)
        return 0

    def cp_enqueue(self, fr, f: int, o: int, q: int, L: int, delay: int, now: int) -> None:
        cp = self.cps[o]
        if self.sonar:
            cp.on_queue(float(q), now)
        cnm, qfb, qoff, qdelta = cp.on_arrival(float(q), float(L))
        if cnm:
            self.sim.c["cnm"] += 1
            self.sim.push(now + delay, K_CNM, f, int(qfb), o, (qoff, qdelta, 0.0))

    def cp_dequeue(self, fr, p: int, q: int, L: int, now: int) -> None:
        if self.sonar:
            self.cps[p].on_queue(float(q), now)

    def on_event(self, kind: int, a: int, b: int, c: int, x, now: int) -> None:
        rp = self.rps[a]
        if kind == K_CNM:
            d = rp.on_cnm(b, c, now, x[0], x[1])
            if d >= 0:
                self.sim.push(d, K_TIMER, a, rp.timer_gen, 0)
        elif kind == K_TIMER:
            d = rp.on_timer(b, now)
            if d >= 0:
                self.sim.push(d, K_TIMER, a, b, 0)
        elif kind == K_AUX:
            d = rp.on_aux_timer(b, now)
            if d >= 0:
                self.sim.push(d, K_AUX, a, b, 0)
            self.schedule_aux(a)
            target = rp.take_send()
            if target >= 0:
                self.send_probe(a, target, now)
            return
        elif kind == K_PROBE:
            self.on_probe(a, b, c, now)
            return
        elif kind == K_REPLY:
            d = rp.on_probe_reply(x[0], x[1], x[2], c, now)
            if d >= 0:
                self.sim.push(d, K_TIMER, a, rp.timer_gen, 0)
        elif kind == K_ECHO:
            rp.on_echo(b != 0, now)
        if self.aux:
            self.schedule_aux(a)

    def on_drift(self) -> None:
        for f, rp in enumerate(self.rps):
            rp.on_drift()
            if self.aux:
                self.schedule_aux(f)

    def trace_rl(self, f: int):
        rp = self.rps[f]
        act = 1.0 if rp.active else 0.0
        return (rp.cr if act else self.C), (rp.tr if act else self.C), rp.bc_stage, \
            rp.t_stage, act, 0.0  # fmt: skip

    # -- probes ------------------------------------------------------------------
    def path_walk(self, f: int, target: int):
        """(latency to ``target``'s switch or the destination (-1: not on the path), CPs)."""
        sim = self.sim
        fl = sim.flows[f]
        p = sim.h_port[fl.src]
        d, cps = 0, []
        for _ in range(len(sim.ports) + 1):
            o = sim.ports[p]
            node = o.dst
            d += o.prop + sim.lat[node]
            if sim.node_host[node] >= 0:
                return (d if target < 0 else -1), cps
            p = sim.next_port(node, f)
            if sim.ports[p].cp:
                cps.append(p)
            if p == target:
                return d - sim.lat[node], cps
        return -1, cps

    def send_probe(self, f: int, target: int, now: int) -> None:
        to_dst = not self.sonar and self.probe_mode == PROBE_PATH
        d, _ = self.path_walk(f, -1 if to_dst else target)
        if d >= 0:
            self.sim.push(now + d, K_PROBE, f, target, 1 if self.sonar else 0)

    def on_probe(self, f: int, target: int, ping: int, now: int) -> None:
        sim = self.sim
        if ping:
            nc = self.cps[target].on_ping(float(sim.ports[target].q), now)
            d, _ = self.path_walk(f, target)
            sim.push(now + sim.cplat + d, K_ECHO, f, 1 if nc else 0, target)
            return
        mode = self.probe_mode
        if mode == PROBE_CP:
            dt, _ = self.path_walk(f, target)
            walk = [target]
        else:
            dt, walk = self.path_walk(f, -1 if mode == PROBE_PATH else target)
        n = len(walk)
        if n == 0 or dt < 0:  # no CP to read, or the target left the path (not expected)
            return
        fbs = [self.cps[j].probe_fb(float(sim.ports[j].q)) for j in walk]
        jmin = 0
        for k in range(n):
            if fbs[k] < fbs[jmin]:
                jmin = k
        k, fb = probe_replier_py(fbs, self.first_neg, mode == PROBE_PATH)
        j = walk[k] if k < n and fbs[k] == fb else walk[jmin]
        if k >= n:
            back = dt
        elif mode != PROBE_PATH and walk[k] == target:
            back = sim.cplat + dt
        else:
            back = self.path_walk(f, walk[k])[0] + sim.cplat
        q = float(sim.ports[j].q)
        code = self.cps[j].probe_code(fb)
        sim.push(now + back, K_REPLY, f, 0, j, (code, q - self.qeq, q - self.cps[j].qold))


class ECMFamily(NoneFamily):
    """ECM and ECM-Q: ECMCongestionPoint / ECMReactionPoint objects."""

    def __init__(self, sim, proto, n_ports: int, n_flows: int, seed: int) -> None:
        self.sim = sim
        e = proto.params[proto.protocol.params[0].__name__]
        self.ecmq = proto.protocol.name == "ecm-q"
        self.C = float(e.line_rate)
        self.drift = int(round(e.drift_period * 1e9))
        self.cps = [ECMCongestionPoint(e, seed, j) for j in range(n_ports)]
        self.rps = [ECMReactionPoint(e, seed, i, e.line_rate) for i in range(n_flows)]
        self.nps = []

    def rl_send(self, f: int, L: int, now: int) -> int:
        return self.rps[f].tag()  # the frame carries its RL's CPID

    def cp_enqueue(self, fr, f: int, o: int, q: int, L: int, delay: int, now: int) -> None:
        kind, fb, qoff, qdelta = self.cps[o].on_arrival(float(q), float(L), fr.aux == o)
        if kind != MSG_NONE:
            self.sim.c["cnm"] += 1
            self.sim.push(now + delay, K_CNM, f, int(kind), o, (fb, qoff, qdelta))

    def on_event(self, kind: int, a: int, b: int, c: int, x, now: int) -> None:
        if kind == K_CNM:
            rp = self.rps[a]
            if b == MSG_00:
                rp.on_00(c)
            elif self.ecmq:
                rp.on_codes(x[1], x[2], c)
            else:
                rp.on_fb(x[0], c)

    def on_drift(self) -> None:
        for rp in self.rps:
            rp.on_drift()

    def trace_rl(self, f: int):
        rp = self.rps[f]
        act = 1.0 if rp.active else 0.0
        cr = rp.cr if act else self.C
        return cr, cr, 0.0, 0.0, act, 0.0


class DCQCNFamily(NoneFamily):
    """DCQCN: CP (RED/ECN marking), notification point (CNPs) and RP objects."""

    def __init__(self, sim, proto, n_ports: int, n_flows: int, seed: int) -> None:
        self.sim = sim
        d = proto.params["DCQCNSimParams"]
        self.C = float(d.line_rate)
        self.drift = 0
        self.cps = [DCQCNCongestionPoint(d, seed, j) for j in range(n_ports)]
        self.nps = [DCQCNNotificationPoint(d) for _ in range(n_flows)]
        self.rps = [DCQCNReactionPoint(d, seed, i, d.line_rate) for i in range(n_flows)]

    def rl_send(self, f: int, L: int, now: int) -> int:
        self.rps[f].on_tx(float(L))
        return 0  # not ECN-marked

    def cp_enqueue(self, fr, f: int, o: int, q: int, L: int, delay: int, now: int) -> None:
        if not self.cps[o].at_dequeue and self.cps[o].on_arrival(float(q)):
            fr.aux = 1

    def cp_dequeue(self, fr, p: int, q: int, L: int, now: int) -> None:
        if self.cps[p].at_dequeue and self.cps[p].on_arrival(float(q + L)):
            fr.aux = 1

    def np_deliver(self, fr, f: int, t: int, d: int) -> None:
        if fr.aux and t <= self.sim.end:
            tc = self.nps[f].on_packet(True, t)
            if 0 <= tc <= self.sim.end:
                self.sim.c["cnm"] += 1
                self.sim.push(tc + fr.back + d, K_CNM, f, 0, 0)

    def on_event(self, kind: int, a: int, b: int, c: int, x, now: int) -> None:
        rp = self.rps[a]
        if kind == K_CNM:
            d = rp.on_cnp(now)
            self.sim.push(d, K_TIMER, a, rp.timer_gen, 0)
            self.sim.push(rp.alpha_deadline, K_AUX, a, rp.alpha_gen, 0)
        elif kind == K_TIMER:
            d = rp.on_rate_timer(b, now)
            if d >= 0:
                self.sim.push(d, K_TIMER, a, b, 0)
        elif kind == K_AUX:
            d = rp.on_alpha_timer(b, now)
            if d >= 0:
                self.sim.push(d, K_AUX, a, b, 0)

    def trace_rl(self, f: int):
        rp = self.rps[f]
        act = 1.0 if rp.active else 0.0
        return (rp.cr if act else self.C), (rp.tr if act else self.C), rp.bc_stage, \
            rp.t_stage, act, rp.alpha  # fmt: skip


#: protocol family -> its oracle adapter class
ADAPTERS = {"none": NoneFamily, "qcn": QCNFamily, "ecm": ECMFamily, "dcqcn": DCQCNFamily}


def make_adapter(sim, proto, n_ports: int, n_flows: int, seed: int):
    """The adapter of ``proto``'s family for the oracle ``sim``."""
    return ADAPTERS[proto.protocol.family](sim, proto, n_ports, n_flows, seed)
