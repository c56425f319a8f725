"""DCQCN parameters: one frozen, validated dataclass for the fluid model and the simulator.

Defaults are those of Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from
Analysis of DCQCN and TIMELY" (ACM CoNEXT 2016): C = 40 Gb/s, 1000 B packets, marking ramp
Kmin = 5 KB .. Kmax = 200 KB up to pmax = 1 %, g = 1/256, CNP interval tau = 50 us, alpha
update tau' = 55 us, rate timer T = 55 us, byte counter B = 10 MB, F = 5, R_AI = 40 Mb/s.
The fields the fluid model does not use are the simulator's: ``r_hai`` (the paper does not
give it; 10 R_AI here), ``min_rate``, ``alpha_init`` (1, as the paper), ``jitter`` (0: DCQCN
has none) and ``release`` (the rate limiter is released when CR reaches C, as in QCN).

The fluid model's earlier field names are accepted as aliases, in the constructor and in
:meth:`DCQCNParams.replace`, and readable as properties: ``capacity`` (``line_rate``),
``tau`` (``cnp_interval``), ``tau_prime`` (``alpha_timer``), ``timer`` (``rate_timer``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qcnmodel.params._validate import (
    MAX_RATE,
    MAX_SIZE,
    MAX_TIME,
    Replaceable,
    check_field_names,
    validate,
)
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

__all__ = ["DCQCNParams", "DCQCNSimParams"]

_INF = np.inf

_NUMERIC = {
    "line_rate": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "line rate C"),
    "packet_size": (parse_size, 64, 9216, False, False, "B", "packet size"),
    "kmin": (parse_size, 0.0, MAX_SIZE, False, False, "B", "Kmin"),
    "kmax": (parse_size, 0.0, MAX_SIZE, True, False, "B", "Kmax"),
    "pmax": (parse_number, 0.0, 1.0, True, False, "", "pmax"),
    "cnp_interval": (parse_time, 0.0, MAX_TIME, False, False, "s", "CNP interval tau"),
    "g": (parse_number, 0.0, 1.0, True, False, "", "alpha gain g"),
    "alpha_timer": (parse_time, 0.0, MAX_TIME, True, False, "s", "alpha timer tau'"),
    "rate_timer": (parse_time, 0.0, MAX_TIME, True, False, "s", "rate timer T"),
    "byte_counter": (parse_size, 0.0, MAX_SIZE, True, False, "B", "byte counter B"),
    "fr_th": (parse_number, 1, 1000, False, False, "", "fast recovery F"),
    "r_ai": (parse_rate, 0.0, MAX_RATE, False, False, "bit/s", "R_AI"),
    "r_hai": (parse_rate, 0.0, MAX_RATE, False, False, "bit/s", "R_HAI"),
    "min_rate": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "minimum rate"),
    "alpha_init": (parse_number, 0.0, 1.0, False, False, "", "initial alpha"),
    "jitter": (parse_number, 0.0, 1.0, False, True, "", "timer/counter jitter"),
}

#: the fluid model's earlier field names -> the current ones
ALIASES = {
    "capacity": "line_rate",
    "tau": "cnp_interval",
    "tau_prime": "alpha_timer",
    "timer": "rate_timer",
}


@dataclass(frozen=True, init=False)
class DCQCNParams(Replaceable):
    """DCQCN parameters (SI units; module docstring for the sources and aliases).

    Parameters
    ----------
    line_rate : float
        Line rate and bottleneck capacity C, bit/s (40 Gb/s; alias ``capacity``).
    packet_size : float
        Packet size, bytes (1000).
    kmin, kmax : float
        Marking ramp, bytes (5 KB, 200 KB).
    pmax : float
        Marking probability at Kmax (1 %).
    cnp_interval : float
        CNP generation interval tau, s (50 us; alias ``tau``).
    g : float
        Alpha gain (1/256).
    alpha_timer : float
        Alpha update interval tau', s (55 us; alias ``tau_prime``).
    rate_timer : float
        Rate-increase timer T, s (55 us; alias ``timer``).
    byte_counter : float
        Byte counter B, bytes (10 MB).
    fr_th : int
        Fast-recovery threshold F (5).
    r_ai, r_hai : float
        Additive and hyper-additive increase, bit/s (40 and 400 Mb/s).
    min_rate : float
        Rate floor, bit/s (10 Mb/s; below ``line_rate``).
    alpha_init : float
        Initial alpha (1).
    jitter : float
        Jitter half-width of the simulator's timers and counters (0).
    release : bool
        The simulator's rate limiter is released when CR reaches C.

    Unit strings are accepted ("40Gbps", "50us", "10MB", "1/256").
    """

    line_rate: float = 40e9
    packet_size: float = 1000.0
    kmin: float = 5000.0
    kmax: float = 200000.0
    pmax: float = 0.01
    cnp_interval: float = 50e-6
    g: float = 1.0 / 256.0
    alpha_timer: float = 55e-6
    rate_timer: float = 55e-6
    byte_counter: float = 10e6
    fr_th: int = 5
    r_ai: float = 40e6
    r_hai: float = 400e6
    min_rate: float = 10e6
    alpha_init: float = 1.0
    jitter: float = 0.0
    release: bool = True

    _ALIASES = ALIASES

    def __init__(self, *args, **kw) -> None:
        fields = type(self).__dataclass_fields__
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} values")
        given = {name: (name, value) for name, value in zip(fields, args)}
        for name, value in kw.items():
            new = ALIASES.get(name, name)
            if new in given:
                raise ValueError(f"{name}: given twice (as {name!r} and {new!r})")
            given[new] = (name, value)
        check_field_names(given, set(fields) | set(ALIASES), type(self).__name__)
        for name, f in fields.items():
            object.__setattr__(self, name, given[name][1] if name in given else f.default)
        try:
            self.__post_init__()
        except ValueError as exc:  # name the field as the caller spelled it
            field, _, rest = str(exc).partition(":")
            spelled = given.get(field, (field,))[0]
            raise ValueError(f"{spelled}:{rest}") from None

    def __post_init__(self) -> None:
        validate(self, _NUMERIC, ("release",), integers=("fr_th",))
        if self.kmax <= self.kmin:
            raise ValueError(f"kmax: must exceed kmin = {self.kmin:g} B, got {self.kmax:g} B")
        if self.min_rate >= self.line_rate:
            raise ValueError(f"min_rate: {self.min_rate:g} bit/s must be below line_rate")

    # the fluid model's earlier names
    @property
    def capacity(self) -> float:
        """Alias of :attr:`line_rate` (bit/s)."""
        return self.line_rate

    @property
    def tau(self) -> float:
        """Alias of :attr:`cnp_interval` (s)."""
        return self.cnp_interval

    @property
    def tau_prime(self) -> float:
        """Alias of :attr:`alpha_timer` (s)."""
        return self.alpha_timer

    @property
    def timer(self) -> float:
        """Alias of :attr:`rate_timer` (s)."""
        return self.rate_timer

    @classmethod
    def from_fluid(cls, fp, **kw):
        """A copy of the DCQCN parameters ``fp`` as this class, with fields changed by ``kw``.

        Parameters
        ----------
        fp : DCQCNParams
            The parameters to copy (every field of this class is read from it).
        **kw
            Fields to change, by their current names, not the aliases (unit strings accepted).

        Returns
        -------
        DCQCNParams
            A validated instance of ``cls``.

        Raises
        ------
        ValueError
            For an unknown field name, an alias (the field is then given twice) or an
            out-of-range value.
        """
        return cls(**{**{name: getattr(fp, name) for name in cls.__dataclass_fields__}, **kw})


#: the packet simulator's rule choices (DCQCNSimParams.mark_at / cnp_mode)
MARK_AT = ("enqueue", "dequeue")
CNP_MODES = ("dead_time", "coalesce", "window")


@dataclass(frozen=True, init=False)
class DCQCNSimParams(DCQCNParams):
    """The DCQCN parameters of the packet simulator: those of :class:`DCQCNParams` plus two
    rules the fluid model does not have.

    Parameters
    ----------
    mark_at : {"dequeue", "enqueue"}
        Where a switch draws the RED/ECN mark: against the queue a frame finds at arrival
        ("enqueue"), or when it starts to leave ("dequeue", DCQCN's egress marking, Zhu et
        al., SIGCOMM 2015).
    cnp_mode : {"coalesce", "dead_time", "window"}
        The notification point's CNP rule (per flow, interval ``cnp_interval``): "dead_time"
        sends a CNP at a marked packet unless one was sent in the last interval (later marks
        are ignored); "coalesce" does the same but remembers a mark that arrives inside the
        interval and sends one CNP when the interval ends (no mark lost, at most one CNP per
        interval: the NP of the Mellanox NIC described in the DCQCN paper); "window" sends
        one CNP at the end of each interval of a fixed grid in which a mark arrived.
    """

    mark_at: str = "dequeue"
    cnp_mode: str = "coalesce"

    def __post_init__(self) -> None:
        super().__post_init__()
        validate(self, {}, choices={"mark_at": MARK_AT, "cnp_mode": CNP_MODES})

    @classmethod
    def from_fluid(cls, fp, **kw):
        """A copy of the DCQCN parameters ``fp`` as this class (the simulator's rules at
        their defaults unless ``fp`` has them), with fields changed by ``kw``.

        Parameters
        ----------
        fp : DCQCNParams or DCQCNSimParams
            The parameters to copy (the fields it has).
        **kw
            Fields to change by their current names, not the aliases, ``mark_at`` and
            ``cnp_mode`` included (unit strings accepted).

        Returns
        -------
        DCQCNSimParams
            A validated instance of ``cls``.

        Raises
        ------
        ValueError
            For an unknown field name, an alias (the field is then given twice), an unknown
            rule or an out-of-range value.
        """
        names = [n for n in cls.__dataclass_fields__ if hasattr(fp, n)]
        return cls(**{**{n: getattr(fp, n) for n in names}, **kw})
