"""One line on stderr before a numba compilation, so that a long first run never stalls
silently, and the packet simulator compiled in the background while a report analyses.

The packet-fidelity QCN model and the packet simulator are compiled with numba the first time
they run (seconds for the model's kernels, 15-50 s for the simulator on 2 cores; the
result is cached on disk, so later processes only load it). :func:`announce_compile` prints
what is about to compile when it is neither compiled in this process nor in numba's cache;
:func:`announce_all` says it once for everything a command will compile.
:func:`compile_in_background` compiles a simulator family's kernel in a forked process (it
fills numba's cache), so that the analysis runs meanwhile on the other core;
:meth:`Background.wait` waits for it before the first packet run, which then loads the kernel
from the cache.
"""

from __future__ import annotations

import sys

__all__ = ["Background", "announce_all", "announce_compile", "announce_model",
           "compile_in_background", "pending", "sim_family", "sim_ready",
           "trajectories_ready"]  # fmt: skip

_TEXT = {
    "loop": "the packet-fidelity QCN model's cohort kernel",
    "fluid": "the packet-fidelity QCN model's trajectory kernel",
    "sim": "the packet simulator",
}

#: what a line on stderr has already named in this process (said once, not per call)
_ANNOUNCED: set = set()


def _dispatchers(what: str) -> tuple:
    if what == "loop":
        from qcnmodel.models import _qcn_cohort

        return (_qcn_cohort.cohort_path,)
    from qcnmodel.models import _port, _qcn_hybrid_kernel  # what simulate() runs by default

    return (_qcn_hybrid_kernel.integrate_compiled, *_port.KERNELS)


def _cached(dispatcher) -> bool:
    """True if numba's cache holds a fresh entry of ``dispatcher`` for this machine (or if that
    cannot be told)."""
    try:
        index = dispatcher._cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(key[1] == magic for key in index)
    except Exception:  # another numba version, or a damaged index (repaired on load)
        return True


def _ready(what: str, family: str = "qcn") -> bool:
    """Compiled in this process, or in numba's cache (nothing to compile)."""
    if what in ("loop", "fluid"):
        return all(bool(d.signatures) or _cached(d) for d in _dispatchers(what))
    from qcnmodel.sim.engines import kernel_is_cached
    from qcnmodel.sim.kernel import loop

    return family in loop._WARM or kernel_is_cached(family)


def sim_ready(family: str = "qcn") -> bool:
    """True if ``family``'s simulator kernel is compiled in this process or in numba's cache
    (a packet run then loads it in seconds instead of compiling it for 10-20 s)."""
    return _ready("sim", family)


def trajectories_ready() -> bool:
    """True if the packet-fidelity QCN model's trajectory kernels (its population of cohorts
    and its per-flow trajectories: what its ``simulate`` runs) are compiled in this process
    or in numba's cache (about 20 s of CPU to compile them otherwise)."""
    from qcnmodel.models import _qcn_cohort

    kernels = (_qcn_cohort.integrate, *_dispatchers("fluid"))
    return all(bool(k.signatures) or _cached(k) for k in kernels)


def pending(whats) -> list[str]:
    """Those of ``whats`` (``"loop"``, ``"fluid"``, ``"sim"``) that would compile now and that
    no line has named yet."""
    for what in whats:
        if what not in _TEXT:
            raise ValueError(f"what: one of {', '.join(_TEXT)}, got {what!r}")
    return [w for w in whats if w not in _ANNOUNCED and not _ready(w)]


def announce_compile(what: str, enabled: bool = True) -> None:
    """Say on stderr that ``what`` (``"loop"``, ``"fluid"`` or ``"sim"``) compiles now, unless
    it already ran in this process, is in numba's cache, was already named, or ``enabled`` is
    false."""
    if what not in _TEXT:
        raise ValueError(f"what: one of {', '.join(_TEXT)}, got {what!r}")
    if not enabled or what in _ANNOUNCED or _ready(what):
        return
    _ANNOUNCED.add(what)
    from tqdm.auto import tqdm

    tqdm.write(f"qcnmodel: compiling {_TEXT[what]} (numba, once; later runs load it from "
               "the cache) ...", file=sys.stderr)  # fmt: skip


def announce_model(model, enabled: bool = True) -> None:
    """:func:`announce_compile` for what analysing ``model`` compiles: the packet-fidelity
    QCN model's cohort kernel, and its trajectory kernel where the trajectories judge its
    operating point (found by solving its equilibrium, which runs the cohort kernel);
    nothing for other models."""
    if not enabled or getattr(model, "fidelity", None) != "packet":
        return
    from qcnmodel.analysis.boundary import boundary_method

    announce_compile("loop")
    try:
        judged = boundary_method(model) == "trajectories"
    except Exception:  # no equilibrium there: the analysis that follows says why
        return
    if judged:
        announce_compile("fluid")


def announce_all(whats, background: bool = False) -> list[str]:
    """One line on stderr naming every one of ``whats`` that will compile (:func:`pending`);
    nothing when none will. ``background``: the simulator compiles in another process while
    the analysis runs. The items named are not named again by :func:`announce_compile`.
    Returns them."""
    todo = pending(whats)
    if not todo:
        return todo
    _ANNOUNCED.update(todo)
    names = [_TEXT[w] for w in todo]
    if "loop" in todo and "fluid" in todo:  # one name for the model's two kernels
        names[todo.index("loop")] = (
            "the packet-fidelity QCN model's kernels (cohorts, trajectories)")  # fmt: skip
        del names[todo.index("fluid")]
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    when = ("the simulator in the background while the model is analysed; "
            if background and "sim" in todo else "")  # fmt: skip
    took = "a few seconds" if todo == ["loop"] else "tens of seconds"
    if "sim" in todo:
        from qcnmodel.sim.engines import COMPILE_ESTIMATE

        took = f"about {COMPILE_ESTIMATE} on 2 cores"
    them = "it" if len(names) == 1 and "kernels" not in names[0] else "them"
    print(f"qcnmodel: compiling {text} (numba, {when}once: {took}; later runs load "
          f"{them} from the cache)", file=sys.stderr, flush=True)  # fmt: skip
    return todo


def _compile_sim(family: str) -> None:  # in the forked process
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it (Background.close)
    from qcnmodel.sim.engines import warm_kernel

    warm_kernel(family)


class Background:
    """A forked process compiling ``family``'s simulator kernel into numba's cache."""

    def __init__(self, family: str):
        import multiprocessing as mp

        self.family = family
        ctx = mp.get_context("fork")
        self.proc = ctx.Process(target=_compile_sim, args=(family,), name=f"compile-{family}",
                                daemon=True)  # fmt: skip
        self.proc.start()

    def wait(self) -> None:
        """Wait for the compilation, then load the kernel here from the cache (if the process
        failed, this process compiles it)."""
        from qcnmodel.sim.engines import warm_kernel

        self.proc.join()
        warm_kernel(self.family)

    def close(self) -> None:
        """Stop the process if it still runs (an error or Ctrl-C in the parent)."""
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join()


def sim_family(params) -> str:
    """The simulator (kernel) family that packet runs of ``params`` use (QCN on, no other
    protocol)."""
    from qcnmodel.sim.kernel.dispatch import kernel_family
    from qcnmodel.sim.kernel.state import protocol_config

    return kernel_family(protocol_config(params, True))


def compile_in_background(family: str = "qcn") -> Background | None:
    """Start compiling ``family``'s simulator kernel in a forked process, unless it is
    compiled in this process or cached (None then), or fork is not available."""
    import multiprocessing as mp

    if _ready("sim", family) or "fork" not in mp.get_all_start_methods():
        return None
    return Background(family)
