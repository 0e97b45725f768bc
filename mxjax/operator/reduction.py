"""Reductions: sum, prod, max, min, mean, std, var, arg-reductions, all/any, cumulative and NaN-aware ones.

MXNet's dtype rules (they differ from NumPy's): sum/prod/cumsum/cumprod keep an
integer input's dtype (NumPy widens to int64) and turn bool into int64; mean,
std and var give the default float dtype for integer input (float32, NumPy:
float64); index results (argmax...) are int64.  Statistics, products, sorting
and set operations live in the modules imported at the bottom.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetValueError
from ._dtypes import to_float
from .registry import defop


def check_axis(op: str, a: Any, axis: Any) -> None:
    """Raise NumPy's AxisError message (naming the op and the shape) for an out-of-range axis."""
    if axis is None:
        return
    ndim = jnp.ndim(a)
    axes = axis if isinstance(axis, tuple) else (axis,)
    for ax in axes:
        if not isinstance(ax, (int, onp.integer)) or isinstance(ax, bool):
            raise MXNetValueError(f"{op}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= ax < ndim:
            raise MXNetValueError(
                f"{op}: axis {ax} is out of bounds for array of dimension {ndim} (shape {tuple(jnp.shape(a))})")
    normalized = [ax % ndim for ax in axes]
    if len(set(normalized)) != len(normalized):
        raise MXNetValueError(f"{op}: repeated axis in {axis!r}")


def _sum_dtype(a: Any, dtype: Any) -> Any:
    """MXNet: an explicit dtype, else the input's dtype, except bool which sums to int64."""
    if dtype is not None:
        return jnp.dtype(dtype)
    return jnp.dtype(jnp.int64) if a.dtype == jnp.bool_ else a.dtype


def _float_dtype(a: Any, dtype: Any) -> Any:
    """An explicit dtype, else the input's float dtype, else the default float dtype."""
    return jnp.dtype(dtype) if dtype is not None else to_float(a).dtype


@defop("sum", aliases=("_np_sum", "_npi_sum"))
def sum_(a, *, axis: axis | None = None, dtype: dtype | None = None, keepdims: bool = False,
        initial: float | None = None):
    """Sum of array elements over the given axes."""
    check_axis("sum", a, axis)
    return jnp.sum(a, axis=axis, dtype=_sum_dtype(a, dtype), keepdims=keepdims, initial=initial)


@defop("prod", aliases=("_np_prod", "_npi_prod"))
def prod(a, *, axis: axis | None = None, dtype: dtype | None = None, keepdims: bool = False,
         initial: float | None = None):
    """Product of array elements over the given axes."""
    check_axis("prod", a, axis)
    return jnp.prod(a, axis=axis, dtype=_sum_dtype(a, dtype), keepdims=keepdims, initial=initial)


def _check_nonempty(op: str, a: Any, axis: Any, initial: Any) -> None:
    # jnp returns -inf/+inf (or garbage for ints) on empty input; NumPy refuses without `initial`
    if initial is not None or a.size:
        return
    if axis is None or any(a.shape[ax] == 0 for ax in (axis if isinstance(axis, tuple) else (axis,))):
        raise MXNetValueError(f"{op}: zero-size array (shape {tuple(a.shape)}) to reduction operation "
                              f"which has no identity; pass initial=")


@defop("max", aliases=("_np_max", "_npi_max"))
def max_(a, *, axis: axis | None = None, keepdims: bool = False, initial: float | None = None):
    """Maximum over the given axes (NumPy's ``amax``)."""
    check_axis("max", a, axis)
    _check_nonempty("max", a, axis, initial)
    return jnp.max(a, axis=axis, keepdims=keepdims, initial=initial)


@defop("min", aliases=("_np_min", "_npi_min"))
def min_(a, *, axis: axis | None = None, keepdims: bool = False, initial: float | None = None):
    """Minimum over the given axes (NumPy's ``amin``)."""
    check_axis("min", a, axis)
    _check_nonempty("min", a, axis, initial)
    return jnp.min(a, axis=axis, keepdims=keepdims, initial=initial)


@defop("ptp")
def ptp(a, *, axis: axis | None = None, keepdims: bool = False):
    """Range of values (maximum - minimum) over the given axes."""
    check_axis("ptp", a, axis)
    _check_nonempty("ptp", a, axis, None)
    return jnp.ptp(a, axis=axis, keepdims=keepdims)


@defop("mean", aliases=("_npi_mean",))
def mean(a, *, axis: axis | None = None, dtype: dtype | None = None, keepdims: bool = False,
         initial: float | None = None):
    """Arithmetic mean over the given axes (integer input gives the default float dtype)."""
    check_axis("mean", a, axis)
    if initial is not None:  # MXNet's _npi_mean shares sum's parameter struct; only None is meaningful
        raise MXNetValueError(f"mean: initial= is not supported (got {initial!r})")
    return jnp.mean(a, axis=axis, dtype=_float_dtype(a, dtype), keepdims=keepdims)


@defop("std", aliases=("_npi_std",))
def std(a, *, axis: axis | None = None, dtype: dtype | None = None, ddof: int = 0,
        keepdims: bool = False, correction: float | None = None):
    """Standard deviation over the given axes (``ddof``: delta degrees of freedom)."""
    check_axis("std", a, axis)
    return jnp.std(a, axis=axis, dtype=_float_dtype(a, dtype), ddof=ddof, keepdims=keepdims,
                   correction=correction)


@defop("var", aliases=("_npi_var",))
def var(a, *, axis: axis | None = None, dtype: dtype | None = None, ddof: int = 0,
        keepdims: bool = False, correction: float | None = None):
    """Variance over the given axes (``ddof``: delta degrees of freedom)."""
    check_axis("var", a, axis)
    return jnp.var(a, axis=axis, dtype=_float_dtype(a, dtype), ddof=ddof, keepdims=keepdims,
                   correction=correction)


def _arg_reduce(op: str, fn: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    check_axis(op, a, axis)
    if (a.size == 0) if axis is None else (a.shape[axis] == 0):
        raise MXNetValueError(f"{op}: attempt to get {op} of an empty sequence (shape {tuple(a.shape)})")
    return fn(a, axis=axis, keepdims=keepdims).astype(jnp.int64)


@defop("argmax", aliases=("_npi_argmax",))
def argmax(a, *, axis: int | None = None, keepdims: bool = False):
    """Indices (int64) of the maxima along an axis (of the flattened array when axis is None)."""
    return _arg_reduce("argmax", jnp.argmax, a, axis, keepdims)


@defop("argmin", aliases=("_npi_argmin",))
def argmin(a, *, axis: int | None = None, keepdims: bool = False):
    """Indices (int64) of the minima along an axis (of the flattened array when axis is None)."""
    return _arg_reduce("argmin", jnp.argmin, a, axis, keepdims)


@defop("nanargmax")
def nanargmax(a, *, axis: int | None = None, keepdims: bool = False):
    """Indices (int64) of the maxima along an axis, ignoring NaNs."""
    return _arg_reduce("nanargmax", jnp.nanargmax, a, axis, keepdims)


@defop("nanargmin")
def nanargmin(a, *, axis: int | None = None, keepdims: bool = False):
    """Indices (int64) of the minima along an axis, ignoring NaNs."""
    return _arg_reduce("nanargmin", jnp.nanargmin, a, axis, keepdims)


@defop("all", aliases=("_np_all", "_npi_all"))
def all_(a, *, axis: axis | None = None, keepdims: bool = False):
    """Whether all elements along the given axes are true (a bool array)."""
    check_axis("all", a, axis)
    return jnp.all(a, axis=axis, keepdims=keepdims)


@defop("any", aliases=("_np_any", "_npi_any", "_np_sometrue"))
def any_(a, *, axis: axis | None = None, keepdims: bool = False):
    """Whether any element along the given axes is true (a bool array)."""
    check_axis("any", a, axis)
    return jnp.any(a, axis=axis, keepdims=keepdims)


@defop("count_nonzero")
def count_nonzero(a, *, axis: axis | None = None, keepdims: bool = False):
    """Number of non-zero values along the given axes (int64)."""
    check_axis("count_nonzero", a, axis)
    return jnp.count_nonzero(a, axis=axis, keepdims=keepdims).astype(jnp.int64)


@defop("cumsum", aliases=("_np_cumsum", "_npi_cumsum"))
def cumsum(a, *, axis: int | None = None, dtype: dtype | None = None):
    """Cumulative sum along an axis (of the flattened array when axis is None)."""
    check_axis("cumsum", a, axis)
    return jnp.cumsum(a, axis=axis, dtype=_sum_dtype(a, dtype))


@defop("cumprod")
def cumprod(a, *, axis: int | None = None, dtype: dtype | None = None):
    """Cumulative product along an axis (of the flattened array when axis is None)."""
    check_axis("cumprod", a, axis)
    return jnp.cumprod(a, axis=axis, dtype=_sum_dtype(a, dtype))


# -- NaN-aware variants: NaNs count as 0 (sums), 1 (products) or are skipped ----------------

@defop("nansum", aliases=("_np_nansum",))
def nansum(a, *, axis: axis | None = None, dtype: dtype | None = None, keepdims: bool = False,
           initial: float | None = None):
    """Sum over the given axes, treating NaNs as zero."""
    check_axis("nansum", a, axis)
    return jnp.nansum(a, axis=axis, dtype=_sum_dtype(a, dtype), keepdims=keepdims, initial=initial)


@defop("nanprod", aliases=("_np_nanprod",))
def nanprod(a, *, axis: axis | None = None, dtype: dtype | None = None, keepdims: bool = False,
            initial: float | None = None):
    """Product over the given axes, treating NaNs as one."""
    check_axis("nanprod", a, axis)
    return jnp.nanprod(a, axis=axis, dtype=_sum_dtype(a, dtype), keepdims=keepdims, initial=initial)


@defop("nanmax")
def nanmax(a, *, axis: axis | None = None, keepdims: bool = False, initial: float | None = None):
    """Maximum over the given axes, ignoring NaNs."""
    check_axis("nanmax", a, axis)
    _check_nonempty("nanmax", a, axis, initial)
    return jnp.nanmax(a, axis=axis, keepdims=keepdims, initial=initial)


@defop("nanmin")
def nanmin(a, *, axis: axis | None = None, keepdims: bool = False, initial: float | None = None):
    """Minimum over the given axes, ignoring NaNs."""
    check_axis("nanmin", a, axis)
    _check_nonempty("nanmin", a, axis, initial)
    return jnp.nanmin(a, axis=axis, keepdims=keepdims, initial=initial)


@defop("nanmean")
def nanmean(a, *, axis: axis | None = None, dtype: dtype | None = None, keepdims: bool = False):
    """Mean over the given axes, ignoring NaNs."""
    check_axis("nanmean", a, axis)
    return jnp.nanmean(a, axis=axis, dtype=_float_dtype(a, dtype), keepdims=keepdims)


@defop("nanstd")
def nanstd(a, *, axis: axis | None = None, dtype: dtype | None = None, ddof: int = 0,
           keepdims: bool = False):
    """Standard deviation over the given axes, ignoring NaNs."""
    check_axis("nanstd", a, axis)
    return jnp.nanstd(a, axis=axis, dtype=_float_dtype(a, dtype), ddof=ddof, keepdims=keepdims)


@defop("nanvar")
def nanvar(a, *, axis: axis | None = None, dtype: dtype | None = None, ddof: int = 0,
           keepdims: bool = False):
    """Variance over the given axes, ignoring NaNs."""
    check_axis("nanvar", a, axis)
    return jnp.nanvar(a, axis=axis, dtype=_float_dtype(a, dtype), ddof=ddof, keepdims=keepdims)


@defop("nancumsum")
def nancumsum(a, *, axis: int | None = None, dtype: dtype | None = None):
    """Cumulative sum along an axis, treating NaNs as zero."""
    check_axis("nancumsum", a, axis)
    return jnp.nancumsum(a, axis=axis, dtype=_sum_dtype(a, dtype))


@defop("nancumprod")
def nancumprod(a, *, axis: int | None = None, dtype: dtype | None = None):
    """Cumulative product along an axis, treating NaNs as one."""
    check_axis("nancumprod", a, axis)
    return jnp.nancumprod(a, axis=axis, dtype=_sum_dtype(a, dtype))


# -- comparisons of whole arrays ------------------------------------------------------------

@defop("allclose")
def allclose(a, b, *, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether all elements are equal within a tolerance (a 0-d bool array, as in MXNet)."""
    return jnp.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


@defop("isclose")
def isclose(a, b, *, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Element-wise equality within a tolerance (bool array)."""
    return jnp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


@defop("array_equal")
def array_equal(a1, a2, *, equal_nan: bool = False):
    """Whether two arrays have the same shape and elements (0-d bool array)."""
    return jnp.array_equal(a1, a2, equal_nan=equal_nan)


@defop("array_equiv")
def array_equiv(a1, a2):
    """Whether two arrays are broadcastable to one shape with equal elements (0-d bool array)."""
    return jnp.array_equiv(a1, a2)
