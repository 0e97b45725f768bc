"""``mx.npx.utils``: array exchange with NumPy and DLPack, file I/O, and the GPU queries of ``mx.npx``.

DLPack capsules are one-shot handles on an array's buffer.  XLA buffers are immutable,
so ``to_dlpack_for_write`` hands out the same read view as ``to_dlpack_for_read``: a
consumer may read it, but writes through it are not seen by the mxjax array (MXNet
shares one mutable buffer).  ``from_dlpack`` takes a capsule or any object with
``__dlpack__`` (a PyTorch tensor, a NumPy array, a JAX array).  The GPU queries are
``mx.device.gpu_memory_info`` and ``mx.util.get_cuda_compute_capability``.
"""
from __future__ import annotations

import ctypes
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetTypeError
from ..device import gpu_memory_info
from ..util import get_cuda_compute_capability
from .._ndarray import NDArray, from_jax
from ..numpy.multiarray import ndarray as _np_ndarray
from ._utils import is_np_array, is_np_shape, load, save, savez

__all__ = ["from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write", "gpu_memory_info",
           "get_cuda_compute_capability", "is_np_array", "is_np_shape", "save", "savez", "load"]

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    """The leading fields of DLPack's ``DLTensor`` (the first member of ``DLManagedTensor``)."""

    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


class _Capsule:
    """A DLPack capsule dressed as an object with ``__dlpack__``, which ``jax.dlpack`` requires."""

    def __init__(self, capsule: Any):
        if not _capsule_is_valid(capsule, b"dltensor"):
            raise MXNetTypeError("from_dlpack: the capsule was already consumed or is not a DLPack tensor "
                                 "(a capsule can be imported once; export the array again)")
        head = _DLTensorHead.from_address(_capsule_pointer(capsule, b"dltensor"))
        self._capsule = capsule
        self._device = (int(head.device.device_type), int(head.device.device_id))

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple:
        return self._device


def _to_jax_buffer(dlpack: Any) -> jax.Array:
    if type(dlpack).__name__ == "PyCapsule":
        dlpack = _Capsule(dlpack)
    if not hasattr(dlpack, "__dlpack__"):
        raise MXNetTypeError(f"from_dlpack: expected a DLPack capsule or an object with __dlpack__, "
                             f"got {type(dlpack).__name__}")
    return jax.dlpack.from_dlpack(dlpack)


def array_from_dlpack(dlpack: Any, cls: type) -> NDArray:
    """An array of class ``cls`` sharing the buffer a DLPack capsule (or ``__dlpack__`` object) describes."""
    return from_jax(_to_jax_buffer(dlpack), cls)


def array_from_numpy(values: Any, cls: type) -> NDArray:
    """An array of class ``cls`` with the values of a NumPy array (XLA owns its buffers: one copy)."""
    if not isinstance(values, onp.ndarray):
        raise MXNetTypeError(f"from_numpy: expected a numpy.ndarray, got {type(values).__name__}")
    return from_jax(jnp.asarray(values), cls)


def to_dlpack_for_read(data: NDArray) -> Any:
    """A DLPack capsule of ``data``'s buffer, for a consumer that reads it (waits for pending writes)."""
    if not isinstance(data, NDArray):
        raise MXNetTypeError(f"to_dlpack_for_read: expected an mxjax array, got {type(data).__name__}")
    data.wait_to_read()
    return data.to_jax().__dlpack__()


def to_dlpack_for_write(data: NDArray) -> Any:
    """A DLPack capsule of ``data``'s buffer (XLA buffers are immutable: writes through it are not seen)."""
    if not isinstance(data, NDArray):
        raise MXNetTypeError(f"to_dlpack_for_write: expected an mxjax array, got {type(data).__name__}")
    data.wait_to_read()
    return data.to_jax().__dlpack__()


def from_dlpack(dlpack: Any) -> _np_ndarray:
    """An ``mx.np.ndarray`` sharing the buffer of a DLPack capsule or an object with ``__dlpack__``."""
    return array_from_dlpack(dlpack, _np_ndarray)


def from_numpy(ndarray: onp.ndarray, zero_copy: bool = True) -> _np_ndarray:
    """An ``mx.np.ndarray`` with the values of a NumPy array (``zero_copy`` is accepted; XLA copies)."""
    return array_from_numpy(ndarray, _np_ndarray)
