"""``mx.nd.save`` / ``mx.nd.load``: MXNet's ``.params`` list format, byte-compatible with MXNet 1.x."""
from __future__ import annotations

from typing import Any

from .._array_io import load_arrays, save_params
from .._ndarray import NDArray
from ..numpy.multiarray import ndarray

__all__ = ["save", "load"]


def save(fname: Any, data: Any) -> None:
    """Save an NDArray, a list or a str-keyed dict of NDArrays in MXNet's ``.params`` format.

    Legacy NDArrays give v2 records (as MXNet 1.x's ``nd.save``); if any array is an
    ``mx.np.ndarray`` or 0-d, v3 records (as MXNet 1.x in NumPy mode).
    """
    save_params(fname, data)


def load(fname: Any) -> Any:
    """Load a ``.params`` (any record version), ``.npz`` or ``.npy`` file: a list or dict of arrays.

    v0-v2 records give NDArrays; v3 records (NumPy semantics) and NumPy files give ``mx.np.ndarray``.
    """
    return load_arrays(fname, NDArray, np_cls=ndarray)
