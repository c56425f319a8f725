"""`qcnmodel margins` text: the fixed point's values carry their units; the JSON stays SI
numbers without units."""

import json
import re

from qcnmodel.cli import main
from qcnmodel.cli.margins import _tail_rows


def _fixed_point_rows(text: str) -> dict:
    rows = re.findall(r"^fixed point (\S+)\s+(.+)$", text, flags=re.M)
    return {k: v.strip() for k, v in rows}


def test_fopdt_fixed_point_rows_carry_units(capsys):
    assert main(["margins", "--model", "fopdt", "--rtt", "500us", "--flows", "10"]) == 0
    rows = _fixed_point_rows(capsys.readouterr().out)
    # 802.1Qau defaults: Qeq 26 KB, 10 flows at C/N of a 10 Gb/s port, one sample per
    # 150 KB / 10 (Ps 10 %) at the offered 10 Gb/s: 1500 B x 8 / (0.1 x 1e10) = 120 us
    assert rows["q"] == "26000 B"
    assert rows["rate"] == "1e+09 bit/s" and rows["target_rate"] == "1e+09 bit/s"
    assert rows["fb"] == "0 B" and rows["qfb"] == "0 B"
    assert rows["sampling_interval"] == "0.00012 s"


def test_every_dimensioned_entry_of_the_qcn_fixed_point_has_a_unit():
    fixed = {"q": 23336.9, "rate_current": 1e9, "rate_target": 1.00773e9, "fb": 1163.11,
             "cnm_probability": 0.00407, "cut": 0.0098, "cnm_rate": 339.208,
             "birth_rate_current": 9.9e8, "birth_target": 1.005e9, "age": 2.9e-3,
             "u": 0.5, "ps": 0.01, "residual": 1e-16}  # fmt: skip
    rows = dict(_tail_rows({"validity": [], "fixed_point": fixed}))
    assert rows["fixed point q"] == "23336.9 B" and rows["fixed point fb"] == "1163.11 B"
    assert rows["fixed point rate_current"] == "1e+09 bit/s"
    assert rows["fixed point birth_target"] == "1.005e+09 bit/s"
    assert rows["fixed point cnm_rate"] == "339.208 1/s"
    assert rows["fixed point age"] == "0.0029 s"
    # probabilities, fractions and the relative residual are dimensionless
    assert rows["fixed point cnm_probability"] == "0.00407"
    assert rows["fixed point residual"] == "1e-16"


def test_json_fixed_point_stays_si_numbers(capsys):
    main(["margins", "--model", "fopdt", "--rtt", "500us", "--flows", "10", "--json"])
    fp = json.loads(capsys.readouterr().out)["fixed_point"]
    assert fp["q"] == 26000.0 and fp["sampling_interval"] == 0.00012
