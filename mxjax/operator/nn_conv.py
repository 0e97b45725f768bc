"""Dense and spatial layers: FullyConnected, Convolution, Deconvolution, Pooling, UpSampling, resizing.

Shapes follow MXNet's shape inference exactly (output-size formulas, weight
layouts, the checks), and every mismatch is reported at trace time naming the
op and both shapes.  ``Pooling`` is in ``_pooling`` (re-exported here).
"""
from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from .._onednn import ops as onednn_ops
from ._pooling import pooling  # noqa: F401  (re-exported: quantization imports it from here)
from .nn_util import (check_choice, check_shape, fail, float_input, from_channel_first, resolve_layout,
                      spatial_tuple, to_channel_first)
from .registry import defop


def _common_float(op, *arrays):
    """Cast the arrays to one float dtype (integer input gives the default float)."""
    arrays = [float_input(op, a) for a in arrays]
    dtype = jnp.result_type(*arrays)
    return [a.astype(dtype) for a in arrays]


def _check_bias(op, bias, no_bias, num_filter):
    if no_bias:
        return None
    if bias is None:
        fail(op, "no_bias=False needs a bias input (or pass no_bias=True)")
    check_shape(op, "bias", bias, (num_filter,), f"one value per output channel, num_filter={num_filter}")
    return bias


def _fc_param_shapes(shapes: list, p: dict) -> dict:
    data = shapes[0]
    in_dim = math.prod(data[1:]) if p.get("flatten", True) else data[-1]
    return {1: (p["num_hidden"], in_dim), 2: (p["num_hidden"],)}


@defop("FullyConnected", aliases=("_npx_fully_connected",), param_shapes=_fc_param_shapes)
def fully_connected(data, weight, bias=None, *, num_hidden: int | None = None, no_bias: bool = False,
                    flatten: bool = True):
    """``data @ weight.T + bias``; with ``flatten`` all axes but the first are collapsed first."""
    op = "FullyConnected"
    x = data.reshape(data.shape[0], -1) if flatten and data.ndim != 2 else data
    if x.ndim == 0:
        fail(op, "data must have at least one dimension")
    units = weight.shape[0] if num_hidden is None or num_hidden == 0 else num_hidden
    expected = (units, x.shape[-1])
    check_shape(op, "weight", weight, expected,
                f"data {tuple(data.shape)}, num_hidden={units}, flatten={flatten}")
    bias = _check_bias(op, bias, no_bias, units)
    x, w = _common_float(op, x, weight)
    out = jnp.matmul(x, w.T)
    return out if bias is None else out + bias.astype(out.dtype)


def _conv_setup(op, data, kernel, stride, dilate, pad, layout):
    nspatial = len(kernel) if kernel else data.ndim - 2
    if not kernel:
        fail(op, "kernel is required, e.g. kernel=(3, 3)")
    if data.ndim != nspatial + 2:
        fail(op, f"data of shape {tuple(data.shape)} must be {nspatial + 2}-D for a {nspatial}-D "
                 f"kernel {tuple(kernel)} (batch, channel and {nspatial} spatial axes)")
    layout, channel_last = resolve_layout(op, layout, nspatial)
    stride = spatial_tuple(op, "stride", stride, nspatial, 1)
    dilate = spatial_tuple(op, "dilate", dilate, nspatial, 1)
    pad = spatial_tuple(op, "pad", pad, nspatial, 0)
    if min(stride) < 1 or min(dilate) < 1 or min(pad) < 0 or min(kernel) < 1:
        fail(op, f"kernel {tuple(kernel)}, stride {stride} and dilate {dilate} must be positive, "
                 f"pad {pad} non-negative")
    return tuple(int(k) for k in kernel), stride, dilate, pad, layout, channel_last


def _groups(op, channels, num_filter, num_group):
    if num_group < 1 or channels % num_group or num_filter % num_group:
        fail(op, f"num_group={num_group} must divide both the input channels ({channels}) "
                 f"and num_filter ({num_filter})")


def _dimension_numbers(layout):
    # lax names spatial axes by letter; the weight spec puts O and I where the layout has N and C
    rhs = "O" + layout[1:-1] + "I" if layout.endswith("C") else "OI" + layout[2:]
    return layout, rhs, layout


def _add_bias(out, bias, channel_last):
    if bias is None:
        return out
    shape = (1,) * (out.ndim - 1) + (-1,) if channel_last else (1, -1) + (1,) * (out.ndim - 2)
    return out + bias.astype(out.dtype).reshape(shape)


def _channels(data: tuple, layout: str | None) -> int:
    return data[-1] if layout and str(layout).endswith("C") else data[1]


def _conv_param_shapes(shapes: list, p: dict) -> dict:
    data, kernel, groups, layout = shapes[0], tuple(p.get("kernel", ())), p.get("num_group", 1), p.get("layout")
    per_group = _channels(data, layout) // groups
    weight = ((p["num_filter"], *kernel, per_group) if layout and str(layout).endswith("C")
              else (p["num_filter"], per_group, *kernel))
    return {1: weight, 2: (p["num_filter"],)}


@defop("Convolution", aliases=("_npx_convolution",), param_shapes=_conv_param_shapes)
def convolution(data, weight, bias=None, *, kernel: shape = (), stride: shape = (), dilate: shape = (),
                pad: shape = (), num_filter: int = 1, num_group: int = 1, workspace: int = 1024,
                no_bias: bool = False, cudnn_tune: str | None = None, cudnn_off: bool = False,
                layout: str | None = None):
    """1-D/2-D/3-D convolution (cross-correlation) with MXNet's weight layout ``(num_filter, C/g, *kernel)``."""
    op = "Convolution"
    kernel, stride, dilate, pad, layout, channel_last = _conv_setup(op, data, kernel, stride, dilate, pad,
                                                                    layout)
    channels = data.shape[-1] if channel_last else data.shape[1]
    _groups(op, channels, num_filter, num_group)
    per_group = channels // num_group
    expected = (num_filter, *kernel, per_group) if channel_last else (num_filter, per_group, *kernel)
    check_shape(op, "weight", weight, expected,
                f"data {tuple(data.shape)} {layout}, kernel={kernel}, num_filter={num_filter}, "
                f"num_group={num_group}")
    bias = _check_bias(op, bias, no_bias, num_filter)
    for i, (size, k, p, d) in enumerate(zip(_spatial(data, channel_last), kernel, pad, dilate)):
        if size + 2 * p < d * (k - 1) + 1:
            fail(op, f"dilated kernel {d * (k - 1) + 1} on spatial axis {i} exceeds the padded input "
                     f"{size + 2 * p} (data {tuple(data.shape)}, pad={pad})")
    x, w = _common_float(op, data, weight)
    out = onednn_ops.maybe_convolution(x, w, bias, stride, pad, dilate, num_group, channel_last,
                                       xla=_xla_convolution)
    if out is not None:  # CPU float32/bfloat16 with the oneDNN extension (mxjax/_onednn)
        return out
    return _xla_convolution(x, w, bias, stride, pad, dilate, num_group, channel_last)


def _xla_convolution(x, w, bias, stride, pad, dilate, groups, channel_last):
    """XLA's own convolution plus bias, MXNet's weight layout: the path off oneDNN, and the one
    oneDNN's inference of thin inputs takes (``_onednn.ops.INFER_XLA_MAX_CHANNELS``)."""
    spatial = "DHW"[3 - (x.ndim - 2):]
    layout = "N" + spatial + "C" if channel_last else "NC" + spatial
    out = lax.conv_general_dilated(x, w, window_strides=stride, padding=[(p, p) for p in pad],
                                   rhs_dilation=dilate, dimension_numbers=_dimension_numbers(layout),
                                   feature_group_count=groups)
    return _add_bias(out, bias, channel_last)


def _spatial(data, channel_last):
    return tuple(data.shape[1:-1]) if channel_last else tuple(data.shape[2:])


def deconv_pad_adj(op, in_sizes, kernel, stride, dilate, pad, adj, target_shape):
    """MXNet's DeconvolutionParam::InferPad: (pad, adj) per spatial axis, derived from target_shape if set."""
    if target_shape and any(t != 0 for t in target_shape):
        if len(target_shape) != len(kernel):
            fail(op, f"target_shape={tuple(target_shape)} must have {len(kernel)} entries")
        pads, adjs = [], []
        for size, k, s, d, t in zip(in_sizes, kernel, stride, dilate, target_shape):
            total = s * (size - 1) + d * (k - 1) + 1
            if total < t:
                fail(op, f"target_shape {tuple(target_shape)} is too big for input spatial size "
                         f"{tuple(in_sizes)} (at most {total} on an axis with kernel {k}, stride {s})")
            total -= t
            adjs.append(total % 2)
            pads.append((total + 1) // 2)
        return tuple(pads), tuple(adjs)
    return pad, adj


def _deconv_param_shapes(shapes: list, p: dict) -> dict:
    data, kernel, groups, layout = shapes[0], tuple(p.get("kernel", ())), p.get("num_group", 1), p.get("layout")
    per_group = p["num_filter"] // groups
    channels = _channels(data, layout)
    weight = ((channels, *kernel, per_group) if layout and str(layout).endswith("C")
              else (channels, per_group, *kernel))
    return {1: weight, 2: (p["num_filter"],)}


@defop("Deconvolution", aliases=("_npx_deconvolution",), param_shapes=_deconv_param_shapes)
def deconvolution(data, weight, bias=None, *, kernel: shape = (), stride: shape = (), dilate: shape = (),
                  pad: shape = (), adj: shape = (), target_shape: shape = (), num_filter: int = 1,
                  num_group: int = 1, workspace: int = 512, no_bias: bool = True,
                  cudnn_tune: str | None = None, cudnn_off: bool = False, layout: str | None = None):
    """Transposed convolution; output size ``stride*(in-1) + dilate*(kernel-1) + 1 - 2*pad + adj``.

    The weight is ``(C, num_filter/num_group, *kernel)`` as in MXNet (the gradient of
    a Convolution with that weight).
    """
    op = "Deconvolution"
    kernel, stride, dilate, pad, layout, channel_last = _conv_setup(op, data, kernel, stride, dilate, pad,
                                                                    layout)
    adj = spatial_tuple(op, "adj", adj, len(kernel), 0)
    x = to_channel_first(data, channel_last)
    channels = x.shape[1]
    _groups(op, channels, num_filter, num_group)
    per_group = num_filter // num_group
    expected = (channels, *kernel, per_group) if channel_last else (channels, per_group, *kernel)
    check_shape(op, "weight", weight, expected,
                f"data {tuple(data.shape)} {layout}, kernel={kernel}, num_filter={num_filter}, "
                f"num_group={num_group}")
    bias = _check_bias(op, bias, no_bias, num_filter)
    w = jnp.moveaxis(weight, -1, 1) if channel_last else weight
    pad, adj = deconv_pad_adj(op, x.shape[2:], kernel, stride, dilate, pad, adj, target_shape)
    x, w = _common_float(op, x, w)
    out = onednn_ops.maybe_deconvolution(x, w, stride, pad, dilate, adj, num_group)
    if out is None:  # not CPU float32/bfloat16 with the oneDNN extension (mxjax/_onednn)
        out = transposed_conv(x, w, stride, dilate, pad, adj, num_group)
    for i, size in enumerate(out.shape[2:]):
        if size < 1:
            fail(op, f"pad={pad} leaves no output on spatial axis {i} (data {tuple(data.shape)})")
    return _add_bias(from_channel_first(out, channel_last), bias, channel_last)


def transposed_conv(x, w, stride, dilate, pad, adj, groups):
    """Channel-first transposed convolution of ``x`` with an MXNet deconvolution weight ``(C, O/g, *k)``."""
    c, o_per_g = w.shape[0], w.shape[1]
    ksize = w.shape[2:]
    # (C, O/g, k) -> (O, C/g, k), spatially flipped: the convolution whose input-gradient this is
    w = w.reshape(groups, c // groups, o_per_g, *ksize).swapaxes(1, 2)
    w = w.reshape(groups * o_per_g, c // groups, *ksize)
    w = jnp.flip(w, axis=tuple(range(2, w.ndim)))
    padding = []
    for k, d, p, a in zip(ksize, dilate, pad, adj):
        edge = d * (k - 1) - p
        padding.append((edge, edge + a))
    spec = "NC" + "DHW"[3 - len(ksize):]
    return lax.conv_general_dilated(x, w, window_strides=(1,) * len(ksize), padding=padding,
                                    lhs_dilation=stride, rhs_dilation=dilate,
                                    dimension_numbers=(spec, "OI" + spec[2:], spec),
                                    feature_group_count=groups)


# -------------------------------------------------------------------- resizing

@defop("UpSampling")
def upsampling(*data, scale: int = 1, num_filter: int = 0, sample_type: str = "nearest",
               multi_input_mode: str = "concat", num_args: int = 1, workspace: int = 512):
    """Nearest-neighbour (inputs upsampled to the first one's size x scale, then concatenated or summed)
    or bilinear upsampling (inputs ``data, weight``: a grouped deconvolution) of NCHW data."""
    op = "UpSampling"
    check_choice(op, "sample_type", sample_type, ("nearest", "bilinear"))
    check_choice(op, "multi_input_mode", multi_input_mode, ("concat", "sum"))
    if not data:
        fail(op, "needs at least one input")
    if scale < 1:
        fail(op, f"scale={scale} must be a positive integer")
    if sample_type == "bilinear":
        if len(data) != 2:
            fail(op, f"sample_type='bilinear' takes (data, weight), got {len(data)} inputs")
        x, weight = data
        kernel = 2 * scale - scale % 2
        pad = math.ceil((scale - 1) / 2.0)
        channels = x.shape[1]
        check_shape(op, "weight", weight, (channels, 1, kernel, kernel),
                    f"bilinear scale={scale} on data {tuple(x.shape)}")
        x, weight = _common_float(op, x, weight)
        return transposed_conv(x, weight, (scale, scale), (1, 1), (pad, pad), (0, 0), channels)
    height, width = data[0].shape[2] * scale, data[0].shape[3] * scale
    outs = []
    for x in data:
        if x.ndim != 4:
            fail(op, f"input of shape {tuple(x.shape)} must be 4-D NCHW")
        if height % x.shape[2] or width % x.shape[3]:
            fail(op, f"input {tuple(x.shape)} cannot be upsampled by an integer factor to "
                     f"({height}, {width})")
        fy, fx = height // x.shape[2], width // x.shape[3]
        outs.append(jnp.repeat(jnp.repeat(x, fy, axis=2), fx, axis=3))
    if len(outs) == 1:
        return outs[0]
    if multi_input_mode == "sum":
        total = outs[0]
        for o in outs[1:]:
            total = total + o
        return total
    return jnp.concatenate(outs, axis=1)


def _resize_size(size, scale):
    return int(size * scale)


@defop("BilinearResize2D", aliases=("_contrib_BilinearResize2D",))
def bilinear_resize_2d(data, like=None, *, height: int = 1, width: int = 1, scale_height: float | None = None,
                       scale_width: float | None = None, mode: str = "size", align_corners: bool = True):
    """Bilinear resize of NCHW data to (height, width), a scale, ``like``'s size or the nearest even/odd size."""
    op = "BilinearResize2D"
    check_choice(op, "mode", mode, ("size", "odd_scale", "like", "to_even_down", "to_even_up",
                                    "to_odd_down", "to_odd_up"))
    if data.ndim != 4:
        fail(op, f"data of shape {tuple(data.shape)} must be 4-D NCHW")
    h, w = data.shape[2], data.shape[3]
    if mode == "size":
        # MXNet tests scale_height for both axes (its width uses scale_width when scale_height is set)
        if scale_height is not None:
            if scale_width is None:
                fail(op, "scale_height needs scale_width as well")
            out_h, out_w = _resize_size(h, scale_height), _resize_size(w, scale_width)
        else:
            out_h, out_w = height, width
    elif mode == "odd_scale":
        if scale_height is None or scale_width is None:
            fail(op, "mode='odd_scale' needs scale_height and scale_width")
        out_h = _resize_size(h, scale_height) if h % 2 == 0 else _resize_size(h - 1, scale_height) + 1
        out_w = _resize_size(w, scale_width) if w % 2 == 0 else _resize_size(w - 1, scale_width) + 1
    elif mode == "like":
        if like is None or like.ndim != 4:
            fail(op, "mode='like' needs a 4-D second input whose height and width to take")
        out_h, out_w = like.shape[2], like.shape[3]
    else:
        even = mode.startswith("to_even")
        step = -1 if mode.endswith("down") else 1
        out_h = h if (h % 2 == 0) == even else h + step
        out_w = w if (w % 2 == 0) == even else w + step
    if out_h < 1 or out_w < 1:
        fail(op, f"output size ({out_h}, {out_w}) must be positive")
    x = float_input(op, data)
    x = _interp_axis(x, 2, out_h, align_corners)
    return _interp_axis(x, 3, out_w, align_corners)


def _interp_axis(x, axis, out_size, align_corners):
    """Linear interpolation along one axis with MXNet's (PyTorch's) source-index rule."""
    in_size = x.shape[axis]
    dst = jnp.arange(out_size, dtype=jnp.float32)
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = dst * scale
    else:
        scale = in_size / out_size if out_size > 1 else 0.0
        src = jnp.maximum(scale * (dst + 0.5) - 0.5, 0.0)
    i0 = jnp.floor(src).astype(jnp.int32)
    i0 = jnp.minimum(i0, in_size - 1)
    i1 = jnp.minimum(i0 + 1, in_size - 1)
    frac = (src - i0).astype(x.dtype)
    shape = [1] * x.ndim
    shape[axis] = out_size
    frac = frac.reshape(shape)
    return jnp.take(x, i0, axis=axis) * (1 - frac) + jnp.take(x, i1, axis=axis) * frac
