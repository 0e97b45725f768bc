"""``mx.dlpack``: DLPack exchange, as the factories MXNet's array modules build their functions from.

``ndarray_from_dlpack(cls)``, ``ndarray_to_dlpack_for_read()``, ``ndarray_to_dlpack_for_write()``
and ``ndarray_from_numpy(cls, create)`` return the functions ``mx.nd``/``mx.npx`` expose
(``from_dlpack``, ``to_dlpack_for_read``, ...); here they are mxjax's own DLPack functions
(``mxjax.numpy_extension.utils``), which go through ``jax.dlpack``.  The ctypes structures
are DLPack's C layout, as MXNet declares them, for code that reads a capsule by hand.

Two differences follow from XLA owning its buffers: a capsule from ``to_dlpack_for_write``
shares the buffer but writes through it are not seen by the array, and ``from_numpy`` with
``zero_copy=True`` copies once (it still checks, as MXNet does, that the array is
C-contiguous and of a DLPack dtype, and marks it read-only).
"""
from __future__ import annotations

import ctypes
import enum
from typing import Any, Callable

import numpy as onp

from .base import MXNetTypeError, c_str, check_call, mx_int  # noqa: F401  (names MXNet's module carries)
from .device import current_device  # noqa: F401
from .numpy_extension.utils import array_from_dlpack, array_from_numpy, to_dlpack_for_read, to_dlpack_for_write

__all__ = ["DLPackHandle", "PyCapsuleDestructor", "DLDeviceType", "DLContext", "DLDataType", "DLTensor",
           "DLManagedTensor", "DeleterFunc", "dl_managed_tensor_deleter", "ndarray_from_dlpack",
           "ndarray_to_dlpack_for_read", "ndarray_to_dlpack_for_write", "ndarray_from_numpy"]

DLPackHandle = ctypes.c_void_p
NDArrayHandle = ctypes.c_void_p
PyCapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLDeviceType(enum.IntEnum):
    DLCPU = 1
    DLGPU = 2
    DLCPUPINNED = 3
    DLOPENCL = 4
    DLVULKAN = 7
    DLMETAL = 8
    DLVPI = 9
    DLROCM = 10
    DLEXTDEV = 12


class DLContext(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("type_code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]
    TYPE_MAP = {  # dtype name -> (type code: 0 int, 1 uint, 2 float; bits; lanes), MXNet's table
        "int32": (0, 32, 1), "int64": (0, 64, 1), "bool": (1, 1, 1), "uint8": (1, 8, 1), "uint32": (1, 32, 1),
        "uint64": (1, 64, 1), "float16": (2, 16, 1), "float32": (2, 32, 1), "float64": (2, 64, 1),
    }


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("ctx", DLContext), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DeleterFunc = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DeleterFunc)]


@DeleterFunc
def dl_managed_tensor_deleter(dl_managed_tensor_handle: Any) -> None:
    """The deleter of a DLManagedTensor whose ``manager_ctx`` holds a reference to a Python object."""
    pyobj = ctypes.cast(dl_managed_tensor_handle.contents.manager_ctx, ctypes.py_object)
    ctypes.pythonapi.Py_DecRef(pyobj)


def ndarray_from_dlpack(array_cls: type) -> Callable[[Any], Any]:
    """``from_dlpack(dlpack) -> array_cls``: an array sharing a DLPack capsule's (or ``__dlpack__`` object's) buffer."""
    def from_dlpack(dlpack: Any) -> Any:
        return array_from_dlpack(dlpack, array_cls)
    return from_dlpack


def ndarray_to_dlpack_for_read() -> Callable[[Any], Any]:
    """``to_dlpack_for_read(array) -> capsule``, after the array's pending writes."""
    return to_dlpack_for_read


def ndarray_to_dlpack_for_write() -> Callable[[Any], Any]:
    """``to_dlpack_for_write(array) -> capsule`` (writes through it are not seen: XLA buffers are immutable)."""
    return to_dlpack_for_write


def ndarray_from_numpy(array_cls: type, array_create_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``from_numpy(ndarray, zero_copy=True) -> array_cls``; without zero_copy, ``array_create_fn(ndarray, dtype=...)``."""
    def from_numpy(ndarray: onp.ndarray, zero_copy: bool = True) -> Any:
        if not isinstance(ndarray, onp.ndarray):
            raise MXNetTypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
        if not zero_copy:
            return array_create_fn(ndarray, dtype=ndarray.dtype)
        if str(ndarray.dtype) not in DLDataType.TYPE_MAP:
            raise ValueError(f"{ndarray.dtype} is not supported.")
        if not ndarray.flags["C_CONTIGUOUS"]:
            raise ValueError("Only c-contiguous arrays are supported for zero-copy")
        ndarray.flags["WRITEABLE"] = False  # as MXNet: the array now backs an NDArray
        return array_from_numpy(ndarray, array_cls)
    return from_numpy
