"""QCN parameters: a frozen, validated dataclass, named presets and TOML files.

Every field is in SI units (bytes, bit/s, seconds); unit strings are accepted when constructing
(``QCNParams(qeq="33KB", timer="25ms")``), in :meth:`QCNParams.replace` and in TOML files.
A value outside its allowed range raises :class:`ValueError` naming the field and the range;
nothing is clamped.

Sources:

* IEEE 802.1Qau through its IEEE8021-CN-MIB: the defaults, preset ``802.1qau`` (the dataclass
  defaults), the feedback weight, the quantiser and the sampling table.
* The seed decks' parameter sets: ``stanford-baseline`` (Stanford, "QCN: Description and
  Benchmark Simulations"), ``netfpga-1g`` (Stanford, QCN on NetFPGA at 1 Gb/s), ``ibm-zurich``
  (IBM Zurich, "Toward a Scalable and Robust QCN"), ``teak-003`` (Teak Technologies' ECM and
  QCN-variant simulations), ``teak-2007`` and ``teak-2007-hai`` (Teak Technologies,
  "Congestion Management Protocols: More QCN Simulation Results", July 2007, sets 1 and 2).
* The decks and public implementations (ns-3-dcn, ns3-rdma) for the switchable variants
  (quantiser, cycle halving, TR/8 rule, HAI index, timer mode, byte-counter reload, drift).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from qcnmodel._errors import unknown_name
from qcnmodel.params._validate import MAX_RATE, MAX_SIZE, MAX_TIME, check_field_names, validate
from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PRESETS", "QCNParams", "check_field_names", "ineffective_fields", "load_params"]

#: The 802.1Qau sampling table (bytes) for a 150000 B base, indexed by qFb >> 3.
BASE_SAMPLE_TABLE = (150000.0, 75000.0, 50000.0, 37500.0, 30000.0, 25000.0, 21500.0, 18500.0)

_CHOICES = {
    "quantiser": ("floor63", "round63", "floor64cap", "msb6", "shift"),
    "sampling": ("table", "fixed"),
    "cycle_halving": ("after_fr", "one_late", "hai_only", "off"),
    "tr_div8": ("own_first", "either", "off"),
    "hai_index": ("min_stage", "event_count"),
    "timer_mode": ("event", "lazy"),
    "bc_reload_on_cnm": ("always", "tr_reset_only"),
}

# name -> (parser, low, high, low_open, high_open, unit, description)
_NUMERIC = {
    "line_rate": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "RP line rate C"),
    "frame_size": (parse_size, 64, 9216, False, False, "B", "data frame size"),
    "qeq": (parse_size, 0.0, MAX_SIZE, True, False, "B", "CP queue set point Qeq"),
    "w": (parse_number, 0.0, 1024.0, False, False, "", "feedback weight w"),
    "fb_bits": (parse_number, 1, 16, False, False, "bits", "width of the quantised Fb"),
    "sample_base": (parse_size, 0.0, MAX_SIZE, True, False, "B", "sampling table entry 0"),
    "ps_fixed": (parse_number, 0.0, 1.0, True, False, "", "fixed sampling probability Ps"),
    "jitter": (parse_number, 0.0, 1.0, False, True, "", "jitter half-width J of U()"),
    "gd": (parse_number, 0.0, 1.0, True, False, "", "decrease gain Gd"),
    "min_dec": (parse_number, 0.0, 1.0, True, False, "", "MinDecFactor (largest cut)"),
    "min_rate": (parse_rate, 0.0, MAX_RATE, True, False, "bit/s", "MIN_RATE"),
    "bc_limit": (parse_size, 0.0, MAX_SIZE, True, False, "B", "byte counter BC_LIMIT"),
    "timer": (parse_time, 0.0, MAX_TIME, True, False, "s", "RP timer period T"),
    "fr_th": (parse_number, 1, 1000, False, False, "", "fast recovery threshold FR_TH"),
    "r_ai": (parse_rate, 0.0, MAX_RATE, False, False, "bit/s", "active increase R_AI"),
    "r_hai": (parse_rate, 0.0, MAX_RATE, False, False, "bit/s", "hyperactive increase R_HAI"),
    "cp_latency": (parse_time, 0.0, MAX_TIME, False, False, "s", "CP processing latency"),
    "drift_inc": (parse_rate, 0.0, MAX_RATE, False, False, "bit/s", "additive drift per period"),
    "drift_factor": (parse_number, 1.0, 2.0, False, False, "", "multiplicative drift"),
    "drift_period": (parse_time, 0.0, MAX_TIME, False, False, "s", "drift period (0 = off)"),
}
_INTEGER = {"frame_size", "fb_bits", "fr_th"}
_BOOL = {"hai", "cnm_requires_qfb_positive"}


@dataclass(frozen=True)
class QCNParams:
    """QCN congestion point and reaction point parameters (SI units).

    The defaults are the IEEE8021-CN-MIB defaults (preset ``802.1qau``).
    Unit strings are accepted for every numeric field and converted in ``__post_init__``.

    Parameters
    ----------
    line_rate : float
        RP line rate C in bit/s (10 Gb/s).
    frame_size : int
        Data frame size in bytes (1500).
    qeq : float
        CP set point Qeq in bytes (CpQueueSizeSetPoint, 26000).
    w : float
        Feedback weight (CpFeedbackWeight = 1 read as log2(w), so w = 2).
    fb_bits : int
        Width of the quantised feedback (6; seed 000 uses 8).
    quantiser : str
        Rounding rule of the quantiser: ``floor63`` (default), ``round63``, ``floor64cap``,
        ``msb6``, ``shift``.
    sampling : str
        ``table`` (the 802.1Qau sampling table, variable 1..8% for 1500 B frames) or ``fixed``
        (frame_size / ps_fixed bytes between samples).
    sample_base : float
        Table entry 0 in bytes (CpMinSampleBase, 150000); other entries scale with it.
    ps_fixed : float
        Sampling probability when ``sampling == "fixed"`` (in (0, 1]).
    jitter : float
        Half width J of the uniform jitter U(1-J, 1+J) (0.15, i.e. the seeds' "30%" total).
    gd : float
        Decrease gain Gd (2^-RpgGd = 1/128).
    min_dec : float
        Largest cut per CNM (RpgMinDecFac, 0.5).
    min_rate : float
        Rate floor in bit/s (RpgMinRate, 5 Mb/s).
    bc_limit : float
        Byte counter cycle in bytes (RpgByteReset, 150000).
    timer : float
        Timer period T in seconds (RpgTimeReset, 15 ms).
    fr_th : int
        Fast recovery threshold (RpgThreshold, 5).
    r_ai, r_hai : float
        Active and hyperactive increase steps in bit/s (5 and 50 Mb/s).
    hai : bool
        Hyperactive increase on (off in seeds 003/004 set 1: R_AI is added instead).
    cp_latency : float
        CP processing latency before a CNM leaves, in seconds (0; seed 003: 5 us).
    cycle_halving, tr_div8, hai_index, timer_mode, bc_reload_on_cnm : str
        Variants of the reaction point's rules (defaults: ``after_fr``, ``own_first``,
        ``min_stage``, ``event``, ``always``).
    cnm_requires_qfb_positive : bool
        Suppress CNMs whose quantised feedback is 0 (as ns-3-dcn does).
    drift_inc, drift_factor, drift_period : float
        The IBM Zurich deck's drift proposal: every ``drift_period`` s the CR grows by
        ``drift_inc`` bit/s or by the factor ``drift_factor``. ``drift_period = 0`` disables
        drift.
    """

    line_rate: float = 10e9
    frame_size: int = 1500
    qeq: float = 26000.0
    w: float = 2.0
    fb_bits: int = 6
    quantiser: str = "floor63"
    sampling: str = "table"
    sample_base: float = 150000.0
    ps_fixed: float = 0.01
    jitter: float = 0.15
    gd: float = 1.0 / 128.0
    min_dec: float = 0.5
    min_rate: float = 5e6
    bc_limit: float = 150000.0
    timer: float = 15e-3
    fr_th: int = 5
    r_ai: float = 5e6
    r_hai: float = 50e6
    hai: bool = True
    cp_latency: float = 0.0
    cycle_halving: str = "after_fr"
    tr_div8: str = "own_first"
    hai_index: str = "min_stage"
    timer_mode: str = "event"
    bc_reload_on_cnm: str = "always"
    cnm_requires_qfb_positive: bool = False
    drift_inc: float = 0.0
    drift_factor: float = 1.0
    drift_period: float = 0.0

    def __post_init__(self) -> None:
        validate(self, _NUMERIC, _BOOL, _CHOICES, _INTEGER)
        if self.min_rate >= self.line_rate:
            raise ValueError(
                f"min_rate: {self.min_rate:g} bit/s must be below line_rate "
                f"({self.line_rate:g} bit/s)"
            )

    # ------------------------------------------------------------------ derived quantities
    @property
    def ps(self) -> float:
        """Base sampling probability per frame: frame_size / sample_base (or ps_fixed)."""
        if self.sampling == "fixed":
            return self.ps_fixed
        return min(1.0, self.frame_size / self.sample_base)

    @property
    def fb_max(self) -> float:
        """Quantiser full scale Fbmax = Qeq (2w + 1) in bytes."""
        return self.qeq * (2.0 * self.w + 1.0)

    @property
    def fb_full_scale(self) -> int:
        """Largest quantised feedback, 2**fb_bits - 1 (63 for 6 bits)."""
        return 2**self.fb_bits - 1

    def sample_table(self) -> np.ndarray:
        """The sampling table of the congestion point.

        Returns
        -------
        numpy.ndarray
            The 8 intervals between samples in bytes, indexed by ``qFb >> 3``: the 802.1Qau
            table (:data:`BASE_SAMPLE_TABLE`) scaled by ``sample_base / 150000``.
        """
        return np.array(BASE_SAMPLE_TABLE) * (self.sample_base / BASE_SAMPLE_TABLE[0])

    # ------------------------------------------------------------------ construction helpers
    def replace(self, **changes: Any) -> QCNParams:
        """Return a copy with some fields changed (unit strings accepted).

        Parameters
        ----------
        **changes
            Field names and their new values; numbers in SI units or unit strings
            (``qeq="33KB"``, ``timer="25ms"``, ``line_rate="1Gbps"``).

        Returns
        -------
        QCNParams
            A new, validated parameter set; ``self`` is unchanged (frozen).

        Raises
        ------
        ValueError
            For an unknown field name (with a suggestion) or an out-of-range value.

        Examples
        --------
        >>> QCNParams().replace(qeq="33KB", timer="25ms").qeq
        33000.0
        """
        check_field_names(changes, {f.name for f in fields(self)})
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str) -> QCNParams:
        """Return the named parameter set (see :data:`PRESETS`).

        Parameters
        ----------
        name : str
            A key of :data:`PRESETS` (``802.1qau``, ``stanford-baseline``, ``netfpga-1g``,
            ``ibm-zurich``, ``teak-003``, ``teak-2007``, ``teak-2007-hai``); case and
            surrounding blanks are ignored.

        Returns
        -------
        QCNParams
            The preset's (frozen) parameter set.

        Raises
        ------
        ValueError
            If ``name`` is not a string or not a preset name (the message lists them).

        Examples
        --------
        >>> QCNParams.preset("netfpga-1g").line_rate
        1000000000.0
        """
        if not isinstance(name, str):
            raise ValueError(f"preset: expected a preset name (a string), got {name!r} "
                             f"(allowed: {', '.join(PRESETS)})")  # fmt: skip
        key = name.strip().lower()
        if key not in PRESETS:
            raise unknown_name("preset", "preset", name, PRESETS, sort=False)
        return PRESETS[key]

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict.

        Returns
        -------
        dict
            Field name -> value, in declaration order: SI numbers, strings and booleans
            (:meth:`from_dict` takes it back).
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_toml(self, path: str | Path | None = None) -> str:
        """Serialise to TOML: a comment line and a ``[qcn]`` table of every field (SI units).

        Parameters
        ----------
        path : str or Path, optional
            If given, the text is also written to this file (replacing it).

        Returns
        -------
        str
            The TOML text, which :func:`load_params` reads back.
        """
        import tomli_w

        text = "# qcnmodel QCN parameters, SI units (bytes, bit/s, s)\n" + tomli_w.dumps(
            {"qcn": self.to_dict()}
        )
        if path is not None:
            Path(path).write_text(text)
        return text

    @classmethod
    def from_dict(cls, data: dict[str, Any], base: QCNParams | None = None) -> QCNParams:
        """Build from a dict of field values on top of ``base``.

        Parameters
        ----------
        data : dict
            Field name -> value (SI numbers or unit strings), e.g. from :meth:`to_dict`.
        base : QCNParams, optional
            The parameter set the values change (default: ``cls()``, the 802.1Qau defaults).

        Returns
        -------
        QCNParams
            ``base.replace(**data)``.

        Raises
        ------
        ValueError
            If ``data`` is not a dict with string keys, for an unknown field name or an
            out-of-range value.
        """
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
            raise ValueError(f"QCNParams: expected a dict of field names to values, got {data!r}")
        base = base or cls()
        return base.replace(**data)


def ineffective_fields(p: QCNParams) -> frozenset[str]:
    """The fields without effect in ``p``'s mode.

    IEEE 802.1Qau-2010 clauses 32.8-32.9: the fixed sampling probability and the sampling table
    are alternatives; the hyperactive increase step applies only in HAI; the drift terms only
    with a drift period.

    Parameters
    ----------
    p : QCNParams
        The parameter set.

    Returns
    -------
    frozenset of str
        ``sample_base`` (with ``sampling="fixed"``) or ``ps_fixed`` (with the table);
        ``r_hai`` when ``hai`` is off; ``drift_inc`` and ``drift_factor`` when
        ``drift_period`` is 0.
    """
    off = {"sample_base"} if p.sampling == "fixed" else {"ps_fixed"}
    if not p.hai:
        off.add("r_hai")
    if p.drift_period == 0:
        off |= {"drift_inc", "drift_factor"}
    return frozenset(off)


def _line_of(text: str, key: str) -> int | None:
    """The first line setting ``key`` (``key = ...``) or opening a table named ``key``
    (``[key]``, ``[table.key]``), the key bare or quoted (``"key" = ...``); None if there is
    none."""
    k = re.escape(key.strip("[]"))
    k = rf"(?:{k}|\"{k}\"|'{k}')"
    pattern = re.compile(rf"\s*(?:{k}\s*=|\[+\s*(?:[\w.-]+\.)?{k}\s*\]+)")
    for i, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return i
    return None


def _at(path, text: str, key: str) -> str:
    """``"FILE, line N"`` for the line of ``key``, or ``"FILE"`` when it has none."""
    line = _line_of(text, key)
    return f"{path}, line {line}" if line else str(path)


#: the largest parameter file read (bytes): a real one is a few kB; /dev/zero is endless
MAX_PARAMS_FILE_BYTES = 1 << 20


def _read_bounded(path: Path, limit: int = MAX_PARAMS_FILE_BYTES, what: str = "parameter file",
                  why: str = " (they are a few kB of TOML)") -> bytes:  # fmt: skip
    """The bytes of the regular file ``path``, at most ``limit`` (default
    :data:`MAX_PARAMS_FILE_BYTES`; ``what`` names the kind of file in the messages, ``why``
    follows it where the file is too large).

    The file is opened without blocking and its type read from the open descriptor: a named
    pipe would otherwise wait for a writer without end, and a device (``/dev/zero``) be read
    without end; each, a directory or any other non-regular file, and a file larger than the
    bound, is a ValueError naming the path and what it is. A file that cannot be opened
    raises the OSError of :func:`os.open`.
    """
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(mode) else
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a special file")  # fmt: skip
        raise ValueError(f"{path}: {kind}, not a regular file; give a TOML {what}")
    with open(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit} bytes; not a {what}{why}")
    return data


def loads_toml(text: str, source) -> dict:
    """The TOML document ``text`` as a dict; a syntax error, or arrays and tables nested
    deeper than the parser's recursion allows, is a ValueError naming ``source``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ValueError(f"{source}: invalid TOML: arrays or tables nested too deeply "
                         "for the parser") from None  # fmt: skip


def load_params(path: str | Path, extra_tables: tuple[str, ...] = ("ranges",)) -> QCNParams:
    """Load :class:`QCNParams` from a TOML file.

    The file may hold a top-level ``preset = "NAME"`` (the base set, default ``802.1qau``) and
    field values either at the top level or in a ``[qcn]`` table, with unit strings allowed::

        preset = "stanford-baseline"
        [qcn]
        qeq = "33KB"
        timer = "15ms"

    A ``[ranges]`` table (the operating ranges ``qcnmodel check`` reads, as in the files of
    ``examples/``) is part of the format and is not read here.

    Parameters
    ----------
    path : str or Path
        The TOML file.
    extra_tables : tuple of str
        Names of other tables the caller handles itself (ignored here); default
        ``("ranges",)``, ``()`` to refuse every table but ``[qcn]``.

    Returns
    -------
    QCNParams
        The base preset with the file's values applied (validated, SI units).

    Raises
    ------
    ValueError
        For a path that is not a str or Path, a file that cannot be read, is larger than
        :data:`MAX_PARAMS_FILE_BYTES` or is not UTF-8, a syntax error, an unknown preset,
        key or table, a field given both at the top level and in ``[qcn]``, or an
        out-of-range value; the message names the file, and the field and its line when
        there is one.
    """
    if not isinstance(path, (str, Path)):
        raise ValueError(f"params: expected a path to a TOML file, got {path!r}")
    path = Path(path)
    try:
        text = _read_bounded(path).decode("utf-8-sig")  # without a BOM (Windows adds one)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                         "save the parameter file as UTF-8") from None  # fmt: skip
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the parameter file "
                         f"({exc.strerror or exc})") from None  # fmt: skip
    data = loads_toml(text, path)
    base = QCNParams()
    if "preset" in data:
        try:
            base = QCNParams.preset(str(data.pop("preset")))
        except ValueError as exc:
            raise ValueError(f"{_at(path, text, 'preset')}: {exc}") from None
    values: dict[str, Any] = {}
    table = data.get("qcn") if isinstance(data.get("qcn"), dict) else {}
    for key, value in data.items():
        if key == "qcn" and isinstance(value, dict):
            values.update(value)
        elif isinstance(value, dict):
            if key not in extra_tables:
                raise ValueError(
                    f"{_at(path, text, key)}: unknown table [{key}] "
                    f"(allowed: [qcn]{''.join(', [' + t + ']' for t in extra_tables)})"
                )
        elif key in table:  # one of the two would win silently
            raise ValueError(f"{_at(path, text, key)}: {key}: given both at the top level and "
                             "in [qcn]; give it once")  # fmt: skip
        else:
            values[key] = value
    valid = {f.name for f in fields(QCNParams)}
    for key in values:
        if key not in valid:
            try:
                check_field_names([key], valid)
            except ValueError as exc:
                raise ValueError(f"{_at(path, text, key)}: {exc}") from None
    try:
        return base.replace(**values)
    except ValueError as exc:
        field = str(exc).split(":", 1)[0]
        raise ValueError(f"{_at(path, text, field)}: {exc}") from None


def _make_presets() -> dict[str, QCNParams]:
    std = QCNParams()
    teak_2007 = std.replace(
        qeq=37500, gd=1 / 128, timer=500e-6, r_ai=3e6, hai=False, sampling="fixed",
        ps_fixed=0.012, bc_limit=75000, drift_factor=1.005, drift_period=500e-6,
    )  # fmt: skip
    return {
        # IEEE 802.1Qau: the IEEE8021-CN-MIB defaults.
        "802.1qau": std,
        # Stanford, "QCN: Description and Benchmark Simulations".
        "stanford-baseline": std.replace(qeq=33000, min_rate=10e6),
        # Stanford, QCN on NetFPGA at 1 Gb/s.
        "netfpga-1g": std.replace(
            line_rate=1e9, qeq=33000, r_ai=0.5e6, r_hai=5e6, timer=25e-3, min_rate=0.5e6
        ),
        # IBM Zurich, "Toward a Scalable and Robust QCN": Qeq = M/4 with M = 1.5 MB, 8-bit Fb,
        # R_AI 12 Mb/s, Rmin 1 Mb/s, "no cycle shrinking", drift 4 Mb/s every 20 ms; its
        # common settings' Gd = 0.5/255 (a full-scale 8-bit Fb cuts by half, as 1/128 does
        # with 6 bits).
        "ibm-zurich": std.replace(
            qeq=375000,
            fb_bits=8,
            gd=0.5 / 255,
            r_ai=12e6,
            min_rate=1e6,
            cycle_halving="off",
            drift_inc=4e6,
            drift_period=20e-3,
        ),  # fmt: skip
        # Teak Technologies' QCN-variant simulations: Qeq 24 kB, A = 12 Mb/s, 500 us timer, CP
        # latency 5 us. The drift factor 1.005 is applied every timer period (our assumption: the
        # deck does not say how often).
        "teak-003": std.replace(
            qeq=24000,
            r_ai=12e6,
            timer=500e-6,
            cp_latency=5e-6,
            drift_factor=1.005,
            drift_period=500e-6,
        ),  # fmt: skip
        # Teak Technologies, "More QCN Simulation Results" (2007), set 1: fixed 1.2% sampling, HAI
        # off, TO_THRESH 75 kB.
        "teak-2007": teak_2007,
        # The same deck, set 2: HAI on, variable (table) sampling.
        "teak-2007-hai": teak_2007.replace(hai=True, sampling="table"),
    }


#: Named parameter sets; the keys are the preset names accepted everywhere (``--preset``).
PRESETS: dict[str, QCNParams] = _make_presets()
