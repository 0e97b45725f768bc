"""``mx.np`` array constructors that copy data in (``array``, ``asarray``)."""
from __future__ import annotations

from typing import Any

from ..device import Device
from .._ndarray import NDArray
from .._ndarray import array as _core_array
from .multiarray import ndarray

__all__ = ["array", "asarray"]


def array(object: Any, dtype: Any = None, device: Device | None = None, ctx: Device | None = None) -> ndarray:
    """A new ``mx.np.ndarray`` holding a copy of ``object``.

    Python lists and scalars get the default dtype (float32, or float64 after
    ``npx.set_np(dtype=True)``); NumPy and mxjax arrays keep theirs.
    """
    return _core_array(object, dtype=dtype, device=device or ctx, cls=ndarray)


def asarray(obj: Any, dtype: Any = None, device: Device | None = None, ctx: Device | None = None) -> ndarray:
    """Like :func:`array`, but returns ``obj`` itself when it is already an ``mx.np.ndarray`` of that dtype."""
    if isinstance(obj, ndarray) and (dtype is None or obj.dtype == dtype) and device is None and ctx is None:
        return obj
    if isinstance(obj, NDArray) and dtype is None and device is None and ctx is None:
        return obj.as_np_ndarray()
    return array(obj, dtype=dtype, device=device, ctx=ctx)
