"""``mx.nd.utils``: array creation and the ``.params`` file I/O (MXNet's ``mxnet.ndarray.utils``).

``zeros``/``empty``/``array`` accept MXNet's ``stype`` argument; only dense ('default')
storage exists, and a sparse one raises the error of ``mx.nd.sparse``.
"""
from __future__ import annotations

from typing import Any

from .._ndarray import NDArray
from ..device import Device
from . import _functions
from ._extra import load_frombuffer, sparse_error
from ._io import load, save

__all__ = ["zeros", "empty", "array", "load", "load_frombuffer", "save"]


def zeros(shape: Any, ctx: Device | None = None, dtype: Any = None, stype: str | None = None,
          **kwargs: Any) -> NDArray:
    """A new array of zeros (float32 unless ``dtype``); dense storage only."""
    if stype not in (None, "default"):
        raise sparse_error("zeros", stype)
    return _functions.zeros(shape, ctx=ctx, dtype=dtype, **kwargs)


def empty(shape: Any, ctx: Device | None = None, dtype: Any = None, stype: str | None = None) -> NDArray:
    """A new array (zeros: XLA has no uninitialised memory); dense storage only."""
    if stype not in (None, "default"):
        raise sparse_error("empty", stype)
    return _functions.empty(shape, ctx=ctx, dtype=dtype)


def array(source_array: Any, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """A new dense NDArray from any array-like."""
    if getattr(source_array, "stype", "default") != "default":
        raise sparse_error("array", source_array.stype)
    return _functions.array(source_array, ctx=ctx, dtype=dtype)
