"""QCN parameters: a frozen, validated dataclass, named presets and TOML files.

Every field is in SI units (bytes, bit/s, seconds); unit strings are accepted when constructing
(``QCNParams(qeq="33KB", timer="25ms")``), in :meth:`QCNParams.replace` and in TOML files.
A value outside its allowed range raises :class:`ValueError` naming the field and the range;
nothing is clamped.

Sources (``../shared/reference/qcn-algorithm.md``):

* §3.1 -- the IEEE8021-CN-MIB defaults, preset ``802.1qau`` (the dataclass defaults).
* §3.2 -- the seeds' parameter sets: ``stanford-baseline`` (seed 002), ``netfpga-1g``
  (seed 001), ``ibm-zurich`` (seed 000), ``teak-003`` (seed 003), ``teak-2007`` and
  ``teak-2007-hai`` (seed 004, sets 1 and 2).
* §2.3 / §1.3 / §4 -- the switchable variants (quantiser, cycle halving, TR/8 rule, HAI index,
  timer mode, byte-counter reload, drift).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from qcnmodel.units import parse_number, parse_rate, parse_size, parse_time

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PRESETS", "QCNParams", "load_params", "check_field_names"]

#: Sampling table of qcn-algorithm.md §1.4 (bytes) for a 150000 B base, indexed by qFb >> 3.
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
    "line_rate": (parse_rate, 0.0, np.inf, True, True, "bit/s", "RP line rate C"),
    "frame_size": (parse_size, 64, 9216, False, False, "B", "data frame size"),
    "qeq": (parse_size, 0.0, np.inf, True, True, "B", "CP queue set point Qeq"),
    "w": (parse_number, 0.0, 1024.0, False, False, "", "feedback weight w"),
    "fb_bits": (parse_number, 1, 16, False, False, "bits", "width of the quantised Fb"),
    "sample_base": (parse_size, 0.0, np.inf, True, True, "B", "sampling table entry 0"),
    "ps_fixed": (parse_number, 0.0, 1.0, True, False, "", "fixed sampling probability Ps"),
    "jitter": (parse_number, 0.0, 1.0, False, True, "", "jitter half-width J of U()"),
    "gd": (parse_number, 0.0, 1.0, True, False, "", "decrease gain Gd"),
    "min_dec": (parse_number, 0.0, 1.0, True, False, "", "MinDecFactor (largest cut)"),
    "min_rate": (parse_rate, 0.0, np.inf, True, True, "bit/s", "MIN_RATE"),
    "bc_limit": (parse_size, 0.0, np.inf, True, True, "B", "byte counter BC_LIMIT"),
    "timer": (parse_time, 0.0, np.inf, True, True, "s", "RP timer period T"),
    "fr_th": (parse_number, 1, 1000, False, False, "", "fast recovery threshold FR_TH"),
    "r_ai": (parse_rate, 0.0, np.inf, False, True, "bit/s", "active increase R_AI"),
    "r_hai": (parse_rate, 0.0, np.inf, False, True, "bit/s", "hyperactive increase R_HAI"),
    "cp_latency": (parse_time, 0.0, np.inf, False, True, "s", "CP processing latency"),
    "drift_inc": (parse_rate, 0.0, np.inf, False, True, "bit/s", "additive drift per period"),
    "drift_factor": (parse_number, 1.0, 2.0, False, False, "", "multiplicative drift"),
    "drift_period": (parse_time, 0.0, np.inf, False, True, "s", "drift period (0 = off)"),
}
_INTEGER = {"frame_size", "fb_bits", "fr_th"}
_BOOL = {"hai", "cnm_requires_qfb_positive"}


def _parse_bool(value, field: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "on", "yes", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "off", "no", "0"):
        return False
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{field}: expected a boolean (true/false, on/off), got {value!r}")


def _range_text(lo, hi, lo_open, hi_open, unit) -> str:
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    hi_s = "inf" if hi == np.inf else f"{hi:g}"
    return f"{left}{lo:g}, {hi_s}{right}" + (f" {unit}" if unit else "")


def check_field_names(names, valid, where: str = "QCNParams") -> None:
    """Raise ValueError for any name not in ``valid``, suggesting the closest valid name."""
    for name in names:
        if name not in valid:
            close = difflib.get_close_matches(name, list(valid), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"unknown {where} field {name!r}{hint} (allowed: {', '.join(sorted(valid))})"
            )


@dataclass(frozen=True)
class QCNParams:
    """QCN congestion point and reaction point parameters (SI units).

    The defaults are the IEEE8021-CN-MIB defaults (qcn-algorithm.md §3.1, preset ``802.1qau``).
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
        Feedback weight (CpFeedbackWeight = 1 read as log2(w), so w = 2; §1.2).
    fb_bits : int
        Width of the quantised feedback (6; seed 000 uses 8).
    quantiser : str
        Rounding rule of §1.3: ``floor63`` (default), ``round63``, ``floor64cap``, ``msb6``,
        ``shift``.
    sampling : str
        ``table`` (the §1.4 table, variable 1..8% for 1500 B frames) or ``fixed`` (frame_size /
        ps_fixed bytes between samples).
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
        Variants of §2.3 (defaults: ``after_fr``, ``own_first``, ``min_stage``, ``event``,
        ``always``).
    cnm_requires_qfb_positive : bool
        Suppress CNMs whose quantised feedback is 0 (ns-3-dcn; §1.2).
    drift_inc, drift_factor, drift_period : float
        Drift proposal of §4.5: every ``drift_period`` s the CR grows by ``drift_inc`` bit/s or
        by the factor ``drift_factor``. ``drift_period = 0`` disables drift.
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
        for name, (parser, lo, hi, lo_open, hi_open, unit, desc) in _NUMERIC.items():
            raw = getattr(self, name)
            value = parser(raw, name)
            if name in _INTEGER:
                if value != int(value):
                    raise ValueError(f"{name}: {desc} must be an integer, got {raw!r}")
                value = int(value)
            bad_lo = value <= lo if lo_open else value < lo
            bad_hi = value >= hi if hi_open else value > hi
            if bad_lo or bad_hi:
                raise ValueError(
                    f"{name}: {desc} = {raw!r} is outside the allowed range "
                    f"{_range_text(lo, hi, lo_open, hi_open, unit)}"
                )
            object.__setattr__(self, name, value)
        for name in _BOOL:
            object.__setattr__(self, name, _parse_bool(getattr(self, name), name))
        for name, allowed in _CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name}: {value!r} is not one of {', '.join(allowed)}")
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
        """Quantiser full scale Fbmax = Qeq (2w + 1) in bytes (§1.3)."""
        return self.qeq * (2.0 * self.w + 1.0)

    @property
    def fb_full_scale(self) -> int:
        """Largest quantised feedback, 2**fb_bits - 1 (63 for 6 bits)."""
        return 2**self.fb_bits - 1

    def sample_table(self) -> np.ndarray:
        """The 8 sampling intervals of §1.4 in bytes, scaled by sample_base / 150000."""
        return np.array(BASE_SAMPLE_TABLE) * (self.sample_base / BASE_SAMPLE_TABLE[0])

    # ------------------------------------------------------------------ construction helpers
    def replace(self, **changes: Any) -> QCNParams:
        """Return a copy with some fields changed (unit strings accepted).

        Raises
        ------
        ValueError
            For an unknown field name (with a suggestion) or an out-of-range value.
        """
        check_field_names(changes, {f.name for f in fields(self)})
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str) -> QCNParams:
        """Return the named parameter set (see :data:`PRESETS`)."""
        key = name.strip().lower()
        if key not in PRESETS:
            close = difflib.get_close_matches(key, list(PRESETS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"preset: unknown preset {name!r}{hint} (allowed: {', '.join(PRESETS)})"
            )
        return PRESETS[key]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the fields (SI numbers, strings, booleans)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_toml(self, path: str | Path | None = None) -> str:
        """Serialise to TOML (a ``[qcn]`` table, SI units); write it to ``path`` if given."""
        import tomli_w

        text = "# qcnmodel QCN parameters, SI units (bytes, bit/s, s)\n" + tomli_w.dumps(
            {"qcn": self.to_dict()}
        )
        if path is not None:
            Path(path).write_text(text)
        return text

    @classmethod
    def from_dict(cls, data: dict[str, Any], base: QCNParams | None = None) -> QCNParams:
        """Build from a dict of field values on top of ``base`` (default: 802.1Qau)."""
        base = base or cls()
        return base.replace(**data)


def _line_of(text: str, key: str) -> int | None:
    for i, line in enumerate(text.splitlines(), start=1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return i
    return None


def load_params(path: str | Path, extra_tables: tuple[str, ...] = ()) -> QCNParams:
    """Load :class:`QCNParams` from a TOML file.

    The file may hold a top-level ``preset = "NAME"`` (the base set, default ``802.1qau``) and
    field values either at the top level or in a ``[qcn]`` table, with unit strings allowed::

        preset = "stanford-baseline"
        [qcn]
        qeq = "33KB"
        timer = "15ms"

    Parameters
    ----------
    path : str or Path
        The TOML file.
    extra_tables : tuple of str
        Names of other tables the caller handles itself (ignored here).

    Raises
    ------
    ValueError
        For a syntax error, an unknown key or an out-of-range value; the message names the
        file, the field and its line.
    """
    path = Path(path)
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from None
    base = QCNParams()
    if "preset" in data:
        try:
            base = QCNParams.preset(str(data.pop("preset")))
        except ValueError as exc:
            raise ValueError(f"{path}, line {_line_of(text, 'preset')}: {exc}") from None
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key == "qcn" and isinstance(value, dict):
            values.update(value)
        elif isinstance(value, dict):
            if key not in extra_tables:
                raise ValueError(
                    f"{path}, line {_line_of(text, '[' + key) or '?'}: unknown table [{key}] "
                    f"(allowed: [qcn]{''.join(', [' + t + ']' for t in extra_tables)})"
                )
        else:
            values[key] = value
    valid = {f.name for f in fields(QCNParams)}
    for key in values:
        if key not in valid:
            try:
                check_field_names([key], valid)
            except ValueError as exc:
                raise ValueError(f"{path}, line {_line_of(text, key)}: {exc}") from None
    try:
        return base.replace(**values)
    except ValueError as exc:
        field = str(exc).split(":", 1)[0]
        raise ValueError(f"{path}, line {_line_of(text, field)}: {exc}") from None


def _make_presets() -> dict[str, QCNParams]:
    std = QCNParams()
    teak_2007 = std.replace(
        qeq=37500, gd=1 / 128, timer=500e-6, r_ai=3e6, hai=False, sampling="fixed",
        ps_fixed=0.012, bc_limit=75000, drift_factor=1.005, drift_period=500e-6,
    )  # fmt: skip
    return {
        # qcn-algorithm.md §3.1: IEEE8021-CN-MIB defaults.
        "802.1qau": std,
        # §3.2, seed 002 ("QCN: Description and Benchmark Simulations").
        "stanford-baseline": std.replace(qeq=33000, min_rate=10e6),
        # §3.2, seed 001 (NetFPGA at 1 Gb/s).
        "netfpga-1g": std.replace(
            line_rate=1e9, qeq=33000, r_ai=0.5e6, r_hai=5e6, timer=25e-3, min_rate=0.5e6
        ),
        # §3.2, seed 000 (IBM Zurich): Qeq = M/4 with M = 1.5 MB, 8-bit Fb, R_AI 12 Mb/s,
        # Rmin 1 Mb/s, "no cycle shrinking", drift 4 Mb/s every 20 ms.
        "ibm-zurich": std.replace(
            qeq=375000,
            fb_bits=8,
            r_ai=12e6,
            min_rate=1e6,
            cycle_halving="off",
            drift_inc=4e6,
            drift_period=20e-3,
        ),  # fmt: skip
        # §3.2, seed 003 (Teak): Qeq 24 kB, A = 12 Mb/s, 500 us timer, CP latency 5 us.
        # The drift factor 1.005 is applied every timer period (assumption, §4.5: N/S).
        "teak-003": std.replace(
            qeq=24000,
            r_ai=12e6,
            timer=500e-6,
            cp_latency=5e-6,
            drift_factor=1.005,
            drift_period=500e-6,
        ),  # fmt: skip
        # §3.2, seed 004 set 1: fixed 1.2% sampling, HAI off, TO_THRESH 75 kB.
        "teak-2007": teak_2007,
        # §3.2, seed 004 set 2: HAI on, variable (table) sampling.
        "teak-2007-hai": teak_2007.replace(hai=True, sampling="table"),
    }


#: Named parameter sets; the keys are the preset names accepted everywhere (``--preset``).
PRESETS: dict[str, QCNParams] = _make_presets()
