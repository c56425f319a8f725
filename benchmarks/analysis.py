"""Analysis benchmarks: stability-map speed and margins vs python-control.

Run ``python benchmarks/analysis.py``.  Prints

(a) the time of a 100 x 100 (RTT x N) stability map of the QCN fluid
    linearisation: the published cycle-averaged equations (``fidelity="paper"``, rational
    loop), target <= 2 s; and the packet-fidelity default (an exact non-rational loop: one
    equilibrium and one frequency table per N), target <= 1 s per N row;
(b) the per-point speed-up of :func:`qcnmodel.analysis.margins.margins_over_delay`
    over python-control's ``stability_margins`` on an FRD of exact values
    (timed on a 10 x 10 subset), and the largest phase-margin difference;
(c) the fluid-simulation timing of ``benchmarks/fluid.py`` (published equations), target
    <= 50 ms per simulated second.

Each timed figure is printed with its target, its ratio to the target and whether it is met;
ratios are measured in one run on the current machine; nothing is asserted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import control
import numpy as np

from qcnmodel.analysis.margins import margins_over_delay
from qcnmodel.analysis.stability import stability_map

TARGET_MAP_S = 2.0
TARGET_PACKET_ROW_S = 1.0


def _model(fidelity: str = "paper"):
    """The QCN fluid model of the given fidelity, and its label."""
    from qcnmodel.models.qcn import QCNFluidModel

    return QCNFluidModel(fidelity=fidelity), f"QCNFluidModel(fidelity={fidelity!r})"


def _verdict(value: float, target: float) -> str:
    return f"ratio {value / target:.2f}: " + ("met" if value <= target else "NOT met")


def bench_map(model, n_rtt: int = 100, n_flows: int = 100) -> tuple[float, object]:
    """Time one stability map over RTT 1 us .. 1 ms and N = 1 .. n_flows."""
    rtts = np.logspace(-6, -3, n_rtt)
    ns = np.arange(1, n_flows + 1)
    model.replace(n_flows=1).loop()  # warm-up: symbolic caches, lambdify
    t0 = time.perf_counter()
    ds = stability_map(model, x="rtt", x_values=rtts, y="n_flows", y_values=ns)
    return time.perf_counter() - t0, ds


def bench_vs_python_control(model, n: int = 10) -> dict[str, float]:
    """Per-point cost of our margins vs control.stability_margins on an FRD."""
    rtts = np.logspace(-6, -3, n)
    ns = np.unique(np.round(np.logspace(0, 2, n)).astype(int))
    loops = {k: model.replace(n_flows=int(k), rtt=float(rtts[0])).loop() for k in ns}
    # ours: one vectorised call per N (loops prebuilt in both timings)
    t0 = time.perf_counter()
    ours = {k: margins_over_delay(lp, rtts + (lp.delay - rtts[0])) for k, lp in loops.items()}
    t_ours = time.perf_counter() - t0
    # python-control: one FRD of exact values per point, on 1000 log-spaced
    # frequencies from 1/100 of the lowest to 100x the highest corner (the
    # loop's default grid can hold 20000 points for long delays, which makes
    # stability_margins on an FRD take seconds per point)
    frds = {}
    for k, lp in loops.items():
        w = lp.default_omega()
        omega = np.logspace(np.log10(w[0]), np.log10(w[-1]), 1000)
        for r in rtts:
            frds[(k, r)] = lp.with_delay(lp.delay - rtts[0] + r).frequency_response(omega)
    t0 = time.perf_counter()
    pc = {key: control.stability_margins(f) for key, f in frds.items()}
    t_pc = time.perf_counter() - t0
    diff = 0.0
    for (k, r), res in pc.items():
        j = int(np.nonzero(rtts == r)[0][0])
        ref = ours[k].phase_margin_deg[j]
        pm_pc = res[1]
        # python-control wraps PM to [-180, 180); ours is PM0 - w_c tau (unwrapped)
        ref_wrapped = (ref + 180.0) % 360.0 - 180.0
        if np.isfinite(ref) and np.isfinite(pm_pc):
            diff = max(diff, abs(pm_pc - ref_wrapped))
    points = len(frds)
    return {
        "points": points,
        "ours_per_point_s": t_ours / points,
        "pc_per_point_s": t_pc / points,
        "speedup": (t_pc / points) / (t_ours / points),
        "max_pm_diff_deg": diff,
    }


def bench_fluid_sim() -> str:
    """The fluid-simulation timing line of ``benchmarks/fluid.py`` (published equations)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from fluid import bench_fluid_sim as fluid_bench
    finally:
        sys.path.pop(0)
    r = fluid_bench(verbose=False)
    return (
        f"fluid QCN, 1 s simulated: {r['seconds'] * 1e3:.1f} ms (target "
        f"{r['target_s'] * 1e3:.0f} ms, {_verdict(r['seconds'], r['target_s'])}; "
        f"{r['steps']} RK4 steps)"
    )


def main() -> None:
    model, label = _model()
    print(f"model: {label}")
    t_map, ds = bench_map(model)
    n_y, n_x = ds["phase_margin_deg"].shape
    print(
        f"(a) stability map {n_x} RTT x {n_y} N: {t_map:.3f} s "
        f"(target <= {TARGET_MAP_S:.1f} s, {_verdict(t_map, TARGET_MAP_S)}; "
        f"fast path={ds.attrs['fast_path']}; "
        f"{t_map / (n_x * n_y) * 1e6:.1f} us/point; stable points {int(ds['stable'].sum())})"
    )
    packet, plabel = _model("packet")
    t_pk, ds = bench_map(packet)
    n_y, n_x = ds["phase_margin_deg"].shape
    row = t_pk / n_y
    print(
        f"(a') {plabel}, the default, map {n_x} RTT x {n_y} N: {t_pk:.1f} s = {row:.2f} s per N "
        f"row (target <= {TARGET_PACKET_ROW_S:.1f} s per row, "
        f"{_verdict(row, TARGET_PACKET_ROW_S)}); "
        f"{t_pk / t_map:.0f}x the paper model's map"
    )
    r = bench_vs_python_control(model)
    print(
        f"(b) margins per point over {r['points']} points: ours {r['ours_per_point_s'] * 1e6:.1f}"
        f" us, control.stability_margins(FRD) {r['pc_per_point_s'] * 1e6:.1f} us -> speed-up "
        f"x{r['speedup']:.0f}; max |PM difference| {r['max_pm_diff_deg']:.2e} deg (a comparison, "
        "no target)"
    )
    print(f"(c) {bench_fluid_sim()}")


if __name__ == "__main__":
    main()
