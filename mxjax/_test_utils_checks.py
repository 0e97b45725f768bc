"""Tolerances and array comparisons for ``mx.test_utils`` (re-exported there).

Every comparison turns mxjax arrays into NumPy arrays first and judges them with
NumPy's ``isclose`` rule ``|a - b| <= atol + rtol * |b|``.  Default tolerances
depend on the dtypes compared, as in MXNet: the looser of the two operands wins.
A failed comparison raises ``AssertionError`` whose message names the worst
positions (largest error relative to the tolerance), so a test log says where
and by how much two arrays differ.  The symbol checks built on these live in
``_test_utils_symbolic``.
"""
from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as onp

from .base import MXNetTypeError
from ._ndarray import NDArray

__all__ = [
    "default_rtols", "default_atols", "default_numeric_eps", "effective_dtype", "get_tolerance", "get_tols",
    "get_atol", "get_rtol", "get_etol", "same", "checkShapes", "almost_equal", "locationError",
    "assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err", "assert_almost_equal_ignore_nan",
    "assert_exception", "compare_ndarray_tuple",
]

_EXACT = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def default_rtols() -> dict:
    """Relative tolerance per dtype used when a comparison is given none (integers and bools: exact)."""
    table = {onp.dtype(onp.float16): 1e-2, onp.dtype(onp.float32): 1e-4, onp.dtype(onp.float64): 1e-5}
    table.update({onp.dtype(name): 0 for name in _EXACT})
    return table


def default_atols() -> dict:
    """Absolute tolerance per dtype used when a comparison is given none (integers and bools: exact)."""
    table = {onp.dtype(onp.float16): 1e-1, onp.dtype(onp.float32): 1e-3, onp.dtype(onp.float64): 1e-20}
    table.update({onp.dtype(name): 0 for name in _EXACT})
    return table


def default_numeric_eps() -> dict:
    """Finite-difference step per float dtype: powers of two, so adding them to an input drops no bits."""
    return {onp.dtype(onp.float16): 1.0 / 2 ** 6, onp.dtype(onp.float32): 1.0 / 2 ** 9,
            onp.dtype(onp.float64): 1.0 / 2 ** 14}


def _tf32_device(device: Any) -> bool:
    """Whether float32 matrix products on ``device`` run in TF32 (NVIDIA compute capability 8.0 or later)."""
    if getattr(device, "device_type", None) != "gpu" or os.environ.get("NVIDIA_TF32_OVERRIDE") == "0":
        return False
    try:
        capability = float(getattr(device.jax_device, "compute_capability", 0) or 0)
    except Exception:  # a gpu Device that is not present on this machine
        return False
    return capability >= 8.0


def effective_dtype(dat: Any) -> onp.dtype:
    """The dtype whose tolerances fit ``dat``: float16 for float32 data on TF32 GPUs, else its own dtype."""
    dtype = onp.dtype(dat.dtype) if hasattr(dat, "dtype") else onp.asarray(dat).dtype
    if dtype == onp.float32 and _tf32_device(getattr(dat, "device", None)):
        return onp.dtype(onp.float16)
    return dtype


def get_tolerance(dat: Any, tol: Any, default_tol: dict) -> Any:
    """``tol`` itself when it is a number, else its entry (or ``default_tol``'s) for ``dat``'s dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    if dtype in tol:
        return tol[dtype]
    if dtype not in default_tol:
        raise MXNetTypeError(f"get_tolerance: no default tolerance for dtype {dtype.name}; "
                             "pass rtol/atol explicitly")
    return default_tol[dtype]


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple:
    """The (rtol, atol) to compare ``x`` with ``y``: the looser default of the two dtypes unless given."""
    x = onp.array(x) if isinstance(x, numbers.Number) else x
    y = onp.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_atol(atol: Any = None, dtype: Any = onp.dtype(onp.float64)) -> Any:
    """``atol``, or the default absolute tolerance of ``dtype`` when it is None."""
    return default_atols()[onp.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: Any = None, dtype: Any = onp.dtype(onp.float64)) -> Any:
    """``rtol``, or the default relative tolerance of ``dtype`` when it is None."""
    return default_rtols()[onp.dtype(dtype)] if rtol is None else rtol


def get_etol(etol: Any = None) -> Any:
    """``etol`` (the share of elements allowed to mismatch), 0 when None."""
    return 0 if etol is None else etol


def _numpy(x: Any) -> Any:
    """NumPy view of an mxjax array; anything else is returned as is."""
    return x.asnumpy() if isinstance(x, NDArray) else x


def same(a: Any, b: Any) -> bool:
    """Whether two arrays have the same shape and elements."""
    return bool(onp.array_equal(_numpy(a), _numpy(b)))


def checkShapes(a: Any, b: Any) -> None:
    """Raise ``AssertionError`` unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise AssertionError(f"a.shape = {a.shape} and b.shape = {b.shape} are not equal")


def almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None, equal_nan: bool = False,
                 use_broadcast: bool = True) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (float64 defaults when tolerances are None)."""
    a, b = _numpy(a), _numpy(b)
    if not use_broadcast:
        checkShapes(onp.asarray(a), onp.asarray(b))
    return bool(onp.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def locationError(a: Any, b: Any, index: tuple, names: Any, maxError: bool = False) -> str:
    """One line naming a mismatch position and both values there."""
    label = "maximum " if maxError else ""
    return f"Location of {label}error: {index}, {names[0]}={a[index]:.8f}, {names[1]}={b[index]:.8f}"


def _violations(a: onp.ndarray, b: onp.ndarray, rtol: float, atol: float, equal_nan: bool) -> onp.ndarray:
    """Error over tolerance per element (0 where close, inf where a NaN or inf differs)."""
    with onp.errstate(invalid="ignore", over="ignore"):
        close = onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        diff = onp.abs(a.astype(onp.float64) - b.astype(onp.float64))
        ratio = diff / (atol + rtol * onp.abs(b.astype(onp.float64)) + 1e-20)
    ratio = onp.where(onp.isfinite(ratio), ratio, onp.inf)
    return onp.where(close, 0.0, ratio)


def _mismatch_message(a: onp.ndarray, b: onp.ndarray, rtol: float, atol: float, names: Any, equal_nan: bool,
                      mismatches: tuple) -> str:
    """The report ``assert_almost_equal`` raises: worst error, mismatch share and the worst positions."""
    a, b = onp.broadcast_arrays(a, b)
    violation = _violations(a, b, rtol, atol, equal_nan)
    bad = int(onp.count_nonzero(violation))
    worst = onp.unravel_index(int(onp.argmax(violation)), violation.shape) if violation.ndim else ()
    worst = tuple(int(i) for i in worst)
    lines = [f"Error {float(violation[worst]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
             f"(mismatch {100.0 * bad / max(a.size, 1):f}%: {bad} of {a.size} elements)."]
    if worst != ():
        lines.append(locationError(a, b, worst, names, maxError=True))
        shown, ranked = mismatches[0], mismatches[1]
        limit = bad if ranked <= 0 else min(bad, ranked)
        order = onp.argsort(-violation, axis=None, kind="stable")[:min(limit, max(shown, 0))]
        for rank, flat in enumerate(order, 1):
            index = tuple(int(i) for i in onp.unravel_index(int(flat), violation.shape))
            lines.append(f"{rank:3d}: Error {float(violation[index]):f}  {locationError(a, b, index, names)}")
    with onp.printoptions(threshold=8, edgeitems=2, suppress=True):
        lines += [f" {names[0]}: {a!r}", f" {names[1]}: {b!r}"]
    return "\n".join(lines)


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None, names: Any = ("a", "b"),
                        equal_nan: bool = False, use_broadcast: bool = True, mismatches: tuple = (10, 10)) -> None:
    """Raise ``AssertionError`` unless ``a`` and ``b`` (NumPy or mxjax arrays, or numbers) are close.

    Tolerances default per dtype (``default_rtols``/``default_atols``), may be numbers or
    dicts of dtype to number.  ``mismatches`` = (positions listed in the message, positions
    ranked; 0 or less ranks all).  Two bool arrays must be equal exactly.
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _numpy(a), _numpy(b)
    if getattr(a, "dtype", None) == onp.bool_ and getattr(b, "dtype", None) == onp.bool_:
        onp.testing.assert_equal(a, b)
        return
    try:
        close = almost_equal(a, b, rtol, atol, equal_nan=equal_nan)
    except ValueError as err:  # shapes that do not broadcast
        raise AssertionError(f"assert_almost_equal: cannot compare {names[0]} of shape {onp.shape(a)} with "
                             f"{names[1]} of shape {onp.shape(b)}: {err}") from None
    if not close:
        raise AssertionError(_mismatch_message(onp.asarray(a), onp.asarray(b), rtol, atol, names, equal_nan,
                                               tuple(mismatches)))


def assert_allclose(a: Any, b: Any, rtol: Any = 1e-07, atol: Any = 0, equal_nan: bool = True) -> None:
    """``assert_almost_equal`` with NumPy's ``assert_allclose`` defaults (rtol 1e-7, atol 0, NaN equal)."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a: Any, b: Any, rtol: Any = None, atol: Any = None, etol: Any = None,
                                 names: Any = ("a", "b"), equal_nan: bool = False,
                                 mismatches: tuple = (10, 10)) -> None:
    """Like ``assert_almost_equal``, but pass when at most a share ``etol`` of the elements mismatch."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = onp.asarray(_numpy(a)), onp.asarray(_numpy(b))
    equals = onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1 - onp.count_nonzero(equals) / equals.size > etol:
        raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, tuple(mismatches)))


def _zero_nans(a: Any, b: Any) -> tuple:
    a, b = onp.array(_numpy(a)), onp.array(_numpy(b))
    if a.shape != b.shape:
        a, b = (onp.array(x) for x in onp.broadcast_arrays(a, b))
    nan = onp.isnan(a) | onp.isnan(b)
    a[nan] = 0
    b[nan] = 0
    return a, b


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                   names: Any = ("a", "b")) -> None:
    """``assert_almost_equal`` after zeroing every position where either array holds NaN."""
    a, b = _zero_nans(a, b)
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Any, exception_type: Any, *args: Any, **kwargs: Any) -> None:
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    name = getattr(f, "__name__", repr(f))
    expected = getattr(exception_type, "__name__", str(exception_type))
    raise AssertionError(f"assert_exception: {name} did not raise {expected}")


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """``assert_almost_equal`` over two (nested) tuples of arrays; nothing to check when either is None."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)
