# ---
# jupyter:
#   jupytext:
#     formats: ipynb,src//py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 The seed decks' scenarios, reproduced
#
# The packet-level simulator (`qcnmodel.sim.simulate`) runs the named scenarios that the
# seed decks plot (`qcnmodel scenarios` lists them), and this notebook draws the
# quantities the decks show: hot queue, throughput at the congestion point, per-flow
# throughput and rate-limiter state.
#
# | scenario | deck | what the deck shows |
# |---|---|---|
# | `og-hotspot` (S1) | 000 IBM | hot queue, aggregate / hot-port throughput, drops, per-flow throughput |
# | `stanford-baseline-1` (S2) | 002 Stanford | CP queue and throughput at 2.0 / 1.0 / 0.5 Gb/s service |
# | `netfpga-1g` (S13) | 001 NetFPGA | recovery time (179 ms hardware, 200 ms simulation, 1 source, RTT 100 us); RP stages, TR, CR |
# | `ig-hotspot` (S9) | 000 IBM | culprits vs victim throughput; fair 2.5 / 5 Gb/s |
# | `parking-lot` (S12) | 000 IBM | per-flow throughput (max-min 2.0, proportional 1.67 / 3.33 Gb/s), queues per port |
#
# **Fast mode** (default) shortens every run and moves the hotspot earlier so that the whole
# notebook runs in seconds; `QCNMODEL_FULL=1` uses each scenario's own duration and hotspot
# timing and adds the decks' RTT and source-count variants. The first simulation compiles the
# kernel unless the numba cache is warm.

# %% tags=["parameters"]
import os

FULL = os.environ.get("QCNMODEL_FULL") == "1"  # fast mode (CI) unless QCNMODEL_FULL=1

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from qcnmodel.sim import SCENARIOS, simulate

SEED = 0


def run(name, fast_duration=None, fast_hotspot=None, **overrides):
    """Simulate scenario ``name`` (fast mode: shorter run and earlier hotspot)."""
    kw = {}
    if not FULL and fast_duration is not None:
        kw["duration"] = fast_duration
        if fast_hotspot is not None:
            overrides = {"hotspot_start": fast_hotspot[0], "hotspot_stop": fast_hotspot[1]} | overrides
    t0 = time.perf_counter()
    res = simulate(name, seed=SEED, overrides=overrides, **kw)
    shown = [f"{k}={v}" for k, v in overrides.items() if not k.startswith("hotspot")]
    label = name + (f" ({', '.join(shown)})" if shown else "")
    print(f"{label}: {res.duration:g} s simulated, {time.perf_counter() - t0:.1f} s wall, "
          f"{res.counters['events']:.3g} events")
    return label, res


def smooth(x, k):
    """Moving average over k bins (same length)."""
    return np.convolve(x, np.ones(k) / k, mode="same") if k > 1 else x


def hotspot_span(ax, res):
    """Shade the scenario's hotspot interval (measure window)."""
    a, b = res.metrics["measure_window_s"]
    ax.axvspan(a * 1e3, b * 1e3, color="0.92", zorder=0)


summary = []


def record(label, res, **extra):
    m = res.metrics
    summary.append(dict(label=label, duration=res.duration,
                        qmean=m.get("hot_queue_mean_bytes"), qmax=m.get("hot_queue_max_bytes"),
                        util=m.get("hot_port_utilisation"), jain=m.get("jain_fairness"),
                        drops=res.counters["frames_dropped"], cnms=res.counters["cnms"],
                        pause=res.counters["pause_frames"], rec=m.get("recovery_time_s"), **extra))


for name, sc in SCENARIOS.items():
    if name in ("og-hotspot", "stanford-baseline-1", "netfpga-1g", "ig-hotspot", "parking-lot"):
        print(f"{name}: {sc.summary} (preset {sc.preset}, {sc.duration:g} s)")

# %% [markdown]
# ## S1 `og-hotspot` (seed 000): output-generated hotspot
# 10 nodes send uniformly to all others at 85 % load; node 1 is drained at 10 % (1 Gb/s)
# during the hotspot (grey). Figure, like the deck: hot queue, hot-port and aggregate
# delivered throughput, frame drops per ms, and the throughput of the nine flows into the
# hot node (10 ms moving average). In FULL mode also at a link RTT of 500 us.

# %%
og_runs = [run("og-hotspot", 0.5, (0.05, 0.35))]
if FULL:
    og_runs.append(run("og-hotspot", rtt="500us"))
for label, res in og_runs:
    record(label, res)
    ds = res.dataset
    t = ds["time"].values * 1e3
    fig, axs = plt.subplots(4, 1, figsize=(10, 9), sharex=True)
    axs[0].plot(t, ds["hot_queue_mean"] / 1e3, lw=0.8, label="mean per bin")
    axs[0].plot(t, ds["hot_queue_max"] / 1e3, lw=0.5, alpha=0.6, label="max per bin")
    axs[0].set_ylabel("hot queue (KB)")
    axs[0].legend(fontsize=8)
    axs[1].plot(t, ds["hot_port_throughput"] / 1e9, lw=0.8, label="hot port")
    axs[1].plot(t, ds["delivered_throughput"] / 1e9, lw=0.8, label="aggregate delivered")
    axs[1].set_ylabel("throughput (Gb/s)")
    axs[1].legend(fontsize=8)
    axs[2].plot(t, ds["drops"], lw=0.8)
    axs[2].set_ylabel("drops / bin")
    for fl in ds["flow"].values:
        axs[3].plot(t, smooth(ds["flow_throughput"].sel(flow=fl).values, 10) / 1e9, lw=0.7)
    axs[3].set_ylabel("flows into n1 (Gb/s)")
    axs[3].set_xlabel("time (ms)")
    for ax in axs:
        hotspot_span(ax, res)
        ax.grid(True, alpha=0.3)
    axs[0].set_title(label, fontsize=10)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ### Protocols compared, as in the deck
# Seed 000 plots ECM, QCN and QCN-SONAR side by side (the simulator also runs `none`, no
# congestion control, as the baseline). Figure: one column per protocol; hot queue, aggregate
# delivered throughput and the throughput of the flows into the hot node (10 ms moving
# average). The table below checks the deck's statements on these runs (one seed, so a
# statement that holds by a small margin is not settled by it).

# %%
PROTOS = ["qcn", "ecm", "qcn-sonar", "none"]
og_p = {}
for proto in PROTOS:
    kw = {} if FULL else {"duration": 0.5}
    ov = {} if FULL else {"hotspot_start": 0.05, "hotspot_stop": 0.35}
    t0 = time.perf_counter()
    og_p[proto] = simulate("og-hotspot", protocol=proto, seed=SEED, overrides=ov, **kw)
    print(f"og-hotspot, {proto}: {time.perf_counter() - t0:.1f} s wall")
fig, axs = plt.subplots(3, len(PROTOS), figsize=(4 * len(PROTOS), 7.5), sharex=True, sharey="row")
for j, proto in enumerate(PROTOS):
    res = og_p[proto]
    ds = res.dataset
    t = ds["time"].values * 1e3
    axs[0, j].plot(t, ds["hot_queue_mean"] / 1e3, lw=0.8)
    axs[0, j].set_yscale("symlog", linthresh=100)
    axs[0, j].set_title(proto, fontsize=10)
    axs[1, j].plot(t, ds["delivered_throughput"] / 1e9, lw=0.8)
    for fl in ds["flow"].values:
        axs[2, j].plot(t, smooth(ds["flow_throughput"].sel(flow=fl).values, 10) / 1e9, lw=0.6)
    axs[2, j].set_xlabel("time (ms)")
    for ax in axs[:, j]:
        hotspot_span(ax, res)
        ax.grid(True, alpha=0.3)
axs[0, 0].set_ylabel("hot queue (KB)")
axs[1, 0].set_ylabel("aggregate (Gb/s)")
axs[2, 0].set_ylabel("flows into n1 (Gb/s)")
fig.tight_layout()
plt.show()


def late_std(res):
    """Standard deviation of the hot queue over the second half of the hotspot (bytes)."""
    a, b = res.metrics["measure_window_s"]
    ds = res.dataset
    sel = (ds["time"].values > (a + b) / 2) & (ds["time"].values <= b)
    return float(np.std(ds["hot_queue_mean"].values[sel]))


M = {p_: og_p[p_].metrics for p_ in PROTOS}
D = {p_: og_p[p_].counters["frames_dropped"] for p_ in PROTOS}
S = {p_: late_std(og_p[p_]) for p_ in PROTOS}
R = {p_: M[p_]["recovery_time_s"] for p_ in PROTOS}


def fmt_ms(v):
    return "-" if v is None else f"{v * 1e3:.0f} ms"


def aggregate(res):
    """Mean delivered throughput of the whole network over the hotspot (bit/s)."""
    a, b = res.metrics["measure_window_s"]
    ds = res.dataset
    sel = (ds["time"].values > a) & (ds["time"].values <= b)
    return float(np.mean(ds["delivered_throughput"].values[sel]))


A = {p_: aggregate(og_p[p_]) for p_ in PROTOS}
claims = [
    ("QCN and SONAR oscillate much more than ECM (hot-queue std, 2nd half of the hotspot)",
     min(S["qcn"], S["qcn-sonar"]) > S["ecm"],
     f"std QCN {S['qcn'] / 1e3:.1f}, SONAR {S['qcn-sonar'] / 1e3:.1f}, ECM {S['ecm'] / 1e3:.1f} KB"),
    ("ECM's steady-state queue is too high",
     M["ecm"]["hot_queue_mean_bytes"] > max(M["qcn"]["hot_queue_mean_bytes"], M["qcn-sonar"]["hot_queue_mean_bytes"]),
     ", ".join(f"{p_} {M[p_]['hot_queue_mean_bytes'] / 1e3:.0f} KB" for p_ in PROTOS[:3])),
    ("ECM under-utilises because of drops (aggregate delivered throughput over the hotspot)",
     D["ecm"] > max(D["qcn"], D["qcn-sonar"]) and A["ecm"] < min(A["qcn"], A["qcn-sonar"]),
     ", ".join(f"{p_} {D[p_]} drops, {A[p_] / 1e9:.1f} Gb/s" for p_ in PROTOS[:3])),
    ("recovery time SONAR < ECM < QCN",
     None not in (R["qcn-sonar"], R["ecm"], R["qcn"]) and R["qcn-sonar"] < R["ecm"] < R["qcn"],
     ", ".join(f"{p_} {fmt_ms(R[p_])}" for p_ in PROTOS[:3])),
    ("QCN and SONAR fair, ECM's per-flow rates fluctuate (Jain index)",
     M["ecm"]["jain_fairness"] < min(M["qcn"]["jain_fairness"], M["qcn-sonar"]["jain_fairness"]),
     ", ".join(f"{p_} {M[p_]['jain_fairness']:.3f}" for p_ in PROTOS[:3])),
]
lines = ["| deck (seed 000) | reproduced here | numbers |", "|---|---|---|"]
lines += [f"| {c} | {'yes' if ok else 'no'} | {nums} |" for c, ok, nums in claims]
display(Markdown("\n".join(lines)))
for proto in PROTOS:
    record(f"og-hotspot, protocol={proto}", og_p[proto])

# %% [markdown]
# ## S2 `stanford-baseline-1` (seed 002): hot node at 2.0, 1.0 and 0.5 Gb/s
# Stanford baseline parameters (Qeq 33 KB). Figure, like the deck: queue size and throughput
# at the congestion point for the three service rates (1 ms bins).

# %%
sb_runs = [run("stanford-baseline-1", 0.4, (0.05, 0.3), service_rate=r)
           for r in ("2Gbps", "1Gbps", "0.5Gbps")]
fig, axs = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
for label, res in sb_runs:
    record(label, res)
    ds = res.dataset
    t = ds["time"].values * 1e3
    rate = label.split("service_rate=")[1].rstrip(")")
    axs[0].plot(t, ds["hot_queue_mean"] / 1e3, lw=0.8, label=rate)
    axs[1].plot(t, ds["hot_port_throughput"] / 1e9, lw=0.8, label=rate)
hotspot_span(axs[0], sb_runs[0][1])
hotspot_span(axs[1], sb_runs[0][1])
axs[0].axhline(sb_runs[0][1].params.qeq / 1e3, color="0.4", ls=":", lw=0.8, label="Qeq")
axs[0].set_ylabel("CP queue (KB)")
axs[1].set_ylabel("CP throughput (Gb/s)")
axs[1].set_xlabel("time (ms)")
for ax in axs:
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## S13 `netfpga-1g` (seed 001): 1 Gb/s testbed, recovery time
# One (and eight) sources at 1 Gb/s into a sink served at 0.2 Gb/s during the hotspot, RTT
# 100 us. The deck measures the recovery time after the hotspot: 179 ms on the hardware and
# 200 ms in its OMNeT++ simulation for one source at RTT 100 us. Figure: hot queue and
# hot-port throughput, and, like the deck's trace, the first RP's CR and TR with its
# byte-counter and timer stages. FULL mode adds RTT 500 and 1000 us.

# %%
nf_runs = [run("netfpga-1g", 1.0, (0.1, 0.5)), run("netfpga-1g", 1.0, (0.1, 0.5), n_sources=8)]
if FULL:
    nf_runs += [run("netfpga-1g", rtt=r, n_sources=n) for r in ("500us", "1ms") for n in (1, 8)]
DECK_RECOVERY = {"hardware": 0.179, "deck simulation": 0.200}
for label, res in nf_runs:
    record(label, res)
fig, axs = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
for label, res in nf_runs[:2]:
    ds = res.dataset
    t = ds["time"].values * 1e3
    axs[0].plot(t, ds["hot_queue_mean"] / 1e3, lw=0.8, label=label)
    axs[1].plot(t, smooth(ds["hot_port_throughput"].values, 5) / 1e9, lw=0.8, label=label)
ds = nf_runs[0][1].dataset
t = ds["time"].values * 1e3
f0 = ds["flow"].values[0]
axs[2].plot(t, ds["cr"].sel(flow=f0) / 1e6, lw=0.8, label="CR")
axs[2].plot(t, ds["tr"].sel(flow=f0) / 1e6, lw=0.8, label="TR")
axs[2].set_yscale("log")
axs[2].set_ylabel(f"{f0} rate (Mb/s)")
ax2b = axs[2].twinx()
ax2b.step(t, ds["bc_stage"].sel(flow=f0), lw=0.6, color="C2", label="byte-counter stage")
ax2b.step(t, ds["t_stage"].sel(flow=f0), lw=0.6, color="C3", label="timer stage")
ax2b.set_ylabel("stage")
ax2b.legend(fontsize=7, loc="center right")
axs[0].set_ylabel("hot queue (KB)")
axs[1].set_ylabel("hot port (Gb/s)")
axs[2].set_xlabel("time (ms)")
for ax in axs:
    hotspot_span(ax, nf_runs[0][1])
    ax.grid(True, alpha=0.3)
for ax in axs[:3]:
    ax.legend(fontsize=7, loc="upper right")
fig.tight_layout()
plt.show()
rec = {label: res.metrics["recovery_time_s"] for label, res in nf_runs}
display(Markdown(
    "Recovery time after the hotspot (the simulator's `recovery_time_s`): "
    + "; ".join(f"{k}: **{v * 1e3:.0f} ms**" if v is not None else f"{k}: not recovered"
                for k, v in rec.items())
    + f". Deck (1 source, RTT 100 us): {DECK_RECOVERY['hardware'] * 1e3:.0f} ms hardware, "
    f"{DECK_RECOVERY['deck simulation'] * 1e3:.0f} ms simulation."
))
# what happens after the recovery with 8 sources
label8, res8 = nf_runs[1]
ds8 = res8.dataset
late = ds8["time"].values > ds8["time"].values[-1] - 0.2 * res8.duration
slow = int(np.sum(ds8["cr"].isel(time=-1).values < 0.5 * 1e9 / 8))
display(Markdown(
    f"{label8}: the recovery time counts the first {10:g} ms back at the offered load; after "
    f"it the hot port carries {float(ds8['hot_port_throughput'][late].mean()) / 1e9:.2f} Gb/s "
    f"over the last {0.2 * res8.duration * 1e3:.0f} ms of the run (offered 1 Gb/s), with "
    f"{slow} of 8 rate limiters still below half their 125 Mb/s offered rate at the end: a second "
    f"queue spike as the flows came back cut them, and at 1 Gb/s their increase is slow."
))

# %% [markdown]
# ## S9 `ig-hotspot` (seed 000): input-generated hotspot, culprits and victim
# Four culprits of 5 Gb/s to n6 (fair share 2.5 Gb/s each) and a victim of 5 Gb/s to n7
# (fair 5 Gb/s). Figure: hot queue (e6 -> n6) and per-flow throughput (10 ms moving
# average), fair shares dashed. FULL mode adds link RTTs of 50 and 500 us (the deck's 5, 50,
# 500 us).

# %%
ig_runs = [run("ig-hotspot", 0.35, (0.05, 0.3))]
if FULL:
    ig_runs += [run("ig-hotspot", rtt=r) for r in ("50us", "500us")]
for label, res in ig_runs:
    record(label, res)
    ds = res.dataset
    t = ds["time"].values * 1e3
    fig, axs = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    axs[0].plot(t, ds["hot_queue_mean"] / 1e3, lw=0.8)
    axs[0].set_ylabel("hot queue (KB)")
    for fl in ds["flow"].values:
        axs[1].plot(t, smooth(ds["flow_throughput"].sel(flow=fl).values, 10) / 1e9, lw=0.8,
                    label=str(fl))
    for fair in (2.5, 5.0):
        axs[1].axhline(fair, color="k", ls="--", lw=0.6)
    axs[1].set_ylabel("flow throughput (Gb/s)")
    axs[1].set_xlabel("time (ms)")
    axs[1].legend(fontsize=7, ncol=3)
    for ax in axs:
        hotspot_span(ax, res)
        ax.grid(True, alpha=0.3)
    axs[0].set_title(label, fontsize=10)
    fig.tight_layout()
    plt.show()
label, res = ig_runs[0]
thr = res.flow_throughput_bps
display(Markdown(
    f"{label}, throughput over the hotspot: victim n1->n7 **{thr['n1->n7'] / 1e9:.2f} Gb/s** "
    f"(fair 5); culprits " + ", ".join(f"{k} {v / 1e9:.2f}" for k, v in thr.items() if k.endswith("n6"))
    + f" Gb/s (fair 2.5 each), Jain index over the culprits {res.metrics['jain_fairness']:.3f}."
))

# %% [markdown]
# ## S12 `parking-lot` (seed 000)
# Four hot flows cross L1 (A -> B) and L2 (B -> C); one cold flow crosses each link. Figure:
# per-flow throughput (10 ms moving average) with the max-min (2.0 Gb/s) and proportional
# (1.67 / 3.33 Gb/s) allocations, and the output queues of the two inter-switch ports.

# %%
pl_runs = [run("parking-lot", 0.25)]
if FULL:
    pl_runs.append(run("parking-lot", rtt="100us"))
for label, res in pl_runs:
    record(label, res)
    ds = res.dataset
    t = ds["time"].values * 1e3
    fig, axs = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    for fl in ds["flow"].values:
        axs[0].plot(t, smooth(ds["flow_throughput"].sel(flow=fl).values, 10) / 1e9, lw=0.8,
                    label=str(fl))
    for v, ls in ((2.0, "--"), (10 / 6, ":"), (20 / 6, ":")):
        axs[0].axhline(v, color="k", ls=ls, lw=0.6)
    axs[0].set_ylabel("flow throughput (Gb/s)")
    axs[0].legend(fontsize=7, ncol=3)
    for port in ("A->B", "B->C"):
        axs[1].plot(t, ds["queue_mean"].sel(port=port) / 1e3, lw=0.8, label=port)
    axs[1].set_ylabel("output queue (KB)")
    axs[1].set_xlabel("time (ms)")
    axs[1].legend(fontsize=8)
    for ax in axs:
        ax.grid(True, alpha=0.3)
    axs[0].set_title(label, fontsize=10)
    fig.tight_layout()
    plt.show()
label, res = pl_runs[0]
thr = res.flow_throughput_bps
hot = [v for k, v in thr.items() if k.endswith("n9")]
cold = [v for k, v in thr.items() if not k.endswith("n9")]
display(Markdown(
    f"{label}: hot flows {', '.join(f'{v / 1e9:.2f}' for v in hot)} Gb/s (mean "
    f"{np.mean(hot) / 1e9:.2f}), cold flows {', '.join(f'{v / 1e9:.2f}' for v in cold)} Gb/s; "
    f"max-min would give 2.00 each, proportional fairness 1.67 / 3.33. Jain index over all six "
    f"flows {res.metrics['jain_fairness']:.3f}; utilisation of L1 "
    f"{res.metrics['hot_port_utilisation']:.2f}."
))

# %% [markdown]
# ## Summary
# Metrics of every run over its measurement window (the hotspot, or the whole run for the
# parking lot): hot queue mean and maximum, hot-port utilisation, Jain fairness, frames
# dropped, CNMs, PAUSE frames and the recovery time after the hotspot ("-" where the run ends
# before recovery or there is no hotspot end).

# %%
def fmt(v, f):
    return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else format(v, f)


lines = ["| run | simulated (s) | queue mean (KB) | queue max (KB) | utilisation | Jain | drops | "
         "CNMs | PAUSE | recovery (ms) |", "|" + "---|" * 10]
for r in summary:
    lines.append(
        f"| {r['label']} | {r['duration']:g} | {fmt(r['qmean'] and r['qmean'] / 1e3, '.1f')} | "
        f"{fmt(r['qmax'] and r['qmax'] / 1e3, '.0f')} | {fmt(r['util'], '.3f')} | {fmt(r['jain'], '.3f')} | "
        f"{r['drops']} | {r['cnms']} | {r['pause']} | {fmt(r['rec'] and r['rec'] * 1e3, '.0f')} |")
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## What this notebook found

# %%
with_q = [r for r in summary if r["qmean"] is not None and np.isfinite(r["qmean"])]
lo_q, hi_q = min(with_q, key=lambda r: r["qmean"]), max(with_q, key=lambda r: r["qmean"])
with_u = [r for r in summary if r["util"] is not None and np.isfinite(r["util"])]
recovered = {k: v for k, v in rec.items() if v is not None}
display(Markdown(
    f"* {len(summary)} runs; the hot queue's mean over the measurement window ranges from "
    f"{lo_q['qmean'] / 1e3:.1f} KB ({lo_q['label']}) to {hi_q['qmean'] / 1e3:.1f} KB "
    f"({hi_q['label']}), the hot port's utilisation from "
    f"{min(r['util'] for r in with_u):.3f} to {max(r['util'] for r in with_u):.3f}.\n"
    f"* Frames were dropped in {sum(r['drops'] > 0 for r in summary)} of {len(summary)} runs; "
    f"PAUSE frames were sent in {sum(r['pause'] > 0 for r in summary)}.\n"
    f"* netfpga-1g recovers after the hotspot in "
    + (", ".join(f"{v * 1e3:.0f} ms ({k})" for k, v in recovered.items()) or "no run")
    + f" (deck: {DECK_RECOVERY['hardware'] * 1e3:.0f} ms hardware, "
    f"{DECK_RECOVERY['deck simulation'] * 1e3:.0f} ms simulation)."
))
