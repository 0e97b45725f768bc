"""Converters for MXNet's neural-network layers: convolution, dense, normalization,
activations, pooling, softmax family, dropout, embedding, padding, upsampling.

Layers are converted for inference (as MXNet's exporter does): Dropout is the identity
and BatchNorm uses its running statistics.
"""
from __future__ import annotations

import math

import numpy as onp

from ._ops_elemwise import _onnx_type
from ._registry import OpNode, register


def _spatial(node: OpNode, key: str, default: int) -> list[int]:
    n = node.rank() - 2
    value = node.tuple_attr(key, ())
    return list(value) if value else [default] * n


def _check_layout(node: OpNode) -> None:
    layout = node.attr("layout")
    if layout is not None and not layout.startswith("NC"):
        raise node.error(f"layout {layout!r} is not supported (only channel-first layouts: NCW, NCHW, NCDHW)")


@register("Convolution", "_npx_convolution")
def _convolution(node: OpNode) -> None:
    _check_layout(node)
    pad = _spatial(node, "pad", 0)
    inputs = node.inputs[:2] if node.bool_attr("no_bias") else node.inputs[:3]
    node.emit("Conv", inputs, node.out(), kernel_shape=list(node.tuple_attr("kernel")),
              strides=_spatial(node, "stride", 1), dilations=_spatial(node, "dilate", 1),
              pads=pad + pad, group=int(node.attr("num_group", 1)))


@register("Deconvolution", "_npx_deconvolution")
def _deconvolution(node: OpNode) -> None:
    _check_layout(node)
    if node.tuple_attr("target_shape", ()):
        raise node.error("target_shape is not supported; give pad and adj instead")
    pad = _spatial(node, "pad", 0)
    inputs = node.inputs[:2] if node.bool_attr("no_bias", True) else node.inputs[:3]
    node.emit("ConvTranspose", inputs, node.out(), kernel_shape=list(node.tuple_attr("kernel")),
              strides=_spatial(node, "stride", 1), dilations=_spatial(node, "dilate", 1),
              pads=pad + pad, output_padding=_spatial(node, "adj", 0),
              group=int(node.attr("num_group", 1)))


@register("FullyConnected", "_npx_fully_connected")
def _fully_connected(node: OpNode) -> None:
    no_bias = node.bool_attr("no_bias")
    x, weight = node.inputs[0], node.inputs[1]
    if node.bool_attr("flatten", True):
        if node.rank() != 2:
            x = node.emit("Flatten", [x], axis=1)
        node.emit("Gemm", [x, weight] + ([] if no_bias else [node.inputs[2]]), node.out(),
                  alpha=1.0, beta=1.0, transB=1)
        return
    product_out = node.out() if no_bias else None
    product = node.emit("MatMul", [x, node.emit("Transpose", [weight], perm=[1, 0])], product_out)
    if not no_bias:
        node.emit("Add", [product, node.inputs[2]], node.out())


@register("BatchNorm", "_npx_batch_norm")
def _batch_norm(node: OpNode) -> None:
    if node.bool_attr("output_mean_var"):
        raise node.error("output_mean_var=True is not supported (only the normalized output is exported)")
    axis = int(node.attr("axis", 1)) % node.rank()
    eps = float(node.attr("eps", 1e-3))
    x, gamma, beta, mean, var = node.inputs[:5]
    if node.bool_attr("fix_gamma", True):
        gamma = node.const(onp.ones(node.in_shapes[1]), node.in_dtypes[1], "ones")
    if axis == 1:
        node.emit("BatchNormalization", [x, gamma, beta, mean, var], node.out(), epsilon=eps)
        return
    # another channel axis: the same arithmetic with the statistics shaped to broadcast
    shape = [1] * node.rank()
    shape[axis] = -1
    target = node.ints(shape, "bshape")
    gamma, beta, mean, var = (node.emit("Reshape", [t, target]) for t in (gamma, beta, mean, var))
    scale = node.emit("Div", [gamma, node.emit("Sqrt", [node.emit("Add", [var, node.scalar_like(eps)])])])
    centered = node.emit("Sub", [x, mean])
    node.emit("Add", [node.emit("Mul", [centered, scale]), beta], node.out())


def _gelu(node: OpNode, x: str, out: list[str]) -> None:
    """The exact (erf) GELU, as MXNet computes it: x * (1 + erf(x / sqrt 2)) / 2."""
    erf = node.emit("Erf", [node.emit("Div", [x, node.scalar_like(math.sqrt(2.0))])])
    half_x = node.emit("Mul", [x, node.scalar_like(0.5)])
    node.emit("Mul", [half_x, node.emit("Add", [erf, node.scalar_like(1.0)])], out)


@register("Activation", "_npx_activation")
def _activation(node: OpNode) -> None:
    act = node.attr("act_type")
    x = node.inputs[0]
    simple = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
              "softsign": "Softsign"}
    if act in simple:
        node.emit(simple[act], [x], node.out())
    elif act == "log_sigmoid":  # log(sigmoid(x)) = -softplus(-x)
        node.emit("Neg", [node.emit("Softplus", [node.emit("Neg", [x])])], node.out())
    elif act == "mish":
        node.emit("Mul", [x, node.emit("Tanh", [node.emit("Softplus", [x])])], node.out())
    else:
        raise node.error(f"act_type {act!r} is not supported")


@register("LeakyReLU", "_npx_leaky_relu")
def _leaky_relu(node: OpNode) -> None:
    act = node.attr("act_type", "leaky")
    x = node.inputs[0]
    slope = float(node.attr("slope", 0.25))
    if act == "leaky":
        node.emit("LeakyRelu", [x], node.out(), alpha=slope)
    elif act == "rrelu":  # at inference the slope is the middle of its range
        low, high = float(node.attr("lower_bound", 0.125)), float(node.attr("upper_bound", 0.334))
        node.emit("LeakyRelu", [x], node.out(), alpha=(low + high) / 2)
    elif act == "elu":
        node.emit("Elu", [x], node.out(), alpha=slope)
    elif act == "selu":
        node.emit("Selu", [x], node.out(), alpha=1.6732632423543772, gamma=1.0507009873554805)
    elif act == "gelu":
        _gelu(node, x, node.out())
    elif act == "prelu":
        # MXNet's gamma holds one slope per channel (axis 1); ONNX broadcasts from the right
        gamma = node.inputs[1]
        if node.rank() > 2 and node.in_shapes[1] != (1,):
            gamma = node.emit("Reshape", [gamma, node.ints([-1] + [1] * (node.rank() - 2), "gshape")])
        node.emit("PRelu", [x, gamma], node.out())
    else:
        raise node.error(f"act_type {act!r} is not supported")


@register("Pooling", "_npx_pooling")
def _pooling(node: OpNode) -> None:
    _check_layout(node)
    kind = node.attr("pool_type", "max")
    x = node.inputs[0]
    if node.bool_attr("global_pool"):
        ops = {"max": "GlobalMaxPool", "avg": "GlobalAveragePool"}
        if kind == "lp":
            axes = node.ints(range(2, node.rank()), "axes")
            _power_sum_root(node, x, int(node.attr("p_value", 2)),
                            lambda t: node.emit("ReduceSum", [t, axes], keepdims=1))
            return
        if kind == "sum":
            size = int(onp.prod(node.in_shapes[0][2:]))
            pooled = node.emit("GlobalAveragePool", [x])
            node.emit("Mul", [pooled, node.scalar_like(float(size))], node.out())
            return
        if kind not in ops:
            raise node.error(f"pool_type {kind!r} is not supported")
        node.emit(ops[kind], [x], node.out())
        return
    convention = node.attr("pooling_convention", "valid")
    if convention not in ("valid", "full"):
        raise node.error(f"pooling_convention {convention!r} is not supported (valid or full)")
    kernel = list(node.tuple_attr("kernel"))
    pad = _spatial(node, "pad", 0)
    common = dict(kernel_shape=kernel, strides=_spatial(node, "stride", 1), pads=pad + pad)
    if convention == "full":
        common["ceil_mode"] = 1
    if kind == "max":
        node.emit("MaxPool", [x], node.out(), **common)
    elif kind in ("avg", "sum"):
        if convention == "full" and any(pad) and kind == "avg":
            # ONNX and MXNet divide the windows hanging over the padded edge differently
            raise node.error("pooling_convention='full' with padding is not supported for avg pooling")
        include = node.attr("count_include_pad", True) if kind == "avg" else True
        out = node.out() if kind == "avg" else None
        pooled = node.emit("AveragePool", [x], out, count_include_pad=int(bool(include)), **common)
        if kind == "sum":
            node.emit("Mul", [pooled, node.scalar_like(float(onp.prod(kernel)))], node.out())
    elif kind == "lp":
        size = node.scalar_like(float(onp.prod(kernel)))
        _power_sum_root(node, x, int(node.attr("p_value", 2)), lambda t: node.emit(
            "Mul", [node.emit("AveragePool", [t], count_include_pad=1, **common), size]))
    else:
        raise node.error(f"pool_type {kind!r} is not supported")


def _power_sum_root(node: OpNode, x: str, p: int, window_sum) -> None:
    """MXNet's Lp pooling: (sum of x**p over the window) ** (1/p), signed (no absolute
    value, unlike ONNX's LpPool), for p in 1, 2, 3.  ``window_sum`` sums a tensor over
    the windows."""
    if p not in (1, 2, 3):
        raise node.error(f"p_value={p} is not supported (1, 2 or 3)")
    powered = x
    for _ in range(p - 1):
        powered = node.emit("Mul", [powered, x])
    total = window_sum(powered)
    if p == 1:
        node.emit("Identity", [total], node.out())
    elif p == 2:
        node.emit("Sqrt", [total], node.out())
    else:
        root = node.emit("Pow", [node.emit("Abs", [total]), node.scalar_like(1.0 / 3.0)])
        node.emit("Mul", [node.emit("Sign", [total]), root], node.out())


@register("Dropout", "_npx_dropout")
def _dropout(node: OpNode) -> None:
    node.emit("Identity", node.inputs[:1], node.out())


def _use_length_check(node: OpNode) -> None:
    if node.bool_attr("use_length"):
        raise node.error("use_length=True is not supported")


def _temperature(node: OpNode, x: str) -> str:
    temperature = node.attr("temperature")
    if temperature is None or float(temperature) == 1.0:
        return x
    return node.emit("Div", [x, node.scalar_like(float(temperature))])


@register("softmax", "_npx_softmax")
def _softmax(node: OpNode) -> None:
    _use_length_check(node)
    node.emit("Softmax", [_temperature(node, node.inputs[0])], node.out(), axis=int(node.attr("axis", -1)))


@register("log_softmax", "_npx_log_softmax")
def _log_softmax(node: OpNode) -> None:
    _use_length_check(node)
    node.emit("LogSoftmax", [_temperature(node, node.inputs[0])], node.out(), axis=int(node.attr("axis", -1)))


def _softmax_over_rows(node: OpNode, x: str) -> None:
    """Softmax of each sample over all its other axes (flatten to 2-D, softmax, reshape back)."""
    if node.rank() == 2:
        node.emit("Softmax", [x], node.out(), axis=1)
        return
    flat = node.emit("Flatten", [x], axis=1)
    probs = node.emit("Softmax", [flat], axis=1)
    node.emit("Reshape", [probs, node.emit("Shape", [x])], node.out())


@register("SoftmaxOutput", "Softmax")
def _softmax_output(node: OpNode) -> None:
    x = node.inputs[0]
    if node.bool_attr("multi_output"):
        node.emit("Softmax", [x], node.out(), axis=1)
    elif node.bool_attr("preserve_shape"):
        node.emit("Softmax", [x], node.out(), axis=-1)
    else:
        _softmax_over_rows(node, x)


@register("SoftmaxActivation")
def _softmax_activation(node: OpNode) -> None:
    if node.attr("mode", "instance") == "channel":
        node.emit("Softmax", node.inputs[:1], node.out(), axis=1)
    else:
        _softmax_over_rows(node, node.inputs[0])


@register("LRN")
def _lrn(node: OpNode) -> None:
    node.emit("LRN", node.inputs[:1], node.out(), alpha=float(node.attr("alpha", 1e-4)),
              beta=float(node.attr("beta", 0.75)), bias=float(node.attr("knorm", 2.0)),
              size=int(node.attr("nsize")))


@register("Embedding", "_npx_embedding")
def _embedding(node: OpNode) -> None:
    indices = node.emit("Cast", node.inputs[:1], to=_onnx_type(onp.dtype(onp.int64)))
    node.emit("Gather", [node.inputs[1], indices], node.out(), axis=0)


@register("Pad", "pad")
def _pad(node: OpNode) -> None:
    mode = node.attr("mode", "constant")
    widths = list(node.tuple_attr("pad_width"))
    pads = widths[0::2] + widths[1::2]  # MXNet interleaves (before, after) per axis
    inputs = [node.inputs[0], node.ints(pads, "pads")]
    if mode == "constant":
        inputs.append(node.scalar_like(float(node.attr("constant_value", 0.0)), hint="value"))
    elif mode not in ("edge", "reflect"):
        raise node.error(f"mode {mode!r} is not supported")
    node.emit("Pad", inputs, node.out(), mode=mode)


@register("UpSampling")
def _upsampling(node: OpNode) -> None:
    if node.attr("sample_type", "nearest") != "nearest":
        raise node.error("only sample_type='nearest' is supported")
    if len(node.inputs) != 1:
        raise node.error("nearest upsampling of several inputs (num_args > 1) is not supported")
    scale = float(node.attr("scale"))
    scales = node.const([1.0, 1.0] + [scale] * (node.rank() - 2), onp.float32, "scales")
    node.emit("Resize", [node.inputs[0], "", scales], node.out(), mode="nearest",
              coordinate_transformation_mode="asymmetric", nearest_mode="floor")
