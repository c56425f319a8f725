"""Parameter dataclasses of the protocols beyond plain QCN (fields QCNParams lacks).

Every class is frozen, accepts unit strings ("500us", "10Gbps", "150KB", "1/128") for its
numeric fields, and validates in ``__post_init__``: a value outside its range raises
:class:`ValueError` naming the field and the range (the conventions of
:mod:`qcnmodel.params`). ``.replace(**kw)`` rejects unknown names with a suggestion.

Sources: the seed decks -- IBM Zurich, "Toward a Scalable and Robust QCN" (ECM, ECM-Q,
QCN-SONAR, QCN+, drift), Teak Technologies' simulations of ECM and the QCN variants (QCN-H,
QCN-P/HP/SP/PP), and Teak Technologies, "Congestion Management Protocols: More QCN Simulation
Results" (ECM gains, extra fast recovery) -- and, for ECM's feedback, Jiang and Jain, "Analysis
of Backward Congestion Notification (BCN) for Ethernet in Datacenter Applications" (INFOCOM
2007). The DCQCN parameters are in :mod:`qcnmodel.params.dcqcn`. Assumptions about the
under-specified variants are listed in :mod:`qcnmodel.sim.protocols.ecm`,
:mod:`qcnmodel.sim.protocols.qcn_variants` and :mod:`qcnmodel.sim.protocols.dcqcn`; each is a
field here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qcnmodel._errors import unknown_name
from qcnmodel.params._validate import MAX_RATE, MAX_SIZE, MAX_TIME, Replaceable, validate
from qcnmodel.params.dcqcn import DCQCNSimParams
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

__all__ = [
    "DCQCNSimParams",
    "ECMParams",
    "ECMQParams",
    "EFRParams",
    "FbHatParams",
    "ProbeParams",
    "QCNPlusParams",
    "SonarParams",
]

_INF = np.inf


# ============================================================================ ECM
_ECM_NUM = {
    "line_rate": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "line rate C"),
    "frame_size": (parse_size, 64, 9216, False, False, "B", "data frame size"),
    "w": (parse_number, 0.0, 1024.0, False, False, "", "feedback weight w"),
    "qeq": (parse_size, 0.0, MAX_SIZE, True, False, "B", "queue set point Qeq"),
    "psample": (parse_number, 0.0, 1.0, True, False, "", "sampling probability"),
    "jitter": (parse_number, 0.0, 1.0, False, True, "", "sampling jitter half width"),
    "fb_bits": (parse_number, 0, 16, False, False, "bits", "Fb width (0 = raw bytes)"),
    "gd": (parse_number, 0.0, _INF, True, True, "", "decrease gain Gd"),
    "gi": (parse_number, 0.0, _INF, False, True, "", "increase gain Gi"),
    "r_unit": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "rate unit Ru"),
    "r_min": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "minimum rate Rmin"),
    "q_max": (parse_size, 0.0, MAX_SIZE, True, False, "B", "ECM_MAX threshold Qmax"),
    "q_sc": (parse_size, 0.0, MAX_SIZE, True, False, "B", "ECM(0,0) threshold Qsc"),
    "drift_inc": (parse_rate, 0.0, MAX_RATE, False, False, "bit/s", "additive drift"),
    "drift_factor": (parse_number, 1.0, 2.0, False, False, "", "multiplicative drift"),
    "drift_period": (parse_time, 0.0, MAX_TIME, False, False, "s", "drift period (0 = off)"),
}
_ECM_CHOICES = {
    "pos_fb": ("tagged", "all", "tagged_below_qeq"),
    "cpid_replace": ("negative", "never"),
}


@dataclass(frozen=True)
class ECMParams(Replaceable):
    """ECM (BCN-style, positive and negative feedback) parameters (IBM Zurich and Teak decks).

    Defaults are seed 004's ECM set (W 2, Qeq 37.5 kB, Psample 2 %, Ru = Rmin = 1 Mb/s,
    BCN_MAX on, Fb raw in bytes). :meth:`preset` ``"seed000"`` gives seed 000's 8-bit set.

    Parameters
    ----------
    line_rate, frame_size, w, qeq : float
        C (bit/s), frame bytes, feedback weight, set point (bytes).
    psample : float
        Fixed sampling probability (seed 004: 2 %; seed 000 ECM-Q: 1 %).
    jitter : float
        Half width J of the sampling-interval jitter U(1-J, 1+J) (as QCN).
    fb_bits : int
        0: Fb is raw bytes clipped to +-Fbmax, Fbmax = Qeq (2w+1) (seed 004's gains on raw
        Fb); k > 0: |Fb| quantised to k bits (seed 000: 8-bit, gains /255).
    gd, gi : float or None
        Gains; None derives them so that Gd Fb_full = 0.5 and Gi Fb_full Ru = 0.1 C
        (seed 004 "0.5/((2W+1) Qeq)", "0.1 (Rlink/Runit)/((2W+1) Qeq)"; seed 000 "/255").
    r_unit, r_min : float
        Ru and Rmin (bit/s).
    ecm_max : bool
        At a sample with Q >= q_max, send the maximal negative Fb (ECM_MAX/BCN_MAX, not
        specified by the decks: our reading).
    q_max : float
        Qmax (bytes); seed 000: Qmax = M (1.5 MB).
    ecm00 : bool
        ECM(0,0) option: at a sample with Q >= q_sc the CP sends a (0,0) message and the RP
        drops to r_min (our reading of BCN(0,0)); disabled in seeds 000/004.
    q_sc : float or None
        (0,0) threshold (bytes); None = q_max.
    pos_fb : {"tagged", "all", "tagged_below_qeq"}
        Who gets positive Fb (not specified by the decks): only frames tagged with this CP's
        CPID (BCN), any sampled frame (untagged RPs ignore it), or tagged frames while Q < Qeq.
    cpid_replace : {"negative", "never"}
        A negative Fb from another CP re-tags the RL, or the first tag is kept.
    drift_inc, drift_factor, drift_period : float
        Drift; the IBM Zurich deck: 4 Mb/s every 20 ms.
    """

    line_rate: float = 10e9
    frame_size: int = 1500
    w: float = 2.0
    qeq: float = 37500.0
    psample: float = 0.02
    jitter: float = 0.15
    fb_bits: int = 0
    gd: float | None = None
    gi: float | None = None
    r_unit: float = 1e6
    r_min: float = 1e6
    ecm_max: bool = True
    q_max: float = 150000.0
    ecm00: bool = False
    q_sc: float | None = None
    pos_fb: str = "tagged"
    cpid_replace: str = "negative"
    drift_inc: float = 0.0
    drift_factor: float = 1.0
    drift_period: float = 0.0

    def __post_init__(self) -> None:
        validate(self, _ECM_NUM, ("ecm_max", "ecm00"), _ECM_CHOICES,
                  ("frame_size", "fb_bits"), ("gd", "gi", "q_sc"))  # fmt: skip
        if self.r_min >= self.line_rate:
            raise ValueError(f"r_min: {self.r_min:g} bit/s must be below line_rate")

    @property
    def fb_max(self) -> float:
        """Fbmax = Qeq (2w + 1) in bytes (the clip and the quantiser full scale)."""
        return self.qeq * (2.0 * self.w + 1.0)

    @property
    def fb_full(self) -> float:
        """Largest |Fb| on the gain scale: 2**bits - 1, or Fbmax bytes if fb_bits == 0."""
        return self.fb_max if self.fb_bits == 0 else float(2**self.fb_bits - 1)

    @property
    def gd_eff(self) -> float:
        """Gd, derived as 0.5 / fb_full when not given (max cut 50 %, fact 17)."""
        return 0.5 / self.fb_full if self.gd is None else self.gd

    @property
    def gi_eff(self) -> float:
        """Gi, derived as 0.1 (C / Ru) / fb_full when not given (max increase 0.1 C)."""
        return 0.1 * (self.line_rate / self.r_unit) / self.fb_full if self.gi is None else self.gi

    @property
    def q_sc_eff(self) -> float:
        """The ECM(0,0) threshold Qsc in bytes: ``q_sc``, or ``q_max`` when not given."""
        return self.q_max if self.q_sc is None else self.q_sc

    @property
    def sample_interval(self) -> float:
        """Fixed sampling interval in bytes: frame_size / psample."""
        return self.frame_size / self.psample

    @classmethod
    def preset(cls, name: str, **kw):
        """A named ECM parameter set of the seed decks.

        Parameters
        ----------
        name : {"seed004", "seed000"}
            ``"seed004"`` (the defaults) or ``"seed000"`` (8-bit, Qeq = M/4 = 375 kB, Qmax = M
            = 1.5 MB, drift 4 Mb/s per 20 ms, P 1 %); spelled exactly.
        **kw
            Fields to change on top of the set (unit strings accepted).

        Returns
        -------
        ECMParams
            A validated instance of ``cls`` (so ``ECMQParams.preset`` gives ECM-Q parameters).

        Raises
        ------
        ValueError
            For an unknown preset name (listing both) or an out-of-range value.
        TypeError
            For an unknown field name in ``kw`` (the dataclass constructor's error).
        """
        sets = {
            "seed004": {},
            "seed000": dict(fb_bits=8, qeq=375000.0, q_max=1.5e6, psample=0.01,
                            drift_inc=4e6, drift_period=20e-3),
        }  # fmt: skip
        if name not in sets:
            raise unknown_name("preset", "preset", name, sets, sort=False)
        return cls(**{**sets[name], **kw})


_ECMQ_NUM = {
    "qoff_bits": (parse_number, 2, 16, False, False, "bits", "Qoff code width"),
    "qdelta_bits": (parse_number, 2, 16, False, False, "bits", "Qdelta code width"),
    "qoff_range": (parse_size, 0.0, MAX_SIZE, True, False, "B", "Qoff full scale"),
    "qdelta_range": (parse_size, 0.0, MAX_SIZE, True, False, "B", "Qdelta full scale"),
    "w_rp": (parse_number, 0.0, 1024.0, False, False, "", "RP recombination weight"),
}


@dataclass(frozen=True)
class ECMQParams(ECMParams):
    """ECM-Q (IBM Zurich deck): Qoff and Qdelta quantised separately, signed, 8 bits each.

    A code is ``trunc(x (2**(bits-1) - 1) / range)`` clipped to +-(2**(bits-1) - 1) (sign and
    magnitude, truncation toward zero). Ranges default to Fbmax / (1 + w), so that the
    recombined Fb = -(Qoff + w_rp Qdelta) spans +-Fbmax when both saturate (w_rp = w). The RP
    recombines with its own weight ``w_rp`` (default w), clips to +-Fbmax and uses the result
    on the gain scale without re-quantising. Defaults: P = 1 %, 8-bit gains (seed 000).
    """

    psample: float = 0.01
    fb_bits: int = 8
    qoff_bits: int = 8
    qdelta_bits: int = 8
    qoff_range: float | None = None
    qdelta_range: float | None = None
    w_rp: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        validate(self, _ECMQ_NUM, integers=("qoff_bits", "qdelta_bits"),
                  optional=("qoff_range", "qdelta_range", "w_rp"))  # fmt: skip

    @property
    def qoff_range_eff(self) -> float:
        return self.fb_max / (1.0 + self.w) if self.qoff_range is None else self.qoff_range

    @property
    def qdelta_range_eff(self) -> float:
        return self.fb_max / (1.0 + self.w) if self.qdelta_range is None else self.qdelta_range

    @property
    def w_rp_eff(self) -> float:
        return self.w if self.w_rp is None else self.w_rp


# ============================================================================ QCN options
@dataclass(frozen=True)
class EFRParams(Replaceable):
    """QCN increase options QCNParams lacks: extra fast recovery and TO_THRESH (Teak decks).

    Parameters
    ----------
    efr : bool
        Extra fast recovery (seeds 003/004 "enabled"; N/S): in fast recovery the self-increase
        moves CR the fraction ``efr_fraction`` of the way to TR instead of 1/2.
    efr_fraction : float
        In (0, 1]; 0.75 = two halvings of the gap per cycle.
    efr_max : bool
        EFR MAX (seeds: "disabled"; N/S): the first fast-recovery expiry after a cut sets
        CR = TR (full recovery in one cycle).
    to_thresh : {"bc_limit", "psample", "cnm"}
        Byte-counter cycle: BC_LIMIT; frame_size / P_sample at the base sampling rate (seed
        000 "to_thresh = packet_size / P_sample"); or frame_size / P_sample at the sampling
        rate implied by the last CNM's qFb (the CP's table interval for that qFb).
    """

    efr: bool = False
    efr_fraction: float = 0.75
    efr_max: bool = False
    to_thresh: str = "bc_limit"

    def __post_init__(self) -> None:
        num = {"efr_fraction": (parse_number, 0.0, 1.0, True, False, "", "EFR fraction")}
        validate(self, num, ("efr", "efr_max"), {"to_thresh": ("bc_limit", "psample", "cnm")})


@dataclass(frozen=True)
class FbHatParams(Replaceable):
    """QCN-H feedback Fb-hat (Teak and IBM Zurich decks; not defined there -- our definition).

    ``mode="normalised"``: Qdelta is rescaled to a reference sampling interval,
    Qdelta_hat = (Q - Qold) ref_interval / bytes_since_last_sample, so the derivative gain no
    longer shrinks when variable sampling shortens the interval. ``mode="ewma"``: Fb_hat =
    (1 - g) Fb_hat + g Fb over samples (a time-averaged Fb). ``ref_interval`` None = table[0].
    """

    mode: str = "normalised"
    ref_interval: float | None = None
    ewma_gain: float = 0.25

    def __post_init__(self) -> None:
        num = {
            "ref_interval": (parse_size, 0.0, MAX_SIZE, True, False, "B", "reference interval"),
            "ewma_gain": (parse_number, 0.0, 1.0, True, False, "", "EWMA gain g"),
        }
        validate(self, num, choices={"mode": ("normalised", "ewma")}, optional=("ref_interval",))


@dataclass(frozen=True)
class ProbeParams(Replaceable):
    """CP-directed, sub-path and path probes (QCN-P/HP/SP/PP; not specified -- our reading).

    Parameters
    ----------
    interval : float
        Probe period (s) of an active RL; jittered by U(1-J, 1+J).
    jitter : float
        J of the probe period.
    pos_gain : float
        A positive reply of code k (0..full scale) raises TR by pos_gain C k / full, then
        CR = (CR + TR)/2 (ECM's Gi form applied to TR: 0.1 C at full scale by default).
    reply : {"first_negative", "target"}
        Sub-path/path probes: the first CP with Fb < 0 replies (and the probe stops), or only
        the target (CP for sub-path, destination for path) replies with the most negative Fb
        seen on the way.
    """

    interval: float = 1e-3
    jitter: float = 0.15
    pos_gain: float = 0.1
    reply: str = "first_negative"

    def __post_init__(self) -> None:
        num = {
            "interval": (parse_time, 0.0, MAX_TIME, True, False, "s", "probe interval"),
            "jitter": (parse_number, 0.0, 1.0, False, True, "", "probe jitter"),
            "pos_gain": (parse_number, 0.0, 1.0, False, False, "", "positive gain"),
        }
        validate(self, num, choices={"reply": ("first_negative", "target")})


@dataclass(frozen=True)
class SonarParams(Replaceable):
    """QCN-SONAR timers and thresholds (IBM Zurich deck; mechanism not specified -- our reading).

    ``wp_timer`` (10 ms): wait after a CNM before pinging; ``sf_timer`` (0.5 ms, OCR "05ms"):
    ping period; ``we_timer`` (2 ms): hold after a "not congested" echo before the next ping.
    The CP echoes "not congested" iff Q < ``nc_threshold`` (15000 B) has held for
    ``nc_interval`` (10 ms). ``boost``: reaction to the echo: ``"hai"`` TR += k R_HAI (k =
    consecutive echoes), CR = (CR + TR)/2; ``"target"`` CR = TR; ``"release"`` CR = C. The
    protocol also sets ``tr_div8="off"`` ("No FR1 target-rate adjustment").
    """

    wp_timer: float = 10e-3
    we_timer: float = 2e-3
    sf_timer: float = 0.5e-3
    nc_threshold: float = 15000.0
    nc_interval: float = 10e-3
    boost: str = "hai"

    def __post_init__(self) -> None:
        t = (parse_time, 0.0, MAX_TIME, True, False, "s")
        num = {
            "wp_timer": (*t, "WP timer"),
            "we_timer": (*t, "WE timer"),
            "sf_timer": (*t, "SF timer"),
            "nc_threshold": (parse_size, 0.0, MAX_SIZE, True, False, "B", "not-congested level"),
            "nc_interval": (parse_time, 0.0, MAX_TIME, False, False, "s", "not-congested interval"),
        }
        validate(self, num, choices={"boost": ("hai", "target", "release")})


@dataclass(frozen=True)
class QCNPlusParams(Replaceable):
    """QCN+ gain tuning r1.01 (IBM Zurich deck, backup slide). RTT is configured, not measured.

    Parameters
    ----------
    rtt : float
        RP<->CP round-trip time (s).
    one_neg_per_rtt : bool
        Accept one negative adjustment per RTT (later CNMs within RTT are ignored).
    to_thresh_rtt : bool
        Byte-counter cycle max(TO_THRESHOLD, RTT * 2 * CR / 8) bytes.
    base_w : float or None
        baseW (None = QCNParams.w); W = baseW + RTT factor / N, N = link_capacity / CR, and
        the RP recomputes Fb = -(Qoff + W Qdelta) from the CNM (quantised with Fbmax =
        Qeq (2 baseW + 1)).
    w_factor : float
        <factor> in 1/s (N/S; default 2000: RTT 1 ms at N = 1 adds 2 to W).
    link_capacity : float or None
        Switch link capacity (bit/s); None = line rate.
    gain_halving : float
        Positive loop gain x 0.5**(RTT / gain_halving) (slide: per ms of RTT).
    gain_mode : {"continuous", "step"}
        0.5**(RTT/1ms) or 0.5**floor(RTT/1ms).
    """

    rtt: float = 500e-6
    one_neg_per_rtt: bool = True
    to_thresh_rtt: bool = True
    base_w: float | None = None
    w_factor: float = 2000.0
    link_capacity: float | None = None
    gain_halving: float = 1e-3
    gain_mode: str = "continuous"

    def __post_init__(self) -> None:
        num = {
            "rtt": (parse_time, 0.0, MAX_TIME, True, False, "s", "RTT"),
            "base_w": (parse_number, 0.0, 1024.0, False, False, "", "baseW"),
            "w_factor": (parse_number, 0.0, _INF, False, True, "1/s", "W factor"),
            "link_capacity": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "link capacity"),
            "gain_halving": (parse_time, 0.0, MAX_TIME, True, False, "s", "gain halving RTT"),
        }
        bools = ("one_neg_per_rtt", "to_thresh_rtt")
        modes = {"gain_mode": ("continuous", "step")}
        validate(self, num, bools, modes, optional=("base_w", "link_capacity"))

    def loop_gain(self) -> float:
        """0.5**(rtt / gain_halving), or with floor() in ``step`` mode."""
        x = self.rtt / self.gain_halving
        if self.gain_mode == "step":
            x = math.floor(x)
        return 0.5**x
