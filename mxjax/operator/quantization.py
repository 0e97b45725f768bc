"""MXNet's int8/uint8 quantization ops (``_contrib_quantize*``, ``_contrib_quantized_*``), as its CPU
(oneDNN) build computes them.

A quantized tensor travels with two float32 arrays of shape (1,), the real values its type's range
stands for.  Scales follow MXNet's constants: quantize_v2, dequantize and the elementwise ops map the
range's larger magnitude to 127.5 (int8) or 255.5 (uint8); quantize and requantize map it to 127 / 255;
int32 results of multiplications carry ``(range_a / 127) * (range_b / 127) * (2**31 - 1)`` (255 for
uint8 data in fully_connected).  Float-to-integer conversions round half to even and saturate, as
oneDNN's reorder does.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ._quant_base import (INT8_RANGE, INT32_RANGE, UINT8_RANGE, _f32, _quantized, as_range, check_dtype,
                          check_ranges, level, max_abs, out_type_of, saturate)
from ._quant_base import product_range  # noqa: F401  (re-exported: the helpers stay importable from here)
from ._reshape import legacy_shape, npx_shape
from .nn_conv import pooling
from .nn_util import check_choice, fail
from .registry import defop


# -- quantize / dequantize / requantize -------------------------------------------------------


@defop("_contrib_quantize", aliases=("_npx_contrib_quantize",), num_outputs=3, differentiable=False)
def quantize(data, min_range, max_range, *, out_type: str = "uint8"):
    """Quantize float32 ``data`` given its range: ``x * 127 / max|range|`` (int8, range out ``±max|range|``)
    or ``x * 255 / max|range|`` (uint8, negatives saturate to 0, range out as given)."""
    op = "quantize"
    check_choice(op, "out_type", out_type, ("int8", "uint8"))
    check_dtype(op, "data", data, ("float32",))
    check_ranges(op, ("min_range", min_range), ("max_range", max_range))
    real = max_abs(min_range, max_range)
    out = saturate(data * (_f32(level(out_type)) / real), out_type)
    if out_type == "uint8":
        return out, as_range(min_range), as_range(max_range)
    return out, as_range(-real), as_range(real)


@defop("_contrib_quantize_v2", aliases=("_npx_contrib_quantize_v2",), num_outputs=3, differentiable=False)
def quantize_v2(data, *, out_type: str = "int8", min_calib_range: float | None = None,
                max_calib_range: float | None = None):
    """Quantize float32 ``data`` by its own min/max, or the calibrated range when given; int8/uint8
    ``data`` passes through (bits kept) with the calibrated range or the type's own."""
    op = "quantize_v2"
    check_choice(op, "out_type", out_type, ("auto", "int8", "uint8"))
    check_dtype(op, "data", data, ("float32", "int8", "uint8"))
    kind = out_type_of(out_type, min_calib_range, max_calib_range)
    calibrated = min_calib_range is not None and max_calib_range is not None
    if data.dtype in (jnp.int8, jnp.uint8):
        out = data if data.dtype == kind else lax.bitcast_convert_type(data, jnp.dtype(kind))
        if calibrated:
            return out, as_range(min_calib_range), as_range(max_calib_range)
        top = UINT8_RANGE if data.dtype == jnp.uint8 else INT8_RANGE
        return out, as_range(0.0 if data.dtype == jnp.uint8 else -top), as_range(top)
    if calibrated:
        lo, hi = as_range(min_calib_range), as_range(max_calib_range)
    else:
        lo, hi = as_range(jnp.min(data)), as_range(jnp.max(data))
    real = max_abs(lo, hi)
    top = UINT8_RANGE if kind == "uint8" else INT8_RANGE
    out = saturate(data * (_f32(top) / real), kind)
    return (out, lo, hi) if kind == "uint8" else (out, as_range(-real), as_range(real))


@defop("_contrib_dequantize", num_outputs=1, differentiable=False)
def dequantize(data, min_range, max_range, *, out_type: str = "float32"):
    """int8/uint8 ``data`` back to float32: ``x * max|range| / 127.5`` (uint8: ``/ 255.5``)."""
    op = "dequantize"
    check_choice(op, "out_type", out_type, ("float32",))
    check_dtype(op, "data", data, ("int8", "uint8"))
    check_ranges(op, ("min_range", min_range), ("max_range", max_range))
    top = UINT8_RANGE if data.dtype == jnp.uint8 else INT8_RANGE
    return data.astype(_f32) * (max_abs(min_range, max_range) / _f32(top))


@defop("_contrib_requantize", aliases=("_npx_requantize",), num_outputs=3, differentiable=False)
def requantize(data, min_range, max_range, *, out_type: str = "int8", min_calib_range: float | None = None,
               max_calib_range: float | None = None):
    """int32 ``data`` (range ``min_range``/``max_range``) to int8/uint8 in the calibrated range, or in the
    smallest range holding the data's own extreme value."""
    op = "requantize"
    check_choice(op, "out_type", out_type, ("auto", "int8", "uint8"))
    check_dtype(op, "data", data, ("int32",))
    check_ranges(op, ("min_range", min_range), ("max_range", max_range))
    kind = out_type_of(out_type, min_calib_range, max_calib_range)
    in_scale = max_abs(min_range, max_range) / _f32(INT32_RANGE)
    if min_calib_range is not None and max_calib_range is not None:
        real = jnp.maximum(abs(_f32(min_calib_range)), abs(_f32(max_calib_range)))
    else:
        extreme = jnp.maximum(jnp.abs(jnp.min(data).astype(_f32)), jnp.abs(jnp.max(data).astype(_f32)))
        real = extreme.astype(jnp.int32).astype(_f32) * max_abs(min_range, max_range) / _f32(INT32_RANGE)
    scale = in_scale * (_f32(level(kind)) / real)
    out = saturate(data.astype(_f32) * scale, kind)
    lo = as_range(0.0) if kind == "uint8" else as_range(-real)
    return out, lo, as_range(real)


# -- ops that keep the quantized values and their range -------------------------------------------


@defop("_contrib_quantized_act", aliases=("_npx_quantized_act",), num_outputs=3, differentiable=False)
def quantized_act(data, min_data, max_data, *, act_type: str = "relu"):
    """ReLU on int8 data (the range is kept).  MXNet's output type is int8 whatever the input, so
    uint8 data comes back as its bytes read as int8 (as MXNet's CPU build returns it)."""
    op = "quantized_act"
    check_choice(op, "act_type", act_type, ("relu",))
    _quantized(op, data, min_data, max_data)
    out = jnp.maximum(data, 0) if data.dtype == jnp.int8 else lax.bitcast_convert_type(data, jnp.int8)
    return out, as_range(min_data), as_range(max_data)


@defop("_contrib_quantized_flatten", aliases=("_npx_quantized_flatten",), num_outputs=3,
       differentiable=False)
def quantized_flatten(data, min_data, max_data):
    """Flatten every axis after the first; the range passes through."""
    _quantized("quantized_flatten", data, min_data, max_data)
    lead = data.shape[0] if data.ndim else 1
    return data.reshape(lead, -1), as_range(min_data), as_range(max_data)


@defop("_contrib_quantized_reshape", aliases=("quantized_reshape",), num_outputs=3, differentiable=False)
def quantized_reshape(data, min_data, max_data, *, shape: shape = (), reverse: bool = False,
                      target_shape: shape = (), keep_highest: bool = False):
    """Legacy ``Reshape`` (codes 0, -1, -2, -3, -4) of quantized data; the range passes through."""
    _quantized("quantized_reshape", data, min_data, max_data)
    spec = tuple(shape) if shape else tuple(target_shape)
    if not shape and keep_highest and spec:
        spec = (data.shape[0], *spec)
    out = data.reshape(legacy_shape(tuple(data.shape), spec, reverse))
    return out, as_range(min_data), as_range(max_data)


@defop("_npx_quantized_reshape", num_outputs=3, differentiable=False)
def npx_quantized_reshape(data, min_data, max_data, *, newshape: shape = (), reverse: bool = False,
                          order: str = "C"):
    """``npx.reshape`` (codes -1 to -6) of quantized data; the range passes through."""
    op = "quantized_reshape"
    _quantized(op, data, min_data, max_data)
    check_choice(op, "order", order, ("C",))
    out = data.reshape(npx_shape(tuple(data.shape), tuple(newshape), reverse))
    return out, as_range(min_data), as_range(max_data)


@defop("_contrib_quantized_transpose", aliases=("quantized_transpose",), num_outputs=3, differentiable=False)
def quantized_transpose(data, min_data, max_data, *, axes: shape = ()):
    """Permute the axes of quantized data (reverse them by default); the range passes through."""
    _quantized("quantized_transpose", data, min_data, max_data)
    if axes and sorted(a % data.ndim for a in axes) != list(range(data.ndim)):
        fail("quantized_transpose", f"axes={tuple(axes)} is not a permutation of the {data.ndim} axes of "
                                    f"data {tuple(data.shape)}")
    return jnp.transpose(data, tuple(axes) or None), as_range(min_data), as_range(max_data)


@defop("_npx_quantized_transpose", num_outputs=3, differentiable=False)
def npx_quantized_transpose(data, min_data, max_data, *, axes: shape | None = None):
    """``npx``'s own op (MXNet registers it apart from the contrib one): the same permutation."""
    return quantized_transpose.compute(data, min_data, max_data, axes=tuple(axes or ()))


@defop("_contrib_quantized_pooling", aliases=("_npx_quantized_pooling",), num_outputs=3,
       differentiable=False)
def quantized_pooling(data, min_data, max_data, *, kernel: shape = (), pool_type: str = "max",
                      global_pool: bool = False, cudnn_off: bool = False, pooling_convention: str = "valid",
                      stride: shape = (), pad: shape = (), p_value: int | None = None,
                      count_include_pad: bool | None = None, layout: str | None = None):
    """Max or average pooling of 4-D NCHW int8/uint8 data (averages round half to even); the range
    passes through."""
    op = "quantized_pooling"
    _quantized(op, data, min_data, max_data)
    check_choice(op, "pool_type", pool_type, ("max", "avg"))
    if data.ndim != 4 or layout not in (None, "NCHW"):
        fail(op, f"data {tuple(data.shape)} with layout {layout or 'NCHW'} is not supported; 4-D NCHW data "
                 "is expected")
    params = dict(kernel=kernel, pool_type=pool_type, global_pool=global_pool,
                  pooling_convention=pooling_convention, stride=stride, pad=pad,
                  count_include_pad=count_include_pad)
    if pool_type == "max":
        out = pooling.compute(data, **params)
    else:
        out = saturate(pooling.compute(data.astype(_f32), **params), data.dtype)
    return out, as_range(min_data), as_range(max_data)


@defop("_contrib_quantized_concat", num_outputs=3, differentiable=False)
def quantized_concat(*data, num_args: int = 1, dim: int = 1):
    """Concatenate ``num_args`` quantized arrays (given first, then each one's min and max) along
    ``dim``; each is rescaled into the joint range ``(min of mins, max of maxes)``."""
    op = "quantized_concat"
    if num_args < 1 or len(data) != 3 * num_args:
        fail(op, f"num_args={num_args} needs {3 * num_args} inputs (the arrays, then a min and a max for "
                 f"each), got {len(data)}")
    arrays, ranges = data[:num_args], data[num_args:]
    for i, x in enumerate(arrays):
        check_dtype(op, f"data[{i}]", x, ("int8", "uint8"))
        check_ranges(op, (f"min of data[{i}]", ranges[2 * i]), (f"max of data[{i}]", ranges[2 * i + 1]))
    lo = jnp.min(jnp.stack([r.reshape(()) for r in ranges[0::2]]))
    hi = jnp.max(jnp.stack([r.reshape(()) for r in ranges[1::2]]))
    kind = jnp.int8 if any(x.dtype == jnp.int8 for x in arrays) else jnp.uint8
    out_abs = jnp.maximum(jnp.abs(lo), jnp.abs(hi))
    parts = []
    for i, x in enumerate(arrays):
        scale = max_abs(ranges[2 * i], ranges[2 * i + 1]) / out_abs
        if x.dtype != kind:  # uint8 among int8 inputs: half the steps per unit
            scale = scale * _f32(INT8_RANGE / UINT8_RANGE)
        parts.append(saturate(x.astype(_f32) * scale, kind))
    return jnp.concatenate(parts, axis=dim), as_range(lo), as_range(hi)


# the arithmetic ops live in _quantized_arith; imported after this module's ops so the registry keeps its order
from ._quantized_arith import (quantized_batch_norm, quantized_conv, quantized_elemwise_add,  # noqa: E402,F401
                               quantized_elemwise_mul, quantized_embedding, quantized_fully_connected)
