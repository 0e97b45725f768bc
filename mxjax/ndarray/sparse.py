"""``mx.nd.sparse``: the sparse-array constructors of MXNet 1.x, kept so that code importing them
gets a clear message.  mxjax arrays are dense only (XLA has no sparse storage, and MXNet 2.0
deprecates it): ``csr_matrix`` and ``row_sparse_array`` raise ``MXNetValueError`` saying to
use dense arrays; ``zeros``/``empty``/``array``/``cast_storage`` work for ``stype='default'``.
"""
from __future__ import annotations

from typing import Any

from .._ndarray import NDArray
from ..device import Device
from . import utils
from ._extra import cast_storage, sparse_error

__all__ = ["csr_matrix", "row_sparse_array", "cast_storage", "zeros", "empty", "array"]


def csr_matrix(arg1: Any, shape: Any = None, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """Compressed-sparse-row arrays do not exist in mxjax: raises, naming the dense replacement."""
    raise sparse_error("csr_matrix", "csr")


def row_sparse_array(arg1: Any, shape: Any = None, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """Row-sparse arrays do not exist in mxjax: raises, naming the dense replacement."""
    raise sparse_error("row_sparse_array", "row_sparse")


def zeros(stype: str, shape: Any, ctx: Device | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """A dense array of zeros for ``stype='default'``; sparse storage types raise."""
    return utils.zeros(shape, ctx=ctx, dtype=dtype, stype=stype, **kwargs)


def empty(stype: str, shape: Any, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """A dense array for ``stype='default'``; sparse storage types raise."""
    return utils.empty(shape, ctx=ctx, dtype=dtype, stype=stype)


array = utils.array
