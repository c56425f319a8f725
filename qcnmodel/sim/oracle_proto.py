"""Protocol dispatch of the pure-Python oracle: twin of :mod:`qcnmodel.sim.kernel_proto`.

:class:`ProtocolMixin` gives :class:`qcnmodel.sim.oracle.Oracle` the protocol hooks of the
compiled kernel (frame sent, frame enqueued at a CP, frame delivered, protocol events,
drift, traced RL state) on the plain-Python rule classes: ``rules_variants_ref`` (QCN
family), ``rules_ecm_ref``, ``rules_dcqcn_ref``. Events are pushed in the kernel's order;
the semantics (probe timing, CNP path) are stated in :mod:`.kernel_proto`.
"""

from __future__ import annotations

from qcnmodel.sim.kernel_state import (
    FAMILY_CODES,
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
from qcnmodel.sim.probes import probe_replier_py
from qcnmodel.sim.rules_ecm_ref import MSG_00, MSG_NONE


class ProtocolMixin:
    """Protocol state and hooks of the oracle (``self.proto``: a ProtocolConfig)."""

    def setup_protocol(self, proto, n_ports: int, n_flows: int, seed: int) -> None:
        """Create the CP/RP (and DCQCN NP) objects of ``proto``."""
        self.proto = proto
        pr = proto.protocol
        self.fam = pr.family
        self.probe_mode = PROBE_CODES[pr.probe_path]
        pp = proto.params
        self.sonar = "SonarParams" in pp
        self.aux = self.fam == "qcn" and (self.sonar or self.probe_mode != 0)
        probe = pp.get("ProbeParams")
        self.first_neg = probe is not None and probe.reply == "first_negative"
        self.ecmq = pr.name == "ecm-q"
        self.nps = []
        if self.fam == "qcn":
            from qcnmodel.sim.rules_variants_ref import (
                VariantCongestionPoint,
                VariantReactionPoint,
            )

            q = pp["QCNParams"]
            self.qeq = q.qeq
            self.drift = int(round(q.drift_period * 1e9))
            self.cps = [
                VariantCongestionPoint(q, seed, j, pp.get("FbHatParams"), pp.get("SonarParams"))
                for j in range(n_ports)
            ]
            self.rps = [VariantReactionPoint(q, seed, i, pp.get("EFRParams"),
                                             pp.get("QCNPlusParams"), pp.get("ProbeParams"),
                                             pp.get("SonarParams"), q.line_rate)
                        for i in range(n_flows)]  # fmt: skip
            self.C = float(q.line_rate)
        elif self.fam == "ecm":
            from qcnmodel.sim.rules_ecm_ref import ECMCongestionPoint, ECMReactionPoint

            e = pp[pr.params[0].__name__]
            self.drift = int(round(e.drift_period * 1e9))
            self.cps = [ECMCongestionPoint(e, seed, j) for j in range(n_ports)]
            self.rps = [ECMReactionPoint(e, seed, i, e.line_rate) for i in range(n_flows)]
            self.C = float(e.line_rate)
        elif self.fam == "dcqcn":
            from qcnmodel.sim.rules_dcqcn_ref import (
                DCQCNCongestionPoint,
                DCQCNNotificationPoint,
                DCQCNReactionPoint,
            )

            d = pp["DCQCNSimParams"]
            self.drift = 0
            self.cps = [DCQCNCongestionPoint(d, seed, j) for j in range(n_ports)]
            self.nps = [DCQCNNotificationPoint(d) for _ in range(n_flows)]
            self.rps = [DCQCNReactionPoint(d, seed, i, d.line_rate) for i in range(n_flows)]
            self.C = float(d.line_rate)
        else:  # no protocol: idle plain-QCN objects, as the kernel's idle state arrays
            from qcnmodel.sim.rules_ref import CongestionPoint, ReactionPoint

            self.drift = 0
            self.cps = [CongestionPoint(self.p, seed, j) for j in range(n_ports)]
            self.rps = [ReactionPoint(self.p, seed, i, self.C) for i in range(n_flows)]
        self.fam_code = FAMILY_CODES[self.fam]

    # ------------------------------------------------------------------ per-frame hooks
    def arm_aux(self, i: int) -> None:
        rp = self.rps[i]
        d = rp.take_arm()
        if d >= 0:
            self.push(d, K_AUX, i, rp.aux_gen, 0)

    def rp_frame_tx(self, f: int, L: int, now: int) -> None:
        if self.fam == "qcn":
            self.rps[f].on_tx(float(L), now)
            if self.aux:
                self.arm_aux(f)
        elif self.fam == "dcqcn":
            self.rps[f].on_tx(float(L))

    def frame_tag(self, f: int) -> int:
        return self.rps[f].tag() if self.fam == "ecm" else 0

    def cp_enqueue(self, fr, f: int, o: int, q: int, L: int, delay: int, now: int) -> None:
        if self.fam == "qcn":
            cp = self.cps[o]
            if self.sonar:
                cp.on_queue(float(q), now)
            cnm, qfb, qoff, qdelta = cp.on_arrival(float(q), float(L))
            if cnm:
                self.c["cnm"] += 1
                self.push(now + delay, K_CNM, f, int(qfb), o, (qoff, qdelta, 0.0))
        elif self.fam == "ecm":
            kind, fb, qoff, qdelta = self.cps[o].on_arrival(float(q), float(L), fr.aux == o)
            if kind != MSG_NONE:
                self.c["cnm"] += 1
                self.push(now + delay, K_CNM, f, int(kind), o, (fb, qoff, qdelta))
        elif self.fam == "dcqcn":
            if self.cps[o].on_arrival(float(q)):
                fr.aux = 1

    def sonar_dequeue(self, p: int, q: int, now: int) -> None:
        if self.sonar and self.ports[p].cp:
            self.cps[p].on_queue(float(q), now)

    def np_deliver(self, fr, f: int, t: int, d: int) -> None:
        if self.fam == "dcqcn" and fr.aux and t <= self.end:
            if self.nps[f].on_packet(True, t):
                self.c["cnm"] += 1
                self.push(t + fr.back + d, K_CNM, f, 0, 0)

    # ------------------------------------------------------------------ probes
    def path_walk(self, f: int, target: int):
        """(latency to ``target``'s switch or the destination (-1: not on the path), CPs)."""
        fl = self.flows[f]
        p = self.h_port[fl.src]
        d, cps = 0, []
        for _ in range(len(self.ports) + 1):
            o = self.ports[p]
            node = o.dst
            d += o.prop + self.lat[node]
            if self.node_host[node] >= 0:
                return (d if target < 0 else -1), cps
            p = self.route[node][fl.dst]
            if self.ports[p].cp:
                cps.append(p)
            if p == target:
                return d - self.lat[node], cps
        return -1, cps

    def send_probe(self, f: int, target: int, now: int) -> None:
        to_dst = not self.sonar and self.probe_mode == PROBE_PATH
        d, _ = self.path_walk(f, -1 if to_dst else target)
        if d >= 0:
            self.push(now + d, K_PROBE, f, target, 1 if self.sonar else 0)

    def on_probe(self, f: int, target: int, ping: int, now: int) -> None:
        if ping:
            nc = self.cps[target].on_ping(float(self.ports[target].q), now)
            d, _ = self.path_walk(f, target)
            self.push(now + self.cplat + d, K_ECHO, f, 1 if nc else 0, target)
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
        fbs = [self.cps[j].probe_fb(float(self.ports[j].q)) for j in walk]
        jmin = 0
        for k in range(n):
            if fbs[k] < fbs[jmin]:
                jmin = k
        k, fb = probe_replier_py(fbs, self.first_neg, mode == PROBE_PATH)
        j = walk[k] if k < n and fbs[k] == fb else walk[jmin]
        if k >= n:
            back = dt
        elif mode != PROBE_PATH and walk[k] == target:
            back = self.cplat + dt
        else:
            back = self.path_walk(f, walk[k])[0] + self.cplat
        q = float(self.ports[j].q)
        code = self.cps[j].probe_code(fb)
        self.push(now + back, K_REPLY, f, 0, j, (code, q - self.qeq, q - self.cps[j].qold))

    # ------------------------------------------------------------------ events
    def proto_event(self, kind: int, a: int, b: int, c: int, x, now: int) -> None:
        if self.fam == "qcn":
            rp = self.rps[a]
            if kind == K_CNM:
                d = rp.on_cnm(b, c, now, x[0], x[1])
                if d >= 0:
                    self.push(d, K_TIMER, a, rp.timer_gen, 0)
            elif kind == K_TIMER:
                d = rp.on_timer(b, now)
                if d >= 0:
                    self.push(d, K_TIMER, a, b, 0)
            elif kind == K_AUX:
                d = rp.on_aux_timer(b, now)
                if d >= 0:
                    self.push(d, K_AUX, a, b, 0)
                self.arm_aux(a)
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
                    self.push(d, K_TIMER, a, rp.timer_gen, 0)
            elif kind == K_ECHO:
                rp.on_echo(b != 0, now)
            if self.aux:
                self.arm_aux(a)
        elif self.fam == "ecm":
            if kind == K_CNM:
                rp = self.rps[a]
                if b == MSG_00:
                    rp.on_00(c)
                elif self.ecmq:
                    rp.on_codes(x[1], x[2], c)
                else:
                    rp.on_fb(x[0], c)
        elif self.fam == "dcqcn":
            rp = self.rps[a]
            if kind == K_CNM:
                d = rp.on_cnp(now)
                self.push(d, K_TIMER, a, rp.timer_gen, 0)
                self.push(rp.alpha_deadline, K_AUX, a, rp.alpha_gen, 0)
            elif kind == K_TIMER:
                d = rp.on_rate_timer(b, now)
                if d >= 0:
                    self.push(d, K_TIMER, a, b, 0)
            elif kind == K_AUX:
                d = rp.on_alpha_timer(b, now)
                if d >= 0:
                    self.push(d, K_AUX, a, b, 0)

    def proto_drift(self) -> None:
        for f, rp in enumerate(self.rps):
            rp.on_drift()
            if self.aux:
                self.arm_aux(f)

    def trace_rl(self, f: int):
        """(CR, TR, bc stage, t stage, active, extra) of RL ``f`` (C when inactive)."""
        if self.fam == "none":
            return self.C, self.C, 0, 0, 0.0, 0.0
        rp = self.rps[f]
        act = 1.0 if rp.active else 0.0
        cr = rp.cr if act else self.C
        if self.fam == "ecm":
            return cr, cr, 0.0, 0.0, act, 0.0
        tr = rp.tr if act else self.C
        x = rp.alpha if self.fam == "dcqcn" else 0.0
        return cr, tr, rp.bc_stage, rp.t_stage, act, x
