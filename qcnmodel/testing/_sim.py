"""Simulator runs for the assertions, cached by their arguments for the process.

:func:`run` is :func:`qcnmodel.simulate` with a cache (same arguments, same seed -> the same
:class:`~qcnmodel.sim.SimResult` object; the simulator is deterministic for a seed) and with
the network the run used attached, so that :func:`~qcnmodel.testing.assert_invariants` can
check the link rates. :func:`queue_verdict` applies the sustained-oscillation detector
(:func:`qcnmodel.analysis.timeseries.oscillation`) to the CP queue in a window.
"""

from __future__ import annotations

import numpy as np

from qcnmodel.testing._resolve import as_spec

__all__ = ["SPEC_ATTR", "cache_clear", "cache_info", "cache_key", "queue_verdict", "run"]

#: attribute of a SimResult holding the NetworkSpec it ran on
SPEC_ATTR = "_qcnmodel_network"
_CACHE: dict = {}
_STATS = {"hits": 0, "misses": 0}


def _freeze(value):
    """A hashable, order-independent key part for any argument value."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return value


def cache_key(scenario, kwargs: dict):
    """The cache key of a run: the scenario (name, file path or spec) and every argument."""
    return (_freeze(scenario), _freeze(kwargs))


def run(scenario, **kwargs):
    """:func:`qcnmodel.simulate` of ``scenario`` (a name, a topology file or a NetworkSpec),
    cached by all its arguments; keywords as ``qcnmodel.simulate``.

    A topology file's preset and duration are its defaults, as with
    ``qcnmodel simulate --topology``. The result carries the network it ran on.
    """
    from qcnmodel.sim.api import simulate

    key = cache_key(scenario, kwargs)
    hit = _CACHE.get(key)
    if hit is not None:
        _STATS["hits"] += 1
        return hit
    _STATS["misses"] += 1
    spec, _, preset, duration = as_spec(scenario, kwargs.get("overrides"),
                                        kwargs.get("protocol", "qcn"))  # fmt: skip
    kw = dict(kwargs)
    target = scenario if isinstance(scenario, str) and not scenario.endswith(".toml") else spec
    if target is spec:
        kw.setdefault("params", preset)
        if kw.get("duration") is None and duration is not None:
            kw["duration"] = duration
    result = simulate(target, **kw)
    setattr(result, SPEC_ATTR, spec)
    _CACHE[key] = result
    return result


def cache_info() -> dict:
    """``{"hits", "misses", "size"}`` of the run cache."""
    return {**_STATS, "size": len(_CACHE)}


def cache_clear() -> None:
    """Empty the run cache."""
    _CACHE.clear()
    _STATS.update(hits=0, misses=0)


def queue_verdict(result, t0: float, t1: float, qeq: float) -> tuple[dict, np.ndarray, np.ndarray]:
    """The oscillation detector's answer on the CP queue (bin means) for bins ending in
    ``(t0, t1]``; also returns the whole trace ``(t, q)`` for figures."""
    from qcnmodel.analysis.timeseries import oscillation

    ds = result.dataset
    t = ds["time"].values
    q = ds["hot_queue_mean"].values
    sel = (t > t0) & (t <= t1 + 1e-12)
    if sel.sum() < 8:
        raise ValueError(
            f"settle: the analysis window ({t0:g}, {t1:g}] s holds {int(sel.sum())} trace bins; "
            "at least 8 are needed (lengthen the run or shorten the settling time)"
        )
    dt = float(ds.attrs.get("bin_width_s", t[1] - t[0]))
    return oscillation(q[sel], dt, qeq), t, q
