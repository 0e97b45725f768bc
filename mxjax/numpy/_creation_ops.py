"""``mx.np`` creation functions: filled arrays, ranges, matrices, grids (ops in ``operator/creation.py``).

``dtype=None`` gives MXNet's default float dtype (float32; float64 after
``npx.set_np(dtype=True)``) where NumPy would give float64 or int64; every
function takes ``ctx=``/``device=`` to place its result.
"""
from __future__ import annotations

from typing import Any

from .._frontend import create, listed
from ..base import normalize_dtype
from ..device import Device
from .._invoke import invoke, np_class
from ..operator import get_op
from ._maker import by_shape_array, np_function

_SHAPE_ARGS = ("shape", "dtype", "order")
_FULL_ARGS = ("shape", "fill_value", "dtype", "order")
# a shape given as an mx array (computed from data) runs the dynamic-shape op taking it as an input
zeros = by_shape_array(np_function("zeros", positional=_SHAPE_ARGS),
                       np_function("_zeros_by_shape_array", name="zeros", positional=_SHAPE_ARGS), 0, "shape")
ones = by_shape_array(np_function("ones", positional=_SHAPE_ARGS),
                      np_function("_ones_by_shape_array", name="ones", positional=_SHAPE_ARGS), 0, "shape")
empty = by_shape_array(np_function("zeros", name="empty", positional=_SHAPE_ARGS,
                                   note="mxjax fills ``empty`` arrays with zeros."),
                       np_function("_zeros_by_shape_array", name="empty", positional=_SHAPE_ARGS), 0, "shape")
full = by_shape_array(np_function("full", positional=_FULL_ARGS),
                      np_function("_full_by_shape_array", name="full", positional=_FULL_ARGS), 0, "shape")
zeros_like = np_function("zeros_like", positional=("a", "dtype", "order", "subok", "shape"))
ones_like = np_function("ones_like", positional=("a", "dtype", "order", "subok", "shape"))
empty_like = np_function("zeros_like", name="empty_like", positional=("a", "dtype", "order", "subok", "shape"),
                         note="mxjax fills ``empty_like`` arrays with zeros.")
full_like = np_function("full_like", positional=("a", "fill_value", "dtype", "order", "subok", "shape"))
arange = np_function("arange", positional=("start", "stop", "step", "dtype"))
linspace = np_function("linspace", positional=("start", "stop", "num", "endpoint", "retstep", "dtype", "axis"))
logspace = np_function("logspace", positional=("start", "stop", "num", "endpoint", "base", "dtype", "axis"))
geomspace = np_function("geomspace", positional=("start", "stop", "num", "endpoint", "dtype", "axis"))
eye = np_function("eye", positional=("N", "M", "k", "dtype", "order"))
tri = np_function("tri", positional=("N", "M", "k", "dtype"))
tril = np_function("tril")
triu = np_function("triu")
diag = np_function("diag")
diagflat = np_function("diagflat")
vander = np_function("vander")
indices = np_function("indices", positional=("dimensions", "dtype", "sparse"))


def _binds(op_name: str) -> Any:
    """Mark a Python front-end function with the one op it calls (``fn.op``, as generated bindings have)."""
    def wrap(fn: Any) -> Any:
        fn.op = get_op(op_name)
        return fn
    return wrap


@_binds("_npi_identity")
def identity(n: int, dtype: Any = None, *, like: Any = None, ctx: Device | None = None,
             device: Device | None = None) -> ndarray:
    """The n x n identity matrix (``dtype=None``: the default float dtype)."""
    params: dict[str, Any] = {"shape": (int(n), int(n))}
    if dtype is not None:
        params["dtype"] = normalize_dtype(dtype).name
    return create(get_op("_npi_identity"), [], params, np_class(), device or ctx)


@_binds("meshgrid")
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list:
    """Coordinate matrices from coordinate vectors: a list with one array per input, as MXNet 2.0
    gives it (NumPy 2 gives a tuple).

    ``copy`` is accepted for NumPy compatibility: mxjax results never alias their inputs."""
    return listed(invoke(get_op("meshgrid"), list(xi), {"indexing": indexing, "sparse": bool(sparse)}, np_class()))


__all__ = ["zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange",
           "linspace", "logspace", "geomspace", "eye", "identity", "tri", "tril", "triu", "diag", "diagflat",
           "vander", "indices", "meshgrid"]
