"""MXNet's ctypes helpers (``mx.base.c_str``, ``c_array``, ...): plain ctypes/NumPy conversions.

MXNet used them to talk to ``libmxnet.so``; mxjax has no C library, but user code and
extension libraries (``mx.library``) still build C arguments with them, so they are real.
"""
from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as onp

__all__ = ["py_str", "c_str", "c_str_array", "c_array", "c_array_buf", "c_handle_array",
           "ctypes2buffer", "ctypes2numpy_shared", "mx_float", "mx_float_p", "mx_real_t",
           "mx_int", "mx_uint", "mx_int64", "c_int_p", "MXCallbackList"]

mx_int = ctypes.c_int
mx_uint = ctypes.c_uint
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)
c_int_p = ctypes.POINTER(ctypes.c_int)  # mx.operator.c_int_p (an ``int *``)
mx_real_t = onp.float32


def py_str(x: bytes) -> str:
    """Decode C bytes (a ``c_char_p.value``) as UTF-8."""
    return x.decode("utf-8")


def c_str(string: str) -> ctypes.c_char_p:
    """A ``char *`` holding ``string`` encoded as UTF-8."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings: Sequence[str]) -> Any:
    """A ``const char **`` (``c_char_p * n``) of the UTF-8 encoded strings."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_array(ctype: Any, values: Sequence[Any]) -> Any:
    """A ctypes array of ``ctype`` filled with ``values`` (``c_array(mx_float, [1, 2])``)."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype: Any, buf: Any) -> Any:
    """A ctypes array of ``ctype`` sharing the memory of a writable buffer (``array.array``)."""
    return (ctype * len(buf)).from_buffer(buf)


def c_handle_array(objs: Sequence[Any]) -> Any:
    """A ``void **`` of the ``.handle`` of each object."""
    arr = (ctypes.c_void_p * len(objs))()
    arr[:] = [o.handle for o in objs]
    return arr


def ctypes2buffer(cptr: Any, length: int) -> bytearray:
    """Copy ``length`` bytes from a ``POINTER(c_char)`` into a new bytearray."""
    if not isinstance(cptr, ctypes.POINTER(ctypes.c_char)):
        raise TypeError("expected char pointer")
    out = bytearray(length)
    target = (ctypes.c_char * length).from_buffer(out)
    ctypes.memmove(target, cptr, length)
    return out


def ctypes2numpy_shared(cptr: Any, shape: Sequence[int]) -> onp.ndarray:
    """A float32 NumPy array of ``shape`` that shares memory with a ``POINTER(c_float)``."""
    if not isinstance(cptr, mx_float_p):
        raise RuntimeError("expected float pointer")
    size = int(onp.prod(shape, dtype=onp.int64)) if len(shape) else 1
    buffer = (mx_float * size).from_address(ctypes.addressof(cptr.contents))
    return onp.frombuffer(buffer, dtype=onp.float32).reshape(shape)


class MXCallbackList(ctypes.Structure):
    """The callback table handed to C custom-operator code: count, function pointers, contexts."""

    _fields_ = [
        ("num_callbacks", ctypes.c_int),
        ("callbacks", ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
        ("contexts", ctypes.POINTER(ctypes.c_void_p)),
    ]
