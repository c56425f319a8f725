"""Counter-based random numbers with identical bits in numba and in pure Python.

The simulator never keeps a stateful generator: every draw is a pure function
``uniform01(seed, stream, counter)`` of a 64-bit run seed, a 64-bit stream key (who draws,
e.g. "the byte counter of reaction point 17") and a per-stream counter that the caller stores
in its own state and increments after each draw. Results therefore do not depend on the
order in which unrelated components draw, and the compiled kernel and the pure-Python oracle
produce the same numbers bit for bit.

Construction (all arithmetic modulo 2**64):

* ``mix(z)`` is the splitmix64 output function (Steele, Lea & Flood, "Fast splittable
  pseudorandom number generators", OOPSLA 2014; the finaliser constants of
  ``java.util.SplittableRandom``).
* ``h = mix(seed + G)``, ``h = mix(h ^ (stream + 2G))``, ``h = mix(h + (counter + 1) G)``
  with ``G = 0x9E3779B97F4A7C15`` (the golden-ratio increment of splitmix64).
* ``u = (h >> 11) * 2**-53``: the top 53 bits, so ``u`` is a multiple of 2**-53 in [0, 1).

Stream keys are ``stream_key(kind, index) = (kind << 40) | index`` (index < 2**40), with the
``STREAM_*`` kinds below; they stay below 2**63, so they also fit an int64.

Seeds, streams and counters are taken modulo 2**64 (negative Python ints wrap). In numba,
pass them as int64 or uint64 scalars.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qcnmodel.sim.kernel import _cache

_cache.install()  # before the compiled functions below (the simulator's cache, repaired)

__all__ = [
    "STREAM_CP",
    "STREAM_DEST",
    "STREAM_ONOFF",
    "STREAM_RP_BC",
    "STREAM_RP_TIMER",
    "STREAM_TRAFFIC",
    "STREAM_USER",
    "draw_jitter",
    "jitter_py",
    "jitter",
    "stream_key",
    "stream_key_py",
    "uniform01",
    "uniform01_py",
]

#: Stream kinds (the high bits of a stream key). Index = CP index, RP/RL index, source, ...
STREAM_CP = 1  #: CP sampling-interval jitter, index = CP index
STREAM_RP_BC = 2  #: RP byte-counter reload jitter, index = RL index
STREAM_RP_TIMER = 3  #: RP timer period jitter, index = RL index
STREAM_TRAFFIC = 4  #: traffic generators (sizes, inter-arrivals), index = source
STREAM_DEST = 5  #: destination choice, index = source
STREAM_ONOFF = 6  #: on/off period lengths, index = source
STREAM_USER = 16  #: first kind free for other users

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_INDEX_BITS = 40
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53, exact

# numba-typed constants (uint64 everywhere: mixing int64 and uint64 in numba gives float64)
_U_GAMMA = np.uint64(_GAMMA)
_U_GAMMA2 = np.uint64((2 * _GAMMA) & _MASK)
_U_M1 = np.uint64(_M1)
_U_M2 = np.uint64(_M2)
_U_ONE = np.uint64(1)
_S11 = np.uint64(11)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)


# ----------------------------------------------------------------------------- pure Python
def _mix_py(z: int) -> int:
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def uniform01_py(seed: int, stream: int, counter: int) -> float:
    """Pure-Python twin of :func:`uniform01` (identical bits).

    Parameters
    ----------
    seed, stream, counter : int
        Run seed, stream key and draw counter (taken modulo 2**64).

    Returns
    -------
    float
        A multiple of 2**-53 in [0, 1).
    """
    h = _mix_py((int(seed) + _GAMMA) & _MASK)
    h = _mix_py(h ^ ((int(stream) + 2 * _GAMMA) & _MASK))
    h = _mix_py((h + (int(counter) + 1) * _GAMMA) & _MASK)
    return float(h >> 11) * _TWO_M53


def stream_key_py(kind: int, index: int) -> int:
    """Stream key ``(kind << 40) | index`` (pure Python; see :func:`stream_key`)."""
    return (int(kind) << _INDEX_BITS) | (int(index) & ((1 << _INDEX_BITS) - 1))


def jitter_py(j: float, u: float) -> float:
    """Jitter factor U = 1 + J (2u - 1), uniform on [1 - J, 1 + J) (the decks' "30% randomness")."""
    return 1.0 + j * (2.0 * u - 1.0)


# ----------------------------------------------------------------------------- numba
@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> _S30)) * _U_M1
    z = (z ^ (z >> _S27)) * _U_M2
    return z ^ (z >> _S31)


@njit(cache=True)
def uniform01(seed, stream, counter):
    """Counter-based uniform draw in [0, 1) (splitmix64, 53-bit mantissa), numba-compiled.

    Parameters
    ----------
    seed, stream, counter : int64 or uint64
        Run seed, stream key (see :func:`stream_key`) and draw counter.

    Returns
    -------
    float
        A multiple of 2**-53 in [0, 1); identical to :func:`uniform01_py`.
    """
    h = _mix(np.uint64(seed) + _U_GAMMA)
    h = _mix(h ^ (np.uint64(stream) + _U_GAMMA2))
    h = _mix(h + (np.uint64(counter) + _U_ONE) * _U_GAMMA)
    return np.float64(h >> _S11) * _TWO_M53


@njit(cache=True)
def stream_key(kind, index):
    """Stream key ``(kind << 40) | index`` as int64 (index < 2**40, kind < 2**23)."""
    return (np.int64(kind) << np.int64(_INDEX_BITS)) | (
        np.int64(index) & np.int64((1 << _INDEX_BITS) - 1)
    )


@njit(cache=True)
def jitter(j, u):
    """Jitter factor U = 1 + J (2u - 1) (numba twin of :func:`jitter_py`)."""
    return 1.0 + j * (2.0 * u - 1.0)


@njit(cache=True, inline="always")
def draw_jitter(state, row, index, kind, seed, j):
    """Jitter factor U = 1 + j (2u - 1) drawn on stream ``(kind, index)`` with the counter
    ``state[row, index]`` (a float64 struct-of-arrays row), which is then incremented.

    The draw of every compiled rule; its Python twins compute ``jitter_py(j,
    uniform01_py(seed, stream_key_py(kind, index), counter))`` and increment their counter.
    The integers are passed on as int64, so that a rule's constant row and stream kind do
    not compile one copy of the draw each.
    """
    return _draw_jitter(state, np.int64(row), np.int64(index), np.int64(kind), np.int64(seed), j)


@njit(cache=True)
def _draw_jitter(state, row, index, kind, seed, j):
    u = uniform01(seed, stream_key(kind, index), np.int64(state[row, index]))
    state[row, index] += 1.0
    return 1.0 + j * (2.0 * u - 1.0)
