"""The ops NDArray itself needs: casts, copies, reshapes, transposes, indexing and index assignment."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _indexing
from ..base import MXNetValueError
from ._checked import guard
from ._reshape import legacy_shape, npx_shape
from .registry import OpDef, defop, register


@defop("astype", aliases=("_npi_cast", "Cast", "cast"))
def astype(data, *, dtype: dtype = "float32"):
    """Cast to ``dtype``."""
    return data.astype(dtype)


@defop("copy", aliases=("_copy", "_npi_copy", "identity"))
def copy(data):
    """A copy of the array."""
    return jnp.array(data, copy=True)


@defop("Reshape", aliases=("reshape_legacy",))
def legacy_reshape(data, *, shape: shape = (), reverse: bool = False):
    """Reshape with MXNet 1.x's special codes 0, -1, -2, -3, -4 (see ``_reshape``)."""
    return jnp.reshape(data, legacy_shape(tuple(data.shape), tuple(shape), reverse))


@defop("_npx_reshape", aliases=("npx_reshape",))
def npx_reshape(a, *, newshape: shape = (), reverse: bool = False, order: str = "C"):
    """Reshape with ``npx.reshape``'s special codes -1 to -6."""
    return jnp.reshape(a, npx_shape(tuple(a.shape), tuple(newshape), reverse))


@defop("reshape", aliases=("_np_reshape", "_npi_reshape"))
def reshape(a, *, newshape: shape = (), order: str = "C"):
    """NumPy's reshape (one -1 may be inferred)."""
    shape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    return jnp.reshape(a, npx_shape(tuple(a.shape), shape), order=order)


@defop("transpose", aliases=("_np_transpose", "_npi_transpose"))
def transpose(a, *, axes: shape | None = None):
    """Permute the axes (reverse them by default; MXNet 1.x JSON writes ``axes=()`` for that)."""
    return jnp.transpose(a, axes or None)


def _guarded(static: tuple, arrays: tuple, shape: tuple, op: str) -> tuple:
    """The index arrays of a key, each guarded against the length of the axis it indexes
    (``_checked.guard``): out of range, it raises IndexError at the first read of the result
    instead of being clamped (JAX's gather) or dropped (scatter)."""
    axes = _indexing.array_axes(static, len(shape))
    if not axes:
        return arrays
    checks = [(arrays[pos], shape[axis], axis) for pos, axis in axes.items()]
    context = f"array shape {tuple(shape)}, index shapes {[tuple(arrays[pos].shape) for pos in axes]}"
    out = list(arrays)
    for pos, value in zip(axes, guard(op, checks, [arrays[pos] for pos in axes], context)):
        out[pos] = value
    return tuple(out)


def _getitem(data, *indices, key: tuple = ()):
    """``data[key]`` with NumPy's basic and advanced indexing."""
    return data[_indexing.build_key(key, _guarded(key, indices, data.shape, "__getitem__"))]


def _setitem(data, value, *indices, key: tuple = ()):
    """A copy of ``data`` with ``data[key] = value`` (the NDArray then takes it as its new buffer)."""
    value = jnp.asarray(value).astype(data.dtype)
    return data.at[_indexing.build_key(key, _guarded(key, indices, data.shape, "__setitem__"))].set(value)


def _setitem_mask(data, value, *indices, key: tuple = ()):
    """``_setitem`` with a boolean mask in the key: ``value`` must broadcast to the selected elements."""
    index = _indexing.build_key(key, indices)
    selected = jax.eval_shape(lambda d: d[index], jax.ShapeDtypeStruct(data.shape, data.dtype)).shape
    _check_assignable("_setitem_mask (x[mask] = value)", value, selected, data)
    return _setitem(data, value, *indices, key=key)


def _check_assignable(what: str, value, selected: tuple, data) -> None:
    """``value`` must broadcast to the selected elements' shape (NumPy's assignment rule)."""
    given = tuple(jnp.shape(value))
    try:
        fits = onp.broadcast_shapes(given, tuple(selected)) == tuple(selected)
    except ValueError:
        fits = False
    if not fits:
        raise MXNetValueError(f"{what}: cannot assign a value of shape {given} to the selection of shape "
                              f"{tuple(selected)} (data shape {tuple(data.shape)})")


def _getitem_window(data, starts, *, layout: tuple = ()):
    """``data[key]`` for a basic key given as a window (see ``_indexing.window``): the start offsets
    are run-time values, so one compiled program serves every index of the same window size."""
    sizes, dropped, out_shape = layout
    return jax.lax.dynamic_slice(data, tuple(starts[i] for i in range(len(sizes))), sizes).reshape(out_shape)


def _setitem_window(data, value, starts, *, layout: tuple = ()):
    """A copy of ``data`` with the window ``layout`` at ``starts`` set to ``value`` (broadcast)."""
    sizes, _, out_shape = layout
    _check_assignable("_setitem (x[key] = value)", value, out_shape, data)
    block = jnp.broadcast_to(jnp.asarray(value).astype(data.dtype), out_shape).reshape(sizes)
    return jax.lax.dynamic_update_slice(data, block, tuple(starts[i] for i in range(len(sizes))))


register(OpDef("_getitem_window", _getitem_window))
register(OpDef("_setitem_window", _setitem_window))
register(OpDef("_getitem", _getitem, aliases=("_npi_advanced_indexing", "_npi_slice_basic")))
register(OpDef("_getitem_mask", _getitem, aliases=("_npi_boolean_mask_getitem",), dynamic_shape=True))
register(OpDef("_setitem", _setitem, aliases=("_npi_index_update",)))
register(OpDef("_setitem_mask", _setitem_mask, aliases=("_npi_boolean_mask_assign",), dynamic_shape=True))


@defop("matmul", aliases=("_npi_matmul",))
def matmul(a, b):
    """Matrix product with NumPy's broadcasting of the leading dimensions."""
    return jnp.matmul(a, b)


@defop("dot", aliases=("_np_dot", "_npi_dot"))
def dot(a, b):
    """NumPy's ``dot``: inner product for vectors, matmul for matrices, sum-product over the last axes."""
    return jnp.dot(a, b)
