"""``mx.nd`` functions that need Python-level argument handling (1.x ``ndarray.py``'s helpers).

The arithmetic helpers (``nd.add(a, 2)``...) dispatch as MXNet 1.x does: two arrays go
to the broadcasting op, an array and a Python scalar to the legacy ``_*_scalar`` op
(result in the array's dtype), two scalars to Python.  For floating-point arrays the
NumPy op already keeps the array's dtype, and takes the scalar as a traced input, so
it is used instead: one compiled function serves every scalar value.
"""
from __future__ import annotations

import numbers
import operator
from typing import Any, Callable, Sequence

import numpy as onp

from .. import _ndarray as _nd
from .._frontend import create, store_out
from ..base import MXNetIndexError, MXNetTypeError, MXNetValueError, normalize_dtype
from ..device import Device
from .._ndarray import NDArray
from .._invoke import invoke
from ..operator import get_op
from . import _legacy

__all__ = [
    "array", "empty", "zeros", "ones", "full", "arange", "eye", "from_numpy",
    "add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum", "minimum",
    "hypot", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
    "logical_and", "logical_or", "logical_xor",
    "split", "concatenate", "moveaxis", "take", "waitall",
]

waitall = _nd.waitall


# ----------------------------------------------------------------------------- creation

def array(source_array: Any, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """A new NDArray from any array-like: float32 unless ``dtype``, except that an NDArray source keeps
    its dtype (MXNet's rule: ``mx.nd.array(numpy int64 array)`` is float32; ``mx.np.array`` keeps it)."""
    if dtype is None and not isinstance(source_array, _nd.NDArray):
        dtype = "float32"
    return _nd.array(source_array, dtype=dtype, ctx=ctx, cls=NDArray)


def from_numpy(ndarray: onp.ndarray, zero_copy: bool = True) -> NDArray:
    """An NDArray with the values of a NumPy array (XLA owns its buffers, so this copies)."""
    return _nd.array(ndarray, cls=NDArray)


def _creation(op: str, params: dict, ctx: Any, out: NDArray | None, name: str) -> NDArray:
    result = create(get_op(op), (), params, NDArray, ctx)
    return store_out(out, result, name) if out is not None else result


def zeros(shape: Any, ctx: Device | None = None, dtype: Any = None, out: NDArray | None = None,
          **kwargs: Any) -> NDArray:
    """A new array of zeros (float32 unless ``dtype``)."""
    return _creation("_zeros", {"shape": _shape(shape), "dtype": _dtype(dtype)}, ctx, out, "zeros")


def empty(shape: Any, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """A new array (XLA has no uninitialised memory: zeros)."""
    return zeros(shape, ctx, dtype)


def ones(shape: Any, ctx: Device | None = None, dtype: Any = None, out: NDArray | None = None,
         **kwargs: Any) -> NDArray:
    """A new array of ones (float32 unless ``dtype``)."""
    return _creation("_ones", {"shape": _shape(shape), "dtype": _dtype(dtype)}, ctx, out, "ones")


def full(shape: Any, val: Any, ctx: Device | None = None, dtype: Any = None,
         out: NDArray | None = None) -> NDArray:
    """A new array filled with ``val`` (float32 unless ``dtype``)."""
    params = {"shape": _shape(shape), "value": float(val), "dtype": _dtype(dtype)}
    return _creation("_full", params, ctx, out, "full")


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           infer_range: bool = False, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times (float32 unless ``dtype``)."""
    params = {"start": float(start), "stop": None if stop is None else float(stop), "step": float(step),
              "repeat": int(repeat), "infer_range": bool(infer_range), "dtype": _dtype(dtype)}
    return _creation("_arange", params, ctx, None, "arange")


def eye(N: int, M: int = 0, k: int = 0, ctx: Device | None = None, dtype: Any = None) -> NDArray:
    """An N x M matrix (M=0: square) with ones on the k-th diagonal."""
    return _creation("_eye", {"N": int(N), "M": int(M), "k": int(k), "dtype": _dtype(dtype)}, ctx, None, "eye")


def _shape(shape: Any) -> tuple:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _dtype(dtype: Any) -> str | None:
    return None if dtype is None else normalize_dtype(dtype).name


# ----------------------------------------------------------------------------- arithmetic

def _ufunc(lhs: Any, rhs: Any, array_op: str, scalar_op: str | None, rscalar_op: str | None,
           py_fn: Callable, float_op: str | None, name: str, out: NDArray | None) -> Any:
    if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
        return py_fn(lhs, rhs)
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        result = invoke(get_op(array_op), (lhs, rhs), None, NDArray)
    elif isinstance(lhs, NDArray) and isinstance(rhs, numbers.Number):
        result = _with_scalar(lhs, rhs, scalar_op, float_op, False)
    elif isinstance(rhs, NDArray) and isinstance(lhs, numbers.Number):
        result = _with_scalar(rhs, lhs, rscalar_op, float_op, True)
    else:
        raise MXNetTypeError(f"{name}: expected NDArrays or numbers, got {type(lhs).__name__} "
                             f"and {type(rhs).__name__}")
    return store_out(out, result, name) if out is not None else result


def _with_scalar(arr: NDArray, scalar: Any, scalar_op: str, float_op: str | None, reflected: bool) -> NDArray:
    if float_op is not None and onp.dtype(arr.dtype).kind == "f" and not isinstance(scalar, complex):
        inputs = (scalar, arr) if reflected else (arr, scalar)
        return invoke(get_op(float_op), inputs, None, NDArray)
    return invoke(get_op(scalar_op), (arr,), {"scalar": float(scalar)}, NDArray)


def _binary(name: str, array_op: str, scalar_op: str, rscalar_op: str, py_fn: Callable,
            float_op: str | None = None, doc: str = "") -> Callable:
    def function(lhs: Any, rhs: Any, out: NDArray | None = None) -> Any:
        return _ufunc(lhs, rhs, array_op, scalar_op, rscalar_op, py_fn, float_op, name, out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{doc}, element-wise with broadcasting; an array and a scalar keep the array's dtype."
    function.__module__ = "mxjax.ndarray"
    return function


def _cmp(fn: Callable) -> Callable:
    return lambda a, b: 1 if fn(a, b) else 0


def _py_mod(a: Any, b: Any) -> Any:
    return 0 if b == 0 else a % b


add = _binary("add", "_legacy_broadcast_add", "_plus_scalar", "_plus_scalar", operator.add, "add", "lhs + rhs")
subtract = _binary("subtract", "_legacy_broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub, "subtract",
                   "lhs - rhs")
multiply = _binary("multiply", "_legacy_broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul, "multiply", "lhs * rhs")
divide = _binary("divide", "_legacy_broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv, "true_divide",
                 "lhs / rhs")
true_divide = _binary("true_divide", "_legacy_broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv,
                      "true_divide", "lhs / rhs")
modulo = _binary("modulo", "_legacy_broadcast_mod", "_mod_scalar", "_rmod_scalar", _py_mod, None, "lhs mod rhs")
_power = _binary("power", "_legacy_broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow, "power",
                 "base ** exp")


def power(base: Any, exp: Any, out: NDArray | None = None) -> Any:
    return _power(base, exp, out)


power.__doc__, power.__module__ = _power.__doc__, _power.__module__  # (MXNet's argument names: base, exp)
maximum = _binary("maximum", "_legacy_broadcast_maximum", "_maximum_scalar", "_maximum_scalar", lambda a, b: a if a > b else b,
                  "maximum", "max(lhs, rhs)")
minimum = _binary("minimum", "_legacy_broadcast_minimum", "_minimum_scalar", "_minimum_scalar", lambda a, b: a if a < b else b,
                  "minimum", "min(lhs, rhs)")
hypot = _binary("hypot", "_legacy_broadcast_hypot", "_hypot_scalar", "_hypot_scalar", lambda a, b: (a * a + b * b) ** 0.5,
                "hypot", "sqrt(lhs**2 + rhs**2)")
equal = _binary("equal", "broadcast_equal", "_equal_scalar", "_equal_scalar", _cmp(operator.eq),
                doc="lhs == rhs as 0/1")
not_equal = _binary("not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                    _cmp(operator.ne), doc="lhs != rhs as 0/1")
greater = _binary("greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar", _cmp(operator.gt),
                  doc="lhs > rhs as 0/1")
greater_equal = _binary("greater_equal", "broadcast_greater_equal", "_greater_equal_scalar",
                        "_lesser_equal_scalar", _cmp(operator.ge), doc="lhs >= rhs as 0/1")
lesser = _binary("lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar", _cmp(operator.lt),
                 doc="lhs < rhs as 0/1")
lesser_equal = _binary("lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar",
                       "_greater_equal_scalar", _cmp(operator.le), doc="lhs <= rhs as 0/1")
logical_and = _binary("logical_and", "broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                      _cmp(lambda a, b: a and b), doc="lhs and rhs as 0/1")
logical_or = _binary("logical_or", "broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar",
                     _cmp(lambda a, b: a or b), doc="lhs or rhs as 0/1")
logical_xor = _binary("logical_xor", "broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                      _cmp(lambda a, b: bool(a) != bool(b)), doc="lhs xor rhs as 0/1")


# ----------------------------------------------------------------------------- shape helpers

def split(data: NDArray, num_outputs: int, axis: int = 1, squeeze_axis: bool = False,
          **kwargs: Any) -> Any:
    """Split into ``num_outputs`` equal parts along ``axis``: a list (a single NDArray if num_outputs is 1)."""
    for key in ("name", "attr", "out"):
        kwargs.pop(key, None)
    if kwargs:
        raise TypeError(f"split() got unexpected keyword arguments {sorted(kwargs)}")
    result = _legacy.SliceChannel(data, num_outputs=num_outputs, axis=axis, squeeze_axis=squeeze_axis)
    return list(result) if isinstance(result, tuple) else result


def concatenate(arrays: Sequence[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """Join a sequence of arrays along an existing ``axis``."""
    arrays = list(arrays)
    if not arrays:
        raise MXNetValueError("concatenate: needs at least one array")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return _legacy.Concat(*arrays, dim=axis)


def moveaxis(tensor: NDArray, source: int, destination: int) -> NDArray:
    """Move axis ``source`` to position ``destination``."""
    ndim = tensor.ndim
    for ax in (source, destination):
        if not -ndim <= ax < ndim:
            raise MXNetValueError(f"moveaxis: axis {ax} is out of range for {ndim} dimensions")
    axes = [a for a in range(ndim) if a != source % ndim]
    axes.insert(destination % ndim, source % ndim)
    return _legacy.transpose(tensor, axes=tuple(axes))


_take = get_op("_legacy_take")


def take(a: NDArray, indices: Any, axis: int = 0, mode: str = "clip", out: NDArray | None = None,
         **kwargs: Any) -> NDArray:
    """Gather along ``axis``; out-of-range indices clip (mode='clip'), wrap ('wrap') or raise ('raise')."""
    if mode == "raise":  # XLA cannot raise from inside a computation: check the concrete indices here
        values = indices.asnumpy() if isinstance(indices, NDArray) else onp.asarray(indices)
        size = a.shape[axis] if -a.ndim <= axis < a.ndim else 0
        if values.size and (values.min() < -size or values.max() >= size):
            raise MXNetIndexError(f"take: indices out of range [{-size}, {size}) for axis {axis} of "
                                  f"shape {a.shape}")
        values = onp.where(values < 0, values + size, values)
        indices = array(values, dtype=values.dtype)
    result = invoke(_take, (a, indices), {"axis": axis, "mode": mode}, NDArray)
    return store_out(out, result, "take") if out is not None else result


# the op behind each Python-level function (front-ends list their functions' ops by this attribute)
zeros.op = get_op("_zeros")  # type: ignore[attr-defined]
empty.op = get_op("_zeros")  # type: ignore[attr-defined]
ones.op = get_op("_ones")  # type: ignore[attr-defined]
full.op = get_op("_full")  # type: ignore[attr-defined]
arange.op = get_op("_arange")  # type: ignore[attr-defined]
eye.op = get_op("_eye")  # type: ignore[attr-defined]
split.op = get_op("SliceChannel")  # type: ignore[attr-defined]
concatenate.op = get_op("Concat")  # type: ignore[attr-defined]
moveaxis.op = get_op("transpose")  # type: ignore[attr-defined]
take.op = get_op("_legacy_take")  # type: ignore[attr-defined]
