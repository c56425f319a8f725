"""``qcnmodel compare`` and ``qcnmodel simulate --protocol`` (issue 5, items 1 and 3)."""

from __future__ import annotations

import json

import pytest

from qcnmodel.cli import main
from qcnmodel.sim import simulate
from qcnmodel.sim.protocols import PROTOCOLS
from qcnmodel.studies.compare import compare, summary_markdown

SHORT = {"hotspot_start": "5ms", "hotspot_stop": "25ms", "n_nodes": 4}


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_every_protocol_runs_on_og_hotspot(name):
    r = simulate("og-hotspot", protocol=name, duration="40ms", seed=1, overrides=SHORT)
    c = r.counters
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]
    assert c["frames_in_flight"] == c["frames_in_network"]
    ds = r.dataset
    assert (ds["queue"].values >= 0).all()
    cr = ds["cr"].values
    assert (cr <= r.params.line_rate + 1e-6).all() and (cr > 0).all()
    assert ("alpha" in ds) == (name == "dcqcn")
    assert r.summary()["protocol"] == name
    if name != "none":
        assert c["cnms"] > 0


def test_compare_cli_writes_figures_and_table(tmp_path, capsys):
    out = tmp_path / "cmp"
    rc = main(["compare", "--scenario", "og-hotspot", "--protocols", "qcn,ecm,dcqcn",
               "--duration", "30ms", "--seed", "3", "--set", "n_nodes=4",
               "--set", "hotspot_start=5ms", "--set", "hotspot_stop=20ms", "--set", "efr=on",
               "--set", "kmin=10KB", "--out", str(out), "--json"])  # fmt: skip
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["protocol"] for r in d["rows"]] == ["qcn", "ecm", "dcqcn"]
    for suffix in ("queue.png", "throughput.png", "rates.png", "summary.md"):
        p = out / f"compare_og-hotspot_{suffix}"
        assert p.exists() and p.stat().st_size > 0
    md = (out / "compare_og-hotspot_summary.md").read_text()
    assert "| qcn |" in md and "| dcqcn |" in md and "Jain fairness" in md
    first = (out / "compare_og-hotspot_rates.png").read_bytes()
    main(["compare", "--scenario", "og-hotspot", "--protocols", "qcn,ecm,dcqcn",
          "--duration", "30ms", "--seed", "3", "--set", "n_nodes=4", "--set", "hotspot_start=5ms",
          "--set", "hotspot_stop=20ms", "--set", "efr=on", "--set", "kmin=10KB",
          "--out", str(out), "--json"])  # fmt: skip
    assert (out / "compare_og-hotspot_rates.png").read_bytes() == first  # deterministic


def test_same_seed_same_traffic_across_protocols():
    cmp = compare("og-hotspot", "none,qcn", duration="10ms", seed=4, overrides=SHORT)
    a, b = (cmp.results[p].counters for p in ("none", "qcn"))
    assert a["frames_offered"] == b["frames_offered"]
    md = summary_markdown(cmp)
    assert "| none |" in md and "| qcn |" in md


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["compare", "--scenario", "og-hotspot", "--protocols", "qcn,ecmx"], "ecmx"),
        (["compare", "--scenario", "og-hotspot", "--protocols", "qcn,ecm", "--set", "bogus=1"],
         "bogus"),
        (["simulate", "--scenario", "og-hotspot", "--protocol", "dcqcnx"], "dcqcnx"),
        (["simulate", "--scenario", "og-hotspot", "--protocol", "ecm", "--set", "pos_gain=1"],
         "pos_gain"),
        (["simulate", "--scenario", "og-hotspot", "--protocol", "qcn-p", "--set",
          "interval=-1ms"], "interval"),
    ],
)  # fmt: skip
def test_bad_protocol_or_option_exit_2(argv, needle, capsys, tmp_path):
    assert main([*argv, "--duration", "1ms"] + (["--out", str(tmp_path)] if argv[0] ==
                "compare" else [])) == 2  # fmt: skip
    assert needle in capsys.readouterr().err


def test_simulate_cli_protocol_option(capsys):
    rc = main(["simulate", "--scenario", "og-hotspot", "--protocol", "qcn-sonar", "--duration",
               "20ms", "--set", "n_nodes=4", "--set", "hotspot_start=5ms", "--set",
               "wp_timer=2ms", "--set", "efr=on", "--json", "--no-progress"])  # fmt: skip
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["protocol"] == "qcn-sonar" and d["cnms"] > 0


def test_a_setting_no_compared_protocol_reads_is_refused(tmp_path, capsys):
    # `simulate --protocol none --set w=3` refuses w (it would change nothing); compare must
    # too when no protocol of the list reads it, and still pass it to those that do
    base = ["compare", "--scenario", "og-hotspot", "--duration", "1ms", "--out",
            str(tmp_path / "c")]  # fmt: skip
    assert main([*base, "--protocols", "none", "--set", "qeq=10KB"]) == 2
    assert "qeq: a QCN parameter, which protocol 'none' does not read" in capsys.readouterr().err
    assert main([*base, "--protocols", "none,dcqcn", "--set", "w=3"]) == 2
    assert "w: none of the protocols none, dcqcn reads it" in capsys.readouterr().err
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())
