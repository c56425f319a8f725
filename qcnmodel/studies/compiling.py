"""One line on stderr before a numba compilation, so that a progress bar never stalls silently.

The packet-fidelity QCN model and the packet simulator are compiled with numba the first time
they run (tens of seconds; the result is cached on disk, so later processes only load it).
:func:`announce_compile` prints what is about to compile when that code has not yet run in
this process.
"""

from __future__ import annotations

import sys

__all__ = ["announce_compile"]

_TEXT = {
    "loop": "the packet-fidelity QCN model's cohort kernel",
    "fluid": "the packet-fidelity QCN model's integrator",
    "sim": "the packet simulator",
}


def _ready(what: str) -> bool:
    if what == "loop":
        from qcnmodel.models._qcn_cohort import cohort_path

        return bool(cohort_path.signatures)
    if what == "fluid":
        from qcnmodel.models._qcn_cohort import integrate

        return bool(integrate.signatures)
    from qcnmodel.sim.kernel import loop

    return bool(loop._WARM)


def announce_compile(what: str, enabled: bool = True) -> None:
    """Say on stderr that ``what`` (``"loop"``, ``"fluid"`` or ``"sim"``) compiles now, unless
    it already ran in this process or ``enabled`` is false."""
    if what not in _TEXT:
        raise ValueError(f"what: one of {', '.join(_TEXT)}, got {what!r}")
    if not enabled or _ready(what):
        return
    from tqdm.auto import tqdm

    tqdm.write(f"compiling {_TEXT[what]} (numba; once, then loaded from the cache) ...",
               file=sys.stderr)  # fmt: skip
