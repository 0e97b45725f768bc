"""``mx.np.type_functions``: the Array API's data type functions, as MXNet 2.0 gives them.

(MXNet 2.0 also binds them as ``mx.np.finfo``/``iinfo``/``can_cast``/``result_type``; mxjax's
``mx.np`` keeps NumPy's there for now, a superset except for ``result_type``'s promotion.)

``finfo``/``iinfo`` return small named tuples with the Array API's fields; ``result_type``
follows the Array API promotion table, which has no rule for ``uint64`` with a signed
integer (a ``TypeError``, as in MXNet).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as onp

from .._ndarray import NDArray

__all__ = ["finfo_obj", "iinfo_obj", "can_cast", "finfo", "iinfo", "result_type"]


class finfo_obj(NamedTuple):  # noqa: N801  (MXNet's name)
    """Machine limits of a floating-point dtype (Array API fields)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float


class iinfo_obj(NamedTuple):  # noqa: N801  (MXNet's name)
    """Machine limits of an integer dtype (Array API fields)."""

    bits: int
    max: int
    min: int


def _dtype_of(value: Any) -> Any:
    return value.dtype if isinstance(value, (NDArray, onp.ndarray)) else value


def can_cast(from_: Any, to: Any) -> bool:
    """Whether a cast from the dtype (or the array's dtype) ``from_`` to ``to`` is safe (NumPy's rule)."""
    return bool(onp.can_cast(_dtype_of(from_), to))


def finfo(dtype: Any) -> finfo_obj:
    """bits, eps, max, min and smallest_normal of a floating-point dtype (or an array's dtype)."""
    info = onp.finfo(_dtype_of(dtype))
    return finfo_obj(info.bits, float(info.eps), float(info.max), float(info.min), float(info.tiny))


def iinfo(dtype: Any) -> iinfo_obj:
    """bits, max and min of an integer dtype (or an array's dtype)."""
    info = onp.iinfo(_dtype_of(dtype))
    return iinfo_obj(info.bits, int(info.max), int(info.min))


def _promote(a: onp.dtype, b: onp.dtype) -> onp.dtype:
    """The Array API table: bool gives way; ints with floats give the float; mixed-sign ints the
    signed type wide enough for both, none for uint64."""
    if a == b or b.kind == "b":
        return a
    if a.kind == "b":
        return b
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return a if a.itemsize >= b.itemsize else b
        return a if a.kind == "f" else b
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if unsigned.itemsize < signed.itemsize:
        return signed
    if unsigned.itemsize == 8:
        raise TypeError(f"result_type: unknown type promotion between {a} and {b}")
    return onp.dtype(f"int{unsigned.itemsize * 16}")


def result_type(*arrays_and_dtypes: Any) -> onp.dtype:
    """The dtype the Array API's promotion gives for these arrays and dtypes."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    dtypes = []
    for value in arrays_and_dtypes:
        value = _dtype_of(value)
        if isinstance(value, (bool, int, float, complex)) or value is None:
            raise ValueError(f"result_type: inputs must be ndarrays or dtypes, got {value!r}")
        dtype = onp.dtype(value)
        if dtype.kind not in "biuf":
            raise TypeError(f"result_type: unknown type promotion for {dtype}")
        dtypes.append(dtype)
    out = dtypes[0]
    for dtype in dtypes[1:]:
        out = _promote(out, dtype)
    return out
