"""NumPy's dispatch protocols for ``mx.np.ndarray``: ``onp.mean(x)`` runs ``mx.np.mean(x)``.

NumPy hands a call to an object's ``__array_function__`` (NEP 18) or, for ufuncs,
``__array_ufunc__`` (NEP 13).  As in MXNet 2.0, the functions named in
:data:`_NUMPY_ARRAY_FUNCTION_LIST` and the ufuncs in :data:`_NUMPY_ARRAY_UFUNC_LIST` run
as their ``mx.np`` twins (NumPy arrays among the arguments become ``mx.np`` arrays);
any other NumPy function runs on NumPy copies of the arrays and its array results come
back as ``mx.np`` arrays, which autograd cannot follow, so that raises while recording.
An in-place ufunc into a NumPy array (``onp_a += mx_b``) stays NumPy.

Importing this module (``mxjax`` does) installs both methods on ``mx.np.ndarray``.
"""
from __future__ import annotations

import functools
import logging
from typing import Any, Callable

import numpy as _np

from . import numpy as mx_np
from .autograd import is_recording
from .base import MXNetValueError

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol"]

_NUMPY_ARRAY_FUNCTION_DICT: dict = {}  # NumPy function -> mx.np function
_NUMPY_ARRAY_UFUNC_DICT: dict = {}     # ufunc name -> mx.np function
_WARNED: set = set()


def _find_duplicate(strs: list) -> str | None:
    seen: set = set()
    for s in strs:
        if s in seen:
            return s
        seen.add(s)
    return None


def _implements(numpy_function: Callable) -> Callable:
    """Register the decorated function as ``numpy_function``'s implementation for ``mx.np.ndarray``."""
    def decorator(func: Callable) -> Callable:
        _NUMPY_ARRAY_FUNCTION_DICT[numpy_function] = func
        return func
    return decorator


def _protocol_runner(func: Callable, protocol: str) -> Callable:
    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except Exception as e:
            raise RuntimeError(f"Running function {func.__name__} with NumPy array {protocol} protocol failed "
                               f"with exception {e}") from e
    return run


def with_array_function_protocol(func: Callable) -> Callable:
    """Decorate a function that needs the array function protocol (every supported NumPy has it):
    it runs, and an exception it raises becomes a RuntimeError naming it; it returns None, as MXNet's."""
    return _protocol_runner(func, "function")


def with_array_ufunc_protocol(func: Callable) -> Callable:
    """Decorate a function that needs the array ufunc protocol (as ``with_array_function_protocol``)."""
    return _protocol_runner(func, "ufunc")


_NUMPY_ARRAY_FUNCTION_LIST = [
    "all", "any", "sometrue", "argmin", "argmax", "around", "round", "round_", "argsort", "sort", "append",
    "broadcast_arrays", "broadcast_to", "clip", "concatenate", "copy", "cumsum", "diag", "diagonal", "diagflat",
    "dot", "expand_dims", "fix", "flip", "flipud", "fliplr", "inner", "insert", "interp", "max", "amax", "mean",
    "min", "amin", "nonzero", "ones_like", "atleast_1d", "atleast_2d", "atleast_3d", "prod", "product", "ravel",
    "repeat", "reshape", "roll", "split", "array_split", "hsplit", "vsplit", "dsplit", "squeeze", "stack", "std",
    "sum", "swapaxes", "take", "tensordot", "tile", "transpose", "unique", "unravel_index", "flatnonzero",
    "diag_indices_from", "delete", "var", "vdot", "vstack", "column_stack", "hstack", "dstack", "zeros_like",
    "linalg.norm", "linalg.cholesky", "linalg.inv", "linalg.solve", "linalg.tensorinv", "linalg.tensorsolve",
    "linalg.lstsq", "linalg.pinv", "linalg.eigvals", "linalg.eig", "linalg.eigvalsh", "linalg.eigh", "linalg.qr",
    "linalg.matrix_rank", "shape", "trace", "tril", "triu", "meshgrid", "outer", "kron", "einsum", "polyval",
    "shares_memory", "may_share_memory", "quantile", "median", "percentile", "diff", "ediff1d", "resize", "where",
    "full_like", "bincount", "empty_like", "nan_to_num", "isnan", "isfinite", "isposinf", "isneginf", "isinf",
    "pad", "cross",
]

_NUMPY_ARRAY_UFUNC_LIST = [
    "abs", "fabs", "add", "arctan2", "copysign", "degrees", "hypot", "lcm", "gcd", "logaddexp", "subtract",
    "multiply", "floor_divide", "true_divide", "negative", "power", "mod", "fmod", "matmul", "absolute", "rint",
    "sign", "exp", "log", "log2", "log10", "expm1", "sqrt", "square", "cbrt", "reciprocal", "invert",
    "bitwise_not", "remainder", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "maximum", "fmax", "minimum", "fmin", "ceil", "trunc", "floor",
    "bitwise_and", "bitwise_xor", "bitwise_or", "logical_and", "logical_or", "logical_xor", "logical_not",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
]


def _lookup(module: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        module = getattr(module, part, None)
    return module


def _register_array_function() -> None:
    """Map each listed NumPy function to its ``mx.np`` twin (names this NumPy lacks, such as NumPy 2's
    removed ``product``/``sometrue``/``round_``, cannot be called, so there is nothing to map)."""
    dup = _find_duplicate(_NUMPY_ARRAY_FUNCTION_LIST)
    if dup is not None:
        raise ValueError(f"Duplicate operator name {dup} in _NUMPY_ARRAY_FUNCTION_LIST")
    for name in _NUMPY_ARRAY_FUNCTION_LIST:
        if name.count(".") > 1:
            raise ValueError(f"Does not support registering __array_function__ protocol for operator {name}")
        mx_op, onp_op = _lookup(mx_np, name), _lookup(_np, name)
        if mx_op is None:
            raise AttributeError(f"mxjax.numpy does not have operator named {name}")
        if onp_op is not None:
            _implements(onp_op)(mx_op)


def _register_array_ufunc() -> None:
    """Map each listed ufunc's name (and the name NumPy gives it, ``divide`` for ``true_divide``) to ``mx.np``."""
    dup = _find_duplicate(_NUMPY_ARRAY_UFUNC_LIST)
    if dup is not None:
        raise ValueError(f"Duplicate operator name {dup} in _NUMPY_ARRAY_UFUNC_LIST")
    for name in _NUMPY_ARRAY_UFUNC_LIST:
        mx_op = getattr(mx_np, name, None)
        if mx_op is None:
            raise AttributeError(f"mxjax.numpy does not have operator named {name}")
        _NUMPY_ARRAY_UFUNC_DICT[name] = mx_op
        onp_op = getattr(_np, name, None)
        if onp_op is not None:
            _NUMPY_ARRAY_UFUNC_DICT.setdefault(onp_op.__name__, mx_op)


# ----------------------------------------------------------------------------- the protocol methods

def _to_mx(value: Any) -> Any:
    """NumPy arrays (also inside lists, tuples and dicts) as ``mx.np`` arrays; the rest unchanged."""
    if isinstance(value, _np.ndarray):
        return mx_np.array(value, dtype=value.dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_mx(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_mx(v) for k, v in value.items()}
    return value


def _to_onp(value: Any) -> Any:
    """``mx.np`` arrays (also inside lists, tuples and dicts) as NumPy arrays; the rest unchanged."""
    if isinstance(value, mx_np.ndarray):
        return value.asnumpy()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_onp(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_onp(v) for k, v in value.items()}
    return value


def _fallback(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    if is_recording():
        raise MXNetValueError(f"Falling back to NumPy operator {name} with autograd active is not supported; "
                              "move the call outside the autograd.record() scope or use mx.np")
    if func not in _WARNED:
        _WARNED.add(func)
        logging.warning("np.%s is a fallback operator, which is actually using official numpy's implementation",
                        name)
    return _to_mx(func(*_to_onp(args), **_to_onp(kwargs)))


def _array_function(self: Any, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """NEP 18: a NumPy function called with an ``mx.np.ndarray`` among its arguments."""
    mx_func = _NUMPY_ARRAY_FUNCTION_DICT.get(func)
    if mx_func is None:
        return _fallback(func, func.__name__, args, kwargs)
    return mx_func(*_to_mx(args), **_to_mx(kwargs))


def _array_ufunc(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """NEP 13: a ufunc called with an ``mx.np.ndarray`` among its operands (``__call__`` only)."""
    if method != "__call__":
        return NotImplemented
    if "out" in kwargs:
        out = kwargs["out"]
        if len(out) != 1:
            raise ValueError("The `out` parameter must have exactly one ndarray")
        kwargs["out"] = out[0]
        if isinstance(out[0], _np.ndarray):  # onp_a += mx_b: NumPy writes its own array
            return ufunc(*_to_onp(inputs), **kwargs)
    mx_ufunc = _NUMPY_ARRAY_UFUNC_DICT.get(ufunc.__name__)
    if mx_ufunc is None:
        return _fallback(ufunc, ufunc.__name__, inputs, kwargs)
    return mx_ufunc(*_to_mx(inputs), **kwargs)


_register_array_function()
_register_array_ufunc()
mx_np.ndarray.__array_function__ = _array_function
mx_np.ndarray.__array_ufunc__ = _array_ufunc
