"""``mx.np`` array constructors that copy data in (``array``, ``asarray``)."""
from __future__ import annotations

from typing import Any

import jax
import numpy as onp

from .._config import is_np_default_dtype
from ..base import MXNetTypeError
from ..device import Device
from .._ndarray import NDArray, from_jax
from .._ndarray import array as _core_array
from .multiarray import ndarray

__all__ = ["array", "asarray", "from_dlpack"]


def array(object: Any, dtype: Any = None, device: Device | None = None, ctx: Device | None = None) -> ndarray:
    """A new ``mx.np.ndarray`` holding a copy of ``object``.

    Python lists and scalars get the default dtype (float32, or float64 after
    ``npx.set_np(dtype=True)``).  A float64 NumPy array becomes float32 too, as in MXNet 2.0
    (data from NumPy, float64 by default, then meets float32 parameters), unless
    ``set_np(dtype=True)`` is on.  Integer and boolean NumPy arrays keep their dtype: MXNet 2.0
    makes them float32 as well, which loses integers above 2**24 and turns masks into floats.
    mxjax and JAX arrays keep theirs.
    """
    if dtype is None and isinstance(object, onp.ndarray) and object.dtype == onp.float64 \
            and not is_np_default_dtype():
        dtype = "float32"
    return _core_array(object, dtype=dtype, device=device or ctx, cls=ndarray)


def asarray(obj: Any, dtype: Any = None, device: Device | None = None, ctx: Device | None = None) -> ndarray:
    """Like :func:`array`, but returns ``obj`` itself when it is already an ``mx.np.ndarray`` of that dtype."""
    if isinstance(obj, ndarray) and (dtype is None or obj.dtype == dtype) and device is None and ctx is None:
        return obj
    if isinstance(obj, NDArray) and dtype is None and device is None and ctx is None:
        return obj.as_np_ndarray()
    return array(obj, dtype=dtype, device=device, ctx=ctx)


def from_dlpack(x: Any) -> ndarray:
    """An ``mx.np.ndarray`` on the buffer of ``x``, any object with ``__dlpack__`` (an mx, NumPy, JAX or
    torch array): no copy where the producer's device allows.  For a bare DLPack capsule use
    ``npx.from_dlpack``."""
    if not hasattr(x, "__dlpack__"):
        raise MXNetTypeError(f"from_dlpack: expected an object with __dlpack__ (an array), got {type(x).__name__}")
    if isinstance(x, NDArray):
        x.wait_to_read()
    return from_jax(jax.dlpack.from_dlpack(x), ndarray)
