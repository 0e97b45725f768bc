"""NDArray's Python operators (``+``, ``+=``, ``-x``, ``==``...), each one registered op.

:class:`Operators` is a base class of NDArray with the legacy class's operators (MXNet 1.x's
``broadcast_*`` ops); ``mx.np.ndarray`` rebinds them to NumPy's ops with :func:`binary`,
:func:`inplace` and :func:`unary`.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as onp

from ._invoke import invoke
from .base import MXNetTypeError
from .graph.bulk import operator_method
from .operator import get_op

def binary(name: str, reflected: bool = False) -> Any:
    op = get_op(name)
    arith = name in _ARITH_OPS

    if reflected:
        def method(self: "Operators", other: Any) -> Any:
            if isinstance(other, _NON_WEAK):
                other = _python_scalar(other, type(self)._fluent, arith)
            elif not isinstance(other, _OPERANDS):
                other = _as_operand(other)
                if other is NotImplemented:
                    return other
            return invoke(op, (other, self), None, type(self))
    else:
        equality = name in _EQUALITY

        def method(self: "Operators", other: Any) -> Any:
            if isinstance(other, _NON_WEAK):
                other = _python_scalar(other, type(self)._fluent, arith)
            elif not isinstance(other, _OPERANDS):
                operand = _as_operand(other)
                if operand is NotImplemented:
                    if equality:  # MXNet's ==/!= raise here: Python's fallback would compare identities
                        raise TypeError(f"type {type(other)} not supported")
                    return operand
                other = operand
            return invoke(op, (self, other), None, type(self))
    method.__name__ = name
    return operator_method(op, method, 2, reflected)


def inplace(name: str) -> Any:
    op = get_op(name)
    arith = name in _ARITH_OPS

    def method(self: "Operators", other: Any) -> "Operators":
        if isinstance(other, _NON_WEAK):
            other = _python_scalar(other, type(self)._fluent, arith)
        elif not isinstance(other, _OPERANDS):
            other = _as_operand(other)
            if other is NotImplemented:
                return other

        def compute(current: "Operators") -> "Operators":
            out = invoke(op, (current, other), None, type(self))
            if out._data.dtype != current._data.dtype:  # MXNet: the result must fit the array's dtype
                raise MXNetTypeError(
                    f"{op.name} (in place): the result dtype {out._data.dtype} cannot be stored in the "
                    f"array of dtype {current._data.dtype} and shape {current.shape}")
            return out
        self._update(compute, op.name)
        return self
    method.__name__ = f"i{name}"
    return method


def unary(name: str) -> Any:
    op = get_op(name)

    def method(self: "Operators") -> Any:
        return invoke(op, (self,), None, type(self))
    method.__name__ = name
    return operator_method(op, method, 1)


_SCALARS = (int, float, bool, complex, onp.generic)
_NON_WEAK = (bool, onp.generic)  # scalars JAX would not treat as weakly typed


_EQUALITY = frozenset({"broadcast_equal", "broadcast_not_equal"})  # the legacy class's == and !=
_ARITH_OPS = frozenset({"add", "subtract", "multiply", "true_divide", "floor_divide", "mod", "power"})


def _python_scalar(value: Any, legacy: bool, arith: bool) -> Any:
    """For arithmetic, a Python bool as the int MXNet's scalar ops see (``bool_array + True`` is
    int64); for the legacy class, any bool or NumPy scalar as a Python number (its scalar op)."""
    if legacy and isinstance(value, onp.generic):
        value = value.item()
    return int(value) if isinstance(value, bool) and (arith or legacy) else value


def _as_operand(other: Any) -> Any:
    if isinstance(other, (onp.ndarray, jax.Array, list, tuple)):
        return other
    return NotImplemented


class Operators:
    """The operators of an array class; every array is one (see ``_OPERANDS``)."""

    __slots__ = ()

    # the legacy class's arithmetic: MXNet 1.x's broadcast_* ops (one dtype for both arrays, kept
    # by the result); mx.np.ndarray rebinds these to the NumPy ops; ``//`` is NumPy's in both
    __add__ = binary("_legacy_broadcast_add")
    __radd__ = binary("_legacy_broadcast_add", reflected=True)
    __sub__ = binary("_legacy_broadcast_sub")
    __rsub__ = binary("_legacy_broadcast_sub", reflected=True)
    __mul__ = binary("_legacy_broadcast_mul")
    __rmul__ = binary("_legacy_broadcast_mul", reflected=True)
    __truediv__ = binary("_legacy_broadcast_div")
    __rtruediv__ = binary("_legacy_broadcast_div", reflected=True)
    __floordiv__ = binary("floor_divide")
    __rfloordiv__ = binary("floor_divide", reflected=True)
    __mod__ = binary("_legacy_broadcast_mod")
    __rmod__ = binary("_legacy_broadcast_mod", reflected=True)
    __pow__ = binary("_legacy_broadcast_power")
    __rpow__ = binary("_legacy_broadcast_power", reflected=True)
    __matmul__ = binary("matmul")
    __rmatmul__ = binary("matmul", reflected=True)
    __and__ = binary("bitwise_and")
    __rand__ = binary("bitwise_and", reflected=True)
    __or__ = binary("bitwise_or")
    __ror__ = binary("bitwise_or", reflected=True)
    __xor__ = binary("bitwise_xor")
    __rxor__ = binary("bitwise_xor", reflected=True)
    __lshift__ = binary("left_shift")
    __rlshift__ = binary("left_shift", reflected=True)
    __rshift__ = binary("right_shift")
    __rrshift__ = binary("right_shift", reflected=True)
    # MXNet 1.x comparisons give 0/1 in the operands' dtype (mx.np.ndarray gives bool)
    __eq__ = binary("broadcast_equal")  # type: ignore[assignment]
    __ne__ = binary("broadcast_not_equal")  # type: ignore[assignment]
    __lt__ = binary("broadcast_lesser")
    __le__ = binary("broadcast_lesser_equal")
    __gt__ = binary("broadcast_greater")
    __ge__ = binary("broadcast_greater_equal")
    __iadd__ = inplace("_legacy_broadcast_add")
    __isub__ = inplace("_legacy_broadcast_sub")
    __imul__ = inplace("_legacy_broadcast_mul")
    __itruediv__ = inplace("_legacy_broadcast_div")
    __ifloordiv__ = inplace("floor_divide")
    __imod__ = inplace("_legacy_broadcast_mod")
    __ipow__ = inplace("_legacy_broadcast_power")
    __iand__ = inplace("bitwise_and")
    __ior__ = inplace("bitwise_or")
    __ixor__ = inplace("bitwise_xor")
    __ilshift__ = inplace("left_shift")
    __irshift__ = inplace("right_shift")
    __neg__ = unary("negative")
    __pos__ = unary("positive")
    __abs__ = unary("absolute")
    __invert__ = unary("invert")


_OPERANDS = _SCALARS + (Operators,)  # what binary methods take as the other operand
