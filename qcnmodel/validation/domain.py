"""Validity domain of the validated models: where the packets and the model part.

The matched pairs of :mod:`qcnmodel.validation` measure where each model predicts the packet
simulator and where it does not; the failures that are understood are the *findings*
(:data:`~qcnmodel.validation.findings.FINDINGS`, each with its mechanism). This module turns
them into regions of the operating space, so that a verdict over ranges of N and RTT can say
which of its points lie outside the domain where the model was confirmed, and why.

A region is stated in the quantities a user checks (flows per congestion point, RTT as a
fraction of the model's own critical RTT, the sampling mode, the CP's capacity against the
line rate) and its bounds are those of the measured rows quoted in the finding; nothing is
extrapolated beyond the statement "the validation found a disagreement here".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qcnmodel.validation.findings import FINDINGS

__all__ = ["DOMAIN", "Region", "ValidityNote", "point_validity", "validity_notes"]


@dataclass(frozen=True)
class Region:
    """Part of the operating space where a finding applies.

    Attributes
    ----------
    finding : str
        Finding id (:data:`~qcnmodel.validation.findings.FINDINGS`).
    where : str
        The region, in words.
    effect : str
        What goes wrong there, in one sentence.
    n_max, n_min : float
        Flows per congestion point: the region is ``n_min <= N <= n_max``.
    rtt_min_s : float
        Smallest RTT of the region (s).
    crit_lo, crit_hi : float
        RTT band as a fraction of the model's critical RTT at the same N
        (``crit_lo * crit <= RTT < crit_hi * crit``); ``nan`` when not used.
    fixed_sampling : bool or None
        Only with fixed sampling (True), only with the table (False), or either (None).
    """

    finding: str
    where: str
    effect: str
    n_min: float = 1.0
    n_max: float = math.inf
    rtt_min_s: float = 0.0
    crit_lo: float = math.nan
    crit_hi: float = math.nan
    fixed_sampling: bool | None = None

    def applies(self, n_range, rtt_range, critical_rtt=None, fixed_sampling=False) -> bool:
        """Whether any point of ``n_range`` x ``rtt_range`` (inclusive) lies in the region.

        ``critical_rtt`` maps N to the model's critical RTT (s); the band in critical-RTT
        units is tested at those N (within ``n_range``) only.
        """
        if self.fixed_sampling is not None and bool(fixed_sampling) != self.fixed_sampling:
            return False
        n_lo, n_hi = float(n_range[0]), float(n_range[1])
        r_lo, r_hi = float(rtt_range[0]), float(rtt_range[1])
        if n_hi < self.n_min or n_lo > self.n_max or r_hi < self.rtt_min_s:
            return False
        if math.isnan(self.crit_lo):
            return True
        for n, crit in (critical_rtt or {}).items():
            if not (self.n_min <= n <= self.n_max and n_lo <= n <= n_hi):
                continue
            if math.isfinite(crit) and crit > 0:
                lo, hi = self.crit_lo * crit, self.crit_hi * crit
                if r_lo < hi and r_hi >= lo:
                    return True
        return False


@dataclass(frozen=True)
class ValidityNote:
    """One region of a model's validity domain, judged against checked ranges."""

    finding: str
    where: str
    effect: str
    mechanism: str
    applies: bool

    def to_dict(self) -> dict:
        return {"finding": self.finding, "where": self.where, "effect": self.effect,
                "mechanism": self.mechanism, "applies": self.applies}  # fmt: skip


#: (model, variant) -> the regions where the validation found the model and packets apart
DOMAIN: dict[tuple[str, str], tuple[Region, ...]] = {
    ("qcn", "packet"): (
        Region(
            "single flow",
            "one flow per congestion point",
            "one flow's boundary agrees within the rows' +-10 % (346.8 us against 336-367 us "
            "simulated at 5 Gb/s, 177.3 against 183-200 us for a 40 Gb/s source into a 10 Gb/s "
            "port); past it one flow's cycles are irregular on both sides (500 us: mean cycle "
            "5.5 vs 6.0 ms over 2.7 s, 5.6-49 ms between packet seeds over 0.3 s)",
            n_max=1,
        ),
        Region(
            "tens of flows",
            "N = 11 to 49 flows per congestion point",
            "the odds of an unstable run rise slowly with the RTT on both sides (1-6 of 9 "
            "packet runs and 5-21 of 27 model runs cycle from 200 to 566 us at 5 Gb/s, N = "
            "20), so the critical RTT, where they pass one half, is uncertain by tens of us: "
            "506.6 us for the model against 436-476 us simulated; at 10 Gb/s, N = 28-43, the "
            "runs cycle at small RTTs (the flows' timers in step) and from about 600 us, "
            "stable between on both sides (N = 43: 5-8 of 9 model runs unstable at 20-200 us "
            "and 2 of 3 packet runs at 20-100 us; 1-4 of 9 at 250-500 us and 0-1 of 3 at "
            "200-450 us; 6 of 9 and 3 of 3 at 600 us); at N = 28 the band is narrower than "
            "a rung of the band search (x 1.25), so none is reported (the model's runs "
            "stable near 400-450 us; packets 2 of 3 unstable at 300 and 450 us)",
            n_min=11,
            n_max=49,
        ),
        Region(
            "early large cycles",
            "RTT from 0.75 x to 1 x the critical RTT",
            "the onset is gradual: below the critical RTT (where half the runs cycle) some runs "
            "of the model and of the packets already cycle (5 Gb/s, N = 10: 4 of 27 model runs "
            "at 400 us and 9 at 476, 1, 1 and 2 of 9 packet runs at 400, 476 and 519 us)",
            crit_lo=0.75,
            crit_hi=1.0,
            n_min=2,
        ),
        Region(
            "10 Gb/s many flows",
            "N >= 50 flows per congestion point",
            "at 5 Gb/s the packets and the model cycle at every RTT (the timer-synchronised "
            "cycle; N = 100: period 17.3 vs 17.7 ms); at 10 Gb/s the packets' queue stays a "
            "noisy quasi-cycle up to 308-336 us, and so does the model's, whose CP sees the "
            "frames colliding at the port: critical RTT 308.8 us, its odds over the validation's "
            "scan pass one half at 304 us",
            n_min=50,
        ),
        Region(
            "slow breakdown",
            "RTT >= 1 ms",
            "the packets can break into a slow mode (irregular cycles of tens of ms, queue "
            "mostly empty) that the model's trajectories reproduce (W = 8, N = 10: critical "
            "RTT 1331.4 vs 1345-1467 us); their mean cycle lengthens with the window measured "
            "(N = 10, 1 ms: 105 vs 116 ms over 0.3-3 s, 64-261 ms simulated over 10 s)",
            rtt_min_s=1e-3,
        ),
    ),
    ("qcn", "paper"): (
        Region(
            "paper",
            "every operating point",
            "the published equations are not the validated model: no queue at "
            "equilibrium, no recovery after a hotspot",
        ),
    ),
    ("dcqcn", "packet"): (
        Region(
            "dcqcn margins",
            "every operating point (margins)",
            "the margins are the mean field's linearisation, not the validated verdict (the "
            "every-flow runs' is): the packets and the runs cycle through Kmax from N = 8 at "
            "25-100 us, where the linearisation can still be stable (N = 8-10 at 25 us), and "
            "show no cycle at N = 2-6 where it can be unstable",
        ),
    ),
    ("dcqcn", "cnp-lag+stage-memory"): (
        Region(
            "dcqcn noise coherence",
            "N <= 4 flows",
            "the model's small cycle is coherent where the simulated queue is noise, and "
            "the link idles (N = 2-4)",
            n_max=4,
        ),
        Region(
            "dcqcn cliff cycle",
            "N >= 20 flows",
            "no equilibrium on the marking ramp: the fluid relaxation cycle is 15-30 % "
            "larger and 3-13 % longer than the simulated one",
            n_min=20,
        ),
    ),
    ("dcqcn", "coalesce+stage-memory"): (
        Region(
            "dcqcn variants",
            "every operating point",
            "compared beside the validated default: the simulated cycle periods at N >= 20 "
            "(1.88 vs 1.90 ms at N = 20, 50 us), but the link idles less than the simulated "
            "one (per-flow mean rate 0.4-5 % high) and the cycle starts at N = 10, not 8",
        ),
    ),
}


def validity_notes(model: str, variant: str, n_range, rtt_range, critical_rtt=None,
                   fixed_sampling: bool = False, params=None,
                   capacity: float | None = None) -> list[ValidityNote]:  # fmt: skip
    """The validity domain of ``model``/``variant``, each region judged against the ranges.

    Parameters
    ----------
    model, variant : str
        Registry name ("qcn", "dcqcn") and configuration (e.g. "packet").
    n_range, rtt_range : (float, float)
        Checked flows per congestion point and RTT (s), inclusive.
    critical_rtt : mapping, optional
        N -> the model's critical RTT (s), for the regions stated relative to it.
    fixed_sampling : bool
        The parameter set samples with a fixed probability (not the 802.1Qau table).
    params : parameter set, optional
        The checked parameters: fields outside the values the matched pairs ran add one
        note (:func:`~qcnmodel.validation.envelope.untested_note`).
    capacity : float, optional
        The congestion point's service rate (bit/s; default the parameters' line rate).

    Returns
    -------
    list of ValidityNote
        Every region of the domain (an unknown model or variant gives one note saying that
        it is not validated), with ``applies`` set for the checked ranges, the untested
        parameters' note and the untested operating point's
        (:func:`~qcnmodel.validation.envelope.unreached_note`: ranges beyond a grid of
        pairs, DCQCN's) where there are.
    """
    from qcnmodel.validation.envelope import unreached_note, untested_note

    regions = DOMAIN.get((model, variant))
    if regions is None:
        return [ValidityNote("not validated", "every operating point",
                             f"the configuration {model}/{variant} has no matched pairs",
                             "", True)]  # fmt: skip
    notes = [ValidityNote(r.finding, r.where, r.effect, FINDINGS.get(r.finding, ""),
                          r.applies(n_range, rtt_range, critical_rtt, fixed_sampling))
             for r in regions]  # fmt: skip
    extra = (untested_note(model, params, capacity), unreached_note(model, n_range, rtt_range))
    return notes + [note for note in extra if note is not None]


def point_validity(
    name: str,
    variant: str,
    n_flows: float,
    rtt: float,
    critical_rtt: float = math.nan,
    fixed_sampling: bool = False,
    params=None,
    capacity: float | None = None,
) -> list[dict]:
    """The regions of the validity domain that contain one operating point.

    Parameters
    ----------
    name, variant : str
        Registry name of the model and its configuration.
    n_flows, rtt : float
        The operating point (flows per congestion point, RTT in s).
    critical_rtt : float
        The model's critical RTT at ``n_flows`` (s), for the regions stated relative to it.
    fixed_sampling : bool
        The parameter set samples with a fixed probability.
    params, capacity : optional
        The parameter set and the port's rate, checked against the pairs' parameters.

    Returns
    -------
    list of dict
        :meth:`ValidityNote.to_dict` of every applying region (empty inside the domain).
    """
    n, r = float(n_flows), float(rtt)
    notes = validity_notes(name, variant, (n, n), (r, r), {n: float(critical_rtt)},
                           fixed_sampling, params, capacity)  # fmt: skip
    return [v.to_dict() for v in notes if v.applies]
