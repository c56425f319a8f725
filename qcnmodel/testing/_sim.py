"""Simulator runs for the assertions, cached by their arguments for the process.

:func:`run` is :func:`qcnmodel.simulate` with a cache (same arguments, same seed -> the same
:class:`~qcnmodel.sim.SimResult` object; the simulator is deterministic for a seed) and with
the network the run used attached, so that :func:`~qcnmodel.testing.assert_invariants` can
check the link rates. :func:`queue_verdict` classifies the CP queue in a window as
``qcnmodel check --confirm`` does (:func:`qcnmodel.studies.confirm.classify`: the
sustained-oscillation detector :func:`qcnmodel.analysis.timeseries.oscillation`, and
*drifting* for a queue whose trend moves it by more than Qeq across the window).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from qcnmodel.testing._resolve import as_spec

__all__ = ["SPEC_ATTR", "cache_clear", "cache_info", "cache_key", "queue_trace", "queue_verdict",
           "run"]  # fmt: skip

#: attribute of a SimResult holding the NetworkSpec it ran on
SPEC_ATTR = "_qcnmodel_network"
#: bytes of traces the run cache keeps (least recently used runs dropped first; the last run
#: is always kept): a 10 ms og-hotspot run holds ~0.02 MB, a 0.6 s bottleneck at 50 us bins
#: ~19 MB with 10 sources and ~150 MB with 100
MAX_CACHE_BYTES = 512e6
_CACHE: OrderedDict = OrderedDict()
#: the CP queue traces of the assertions' own runs, (t, q, bin width): ~0.2 MB each
_QUEUES: dict = {}
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


#: arguments given as a time, in seconds or with a unit: the key holds their seconds
_TIMES = ("duration", "bin_width")


def cache_key(scenario, kwargs: dict):
    """The cache key of a run: the scenario (name, file path or spec) and every argument,
    a time in seconds however it was written (``"1ms"``, ``"1000us"`` and ``0.001`` are one
    run)."""
    from qcnmodel.units import parse_time

    kw = dict(kwargs)
    for name in _TIMES:
        if isinstance(kw.get(name), str):
            try:
                kw[name] = float(parse_time(kw[name], name))
            except ValueError:  # simulate says what is wrong with it
                pass
    return (_freeze(scenario), _freeze(kw))


def run(scenario, **kwargs):
    """:func:`qcnmodel.simulate` of ``scenario`` (a name, a topology file or a NetworkSpec),
    cached by all its arguments (up to :data:`MAX_CACHE_BYTES` of traces); keywords as
    ``qcnmodel.simulate``.

    A topology file's preset and duration are its defaults, as with
    ``qcnmodel simulate --topology``. The result carries the network it ran on.
    """
    from qcnmodel.sim.api import simulate

    key = cache_key(scenario, kwargs)
    hit = _CACHE.get(key)
    if hit is not None:
        _STATS["hits"] += 1
        _CACHE.move_to_end(key)
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
    object.__setattr__(result, SPEC_ATTR, spec)  # a private note on the frozen result
    _CACHE[key] = result
    while len(_CACHE) > 1 and sum(_nbytes(r) for r in _CACHE.values()) > MAX_CACHE_BYTES:
        _CACHE.popitem(last=False)
    return result


def _nbytes(result) -> int:
    return int(result.dataset.nbytes) if result.dataset is not None else 0


def queue_trace(spec, **kwargs) -> tuple[np.ndarray, np.ndarray, float]:
    """``(t, q, bin width)``: the CP queue (bin means) of a run of ``spec``, cached by the
    arguments; the run's other traces are not kept."""
    from qcnmodel.sim.api import simulate

    key = cache_key(spec, kwargs)
    if key not in _QUEUES:
        ds = simulate(spec, **kwargs).dataset
        t = ds["time"].values
        dt = float(ds.attrs.get("bin_width_s", t[1] - t[0]))
        _QUEUES[key] = (t, ds["hot_queue_mean"].values, dt)
    return _QUEUES[key]


def cache_info() -> dict:
    """``{"hits", "misses", "size"}`` of the run cache."""
    return {**_STATS, "size": len(_CACHE)}


def cache_clear() -> None:
    """Empty the run cache."""
    _CACHE.clear()
    _QUEUES.clear()
    _STATS.update(hits=0, misses=0)


def queue_verdict(
    trace, t0: float, t1: float, qeq: float, frame_size: float | None = None
) -> tuple[dict, np.ndarray, np.ndarray]:
    """The packets' class of a :func:`queue_trace` for the bins ending in ``(t0, t1]``, as
    ``qcnmodel check --confirm`` gives it (:func:`qcnmodel.studies.confirm.classify`:
    "stable", "oscillating", "underflow", "idle" or "drifting", with the detector's numbers
    and the trend ``drift`` in bytes across the window); a bin below one frame of
    ``frame_size`` bytes (default the detector's) counts as empty. Also returns the whole
    trace ``(t, q)`` for figures."""
    from qcnmodel.studies.confirm import classify

    t, q, dt = trace
    sel = (t > t0) & (t <= t1 + 1e-12)
    if sel.sum() < 8:
        raise ValueError(
            f"settle: the analysis window ({t0:g}, {t1:g}] s holds {int(sel.sum())} trace bins; "
            "at least 8 are needed (lengthen the run or shorten the settling time)"
        )
    return classify(q[sel], dt, qeq, frame_size), t, q
