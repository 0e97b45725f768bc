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

import jax
import jax.numpy as jnp
from jax import lax

from ..base import MXNetTypeError
from ._reshape import legacy_shape, npx_shape
from .nn_conv import convolution, pooling
from .nn_util import check_choice, fail, spatial_tuple
from .registry import defop

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


def _quantized(op, data, min_data, max_data, allowed=("int8", "uint8")):
    check_dtype(op, "data", data, allowed)
    check_ranges(op, ("min_data", min_data), ("max_data", max_data))


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

