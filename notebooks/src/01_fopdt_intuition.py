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
# # 01 FOPDT intuition: QCN as a lag-plus-delay loop
#
# Seed 000 (IBM Zurich) describes QCN as a control loop with a *sampling lag* `T` and a
# *delay* `tau`, and claims that "whenever delay exceeds sampling lag the loop becomes
# unstable". This notebook
#
# 1. shows the first-principles derivation of the loop (`qcnmodel.models.fopdt`, SymPy),
# 2. draws Bode, Nyquist and step response at the 802.1Qau defaults,
# 3. offers an explorer (RTT, Ps, W, N sliders) that redraws the margins and the Bode plot,
# 4. examines seed 000's claim numerically.
#
# All numbers in the text are computed below (cells that print Markdown).

# %% tags=["parameters"]
import os

FULL = os.environ.get("QCNMODEL_FULL") == "1"  # fast mode (CI) unless QCNMODEL_FULL=1

# %%
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from IPython.display import Markdown, display

from qcnmodel.analysis.margins import critical_rtt
from qcnmodel.analysis.plot import plot_bode, plot_nyquist, plot_step
from qcnmodel.models.fopdt import FOPDTModel
from qcnmodel.params import QCNParams

params = QCNParams.preset("802.1qau")
base = FOPDTModel(params, rtt=100e-6, n_flows=10, lag="first-order")

# %% [markdown]
# ## 1. Derivation
#
# Queue `q` in bytes, rates in bytes/s, `C` the CP service rate, `N` flows at rate `R`.
#
# * **Queue**: `dq/dt = N R - C`, an integrator: `dQ = N/s dR`.
# * **Sensor**: `-Fb = (q - Qeq) + w Qdelta` with `Qdelta ~ Ts dq/dt` over one sampling
#   interval `Ts = L_f/(p C)`: a PD law, lead zero at `1/(w Ts)`.
# * **Quantiser** (linearised): `qFb = F_s (-Fb)/Fb_max`, `Fb_max = Qeq (2w + 1)`, `F_s = 63`.
# * **Sampling lag** `1/(1 + s T)` with `T = 1/(Ps N lambda) = Ts` at the operating point
#   (or the zero-order-hold delay `exp(-s Ts/2)`).
# * **Delay** `exp(-s tau)`, `tau` = RTT.
# * **Reaction point**: `dR/dt = -(p R/L_f) Gd qFb R + (R_T - R)/2 (p R/L_f)/((1-p)^-B - 1)`,
#   linearised by SymPy at `R* = R_T* = C/N`, `qFb* = 0`.
#
# The SymPy open loop `L(s)` produced by `FOPDTModel.symbolic()` (first-order lag):

# %%
L_sym = base.symbolic()
display(L_sym)

# %% [markdown]
# It has the structure `L(s) = K (1 + s T_d) / (s (s + a)) * 1/(1 + s T) * exp(-s tau)`;
# the reduced symbols in terms of the physical ones (`FOPDTModel.definitions()`):

# %%
for k, v in base.definitions().items():
    display(sp.Eq(k, v))

# %% [markdown]
# Symbolic and numeric forms must agree: evaluate the SymPy expression with the numbers of
# the defaults at a few frequencies and compare with `FOPDTModel.loop()` (a `DelayedLoop`).

# %%
s = sp.Symbol("s")
vals = base.values()
L_num = sp.lambdify(s, L_sym.subs(vals), "numpy")
omega_chk = np.logspace(1, 5, 9)
loop = base.loop()
rel_err = np.max(np.abs(L_num(1j * omega_chk) - loop(1j * omega_chk)) / np.abs(loop(1j * omega_chk)))
g = base.gains()
display(Markdown(
    f"Max relative difference symbolic vs numeric over 9 frequencies: **{rel_err:.1e}**.  \n"
    f"At the defaults (10 Gb/s, N = {base.n_flows}, Ps = {base.ps:.3g}, W = {params.w:g}, "
    f"Qeq = {params.qeq / 1e3:g} KB): K = {g['K']:.4g} 1/s^2, a = {g['a']:.4g} 1/s, "
    f"Ts = {g['Ts'] * 1e6:.1f} us, lead time W Ts = {g['lead_time'] * 1e6:.1f} us."
))

# %% [markdown]
# Without the lag (or with the ZOH, which only adds delay) `|L(jw)| = 1` is a quadratic in
# `w^2`, so the gain crossover has a closed form (`FOPDTModel.closed_form()`):

# %%
cf = base.replace(lag="none").closed_form()
display(sp.Eq(sp.Symbol("omega_c"), cf["crossover"]))
display(sp.Eq(sp.Symbol("tau_crit"), cf["critical_loop_delay"]))

# %% [markdown]
# ## 2. Bode, Nyquist and step response at the 802.1Qau defaults (N = 10, RTT = 100 us)
#
# Figure: Bode plot with the exact delay (dashed red: gain crossover; dotted green: phase
# crossover), Nyquist plot along the indented contour with the encirclement count, and the
# closed-loop unit step response of `L/(1+L)` with Pade approximants of order 10 and 20
# (time domain only; margins never use Pade).

# %%
m0 = loop.margins()
fig = plt.figure(figsize=(13, 4.5))
gs = fig.add_gridspec(2, 3)
ax_m, ax_p = fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[1, 0])
plot_bode(loop, ax=[ax_m, ax_p])
plot_nyquist(loop, ax=fig.add_subplot(gs[:, 1]), radius=2.5)
r10 = loop.step_response(pade_order=10)
r20 = loop.step_response(T=r10.time, pade_order=20)
plot_step([r10, r20], ax=fig.add_subplot(gs[:, 2]))
fig.tight_layout()
plt.show()
pade_diff = np.max(np.abs(r10.output - r20.output))
display(Markdown(
    f"Margins: PM = **{m0.phase_margin_deg:.1f} deg** at w_c = {m0.crossover_rad_s:.0f} rad/s, "
    f"GM = {m0.gain_margin_db:.1f} dB, delay margin = {m0.delay_margin_s * 1e6:.0f} us, "
    f"so the critical RTT is {m0.critical_delay_s * 1e6:.0f} us; stable: {m0.stable}. "
    f"Step response: Pade 10 vs 20 differ by at most {pade_diff:.1e} (order 10 is converged); "
    f"peak {r10.output.max():.2f} (overshoot {100 * (r10.output.max() - 1):.0f} %)."
))

# %% [markdown]
# ### The form of the sampling lag matters
# The first-order lag costs `atan(w Ts)` of phase and lowers the gain; the ZOH costs
# `w Ts/2` at unchanged gain; "none" drops the lag. Table: margins at the defaults for each
# form and three flow counts (critical RTT = RTT at which PM reaches 0).

# %%
rows = ["| N | lag | w_c (rad/s) | PM (deg) | critical RTT (us) |", "|---|---|---|---|---|"]
for n in (1, 10, 100):
    for lag in ("first-order", "zoh", "none"):
        mm = base.replace(n_flows=n, lag=lag)
        lp = mm.loop()
        mg = lp.margins()
        crit = critical_rtt(mm, loop=lp)  # the critical loop delay minus the ZOH hold
        rows.append(f"| {n} | {lag} | {mg.crossover_rad_s:.0f} | {mg.phase_margin_deg:.1f} | "
                    f"{crit * 1e6:.0f} |")
display(Markdown("\n".join(rows)))

# %% [markdown]
# ## 3. Explorer: RTT, Ps, W and N
#
# `explore(rtt_us, ps, w, n)` redraws the Bode plot with the margins in the title and prints
# the critical RTT and the sampling lag Ts. With a widget front end (JupyterLab, Notebook 7)
# it is driven by `ipywidgets` sliders. Without one (nbmake, nbconvert, a plain kernel) the
# sliders would not render, so a **static grid** of the same plot is drawn for a few slider
# settings instead.
#
# How the front end is detected (`widget_frontend()`): `ipywidgets` must import, the kernel
# must be an IPython kernel, and the kernel must have been started by a Jupyter server, which
# sets the `JPY_SESSION_NAME` environment variable (nbclient/nbmake/nbconvert do not).
# Override with `QCNMODEL_WIDGETS=1` (force sliders, e.g. in VS Code) or `QCNMODEL_WIDGETS=0`
# (force the static grid).

# %%
def widget_frontend() -> bool:
    """True when ipywidgets sliders can be rendered (see the markdown above)."""
    forced = os.environ.get("QCNMODEL_WIDGETS")
    if forced in ("0", "1"):
        return forced == "1"
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return False
    return bool(os.environ.get("JPY_SESSION_NAME"))


def explore(rtt_us=100.0, ps=0.01, w=2.0, n=10, axes=None):
    """Bode plot and margins of the FOPDT loop at one slider setting."""
    mdl = base.replace(rtt=rtt_us * 1e-6, ps=ps, w=w, n_flows=int(n))
    lp = mdl.loop()
    own = axes is None
    if own:
        fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    plot_bode(lp, ax=list(axes))
    mg = lp.margins()
    ts = mdl.gains()["Ts"]
    axes[0].set_title(
        f"RTT {rtt_us:g} us, Ps {ps:g}, W {w:g}, N {int(n)}\n"
        f"PM {mg.phase_margin_deg:.1f} deg, GM {mg.gain_margin_db:.1f} dB, "
        f"crit. RTT {critical_rtt(mdl, loop=lp) * 1e6:.0f} us, Ts {ts * 1e6:.0f} us "
        f"({'stable' if mg.stable else 'UNSTABLE'})",
        fontsize=8,
    )
    if own:
        plt.show()
    return mg


INTERACTIVE = widget_frontend()
print("widget front end:", INTERACTIVE)

# %%
if INTERACTIVE:
    import ipywidgets as widgets

    lazy = {"continuous_update": False}  # redraw on release, not while dragging
    widgets.interact(
        explore,
        rtt_us=widgets.FloatLogSlider(value=100, base=10, min=0, max=3, step=0.05,
                                      description="RTT (us)", **lazy),
        ps=widgets.FloatLogSlider(value=0.01, base=10, min=-3, max=-0.5, step=0.05,
                                  description="Ps", **lazy),
        w=widgets.FloatSlider(value=2.0, min=0.0, max=32.0, step=0.5, description="W", **lazy),
        n=widgets.IntSlider(value=10, min=1, max=100, description="N", **lazy),
        axes=widgets.fixed(None),
    )
else:
    # static fallback: the same plot at a few slider settings (columns)
    settings = [(50, 0.01, 2, 10), (200, 0.01, 2, 10), (200, 0.003, 2, 10), (200, 0.01, 8, 10)]
    if FULL:
        settings += [(200, 0.01, 2, 1), (200, 0.01, 2, 100)]
    fig, axs = plt.subplots(2, len(settings), figsize=(3.6 * len(settings), 5.5), sharex="col")
    for j, (r, p_, w_, n_) in enumerate(settings):
        explore(r, p_, w_, n_, axes=axs[:, j])
        for ax in axs[:, j]:
            ax.title.set_fontsize(7)
            ax.yaxis.label.set_fontsize(8)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# Static grid, left to right: the defaults at RTT 50 us (stable) and 200 us (beyond the
# critical RTT), then at 200 us with a smaller Ps (longer sampling lag) and with a larger W
# (stronger lead). In FULL mode two more columns vary N.

# %% [markdown]
# ## 4. Seed 000's claim: "whenever delay exceeds sampling lag the loop becomes unstable"
#
# In the FOPDT view the sampling lag is `Ts = L_f/(Ps C)` (it does not depend on N, since
# the N flows together arrive at rate C at the operating point). If the claim held exactly,
# the critical RTT would equal `Ts`. We compute the ratio `tau_crit / Ts` over Ps, W and N.
# Figure: critical RTT against `Ts` (the diagonal is the claim), one line per (W, N).

# %%
ps_grid = np.logspace(-3, -1, 13 if FULL else 7)
w_grid = (0.5, 2.0, 8.0, 32.0) if FULL else (0.5, 2.0, 8.0)
n_grid = (1, 10, 100)
ratio = np.empty((len(w_grid), len(n_grid), ps_grid.size))
ts_grid = np.empty(ps_grid.size)
for i, w_ in enumerate(w_grid):
    for j, n_ in enumerate(n_grid):
        for k, p_ in enumerate(ps_grid):
            mdl = base.replace(ps=p_, w=w_, n_flows=n_)
            ts_grid[k] = mdl.gains()["Ts"]
            # critical_rtt < 0: the loop is unstable even without delay (clip to 0)
            ratio[i, j, k] = max(critical_rtt(mdl), 0.0) / ts_grid[k]

fig, ax = plt.subplots(figsize=(7, 5))
for i, w_ in enumerate(w_grid):
    for j, n_ in enumerate(n_grid):
        ax.semilogx(ts_grid * 1e6, ratio[i, j] * ts_grid * 1e6, marker=".",
                  color=f"C{i}", ls=("-", "--", ":")[j], label=f"W={w_:g}, N={n_}")
ax.semilogx(ts_grid * 1e6, ts_grid * 1e6, color="k", lw=2, label="claim: tau_crit = Ts")
ax.set_yscale("symlog", linthresh=10)
ax.set_xlabel("sampling lag Ts = L_f/(Ps C) (us)")
ax.set_ylabel("critical RTT (us) (0: unstable without delay)")
ax.legend(fontsize=7, ncol=2)
ax.grid(True, which="both", alpha=0.3)
plt.show()

i2, j10 = w_grid.index(2.0), n_grid.index(10)
k1 = int(np.argmin(np.abs(ps_grid - 0.01)))
n_zero = int(np.sum(ratio == 0))
zero_w = sorted({w_grid[i] for i, _, _ in zip(*np.nonzero(ratio == 0))})
pos = ratio[ratio > 0]
display(Markdown(
    f"{n_zero} of {ratio.size} grid points are unstable even at zero delay (W in {zero_w}: "
    f"the lead zero at 1/(W Ts) sits above the lag pole at 1/Ts, so lag + RP pole + "
    f"integrator exceed 180 deg of phase). "
    f"On the others the ratio tau_crit/Ts ranges from **{pos.min():.2f}** to "
    f"**{pos.max():.2f}** (median {np.median(pos):.2f}). "
    f"At W = 2, N = 10: from {ratio[i2, j10].min():.2f} to {ratio[i2, j10].max():.2f} "
    f"over Ps = {ps_grid[0]:g} .. {ps_grid[-1]:g} "
    f"(at Ps = {ps_grid[k1]:.3g}: {ratio[i2, j10, k1]:.2f}). "
    f"W dominates: at N = 10 the median ratio is "
    + ", ".join(f"{np.median(ratio[i, j10]):.2f} (W={w_:g})" for i, w_ in enumerate(w_grid))
    + "."
))

# %% [markdown]
# Reading: the critical RTT is of the *order* of the sampling lag, so the claim is right as a
# scale statement, but it is not a sharp threshold: the ratio `tau_crit/Ts` moves with Ps
# (the loop gain `K` grows with Ps while `Ts` shrinks), with W (the lead zero at `1/(W Ts)`
# buys phase) and with N (the RP pole `a` and the gain both scale with 1/N). In this linear
# view it is the ratio of delay to the *crossover* time scale that decides, not delay to lag.
# Whether the packet simulator agrees is the subject of notebook 03.

# %% [markdown]
# ## What this notebook found

# %%
display(Markdown(
    f"* The SymPy loop and the numeric loop agree to {rel_err:.0e} (relative, 9 frequencies).\n"
    f"* At the 802.1Qau defaults (N = {base.n_flows}, RTT = {base.rtt * 1e6:.0f} us) the FOPDT "
    f"loop is {'stable' if m0.stable else 'unstable'}: phase margin {m0.phase_margin_deg:.1f} deg, "
    f"critical RTT {m0.critical_delay_s * 1e6:.0f} us against a sampling lag Ts = "
    f"{g['Ts'] * 1e6:.1f} us (ratio {m0.critical_delay_s / g['Ts']:.2f}).\n"
    f"* Seed 000's claim (critical RTT = Ts) holds as an order of magnitude only: over "
    f"{ratio.size - n_zero} stable grid points the ratio tau_crit/Ts runs from {pos.min():.2f} "
    f"to {pos.max():.2f}, and {n_zero} points are unstable even without delay."
))
