"""``mx.util``'s function wrappers: NumPy ufunc keyword checks, keyword renames, NumPy fallback.

MXNet wraps its ``mx.np`` functions with these so that NumPy keywords it does not support
fail clearly (``NotImplementedError`` for a legal but unsupported value, ``TypeError`` for
nonsense) and so that 1.x keywords (``ctx=``) and NumPy spellings (``ddof=``, ``UPLO=``,
``kind=``) reach the Array-API names.  ``numpy_fallback`` runs a function on host NumPy.
"""
from __future__ import annotations

import functools
import struct
from typing import Any, Callable

import numpy as onp

from . import _config
from . import _invoke, _ndarray
from .base import numeric_types

__all__ = ["np_ufunc_legal_option", "wrap_np_unary_func", "wrap_np_binary_func",
           "wrap_data_api_statical_func", "wrap_data_api_linalg_func", "wrap_sort_functions",
           "wrap_ctx_to_device_func", "numpy_fallback", "dtype_from_number", "default_array"]

# NumPy's ufunc keywords and their defaults: passing the default is always allowed.
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None, "subok": True}
_CASTINGS = {"no", "equiv", "safe", "same_kind", "unsafe"}
_UFUNC_DTYPES = {"int8", "uint8", "int32", "int64", "float16", "float32", "float64"}

_MAX_UINT64 = 2**64 - 1
_MAX_INT64 = 2**63 - 1
_FLOAT32_EXACT_INT = 2**24  # above this float32 no longer holds every integer


def np_ufunc_legal_option(key: str, value: Any) -> bool:
    """Whether ``key=value`` is a value NumPy's ufuncs accept (so unsupported, not malformed)."""
    if key == "where":
        return True
    if key == "casting":
        return value in _CASTINGS
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        name = value if isinstance(value, str) else getattr(value, "__name__", None)
        return name in _UFUNC_DTYPES
    if key == "subok":
        return isinstance(value, bool)
    return False


def _check_ufunc_kwargs(func: Callable, kwargs: dict, unary: bool) -> None:
    for key, value in kwargs.items():
        if key not in _UFUNC_DEFAULTS:
            raise TypeError(f"{key} is an invalid keyword to function '{func.__name__}'")
        if value == _UFUNC_DEFAULTS[key]:
            continue
        if np_ufunc_legal_option(key, value):
            where = f" for operator {func.__name__}" if unary else ""
            raise NotImplementedError(f"{key}={value} is not implemented yet{where}")
        if unary:
            raise TypeError(f"{key}={value} not understood for operator {func.__name__}")
        raise TypeError(f"{key} {value} not understood")


def wrap_np_unary_func(func: Callable) -> Callable:
    """Wrap ``func(x, out=None)`` so NumPy ufunc keywords are checked (defaults pass, others raise)."""
    @functools.wraps(func)
    def wrapped(x: Any, out: Any = None, **kwargs: Any) -> Any:
        _check_ufunc_kwargs(func, kwargs, unary=True)
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func: Callable) -> Callable:
    """Wrap ``func(x1, x2, out=None)`` so NumPy ufunc keywords are checked (defaults pass, others raise)."""
    @functools.wraps(func)
    def wrapped(x1: Any, x2: Any, out: Any = None, **kwargs: Any) -> Any:
        _check_ufunc_kwargs(func, kwargs, unary=False)
        return func(x1, x2, out=out)
    return wrapped


def wrap_data_api_statical_func(func: Callable) -> Callable:
    """Rename NumPy's ``ddof=`` to the Array API's ``correction=`` (``std``, ``var``)."""
    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        correction = kwargs.pop("ddof", None)
        if correction is not None:
            kwargs["correction"] = correction
        return func(*args, **kwargs)
    return wrapped


def wrap_data_api_linalg_func(func: Callable) -> Callable:
    """Rename NumPy's ``UPLO=`` to ``upper=`` (``'U'`` → True) and ``rcond=``/``tol=`` to ``rtol=``."""
    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        upper = kwargs.pop("UPLO", None)
        rcond = kwargs.pop("rcond", None)
        tol = kwargs.pop("tol", None)
        if upper is not None:
            kwargs["upper"] = upper == "U"
        if rcond is not None:
            kwargs["rtol"] = rcond
        if tol is not None:
            kwargs["rtol"] = tol
        return func(*args, **kwargs)
    return wrapped


def wrap_sort_functions(func: Callable) -> Callable:
    """Turn NumPy's ``kind=`` into ``stable=`` (``kind='stable'``); ``order=`` is not supported."""
    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        kind = kwargs.pop("kind", None)
        order = kwargs.pop("order", None)
        if kind is not None:
            kwargs["stable"] = kind == "stable"
        if order is not None:
            raise NotImplementedError("order not supported here")
        return func(*args, **kwargs)
    return wrapped


def wrap_ctx_to_device_func(func: Callable) -> Callable:
    """Accept the 1.x keyword ``ctx=`` as ``device=``."""
    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        device = kwargs.pop("ctx", None)
        if device is not None:
            kwargs["device"] = device
        return func(*args, **kwargs)
    return wrapped


def _to_host(obj: Any) -> tuple[Any, Any]:
    """Replace NDArrays (nested in lists, tuples, dicts) by NumPy arrays; also return their device."""
    if isinstance(obj, _ndarray.NDArray):
        return obj.asnumpy(), obj.device
    if isinstance(obj, (list, tuple, dict)):
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        converted, device = {}, None
        for key, value in items:
            converted[key], item_device = _to_host(value)
            if device is not None and item_device is not None and item_device != device:
                raise ValueError(f"numpy_fallback: inputs on different devices {device} and {item_device}")
            device = device or item_device
        if isinstance(obj, dict):
            return converted, device
        return type(obj)(converted[i] for i in range(len(obj))), device
    return obj, None


def _to_device(obj: Any, device: Any) -> Any:
    if isinstance(obj, onp.ndarray):
        return _ndarray.array(obj, dtype=obj.dtype, device=device, cls=_invoke.np_class())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    return obj


def numpy_fallback(func: Callable) -> Callable:
    """Run ``func`` on host NumPy: mx arrays in become NumPy arrays, NumPy arrays out become ``mx.np`` arrays.

    MXNet rewrote the function's source to use NumPy; mxjax converts the arguments instead,
    so ``func`` should call NumPy (``numpy`` imported as usual) on them.  A function
    returning None raises ``ValueError`` as in MXNet.
    """
    @functools.wraps(func)
    def fallback(*args: Any, **kwargs: Any) -> Any:
        host_args, device = _to_host(args)
        host_kwargs, kw_device = _to_host(kwargs)
        if device is not None and kw_device is not None and device != kw_device:
            raise ValueError(f"numpy_fallback: inputs on different devices {device} and {kw_device}")
        result = func(*host_args, **host_kwargs)
        if result is None:
            raise ValueError("Only functions with return values are allowed to use this decorator")
        return _to_device(result, device or kw_device)
    return fallback


def dtype_from_number(number: Any) -> type:
    """The NumPy dtype MXNet gives a Python scalar: int64 (uint64 past int64), float32 or float64.

    A float becomes float64 when float32 would lose it (magnitude past 2**24 or a fraction
    float32 rounds to an integer), or under ``set_np(dtype=True)``.
    """
    if not isinstance(number, numeric_types):
        raise TypeError(f"dtype_from_number: expected an int or float, got {type(number).__name__}")
    if isinstance(number, int):
        if number > _MAX_UINT64:
            raise OverflowError("Integer out of bounds")
        if number > _MAX_INT64:
            return onp.uint64
        return onp.int64 if struct.calcsize("P") == 8 else onp.int32
    if isinstance(number, float):  # np.float64 too, as in MXNet
        if abs(number) > _FLOAT32_EXACT_INT or (
                not onp.isnan(number) and onp.float32(number) == int(number) and number != int(number)):
            return onp.float64
        return onp.float64 if _config.is_np_default_dtype() else onp.float32
    return number.dtype


def default_array(source_array: Any, device: Any = None, dtype: Any = None) -> Any:
    """``mx.np.array`` under NumPy array semantics, else ``mx.nd.array`` (float32 for lists)."""
    return _ndarray.array(source_array, dtype=dtype, device=device)
