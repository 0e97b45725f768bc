"""MXNet 2's ``npx`` index-scatter ops and ``constraint_check``.

``index_add``/``index_update`` take ``ind`` of shape ``(K, N)``: column ``j`` is the index
of one element (or sub-array) of ``a``'s first ``K`` axes, and ``val`` broadcasts to
``(N,) + a.shape[K:]``.  Repeated indices accumulate in ``index_add``; in
``index_update`` the last write wins (MXNet's CPU order).  Out-of-range indices raise
IndexError: at the call in imperative mode, at the first read of the result of a traced
program (XLA would drop them silently; MXNet 2.0 reads out of bounds, even crashes).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetIndexError, MXNetTypeError, MXNetValueError
from ._checked import guard
from .registry import defop


def _check_index(op: str, a, ind, val) -> None:
    values = onp.asarray(ind)
    dims = tuple(onp.shape(a))
    if values.ndim != 2 or not onp.issubdtype(values.dtype, onp.integer):
        return  # the op itself reports a malformed index
    for axis in range(min(values.shape[0], len(dims))):
        size = dims[axis]
        bad = values[axis][(values[axis] < -size) | (values[axis] >= size)]
        if bad.size:
            raise MXNetIndexError(f"{op}: index {int(bad[0])} is out of bounds for axis {axis} with size {size}")


def _scatter_args(op: str, a, ind, val):
    if not jnp.issubdtype(ind.dtype, jnp.integer):
        raise MXNetTypeError(f"{op}: 'ind' must have an integer dtype, got {ind.dtype}")
    if ind.ndim != 2 or ind.shape[0] > a.ndim:
        raise MXNetValueError(f"{op}: 'ind' must have shape (K, N) with K <= a.ndim ({a.ndim}), got "
                              f"{tuple(ind.shape)}")
    target = (ind.shape[1],) + tuple(a.shape[ind.shape[0]:])
    try:
        val = jnp.broadcast_to(jnp.asarray(val, a.dtype), target)
    except ValueError:
        raise MXNetValueError(f"{op}: 'val' of shape {tuple(jnp.shape(val))} does not broadcast to {target} "
                              f"(N indexed elements of a {tuple(a.shape)})") from None
    rows = tuple(ind[k] for k in range(ind.shape[0]))
    context = f"array shape {tuple(a.shape)}, ind shape {tuple(ind.shape)}"
    return guard(op, [(row, a.shape[k], k) for k, row in enumerate(rows)], rows, context), val


@defop("_npx_index_add", aliases=("index_add",), check=lambda a, ind, val: _check_index("index_add", a, ind, val))
def index_add(a, ind, val):
    """``a`` with ``val`` added at the elements (or sub-arrays) that the columns of ``ind`` index."""
    index, val = _scatter_args("index_add", a, ind, val)
    return a.at[index].add(val)


@defop("_npx_index_update", aliases=("index_update",),
       check=lambda a, ind, val: _check_index("index_update", a, ind, val))
def index_update(a, ind, val):
    """``a`` with the elements (or sub-arrays) that the columns of ``ind`` index replaced by ``val``."""
    index, val = _scatter_args("index_update", a, ind, val)
    return a.at[index].set(val)


def _check_constraint(x, *, msg: str = "Constraint violated.") -> None:
    if not onp.all(onp.asarray(x)):
        raise MXNetValueError(msg)


@defop("_npx_constraint_check", aliases=("constraint_check",), check=_check_constraint, differentiable=False)
def constraint_check(x, *, msg: str = "Constraint violated."):
    """``True`` (a 0-d bool array) when every element of the boolean ``x`` holds; raises ``ValueError(msg)``
    otherwise (checked on concrete values; a traced call returns the condition)."""
    if x.dtype != jnp.bool_:
        raise MXNetTypeError(f"constraint_check: x must be a boolean array, got {x.dtype}")
    return jnp.all(x)
