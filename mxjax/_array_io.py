"""Saving and loading NDArrays: MXNet's ``.params`` list format and NumPy's ``.npy``/``.npz``.

The byte-level formats live in :mod:`mxjax.serialization` (pure NumPy); this
module converts between them and NDArrays.  ``mx.nd.save`` writes v2 records (so
MXNet 1.x reads them back), ``npx.save`` writes ``.npy``/``.npz`` as MXNet 2 does.
Every loader accepts every format, told apart by the first bytes.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from . import _config, serialization
from .base import MXNetTypeError
from ._ndarray import NDArray, device_copy

__all__ = ["save_params", "load_arrays", "save_npx", "savez"]


def _host(value: Any, where: str) -> onp.ndarray:
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, onp.ndarray):
        return value
    raise MXNetTypeError(f"save: {where} must be an NDArray, got {type(value).__name__}")


def _to_host(data: Any) -> Any:
    if isinstance(data, NDArray):
        return [_host(data, "the array")]
    if isinstance(data, dict):
        for key in data:
            if not isinstance(key, str):
                raise MXNetTypeError(f"save: dictionary keys must be strings, got {type(key).__name__}")
        return {k: _host(v, f"entry {k!r}") for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_host(v, f"entry {i}") for i, v in enumerate(data)]
    raise MXNetTypeError(f"save: data must be an NDArray, a list or a dict of NDArrays, got {type(data).__name__}")


def save_params(fname: Any, data: Any, np_semantics: bool | None = None) -> None:
    """Write MXNet's binary list format: v2 records (legacy) or v3 records (NumPy shape semantics).

    By default the arrays decide: v3 when any is an ``mx.np.ndarray`` or 0-d (MXNet
    1.x reads those only in NumPy mode), else v2, so what ``load`` returned is saved
    back to the same bytes.
    """
    if np_semantics is None:
        values = data.values() if isinstance(data, dict) else data if isinstance(data, (list, tuple)) else [data]
        np_semantics = any(type(v) is not NDArray and isinstance(v, NDArray) or getattr(v, "ndim", 1) == 0
                           for v in values)
    serialization.save(fname, _to_host(data), np_semantics=np_semantics)


@_config.with_x64
def _wrap(value: Any, cls: type) -> Any:
    if value is None:
        return None
    if isinstance(value, serialization.SparseRecord):  # mxjax arrays are dense: densify
        value = value.todense()
    # onto the current device (cpu(0) by default, as MXNet loads them; JAX's default is a GPU
    # where there is one), in the file's dtype (bfloat16 included)
    return cls._wrap(device_copy(value))


def load_arrays(fname: Any, cls: type, np_cls: type | None = None) -> Any:
    """Load any supported file: a list, a dict, or one array (``.npy``).

    Arrays are of ``cls``; with ``np_cls`` given, records written with NumPy shape
    semantics (v3) become ``np_cls`` instead, so they save back as v3.
    """
    if hasattr(fname, "read"):
        buf = fname.read()
    else:
        with open(fname, "rb") as f:
            buf = f.read()
    with serialization.reading(fname, "NDArray file"):
        return _decode(buf, cls, np_cls)


def _decode(buf: bytes, cls: type, np_cls: type | None) -> Any:
    if serialization.detect_format(buf) != "params":
        loaded = serialization.loads(buf)
        if isinstance(loaded, dict):
            return {k: _wrap(v, np_cls or cls) for k, v in loaded.items()}
        return _wrap(loaded, np_cls or cls)
    loaded, versions = serialization.loads_params(buf, return_versions=True)
    classes = [np_cls if np_cls is not None and v == 3 else cls for v in versions]
    if isinstance(loaded, dict):
        return {k: _wrap(v, c) for (k, v), c in zip(loaded.items(), classes)}
    return [_wrap(v, c) for v, c in zip(loaded, classes)]


def save_npx(fname: Any, arr: Any) -> None:
    """``npx.save``: one array → ``.npy``; a list or dict of arrays → ``.npz``."""
    if isinstance(arr, NDArray):
        serialization.save_npy(fname, arr.asnumpy())
    elif isinstance(arr, dict):
        serialization.savez(fname, **_to_host(arr))
    elif isinstance(arr, (list, tuple)):
        serialization.savez(fname, *_to_host(arr))
    else:
        raise MXNetTypeError(f"npx.save: expected an ndarray, a list or a dict of ndarrays, got {type(arr).__name__}")


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """``npx.savez``: positional arrays as ``arr_0``, ``arr_1``, ..., keyword arrays by name."""
    serialization.savez(file, *[_host(a, f"argument {i}") for i, a in enumerate(args)],
                        **{k: _host(v, f"argument {k!r}") for k, v in kwds.items()})
