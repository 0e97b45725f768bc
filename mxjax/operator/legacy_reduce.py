"""Legacy (MXNet 1.x) reductions, index searches and sorts.

They differ from the NumPy ops of the same public names: ``exclude=`` inverts the
axes, results keep the input dtype (integer sums stay int32, ``argmax`` returns its
indices in the input dtype, so float32 for float32 input), and a reduction to a
scalar gives shape ``(1,)`` because 1.x arrays have no 0-d form.
"""
from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
from jax import lax

from ..base import MXNetTypeError, MXNetValueError
from ._dtypes import resolve_dtype, to_float
from .registry import OpDef, defop, register


def one_d(out):
    """1.x has no 0-d arrays: a full reduction gives shape (1,)."""
    return out.reshape(1) if out.ndim == 0 else out


def norm_axis(axis: int, ndim: int, op: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise MXNetValueError(f"{op}: axis {axis} is out of range for an input of {ndim} dimensions")
    return axis % ndim if ndim else 0


def reduce_axes(shape: tuple, axis, exclude: bool, op: str) -> tuple:
    """The axes a legacy reduction runs over (``axis`` None or () means all)."""
    ndim = len(shape)
    if axis is None or axis == ():
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(norm_axis(a, ndim, op) for a in axes)
    if len(set(axes)) != len(axes):
        raise MXNetValueError(f"{op}: duplicate axes {axis} for an input of shape {shape}")
    if exclude:
        return tuple(a for a in range(ndim) if a not in axes)
    return axes


def _accum_dtype(dtype):
    return jnp.int64 if dtype == jnp.bool_ else dtype


def _sum(x, axes, keepdims):
    return jnp.sum(x, axis=axes, keepdims=keepdims, dtype=_accum_dtype(x.dtype))


def _mean(x, axes, keepdims):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.mean(x, axis=axes, keepdims=keepdims, dtype=x.dtype)
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = _sum(x, axes, keepdims)
    return lax.div(total, jnp.asarray(max(count, 1), total.dtype))  # MXNet divides in the dtype


def _prod(x, axes, keepdims):
    return jnp.prod(x, axis=axes, keepdims=keepdims, dtype=_accum_dtype(x.dtype))


def _nansum(x, axes, keepdims):
    return jnp.nansum(x, axis=axes, keepdims=keepdims, dtype=_accum_dtype(x.dtype))


def _nanprod(x, axes, keepdims):
    return jnp.nanprod(x, axis=axes, keepdims=keepdims, dtype=_accum_dtype(x.dtype))


def _max(x, axes, keepdims):
    return jnp.max(x, axis=axes, keepdims=keepdims)


def _min(x, axes, keepdims):
    return jnp.min(x, axis=axes, keepdims=keepdims)


def _reduce_op(name: str, fn: Callable, doc: str) -> Callable:
    def compute(data, *, axis: axis | None = None, keepdims: bool = False, exclude: bool = False):
        axes = reduce_axes(tuple(data.shape), axis, exclude, name)
        if data.size == 0 and fn in (_max, _min) and axes:
            raise MXNetValueError(f"{name}: cannot reduce an empty array of shape {tuple(data.shape)}")
        return one_d(fn(data, axes, keepdims).astype(data.dtype))
    compute.__doc__ = f"Legacy {doc} over ``axis`` (all axes if None; the others if ``exclude``)."
    return compute


# op name: (reduction, aliases, doc); the 1.x JSON names are in legacy.LEGACY_JSON_NAMES
_REDUCE = {
    "_legacy_sum": (_sum, ("sum_axis",), "sum"),
    "_legacy_mean": (_mean, (), "mean"),
    "_legacy_prod": (_prod, (), "product"),
    "_legacy_nansum": (_nansum, (), "sum treating NaN as 0"),
    "_legacy_nanprod": (_nanprod, (), "product treating NaN as 1"),
    "_legacy_max": (_max, ("max_axis",), "maximum"),
    "_legacy_min": (_min, ("min_axis",), "minimum"),
}
for _name, (_fn, _aliases, _doc) in _REDUCE.items():
    register(OpDef(_name, _reduce_op(_name, _fn, _doc), aliases=_aliases))


@defop("_legacy_norm")
def legacy_norm(data, *, ord: int = 2, axis: axis | None = None, out_dtype: dtype | None = None,
                keepdims: bool = False):
    """Legacy ``norm``: the L1 or L2 norm (sqrt of the sum of squares) over ``axis`` (all if None)."""
    if ord not in (1, 2):
        raise MXNetValueError(f"norm: ord must be 1 or 2, got {ord}")
    axes = reduce_axes(tuple(data.shape), axis, False, "norm")
    x = to_float(data)
    if ord == 1:
        out = jnp.sum(jnp.abs(x), axis=axes, keepdims=keepdims)
    else:
        out = jnp.sqrt(jnp.sum(jnp.square(jnp.abs(x)), axis=axes, keepdims=keepdims))
    return one_d(out.astype(resolve_dtype(out_dtype, x.dtype)))


def _search(name: str, fn: Callable, data, axis, keepdims):
    if data.dtype == jnp.bool_:  # the index is given in the input dtype, which bool cannot hold
        raise MXNetTypeError(f"{name}: a bool input (shape {tuple(data.shape)}) is not supported in mx.nd; "
                             "expected a numeric dtype")
    if data.size == 0:
        raise MXNetValueError(f"{name}: attempt to get {name} of an empty array of shape {tuple(data.shape)}")
    if axis is None:
        out = fn(data.reshape(-1))
        out = out.reshape((1,) * data.ndim) if keepdims else out
    else:
        out = fn(data, axis=norm_axis(axis, data.ndim, name), keepdims=keepdims)
    return one_d(out.astype(data.dtype))  # MXNet gives indices in the input dtype


@defop("_legacy_argmax")
def legacy_argmax(data, *, axis: int | None = None, keepdims: bool = False):
    """Legacy ``argmax``: first index of the maximum, as a number of the input dtype (float32 for float32)."""
    return _search("argmax", jnp.argmax, data, axis, keepdims)


@defop("_legacy_argmin")
def legacy_argmin(data, *, axis: int | None = None, keepdims: bool = False):
    """Legacy ``argmin``: first index of the minimum, as a number of the input dtype."""
    return _search("argmin", jnp.argmin, data, axis, keepdims)


@defop("argmax_channel")
def argmax_channel(data):
    """Index of the maximum along axis 1 (the channel axis), in the input dtype."""
    if data.ndim < 2:
        raise MXNetValueError(f"argmax_channel: expected an input of at least 2 dimensions, got {tuple(data.shape)}")
    return _search("argmax_channel", jnp.argmax, data, 1, False)


def _sort_input(data, axis, op):
    if axis is None:
        return data.reshape(-1), 0
    return data, norm_axis(axis, data.ndim, op)


@defop("_legacy_sort")
def legacy_sort(data, *, axis: int | None = -1, is_ascend: bool = True):
    """Legacy ``sort`` along ``axis`` (flattened if None), ascending unless ``is_ascend`` is False."""
    x, ax = _sort_input(data, axis, "sort")
    return jnp.sort(x, axis=ax, descending=not is_ascend)


@defop("_legacy_argsort")
def legacy_argsort(data, *, axis: int | None = -1, is_ascend: bool = True, dtype: dtype = "float32"):
    """Legacy ``argsort``: the sorting indices, as ``dtype`` (float32 by default)."""
    x, ax = _sort_input(data, axis, "argsort")
    return jnp.argsort(x, axis=ax, descending=not is_ascend).astype(dtype)
