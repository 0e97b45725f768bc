"""``mx.npx`` mode switches and file I/O (the parts of npx that are not operators)."""
from __future__ import annotations

from typing import Any

from .._array_io import load_arrays, save_npx, savez
from ..util import (is_np_array, is_np_default_dtype, is_np_shape, np_array, np_shape, reset_np,
                       set_np, set_np_default_dtype)
from .._ndarray import waitall
from ..numpy.multiarray import ndarray

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "is_np_default_dtype",
           "set_np_default_dtype", "np_array", "np_shape", "waitall", "save", "savez", "load"]


def save(file: Any, arr: Any) -> None:
    """Save one ndarray as ``.npy``, or a list/dict of ndarrays as ``.npz`` (MXNet 2's format)."""
    save_npx(file, arr)


def load(file: Any) -> Any:
    """Load ``.npy`` (one ndarray), ``.npz`` (dict) or MXNet's legacy ``.params`` (list or dict)."""
    return load_arrays(file, ndarray)
