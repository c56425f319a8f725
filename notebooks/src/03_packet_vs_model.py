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
# # 03 Packet-level simulation against the fluid model
#
# The default QCN model, the packet-fidelity fluid model (`QCNFluidModel()`,
# `fidelity="packet"`), predicts a critical RTT for N flows sharing one congestion point (CP).
# Here the packet-level reference simulator (`qcnmodel.sim.simulate`) runs the same situation
# below and above that RTT, and its hot queue is compared with the model: the linear verdict
# (stable / oscillating), the nonlinear trajectories of the packet-fidelity model and of the
# published cycle-averaged equations (`fidelity="paper"`, Alizadeh et al., Allerton 2008;
# notebook 02) from the same start, the queue level and the oscillation frequency.
#
# Set-up (`qcnmodel.validation.network.bottleneck_spec`, the single bottleneck of the
# validation suite and of the stability report): N greedy sources (each offering twice its
# fair share, capped at the 10 Gb/s line rate), one switch, one sink whose switch egress port
# (the CP) serves at C; unlimited switch memory, PAUSE off, 802.1Qau parameters. The builder
# sets the link delays so that the CP -> RP -> CP loop delay equals the model's RTT
# (serialisation and latencies included; see that module's docstring).

# %% tags=["parameters"]
import os

FULL = os.environ.get("QCNMODEL_FULL") == "1"  # fast mode (CI) unless QCNMODEL_FULL=1

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.models.qcn import QCNFluidModel
from qcnmodel.params import QCNParams
from qcnmodel.sim import simulate
from qcnmodel.studies.report_packet import classify_queue
from qcnmodel.validation.network import bottleneck_spec

params = QCNParams.preset("802.1qau")
N_FLOWS, CAPACITY = 10, 5e9
FACTORS = [0.25, 0.5, 0.75, 0.9, 1.1, 1.5, 2.0, 3.0] if FULL else [0.5, 2.0]  # not 1.0: PM = 0 exactly
SEEDS = [0, 1, 2] if FULL else [0]
DURATION = 0.5 if FULL else 0.2
BIN = 20e-6

model = QCNFluidModel(params, rtt=100e-6, n_flows=N_FLOWS, capacity=CAPACITY)  # packet fidelity
paper = QCNFluidModel(params, rtt=100e-6, n_flows=N_FLOWS, capacity=CAPACITY, fidelity="paper")
crit = critical_rtt(model)
display(Markdown(
    f"N = {N_FLOWS} flows, C = {CAPACITY / 1e9:g} Gb/s: the packet-fidelity model's critical "
    f"RTT is **{crit * 1e6:.0f} us** (the published equations: "
    f"{critical_rtt(paper) * 1e6:.0f} us). Runs at {', '.join(f'{f:g}' for f in FACTORS)} x that RTT, "
    f"seeds {SEEDS}, {DURATION:g} s each, queue traces binned at {BIN * 1e6:g} us."
))

# %% [markdown]
# ## 1. Runs
# For each RTT: the packet simulation (the first call compiles the kernel unless the numba
# cache is warm) and the nonlinear fluid models in four forms:
#
# * "packet-fidelity model, idle start": the default model from the packet run's start (empty
#   queue, idle rate limiters, sources at their offered rate);
# * "packet-fidelity model, near equilibrium": from its fixed point with the queue displaced
#   by 1 KB (its sustained behaviour without the start-up transient);
# * "published equations, line-rate start": the cycle-averaged equations (`fidelity="paper"`)
#   from an empty queue with every source at the line rate;
# * "published equations reset=cnm+timer+HAI, line-rate start": the same with the switches
#   the validation added one at a time (RP counters reset by CNMs only, timer, HAI).
#
# The RTTs are multiples of the packet-fidelity model's critical RTT; the last table column
# gives each model's own phase margin at that RTT.

# %%
def dominant_frequency(t, q):
    """Angular frequency (rad/s) from the mean spacing of upward mean crossings of q
    (NaN with fewer than 4 crossings, i.e. no sustained oscillation in the window)."""
    x = q - q.mean()
    if np.ptp(x) < 1.0:
        return np.nan
    # hysteresis of 10 % of the swing so that packet noise does not count as crossings
    band = 0.1 * np.ptp(x)
    ups, state = [], x[0] > 0
    for i, v in enumerate(x):
        if not state and v > band:
            ups.append(i)
            state = True
        elif state and v < -band:
            state = False
    return 2 * np.pi / np.mean(np.diff(t[ups])) if len(ups) >= 4 else np.nan


def queue_stats(t, q):
    late = t > DURATION / 2
    c = classify_queue(q[late], params.qeq)
    c["freq"] = dominant_frequency(t[late], q[late])
    return c


rows, traces = [], {}
t_wall = time.perf_counter()
for factor in FACTORS:
    rtt = factor * crit
    mdl = model.replace(rtt=rtt)
    lin = mdl.loop().margins()
    start = {"q": 0.0, "rate_current": params.line_rate, "rate_target": params.line_rate}
    pap = paper.replace(rtt=rtt)
    runs = (("packet-fidelity model, idle start", mdl, dict(start="idle")),
            ("packet-fidelity model, near equilibrium", mdl,
             dict(x0={"q": mdl.fixed_point()["q"] + 1000.0})),
            ("published equations, line-rate start", pap, dict(x0=start)),
            ("published equations reset=cnm+timer+HAI, line-rate start",
             pap.replace(reset="cnm", timer=True, hai=True), dict(x0=start)))
    for variant, m_, kw in runs:
        ds = m_.simulate(DURATION, record_dt=BIN, **kw)
        t, q = ds["time"].values, ds["q"].values
        traces[(factor, variant)] = (t, q)
        own = m_.loop().margins()
        rows.append(dict(factor=factor, rtt=rtt, source=variant, seed="-",
                         pm=lin.phase_margin_deg, wc=lin.crossover_rad_s, own_pm=own.phase_margin_deg,
                         predicted="stable" if lin.stable else "unstable", **queue_stats(t, q)))
    for seed in SEEDS:
        res = simulate(bottleneck_spec(N_FLOWS, rtt, CAPACITY), params=params,
                       duration=DURATION, bin_width=BIN, seed=seed)
        ds = res.dataset
        t, q = ds["time"].values, ds["hot_queue_mean"].values
        traces[(factor, f"packet seed {seed}")] = (t, q)
        rows.append(dict(factor=factor, rtt=rtt, source="packet", seed=seed,
                         pm=lin.phase_margin_deg, wc=lin.crossover_rad_s, own_pm=np.nan,
                         predicted="stable" if lin.stable else "unstable", **queue_stats(t, q),
                         jain=res.metrics["jain_fairness"],
                         util=res.metrics["hot_port_utilisation"]))
print(f"all runs: {time.perf_counter() - t_wall:.1f} s wall")

# %% [markdown]
# ## 2. Hot queue: packets vs fluid model
# Figure: one panel per RTT; hot queue of the packet simulation (time average per 20 us bin,
# first seed) and three of the model trajectories; Qeq dotted. The y range is clipped to show the
# queue around Qeq (the start-up transient overshoots to megabytes in both).

# %%
fig, axs = plt.subplots(len(FACTORS), 1, figsize=(11, 2.8 * len(FACTORS)), sharex=True,
                        squeeze=False)
for ax, factor in zip(axs[:, 0], FACTORS):
    for key, style in ((f"packet seed {SEEDS[0]}", dict(color="k", lw=0.6)),
                       ("packet-fidelity model, idle start", dict(color="C0", lw=1.0)),
                       ("packet-fidelity model, near equilibrium", dict(color="C1", lw=1.0, ls="--")),
                       ("published equations, line-rate start", dict(color="C3", lw=1.0))):
        t, q = traces[(factor, key)]
        ax.plot(t * 1e3, q / 1e3, label=key, **style)
    ax.axhline(params.qeq / 1e3, color="0.5", ls=":", lw=0.8)
    r = next(r for r in rows if r["factor"] == factor)
    ax.set_title(f"RTT = {factor:g} x critical = {factor * crit * 1e6:.0f} us: model PM "
                 f"{r['pm']:.1f} deg ({r['predicted']})", fontsize=9)
    ax.set_ylabel("queue (KB)")
    ax.set_ylim(0, 4 * params.qeq / 1e3)
    ax.grid(True, alpha=0.3)
axs[0, 0].legend(fontsize=8, loc="upper right")
axs[-1, 0].set_xlabel("time (ms)")
fig.tight_layout()
plt.show()

# %% [markdown]
# Table: statistics of the queue over the second half of each run (the classification of
# `report_packet.classify_queue`: *steady* when the queue is empty in < 5 % of the bins and
# its standard deviation is < Qeq/2), with the oscillation frequency (from the spacing of
# mean crossings; empty when there is no sustained oscillation) next to the model's
# gain-crossover frequency `w_c`.

# %%
hdr = ("| RTT / crit | RTT (us) | base PM | linear verdict | source | seed | mean (KB) | std (KB) | "
       "empty | verdict | freq (rad/s) | w_c (rad/s) | own PM |")
lines = [hdr, "|" + "---|" * 13]
for r in rows:
    freq = "-" if np.isnan(r["freq"]) else f"{r['freq']:.0f}"
    lines.append(f"| {r['factor']:g} | {r['rtt'] * 1e6:.0f} | {r['pm']:.1f} | {r['predicted']} | "
                 f"{r['source']} | {r['seed']} | {r['mean'] / 1e3:.1f} | {r['std'] / 1e3:.1f} | "
                 f"{100 * r['empty_fraction']:.0f} % | {r['verdict']} | {freq} | "
                 f"{r['wc']:.0f} | {'' if np.isnan(r['own_pm']) else format(r['own_pm'], '.1f')} |")
display(Markdown("\n".join(lines)))

# %%
pk = [r for r in rows if r["source"] == "packet"]
agree = sum((r["verdict"] == "steady") == (r["predicted"] == "stable") for r in pk)
lo = [r for r in pk if r["factor"] < 1]
hi = [r for r in pk if r["factor"] > 1]
fl_hi = [r for r in rows if r["source"] == "packet-fidelity model, near equilibrium" and r["factor"] > 1]
fl_lo = [r for r in rows if r["source"] == "packet-fidelity model, near equilibrium" and r["factor"] < 1]
idle = [r for r in rows if r["source"] == "packet-fidelity model, idle start"]
pub = [r for r in rows if r["source"] == "published equations, line-rate start"]
txt = (f"The packet simulation agrees with the packet-fidelity model's linear verdict in "
       f"**{agree} of {len(pk)}** runs. ")
if lo:
    txt += (f"Below the critical RTT the packet queue stays around "
            f"{np.mean([r['mean'] for r in lo]) / 1e3:.1f} KB (Qeq = {params.qeq / 1e3:g} KB) with a "
            f"standard deviation of {np.mean([r['std'] for r in lo]) / 1e3:.1f} KB; the "
            f"packet-fidelity model near equilibrium: mean "
            f"{np.mean([r['mean'] for r in fl_lo]) / 1e3:.1f} KB, std "
            f"{np.mean([r['std'] for r in fl_lo]) / 1e3:.2g} KB. ")
if hi and fl_hi:
    txt += (f"Above it the packet queue has a standard deviation of "
            f"{np.mean([r['std'] for r in hi]) / 1e3:.1f} KB and is empty "
            f"{100 * np.mean([r['empty_fraction'] for r in hi]):.0f} % of the time; the "
            f"packet-fidelity model near equilibrium: std "
            f"{np.mean([r['std'] for r in fl_hi]) / 1e3:.1f} KB, empty "
            f"{100 * np.mean([r['empty_fraction'] for r in fl_hi]):.0f} %. ")
txt += ("From the start of a packet run: "
        + "; ".join(f"at {r['factor']:g} x critical the packet-fidelity model has mean "
                    f"{r['mean'] / 1e3:.1f} KB, empty {100 * r['empty_fraction']:.0f} % "
                    f"({r['verdict']}), the published equations mean {p['mean'] / 1e3:.1f} KB, "
                    f"empty {100 * p['empty_fraction']:.0f} % ({p['verdict']})"
                    for r, p in zip(idle, pub))
        + ". The published equations throttle their increase by (1-p)^(F B) = "
        f"{(1 - params.ps) ** (params.fr_th * params.bc_limit / params.frame_size):.4f} even "
        "when no CNM is sent, which is why they recover slowly after the deep initial cut.")
display(Markdown(txt))

# %% [markdown]
# ## 3. Rates and fairness
# Figure: the current rates (CR) of the rate limiters in the packet simulation at the lowest
# and highest RTT, with the fair share C/N dashed. The table above does not show fairness;
# the Jain index over the measured throughputs is printed below.

# %%
f_lo, f_hi = FACTORS[0], FACTORS[-1]
fig, axs = plt.subplots(1, 2, figsize=(13, 3.6), sharey=True)
for ax, factor in zip(axs, (f_lo, f_hi)):
    res = simulate(bottleneck_spec(N_FLOWS, factor * crit, CAPACITY),
                   params=params, duration=DURATION, bin_width="1ms", seed=SEEDS[0])
    ds = res.dataset
    for fl in ds["flow"].values:
        ax.plot(ds["time"] * 1e3, ds["cr"].sel(flow=fl) / 1e9, lw=0.7)
    ax.axhline(CAPACITY / N_FLOWS / 1e9, color="k", ls="--", lw=0.8)
    ax.set_yscale("log")
    ax.set_title(f"RTT = {factor:g} x critical: Jain {res.metrics['jain_fairness']:.3f}, "
                 f"utilisation {res.metrics['hot_port_utilisation']:.3f}", fontsize=9)
    ax.set_xlabel("time (ms)")
    ax.grid(True, which="both", alpha=0.3)
axs[0].set_ylabel("CR (Gb/s)")
fig.tight_layout()
plt.show()
for r in pk:
    print(f"RTT {r['factor']:g} x crit, seed {r['seed']}: Jain fairness {r['jain']:.3f}, "
          f"hot-port utilisation {r['util']:.3f}")

# %% [markdown]
# ## 4. How sharp is the boundary?
# The model's trajectories draw the protocol's randomness (the +-15 % cycle jitter, the flow a
# sample lands on, the sampled queue's frame noise), so each seed is one run, as each packet
# simulation is. Near the critical RTT a run oscillates with odds that grow with the RTT, and
# a verdict is the majority of several runs (the model's `trajectory_unstable()` takes 9).
# `qm.unstable_fraction` gives the model's odds over RTT, from the runs of its verdict; the
# packets' are counted over as many seeds with the validation's detector and run length
# (`qcnmodel.validation.pairs.sim_unstable`). Both sides have the same sources: each offers
# 2 C / N from idle and holds back what its rate limiter refuses in an adapter buffer.
# `qm.odds_crossing` places each side's boundary where its odds pass one half.

# %%
import qcnmodel as qm
from qcnmodel.analysis.plot import plot_unstable_fraction
from qcnmodel.validation.pairs import Case, sim_unstable

ODDS_FACTORS = [0.6, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5] if FULL else [0.8, 1.25]
ODDS_SEEDS = 9 if FULL else 3
odds_rtts = [f * crit for f in ODDS_FACTORS]
odds = qm.unstable_fraction(model, odds_rtts, seeds=ODDS_SEEDS)
packet_odds = [np.mean([sim_unstable(Case(N_FLOWS, r, CAPACITY), seeds=(s,))
                        for s in range(ODDS_SEEDS)]) for r in odds_rtts]
fig = plot_unstable_fraction(odds, label=f"model, {ODDS_SEEDS} seeds")
ax = fig.axes[0]
ax.plot(np.array(odds_rtts) * 1e6, packet_odds, marker="s", label=f"packets, {ODDS_SEEDS} seeds")
ax.axvline(crit * 1e6, color="grey", lw=0.8)
ax.legend(fontsize=8)
ax.set_title(f"N = {N_FLOWS}, C = {CAPACITY / 1e9:g} Gb/s; grey: the linearised critical RTT",
             fontsize=9)
plt.show()
for f, r, m_, p_ in zip(ODDS_FACTORS, odds_rtts, odds.values, packet_odds):
    print(f"{f:g} x critical ({r * 1e6:.0f} us): model {m_:.2f}, packets {p_:.2f} of the runs unstable")
# where the odds pass one half (an isotonic fit, log-interpolated), on each side
model_cross = qm.odds_crossing(odds)
packet_cross = qm.odds_crossing(packet_odds, odds_rtts)
print(f"odds pass one half: model {model_cross * 1e6:.0f} us, packets {packet_cross * 1e6:.0f} us "
      f"(inf: not within the RTTs run; linearised {crit * 1e6:.0f} us)")

# %% [markdown]
# ## What this notebook found

# %%
verdicts = ", ".join(f"{r['factor']:g} x critical (seed {r['seed']}): {r['verdict']}" for r in pk)
display(Markdown(
    f"* At N = {N_FLOWS} and C = {CAPACITY / 1e9:g} Gb/s the default model's critical RTT is "
    f"{crit * 1e6:.0f} us (the published equations: {critical_rtt(paper) * 1e6:.0f} us).\n"
    f"* The packet simulator agrees with the default model's linear verdict in {agree} of "
    f"{len(pk)} runs ({verdicts}).\n"
    f"* Over those runs: Jain fairness {min(r['jain'] for r in pk):.3f} to "
    f"{max(r['jain'] for r in pk):.3f}, hot-port utilisation {min(r['util'] for r in pk):.3f} to "
    f"{max(r['util'] for r in pk):.3f}."
))
