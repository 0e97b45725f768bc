"""Index-driven manipulation ops: take, take/put_along_axis, where, select, delete, insert,
diagonal, trace, unravel_index, ravel_multi_index, fill_diagonal.

NumPy raises for out-of-range index VALUES; a compiled program cannot, so those
ops carry a ``check=`` (the bounds check on concrete inputs in imperative mode)
and a ``guard`` inside their compute: a traced graph (hybridize/jit) records the
failure and the first read of its result raises it (see ``_checked``).
Index positions given as parameters (``delete``/``insert``'s ``obj``) are static,
so their bounds are checked at trace time.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetIndexError, MXNetTypeError, MXNetValueError
from ._checked import check_index_bounds, guard, host_indices
from ._dtypes import fix_float
from .registry import defop

_TAKE_MODES = ("raise", "wrap", "clip")


def _axis_size(op: str, shape: tuple, axis: int | None) -> tuple[int, int]:
    """(normalized axis, its length); axis None means the flattened array."""
    if axis is None:
        return 0, int(onp.prod(shape, dtype=onp.int64))
    if not -len(shape) <= axis < len(shape):
        raise MXNetIndexError(f"{op}: axis {axis} is out of bounds for array of dimension {len(shape)}")
    axis = axis % len(shape)
    return axis, int(shape[axis])


def _int_indices(op: str, indices: Any) -> Any:
    """Integer indices; float ones are truncated as MXNet does (``mx.np.array([0, 2])`` is float32)."""
    indices = jnp.asarray(indices)
    if indices.dtype.kind in "fb":
        return indices.astype(jnp.int64)
    if indices.dtype.kind not in "iu":
        raise MXNetTypeError(f"{op}: indices must be integers, got dtype {indices.dtype} (shape {indices.shape})")
    return indices


# ----------------------------------------------------------------------------- take

def _check_take(a: Any, indices: Any, *, axis: int | None = None, mode: str = "raise") -> None:
    if mode != "raise":
        return
    shape = jnp.shape(a)
    if axis is not None and not -len(shape) <= axis < len(shape):
        return  # the compute function reports the bad axis
    axis, size = _axis_size("take", shape, axis)
    check_index_bounds("take", indices, size, axis)


@defop("take", check=_check_take, aliases=("_npi_take",))
def take(a, indices, *, axis: int | None = None, mode: str = "raise"):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when None).

    mode 'raise' (NumPy's default) raises IndexError for an out-of-range index: at the
    call in imperative mode, at the first read of the result inside a traced graph.
    'wrap' wraps around, 'clip' clips (a negative index clips to 0)."""
    if mode not in _TAKE_MODES:
        raise MXNetValueError(f"take: mode must be one of 'raise', 'wrap', 'clip', got {mode!r}")
    indices = _int_indices("take", indices)
    context = f"array shape {tuple(jnp.shape(a))}, indices shape {tuple(indices.shape)}"
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis, size = _axis_size("take", jnp.shape(a), axis)
    if size == 0 and indices.size:
        raise MXNetIndexError(f"take: cannot do a non-empty take from an empty axis (shape {jnp.shape(a)})")
    if mode == "raise":
        (indices,) = guard("take", [(indices, size, axis)], [indices], context)
        indices, mode = jnp.where(indices < 0, indices + size, indices), "clip"
    return jnp.take(a, indices, axis=axis, mode=mode)


def _guard_along(op: str, arr: Any, indices: Any, axis: int | None) -> Any:
    """``indices`` guarded against the length of ``axis`` (of the flattened ``arr`` when None)."""
    shape = jnp.shape(arr)
    if axis is not None and not -len(shape) <= axis < len(shape):
        return indices  # jnp reports the bad axis
    axis, size = _axis_size(op, shape, axis)
    context = f"array shape {tuple(shape)}, indices shape {tuple(indices.shape)}"
    return guard(op, [(indices, size, axis)], [indices], context)[0]


def _check_along(arr: Any, indices: Any, *rest: Any, axis: int | None = -1) -> None:
    shape = jnp.shape(arr)
    if axis is not None and not -len(shape) <= axis < len(shape):
        return
    axis, size = _axis_size("take_along_axis", shape, axis)
    check_index_bounds("take_along_axis", indices, size, axis)


@defop("take_along_axis", check=_check_along)
def take_along_axis(arr, indices, *, axis: int | None = -1):
    """Values of ``arr`` at matching 1-D ``indices`` slices along ``axis`` (out-of-range: IndexError,
    at the call or at the first read of a traced graph's result)."""
    indices = _guard_along("take_along_axis", arr, _int_indices("take_along_axis", indices), axis)
    if (arr.ndim if axis is not None else 1) != indices.ndim:
        raise MXNetValueError(f"take_along_axis: indices and arr must have the same number of dimensions, "
                              f"got shapes {indices.shape} and {arr.shape}")
    return jnp.take_along_axis(arr, indices, axis, mode="clip")


@defop("put_along_axis", check=_check_along)
def put_along_axis(arr, indices, values, *, axis: int | None = -1):
    """A copy of ``arr`` with ``values`` put at matching 1-D ``indices`` slices along ``axis``
    (``np.put_along_axis`` writes it back into ``arr``)."""
    indices = _guard_along("put_along_axis", arr, _int_indices("put_along_axis", indices), axis)
    if axis is None:
        return jnp.put_along_axis(jnp.ravel(arr), indices, values, 0, inplace=False,
                                  mode="clip").reshape(arr.shape)
    return jnp.put_along_axis(arr, indices, values, axis, inplace=False, mode="clip")


# ----------------------------------------------------------------------------- choosing

@defop("where", aliases=("_npi_where",))
def where(condition, x, y):
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (all three broadcast)."""
    return fix_float(jnp.where(condition, x, y), x, y)


@defop("select")
def select(default, *arrays):
    """From the first n inputs (conditions) and the next n (choices): the first choice whose
    condition holds, else ``default`` (``np.select(condlist, choicelist, default)``)."""
    if len(arrays) % 2:
        raise MXNetValueError(f"select: list of cases must be same length as list of conditions "
                              f"(got {len(arrays)} arrays in all)")
    n = len(arrays) // 2
    conds, choices = arrays[:n], arrays[n:]
    for i, c in enumerate(conds):
        if jnp.asarray(c).dtype != jnp.bool_:
            raise MXNetTypeError(f"select: invalid entry {i} in condlist: should be boolean, "
                                 f"got {jnp.asarray(c).dtype}")
    return fix_float(jnp.select(conds, choices, default), *choices, default)


# ----------------------------------------------------------------------------- delete / insert

def _static_positions(op: str, obj: Any, size: int, axis: int, inclusive_end: bool) -> onp.ndarray:
    positions = onp.asarray(obj)
    if positions.size == 0:
        return positions.astype(onp.int64)
    if positions.dtype.kind not in "iu":
        raise MXNetIndexError(f"{op}: index positions must be integers (or a boolean mask), got {obj!r}")
    high = size + 1 if inclusive_end else size
    bad = positions[(positions < -size) | (positions >= high)]
    if bad.size:
        raise MXNetIndexError(f"{op}: index {int(bad.flat[0])} is out of bounds for axis {axis} with size {size}")
    return positions


@defop("delete")
def delete(arr, *, obj: any, axis: int | None = None):
    """A copy of ``arr`` without the entries at positions ``obj`` (int, tuple or boolean mask) along ``axis``."""
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis, size = _axis_size("delete", jnp.shape(arr), axis)
    mask = onp.asarray(obj)
    if mask.dtype == onp.bool_:
        if mask.shape != (size,):
            raise MXNetValueError(f"delete: a boolean obj must be one-dimensional and match the axis length "
                                  f"{size}, got shape {mask.shape}")
        obj = onp.nonzero(mask)[0]
    positions = _static_positions("delete", obj, size, axis, inclusive_end=False)
    return jnp.delete(arr, onp.unique(positions % max(size, 1)), axis, assume_unique_indices=True)


@defop("insert")
def insert(arr, values, *, obj: any, axis: int | None = None):
    """A copy of ``arr`` with ``values`` inserted before position(s) ``obj`` along ``axis``
    (a scalar ``obj`` inserts ``values`` as one block, a sequence one value per position)."""
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis, size = _axis_size("insert", jnp.shape(arr), axis)
    positions = _static_positions("insert", obj, size, axis, inclusive_end=True)
    return jnp.insert(arr, positions, values, axis)


# ----------------------------------------------------------------------------- diagonals

@defop("diagonal", aliases=("_npi_diagonal",))
def diagonal(a, *, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal at ``offset`` of the 2-D planes spanned by ``axis1`` and ``axis2`` (moved last)."""
    return jnp.diagonal(a, offset, axis1, axis2)


@defop("trace", aliases=("_np_trace",))
def trace(a, *, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: dtype | None = None):
    """The sum along the diagonal at ``offset`` of the planes spanned by ``axis1`` and ``axis2``."""
    return jnp.trace(a, offset, axis1, axis2, dtype)


@defop("fill_diagonal")
def fill_diagonal(a, val, *, wrap: bool = False):
    """A copy of ``a`` with its main diagonal set to ``val`` (``np.fill_diagonal`` writes it back)."""
    return jnp.fill_diagonal(a, val, wrap, inplace=False)


# ----------------------------------------------------------------------------- flat <-> multi-index

def _check_unravel(indices: Any, *, shape: Any = (), order: str = "C") -> None:
    values = host_indices(indices)
    size = int(onp.prod(shape, dtype=onp.int64))
    bad = values[(values < 0) | (values >= size)]
    if bad.size:
        raise MXNetValueError(f"unravel_index: index {int(bad.flat[0])} is out of bounds for array "
                              f"with size {size} (shape {tuple(shape)})")


@defop("unravel_index", check=_check_unravel)
def unravel_index(indices, *, shape: shape, order: str = "C"):
    """The coordinate arrays (int64) of flat ``indices`` into an array of ``shape``
    (out-of-range: ValueError imperatively, clipped inside a traced graph)."""
    if order not in ("C", "F"):
        raise MXNetValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    indices = _int_indices("unravel_index", indices)
    dims = tuple(int(d) for d in shape)
    if order == "F":
        return tuple(o.astype(jnp.int64) for o in jnp.unravel_index(indices, dims[::-1])[::-1])
    return tuple(o.astype(jnp.int64) for o in jnp.unravel_index(indices, dims))


def _check_ravel(*multi_index: Any, dims: Any = (), mode: str = "raise", order: str = "C") -> None:
    if mode != "raise" or len(multi_index) != len(dims):
        return
    for coords, dim in zip(multi_index, dims):
        values = host_indices(coords)
        if ((values < 0) | (values >= dim)).any():
            raise MXNetValueError(f"ravel_multi_index: invalid entry in coordinates array: a coordinate "
                                  f"is out of range [0, {dim}) for dims {tuple(dims)}")


@defop("ravel_multi_index", check=_check_ravel)
def ravel_multi_index(*multi_index, dims: shape, mode: str = "raise", order: str = "C"):
    """Flat int64 indices from one coordinate array per dimension of ``dims``
    (mode 'raise': ValueError imperatively, clipped inside a traced graph; or 'wrap', 'clip')."""
    if mode not in _TAKE_MODES:
        raise MXNetValueError(f"ravel_multi_index: mode must be one of 'raise', 'wrap', 'clip', got {mode!r}")
    if len(multi_index) != len(dims):
        raise MXNetValueError(f"ravel_multi_index: multi_index must be a sequence of length {len(dims)} "
                              f"(one coordinate array per dimension of {tuple(dims)}), got {len(multi_index)}")
    coords = [_int_indices("ravel_multi_index", c) for c in multi_index]
    out = jnp.ravel_multi_index(coords, tuple(int(d) for d in dims), "clip" if mode == "raise" else mode, order)
    return out.astype(jnp.int64)
