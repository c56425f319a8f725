"""Who answers a sub-path or path probe (QCN-SP / QCN-PP), compiled and Python twins.

Sources (the timing is unspecified): Teak's deck (seed 003: "Sub-path probing (RP<->CP)", "Path
probing"), seed 000's QCN+ spec ("DST is last chance to return a probe if no CP reacted
before"). Our reading (:mod:`.qcn_variants` item 4): the kernel walks the probe hop by hop and
collects ``fbs[k]``, the Fb (bytes, :func:`.qcn_variants.vcp_probe_fb`) of the
k-th CP on the path, in path order; for sub-path probing the walk stops at the RL's CPID (the
last entry), for path probing it continues to the destination.

``probe_replier(fbs, n, first_negative, to_destination) -> (k, fb)``:

* ``first_negative``: the first CP with Fb < 0 answers with its Fb (k = its position; the
  probe is absorbed there);
* otherwise (no congested CP, or ``reply="target"``) the target answers (k = n - 1 for a
  sub-path, the last CP; k = n for a path: the destination) with the most negative Fb seen on
  the walk, i.e. min(fbs) (a positive value when no CP is congested). An empty path returns
  (n, 0.0): the destination has nothing to report.

The reply's code is then the answering CP's ``vcp_probe_code(fb)`` (the destination uses the
target CP's parameters; the kernel passes that CP's vector).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["probe_replier", "probe_replier_py"]


@njit(cache=True)
def probe_replier(fbs, n, first_negative, to_destination):
    """Compiled: (index of the answering hop, Fb); ``to_destination`` = path probing."""
    if n == 0:
        return np.int64(0), 0.0
    fb_min = fbs[0]
    for k in range(n):
        if first_negative and fbs[k] < 0.0:
            return np.int64(k), fbs[k]
        if fbs[k] < fb_min:
            fb_min = fbs[k]
    if to_destination:
        return np.int64(n), fb_min
    return np.int64(n - 1), fb_min


def probe_replier_py(fbs, first_negative: bool, to_destination: bool):
    """Python twin of :func:`probe_replier` on a list."""
    n = len(fbs)
    if n == 0:
        return 0, 0.0
    for k, fb in enumerate(fbs):
        if first_negative and fb < 0.0:
            return k, fb
    return (n if to_destination else n - 1), min(fbs)
