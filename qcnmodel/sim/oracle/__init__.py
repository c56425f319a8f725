"""The pure-Python oracle: the simulator's readable, executable specification.

:class:`Oracle` (:mod:`.loop`) runs the same events as the compiled kernel with plain objects
and :mod:`heapq`; :mod:`.dispatch` maps each protocol family to its plain-Python adapter. Both
push every event in the kernel's order, so counters, traces and the event log agree bit for
bit.
"""

from qcnmodel.sim.oracle.loop import Oracle

__all__ = ["Oracle"]
