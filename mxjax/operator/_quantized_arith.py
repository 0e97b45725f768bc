"""MXNet's quantized ops that compute new integer values: elementwise add and multiply, embedding,
inference BatchNorm, convolution and fully connected (int32 results with the range of a product).

Split from ``quantization`` (which re-exports every name here) to keep each module to one job:
that module quantizes, requantizes and passes ranges through; this one does the arithmetic.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ._quant_base import (INT8_RANGE, INT32_RANGE, UINT8_RANGE, _f32, _quantized, as_range, check_dtype,
                          check_ranges, max_abs, product_range, saturate)
from .nn_conv import convolution
from .nn_util import fail, spatial_tuple
from .registry import defop


# -- arithmetic --------------------------------------------------------------------------------


def _binary_inputs(op, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, allowed):
    check_dtype(op, "lhs", lhs, allowed)
    check_dtype(op, "rhs", rhs, allowed)
    if lhs.shape != rhs.shape:
        fail(op, f"lhs {tuple(lhs.shape)} and rhs {tuple(rhs.shape)} must have the same shape "
                 "(no broadcasting)")
    check_ranges(op, ("lhs_min", lhs_min), ("lhs_max", lhs_max), ("rhs_min", rhs_min), ("rhs_max", rhs_max))


def _sum(x, y):
    """``x + y`` of float32 products rounded first (XLA would fuse them into an FMA; oneDNN does not)."""
    x, y = lax.optimization_barrier((x, y))
    return x + y


def _step(x):
    return _f32(INT8_RANGE) if x.dtype == jnp.int8 else _f32(UINT8_RANGE)


@defop("_contrib_quantized_elemwise_add", aliases=("_npx_quantized_elemwise_add",), num_outputs=3,
       differentiable=False)
def quantized_elemwise_add(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, *, min_calib_range: float | None = None,
                           max_calib_range: float | None = None):
    """Sum of two quantized arrays: int32 in range ``±(max|lhs range| + max|rhs range|)``, or int8/uint8
    (uint8 when the calibrated minimum is non-negative) in the calibrated range."""
    op = "quantized_elemwise_add"
    _binary_inputs(op, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, ("int8", "uint8"))
    a_abs, b_abs = max_abs(lhs_min, lhs_max), max_abs(rhs_min, rhs_max)
    a, b = lhs.astype(_f32), rhs.astype(_f32)
    if min_calib_range is not None and max_calib_range is not None:
        kind = "uint8" if min_calib_range >= 0 else "int8"
        lo, hi = as_range(min_calib_range), as_range(max_calib_range)
        out_scale = _f32(UINT8_RANGE if kind == "uint8" else INT8_RANGE) / max_abs(lo, hi)
        sa, sb = lax.optimization_barrier((out_scale / (_step(lhs) / a_abs), out_scale / (_step(rhs) / b_abs)))
        out = saturate(_sum(a * sa, b * sb), kind)
        return out, lo, hi
    top = a_abs + b_abs
    if lhs.dtype != rhs.dtype:  # the uint8 side is halved into int8 steps first
        a = a if lhs.dtype == jnp.int8 else saturate(a * _f32(0.5), jnp.int8).astype(_f32)
        b = b if rhs.dtype == jnp.int8 else saturate(b * _f32(0.5), jnp.int8).astype(_f32)
        in_range = _f32(INT8_RANGE)
    else:
        in_range = _step(lhs)
    sa = a_abs * _f32(INT32_RANGE) / (top * in_range)
    sb = b_abs * _f32(INT32_RANGE) / (top * in_range)
    sa, sb = lax.optimization_barrier((sa, sb))  # XLA would reassociate a * (x / y) into (a * x) / y
    return saturate(_sum(a * sa, b * sb), jnp.int32), as_range(-top), as_range(top)


def _mul_outputs(params):
    return 1 if params.get("enable_float_output") else 3


@defop("_contrib_quantized_elemwise_mul", aliases=("_npx_quantized_elemwise_mul",), num_outputs=_mul_outputs,
       differentiable=False)
def quantized_elemwise_mul(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, *, min_calib_range: float | None = None,
                           max_calib_range: float | None = None, enable_float_output: bool = False):
    """Product of two int8 arrays: int32 (range of the product of the input steps), int8 in the
    calibrated range, or float32 with ``enable_float_output`` (then the only output)."""
    op = "quantized_elemwise_mul"
    _binary_inputs(op, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, ("int8",))
    lhs_scale = _f32(INT8_RANGE) / max_abs(lhs_min, lhs_max)
    rhs_scale = _f32(INT8_RANGE) / max_abs(rhs_min, rhs_max)
    product = lhs.astype(jnp.int32) * rhs.astype(jnp.int32)
    if enable_float_output:
        return product.astype(_f32) * (_f32(1.0) / lhs_scale / rhs_scale)
    if min_calib_range is not None and max_calib_range is not None:
        lo, hi = as_range(min_calib_range), as_range(max_calib_range)
        out_scale = _f32(INT8_RANGE) / max_abs(lo, hi) / lhs_scale / rhs_scale
        # a C cast: truncate toward zero, then keep the low byte
        wide = jnp.trunc(product.astype(_f32) * out_scale).astype(jnp.int32)
        return lax.convert_element_type(wide, jnp.int8), lo, hi
    lo, hi = product_range(jnp.int8, lhs_min, lhs_max, rhs_min, rhs_max)
    return product, lo, hi


@defop("_contrib_quantized_embedding", aliases=("_npx_quantized_embedding",), num_outputs=3,
       differentiable=False)
def quantized_embedding(data, weight, min_weight, max_weight, *, input_dim: int | None = None,
                        output_dim: int | None = None, dtype: dtype = "float32", sparse_grad: bool = False):
    """Rows of int8 ``weight`` (input_dim, output_dim) picked by ``data`` (indices clip into range);
    the weight's range passes through."""
    op = "quantized_embedding"
    check_dtype(op, "weight", weight, ("int8",))
    check_ranges(op, ("min_weight", min_weight), ("max_weight", max_weight))
    if input_dim is None or output_dim is None:
        fail(op, "input_dim and output_dim are required")
    if tuple(weight.shape) != (input_dim, output_dim):
        fail(op, f"weight has shape {tuple(weight.shape)} but ({input_dim}, {output_dim}) is expected")
    index = jnp.clip(data.astype(jnp.int32), 0, input_dim - 1)
    return jnp.take(weight, index, axis=0), as_range(min_weight), as_range(max_weight)


@defop("_contrib_quantized_batch_norm", num_outputs=3, differentiable=False)
def quantized_batch_norm(data, gamma, beta, moving_mean, moving_var, min_data, max_data, *, eps: float = 1e-3,
                         momentum: float = 0.9, fix_gamma: bool = True, use_global_stats: bool = False,
                         output_mean_var: bool = False, axis: int = 1, cudnn_off: bool = False,
                         min_calib_range: float | None = None, max_calib_range: float | None = None):
    """Inference BatchNorm of int8 data over channel axis 1 with the moving statistics, requantized
    to int8 in the calibrated range (which is required)."""
    op = "quantized_batch_norm"
    _quantized(op, data, min_data, max_data, ("int8",))
    if min_calib_range is None or max_calib_range is None:
        fail(op, "min_calib_range and max_calib_range are required (MXNet's CPU kernel needs a calibrated "
                 "output range)")
    if axis != 1 or data.ndim != 4:
        fail(op, f"data {tuple(data.shape)} with axis={axis} is not supported; 4-D data normalized over "
                 "axis 1 is expected")
    channels = data.shape[1]
    for name, x in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean), ("moving_var", moving_var)):
        if tuple(x.shape) != (channels,):
            fail(op, f"{name} has shape {tuple(x.shape)} but ({channels},) is expected for data "
                     f"{tuple(data.shape)}")
    real = jnp.maximum(abs(_f32(min_calib_range)), abs(_f32(max_calib_range)))
    in_scale = max_abs(min_data, max_data) / _f32(INT8_RANGE)
    out_scale = _f32(INT8_RANGE) / real
    # MXNet's CPU kernel scales by gamma whatever fix_gamma says
    factor = gamma / jnp.sqrt(moving_var + _f32(eps))
    weight = (factor * in_scale * out_scale).reshape(1, -1, 1, 1)
    shift = ((beta - moving_mean * factor) * out_scale).reshape(1, -1, 1, 1)
    weight, shift = lax.optimization_barrier((weight, shift))
    out = saturate(_sum(data.astype(_f32) * weight, shift), jnp.int8)
    return out, as_range(min_calib_range), as_range(max_calib_range)


# -- convolution and fully connected -------------------------------------------------------------


def _shift_ranges(no_bias, bias, min_data, max_data, min_weight, max_weight):
    """With ``no_bias`` MXNet's inputs are data, weight, then the four ranges: read positional
    arrays that way."""
    if no_bias and bias is not None and max_weight is None:
        return None, bias, min_data, max_data, min_weight
    return bias, min_data, max_data, min_weight, max_weight


def _matmul_inputs(op, data, weight, bias, ranges, no_bias):
    check_dtype(op, "data", data, ("int8", "uint8"))
    check_dtype(op, "weight", weight, ("int8",))
    names = ["min_data", "max_data", "min_weight", "max_weight"]
    if not no_bias:
        if bias is None:
            fail(op, "bias is required unless no_bias=True")
        check_dtype(op, "bias", bias, ("int8",))
        names += ["min_bias", "max_bias"]
    check_ranges(op, *zip(names, ranges))


@defop("_contrib_quantized_conv", aliases=("_npx_quantized_conv",), num_outputs=3, differentiable=False)
def quantized_conv(data, weight, bias=None, min_data=None, max_data=None, min_weight=None, max_weight=None,
                   min_bias=None, max_bias=None, *, kernel: shape = (), stride: shape = (), dilate: shape = (),
                   pad: shape = (), num_filter: int = 1, num_group: int = 1, workspace: int = 1024,
                   no_bias: bool = False, cudnn_tune: str | None = None, cudnn_off: bool = False,
                   layout: str | None = None):
    """int32 convolution of int8/uint8 NCHW data with int8 weight; the int8 bias is added as is.  The
    range is that of int8 data times int8 weight (MXNet's CPU build uses it for uint8 data too)."""
    op = "quantized_conv"
    bias, min_data, max_data, min_weight, max_weight = _shift_ranges(no_bias, bias, min_data, max_data,
                                                                     min_weight, max_weight)
    _matmul_inputs(op, data, weight, bias, (min_data, max_data, min_weight, max_weight, min_bias, max_bias),
                   no_bias)
    if data.ndim != 4 or layout not in (None, "NCHW"):
        fail(op, f"data {tuple(data.shape)} with layout {layout or 'NCHW'} is not supported; 4-D NCHW data "
                 "is expected")
    # shapes checked by the float op on stand-ins; the int32 convolution is exact
    convolution.eval_shape(jax.ShapeDtypeStruct(data.shape, _f32), jax.ShapeDtypeStruct(weight.shape, _f32),
                           kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=num_filter,
                           num_group=num_group, no_bias=True)
    stride, dilate, pad = (spatial_tuple(op, name, value, 2, default) for name, value, default in
                           (("stride", stride, 1), ("dilate", dilate, 1), ("pad", pad, 0)))
    out = lax.conv_general_dilated(data.astype(jnp.int32), weight.astype(jnp.int32), stride, [(p, p) for p in pad],
                                   rhs_dilation=dilate, dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                   feature_group_count=num_group, preferred_element_type=jnp.int32)
    if not no_bias:
        out = out + bias.astype(jnp.int32).reshape(1, -1, 1, 1)
    lo, hi = product_range(jnp.int8, min_data, max_data, min_weight, max_weight)
    return out, lo, hi


@defop("_contrib_quantized_fully_connected", aliases=("_npx_quantized_fully_connected",), num_outputs=3,
       differentiable=False)
def quantized_fully_connected(data, weight, bias=None, min_data=None, max_data=None, min_weight=None,
                              max_weight=None, min_bias=None, max_bias=None, *, num_hidden: int = 1,
                              no_bias: bool = False, flatten: bool = True):
    """int32 ``data @ weight.T`` of int8/uint8 data and int8 weight; the int8 bias is rescaled into the
    product's steps (truncated toward zero) before it is added."""
    op = "quantized_fully_connected"
    bias, min_data, max_data, min_weight, max_weight = _shift_ranges(no_bias, bias, min_data, max_data,
                                                                     min_weight, max_weight)
    _matmul_inputs(op, data, weight, bias, (min_data, max_data, min_weight, max_weight, min_bias, max_bias),
                   no_bias)
    x = data.reshape(data.shape[0], -1) if flatten else data
    if tuple(weight.shape) != (num_hidden, x.shape[-1]):
        fail(op, f"weight has shape {tuple(weight.shape)} but ({num_hidden}, {x.shape[-1]}) is expected for "
                 f"data {tuple(data.shape)} (flatten={flatten}, num_hidden={num_hidden})")
    out = lax.dot_general(x.astype(jnp.int32), weight.astype(jnp.int32), (((x.ndim - 1,), (1,)), ((), ())),
                          preferred_element_type=jnp.int32)
    if not no_bias:
        data_scale = _step(data) / max_abs(min_data, max_data)
        weight_scale = _f32(INT8_RANGE) / max_abs(min_weight, max_weight)
        rescale = data_scale * weight_scale * max_abs(min_bias, max_bias) / _f32(INT8_RANGE)
        out = out + jnp.trunc(bias.astype(_f32) * rescale).astype(jnp.int32)
    lo, hi = product_range(data.dtype, min_data, max_data, min_weight, max_weight)
    return out, lo, hi

