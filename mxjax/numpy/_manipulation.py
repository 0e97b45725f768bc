"""``mx.np`` array-manipulation functions (ops in ``operator/manipulation*.py`` and ``core.py``).

Most names are one-line bindings.  The Python functions here do only argument
handling a generic binding cannot express: returning lists (``split``),
static index positions from slices (``delete``/``insert``), in-place writes
(``copyto``, ``fill_diagonal``, ``put_along_axis``), and NumPy's plain
helpers (``shape``, ``ndim``, ``size``, ``shares_memory``).
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..base import MXNetTypeError, MXNetValueError, normalize_dtype
from .._ndarray import NDArray
from .._frontend import listed
from .._invoke import invoke, np_class
from ..operator import get_op
from ..operator.manipulation import pad_pairs
from ._maker import by_shape_array, np_function

transpose = np_function("transpose")
copy = np_function("copy")
ravel = np_function("ravel")
squeeze = np_function("squeeze")
expand_dims = np_function("expand_dims")
swapaxes = np_function("swapaxes")
moveaxis = np_function("moveaxis")
rollaxis = np_function("rollaxis")
broadcast_to = by_shape_array(np_function("broadcast_to"), np_function("_broadcast_to_by_shape_array",
                              name="broadcast_to"), 1, "shape")
broadcast_arrays = np_function("broadcast_arrays", sequence_input=False, as_list=True)
resize = np_function("resize")
concatenate = np_function("concatenate", positional=("arrays", "axis", "out", "dtype"))
stack = np_function("stack", positional=("arrays", "axis", "out"))
vstack = np_function("vstack")
row_stack = np_function("vstack", name="row_stack")
hstack = np_function("hstack")
dstack = np_function("dstack")
column_stack = np_function("column_stack")
append = np_function("append")
tile = np_function("tile")
repeat = np_function("repeat")
flip = np_function("flip")
fliplr = np_function("fliplr")
flipud = np_function("flipud")
roll = np_function("roll")
rot90 = np_function("rot90")
diagonal = np_function("diagonal")
trace = np_function("trace", positional=("a", "offset", "axis1", "axis2", "dtype", "out"))
take = np_function("take", positional=("a", "indices", "axis", "out", "mode"))
take_along_axis = np_function("take_along_axis")
unravel_index = np_function("unravel_index")


def _binds(op_name: str) -> Any:
    """Mark a Python front-end function with the one op it calls (``fn.op``, as generated bindings have)."""
    def wrap(fn: Any) -> Any:
        fn.op = get_op(op_name)
        return fn
    return wrap


def _ndim(a: Any) -> int:
    return a.ndim if isinstance(a, NDArray) else onp.ndim(a)


def _shape_of(a: Any) -> tuple:
    return a.shape if isinstance(a, NDArray) else onp.shape(a)


def _static(value: Any) -> Any:
    """A hashable parameter value: an int, or a flat tuple for sequences and arrays."""
    if isinstance(value, NDArray):
        value = value.asnumpy()
    values = onp.asarray(value)
    if values.ndim == 0:
        return values.item()
    return tuple(values.ravel().tolist())


@_binds("reshape")
def reshape(a: Any, /, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: Any = None) -> ndarray:
    """A new shape for ``a`` (one dimension may be -1); ``newshape=`` is NumPy's older spelling.

    ``shape`` may be an integer mx array (computed from data): the dynamic-shape op
    ``_reshape_by_shape_array`` then takes it as an input."""
    if newshape is not None:
        if shape is not None:
            raise TypeError("reshape() got both shape and newshape; give only shape")
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    if isinstance(shape, NDArray):  # a shape computed from data: the dynamic-shape op keeps it an input
        return invoke(get_op("_reshape_by_shape_array"), [a, shape], {"order": order}, np_class())
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else int(shape)
    return invoke(get_op("reshape"), [a], {"newshape": shape, "order": order}, np_class())


# ----------------------------------------------------------------------------- splitting

def _sections(indices_or_sections: Any) -> Any:
    value = _static(indices_or_sections)
    return tuple(int(i) for i in value) if isinstance(value, tuple) else int(value)


@_binds("split")
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split into equal sections (an int) or at the given indices; returns a list of arrays."""
    params = {"indices_or_sections": _sections(indices_or_sections), "axis": int(axis)}
    return list(invoke(get_op("split"), [ary], params, np_class()))


@_binds("array_split")
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Like :func:`split`, but sections need not divide the axis evenly."""
    params = {"indices_or_sections": _sections(indices_or_sections), "axis": int(axis)}
    return list(invoke(get_op("array_split"), [ary], params, np_class()))


def _directional(op: str, doc: str) -> Any:
    @_binds(op)
    def split_along(ary: Any, indices_or_sections: Any) -> list:
        params = {"indices_or_sections": _sections(indices_or_sections)}
        return list(invoke(get_op(op), [ary], params, np_class()))
    split_along.__name__ = split_along.__qualname__ = op
    split_along.__doc__ = doc
    return split_along


hsplit = _directional("hsplit", "Split horizontally (along the second axis; the first for 1-D arrays).")
vsplit = _directional("vsplit", "Split vertically (along the first axis); needs at least 2 dimensions.")
dsplit = _directional("dsplit", "Split depth-wise (along the third axis); needs at least 3 dimensions.")


# ----------------------------------------------------------------------------- atleast_nd

def _atleast(op: str, arys: tuple) -> Any:
    result = invoke(get_op(op), list(arys), None, np_class())
    return result[0] if len(arys) == 1 else listed(result)  # (a list for several, as MXNet 2.0 gives it)


@_binds("atleast_1d")
def atleast_1d(*arys: Any) -> Any:
    """Inputs viewed with at least one dimension (one array, or a list for several inputs)."""
    return _atleast("atleast_1d", arys)


@_binds("atleast_2d")
def atleast_2d(*arys: Any) -> Any:
    """Inputs viewed with at least two dimensions (one array, or a list for several inputs)."""
    return _atleast("atleast_2d", arys)


@_binds("atleast_3d")
def atleast_3d(*arys: Any) -> Any:
    """Inputs viewed with at least three dimensions (one array, or a list for several inputs)."""
    return _atleast("atleast_3d", arys)


# ----------------------------------------------------------------------------- padding

_PAD_OPTIONS = {"constant": {"constant_values"}, "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
                "mean": {"stat_length"}, "median": {"stat_length"}, "minimum": {"stat_length"},
                "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}


def _value(v: Any) -> Any:
    return onp.asarray(v) if isinstance(v, (list, tuple)) else v


@_binds("pad")
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> ndarray:
    """Pad an array (NumPy's ``np.pad``; modes constant, edge, linear_ramp, maximum, mean, median,
    minimum, reflect, symmetric, wrap, empty, or a callable)."""
    unsupported = set(kwargs) - _PAD_OPTIONS.get(mode if isinstance(mode, str) else "", set())
    if unsupported and not callable(mode):
        raise MXNetValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {sorted(unsupported)}")
    ndim = _ndim(array)
    params: dict[str, Any] = {"pad_width": pad_pairs("pad", _static_nested(pad_width), ndim), "mode": mode}
    if kwargs.get("stat_length") is not None:
        params["stat_length"] = pad_pairs("pad", _static_nested(kwargs["stat_length"]), ndim)
    if "reflect_type" in kwargs:
        params["reflect_type"] = kwargs["reflect_type"]
    if "end_values" in kwargs:  # jnp.pad needs the ramp ends as static values
        params["end_values"] = _tuples(_static_nested(kwargs["end_values"]))
    return invoke(get_op("pad"), [array, _value(kwargs.get("constant_values", 0))], params, np_class())


def _static_nested(value: Any) -> Any:
    return value.asnumpy().tolist() if isinstance(value, NDArray) else value


def _tuples(value: Any) -> Any:
    """Nested lists as nested tuples (hashable parameter values)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


# ----------------------------------------------------------------------------- index positions

def _positions(obj: Any, arr: Any, axis: Any) -> Any:
    if isinstance(obj, slice):
        shape = _shape_of(arr)
        length = int(onp.prod(shape)) if axis is None else shape[axis]
        return tuple(range(*obj.indices(length)))
    return _static(obj)


@_binds("delete")
def delete(arr: Any, obj: Any, axis: int | None = None) -> ndarray:
    """A copy of ``arr`` without the entries at ``obj`` (int, sequence, slice or boolean mask) along ``axis``."""
    return invoke(get_op("delete"), [arr], {"obj": _positions(obj, arr, axis), "axis": axis}, np_class())


@_binds("insert")
def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> ndarray:
    """A copy of ``arr`` with ``values`` inserted before the position(s) ``obj`` along ``axis``."""
    params = {"obj": _positions(obj, arr, axis), "axis": axis}
    return invoke(get_op("insert"), [arr, _value(values)], params, np_class())


@_binds("ravel_multi_index")
def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise", order: str = "C") -> ndarray:
    """Flat indices (int64) from a sequence of coordinate arrays, one per dimension of ``dims``."""
    params = {"dims": tuple(int(d) for d in dims), "mode": mode, "order": order}
    return invoke(get_op("ravel_multi_index"), list(multi_index), params, np_class())


@_binds("select")
def select(condlist: Any, choicelist: Any, default: Any = 0) -> ndarray:
    """The element of the first choice whose condition holds, else ``default``."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise MXNetValueError(f"select: list of cases must be same length as list of conditions "
                              f"({len(choicelist)} choices, {len(condlist)} conditions)")
    if not condlist:
        raise MXNetValueError("select with an empty condition list is not possible")
    return invoke(get_op("select"), [default, *condlist, *choicelist], None, np_class())


@_binds("where")
def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """Elements of ``x`` where ``condition`` holds, else of ``y``; with the condition alone,
    ``nonzero(condition)``."""
    if x is None and y is None:
        return invoke(get_op("nonzero"), [condition], None, np_class())
    if x is None or y is None:
        raise MXNetValueError("where: either both or neither of x and y should be given")
    return invoke(get_op("where"), [condition, x, y], None, np_class())


# ----------------------------------------------------------------------------- in-place writes

def _target(name: str, a: Any) -> NDArray:
    if not isinstance(a, NDArray):
        raise MXNetTypeError(f"{name}: the array to write into must be an mx.np.ndarray, got {type(a).__name__}")
    return a


@_binds("fill_diagonal")
def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """Set the main diagonal of ``a`` to ``val`` in place (returns None, as NumPy)."""
    target = _target("fill_diagonal", a)
    target._assign(invoke(get_op("fill_diagonal"), [target, val], {"wrap": bool(wrap)}, np_class()), "fill_diagonal")


@_binds("put_along_axis")
def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None) -> None:
    """Write ``values`` into ``arr`` at matching 1-D ``indices`` slices along ``axis`` (in place)."""
    target = _target("put_along_axis", arr)
    result = invoke(get_op("put_along_axis"), [target, indices, values], {"axis": axis}, np_class())
    target._assign(result, "put_along_axis")


def _scalar_dtype(value: Any) -> onp.dtype:
    if isinstance(value, NDArray):
        return onp.dtype(value.dtype)
    if isinstance(value, bool):
        return onp.dtype(onp.bool_)
    if isinstance(value, int):
        return onp.dtype(onp.int64)
    if isinstance(value, float):
        return onp.dtype(onp.float64)
    if isinstance(value, complex):
        return onp.dtype(onp.complex128)
    return onp.asarray(value).dtype


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """Copy ``src`` (broadcast) into ``dst`` in place, where ``where`` holds; ``casting`` as NumPy."""
    target = _target("copyto", dst)
    src_dtype, dst_dtype = _scalar_dtype(src), normalize_dtype(target.dtype)
    if not onp.can_cast(src_dtype, dst_dtype, casting):
        raise MXNetTypeError(f"copyto: cannot cast array data from dtype('{src_dtype}') to dtype('{dst_dtype}') "
                             f"according to the rule '{casting}'")
    src_shape = tuple(_shape_of(src))
    try:
        fits = onp.broadcast_shapes(src_shape, target.shape) == target.shape
    except ValueError:
        fits = False
    if not fits:
        raise MXNetValueError(f"copyto: could not broadcast input array from shape {src_shape} "
                              f"into shape {target.shape}")
    if where is True:
        result = invoke(get_op("broadcast_to"), [src], {"shape": target.shape}, np_class())
    else:
        result = invoke(get_op("where"), [where, src, target], None, np_class())
    target._assign(result, "copyto")


# ----------------------------------------------------------------------------- plain helpers

def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether ``a`` and ``b`` share memory: only when they are the same (non-empty) array, since
    mxjax writes replace an array's buffer and never show through another array."""
    return a is b and isinstance(a, NDArray) and a.size > 0


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Same as :func:`shares_memory` (the answer is exact in mxjax)."""
    return shares_memory(a, b)


def ndim(a: Any) -> int:
    """The number of dimensions of ``a``."""
    return _ndim(a)


def shape(a: Any) -> tuple:
    """The shape of ``a``."""
    return tuple(_shape_of(a))


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of ``a`` (along ``axis`` if given)."""
    dims = _shape_of(a)
    return int(onp.prod(dims, dtype=onp.int64)) if axis is None else int(dims[axis])


__all__ = ["reshape", "transpose", "copy", "ravel", "squeeze", "expand_dims", "swapaxes", "moveaxis", "rollaxis",
           "broadcast_to", "broadcast_arrays", "resize", "concatenate", "stack", "vstack", "row_stack", "hstack",
           "dstack", "column_stack", "append", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90",
           "diagonal", "trace", "take", "take_along_axis", "unravel_index", "split", "array_split", "hsplit",
           "vsplit", "dsplit", "atleast_1d", "atleast_2d", "atleast_3d", "pad", "delete", "insert",
           "ravel_multi_index", "select", "where", "fill_diagonal", "put_along_axis", "copyto", "shares_memory",
           "may_share_memory", "ndim", "shape", "size"]
