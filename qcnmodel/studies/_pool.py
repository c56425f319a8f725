"""Giving up a pool of forked workers on an error or Ctrl-C (the sweeps, the check's critical
RTTs, the report's side tasks share it)."""

from __future__ import annotations

__all__ = ["abandon"]


def abandon(pool, futures) -> None:
    """Cancel ``futures``, shut ``pool`` down without waiting and terminate its workers.

    A terminated pool's manager thread then sets BrokenProcessPool on every queued future,
    cancelled ones too, which on CPython 3.11 raises InvalidStateError there (a thread
    traceback after the user's Ctrl-C); a cancelled future's ``set_exception`` is therefore
    made a no-op first.
    """
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for fut in futures:
        fut.cancel()
    pool.shutdown(wait=False, cancel_futures=True)
    for fut in futures:
        if fut.cancelled():
            fut.set_exception = _no_answer
    for proc in procs:
        proc.terminate()


def _no_answer(exc) -> None:
    """A cancelled future's answer to the pool's late ``set_exception``: none is needed."""
