"""Property-based fuzzing of the command line and the TOML loaders.

Property: every generated input ends in exit 0 or 1, or in exit 2 with one message on stderr
that names a field (a flag, a ``--set`` key, a file or a TOML key); never a traceback, an
exception escaping :func:`qcnmodel.cli.main`, or a run past a bounded time. Simulations are
kept short (``--duration`` at most 1 ms), so the bound is the per-call ``_BOUND_S`` below.
The default suite runs a few examples of each; ``pytest -m slow`` runs many more.
"""

from __future__ import annotations

import math
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qcnmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]

#: Wall-clock bound of one generated call (s): a parse error answers in milliseconds and a
#: 1 ms simulation in about a second on the 2-core test machine; 60 s leaves room for load
#: from other processes but still catches a hang.
_BOUND_S = 60

FAST = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))  # fmt: skip
MANY = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))  # fmt: skip


class _Hang(Exception):
    pass


@contextmanager
def _bounded(seconds: int):
    def alarm(signum, frame):
        raise _Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# --- values -------------------------------------------------------------------------------

_UNITS = ["", "s", "ms", "us", "ns", "bps", "Gbps", "Mbps", "B", "KB", "MB", "%", "frames", "x"]
_SPECIAL = ["nan", "NaN", "inf", "-inf", "1e308", "1e999", "-0", "0", "2^99999", "1/0", "1/128",
            "", " ", "..", "1..", "..5", "1..2:0", "1..5:-1", "abc", "\x00", "é", "1e-320",
            "99999999999999999999", "0x10", "1_000"]  # fmt: skip

_number = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["1", "5", "10", "0.5", "-5", "1e-9", "1e9", "1e300", "-1e300"]),
)
_value = st.one_of(
    st.builds(lambda n, u: n + u, _number, st.sampled_from(_UNITS)),
    st.sampled_from(_SPECIAL),
    st.text(max_size=12),
)


def _names_a_field(err: str, fields: set[str]) -> bool:
    return any(f and f.lower() in err.lower() for f in fields)


def _run(argv: list[str], capsys, fields: set[str]) -> None:
    t0 = time.monotonic()
    with _bounded(_BOUND_S):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage error: exit 2, the flag named on stderr
            code = exc.code
    elapsed = time.monotonic() - t0
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err, (argv, err)
    assert code in (0, 1, 2), (argv, code, err)
    assert elapsed < _BOUND_S, (argv, elapsed)
    if code == 2:
        assert "error" in err, (argv, err)
        assert _names_a_field(err, fields), (argv, err)


def _flags(argv: list[str]) -> set[str]:
    """The field names an error about ``argv`` may name: its flags (without dashes, with
    ``-`` and ``_`` spellings), the keys of its ``--set``/``--grid`` values and sub-command
    names (argparse's own messages name the command and the flag)."""
    out = set()
    for i, tok in enumerate(argv):
        if tok.startswith("--"):
            name = tok[2:].split("=", 1)[0]
            out |= {name, name.replace("-", "_"), tok.split("=", 1)[0]}
            if name in ("set", "grid") and i + 1 < len(argv):
                key = argv[i + 1].split("=", 1)[0].strip()
                out |= {key, key.split(".", 1)[-1]}  # a qcn./proto./scenario. prefix routes
    out |= {"argument", "unrecognized"}  # argparse names the flag on these lines
    return {f for f in out if f.strip()}


# --- argv strategies ---------------------------------------------------------------------------

_MARGIN_FLAGS = ["--rtt", "--flows", "--w", "--ps", "--rate", "--pm-threshold", "--jobs"]
_SET_KEYS = ["qeq", "w", "gd", "ps", "rtt", "timer", "bc", "line_rate", "frame_size", "bogus",
             "qcn.frame_size", "n_sources", "seed", ""]  # fmt: skip


def _pairs(flags, n=3, at_least=0):
    return st.lists(st.tuples(st.sampled_from(flags), _value), min_size=at_least, max_size=n)


def _sets(n=2):
    return st.lists(st.builds(lambda k, v: ["--set", f"{k}={v}"], st.sampled_from(_SET_KEYS),
                              _value), max_size=n)  # fmt: skip


def _flat(pairs):
    return [t for p in pairs for t in (p if isinstance(p, list) else [p[0], p[1]])]


_margins = st.builds(lambda p, s, m: ["margins", *m, *_flat(p), *_flat(s), "--json"],
                     _pairs(_MARGIN_FLAGS), _sets(),
                     st.sampled_from([[], ["--model", "dcqcn"], ["--model", "fopdt"]]))  # fmt: skip
_PARAMS_FILE = str(ROOT / "examples/802.1qau.toml")
_CHECK_FLAGS = ["--rtt", "--flows", "--pm-threshold"]
#: a full ``check`` takes ~20 s on the test machine: the default suite always passes a
#: generated flag (mostly refused); the slow suite also runs the plain command
_check_one = st.builds(lambda p, s: ["check", _PARAMS_FILE, *_flat(p), *_flat(s), "--json"],
                       _pairs(_CHECK_FLAGS, 2, 1), _sets())  # fmt: skip
_check = st.builds(lambda p, s: ["check", _PARAMS_FILE, *_flat(p), *_flat(s), "--json"],
                   _pairs(_CHECK_FLAGS), _sets())  # fmt: skip
_GRID_KEYS = ["rtt", "w", "n_flows", "qeq", "x"]
_GRID_COUNTS = ["1", "2", "3", "0", "-1", "1.5", "x", "1e9"]
_grid_value = st.one_of(
    st.builds(lambda k, a, b, n: f"{k}={a}..{b}:{n}", st.sampled_from(_GRID_KEYS),
              _value, _value, st.sampled_from(_GRID_COUNTS)),
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["rtt", "w", "n_flows", "seed"]), _value),
    st.text(max_size=10),
)  # fmt: skip
_SWEEP_FLAGS = ["--rtt", "--flows", "--jobs", "--duration"]
_sweep = st.builds(lambda g, p: ["sweep", "--model", "qcn", "--grid", g, *_flat(p), "--quiet"],
                   _grid_value, _pairs(_SWEEP_FLAGS, 1))  # fmt: skip
_SIM_DUR = st.one_of(st.sampled_from(["1ms", "200us", "0.5ms"]), _value)
_SIM_FLAGS = ["--bin", "--seed", "--decimate", "--window", "--protocol"]


def _sim_argv(cmd, dur, pairs, sets):
    head = {
        "simulate": ["simulate", "--scenario", "og-hotspot"],
        "compare": ["compare", "--scenario", "og-hotspot", "--protocols", "qcn"],
    }[cmd]
    return [*head, "--duration", dur, *_flat(pairs), *_flat(sets), "--json"]


def _bounded_duration(dur: str) -> bool:
    """Keep only durations that are refused or at most 1 ms (never a long simulation)."""
    from qcnmodel.units import parse_time

    try:
        t = parse_time(dur, "duration")
    except (ValueError, OverflowError, TypeError):
        return True
    return not (isinstance(t, float) and math.isfinite(t) and t > 1e-3)


_simulate = st.builds(_sim_argv, st.sampled_from(["simulate", "compare"]),
                      _SIM_DUR.filter(_bounded_duration), _pairs(_SIM_FLAGS, 2),
                      _sets(1))  # fmt: skip


# --- CLI properties ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _in_scratch(monkeypatch, tmp_path_factory):
    # default outputs (sweep.nc, compare-out/) land in a scratch directory, not the tree
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@FAST
@given(argv=st.one_of(_margins, _check_one, _sweep))
def test_model_commands_answer_every_input(argv, capsys):
    _run(argv, capsys, _flags(argv))


@settings(FAST, max_examples=4)
@given(argv=_simulate)
def test_simulate_and_compare_answer_every_input(argv, capsys):
    _run(argv, capsys, _flags(argv))


@pytest.mark.slow
@MANY
@given(argv=st.one_of(_margins, _check, _sweep))
def test_model_commands_answer_every_input_many(argv, capsys):
    _run(argv, capsys, _flags(argv))


@pytest.mark.slow
@settings(MANY, max_examples=60)
@given(argv=_simulate)
def test_simulate_and_compare_answer_every_input_many(argv, capsys):
    _run(argv, capsys, _flags(argv))


# --- TOML parameter files ----------------------------------------------------------------------

_PARAM_KEYS = ["qeq", "w", "gd", "ps", "rtt", "timer", "bc", "rate", "preset", "bogus", "qcn",
               "ranges", "line_rate", "frame_size", "n_flows"]  # fmt: skip
_toml_scalar = st.one_of(
    _value.map(lambda v: '"' + v.replace("\\", "\\\\").replace('"', '\\"')
               .replace("\n", "\\n").replace("\x00", "") + '"'),
    _number.filter(lambda s: s not in ("nan", "inf", "-inf") and "e" not in s.lower()),
    st.sampled_from(["nan", "inf", "-inf", "true", "[]", "[1, 2]", "{}", "1979-05-27", "{a = 1}"]),
)  # fmt: skip


def _toml_doc(lines, table):
    body = "\n".join(f"{k} = {v}" for k, v in lines)
    return (f"[{table}]\n" if table else "") + body + "\n"


_param_doc = st.builds(_toml_doc, st.lists(st.tuples(st.sampled_from(_PARAM_KEYS), _toml_scalar),
                                           max_size=4, unique_by=lambda kv: kv[0]),
                       st.sampled_from(["", "qcn", "ranges", "other"]))  # fmt: skip
_raw_bytes = st.one_of(
    _param_doc.map(lambda s: s.encode()),
    st.binary(max_size=40),
    _param_doc.map(lambda s: s.encode("utf-16")),
    _param_doc.map(lambda s: b"\xff\xfe" + s.encode()),
)


def _check_param_file(data: bytes, tmp_path: Path, capsys) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(data)
    argv = ["margins", "--params", str(path), "--json"]
    _run(argv, capsys, {"p.toml", "params"} | set(_PARAM_KEYS))


@FAST
@given(data=_raw_bytes)
def test_parameter_files_answer_every_input(data, tmp_path_factory, capsys):
    _check_param_file(data, tmp_path_factory.mktemp("p"), capsys)


@pytest.mark.slow
@MANY
@given(data=_raw_bytes)
def test_parameter_files_answer_every_input_many(data, tmp_path_factory, capsys):
    _check_param_file(data, tmp_path_factory.mktemp("p"), capsys)


@FAST
@given(data=_raw_bytes)
def test_parameter_loader_api_raises_value_error_naming_the_file(data, tmp_path_factory):
    from qcnmodel.params import load_params

    path = tmp_path_factory.mktemp("p") / "api.toml"
    path.write_bytes(data)
    try:
        load_params(path, extra_tables=("ranges",))
    except ValueError as exc:
        assert "api.toml" in str(exc), str(exc)


# --- TOML topologies ---------------------------------------------------------------------------

_NODES = ["h1", "h2", "h3", "s1", "s2", "zz", ""]
_quoted = _value.map(lambda v: '"' + v.replace("\\", "").replace('"', "").replace("\n", "")
                     .replace("\x00", "") + '"')  # fmt: skip
_time_or_junk = st.one_of(st.sampled_from(['"1us"', '"0s"', '"10ms"', '"1e12s"', '"-1us"',
                                           '"nan s"', "5", '"inf s"']), _quoted)  # fmt: skip
_rate_or_junk = st.one_of(st.sampled_from(['"10Gbps"', '"1Gbps"', '"0bps"', '"1e30bps"',
                                           '"1e20bps"', '"-1Gbps"', "10"]), _quoted)  # fmt: skip


@st.composite
def _topology_doc(draw):
    lines = [
        'nodes = ["h1", "h2", "h3"]',
        f'switches = [{{ name = "s1", latency = {draw(_time_or_junk)} }}]',
    ]
    for a in ("h1", "h2", "h3"):
        b = draw(st.sampled_from(["s1"] * 4 + _NODES))
        lines.append(f'[[links]]\na = "{a}"\nb = "{b}"')
        if draw(st.booleans()):
            lines.append(f"rate = {draw(_rate_or_junk)}")
        if draw(st.booleans()):
            lines.append(f"delay = {draw(_time_or_junk)}")
    for _ in range(draw(st.integers(0, 2))):
        src, dst = draw(st.sampled_from(_NODES)), draw(st.sampled_from(_NODES))
        lines.append(f'[[flows]]\nsource = "{src}"\ndest = "{dst}"\nrate = {draw(_rate_or_junk)}')
        if draw(st.booleans()):
            lines.append(f"start = {draw(_time_or_junk)}")
    if draw(st.booleans()):
        node = draw(st.sampled_from(_NODES))
        lines.append(f'[[hotspots]]\nnode = "{node}"\nrate = {draw(_rate_or_junk)}\n'
                     f"start = {draw(_time_or_junk)}\nstop = {draw(_time_or_junk)}")  # fmt: skip
    if draw(st.booleans()):
        key = draw(st.sampled_from(["rtt", "xoff", "xon", "bogus", "headroom_factor"]))
        lines.append(f"[pause]\n{key} = {draw(st.one_of(_time_or_junk, _toml_scalar))}")
    if draw(st.booleans()):
        key = draw(st.sampled_from(["frame_size", "duration", "preset", "bogus"]))
        lines.insert(0, f"{key} = {draw(st.one_of(_quoted, _toml_scalar))}")
    return "\n".join(lines) + "\n"


_topo_bytes = st.one_of(
    _topology_doc().map(lambda s: s.encode()),
    _topology_doc().map(lambda s: s.encode("utf-16")),
    st.binary(max_size=40),
)


def _check_topology(data: bytes, tmp_path: Path) -> None:
    from qcnmodel.sim.topology import read_topology

    path = tmp_path / "net.toml"
    path.write_bytes(data)
    with _bounded(_BOUND_S):
        try:
            read_topology(path)
        except ValueError as exc:
            assert "net.toml" in str(exc), str(exc)


@FAST
@given(data=_topo_bytes)
def test_topology_loader_answers_every_input(data, tmp_path_factory):
    _check_topology(data, tmp_path_factory.mktemp("t"))


@pytest.mark.slow
@MANY
@given(data=_topo_bytes)
def test_topology_loader_answers_every_input_many(data, tmp_path_factory):
    _check_topology(data, tmp_path_factory.mktemp("t"))
