"""MXNet 1.x (``mx.nd``) operators whose semantics differ from their NumPy namesakes.

Legacy scalar ops (``_plus_scalar``...) keep the array's dtype (the scalar is cast to
it, as MXNet's ``DType(scalar)``); legacy comparisons return 0/1 in the input dtype
rather than bool.  Ops are registered under their MXNet 1.9.1 JSON names where no
NumPy op owns the name; where one does (``sum``, ``take``, ``dot``...) the legacy op
has a ``_legacy_`` name and :data:`LEGACY_JSON_NAMES` maps the 1.x JSON name to it.
"""
from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
from jax import lax

from ..base import MXNetTypeError
from .registry import OpDef, register

__all__ = ["LEGACY_JSON_NAMES", "legacy_op_name"]

# MXNet 1.x symbol-JSON op name -> the op registered here with that name's legacy semantics.
# In MXNet (1.x and 2.0 alike) these JSON names always mean the legacy op: NumPy ops are
# written as ``_np_*``/``_npi_*``, so a loader can consult this table first.
LEGACY_JSON_NAMES = {
    "sum": "_legacy_sum", "mean": "_legacy_mean", "max": "_legacy_max", "min": "_legacy_min",
    "prod": "_legacy_prod", "nansum": "_legacy_nansum", "nanprod": "_legacy_nanprod",
    "norm": "_legacy_norm", "argmax": "_legacy_argmax", "argmin": "_legacy_argmin",
    "sort": "_legacy_sort", "argsort": "_legacy_argsort",
    "take": "_legacy_take", "where": "_legacy_where", "dot": "_legacy_dot",
    "broadcast_to": "_legacy_broadcast_to", "stack": "_legacy_stack", "diag": "_legacy_diag",
    "round": "_legacy_round", "logical_not": "_legacy_logical_not",
    "split": "SliceChannel", "concat": "Concat", "flatten": "Flatten",
    "swapaxes": "SwapAxis", "flip": "reverse", "pad": "Pad", "reshape": "Reshape",
}


def legacy_op_name(json_name: str) -> str:
    """The registered op that a 1.x symbol-JSON op name means."""
    return LEGACY_JSON_NAMES.get(json_name, json_name)


# ----------------------------------------------------------------------------- scalar ops

def _is_int(dtype) -> bool:
    return jnp.issubdtype(dtype, jnp.integer)


def _scalar_as(scalar: float, dtype):
    """The scalar cast to the array's dtype, as MXNet's ``DType(scalar)`` (ints truncate)."""
    return jnp.asarray(scalar).astype(dtype)


def _div(a, b):
    # MXNet computes in the array's dtype: C division (truncation) for integers
    return lax.div(a, b) if _is_int(a.dtype) else a / b


def _mod(a, b):
    # mshadow_op::mod: the result takes the divisor's sign, and x mod 0 is 0
    zero = b == 0
    return jnp.where(zero, jnp.zeros_like(a), jnp.mod(a, jnp.where(zero, jnp.ones_like(b), b)))


def _power(a, b):
    if _is_int(a.dtype):
        return jnp.power(a.astype(jnp.float64), b.astype(jnp.float64)).astype(a.dtype)
    return jnp.power(a, b)


def _hypot(a, b):
    if _is_int(a.dtype):
        return jnp.hypot(a.astype(jnp.float64), b.astype(jnp.float64)).astype(a.dtype)
    return jnp.hypot(a, b)


def _truth(x):
    return x != 0


def _compare(fn: Callable) -> Callable:
    return lambda a, b: fn(a, b).astype(jnp.result_type(a, b))


def _logical(fn: Callable) -> Callable:
    return lambda a, b: fn(_truth(a), _truth(b)).astype(jnp.result_type(a, b))


# name: (fn(array, scalar_in_array_dtype), reflected, doc)
_SCALAR = {
    "_plus_scalar": (jnp.add, False, "data + scalar"),
    "_minus_scalar": (jnp.subtract, False, "data - scalar"),
    "_rminus_scalar": (jnp.subtract, True, "scalar - data"),
    "_mul_scalar": (jnp.multiply, False, "data * scalar"),
    "_div_scalar": (_div, False, "data / scalar"),
    "_rdiv_scalar": (_div, True, "scalar / data"),
    "_mod_scalar": (_mod, False, "data mod scalar"),
    "_rmod_scalar": (_mod, True, "scalar mod data"),
    "_power_scalar": (_power, False, "data ** scalar"),
    "_rpower_scalar": (_power, True, "scalar ** data"),
    "_maximum_scalar": (jnp.maximum, False, "max(data, scalar)"),
    "_minimum_scalar": (jnp.minimum, False, "min(data, scalar)"),
    "_hypot_scalar": (_hypot, False, "sqrt(data**2 + scalar**2)"),
    "_equal_scalar": (_compare(jnp.equal), False, "data == scalar as 0/1"),
    "_not_equal_scalar": (_compare(jnp.not_equal), False, "data != scalar as 0/1"),
    "_greater_scalar": (_compare(jnp.greater), False, "data > scalar as 0/1"),
    "_greater_equal_scalar": (_compare(jnp.greater_equal), False, "data >= scalar as 0/1"),
    "_lesser_scalar": (_compare(jnp.less), False, "data < scalar as 0/1"),
    "_lesser_equal_scalar": (_compare(jnp.less_equal), False, "data <= scalar as 0/1"),
    "_logical_and_scalar": (_logical(jnp.logical_and), False, "data and scalar as 0/1"),
    "_logical_or_scalar": (_logical(jnp.logical_or), False, "data or scalar as 0/1"),
    "_logical_xor_scalar": (_logical(jnp.logical_xor), False, "data xor scalar as 0/1"),
}


def _scalar_op(fn: Callable, reflected: bool, doc: str) -> Callable:
    def compute(data, *, scalar: float = 1.0, is_int: bool = True):
        if data.dtype == jnp.bool_:  # MXNet computes bool arrays as int64
            data = data.astype(jnp.int64)
        s = _scalar_as(scalar, data.dtype)
        out = fn(s, data) if reflected else fn(data, s)
        return out.astype(data.dtype)
    compute.__doc__ = f"Legacy {doc}, element-wise; the result keeps the array's dtype."
    return compute


for _name, (_fn, _reflected, _doc) in _SCALAR.items():
    register(OpDef(_name, _scalar_op(_fn, _reflected, _doc)))


# ----------------------------------------------------------------------------- unary math

# MXNet 1.x float functions keep the input dtype: sqrt of int32 is int32 (truncated), and bool
# input is refused.  ``mx.nd.sqrt`` & co. use these; the 1.x JSON names stay the NumPy ops'.
_FLOAT_UNARY = ("sqrt", "cbrt", "reciprocal", "exp", "expm1", "log", "log10", "log2", "log1p",
                "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                "arcsinh", "arccosh", "arctanh", "degrees", "radians", "rint")


def _unary_op(name: str) -> Callable:
    fn = getattr(jnp, name)

    def compute(data):
        if data.dtype == jnp.bool_:
            raise MXNetTypeError(f"{name}: a bool input (shape {tuple(data.shape)}) is not supported in mx.nd; "
                                 "expected a numeric dtype")
        if jnp.issubdtype(data.dtype, jnp.inexact):
            return fn(data)
        return fn(data.astype(jnp.float64)).astype(data.dtype)
    compute.__doc__ = f"Legacy ``{name}``, element-wise; the result keeps the input dtype (integers truncate)."
    return compute


for _name in _FLOAT_UNARY:
    register(OpDef(f"_legacy_{_name}", _unary_op(_name)))


# ----------------------------------------------------------------------------- broadcast arithmetic

def _legacy_operands(name: str, lhs, rhs):
    """MXNet 1.x operand dtypes, decided at trace time: two arrays must share one dtype (not
    bool, which these ops do not take); a Python scalar (weakly typed) takes the array's dtype,
    and a bool array with a scalar computes as int64."""
    weak_l, weak_r = _weak(lhs), _weak(rhs)
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    if weak_l != weak_r:
        array, scalar = (rhs, lhs) if weak_l else (lhs, rhs)
        if array.dtype == jnp.bool_:
            array = array.astype(jnp.int64)
        scalar = _scalar_as(scalar, array.dtype)
        return (scalar, array) if weak_l else (array, scalar)
    if lhs.dtype != rhs.dtype or lhs.dtype == jnp.bool_:
        expected = "operands of one dtype other than bool"
        raise MXNetTypeError(f"{name}: expected {expected} in mx.nd, got lhs {lhs.dtype} with shape "
                             f"{tuple(lhs.shape)} and rhs {rhs.dtype} with shape {tuple(rhs.shape)}")
    return lhs, rhs


def _weak(x) -> bool:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return True
    return bool(getattr(getattr(x, "aval", None), "weak_type", False) or getattr(x, "weak_type", False))


# The legacy class's operators and ``mx.nd.broadcast_*``/``elemwise_*`` use these.  Their 1.x
# symbol-JSON names (``broadcast_add``, ``elemwise_add``, ``_plus``...) stay aliases of the NumPy
# ops, which symbols are built from.  name: fn computing in the common dtype
_ARITH = {
    "_legacy_broadcast_add": jnp.add, "_legacy_broadcast_sub": jnp.subtract,
    "_legacy_broadcast_mul": jnp.multiply, "_legacy_broadcast_div": _div, "_legacy_broadcast_mod": _mod,
    "_legacy_broadcast_power": _power, "_legacy_broadcast_maximum": jnp.maximum,
    "_legacy_broadcast_minimum": jnp.minimum, "_legacy_broadcast_hypot": _hypot,
}


def _arith_op(name: str, fn: Callable) -> Callable:
    def compute(lhs, rhs):
        a, b = _legacy_operands(name, lhs, rhs)
        return fn(a, b).astype(a.dtype)
    compute.__doc__ = (f"Legacy ``{name}`` with broadcasting: both arrays of one (non-bool) dtype, which the "
                       "result keeps (integer division truncates); a Python scalar takes the array's dtype.")
    return compute


for _name, _fn in _ARITH.items():
    register(OpDef(_name, _arith_op(_name[len("_legacy_"):], _fn)))


# ----------------------------------------------------------------------------- broadcast comparisons

# name: (fn, aliases: the non-broadcasting 1.x names, which are the same op on equal shapes)
_BROADCAST = {
    "broadcast_equal": (jnp.equal, ("_equal",)),
    "broadcast_not_equal": (jnp.not_equal, ("_not_equal",)),
    "broadcast_greater": (jnp.greater, ("_greater",)),
    "broadcast_greater_equal": (jnp.greater_equal, ("_greater_equal",)),
    "broadcast_lesser": (jnp.less, ("_lesser",)),
    "broadcast_lesser_equal": (jnp.less_equal, ("_lesser_equal",)),
    "broadcast_logical_and": (jnp.logical_and, ("_logical_and",)),
    "broadcast_logical_or": (jnp.logical_or, ("_logical_or",)),
    "broadcast_logical_xor": (jnp.logical_xor, ("_logical_xor",)),
}


def _broadcast_op(name: str, fn: Callable) -> Callable:
    wrapped = _logical(fn) if "logical" in name else _compare(fn)

    def compute(lhs, rhs):
        return wrapped(*_legacy_operands(name, lhs, rhs))
    compute.__doc__ = f"Legacy ``{name}``: 0/1 with broadcasting, in the inputs' dtype (not bool)."
    return compute


for _name, (_fn, _aliases) in _BROADCAST.items():
    register(OpDef(_name, _broadcast_op(_name, _fn), aliases=_aliases))


# The remaining legacy families (each module registers its ops on import).
from . import legacy_reduce, legacy_shape, legacy_misc, legacy_loss, legacy_linalg  # noqa: E402,F401
