"""The critical RTTs (and stable bands) of several operating points at once, on forked workers.

A model judged by its trajectories (:func:`qcnmodel.analysis.boundary.trajectory_boundary`)
costs seconds per critical RTT, growing with the number of flows (each run follows every
flow). A check or a report needs one per flow count: :func:`trajectory_boundaries` computes
them (with the stable bands of the flow counts that cycle at small RTTs) on
the cores this process may use, the largest flow counts first so that the workers finish
together. A worker runs the same code on the same model as this process would, so the
answers are those of a sequential run, bit for bit; they join this process's memo of
searches, so that asking again here (a report's points table) costs nothing.
:func:`map_calls`, the pool behind it, serves other independent searches too (a check's
one-field fixes, one field per task).
"""

from __future__ import annotations

__all__ = ["map_calls", "trajectory_boundaries", "workers"]


def workers(jobs: int | None, tasks: int) -> int:
    """Processes for ``tasks`` independent critical RTTs: ``jobs`` (None or -1: the cores
    this process may use), at most ``tasks``; 1 where ``fork`` is not available."""
    import multiprocessing as mp

    from qcnmodel.studies.sweep import usable_cores

    if "fork" not in mp.get_all_start_methods():  # pragma: no cover - not POSIX
        return 1
    return max(1, min(usable_cores() if jobs in (None, -1) else int(jobs), tasks))


def _shared(fn, args) -> tuple:
    """``fn(*args)`` in a worker, with the searches it memoised, for this process's memo."""
    from qcnmodel.analysis import boundary

    before = set(boundary._MEMO)
    value = fn(*args)
    return value, {k: v for k, v in boundary._MEMO.items() if k not in before}


def trajectory_boundaries(models, jobs: int | None = None, progress=None) -> list[tuple]:
    """:func:`~qcnmodel.analysis.boundary.trajectory_boundary` of each of ``models``, in
    order: ``(critical RTT, stable band or None)``, searched over each model's own interval,
    whatever range asks.

    Parameters
    ----------
    models : sequence of models judged by their trajectories
        Picklable models (frozen dataclasses), e.g. one per flow count.
    jobs : int, optional
        Processes (default the cores this process may use; 1 runs here).
    progress : tqdm, optional
        Advanced once per answer.
    """
    from qcnmodel.analysis.boundary import trajectory_boundary

    return map_calls(trajectory_boundary, [(m,) for m in models], jobs, progress)


def map_calls(fn, calls: list, jobs: int | None = None, progress=None, weight: int = 1) -> list:
    """``fn(*args)`` for each ``args`` of ``calls`` (picklable), in order: here, or on forked
    workers (``jobs``: :func:`workers`), the largest flow counts first (of the models that
    come first in ``args``) so that the workers finish together; ``progress`` advances by
    ``weight`` per answer. The trajectory kernels are loaded before the workers fork."""
    n = workers(jobs, len(calls))
    if n <= 1:
        out = []
        for args in calls:
            out.append(fn(*args))
            if progress is not None:
                progress.update(weight)
        return out
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from qcnmodel.studies.sweep import _ignore_sigint

    _warm([args[0] for args in calls])
    order = sorted(range(len(calls)), key=lambda i: -getattr(calls[i][0], "n_flows", 0))
    out: list = [None] * len(calls)
    pool = ProcessPoolExecutor(n, mp_context=mp.get_context("fork"), initializer=_ignore_sigint)
    try:
        futs = {pool.submit(_shared, fn, calls[i]): i for i in order}
        from concurrent.futures import as_completed

        from qcnmodel.analysis import boundary

        for fut in as_completed(futs):
            out[futs[fut]], found = fut.result()
            boundary._MEMO.update(found)  # a later search of the same model is a lookup
            if progress is not None:
                progress.update(weight)
    except BaseException:
        from qcnmodel.studies._pool import abandon

        abandon(pool, list(futs))
        raise
    pool.shutdown()
    return out


def _warm(models) -> None:
    """Compile (or load) the trajectory kernels here, once, before the workers are forked: each
    would otherwise compile them itself, at the same time."""
    from qcnmodel.analysis.boundary import judged_by_trajectories

    for m in models:
        if judged_by_trajectories(m) and hasattr(m, "trajectory_odds"):
            m.trajectory_odds(1)
            return
