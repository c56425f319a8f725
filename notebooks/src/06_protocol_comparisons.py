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
# # 06 Protocols side by side: OG and IG hotspots, and the decks' observations
#
# Seed 000 (IBM Zurich) compares ECM, QCN and QCN-SONAR on the output-generated hotspot
# (`og-hotspot`, scenario S1) and the input-generated hotspot (`ig-hotspot`, S9). This
# notebook runs the same comparisons with the packet-level simulator
# (`qcnmodel.studies.compare.compare`: same scenario, seed and traffic for every protocol; only the
# congestion management differs) and draws what the deck plots: hot queue, throughput and
# per-flow rates, with a summary table. It then judges each sentence the decks report for
# these scenarios with `qcnmodel.validation.observations` (the same code as the section
# "Deck observations by protocol" of the validation report).
#
# **Fast mode** (default): 0.4 s runs with the hotspot moved to 0.05-0.25 s (OG) /
# 0.05-0.35 s (IG), and the verdicts of the S1 and S9 observation groups only.
# `QCNMODEL_FULL=1`: the scenarios' own durations and hotspots (OG 1.5 s, IG 1 s), more
# protocols, and every observation group (S1, S3, S4, S9, S10, S11; about a minute).

# %% tags=["parameters"]
import os

FULL = os.environ.get("QCNMODEL_FULL") == "1"  # fast mode (CI) unless QCNMODEL_FULL=1

# %%
# ruff: noqa: E402 (imports after the parameters cell, as papermill/nbmake expect)
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from qcnmodel.studies.compare import compare, summary_markdown
from qcnmodel.validation import observations as OBS
from qcnmodel.validation.observations_eval import evaluate

SEED = 1
PROTOS = ["qcn", "ecm", "qcn-sonar"] + (["qcn-p", "qcn-sp", "none"] if FULL else ["none"])


def run_compare(scenario, fast_hotspot, **overrides):
    """Compare PROTOS on ``scenario`` (fast mode: 0.4 s and an earlier hotspot)."""
    kw = {}
    if not FULL:
        kw["duration"] = 0.4
        overrides = {"hotspot_start": fast_hotspot[0], "hotspot_stop": fast_hotspot[1]} | overrides
    t0 = time.perf_counter()
    cmp = compare(scenario, PROTOS, seed=SEED, overrides=overrides, **kw)
    print(
        f"{scenario} {overrides}: {len(PROTOS)} protocols, {cmp.duration:g} s simulated each, "
        f"{time.perf_counter() - t0:.1f} s wall"
    )
    return cmp


def smooth(x, k=10):
    """Trailing-free moving average over k bins (same length)."""
    return np.convolve(x, np.ones(k) / k, mode="same")


def hot_flows(res):
    """Flows into the hot node (the deck's per-flow panels)."""
    ds = res.dataset
    dst = ds.attrs["hot_port"].split("->")[-1]
    return [str(f) for f in ds["flow"].values if str(f).split("->")[-1] == dst]


def draw(cmp, title):
    """One column per protocol: hot queue, throughput, per-flow throughput and RL rates."""
    n = len(cmp.protocols)
    fig, axs = plt.subplots(4, n, figsize=(3.3 * n, 10), sharex=True, sharey="row")
    for j, p in enumerate(cmp.protocols):
        res = cmp.results[p]
        ds = res.dataset
        t = ds["time"].values * 1e3
        a, b = res.metrics["measure_window_s"]
        axs[0, j].plot(t, ds["hot_queue_mean"] / 1e3, lw=0.8)
        axs[0, j].set_title(p, fontsize=10)
        axs[1, j].plot(t, ds["hot_port_throughput"] / 1e9, lw=0.8, label="hot port")
        axs[1, j].plot(t, ds["delivered_throughput"] / 1e9, lw=0.8, label="aggregate")
        for f in hot_flows(res):
            axs[2, j].plot(t, smooth(ds["flow_throughput"].sel(flow=f).values) / 1e9, lw=0.6)
            axs[3, j].plot(t, ds["cr"].sel(flow=f).values / 1e9, lw=0.6)
        axs[3, j].set_xlabel("time (ms)")
        for ax in axs[:, j]:
            ax.axvspan(a * 1e3, b * 1e3, color="0.92", zorder=0)
            ax.grid(True, alpha=0.3)
    axs[0, 0].set_ylabel("hot queue (KB)")
    axs[1, 0].set_ylabel("throughput (Gb/s)")
    axs[1, 0].legend(fontsize=7)
    axs[2, 0].set_ylabel("hot flows, 10 ms mean (Gb/s)")
    axs[3, 0].set_ylabel("RL rate CR (Gb/s)")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    plt.show()


def metrics_table(cmp):
    """The observation metrics of every protocol of ``cmp`` (Markdown)."""
    lines = [
        "| protocol | reaction (ms) | queue mean, 2nd half (KB) | queue std (KB) | "
        "jitter (KB) | underrun | flow fluctuation | drops in hotspot |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p, res in cmp.results.items():
        tr = OBS.trace_of(res, p)
        rt = OBS.react(tr)
        lines.append(
            f"| {p} | {'-' if rt is None else f'{rt * 1e3:.0f}'} | "
            f"{OBS.qmean(tr) / 1e3:.1f} | {OBS.osc(tr) / 1e3:.1f} | "
            f"{OBS.jit(tr) / 1e3:.1f} | {OBS.under(tr):.1%} | {OBS.fluct(tr):.2f} | "
            f"{OBS.drops(tr):,.0f} |"
        )
    return "\n".join(lines)


# %% [markdown]
# ## S1 `og-hotspot`: output-generated hotspot
# Ten nodes send uniformly to all others at 85 % load; node n1 drains at 1 Gb/s during the
# hotspot (grey). Rows: hot queue (1 ms bin mean), hot-port and aggregate delivered
# throughput, throughput of the nine flows into n1 (10 ms moving mean), and their
# rate-limiter rates (line rate while a flow has no RL; `none` has no RLs).

# %%
og = run_compare("og-hotspot", (0.05, 0.25))
draw(og, f"og-hotspot, seed {SEED}")
display(Markdown(summary_markdown(og)))
display(Markdown(metrics_table(og)))

# %% [markdown]
# ## S9 `ig-hotspot`: input-generated hotspot
# Four culprits (n2..n5) send 5 Gb/s each to n6 during the hotspot; the victim n1 sends
# 5 Gb/s to n7 throughout. Fair allocation: 2.5 Gb/s per culprit, 5 Gb/s for the victim.
# At a link RTT of 5 us (default) and at 500 us, where the deck reports strong
# oscillations that underflow the queue, SONAR worst.

# %%
ig = run_compare("ig-hotspot", (0.05, 0.35))
draw(ig, f"ig-hotspot, RTT 5 us, seed {SEED}")
display(Markdown(summary_markdown(ig)))
display(Markdown(metrics_table(ig)))

# %%
ig500 = run_compare("ig-hotspot", (0.05, 0.35), rtt="500us")
draw(ig500, f"ig-hotspot, RTT 500 us, seed {SEED}")
display(Markdown(summary_markdown(ig500)))
display(Markdown(metrics_table(ig500)))

# %% [markdown]
# Per flow over the hotspot (Gb/s): the culprits' fair share is 2.5 Gb/s and the victim's 5.

# %%
for name, cmp in (("RTT 5 us", ig), ("RTT 500 us", ig500)):
    rows = {p: r.flow_throughput_bps for p, r in cmp.results.items()}
    flows = list(next(iter(rows.values())))
    print(name)
    print("  protocol   " + "  ".join(f"{f:>8}" for f in flows) + "  fair-share Jain")
    for p, thr in rows.items():
        jain = OBS.M.fair_share_jain([thr[f] for f in OBS.IG_FAIR], list(OBS.IG_FAIR.values()))
        print(f"  {p:10} " + "  ".join(f"{thr[f] / 1e9:8.2f}" for f in flows) + f"  {jain:.3f}")

# %% [markdown]
# ## The decks' observations, judged
# `qcnmodel.validation.observations` runs its own short configurations (listed in the
# "runs" column: shortened hotspots, one or two seeds) and computes one metric per deck
# sentence, with the condition of the verdict in the "metric" column. Thresholds were fixed
# before the runs; a sentence we do not reproduce is reported as such, with its numbers.
# Fast mode judges the S1 (og-hotspot) and S9 (ig-hotspot) groups; FULL mode all of S1, S3,
# S4, S9, S10, S11.

# %%
groups = list(OBS.RUNS) if FULL else ["S1", "S9"]
t0 = time.perf_counter()
got = OBS.run_observations(groups=groups)
rows = evaluate(got["traces"])
print(f"{len(got['traces'])} runs in {time.perf_counter() - t0:.1f} s")
lines = ["| id | observation | measured | verdict |", "|---|---|---|---|"]
lines += [f"| {o.oid} | {o.observation} | {o.measured} | **{o.verdict}** |" for o in rows]
display(Markdown("\n".join(lines)))

# %% [markdown]
# Metrics and notes of each row (what exactly is measured, and why a row is not assessable):

# %%
for o in rows:
    print(
        f"{o.oid} [{o.verdict}] {o.observation}\n    runs: {o.runs}\n    metric: {o.metric}"
        + (f"\n    note: {o.note}" if o.note else "")
    )
counts = {}
for o in rows:
    counts[o.verdict] = counts.get(o.verdict, 0) + 1
print(counts)

# %% [markdown]
# ## What this notebook found

# %%
def queue_line(cmp, name):
    """Mean hot queue over the measurement window, per protocol (KB)."""
    q = {p: r.metrics["hot_queue_mean_bytes"] / 1e3 for p, r in cmp.results.items()}
    return f"{name}: " + ", ".join(f"{p} {v:.1f} KB" for p, v in q.items())


display(Markdown(
    "* Mean hot queue over the hotspot: "
    + "; ".join(queue_line(c, n) for c, n in ((og, "og-hotspot"), (ig, "ig-hotspot 5 us"),
                                               (ig500, "ig-hotspot 500 us")))
    + ".\n"
    f"* The decks' observations ({', '.join(groups)}): {len(rows)} judged, "
    + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + "."
))
