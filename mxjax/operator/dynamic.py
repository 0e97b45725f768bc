"""Dynamic-shape ops: row selection by a mask, and creation/reshape ops whose shape is an input array.

Their output shape depends on input *values*, so they are flagged ``dynamic_shape``:
they run on concrete arrays, never inside one XLA program (deferred compute runs
them at once and records them; autograd differentiates them eagerly).  The other
dynamic ops live with their families: nonzero/argwhere/unique in ``sorting.py``,
compress/extract in ``numpy_extra.py``, ``x[mask]`` in ``core.py``.

The ``*_by_shape_array`` ops are the seed's "symbol shape": ``np.zeros(npx.shape_array(x))``
or a shape computed from data keeps the shape in the graph as an input instead of
baking its value into a parameter.  A shape array must be an integer array of at
most one dimension with no negative entries (reshape accepts its -1 to -6 codes).
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetTypeError, MXNetValueError
from ._dtypes import resolve_dtype
from ._reshape import npx_shape
from .creation import _check_order, _fill_dtype
from .registry import defop, dynamic_shape_error


def _host(op: str, what: str, x: Any) -> onp.ndarray:
    """The concrete values of an input the output shape depends on (a clear error under a trace)."""
    if isinstance(x, jax.core.Tracer):
        raise dynamic_shape_error(op, what)
    return onp.asarray(x)


def shape_values(op: str, registered: str, shape: Any, allow_codes: bool = False) -> tuple:
    """A shape array's entries as ints: integer dtype, at most 1-D, no negatives unless ``allow_codes``
    (errors name the front-end ``op``; the dynamic-shape error the ``registered`` op)."""
    dtype = onp.dtype(jnp.asarray(shape).dtype)
    if dtype.kind not in "iu":
        raise MXNetTypeError(f"{op}: a shape array must have an integer dtype, got {dtype.name}")
    if jnp.ndim(shape) > 1:
        raise MXNetValueError(f"{op}: a shape array must be 0-D or 1-D, got an array of shape {jnp.shape(shape)}")
    values = tuple(int(v) for v in _host(registered, "its shape array", shape).reshape(-1))
    if not allow_codes and any(v < 0 for v in values):
        raise MXNetValueError(f"{op}: negative dimensions are not allowed, got shape array {list(values)}")
    return values


# ----------------------------------------------------------------------------- selection by a mask

@defop("_contrib_boolean_mask", aliases=("_npi_boolean_mask", "_npx_boolean_mask"), dynamic_shape=True)
def boolean_mask(data, index, *, axis: int = 0):
    """The slices of ``data`` along ``axis`` where the 1-D ``index`` is non-zero (MXNet's rule: any dtype,
    not only bool; NaN counts as non-zero).  The gradient scatters back to the selected slices, zeros
    elsewhere.  MXNet supports only ``axis=0``; mxjax takes any axis."""
    axis, rows = mask_rows(jnp.shape(data), index, axis)
    return jnp.take(data, rows, axis=axis)


def check_mask(shape: tuple, index_shape: tuple, axis: int) -> int:
    """``boolean_mask``'s checks on shapes alone; returns the normalized axis."""
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise MXNetValueError(f"boolean_mask: axis {axis} is out of bounds for data of shape {tuple(shape)}")
    axis %= ndim
    if len(index_shape) != 1:
        raise MXNetValueError(f"boolean_mask: index must be 1-D, got shape {tuple(index_shape)}")
    if index_shape[0] != shape[axis]:
        raise MXNetValueError(
            f"boolean_mask: index of length {index_shape[0]} does not match data of shape "
            f"{tuple(shape)} along axis {axis} (size {shape[axis]})")
    return axis


def mask_rows(shape: tuple, index: Any, axis: int) -> tuple[int, onp.ndarray]:
    """``boolean_mask``'s checks and the selected positions: (normalized axis, int64 positions)."""
    axis = check_mask(shape, jnp.shape(index), axis)
    return axis, onp.flatnonzero(_host("_contrib_boolean_mask", "its index", index))


# ----------------------------------------------------------------------------- rows padded to a bucket

def _row_mask(data: Any, valid: Any, axis: int) -> Any:
    """Which entries along ``axis`` are real: the first ``valid`` (a count), or where ``valid`` (a 1-D mask
    over the axis, any dtype, non-zero meaning real) is set."""
    size = jnp.shape(data)[axis]
    keep = jnp.arange(size) < valid if jnp.ndim(valid) == 0 else jnp.asarray(valid) != 0
    return keep.reshape([size if d == axis else 1 for d in range(jnp.ndim(data))])


@defop("_mask_rows")
def mask_padded_rows(data, valid, *, axis: int = 0, fill: str = "zero"):
    """``data`` with the entries that are not real along ``axis`` (past the first ``valid``, or where the
    mask ``valid`` is zero) replaced by ``fill`` (zero, one, lowest or highest): a reduction over rows
    padded to a size bucket, or over rows a mask leaves in place, then ignores them
    (``mxjax/dynamic/buckets.py`` puts this before ``sum``/``max``/... of padded rows)."""
    dtype = jnp.result_type(data)
    if fill not in ("zero", "one", "lowest", "highest"):
        raise MXNetValueError(f"_mask_rows: fill must be zero, one, lowest or highest, got {fill!r}")
    if fill in ("zero", "one"):
        value = 0 if fill == "zero" else 1
    elif jnp.issubdtype(dtype, jnp.inexact):
        value = -jnp.inf if fill == "lowest" else jnp.inf
    else:
        value = jnp.iinfo(dtype).min if fill == "lowest" else jnp.iinfo(dtype).max
    return jnp.where(_row_mask(data, valid, axis), data, jnp.asarray(value, dtype))


@defop("_rescale_mean_rows")
def rescale_mean_rows(data, valid, rows, *, axis: int = 0):
    """A mean taken over all of ``rows`` along ``axis`` turned into the mean over the real ones (the first
    ``valid``, or where the mask ``valid`` is set): ``data * rows.shape[axis] / count``."""
    dtype = jnp.result_type(data)
    count = valid if jnp.ndim(valid) == 0 else jnp.sum(jnp.asarray(valid) != 0)
    return data * (jnp.asarray(jnp.shape(rows)[axis], dtype) / count).astype(dtype)


# ----------------------------------------------------------------------------- shape given as an array

@defop("_zeros_by_shape_array", dynamic_shape=True)
def zeros_by_shape_array(shape, *, dtype: dtype | None = None, order: str = "C"):
    """``zeros`` of the shape held by an integer array (``dtype=None``: the default float dtype)."""
    _check_order("zeros", order)
    return jnp.zeros(shape_values("zeros", "_zeros_by_shape_array", shape), resolve_dtype(dtype))


@defop("_ones_by_shape_array", dynamic_shape=True)
def ones_by_shape_array(shape, *, dtype: dtype | None = None, order: str = "C"):
    """``ones`` of the shape held by an integer array (``dtype=None``: the default float dtype)."""
    _check_order("ones", order)
    return jnp.ones(shape_values("ones", "_ones_by_shape_array", shape), resolve_dtype(dtype))


@defop("_full_by_shape_array", dynamic_shape=True)
def full_by_shape_array(shape, fill_value, *, dtype: dtype | None = None, order: str = "C"):
    """``full`` of the shape held by an integer array (dtype as ``full``: explicit, else from the fill)."""
    _check_order("full", order)
    return jnp.full(shape_values("full", "_full_by_shape_array", shape), fill_value, _fill_dtype(fill_value, dtype))


@defop("_reshape_by_shape_array", dynamic_shape=True)
def reshape_by_shape_array(a, shape, *, reverse: bool = False, order: str = "C"):
    """``a`` reshaped to the shape held by an integer array (one -1 is inferred; ``npx.reshape``'s
    codes -2 to -6 apply too).  Differentiable with respect to ``a``."""
    spec = shape_values("reshape", "_reshape_by_shape_array", shape, allow_codes=True)
    return jnp.reshape(a, npx_shape(tuple(jnp.shape(a)), spec, reverse), order=order)


@defop("_broadcast_to_by_shape_array", dynamic_shape=True)
def broadcast_to_by_shape_array(array, shape):
    """``array`` broadcast (NumPy's rules) to the shape held by an integer array; differentiable
    with respect to ``array``."""
    target, source = shape_values("broadcast_to", "_broadcast_to_by_shape_array", shape), tuple(jnp.shape(array))
    tail = target[len(target) - len(source):] if len(source) <= len(target) else None
    if tail is None or any(s not in (1, t) for s, t in zip(source, tail)):
        raise MXNetValueError(f"broadcast_to: cannot broadcast an array of shape {source} to shape {target}")
    return jnp.broadcast_to(array, target)
