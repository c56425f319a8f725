"""Benchmark of the compiled fluid-model integrator (qcnmodel.analysis.dde / qcnmodel.models.qcn).

Target, once compiled (numba's on-disk cache makes later processes start compiled): 1 s of
simulated QCN fluid dynamics at the 802.1Qau defaults, N = 10, rtt = 100 us, in at most
50 ms, for both fidelities:

- the published cycle-averaged equations (``fidelity="paper"``, 4 states, default step
  rtt/10);
- the packet-fidelity default: its trajectories follow every flow (``method="agents"``, an
  event-driven hybrid model: no step; the cost grows with the events, about one sample, byte
  counter or timer event per 10-30 us here), and its population integrator
  (``method="cohorts"``, about 75 reaction-point cohorts, step 10 us, ~200 ns per cohort and
  step); the line prints the cohort count so the cost can be read.
"""

from __future__ import annotations

import time

TARGET_S = {"paper": 0.050, "packet": 0.050}


def bench_fluid_sim(repeat: int = 5, verbose: bool = True, fidelity: str = "paper",
                    method: str | None = None) -> dict:  # fmt: skip
    """Time 1 s of simulated QCN fluid dynamics; print it and the ratio to its target.

    Returns
    -------
    dict
        ``seconds`` (best of ``repeat``), ``target_s``, ``ratio`` (seconds / target),
        ``steps`` (RK4 steps), ``compile_s`` (first call, includes compilation or cache load).
    """
    from qcnmodel.models.qcn import QCNFluidModel

    model = QCNFluidModel(n_flows=10, rtt=100e-6, fidelity=fidelity)
    target = TARGET_S[fidelity]
    x0 = {"q": 1.2 * model.fixed_point()["q"]}
    t0 = time.perf_counter()
    kw = {} if method is None else {"method": method}
    model.simulate(0.01, x0=x0, **kw)
    compile_s = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        ds = model.simulate(1.0, x0=x0, **kw)
        best = min(best, time.perf_counter() - t0)
    agents = ds.attrs.get("method") == "agents"
    cohorts = float(ds.cohorts.mean()) if "cohorts" in ds and not agents else None
    out = {
        "seconds": best,
        "target_s": target,
        "ratio": best / target,
        "steps": int(round(1.0 / model.default_dt())),
        "compile_s": compile_s,
        "cohorts": cohorts,
    }
    if verbose:
        print(
            f"fluid QCN ({fidelity}{', ' + ds.attrs['method'] if 'method' in ds.attrs else ''}), "
            "1 s simulated (N=10, rtt=100us, "
            + (
                "event-driven, every flow"
                if agents
                else f"dt={model.default_dt() * 1e6:g}us, {out['steps']} steps"
            )
            + (f", {cohorts:.0f} cohorts on average" if cohorts else "")
            + f"): {best * 1e3:.1f} ms "
            f"(target {target * 1e3:.0f} ms, ratio {out['ratio']:.2f}: "
            f"{'met' if best <= target else 'NOT met'}); first call {compile_s:.2f} s"
        )
    return out


if __name__ == "__main__":
    bench_fluid_sim(fidelity="paper")
    bench_fluid_sim(repeat=2, fidelity="packet")  # the default integrator: every flow
    bench_fluid_sim(repeat=2, fidelity="packet", method="cohorts")
