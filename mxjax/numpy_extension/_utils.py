"""``mx.npx`` mode switches and file I/O (the parts of npx that are not operators)."""
from __future__ import annotations

from typing import Any

from ..graph import compile_cache
from .._array_io import load_arrays, save_npx, savez
from ..util import (is_np_array, is_np_default_dtype, is_np_shape, np_array, np_shape, reset_np,
                       set_np, set_np_default_dtype)
from .._ndarray import waitall
from ..numpy.multiarray import ndarray

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "is_np_default_dtype",
           "set_np_default_dtype", "np_array", "np_shape", "waitall", "save", "savez", "load",
           "set_compile_cache", "compile_stats"]


def set_compile_cache(max_entries: int | None = None, max_bytes: int | None = None) -> dict:
    """Bound the compiled programs kept for imperative ops and hybridized blocks: past ``max_entries``
    programs or ``max_bytes`` (their executables' size) the least recently used are dropped and compile
    again when next needed.  None keeps a limit, 0 removes it; returns the previous limits.  The defaults
    come from ``MXNET_COMPILE_CACHE_SIZE`` (1024) and ``MXNET_COMPILE_CACHE_BYTES`` (1 GiB)."""
    return compile_cache.set_limits(max_entries, max_bytes)


def compile_stats() -> dict:
    """The compile cache's counts: ``hits``, ``misses`` and ``evictions`` so far; ``entries`` and
    ``bytes`` kept now (``by_kind``: ``op`` and ``block`` programs); the limits."""
    return compile_cache.stats()


def save(file: Any, arr: Any) -> None:
    """Save one ndarray as ``.npy``, or a list/dict of ndarrays as ``.npz`` (MXNet 2's format)."""
    save_npx(file, arr)


def load(file: Any) -> Any:
    """Load ``.npy`` (one ndarray), ``.npz`` (dict) or MXNet's legacy ``.params`` (list or dict)."""
    return load_arrays(file, ndarray)
