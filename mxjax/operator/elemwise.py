"""Element-wise operators: NumPy's ufuncs with MXNet's names and dtype rules.

Each line registers one op.  Float-producing functions cast integer input to float16
(1-byte), float32 (2-byte) or the default float dtype (MXNet: float32) instead of JAX's
float64; binary arithmetic follows MXNet 2.0's promotion (``_dtypes.binary_dtype``).
The legacy class's arithmetic (``_legacy_broadcast_*``: same-dtype operands) is in ``legacy.py``.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp

from ._dtypes import ARITH, DIVIDE, PLAIN, binary_dtype, fix_float, float_for, to_float
from .registry import OpDef, register


def _float_unary(fn: Callable) -> Callable:
    def compute(x):
        return fn(float_for(x))
    compute.__doc__ = fn.__doc__
    return compute


def _same_unary(fn: Callable) -> Callable:
    def compute(x):
        return fn(x)
    compute.__doc__ = fn.__doc__
    return compute


def _binary(fn: Callable, floats: bool = False) -> Callable:
    if floats:  # true division and friends: integer-only operands give the default float dtype
        def compute(x1, x2):
            if not (_inexact(x1) or _inexact(x2)):
                x1 = x1 if _is_scalar(x1) else to_float(x1)
                x2 = x2 if _is_scalar(x2) else to_float(x2)
            return fix_float(fn(x1, x2), x1, x2)
    else:
        def compute(x1, x2):
            return fix_float(fn(x1, x2), x1, x2)
    compute.__doc__ = fn.__doc__
    return compute


def _promoting(fn: Callable, kind: str) -> Callable:
    """A binary op whose result dtype is MXNet 2.0's (:func:`binary_dtype`), fixed at trace time:
    the array operands are cast to it first, so ``True + True`` counts and ``3 / 2`` divides."""
    def compute(x1, x2):
        dtype = binary_dtype(kind, x1, x2)
        return fn(_cast(x1, dtype), _cast(x2, dtype)).astype(dtype)
    compute.__doc__ = fn.__doc__
    return compute


def _cast(x: Any, dtype: Any) -> Any:
    if isinstance(x, (int, float, complex)) and not isinstance(x, bool):
        return x  # a Python scalar adapts to the other operand
    x = jnp.asarray(x)
    return x if x.dtype == dtype or getattr(x, "weak_type", False) else x.astype(dtype)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float, complex))


def _inexact(x: Any) -> bool:
    return isinstance(x, (float, complex)) or jnp.issubdtype(jnp.result_type(x), jnp.inexact)


def _unary_table(table: dict, maker: Callable) -> None:
    for name, (fn, aliases) in table.items():
        register(OpDef(name, maker(fn), aliases=aliases))


# name: (jax function, MXNet aliases — np-internal, legacy and symbol-JSON names)
_FLOAT_UNARY = {
    "sin": (jnp.sin, ("_npi_sin",)), "cos": (jnp.cos, ("_npi_cos",)), "tan": (jnp.tan, ("_npi_tan",)),
    "arcsin": (jnp.arcsin, ("_npi_arcsin",)), "arccos": (jnp.arccos, ("_npi_arccos",)),
    "arctan": (jnp.arctan, ("_npi_arctan",)), "sinh": (jnp.sinh, ("_npi_sinh",)),
    "cosh": (jnp.cosh, ("_npi_cosh",)), "tanh": (jnp.tanh, ("_npi_tanh",)),
    "arcsinh": (jnp.arcsinh, ("_npi_arcsinh",)), "arccosh": (jnp.arccosh, ("_npi_arccosh",)),
    "arctanh": (jnp.arctanh, ("_npi_arctanh",)), "exp": (jnp.exp, ("_npi_exp",)),
    "expm1": (jnp.expm1, ("_npi_expm1",)), "exp2": (jnp.exp2, ("_npi_exp2",)),
    "log": (jnp.log, ("_npi_log",)), "log2": (jnp.log2, ("_npi_log2",)),
    "log10": (jnp.log10, ("_npi_log10",)), "log1p": (jnp.log1p, ("_npi_log1p",)),
    "sqrt": (jnp.sqrt, ("_npi_sqrt",)), "cbrt": (jnp.cbrt, ("_npi_cbrt",)),
    "degrees": (jnp.degrees, ("_npi_degrees",)), "radians": (jnp.radians, ("_npi_radians",)),
    "deg2rad": (jnp.deg2rad, ("_npi_deg2rad",)), "rad2deg": (jnp.rad2deg, ("_npi_rad2deg",)),
    "sinc": (jnp.sinc, ()), "fabs": (jnp.fabs, ("_npi_fabs",)), "angle": (jnp.angle, ()),
    "rint": (jnp.rint, ("_npi_rint",)),
    "fix": (jnp.trunc, ("_npi_fix",)),  # (MXNet 2.0 gives floats for integers, as NumPy 1.x did)
    "reciprocal": (jnp.reciprocal, ("_npi_reciprocal",)),
}
_SAME_UNARY = {
    "negative": (jnp.negative, ("_npi_negative",)), "positive": (jnp.positive, ()),
    "absolute": (jnp.absolute, ("_npi_absolute", "abs")), "sign": (jnp.sign, ("_npi_sign",)),
    "square": (jnp.square, ("_npi_square",)), "floor": (jnp.floor, ("_npi_floor",)),
    "ceil": (jnp.ceil, ("_npi_ceil",)), "trunc": (jnp.trunc, ("_npi_trunc",)),
    "invert": (jnp.invert, ("_npi_bitwise_not", "bitwise_not")),
    "logical_not": (jnp.logical_not, ("_npi_logical_not",)),
    "isnan": (jnp.isnan, ("_npi_isnan",)), "isinf": (jnp.isinf, ("_npi_isinf",)),
    "isfinite": (jnp.isfinite, ("_npi_isfinite",)), "isposinf": (jnp.isposinf, ("_npi_isposinf",)),
    "isneginf": (jnp.isneginf, ("_npi_isneginf",)), "signbit": (jnp.signbit, ()),
    "conj": (jnp.conj, ("conjugate",)), "real": (jnp.real, ()), "imag": (jnp.imag, ()),
    "spacing": (jnp.spacing, ()),
}
_BINARY = {
    "add": (jnp.add, ("_npi_add", "broadcast_add", "broadcast_plus", "elemwise_add", "_plus", "_add", "_Plus")),
    "subtract": (jnp.subtract, ("_npi_subtract", "broadcast_sub", "broadcast_minus", "elemwise_sub",
                                "_minus", "_sub", "_Minus")),
    "multiply": (jnp.multiply, ("_npi_multiply", "broadcast_mul", "elemwise_mul", "_mul", "_Mul")),
    "floor_divide": (jnp.floor_divide, ("_npi_floor_divide",)),
    "mod": (jnp.mod, ("_npi_mod", "broadcast_mod", "_mod", "remainder")),
    "fmod": (jnp.fmod, ("_npi_fmod",)),
    "power": (jnp.power, ("_npi_power", "broadcast_power", "_power", "_Power")),
    "maximum": (jnp.maximum, ("_npi_maximum", "broadcast_maximum", "_maximum", "_Maximum")),
    "minimum": (jnp.minimum, ("_npi_minimum", "broadcast_minimum", "_minimum", "_Minimum")),
    "fmax": (jnp.fmax, ("_npi_fmax",)), "fmin": (jnp.fmin, ("_npi_fmin",)),
    "copysign": (jnp.copysign, ("_npi_copysign",)), "nextafter": (jnp.nextafter, ()),
    "gcd": (jnp.gcd, ("_npi_gcd",)), "lcm": (jnp.lcm, ("_npi_lcm",)),
    "bitwise_and": (jnp.bitwise_and, ("_npi_bitwise_and",)),
    "bitwise_or": (jnp.bitwise_or, ("_npi_bitwise_or",)),
    "bitwise_xor": (jnp.bitwise_xor, ("_npi_bitwise_xor",)),
    "left_shift": (jnp.left_shift, ("_npi_left_shift",)),
    "right_shift": (jnp.right_shift, ("_npi_right_shift",)),
    "logical_and": (jnp.logical_and, ("_npi_logical_and",)),
    "logical_or": (jnp.logical_or, ("_npi_logical_or",)),
    "logical_xor": (jnp.logical_xor, ("_npi_logical_xor",)),
    "equal": (jnp.equal, ("_npi_equal",)), "not_equal": (jnp.not_equal, ("_npi_not_equal",)),
    "less": (jnp.less, ("_npi_less",)), "less_equal": (jnp.less_equal, ("_npi_less_equal",)),
    "greater": (jnp.greater, ("_npi_greater",)), "greater_equal": (jnp.greater_equal, ("_npi_greater_equal",)),
    "heaviside": (jnp.heaviside, ()),
}
_FLOAT_BINARY = {
    "true_divide": (jnp.true_divide, ("_npi_true_divide", "divide", "broadcast_div", "elemwise_div",
                                      "_div", "_Div")),
    "hypot": (jnp.hypot, ("_npi_hypot", "broadcast_hypot", "_hypot")),
    "arctan2": (jnp.arctan2, ("_npi_arctan2",)),
    "logaddexp": (jnp.logaddexp, ("_npi_logaddexp",)), "logaddexp2": (jnp.logaddexp2, ()),
    "float_power": (jnp.float_power, ()),
}

_unary_table(_FLOAT_UNARY, _float_unary)
_unary_table(_SAME_UNARY, _same_unary)
# binary ops with MXNet 2.0's promotion (the rest keep NumPy/JAX promotion via ``_binary``)
_KINDS = {"add": ARITH, "subtract": ARITH, "multiply": ARITH, "floor_divide": ARITH, "mod": ARITH,
          "power": ARITH, "maximum": PLAIN, "minimum": PLAIN, "fmax": PLAIN, "fmin": PLAIN, "copysign": PLAIN,
          "true_divide": DIVIDE}


def _binary_op(name: str, fn: Callable, floats: bool = False) -> Callable:
    kind = _KINDS.get(name)
    return _promoting(fn, kind) if kind else _binary(fn, floats)


for _name, (_fn, _aliases) in _BINARY.items():
    register(OpDef(_name, _binary_op(_name, _fn), aliases=_aliases))
for _name, (_fn, _aliases) in _FLOAT_BINARY.items():
    register(OpDef(_name, _binary_op(_name, _fn, floats=True), aliases=_aliases))


def _ldexp(x1, x2):
    """``x1 * 2**x2`` as MXNet 2.0 computes it: in the operands' common dtype (two integer arrays give
    an integer, truncated; two bool arrays the default float), and a float exponent may be fractional.
    NumPy (and ``jnp.ldexp``) take integer exponents only and always give floats."""
    dtype = binary_dtype(ARITH, x1, x2)
    if dtype == jnp.bool_:
        dtype = to_float(True).dtype
    work = dtype if jnp.issubdtype(dtype, jnp.inexact) else jnp.float64  # (holds every integer result)
    exponent = jnp.asarray(x2).astype(work)
    whole = jnp.floor(exponent)  # scaled exactly by the whole powers (exp2 is not exact at integers)
    scaled = jnp.ldexp(jnp.asarray(_cast(x1, dtype)).astype(work), whole.astype(jnp.int32)) * jnp.exp2(exponent - whole)
    return scaled.astype(dtype)


register(OpDef("ldexp", _ldexp, aliases=("_npi_ldexp",)))


def _round(x, *, decimals: int = 0):
    """Round to the given number of decimals (NumPy's round-half-to-even)."""
    return jnp.round(x, decimals)


def _clip(a, *, a_min: float | None = None, a_max: float | None = None):
    """Limit values to [a_min, a_max]."""
    return jnp.clip(a, a_min, a_max)


def _nan_to_num(x, *, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None):
    """Replace NaN and infinities with finite numbers."""
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


register(OpDef("round", _round, aliases=("_npi_around", "around", "round_")))
register(OpDef("clip", _clip, aliases=("_npi_clip",)))
register(OpDef("nan_to_num", _nan_to_num, aliases=("_npi_nan_to_num",)))


# MXNet 2's array-with-Python-scalar ops (what symbol JSON holds for ``x * 2``): NumPy semantics,
# the scalar a parameter (``is_int`` says whether it was a Python int).  name: (function, reflected)
_NUMPY_SCALAR = {
    "_npi_add_scalar": (jnp.add, False), "_npi_subtract_scalar": (jnp.subtract, False),
    "_npi_rsubtract_scalar": (jnp.subtract, True), "_npi_multiply_scalar": (jnp.multiply, False),
    "_npi_true_divide_scalar": (jnp.true_divide, False), "_npi_rtrue_divide_scalar": (jnp.true_divide, True),
    "_npi_floor_divide_scalar": (jnp.floor_divide, False), "_npi_rfloor_divide_scalar": (jnp.floor_divide, True),
    "_npi_mod_scalar": (jnp.mod, False), "_npi_rmod_scalar": (jnp.mod, True),
    "_npi_power_scalar": (jnp.power, False), "_npi_rpower_scalar": (jnp.power, True),
    "_npi_maximum_scalar": (jnp.maximum, False), "_npi_minimum_scalar": (jnp.minimum, False),
    "_npi_equal_scalar": (jnp.equal, False), "_npi_not_equal_scalar": (jnp.not_equal, False),
    "_npi_greater_scalar": (jnp.greater, False), "_npi_greater_equal_scalar": (jnp.greater_equal, False),
    "_npi_less_scalar": (jnp.less, False), "_npi_less_equal_scalar": (jnp.less_equal, False),
}


_SCALAR_KINDS = {jnp.add: ARITH, jnp.subtract: ARITH, jnp.multiply: ARITH, jnp.floor_divide: ARITH,
                 jnp.mod: ARITH, jnp.power: ARITH, jnp.maximum: PLAIN, jnp.minimum: PLAIN,
                 jnp.true_divide: DIVIDE}


def _numpy_scalar(fn: Callable, reflected: bool) -> Callable:
    kind = _SCALAR_KINDS.get(fn)
    binary = _promoting(fn, kind) if kind else _binary(fn)

    def compute(data, *, scalar: float = 1.0, is_int: bool = False):
        value = int(scalar) if is_int else float(scalar)
        return binary(value, data) if reflected else binary(data, value)
    compute.__doc__ = f"``{'scalar' if reflected else 'data'} {fn.__name__} {'data' if reflected else 'scalar'}``" \
        " with NumPy semantics (MXNet 2's scalar op)."
    return compute


for _name, (_fn, _reflected) in _NUMPY_SCALAR.items():
    register(OpDef(_name, _numpy_scalar(_fn, _reflected)))
