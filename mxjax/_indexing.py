"""NumPy-style index keys, split into a hashable static part and the index arrays.

``x[1:3, idx, None]`` becomes the static key ``(('s', 1, 3, None), ('a', 0), ('n',))``
plus the array list ``[idx]``: the static key is a jit parameter (one compiled
program per key shape), the arrays are traced inputs.  Boolean masks make the
output shape value-dependent, so keys holding them are flagged dynamic.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .base import MXNetIndexError

_SCALAR_INT = (int, onp.integer)


def split_key(key: Any, data_of: Any, float_arrays: bool = False) -> tuple[tuple, list, bool]:
    """Return ``(static_key, index_arrays, has_bool_mask)``; ``data_of`` unwraps NDArrays.
    ``float_arrays``: an index array of floats counts as its values truncated to integers, as MXNet 1.x's
    NDArray takes them (``x[nd.array([0, 2])]``: ``nd.array`` makes float32); NumPy refuses them."""
    if not isinstance(key, tuple):
        key = (key,)
    static, arrays, dynamic = [], [], False
    for k in key:
        if isinstance(k, bool) or isinstance(k, onp.bool_):
            raise MXNetIndexError("indexing with a Python bool is not supported; use a boolean array mask")
        if isinstance(k, _SCALAR_INT):
            static.append(("i", int(k)))
        elif isinstance(k, slice):
            static.append(("s", _slice_part(k.start), _slice_part(k.stop), _slice_part(k.step)))
        elif k is None:
            static.append(("n",))
        elif k is Ellipsis:
            static.append(("e",))
        else:
            # an NDArray index stays an array input (deferred compute and autograd see it); else unwrap
            arr = k if hasattr(k, "_data") else data_of(k)
            if isinstance(arr, (list, tuple)):
                arr = onp.asarray(arr)
                if arr.dtype.kind == "f" and arr.size == 0:
                    arr = arr.astype(onp.int64)
            dtype = getattr(arr, "dtype", None)
            if dtype is None:
                raise MXNetIndexError(
                    f"only integers, slices, None, Ellipsis and integer or boolean arrays are valid indices; "
                    f"got {type(k).__name__}")
            kind = onp.dtype(dtype).kind
            if kind == "b":
                dynamic = True
                static.append(("b", len(arrays)))
            elif kind == "f" and float_arrays:
                arr = arr.astype("int32") if hasattr(arr, "_data") else onp.asarray(arr).astype(onp.int32)
                static.append(("a", len(arrays)))
            elif kind in "iu":
                if getattr(arr, "ndim", 1) == 0 and not hasattr(k, "_data") and isinstance(arr, onp.ndarray):
                    static.append(("i", int(arr)))
                    continue
                static.append(("a", len(arrays)))
            else:
                raise MXNetIndexError(f"arrays used as indices must be of integer or boolean type, got {dtype}")
            arrays.append(arr)
    return tuple(static), arrays, dynamic


def _slice_part(v: Any) -> Any:
    if v is None or isinstance(v, int):
        return v
    try:
        return int(v.__index__())
    except AttributeError:
        raise MXNetIndexError(f"slice indices must be integers or None, got {type(v).__name__}") from None


def build_key(static: tuple, arrays: tuple) -> tuple:
    """Rebuild the NumPy index tuple from a static key and the (traced or concrete) index arrays."""
    out = []
    for item in static:
        tag = item[0]
        if tag == "i":
            out.append(item[1])
        elif tag == "s":
            out.append(slice(item[1], item[2], item[3]))
        elif tag == "n":
            out.append(None)
        elif tag == "e":
            out.append(Ellipsis)
        else:
            out.append(arrays[item[1]])
    return tuple(out)


def array_axes(static: tuple, ndim: int) -> dict[int, int]:
    """``{array position: the axis it indexes}`` for the integer index arrays of a key, up to
    the first boolean mask (a mask's axes depend on its rank, known only with its value)."""
    axes, axis = {}, 0
    n_real = sum(1 for item in static if item[0] in "isab")
    for item in static:
        tag = item[0]
        if tag == "b":
            break
        if tag == "e":
            axis += ndim - n_real
        elif tag == "a":
            axes[item[1]] = axis
            axis += 1
        elif tag in "is":
            axis += 1
    return {pos: ax for pos, ax in axes.items() if ax < ndim}


def check_bounds(static: tuple, shape: tuple, op: str) -> None:
    """Raise ``IndexError`` for an out-of-range integer index, as NumPy does (JAX would clamp)."""
    axis = 0
    n_real = sum(1 for item in static if item[0] in "isab")
    for item in static:
        tag = item[0]
        if tag == "e":
            axis += len(shape) - n_real
            continue
        if tag == "n":
            continue
        if tag == "b":  # a mask consumes as many axes as it has dimensions: stop checking here
            return
        if axis >= len(shape):
            raise MXNetIndexError(f"{op}: too many indices for array of shape {shape}")
        if tag == "i" and not -shape[axis] <= item[1] < shape[axis]:
            raise MXNetIndexError(
                f"{op}: index {item[1]} is out of bounds for axis {axis} with size {shape[axis]}")
        axis += 1


def leading_window(key: Any, shape: tuple) -> tuple[tuple, list] | None:
    """:func:`window` of a key of ints and unit-step slices on the leading axes -- one (the common
    eager ``x[i]``, ``x[a:b]``) or a tuple of them (``x[:, j]``, ``x[i, a:b]``) -- without building
    the key's static form first; None where the general path decides (a 0-d array, too many
    indices, an int out of range (their errors), a stepped slice, bounds that are not ints, any
    other kind of index: NumPy ints, None, Ellipsis, arrays)."""
    items = key if type(key) is tuple else (key,)
    if not shape or len(items) > len(shape):
        return None
    starts, sizes, dropped, out_shape = [], [], [], []
    axis = 0
    for item in items:
        n = shape[axis]
        if type(item) is int:
            start = item + n if item < 0 else item
            if not 0 <= start < n:
                return None
            size = 1
            dropped.append(axis)
        elif type(item) is slice:
            step = item.step
            if (step is not None and step != 1) or type(item.start) not in _BOUND_TYPES or \
                    type(item.stop) not in _BOUND_TYPES:
                return None
            start, stop, _ = item.indices(n)
            size = stop - start if stop > start else 0
            out_shape.append(size)
        else:
            return None
        starts.append(start)
        sizes.append(size)
        axis += 1
    if axis < len(shape):
        rest = tuple(shape[axis:])
        return (tuple(sizes) + rest, tuple(dropped), tuple(out_shape) + rest), starts + [0] * len(rest)
    return (tuple(sizes), tuple(dropped), tuple(out_shape)), starts


_BOUND_TYPES = (int, type(None))


def window(static: tuple, shape: tuple) -> tuple[tuple, list] | None:
    """A basic key (ints, unit-step slices, None, Ellipsis) as a window with run-time start offsets.

    Returns ``(layout, starts)``: ``layout = (sizes, dropped_axes, out_shape)`` is static, ``starts``
    are plain ints.  Eager ``x[i]`` and ``x[i:i+n]`` then compile once per window size instead of
    once per distinct index.  ``None`` when the key has arrays, masks or strides (the general path).
    """
    n_real = sum(1 for item in static if item[0] in "is")
    if any(item[0] not in "isne" for item in static) or n_real > len(shape):
        return None
    starts, sizes, dropped, out_shape = [], [], [], []
    axis = 0
    for item in static:
        tag = item[0]
        if tag == "n":
            out_shape.append(1)
            continue
        if tag == "e":
            for _ in range(len(shape) - n_real):
                starts.append(0), sizes.append(shape[axis]), out_shape.append(shape[axis])
                axis += 1
            continue
        if tag == "i":
            starts.append(item[1] + shape[axis] if item[1] < 0 else item[1])
            sizes.append(1)
            dropped.append(axis)
        else:
            if item[3] not in (None, 1):
                return None
            start, stop, _ = slice(item[1], item[2]).indices(shape[axis])
            starts.append(start)
            sizes.append(max(stop - start, 0))
            out_shape.append(sizes[-1])
        axis += 1
    for rest in range(axis, len(shape)):
        starts.append(0), sizes.append(shape[rest]), out_shape.append(shape[rest])
    return (tuple(sizes), tuple(dropped), tuple(out_shape)), starts
