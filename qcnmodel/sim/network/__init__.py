"""Network description (:class:`NetworkSpec`) and its compilation to flat arrays.

Modules: :mod:`.spec` (the description, plain frozen dataclasses), :mod:`.compiled`
(:class:`CompiledNetwork`, the flat arrays) and :mod:`.compile` (:func:`compile_network`).

A :class:`NetworkSpec` is a plain, frozen description of hosts (adapters), switches, full-duplex
links, traffic generators, hotspots, buffers and PAUSE (the settings common to the decks). It is
general (multi-switch, multi-hop) so that a topology file loader can build one.
:func:`compile_network` turns it into the flat numpy arrays that both the compiled kernel
(:mod:`qcnmodel.sim.kernel`) and the pure-Python oracle (:mod:`qcnmodel.sim.oracle`) consume.

Modelling choices (all documented here, referenced by the scenario docstrings):

* Time is integer nanoseconds inside the simulator; rates are bit/s, sizes bytes.
* Every link is full duplex; each direction is a *port* (an egress queue at its tail node) with
  a rate and a propagation delay. A host has exactly one link (its adapter port).
* Routing is shortest path (BFS hop count); ties go to the lowest port index.
* Switch memory (IBM Zurich, "Toward a Scalable and Robust QCN", seed 000): every input port
  owns a partition of
  ``switch_memory`` bytes; a frame occupies the partition of the port it arrived on from
  enqueue until its transmission ends. A frame is dropped when its input partition would
  overflow or when the output queue would exceed ``oq_limit`` (0 = no limit).
* PAUSE (IEEE 802.3x; watermarks of seed 000): per switch input, XOFF upstream when the
  partition reaches ``high = M - pause_rtt * link_rate * headroom_factor``, XON when it falls to
  ``low = high - pause_hysteresis``. XON/XOFF only (no timed expiry; equivalent to the
  default "refreshed while above low"); refreshes are not counted. PAUSE frames take the
  link's propagation delay; a frame in transmission completes.
* PAUSE headroom: without ``pause_rtt`` (``PauseConfig.rtt=None``) each input port reserves
  what can still arrive after its XOFF: the link's delay both ways, the switch latency and
  two maximum frames (IEEE 802.1Q-2014 Annex N), so PAUSE is lossless by default.
* Validation: rates, times and sizes must be finite numbers in range (a frame time of at
  least 1 ns, a source or hotspot never faster than its link, times up to 1e6 s, at least
  one frame per VOQ); each error names the field and the allowed range.
* Adapter (our reading of the decks): one virtual output queue (VOQ) per destination, i.e. per flow,
  holding at most ``adapter_ib / n_voq`` bytes (the input buffer partitioned per VOQ, drop
  when full: counted as ``frames_blocked``, not as network drops); VOQs are served round
  robin among those whose rate limiter allows a frame (the 802.1Qau reaction point).
* Hotspot (the decks' "service rate x%"): the switch egress port towards the hot node is
  drained at the hotspot rate between ``start`` and ``stop``; that port is the congestion point.
"""

from qcnmodel.sim.network.compile import compile_network
from qcnmodel.sim.network.compiled import GEN_CBR, GEN_UNIFORM, CompiledNetwork
from qcnmodel.sim.network.spec import (
    Buffers,
    ConstantFlow,
    Host,
    Hotspot,
    Link,
    NetworkSpec,
    PauseConfig,
    Switch,
    UniformTraffic,
)

__all__ = [
    "GEN_CBR",
    "GEN_UNIFORM",
    "Buffers",
    "CompiledNetwork",
    "ConstantFlow",
    "Host",
    "Hotspot",
    "Link",
    "NetworkSpec",
    "PauseConfig",
    "Switch",
    "UniformTraffic",
    "compile_network",
]
