"""Array manipulation ops: shape changes, joining, splitting, tiling, reordering, padding.

Everything that decides an output SHAPE (axes, split points, repeat counts, pad
widths) is a static parameter; the arrays are inputs.  Ops with a
parameter-dependent number of outputs (split, array_split, broadcast_arrays,
atleast_*) return a tuple.  Indexing-like ops (take, where, delete, insert, ...)
live in ``manipulation_index``, imported at the end so one import registers both.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetValueError
from ._dtypes import fix_float
from .registry import defop


def _ints(value: Any) -> tuple:
    return (int(value),) if isinstance(value, (int, onp.integer)) else tuple(int(v) for v in value)


def _check_nonnegative(op: str, what: str, values: Any) -> None:
    if any(v < 0 for v in _ints(values)):
        raise MXNetValueError(f"{op}: {what} must be non-negative, got {values}")


# ----------------------------------------------------------------------------- shape changes

@defop("ravel")
def ravel(a, *, order: str = "C"):
    """The array flattened to 1-D (``order`` 'C' row-major or 'F' column-major)."""
    if order not in ("C", "F", "A", "K"):
        raise MXNetValueError(f"ravel: order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    return jnp.ravel(a, "F" if order == "F" else "C")


@defop("squeeze", aliases=("_np_squeeze", "_npi_squeeze"))
def squeeze(a, *, axis: axis | None = None):
    """Remove axes of length one (all of them, or those named by ``axis``)."""
    return jnp.squeeze(a, axis)


@defop("expand_dims", aliases=("_npi_expand_dims",))
def expand_dims(a, *, axis: axis = 0):
    """Insert new axes of length one at the positions ``axis``."""
    return jnp.expand_dims(a, axis)


@defop("swapaxes", aliases=("_np_swapaxes",))
def swapaxes(a, *, axis1: int, axis2: int):
    """Interchange two axes."""
    return jnp.swapaxes(a, axis1, axis2)


@defop("moveaxis", aliases=("_npi_moveaxis",))
def moveaxis(a, *, source: axis, destination: axis):
    """Move axes to new positions; the other axes keep their order."""
    return jnp.moveaxis(a, source, destination)


@defop("rollaxis", aliases=("_npi_rollaxis",))
def rollaxis(a, *, axis: int, start: int = 0):
    """Roll ``axis`` backwards until it lies before position ``start``."""
    return jnp.rollaxis(a, axis, start)


@defop("broadcast_to", aliases=("_npi_broadcast_to",))
def broadcast_to(array, *, shape: shape):
    """Broadcast to ``shape`` with NumPy's rules."""
    return jnp.broadcast_to(array, _ints(shape))


@defop("broadcast_arrays")
def broadcast_arrays(*args):
    """Broadcast the inputs against each other (a tuple of arrays of one shape)."""
    return tuple(jnp.broadcast_arrays(*args))


@defop("atleast_1d", aliases=("_npi_atleast_1d",))
def atleast_1d(*arys):
    """Each input viewed with at least one dimension (a tuple)."""
    return tuple(jnp.atleast_1d(a) for a in arys)


@defop("atleast_2d", aliases=("_npi_atleast_2d",))
def atleast_2d(*arys):
    """Each input viewed with at least two dimensions (a tuple)."""
    return tuple(jnp.atleast_2d(a) for a in arys)


@defop("atleast_3d", aliases=("_npi_atleast_3d",))
def atleast_3d(*arys):
    """Each input viewed with at least three dimensions (a tuple)."""
    return tuple(jnp.atleast_3d(a) for a in arys)


@defop("resize")
def resize(a, *, new_shape: shape):
    """A new array of ``new_shape`` filled with repeated copies of ``a`` (NumPy's ``np.resize``)."""
    _check_nonnegative("resize", "all elements of new_shape", new_shape)
    return jnp.resize(a, _ints(new_shape))


# ----------------------------------------------------------------------------- joining

def _join_dtype(out: Any, dtype: Any, arrays: tuple) -> Any:
    return out if dtype is not None else fix_float(out, *arrays)


def _need_arrays(op: str, arrays: tuple) -> None:
    if not arrays:
        raise MXNetValueError(f"{op}: need at least one array")


def _check_join_shapes(arrays: tuple, axis: int) -> None:
    """NumPy's ValueError for concatenating arrays whose shapes differ off ``axis`` (JAX raises TypeError)."""
    shapes = [jnp.shape(a) for a in arrays]
    first = shapes[0]
    if not first:
        raise MXNetValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    for shape in shapes[1:]:
        if len(shape) != len(first):
            raise MXNetValueError(f"concatenate: all the input arrays must have the same number of dimensions, "
                                  f"got shapes {shapes}")
    if not -len(first) <= axis < len(first):
        return  # jnp reports the bad axis
    ax = axis % len(first)
    for shape in shapes[1:]:
        if any(d != e for i, (d, e) in enumerate(zip(first, shape)) if i != ax):
            raise MXNetValueError(f"concatenate: all the input array dimensions except for the concatenation "
                                  f"axis {axis} must match exactly, got shapes {shapes}")


@defop("concatenate", aliases=("_npi_concatenate",))
def concatenate(*arrays, axis: int | None = 0, dtype: dtype | None = None):
    """Join arrays along an existing axis (``axis=None``: flatten them first)."""
    _need_arrays("concatenate", arrays)
    if axis is not None:
        _check_join_shapes(arrays, axis)
    return _join_dtype(jnp.concatenate(arrays, axis=axis, dtype=dtype), dtype, arrays)


@defop("stack", aliases=("_npi_stack",))
def stack(*arrays, axis: int = 0, dtype: dtype | None = None):
    """Join arrays of one shape along a new axis."""
    _need_arrays("stack", arrays)
    return _join_dtype(jnp.stack(arrays, axis=axis, dtype=dtype), dtype, arrays)


@defop("vstack", aliases=("_npi_vstack",))
def vstack(*tup, dtype: dtype | None = None):
    """Stack arrays vertically (along the first axis; 1-D arrays become rows)."""
    _need_arrays("vstack", tup)
    return _join_dtype(jnp.vstack(tup, dtype=dtype), dtype, tup)


@defop("hstack", aliases=("_npi_hstack",))
def hstack(*tup, dtype: dtype | None = None):
    """Stack arrays horizontally (along the second axis; along the first for 1-D arrays)."""
    _need_arrays("hstack", tup)
    return _join_dtype(jnp.hstack(tup, dtype=dtype), dtype, tup)


@defop("dstack", aliases=("_npi_dstack",))
def dstack(*tup, dtype: dtype | None = None):
    """Stack arrays depth-wise (along the third axis)."""
    _need_arrays("dstack", tup)
    return _join_dtype(jnp.dstack(tup, dtype=dtype), dtype, tup)


@defop("column_stack", aliases=("_npi_column_stack",))
def column_stack(*tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays are stacked as they are)."""
    _need_arrays("column_stack", tup)
    return fix_float(jnp.column_stack(tup), *tup)


@defop("append")
def append(arr, values, *, axis: int | None = None):
    """``values`` appended to the end of ``arr`` (both flattened when ``axis`` is None)."""
    return fix_float(jnp.append(arr, values, axis=axis), arr, values)


# ----------------------------------------------------------------------------- splitting

def _split_points(op: str, indices_or_sections: Any) -> Any:
    if isinstance(indices_or_sections, (int, onp.integer)):
        if indices_or_sections <= 0:
            raise MXNetValueError(f"{op}: number of sections must be larger than 0, got {indices_or_sections}")
        return int(indices_or_sections)
    return [int(i) for i in indices_or_sections]


def _split_count(params: dict) -> int:
    """How many arrays ``split``/``array_split`` return (for graphs built before shapes are known)."""
    sections = params.get("indices_or_sections", 1)
    return int(sections) if isinstance(sections, (int, onp.integer)) else len(sections) + 1


@defop("split", aliases=("_np_split",), num_outputs=_split_count)
def split(ary, *, indices_or_sections: axis, axis: int = 0):
    """Split into equal sections (an int) or at the given indices (a tuple); returns a tuple."""
    return tuple(jnp.split(ary, _split_points("split", indices_or_sections), axis))


@defop("array_split", num_outputs=_split_count)
def array_split(ary, *, indices_or_sections: axis, axis: int = 0):
    """Like ``split``, but sections need not divide the axis evenly."""
    return tuple(jnp.array_split(ary, _split_points("array_split", indices_or_sections), axis))


def _directional_split(op: str, ary, indices_or_sections, min_ndim: int, axis: int):
    if jnp.ndim(ary) < min_ndim:
        raise MXNetValueError(f"{op} only works on arrays of {min_ndim} or more dimensions, "
                              f"got shape {jnp.shape(ary)}")
    return tuple(jnp.split(ary, _split_points(op, indices_or_sections), axis))


@defop("_npi_hsplit", aliases=("hsplit",), num_outputs=_split_count)
def hsplit(ary, *, indices_or_sections: axis):
    """``split`` along the second axis (the first for 1-D arrays); the axis follows the input's rank,
    so a Symbol graph can hold it before shapes are known."""
    return _directional_split("hsplit", ary, indices_or_sections, 1, 1 if jnp.ndim(ary) > 1 else 0)


@defop("_npi_vsplit", aliases=("vsplit",), num_outputs=_split_count)
def vsplit(ary, *, indices_or_sections: axis):
    """``split`` along the first axis of an array of 2 or more dimensions."""
    return _directional_split("vsplit", ary, indices_or_sections, 2, 0)


@defop("_npi_dsplit", aliases=("dsplit",), num_outputs=_split_count)
def dsplit(ary, *, indices_or_sections: axis):
    """``split`` along the third axis of an array of 3 or more dimensions."""
    return _directional_split("dsplit", ary, indices_or_sections, 3, 2)


# ----------------------------------------------------------------------------- repeating

@defop("tile", aliases=("_npi_tile",))
def tile(A, *, reps: axis):
    """Repeat the whole array ``reps`` times along each axis."""
    _check_nonnegative("tile", "reps", reps)
    return jnp.tile(A, _ints(reps))


@defop("repeat", aliases=("_np_repeat", "_npi_repeats"))
def repeat(a, *, repeats: axis, axis: int | None = None):
    """Repeat each element ``repeats`` times (an int, or one count per element along ``axis``)."""
    _check_nonnegative("repeat", "repeats", repeats)
    if isinstance(repeats, (int, onp.integer)):
        return jnp.repeat(a, int(repeats), axis)
    counts = onp.asarray(_ints(repeats), dtype=onp.int64)
    if counts.size == 1:
        return jnp.repeat(a, int(counts[0]), axis)
    length = jnp.size(a) if axis is None else jnp.shape(a)[axis]
    if counts.size != length:
        raise MXNetValueError(f"repeat: {counts.size} repeat counts given for an axis of length {length} "
                              f"(input shape {jnp.shape(a)}, axis {axis})")
    # the counts are static, so the output length is known to XLA
    return jnp.repeat(a, counts, axis, total_repeat_length=int(counts.sum()))


# ----------------------------------------------------------------------------- reordering

@defop("flip", aliases=("_npi_flip",))
def flip(m, *, axis: axis | None = None):
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    return jnp.flip(m, axis)


@defop("fliplr")
def fliplr(m):
    """Reverse the order of columns (the second axis); needs at least 2 dimensions."""
    if jnp.ndim(m) < 2:
        raise MXNetValueError(f"fliplr: input must be >= 2-d, got shape {jnp.shape(m)}")
    return jnp.fliplr(m)


@defop("flipud")
def flipud(m):
    """Reverse the order of rows (the first axis); needs at least 1 dimension."""
    if jnp.ndim(m) < 1:
        raise MXNetValueError(f"flipud: input must be >= 1-d, got shape {jnp.shape(m)}")
    return jnp.flipud(m)


@defop("roll", aliases=("_np_roll",))
def roll(a, *, shift: axis, axis: axis | None = None):
    """Shift elements cyclically along ``axis`` (over the flattened array when None)."""
    return jnp.roll(a, shift, axis)


@defop("rot90", aliases=("_npi_rot90",))
def rot90(m, *, k: int = 1, axes: shape = (0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the second)."""
    axes = _ints(axes)
    if len(axes) != 2:
        raise MXNetValueError(f"rot90: axes must name exactly 2 axes, got {axes}")
    return jnp.rot90(m, k, axes)


# ----------------------------------------------------------------------------- padding

_PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect",
              "symmetric", "wrap", "empty")


def pad_pairs(op: str, pad_width: Any, ndim: int) -> tuple:
    """NumPy's pad_width spellings (n, (b, a), ((b0, a0), ...)) as one (before, after) pair per axis."""
    try:
        widths = onp.broadcast_to(onp.asarray(pad_width, dtype=onp.int64), (ndim, 2))
    except ValueError:
        raise MXNetValueError(f"{op}: pad_width {pad_width!r} cannot be broadcast to ({ndim}, 2), "
                              f"one (before, after) pair per axis") from None
    if (widths < 0).any():
        raise MXNetValueError(f"{op}: pad widths must be non-negative, got {pad_width!r}")
    return tuple((int(b), int(a)) for b, a in widths)


@defop("pad", aliases=("_np_pad",))
def pad(array, constant_values=0, *, pad_width: tuple, mode: str = "constant", end_values: any = 0,
        stat_length: tuple | None = None, reflect_type: str = "even"):
    """Pad with ``mode``: constant, edge, linear_ramp, maximum, mean, median, minimum, reflect,
    symmetric, wrap or empty (NumPy's ``np.pad``)."""
    if not callable(mode) and mode not in _PAD_MODES:
        raise MXNetValueError(f"pad: mode must be one of {', '.join(_PAD_MODES)}; got {mode!r}")
    widths = pad_pairs("pad", pad_width, jnp.ndim(array))
    options: dict[str, Any] = {}
    if mode == "constant":
        options["constant_values"] = constant_values
    elif mode == "linear_ramp":
        options["end_values"] = end_values
    elif mode in ("maximum", "mean", "median", "minimum"):
        options["stat_length"] = stat_length
    elif mode in ("reflect", "symmetric"):
        options["reflect_type"] = reflect_type
    return jnp.pad(array, widths, mode, **options)


from . import manipulation_index  # noqa: E402,F401  (registers take, where, delete, insert, ...)
