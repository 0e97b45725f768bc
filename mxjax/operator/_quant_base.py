"""The shared pieces of MXNet's quantization ops: the range constants, the dtype and range checks,
round-and-saturate, and the scale of an int32 product's range.

Kept apart from the ops so that ``quantization`` (quantize, requantize, range-passing ops),
``_quantized_arith`` (ops computing new integer values) and ``intgemm`` all read the same rules.
"""
from __future__ import annotations

import jax.numpy as jnp

from ..base import MXNetTypeError
from .nn_util import fail

INT8_RANGE, UINT8_RANGE, INT32_RANGE = 127.5, 255.5, 2147483647.0
_f32 = jnp.float32


def check_dtype(op, what, x, allowed):
    """Raise unless ``x`` has one of the ``allowed`` dtype names."""
    if jnp.dtype(x.dtype).name not in allowed:
        raise MXNetTypeError(f"{op}: {what} has dtype {jnp.dtype(x.dtype).name} (shape {tuple(x.shape)}) but "
                             f"{' or '.join(allowed)} is expected")


def check_ranges(op, *pairs):
    """Each (name, array) is a float32 range of shape (1,) (MXNet also takes a scalar-shaped one)."""
    for name, x in pairs:
        if x is None:
            fail(op, f"input {name} is required")
        if x.size != 1:
            fail(op, f"{name} has shape {tuple(x.shape)} but a range value of shape (1,) is expected")
        check_dtype(op, name, x, ("float32",))


def max_abs(lo, hi):
    return jnp.maximum(jnp.abs(lo.reshape(())), jnp.abs(hi.reshape(()))).astype(_f32)


def saturate(y, dtype):
    """Round half to even and clamp into ``dtype`` (oneDNN's float -> integer conversion)."""
    info = jnp.iinfo(dtype)
    return jnp.clip(jnp.rint(y), info.min, info.max).astype(dtype)


def as_range(value):
    return jnp.asarray(value, _f32).reshape(1)


def level(dtype):
    """The integer magnitude of one quantized type's range in multiplications (127 or 255)."""
    return 255.0 if jnp.dtype(dtype) == jnp.uint8 else 127.0


def product_range(a_dtype, a_lo, a_hi, b_lo, b_hi):
    """MXNet's QuantizationRangeFor{S8S8,S8U8}Multiplication: the int32 output's (min, max)."""
    step = (max_abs(a_lo, a_hi) / _f32(level(a_dtype))) * (max_abs(b_lo, b_hi) / _f32(127.0))
    top = step * _f32(INT32_RANGE)
    return as_range(-top), as_range(top)


def out_type_of(out_type, lo, hi):
    """``out_type='auto'``: uint8 when the calibrated minimum is non-negative, else int8."""
    if out_type == "auto":
        return "uint8" if lo is not None and hi is not None and lo >= 0 else "int8"
    return out_type


def _quantized(op, data, min_data, max_data, allowed=("int8", "uint8")):
    check_dtype(op, "data", data, allowed)
    check_ranges(op, ("min_data", min_data), ("max_data", max_data))
