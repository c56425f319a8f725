"""Bad inputs to the parameter API raise ValueError naming the field (they raised
AttributeError, TypeError, OverflowError or FileNotFoundError before a hardening pass)."""

from __future__ import annotations

import pytest

from qcnmodel.params import QCNParams, load_params


@pytest.mark.parametrize("name", [5, None, 1.5, ["802.1qau"]])
def test_preset_of_a_non_string_names_the_field(name):
    with pytest.raises(ValueError, match=r"^preset: expected a preset name .*802\.1qau"):
        QCNParams.preset(name)


@pytest.mark.parametrize("data", [None, [1], "w=2", {1: 2}])
def test_from_dict_of_a_non_mapping_is_a_value_error(data):
    with pytest.raises(ValueError, match=r"^QCNParams: expected a dict"):
        QCNParams.from_dict(data)


def test_load_params_of_a_missing_file_or_folder_names_the_path(tmp_path):
    with pytest.raises(ValueError, match=r"nope\.toml: cannot read the parameter file"):
        load_params(tmp_path / "nope.toml")
    with pytest.raises(ValueError, match=r"a directory, not a regular file"):
        load_params(tmp_path)
    with pytest.raises(ValueError, match=r"^params: expected a path"):
        load_params(None)


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"frame_size": 10**400}, "frame_size: value"),
        ({"timer": "1e-400 s"}, "timer: value '1e-400 s' is too small"),
        ({"line_rate": "1e300 Tbps"}, "line_rate: value '1e300 Tbps' is too large"),
        ({"gd": "2^-99999"}, "gd: value '2^-99999' is too small"),
    ],
)
def test_field_values_beyond_a_float_name_the_field(changes, needle):
    with pytest.raises(ValueError) as info:
        QCNParams(**changes)
    assert str(info.value).startswith(needle), str(info.value)


@pytest.mark.parametrize("value", [[1.0, 2.0], 1, None])
def test_a_choice_field_of_another_type_names_the_field(value):
    import numpy as np

    value = np.array(value) if isinstance(value, list) else value
    # an array raised "The truth value of an array ... is ambiguous", naming no field
    with pytest.raises(ValueError, match=r"^quantiser: unknown value"):
        QCNParams(quantiser=value)


def test_an_oversized_or_endless_parameter_file_is_refused(tmp_path):
    # /dev/zero was read without end (MemoryError, or all the memory without a ulimit)
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * ((1 << 20) + 1))
    with pytest.raises(ValueError, match=r"big\.toml: larger than 1048576 bytes"):
        load_params(big)
    if __import__("os").path.exists("/dev/zero"):
        with pytest.raises(ValueError, match=r"/dev/zero: a device, not a regular file"):
            load_params("/dev/zero")


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no named pipes")
def test_a_named_pipe_is_refused_at_once(tmp_path):
    """A named pipe with no writer is refused without waiting for one (opening it for
    reading blocked until a writer came). Should the load block, the test plays the writer
    after 10 s, so that it fails instead of hanging."""
    import os
    import threading

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    outcome = {}

    def load():
        try:
            load_params(fifo)
        except Exception as exc:  # noqa: BLE001 - the outcome is checked below
            outcome["error"] = exc

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    blocked = worker.is_alive()
    if blocked:  # release the reader: open the pipe for writing and close it at once
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
    assert not blocked, "load_params waited for a writer on a named pipe"
    assert isinstance(outcome.get("error"), ValueError)
    assert "a named pipe (FIFO), not a regular file" in str(outcome["error"])


def test_a_field_at_the_top_level_and_in_qcn_is_refused(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text("w = 2\n[qcn]\nw = 3\n")  # one of them won silently
    with pytest.raises(ValueError, match=r"p\.toml, line 1: w: given both at the top level"):
        load_params(f)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[qcn]\n[qcn.sub]\nx = 1\n", "line 2"),  # was "line None"
        ("w = 2\n[foo]\nx = 1\n", "line 2"),  # an unknown table: was "line ?"
    ],
)
def test_errors_point_at_the_table_line(tmp_path, text, where):
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(ValueError) as info:
        load_params(f)
    assert f"p.toml, {where}:" in str(info.value), str(info.value)
