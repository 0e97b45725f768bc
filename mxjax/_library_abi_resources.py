"""The host resources ``OpResource`` hands to an extension library's callbacks.

The workspace allocator (``alloc_cpu``/``alloc_gpu``/``alloc_sparse``, as C callbacks) and the
``std::mt19937`` CPU random states.  Separate from :mod:`mxjax._library_abi` (the ctypes calls
themselves) because this is state the host owns across calls, not the call marshalling.
"""
from __future__ import annotations

import ctypes
import itertools
import threading

import numpy as onp

from . import _rng

__all__ = ["ensure_cpu_states", "reseed_cpu_states"]

_c_int64_p = ctypes.POINTER(ctypes.c_int64)
_c_void_pp = ctypes.POINTER(ctypes.c_void_p)

# OpResource's callbacks into the host: workspace memory and sparse outputs
_XPU_MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
_SPARSE_MALLOC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  _c_void_pp, ctypes.POINTER(_c_int64_p), ctypes.POINTER(_c_int64_p))


# --------------------------------------------------------------------------- workspace memory

class _Workspaces:
    """Buffers ``OpResource::alloc_cpu`` hands out, kept alive until their call returns.

    Every compute call gets a ticket passed as the allocator's opaque handle, so calls on
    several threads (host callbacks of compiled programs) keep separate buffers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffers: dict[int, list] = {}
        self._tickets = itertools.count(1)
        self.cpu = _XPU_MALLOC(self._alloc_cpu)
        self.gpu = _XPU_MALLOC(lambda handle, size: None)  # host buffers only: no device memory to give
        self.sparse = _SPARSE_MALLOC(lambda *args: None)   # tensors are dense: never asked for

    def open(self) -> int:
        with self._lock:
            ticket = next(self._tickets)
            self._buffers[ticket] = []
        return ticket

    def close(self, ticket: int) -> None:
        with self._lock:
            self._buffers.pop(ticket, None)

    def _alloc_cpu(self, handle: int | None, size: int) -> int | None:
        if size < 0:
            return None
        buf = onp.zeros(size + 64, onp.uint8)
        address = buf.ctypes.data
        offset = (-address) % 64  # 64-byte aligned, as MXNet's storage
        with self._lock:
            owned = self._buffers.get(handle or 0)
            if owned is None:
                return None
            owned.append(buf)
        return address + offset


_WORKSPACES = _Workspaces()


# --------------------------------------------------------------------------- random states

_NUM_CPU_STATES = 1024     # MX_NUM_CPU_RANDOM_STATES
_MT_WORDS = 624            # std::mt19937: 624 words of uint_fast32_t (8 bytes here) and an index
_cpu_states: onp.ndarray | None = None
_states_lock = threading.Lock()


def reseed_cpu_states(seed: int) -> None:
    """Seed the ``std::mt19937`` states ``OpResource::get_cpu_rand_states`` returns: state ``i``
    gets seed ``seed + i`` (mod 2**32), initialised as ``std::mt19937(seed + i)`` would be."""
    global _cpu_states
    words = onp.zeros((_NUM_CPU_STATES, _MT_WORDS + 1), onp.uint64)
    x = (onp.arange(_NUM_CPU_STATES, dtype=onp.uint64) + onp.uint64(seed)) & onp.uint64(0xFFFFFFFF)
    words[:, 0] = x
    for i in range(1, _MT_WORDS):
        x = (onp.uint64(1812433253) * (x ^ (x >> onp.uint64(30))) + onp.uint64(i)) & onp.uint64(0xFFFFFFFF)
        words[:, i] = x
    words[:, _MT_WORDS] = _MT_WORDS  # the engine's position: the next draw regenerates the block
    with _states_lock:
        _cpu_states = words


def ensure_cpu_states() -> None:
    """Create the random states once, seeded from mxjax's stream (so ``mx.random.seed`` before the
    first ``mx.library.load`` reproduces them).  Called at load, not inside a host callback."""
    if _cpu_states is None:
        key = onp.asarray(_rng.next_key()).astype(onp.uint64)
        reseed_cpu_states(int(key[-1]))


def _cpu_states_pointer() -> int:
    ensure_cpu_states()
    return _cpu_states.ctypes.data  # type: ignore[union-attr]
