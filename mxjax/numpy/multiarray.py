"""``mx.np.ndarray``: the NumPy-compatible array class (a subclass of the core NDArray).

Its methods are the ``mx.np`` functions themselves, so ``x.sum(axis=1)`` and
``np.sum(x, axis=1)`` are one code path.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .._ndarray import NDArray, _binary, _inplace, invoke, register_pytree, set_np_class
from .._tape import Leaf
from ..base import MXNetValueError
from ..operator import get_op
from . import _elemwise, _manipulation, _reduction, _sorting

__all__ = ["ndarray"]


class ndarray(NDArray):
    """An array with NumPy semantics (``mx.np.ndarray``): what every ``mx.np`` function returns."""

    __slots__ = ()

    @property
    def dtype(self) -> onp.dtype:
        return onp.dtype(self._data.dtype)

    def __repr__(self) -> str:
        values = self.asnumpy()
        text = onp.array2string(values, separator=", ", prefix="array(")
        dtype = values.dtype
        default = dtype in (onp.float32, onp.bool_, onp.int64) and values.size > 0
        suffix = "" if default else f", dtype={dtype.name}"
        device = self.device
        if device.device_type != "cpu":
            suffix += f", device={device}"
        return f"array({text}{suffix})"

    __str__ = __repr__

    def reshape(self, *shape: Any, order: str = "C") -> "ndarray":
        """NumPy's reshape: ``x.reshape(2, -1)``, ``x.reshape((2, -1))`` or ``x.reshape(shape_array)``."""
        if len(shape) == 1 and isinstance(shape[0], NDArray):  # a shape computed from data
            return _manipulation.reshape(self, shape[0], order=order)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return invoke(get_op("reshape"), (self,), {"newshape": tuple(shape), "order": order}, ndarray)

    _fluent = False  # NumPy's methods only, not MXNet 1.x's fluent ones

    reshape_view = NDArray.reshape  # MXNet 1.x's reshape (codes 0, -1, -2, -3, -4; reverse=)

    @property
    def mT(self) -> "ndarray":  # noqa: N802  (the Array API's name)
        """The array with its last two axes swapped (a stack of transposed matrices)."""
        if self.ndim < 2:
            raise MXNetValueError(f"mT: expected an array with ndim >= 2, got shape {self.shape}")
        return _manipulation.swapaxes(self, -1, -2)

    @property
    def writable(self) -> bool:
        """Whether in-place writes are allowed: always True (mxjax has no read-only arrays; a write
        replaces the buffer, so a DLPack export made earlier keeps the old values)."""
        return True

    def drop_grad(self) -> None:
        """Forget the gradient buffer of an array marked by ``attach_grad``: ``grad`` is None again
        and the array is no longer a variable of later ``backward`` calls."""
        if isinstance(self._ag, Leaf):
            self._ag = None

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule of this array's buffer after pending writes.  XLA buffers are immutable, so
        a consumer writing through it is not seen by this array (as ``npx.to_dlpack_for_write``)."""
        self.wait_to_read()
        return self.to_jax().__dlpack__()

    def slice_assign(self, rhs: Any, begin: Any, end: Any, step: Any) -> "ndarray":
        """Assign ``rhs`` to the slice ``begin:end:step`` (per axis; None entries mean the default)
        in place, and return this array."""
        self[_slices("slice_assign", self, begin, end, step)] = rhs
        return self

    def slice_assign_scalar(self, value: Any, begin: Any, end: Any, step: Any) -> "ndarray":
        """Assign the scalar ``value`` (cast to this array's dtype) to the slice ``begin:end:step`` in
        place, and return this array."""
        self[_slices("slice_assign_scalar", self, begin, end, step)] = value
        return self

    # NumPy arithmetic with MXNet 2.0's promotion (the legacy class uses the broadcast_* ops)
    __add__ = _binary("add")
    __radd__ = _binary("add", reflected=True)
    __sub__ = _binary("subtract")
    __rsub__ = _binary("subtract", reflected=True)
    __mul__ = _binary("multiply")
    __rmul__ = _binary("multiply", reflected=True)
    __truediv__ = _binary("true_divide")
    __rtruediv__ = _binary("true_divide", reflected=True)
    __mod__ = _binary("mod")
    __rmod__ = _binary("mod", reflected=True)
    __pow__ = _binary("power")
    __rpow__ = _binary("power", reflected=True)
    __iadd__ = _inplace("add")
    __isub__ = _inplace("subtract")
    __imul__ = _inplace("multiply")
    __itruediv__ = _inplace("true_divide")
    __imod__ = _inplace("mod")
    __ipow__ = _inplace("power")
    # NumPy comparisons give bool arrays (the legacy class gives 0/1 in the operands' dtype)
    __eq__ = _elemwise.equal  # type: ignore[assignment]
    __ne__ = _elemwise.not_equal  # type: ignore[assignment]
    __lt__ = _elemwise.less
    __le__ = _elemwise.less_equal
    __gt__ = _elemwise.greater
    __ge__ = _elemwise.greater_equal
    __hash__ = NDArray.__hash__

    def tostype(self, stype: str) -> "ndarray":
        if stype != "default":
            raise ValueError("mx.np.ndarray supports only the default (dense) storage type")
        return self

    # Methods shared with the mx.np functions of the same name.
    astype = NDArray.astype
    # Methods are the mx.np functions themselves: one code path, NumPy's argument order.
    flatten = _manipulation.ravel
    ravel = _manipulation.ravel
    squeeze = _manipulation.squeeze
    tile = _manipulation.tile
    broadcast_to = _manipulation.broadcast_to
    swapaxes = _manipulation.swapaxes
    repeat = _manipulation.repeat
    take = _manipulation.take
    diagonal = _manipulation.diagonal
    trace = _manipulation.trace
    clip = _elemwise.clip
    round = _elemwise.round
    sum = _reduction.sum
    mean = _reduction.mean
    prod = _reduction.prod
    max = _reduction.max
    min = _reduction.min
    std = _reduction.std
    var = _reduction.var
    argmax = _reduction.argmax
    argmin = _reduction.argmin
    all = _reduction.all
    any = _reduction.any
    cumsum = _reduction.cumsum
    dot = _reduction.dot
    sort = _sorting.sort  # MXNet returns a sorted copy (NumPy sorts in place)
    argsort = _sorting.argsort
    nonzero = _sorting.nonzero


def _slices(name: str, array: NDArray, begin: Any, end: Any, step: Any) -> tuple:
    """The index ``begin:end:step`` per axis (step may be shorter, or empty)."""
    begin, end, step = tuple(begin), tuple(end), tuple(step or ())
    if len(begin) != len(end) or len(step) > len(begin) or len(begin) > array.ndim:
        raise MXNetValueError(f"{name}: begin {begin}, end {end} and step {step} must have equal lengths "
                              f"(step may be empty) of at most ndim={array.ndim} (array shape {array.shape})")
    step = step + (None,) * (len(begin) - len(step))
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


set_np_class(ndarray)
register_pytree(ndarray)
