"""Benchmark of the compiled fluid-model integrator (qcnmodel.analysis.dde / qcnmodel.models.qcn).

Target: 1 s of simulated QCN fluid dynamics (802.1Qau defaults, N = 10, rtt = 100 us, default
step 10 us = rtt/10) in at most 50 ms once compiled (numba's on-disk cache makes later
processes start compiled).
"""

from __future__ import annotations

import time

TARGET_S = 0.050


def bench_fluid_sim(repeat: int = 5, verbose: bool = True) -> dict:
    """Time 1 s of simulated QCN fluid dynamics; print it and the ratio to the 50 ms target.

    Returns
    -------
    dict
        ``seconds`` (best of ``repeat``), ``target_s``, ``ratio`` (seconds / target),
        ``steps`` (RK4 steps), ``compile_s`` (first call, includes compilation or cache load).
    """
    from qcnmodel.models.qcn import QCNFluidModel

    model = QCNFluidModel(n_flows=10, rtt=100e-6)
    x0 = {"q": 1.2 * model.fixed_point()["q"]}
    t0 = time.perf_counter()
    model.simulate(0.01, x0=x0)
    compile_s = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        model.simulate(1.0, x0=x0)
        best = min(best, time.perf_counter() - t0)
    out = {
        "seconds": best,
        "target_s": TARGET_S,
        "ratio": best / TARGET_S,
        "steps": int(round(1.0 / model.default_dt())),
        "compile_s": compile_s,
    }
    if verbose:
        print(
            f"fluid QCN, 1 s simulated (N=10, rtt=100us, dt={model.default_dt() * 1e6:g}us, "
            f"{out['steps']} RK4 steps): {best * 1e3:.1f} ms "
            f"(target {TARGET_S * 1e3:.0f} ms, ratio {out['ratio']:.2f}); "
            f"first call {compile_s:.2f} s"
        )
    return out


if __name__ == "__main__":
    bench_fluid_sim()
