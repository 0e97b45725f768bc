"""Sorting, searching and set operations: sort, argsort, partition, searchsorted, nonzero, unique, isin, ...

Index results are int64 (MXNet's np).  Ops whose output length depends on the
values (nonzero, argwhere, unique, the 1-D set operations) are ``dynamic_shape``:
they run eagerly on concrete arrays, never inside one XLA program.
"""
from __future__ import annotations

import jax.numpy as jnp

from ..base import MXNetValueError
from .reduction import check_axis
from .registry import defop


def _check_sort_args(op, a, axis, kind, order):
    check_axis(op, a, axis)
    if order is not None:
        raise MXNetValueError(f"{op}: order= needs structured dtypes, which mxjax arrays do not have")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise MXNetValueError(f"{op}: unknown sort kind {kind!r}")


@defop("sort", aliases=("_np_sort",))
def sort(a, *, axis: int | None = -1, kind: str | None = None, order: any = None,
         descending: bool = False, stable: bool | None = None):
    """Sorted copy of the array along an axis (flattened when axis is None); ascending unless descending."""
    _check_sort_args("sort", a, axis, kind, order)
    return jnp.sort(a, axis=axis, stable=True, descending=descending)


@defop("argsort", aliases=("_np_argsort",))
def argsort(a, *, axis: int | None = -1, kind: str | None = None, order: any = None,
            descending: bool = False, stable: bool | None = None):
    """Indices (int64) that sort the array along an axis (flattened when axis is None); stable."""
    _check_sort_args("argsort", a, axis, kind, order)
    return jnp.argsort(a, axis=axis, stable=True, descending=descending).astype(jnp.int64)


@defop("lexsort")
def lexsort(*keys, axis: int = -1):
    """Indices (int64) of an indirect stable sort by several keys, the last key the primary one."""
    if not keys:
        raise MXNetValueError("lexsort: need at least one key")
    shapes = {tuple(jnp.shape(k)) for k in keys}
    if len(shapes) != 1:
        raise MXNetValueError(f"lexsort: all keys need the same shape, got {sorted(shapes)}")
    check_axis("lexsort", keys[0], axis)
    return jnp.lexsort(keys, axis=axis).astype(jnp.int64)


def _check_kth(op, a, kth, axis):
    check_axis(op, a, axis)
    n = jnp.shape(a)[axis]
    for k in (kth if isinstance(kth, tuple) else (kth,)):
        if not -n <= k < n:
            raise MXNetValueError(f"{op}: kth(={k}) out of bounds ({n}) for shape {tuple(jnp.shape(a))}")
    return kth % n if isinstance(kth, int) else kth


@defop("partition")
def partition(a, *, kth: any, axis: int = -1):
    """Copy with the kth element(s) in sorted place, smaller ones before and larger ones after."""
    kth = _check_kth("partition", a, kth, axis)
    if isinstance(kth, tuple):  # several pivots: a full sort partitions around every one of them
        return jnp.sort(a, axis=axis)
    return jnp.partition(a, kth, axis=axis)


@defop("argpartition")
def argpartition(a, *, kth: any, axis: int = -1):
    """Indices (int64) that would partition the array around its kth element(s)."""
    kth = _check_kth("argpartition", a, kth, axis)
    if isinstance(kth, tuple):
        return jnp.argsort(a, axis=axis, stable=True).astype(jnp.int64)
    return jnp.argpartition(a, kth, axis=axis).astype(jnp.int64)


@defop("searchsorted")
def searchsorted(a, v, sorter=None, *, side: str = "left"):
    """Indices (int64) where v's elements would be inserted into the sorted 1-D array a."""
    if jnp.ndim(a) != 1:
        raise MXNetValueError(f"searchsorted: a must be 1-D, got shape {tuple(jnp.shape(a))}")
    if side not in ("left", "right"):
        raise MXNetValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = jnp.take(a, sorter)
    return jnp.searchsorted(a, v, side=side).astype(jnp.int64)


@defop("nonzero", dynamic_shape=True)
def nonzero(a):
    """Indices (a tuple of int64 arrays, one per dimension) of the non-zero elements."""
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise MXNetValueError("nonzero: calling nonzero on 0d arrays is not allowed; use atleast_1d(a).nonzero()")
    return tuple(i.astype(jnp.int64) for i in jnp.nonzero(a))


@defop("flatnonzero", dynamic_shape=True)
def flatnonzero(a):
    """Indices (int64) of the non-zero elements of the flattened array."""
    return jnp.flatnonzero(jnp.asarray(a)).astype(jnp.int64)


@defop("argwhere", aliases=("_npi_nonzero", "_npx_nonzero"), dynamic_shape=True)
def argwhere(a):
    """Indices (int64, shape (N, ndim)) of the non-zero elements, one row each."""
    return jnp.argwhere(jnp.asarray(a)).astype(jnp.int64)


@defop("unique", aliases=("_npi_unique",), dynamic_shape=True)
def unique(ar, *, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, equal_nan: bool = True):
    """Sorted unique elements; with the flags, also first indices, inverse indices and counts (int64).
    Its gradient is zero, as MXNet's ``_npi_unique`` declares."""
    ar = jnp.asarray(ar)
    check_axis("unique", ar, axis)
    out = jnp.unique(ar, return_index=return_index, return_inverse=return_inverse,
                     return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    if not isinstance(out, tuple):
        return out
    return (out[0], *(o.astype(jnp.int64) for o in out[1:]))


@defop("isin")
def isin(element, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Element-wise membership of element in test_elements (bool array of element's shape)."""
    return jnp.isin(element, test_elements, assume_unique=assume_unique, invert=invert)


@defop("intersect1d", dynamic_shape=True)
def intersect1d(ar1, ar2, *, assume_unique: bool = False, return_indices: bool = False):
    """Sorted unique values in both arrays; with return_indices also their first indices (int64) in each."""
    out = jnp.intersect1d(jnp.asarray(ar1), jnp.asarray(ar2), assume_unique=assume_unique,
                          return_indices=return_indices)
    if return_indices:
        return (out[0], out[1].astype(jnp.int64), out[2].astype(jnp.int64))
    return out


@defop("union1d", dynamic_shape=True)
def union1d(ar1, ar2):
    """Sorted unique values in either array."""
    return jnp.union1d(jnp.asarray(ar1), jnp.asarray(ar2))


@defop("setdiff1d", dynamic_shape=True)
def setdiff1d(ar1, ar2, *, assume_unique: bool = False):
    """Sorted unique values of ar1 that are not in ar2."""
    return jnp.setdiff1d(jnp.asarray(ar1), jnp.asarray(ar2), assume_unique=assume_unique)


@defop("setxor1d", dynamic_shape=True)
def setxor1d(ar1, ar2, *, assume_unique: bool = False):
    """Sorted unique values in exactly one of the arrays."""
    return jnp.setxor1d(jnp.asarray(ar1), jnp.asarray(ar2), assume_unique=assume_unique)
