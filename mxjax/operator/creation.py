"""Array creation ops: filled arrays, ranges, identity-like matrices, triangles, grids.

Creation ops take their shape as a parameter and have no array inputs (the
``*_like`` ops take the template array); fill values, range ends and bases are
inputs, so one compiled program serves every value.  ``dtype=None`` gives
MXNet's default float dtype (float32, float64 after ``npx.set_np(dtype=True)``)
where NumPy would give float64.  ``order`` is accepted for NumPy compatibility
and has no effect: mxjax arrays expose no memory layout.

The ops named ``_npi_*`` are the parameter-only spellings MXNet 2 writes into
symbol JSON (fill value / range ends as attributes), kept so exported graphs load.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetValueError
from ._checked import host
from ._dtypes import default_float, fix_float, resolve_dtype
from .registry import defop

_ORDERS = ("C", "F", "A", "K")


def _shape(op: str, shape: Any) -> tuple:
    shape = (shape,) if isinstance(shape, (int, onp.integer)) else tuple(shape)
    if any(int(d) < 0 for d in shape):
        raise MXNetValueError(f"{op}: negative dimensions are not allowed, got shape {shape}")
    return tuple(int(d) for d in shape)


def _check_order(op: str, order: str) -> None:
    if order not in _ORDERS:
        raise MXNetValueError(f"{op}: order must be one of 'C', 'F', 'A', 'K', got {order!r}")


def _fill_dtype(fill: Any, dtype: Any) -> Any:
    """MXNet 2.0's ``full`` dtype: explicit, else bool for a bool fill, the fill array's dtype for an
    array, int64 for a Python int (as NumPy; checked in 2.0.0b1, whose docstring still shows floats)
    and the default float for a Python float (where NumPy gives float64)."""
    if dtype is not None:
        return jnp.dtype(dtype)
    fill = jnp.asarray(fill)
    if fill.dtype == jnp.bool_:
        return fill.dtype
    if getattr(getattr(fill, "aval", None), "weak_type", getattr(fill, "weak_type", False)):
        if jnp.issubdtype(fill.dtype, jnp.complexfloating):
            return jnp.result_type(default_float(), jnp.complex64)
        if jnp.issubdtype(fill.dtype, jnp.integer):
            return jnp.dtype(jnp.int64)
        return default_float()
    return fill.dtype


def _check_num(op: str, num: int) -> None:
    if num < 0:
        raise MXNetValueError(f"{op}: number of samples, {num}, must be non-negative")


# ----------------------------------------------------------------------------- filled arrays

@defop("zeros", aliases=("_npi_zeros",))
def zeros(*, shape: shape = (), dtype: dtype | None = None, order: str = "C"):
    """A new array of zeros (``dtype=None``: the default float dtype)."""
    _check_order("zeros", order)
    return jnp.zeros(_shape("zeros", shape), resolve_dtype(dtype))


@defop("ones", aliases=("_npi_ones",))
def ones(*, shape: shape = (), dtype: dtype | None = None, order: str = "C"):
    """A new array of ones (``dtype=None``: the default float dtype)."""
    _check_order("ones", order)
    return jnp.ones(_shape("ones", shape), resolve_dtype(dtype))


@defop("full")
def full(fill_value, *, shape: shape = (), dtype: dtype | None = None, order: str = "C"):
    """A new array filled with ``fill_value`` (broadcast to ``shape``)."""
    _check_order("full", order)
    return jnp.full(_shape("full", shape), fill_value, _fill_dtype(fill_value, dtype))


@defop("_npi_full")
def _npi_full(*, shape: shape = (), value: float = 0.0, dtype: dtype | None = None):
    """``full`` with the fill value as a parameter (MXNet 2's symbol-JSON form)."""
    return jnp.full(_shape("_npi_full", shape), value, resolve_dtype(dtype))


def _like_shape(a: Any, shape: Any) -> tuple:
    return tuple(a.shape) if shape is None else _shape("full_like", shape)


@defop("zeros_like", aliases=("_np_zeros_like",))
def zeros_like(a, *, dtype: dtype | None = None, order: str = "K", subok: bool = True,
               shape: shape | None = None):
    """An array of zeros with the shape and dtype of ``a``."""
    return jnp.zeros(_like_shape(a, shape), resolve_dtype(dtype, a.dtype))


@defop("ones_like", aliases=("_np_ones_like",))
def ones_like(a, *, dtype: dtype | None = None, order: str = "K", subok: bool = True,
              shape: shape | None = None):
    """An array of ones with the shape and dtype of ``a``."""
    return jnp.ones(_like_shape(a, shape), resolve_dtype(dtype, a.dtype))


@defop("full_like")
def full_like(a, fill_value, *, dtype: dtype | None = None, order: str = "K", subok: bool = True,
              shape: shape | None = None):
    """An array with the shape and dtype of ``a`` filled with ``fill_value``."""
    return jnp.full(_like_shape(a, shape), fill_value, resolve_dtype(dtype, a.dtype))


@defop("_npi_full_like")
def _npi_full_like(a, *, fill_value: float = 0.0, dtype: dtype | None = None):
    """``full_like`` with the fill value as a parameter (MXNet 2's symbol-JSON form)."""
    return jnp.full(a.shape, fill_value, resolve_dtype(dtype, a.dtype))


# ----------------------------------------------------------------------------- ranges

@defop("arange", aliases=("_npi_arange",))
def arange(*, start: float = 0.0, stop: float | None = None, step: float | None = 1.0, repeat: int = 1,
           infer_range: bool = False, dtype: dtype | None = None):
    """Evenly spaced values in [start, stop) (``dtype=None``: the default float dtype, as MXNet).

    ``repeat`` repeats each value that many times (MXNet's extension)."""
    if infer_range:
        raise MXNetValueError("arange: infer_range=True (stop taken from a symbol's shape) is not supported; "
                              "give stop explicitly")
    step = 1 if step is None else step
    if step == 0:
        raise MXNetValueError("arange: step must not be zero")
    if stop is None:
        start, stop = 0, start
    out = jnp.arange(start, stop, step, dtype=resolve_dtype(dtype))
    return jnp.repeat(out, repeat) if repeat != 1 else out


def _space_dtype(out: Any, dtype: Any, *inputs: Any) -> Any:
    return out if dtype is not None else fix_float(out, *inputs)


@defop("linspace")
def linspace(start, stop, *, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: dtype | None = None, axis: int = 0):
    """``num`` evenly spaced samples over [start, stop]; with retstep, also the spacing."""
    _check_num("linspace", num)
    out = jnp.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return _space_dtype(out[0], dtype, start, stop), fix_float(out[1], start, stop)
    return _space_dtype(out, dtype, start, stop)


@defop("_npi_linspace")
def _npi_linspace(*, start: float = 0.0, stop: float = 1.0, num: int = 50, endpoint: bool = True,
                  dtype: dtype | None = None):
    """``linspace`` with scalar ends as parameters (MXNet 2's symbol-JSON form)."""
    _check_num("_npi_linspace", num)
    return jnp.linspace(start, stop, num, endpoint, dtype=resolve_dtype(dtype))


@defop("logspace")
def logspace(start, stop, base=10.0, *, num: int = 50, endpoint: bool = True, dtype: dtype | None = None,
             axis: int = 0):
    """``num`` samples evenly spaced on a log scale: base ** linspace(start, stop)."""
    _check_num("logspace", num)
    out = jnp.logspace(start, stop, num, endpoint, base, dtype, axis)
    return _space_dtype(out, dtype, start, stop, base)


@defop("_npi_logspace")
def _npi_logspace(*, start: float = 0.0, stop: float = 1.0, num: int = 50, endpoint: bool = True,
                  base: float = 10.0, dtype: dtype | None = None):
    """``logspace`` with scalar ends and base as parameters (MXNet 2's symbol-JSON form)."""
    _check_num("_npi_logspace", num)
    return jnp.logspace(start, stop, num, endpoint, base, dtype=resolve_dtype(dtype))


def _check_geomspace(start: Any, stop: Any, **params: Any) -> None:
    for name, x in (("start", start), ("stop", stop)):
        if onp.any(host(x) == 0):
            raise MXNetValueError(f"geomspace: a geometric sequence cannot include zero ({name} is 0)")


@defop("geomspace", check=_check_geomspace)
def geomspace(start, stop, *, num: int = 50, endpoint: bool = True, dtype: dtype | None = None,
              axis: int = 0):
    """``num`` samples evenly spaced on a log scale between the end points themselves
    (a zero end point raises in imperative mode; gives NaN inside a traced graph)."""
    _check_num("geomspace", num)
    out = jnp.geomspace(start, stop, num, endpoint, dtype, axis)
    return _space_dtype(out, dtype, start, stop)


# ----------------------------------------------------------------------------- matrices

@defop("eye", aliases=("_npi_eye",))
def eye(*, N: int, M: int | None = None, k: int = 0, dtype: dtype | None = None, order: str = "C"):
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere."""
    _check_order("eye", order)
    _shape("eye", (N, N if M is None else M))
    return jnp.eye(N, M, k, dtype=resolve_dtype(dtype))


@defop("_npi_identity")
def _npi_identity(*, shape: shape = (), dtype: dtype | None = None):
    """The square identity matrix of ``shape`` (n, n) (``np.identity``)."""
    shape = _shape("identity", shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise MXNetValueError(f"identity: expected a square 2-D shape (n, n), got {shape}")
    return jnp.eye(shape[0], dtype=resolve_dtype(dtype))


@defop("tri", aliases=("_npi_tri",))
def tri(*, N: int, M: int | None = None, k: int = 0, dtype: dtype | None = None):
    """An N x M array with ones at and below the k-th diagonal."""
    _shape("tri", (N, N if M is None else M))
    return jnp.tri(N, M, k, dtype=resolve_dtype(dtype))


def _check_min_ndim(op: str, a: Any, ndim: int) -> None:
    if jnp.ndim(a) < ndim:
        raise MXNetValueError(f"{op}: input must be at least {ndim}-d, got shape {jnp.shape(a)}")


def _rows(m: Any) -> Any:
    """NumPy's tril/triu treat a 1-D input as the rows of a square matrix."""
    m = jnp.asarray(m)
    return jnp.broadcast_to(m, (m.shape[0], m.shape[0])) if m.ndim == 1 else m


@defop("tril", aliases=("_npi_tril",))
def tril(m, *, k: int = 0):
    """The lower triangle of (the last two axes of) ``m``, zeros above the k-th diagonal."""
    _check_min_ndim("tril", m, 1)
    return jnp.tril(_rows(m), k)


@defop("triu", aliases=("_npi_triu",))
def triu(m, *, k: int = 0):
    """The upper triangle of (the last two axes of) ``m``, zeros below the k-th diagonal."""
    _check_min_ndim("triu", m, 1)
    return jnp.triu(_rows(m), k)


@defop("diag", aliases=("_npi_diag", "_np_diag"))
def diag(v, *, k: int = 0):
    """The k-th diagonal of a 2-D array, or a 2-D array with 1-D ``v`` on its k-th diagonal."""
    if jnp.ndim(v) not in (1, 2):
        raise MXNetValueError(f"diag: input must be 1-d or 2-d, got shape {jnp.shape(v)}")
    return jnp.diag(v, k)


@defop("diagflat", aliases=("_npi_diagflat",))
def diagflat(v, *, k: int = 0):
    """A 2-D array with the flattened input on its k-th diagonal."""
    return jnp.diagflat(v, k)


@defop("vander")
def vander(x, *, N: int | None = None, increasing: bool = False):
    """The Vandermonde matrix of 1-D ``x``: columns are powers of x."""
    if jnp.ndim(x) != 1:
        raise MXNetValueError(f"vander: x must be a one-dimensional array, got shape {jnp.shape(x)}")
    if N is not None and N < 0:
        raise MXNetValueError(f"vander: N must be non-negative, got {N}")
    return jnp.vander(x, N, increasing)


# ----------------------------------------------------------------------------- grids

@defop("meshgrid")
def meshgrid(*xi, indexing: str = "xy", sparse: bool = False):
    """Coordinate matrices from coordinate vectors (one output per input)."""
    if indexing not in ("xy", "ij"):
        raise MXNetValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    return tuple(jnp.meshgrid(*xi, sparse=sparse, indexing=indexing))


@defop("indices", aliases=("_npi_indices",))
def indices(*, dimensions: shape = (), dtype: dtype | None = None, sparse: bool = False):
    """The index grid of an array of shape ``dimensions`` (int64; a tuple of arrays when sparse)."""
    out = jnp.indices(_shape("indices", dimensions), dtype=jnp.dtype(dtype or "int64"), sparse=sparse)
    return tuple(out) if sparse else out
