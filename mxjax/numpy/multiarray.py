"""``mx.np.ndarray``: the NumPy-compatible array class (a subclass of the core NDArray).

Its methods are the ``mx.np`` functions themselves, so ``x.sum(axis=1)`` and
``np.sum(x, axis=1)`` are one code path.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .._array_operators import binary as _binary, inplace as _inplace
from .._ndarray import NDArray, register_pytree
from .._invoke import invoke, set_np_class
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
        values = self._host()  # printing reads no value into a traced program
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
    _float_index_arrays = False  # an index array of floats is an IndexError, as in NumPy

    reshape_view = NDArray.reshape  # MXNet 1.x's reshape (codes 0, -1, -2, -3, -4; reverse=)

    @property
    def mT(self) -> "ndarray":  # noqa: N802  (the Array API's name)
        """The array with its last two axes swapped (a stack of transposed matrices)."""
        if self.ndim < 2:
            raise MXNetValueError(f"mT: expected an array with ndim >= 2, got shape {self.shape}")
        return _manipulation.swapaxes(self, -1, -2)

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


set_np_class(ndarray)
register_pytree(ndarray)
