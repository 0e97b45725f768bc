"""NDArray's reads onto the host: NumPy copies, Python scalars, DLPack capsules and printing.

A base class of ``NDArray`` (``_ndarray.py``), apart from it because these methods only wait for
and read values the array already knows how to produce (``to_jax``, ``_data``).
Each read of a traced array inside ``hybridize()`` raises or warns through ``check_read``.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as onp

from . import engine as _engine
from ._value_reads import check_read
from ._wait import wait as _wait
from .base import MXNetError, MXNetValueError
from .graph.lazy import Lazy
from .operator import _checked

__all__ = ["HostReads"]


class HostReads:
    """``wait_to_read``, ``asnumpy``, ``item``, ``asscalar``, ``tolist``, ``__array__``, DLPack,
    ``bool``/``float``/``int``/``index``/``complex`` conversions and ``repr`` of an NDArray."""

    __slots__ = ()

    def wait_to_read(self) -> None:
        """Block until pending writes finish; re-raise any error they stored on this array."""
        self._ready()

    def _ready(self) -> jax.Array:
        """:meth:`wait_to_read`, returning the value it waited for (``_data`` may be another thread's
        newer write by then)."""
        data = self.to_jax()
        var = self._var  # (a lazy value here is a later write by another thread: not this read's)
        if var is not None and not isinstance(var, Lazy):
            _engine.wait_for_variable(var)
        try:
            _wait(data)
        except Exception as err:  # asynchronous XLA failures surface here
            raise MXNetError(f"error while computing this array: {err}") from None
        _checked.raise_pending()  # an index out of range found inside a compiled program
        return data

    wait_to_write = wait_to_read

    def asnumpy(self) -> onp.ndarray:
        """A NumPy copy of the values (waits for pending work)."""
        check_read(self, "asnumpy()")
        return self._host()

    def _host(self) -> onp.ndarray:
        return onp.array(self._ready())

    def _scalar(self, how: str) -> Any:
        check_read(self, how)
        if self.size != 1:
            raise MXNetValueError(f"asscalar: the array must have exactly one element, got shape {self.shape}")
        return self._host().reshape(()).item()

    def item(self, *args: Any) -> Any:
        check_read(self, "item()")
        values = self._host()
        if not args and values.size != 1:
            raise MXNetValueError(f"item: can only convert an array of size 1 to a Python scalar, got shape {self.shape}")
        return values.item(*args)

    def asscalar(self) -> Any:
        return self._scalar("asscalar()")

    def tolist(self) -> Any:
        check_read(self, "tolist()")
        return self._host().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> onp.ndarray:
        check_read(self, "conversion to a NumPy array")
        values = self._host()
        return values if dtype is None else values.astype(dtype, copy=False)

    def __jax_array__(self) -> jax.Array:
        return self.to_jax()

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.to_jax().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self.to_jax().__dlpack_device__()

    def to_dlpack_for_read(self) -> Any:
        return self.__dlpack__()

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule of this array's buffer after pending writes.  XLA buffers are immutable, so
        a consumer writing through it is not seen by this array (as ``npx.to_dlpack_for_write``)."""
        self.wait_to_read()
        return self.to_jax().__dlpack__()

    def __bool__(self) -> bool:
        check_read(self, "bool()")
        if self.size != 1:
            raise MXNetValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()")
        return bool(self._host().reshape(()))

    def __float__(self) -> float:
        return float(self._scalar("float()"))

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def __index__(self) -> int:
        if onp.dtype(self._data.dtype).kind not in "iu" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._scalar("use as an index"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex()"))

    def __repr__(self) -> str:
        values = onp.array2string(self._host(), separator=" ")
        shape = "x".join(str(s) for s in self.shape)
        return f"\n{values}\n<{type(self).__name__} {shape} @{self.device}>"

    def __str__(self) -> str:
        return repr(self)
