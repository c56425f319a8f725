"""simulate() API, scenarios, metrics, exports and the CLI (issue items 5-7, 9)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr
from simnets import star

from qcnmodel.cli import main
from qcnmodel.sim import SCENARIOS, list_scenarios, metrics, simulate
from qcnmodel.sim.network import compile_network

KEYS = ("scenario", "protocol", "duration_s", "seed", "events", "frames_sent", "frames_delivered",
        "frames_dropped", "frames_in_flight", "wall_s", "events_per_s", "hot_queue_mean_bytes",
        "hot_queue_max_bytes", "flow_throughput_bps", "jain_fairness", "recovery_time_s",
        "pause_frames", "cnms")  # fmt: skip


def test_scenario_names_from_catalogue():
    assert set(list_scenarios()) == {
        "og-hotspot", "stanford-baseline-1", "teak-og-hotspot", "teak-scenario-3", "ig-hotspot",
        "ig-hotspot-100", "parking-lot", "netfpga-1g",
        "bursty-hotspot", "dual-hotspot-light-heavy", "dual-hotspot-heavy-light",
        "stanford-baseline-2", "stanford-baseline-3", "stanford-baseline-6", "twenty-stage",
        "twenty-stage-teak",
    }  # fmt: skip


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_runs_and_conserves_frames(name):
    r = simulate(name, duration="3ms", overrides={"hotspot_start": "1ms", "hotspot_stop": "2ms"})
    s = r.summary()
    assert all(k in s for k in KEYS)
    c = r.counters
    assert c["frames_sent"] == c["frames_delivered"] + c["frames_dropped"] + c["frames_in_flight"]
    assert c["frames_in_flight"] == c["frames_in_network"]
    assert c["frames_delivered"] > 0
    assert set(s["flow_throughput_bps"]) == set(compile_network(SCENARIOS[name].build()).flow_names)
    json.dumps(s)


def test_og_hotspot_qcn_vs_none():
    kw = dict(duration="20ms", overrides={"n_nodes": 5, "hotspot_start": "2ms",
                                          "hotspot_stop": "12ms"}, seed=1)  # fmt: skip
    q = simulate("og-hotspot", protocol="qcn", **kw)
    n = simulate("og-hotspot", protocol="none", **kw)
    assert q.counters["cnms"] > 0 and n.counters["cnms"] == 0
    assert n.counters["frames_dropped"] > q.counters["frames_dropped"]
    ds = q.dataset
    assert ds["hot_queue"].dims == ("time",) and ds.sizes["time"] == 20
    assert float(ds["cr"].min()) >= q.params.min_rate
    assert 0 < q.summary()["jain_fairness"] <= 1


def test_pause_is_lossless_and_sends_pause_frames():
    over = {"n_nodes": 4, "hotspot_start": "1ms", "hotspot_stop": "8ms", "rtt": "5us"}
    off = simulate("og-hotspot", protocol="none", duration="10ms", overrides=over)
    on = simulate("og-hotspot", protocol="none", duration="10ms",
                  overrides={**over, "pause": "true", "switch_memory": "300KB"})  # fmt: skip
    assert off.counters["frames_dropped"] > 0
    assert on.counters["frames_dropped"] == 0 and on.counters["pause_frames"] > 0


def test_oracle_engine_matches_kernel():
    spec = star(n=3)
    a = simulate(spec, duration="2ms", bin_width="100us", engine="kernel", seed=5)
    b = simulate(spec, duration="2ms", bin_width="100us", engine="oracle", seed=5)
    assert a.counters == b.counters
    xr.testing.assert_identical(a.dataset.drop_attrs(), b.dataset.drop_attrs())


def test_bad_parameters_name_the_field():
    with pytest.raises(ValueError, match="bogus.*allowed|bogus: unknown"):
        simulate("og-hotspot", duration="1ms", overrides={"bogus": 1})
    with pytest.raises(ValueError, match="load"):
        simulate("og-hotspot", duration="1ms", overrides={"load": 2})
    with pytest.raises(ValueError, match="qeq"):
        simulate("og-hotspot", duration="1ms", overrides={"qeq": -5})
    with pytest.raises(ValueError, match="scenario.*og-hotspot"):
        simulate("og-hotspots", duration="1ms")
    with pytest.raises(ValueError, match="protocol.*'ecmx'.*did you mean 'ecm'"):
        simulate("og-hotspot", protocol="ecmx", duration="1ms")
    with pytest.raises(ValueError, match="pos_gain: unknown parameter.*dcqcn parameters: .*kmin"):
        simulate("og-hotspot", protocol="dcqcn", duration="1ms", overrides={"pos_gain": 1})
    with pytest.raises(ValueError, match="pause"):
        simulate("og-hotspot", duration="1ms", overrides={"pause": "on", "rtt": "500us"})


def test_exports(tmp_path):
    r = simulate("parking-lot", duration="4ms", bin_width="500us")
    r.to_netcdf(tmp_path / "r.nc")
    back = xr.open_dataset(tmp_path / "r.nc")
    assert json.loads(back.attrs["summary"])["scenario"] == "parking-lot"
    assert np.array_equal(back["queue"].values, r.dataset["queue"].values)
    back.close()
    r.to_csv(tmp_path / "r.csv")
    header = (tmp_path / "r.csv").read_text().splitlines()[0]
    assert header.startswith("time_s,") and "flow_throughput[n1->n9]" in header


def test_window_and_decimation():
    r = simulate("og-hotspot", duration="6ms", bin_width="500us", window_s=(0.001, 0.004),
                 decimation=2, overrides={"n_nodes": 3})  # fmt: skip
    t = r.dataset["time"].values
    # 7 bins end in [1, 4] ms: three pairs and the last bin on its own (it was dropped)
    assert len(t) == 4 and t[0] >= 0.001 and t[-1] == pytest.approx(0.004)


def test_metrics():
    assert metrics.jain_fairness([1, 1, 1]) == pytest.approx(1.0)
    assert metrics.jain_fairness([1, 0, 0, 0]) == pytest.approx(0.25)
    assert metrics.jain_fairness([]) is None
    t = np.arange(1, 101) * 1e-3
    thr = np.where(t > 0.0505, 9e9, 1e9)
    rt = metrics.recovery_time(t, thr, 1e-3, 0.030, 10e9, tol=0.1, hold_s=5e-3)
    assert rt == pytest.approx(0.020)  # first recovered bin starts at 50 ms
    assert metrics.recovery_time(t, thr, 1e-3, math.inf, 10e9) is None
    assert metrics.utilisation(1.25e9, 1.0, 10e9) == pytest.approx(1.0)


def test_cli_json_and_scenarios(capsys):
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == len(SCENARIOS) and out[0].startswith("og-hotspot")
    rc = main(["simulate", "--scenario", "netfpga-1g", "--duration", "20ms", "--seed", "2",
               "--set", "hotspot_start=5ms", "--set", "hotspot_stop=10ms", "--set",
               "n_sources=2", "--json"])  # fmt: skip
    assert rc == 0
    s = json.loads(capsys.readouterr().out)
    assert all(k in s for k in KEYS) and s["seed"] == 2 and s["scenario"] == "netfpga-1g"
    assert set(s["flow_throughput_bps"]) == {"s1->rx", "s2->rx"}
    assert main(["simulate", "--scenario", "og-hotspot", "--set", "nodes=3"]) == 2
    assert "nodes" in capsys.readouterr().err


def test_adapter_hot_mode_pauses_the_switch_port():
    over = {"n_nodes": 4, "hotspot_start": "1ms", "hotspot_stop": "8ms", "hot_mode": "adapter",
            "adapter_ob": "100KB"}  # fmt: skip
    r = simulate("og-hotspot", duration="10ms", overrides=over)
    assert r.counters["pause_frames"] > 0 and r.counters["cnms"] > 0
    assert r.summary()["hot_port"] == "sw->n1.ob"
    with pytest.raises(ValueError, match="hot_mode"):
        simulate("og-hotspot", duration="1ms", overrides={"hot_mode": "switch"})


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    r = simulate("og-hotspot", duration="4ms", overrides={"n_nodes": 3, "hotspot_start": "1ms"})
    fig = r.plot()
    fig.savefig(tmp_path / "og.png")
    assert (tmp_path / "og.png").stat().st_size > 1000


def test_netfpga_recovery_time_matches_the_deck():
    """S13: 1 source, RTT 100 us: the deck reports 179 ms (hardware) and 200 ms (OMNeT++)."""
    r = simulate("netfpga-1g", seed=0)
    s = r.summary()
    assert 0.12 <= s["recovery_time_s"] <= 0.30
    assert 0.5 * r.params.qeq <= s["hot_queue_mean_bytes"] <= 2.0 * r.params.qeq
    assert s["frames_dropped"] == 0 and s["hot_port_utilisation"] > 0.95


@pytest.mark.slow
def test_og_hotspot_qcn_controls_the_queue():
    q = simulate("og-hotspot", duration="0.6s", overrides={"hotspot_stop": "0.4s"})
    n = simulate("og-hotspot", protocol="none", duration="0.6s",
                 overrides={"hotspot_stop": "0.4s"})  # fmt: skip
    sq, sn = q.summary(), n.summary()
    assert sq["hot_queue_mean_bytes"] < 0.2 * sn["hot_queue_mean_bytes"]
    assert sq["frames_dropped"] < 0.01 * sn["frames_dropped"]
    assert sq["jain_fairness"] > 0.8 and sq["recovery_time_s"] is not None


def test_netcdf_summary_uses_the_shared_json_cleaner(tmp_path):
    import json
    import math

    import xarray as xr

    r = simulate("og-hotspot", duration="3ms", overrides={"n_nodes": 3, "hotspot_start": "1ms"})
    r.metrics["probe_inf"] = math.inf
    r.metrics["probe_nan"] = math.nan
    r.to_netcdf(tmp_path / "r.nc")
    with xr.open_dataset(tmp_path / "r.nc") as ds:
        s = json.loads(ds.attrs["summary"])
    assert s["probe_inf"] == "inf" and s["probe_nan"] is None  # qcnmodel._io.to_jsonable
    assert s["events"] == r.counters["events"]


@pytest.mark.parametrize("field", ["trace", "progress"])
def test_flags_must_be_booleans(field):
    """A string such as "no" is truthy: refused, naming the flag, rather than taken as True."""
    with pytest.raises(ValueError, match=f"^{field}: expected True or False"):
        simulate("og-hotspot", duration="1ms", overrides={"n_nodes": 2}, **{field: "no"})


def test_a_result_is_frozen_and_a_traceless_one_says_so(tmp_path):
    import dataclasses

    r = simulate("og-hotspot", duration="1ms", trace=False, engine="oracle")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.seed = 99
    for call in (lambda: r.to_netcdf(tmp_path / "r.nc"), lambda: r.to_csv(tmp_path / "r.csv"),
                 r.plot):  # fmt: skip
        with pytest.raises(ValueError, match="kept no traces.*trace=True"):
            call()
    assert not list(tmp_path.iterdir())  # nothing half-written
    t = simulate("og-hotspot", duration="1ms", engine="oracle")
    t.to_netcdf(tmp_path / "t.nc")
    t.to_csv(tmp_path / "t.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.nc"]  # no temporaries


def test_a_given_parameter_sets_line_rate_and_frame_size_replaced_by_the_network_are_said(capsys):
    from qcnmodel.params import QCNParams

    p = QCNParams(line_rate=37e9, frame_size=9001)  # values no other test gives (said once)
    r = simulate("og-hotspot", duration="1ms", params=p, trace=False, engine="oracle")
    err = capsys.readouterr().err
    assert "line_rate = 3.7e+10 bit/s of the given parameter set is not the network's" in err
    assert "frame_size = 9001 B of the given parameter set is not the network's 1500 B" in err
    assert r.params.line_rate == 10e9 and r.params.frame_size == 1500  # the network's
    simulate("og-hotspot", duration="1ms", params=p, trace=False, engine="oracle")
    assert "given parameter set" not in capsys.readouterr().err  # once per process


def test_a_preset_given_by_name_is_a_given_parameter_set(capsys, monkeypatch):
    # --preset netfpga-1g (1 Gb/s) on a 10 Gb/s network ran at 10 Gb/s without a word, while
    # the same set from a file or an object was said
    from qcnmodel.sim import api

    monkeypatch.setattr(api, "_SAID", set())
    r = simulate("og-hotspot", duration="1ms", params="netfpga-1g", trace=False, engine="oracle")
    assert "line_rate = 1e+09 bit/s of the given parameter set" in capsys.readouterr().err
    assert r.params.line_rate == 10e9
    monkeypatch.setattr(api, "_SAID", set())
    simulate("og-hotspot", duration="1ms", trace=False, engine="oracle")  # the scenario's own
    assert "given parameter set" not in capsys.readouterr().err


def test_decimation_keeps_the_last_value_of_each_merged_bin():
    # end-of-bin values (queue, CR ...) of merged bins are those of the group's last bin;
    # they came out NaN in every row (xarray aligned them with the means' time labels)
    over = {"hotspot_start": 0.0}
    full = simulate("og-hotspot", duration="10ms", overrides=over, engine="oracle").dataset
    dec = simulate("og-hotspot", duration="10ms", overrides=over, engine="oracle",
                   decimation=5).dataset  # fmt: skip
    for name in ("hot_queue", "queue", "cr", "tr", "rl_active"):
        assert not np.isnan(dec[name].values).any(), name
        np.testing.assert_array_equal(dec[name].values, full[name].values[..., 4::5], name)
    np.testing.assert_allclose(dec["time"].values, full["time"].values[4::5])
    assert dec["hot_queue_max"].values[0] == full["hot_queue_max"].values[:5].max()


def test_the_repr_of_a_result_leaves_out_its_per_flow_tables():
    # og-hotspot's 90 flows printed ~12 KB of throughputs and fair shares
    r = simulate("og-hotspot", duration="1ms", trace=False, engine="oracle")
    text = repr(r)
    assert len(text) < 2000 and "scenario='og-hotspot'" in text and "n1->n2" not in text
