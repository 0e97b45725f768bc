"""mx.onnx: each exported graph is run by ONNX's own pure-Python ReferenceEvaluator and
compared with mxjax's forward pass on the same input; the model also passes
``onnx.checker``.  A fixture written by real MXNet 2.0 (tools/make_onnx_fixtures.py)
checks values against MXNet and op types against MXNet's own exporter.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mxjax as mx
import mxjax.onnx as mxonnx
from mxjax.base import MXNetError

onnx = pytest.importorskip("onnx")
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnx.reference.op_run import OpRun  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "onnx"
RNG = np.random.RandomState(0)


class BatchNormalization(OpRun):
    """Inference-mode BatchNormalization.  The reference evaluator's opset-9 kernel fills
    in the schema's default ``momentum`` and then normalizes with batch statistics,
    which the ONNX spec reserves for training."""

    op_domain = ""

    def _run(self, x, scale, bias, mean, var, epsilon=1e-5, momentum=None, training_mode=None):
        shape = (-1,) + (1,) * (x.ndim - 2)
        y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon)
        return ((y * scale.reshape(shape) + bias.reshape(shape)).astype(x.dtype),)


class LRN(OpRun):
    """Cross-channel LRN as the ONNX spec defines it (the reference kernel loops over the
    batch axis instead of the channels)."""

    op_domain = ""

    def _run(self, x, alpha=1e-4, beta=0.75, bias=1.0, size=1):
        lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
        padded = np.pad(x * x, [(0, 0), (lo, hi)] + [(0, 0)] * (x.ndim - 2))
        window = sum(padded[:, i:i + x.shape[1]] for i in range(size))
        return ((x / (bias + alpha / size * window) ** beta).astype(x.dtype),)


def run_onnx(model, feeds: dict) -> list:
    return ReferenceEvaluator(model, new_ops=[BatchNormalization, LRN]).run(None, feeds)


def mx_forward(sym, feeds: dict, params: dict, labels: dict | None = None) -> list:
    values = {**{k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}, **params, **(labels or {})}
    args = {k: values[k] for k in sym.list_arguments() if k in values}
    aux = {k: values[k] for k in sym.list_auxiliary_states()}
    return [o.asnumpy() for o in sym.bind(args=args, aux_states=aux, grad_req="null").forward()]


def roundtrip(tmp_path, sym, feeds: dict, params: dict | None = None, rtol=1e-5, atol=1e-5,
              labels: dict | None = None, **kwargs):
    """Export, check, evaluate with ONNX and mxjax, compare; returns the ONNX model."""
    params = params or {}
    order = [n for n in sym.list_inputs() if n in feeds]
    path = mxonnx.export_model(sym, params, [feeds[n].shape for n in order],
                               [feeds[n].dtype for n in order],
                               onnx_file_path=str(tmp_path / "model.onnx"), **kwargs)
    assert path == str(tmp_path / "model.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    got = run_onnx(model, {n: feeds[n] for n in order})
    want = mx_forward(sym, feeds, params, labels)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)
    return model


def arr(*shape, low=-1.0, high=1.0, dtype="float32"):
    return RNG.uniform(low, high, shape).astype(dtype)


def nd(*shape, low=-1.0, high=1.0):
    return mx.nd.array(arr(*shape, low=low, high=high))


def op_types(model) -> list[str]:
    return [n.op_type for n in model.graph.node]


D = mx.sym.var("data")
E = mx.sym.var("other")


# -- per-op graphs: (id, symbol, feeds, params) -----------------------------------------------
def _bn_params(name, c):
    return {f"{name}_gamma": nd(c, low=0.5, high=1.5), f"{name}_beta": nd(c),
            f"{name}_moving_mean": nd(c), f"{name}_moving_var": nd(c, low=0.5, high=1.5)}


CASES = [
    ("conv", mx.sym.Convolution(D, kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1), name="c"),
     {"data": arr(1, 2, 7, 7)}, {"c_weight": nd(4, 2, 3, 3), "c_bias": nd(4)}),
    ("conv_group_dilate", mx.sym.Convolution(D, kernel=(3, 3), num_filter=4, num_group=2, dilate=(2, 2),
                                             no_bias=True, name="c"),
     {"data": arr(1, 4, 8, 8)}, {"c_weight": nd(4, 2, 3, 3)}),
    ("conv1d", mx.sym.Convolution(D, kernel=(3,), num_filter=2, name="c"),
     {"data": arr(2, 3, 9)}, {"c_weight": nd(2, 3, 3), "c_bias": nd(2)}),
    ("deconv", mx.sym.Deconvolution(D, kernel=(3, 3), num_filter=3, stride=(2, 2), pad=(1, 1), adj=(1, 1),
                                    name="d"),
     {"data": arr(1, 2, 4, 4)}, {"d_weight": nd(2, 3, 3, 3)}),
    ("fc_flatten", mx.sym.FullyConnected(D, num_hidden=5, name="f"),
     {"data": arr(2, 3, 2, 2)}, {"f_weight": nd(5, 12), "f_bias": nd(5)}),
    ("fc_no_flatten", mx.sym.FullyConnected(D, num_hidden=5, flatten=False, name="f"),
     {"data": arr(2, 3, 4)}, {"f_weight": nd(5, 4), "f_bias": nd(5)}),
    ("fc_no_bias", mx.sym.FullyConnected(D, num_hidden=5, no_bias=True, name="f"),
     {"data": arr(2, 4)}, {"f_weight": nd(5, 4)}),
    ("bn", mx.sym.BatchNorm(D, fix_gamma=False, name="bn"), {"data": arr(2, 3, 4, 4)}, _bn_params("bn", 3)),
    ("bn_fix_gamma", mx.sym.BatchNorm(D, fix_gamma=True, eps=1e-4, name="bn"),
     {"data": arr(2, 3, 4)}, _bn_params("bn", 3)),
    ("bn_global_stats", mx.sym.BatchNorm(D, fix_gamma=False, use_global_stats=True, name="bn"),
     {"data": arr(2, 3, 2, 2)}, _bn_params("bn", 3)),
    ("bn_last_axis", mx.sym.BatchNorm(D, fix_gamma=False, axis=-1, name="bn"),
     {"data": arr(2, 4, 3)}, _bn_params("bn", 3)),
    *[(f"act_{a}", mx.sym.Activation(D, act_type=a), {"data": arr(2, 5, low=-3, high=3)}, {})
      for a in ("relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish")],
    *[(f"leaky_{a}", mx.sym.LeakyReLU(D, act_type=a, slope=0.3), {"data": arr(2, 5, low=-3, high=3)}, {})
      for a in ("leaky", "elu", "selu", "gelu", "rrelu")],
    ("prelu", mx.sym.LeakyReLU(D, act_type="prelu", name="p"), {"data": arr(2, 3, 4, 4)},
     {"p_gamma": nd(3)}),
    ("maxpool_pad", mx.sym.Pooling(D, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
     {"data": arr(1, 2, 8, 8)}, {}),
    ("avgpool_pad_include", mx.sym.Pooling(D, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"),
     {"data": arr(1, 2, 8, 8)}, {}),
    ("avgpool_pad_exclude", mx.sym.Pooling(D, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg",
                                           count_include_pad=False),
     {"data": arr(1, 2, 5, 5)}, {}),
    ("maxpool_full", mx.sym.Pooling(D, kernel=(3, 3), stride=(2, 2), pool_type="max",
                                    pooling_convention="full"),
     {"data": arr(1, 2, 8, 8)}, {}),
    ("avgpool_full", mx.sym.Pooling(D, kernel=(2, 2), stride=(2, 2), pool_type="avg",
                                    pooling_convention="full"),
     {"data": arr(1, 2, 7, 7)}, {}),
    ("sumpool", mx.sym.Pooling(D, kernel=(2, 2), stride=(2, 2), pool_type="sum"), {"data": arr(1, 2, 4, 4)}, {}),
    ("global_avg", mx.sym.Pooling(D, kernel=(1, 1), global_pool=True, pool_type="avg"),
     {"data": arr(2, 3, 5, 5)}, {}),
    ("global_max", mx.sym.Pooling(D, kernel=(1, 1), global_pool=True, pool_type="max"),
     {"data": arr(2, 3, 5, 5)}, {}),
    ("global_sum", mx.sym.Pooling(D, kernel=(1, 1), global_pool=True, pool_type="sum"),
     {"data": arr(2, 3, 5, 5)}, {}),
    *[(f"lppool{p}", mx.sym.Pooling(D, kernel=(2, 2), stride=(1, 1), pad=(1, 0), pool_type="lp", p_value=p),
       {"data": arr(1, 2, 4, 4)}, {}) for p in (1, 2, 3)],
    *[(f"global_lp{p}", mx.sym.Pooling(D, kernel=(1, 1), global_pool=True, pool_type="lp", p_value=p),
       {"data": arr(1, 2, 4, 4)}, {}) for p in (1, 2, 3)],
    ("flatten", mx.sym.Flatten(D), {"data": arr(2, 3, 4)}, {}),
    ("concat", mx.sym.Concat(D, E, dim=1), {"data": arr(2, 3), "other": arr(2, 4)}, {}),
    ("dropout", mx.sym.Dropout(D, p=0.5), {"data": arr(3, 4)}, {}),
    ("softmax", mx.sym.softmax(D, axis=1), {"data": arr(2, 3, 4)}, {}),
    ("softmax_temperature", mx.sym.softmax(D, temperature=2.0), {"data": arr(2, 5)}, {}),
    ("log_softmax", mx.sym.log_softmax(D), {"data": arr(2, 5)}, {}),
    ("softmax_output", mx.sym.SoftmaxOutput(D, name="softmax"), {"data": arr(2, 3)}, {}),
    ("softmax_output_multi", mx.sym.SoftmaxOutput(D, multi_output=True, name="softmax"),
     {"data": arr(2, 3, 2)}, {}),
    ("softmax_output_preserve", mx.sym.SoftmaxOutput(D, preserve_shape=True, name="softmax"),
     {"data": arr(2, 3, 2)}, {}),
    ("softmax_activation", mx.sym.SoftmaxActivation(D), {"data": arr(2, 3, 2)}, {}),
    ("softmax_activation_channel", mx.sym.SoftmaxActivation(D, mode="channel"), {"data": arr(2, 3, 2)}, {}),
    ("elemwise_add", mx.sym.elemwise_add(D, E), {"data": arr(2, 3), "other": arr(2, 3)}, {}),
    ("elemwise_sub", mx.sym.elemwise_sub(D, E), {"data": arr(2, 3), "other": arr(2, 3)}, {}),
    ("elemwise_mul", mx.sym.elemwise_mul(D, E), {"data": arr(2, 3), "other": arr(2, 3)}, {}),
    ("elemwise_div", mx.sym.elemwise_div(D, E), {"data": arr(2, 3), "other": arr(2, 3, low=1, high=2)}, {}),
    ("plus", D + E, {"data": arr(2, 3), "other": arr(2, 3)}, {}),
    ("add_n", mx.sym.add_n(D, E, D), {"data": arr(2, 3), "other": arr(2, 3)}, {}),
    *[(f"broadcast_{o}", getattr(mx.sym, f"broadcast_{o}")(D, E),
       {"data": arr(2, 3, low=0.5, high=2), "other": arr(1, 3, low=0.5, high=2)}, {})
      for o in ("add", "sub", "mul", "div", "power", "maximum", "minimum", "mod")],
    *[(f"compare_{o}", getattr(mx.sym, f"broadcast_{o}")(D, E),
       {"data": np.array([[1, 2, 3]], "float32"), "other": np.array([[2, 2, 2]], "float32")}, {})
      for o in ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
                "logical_and", "logical_or", "logical_xor")],
    ("logical_not", mx.sym.logical_not(D), {"data": np.array([0, 1, 2], "float32")}, {}),
    *[(f"scalar_{n}", fn(D), {"data": arr(2, 3, low=0.5, high=2)}, {}) for n, fn in [
        ("plus", lambda s: s + 2.5), ("minus", lambda s: s - 2.5), ("rminus", lambda s: 2.5 - s),
        ("mul", lambda s: s * 2.5), ("div", lambda s: s / 2.5), ("rdiv", lambda s: 2.5 / s),
        ("power", lambda s: s ** 2.0), ("rpower", lambda s: 2.0 ** s),
        ("maximum", lambda s: mx.sym.maximum(s, 1.0)), ("minimum", lambda s: mx.sym.minimum(s, 1.0)),
        ("mod", lambda s: s % 0.7), ("rmod", lambda s: mx.sym._rmod_scalar(s, scalar=3.0)),
        ("greater", lambda s: s > 1.0), ("lesser_equal", lambda s: s <= 1.0), ("equal", lambda s: s == 2.0),
        ("not_equal", lambda s: s != 2.0), ("greater_equal", lambda s: s >= 1.0), ("lesser", lambda s: s < 1.0)]],
    *[(f"unary_{n}", getattr(mx.sym, n)(D), {"data": arr(2, 3, low=0.2, high=0.9)}, {})
      for n in ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "abs", "negative", "reciprocal", "floor",
                "ceil", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "erf", "sign",
                "softsign", "square", "rsqrt", "log2", "log10", "round", "identity", "BlockGrad")],
    ("reshape_codes", mx.sym.Reshape(D, shape=(0, -1)), {"data": arr(2, 3, 4)}, {}),
    ("reshape_merge", mx.sym.Reshape(D, shape=(-3, -2)), {"data": arr(2, 3, 4, 5)}, {}),
    ("reshape_split", mx.sym.Reshape(D, shape=(0, -4, 2, -1, -2)), {"data": arr(2, 6, 4)}, {}),
    ("reshape_reverse", mx.sym.Reshape(D, shape=(-1, 0), reverse=True), {"data": arr(2, 3, 4)}, {}),
    ("transpose", mx.sym.transpose(D, axes=(2, 0, 1)), {"data": arr(2, 3, 4)}, {}),
    ("transpose_default", mx.sym.transpose(D), {"data": arr(2, 3, 4)}, {}),
    ("swapaxes", mx.sym.SwapAxis(D, dim1=0, dim2=2), {"data": arr(2, 3, 4)}, {}),
    ("clip", mx.sym.clip(D, -0.5, 0.5), {"data": arr(3, 4)}, {}),
    ("slice", mx.sym.slice(D, begin=(0, 1), end=(2, None)), {"data": arr(3, 4)}, {}),
    ("slice_step", mx.sym.slice(D, begin=(None, 3), end=(None, 0), step=(1, -2)), {"data": arr(3, 5)}, {}),
    ("slice_axis", mx.sym.slice_axis(D, axis=1, begin=1, end=-1), {"data": arr(3, 5)}, {}),
    ("slice_axis_none", mx.sym.slice_axis(D, axis=0, begin=-2, end=None), {"data": arr(3, 5)}, {}),
    ("sum_axis", mx.sym.sum(D, axis=1), {"data": arr(2, 3, 4)}, {}),
    ("sum_all", mx.sym.sum(D), {"data": arr(2, 3)}, {}),
    ("mean_keepdims", mx.sym.mean(D, axis=(0, 2), keepdims=True), {"data": arr(2, 3, 4)}, {}),
    ("max_exclude", mx.sym.max(D, axis=1, exclude=True), {"data": arr(2, 3, 4)}, {}),
    ("min", mx.sym.min(D, axis=-1), {"data": arr(2, 3, 4)}, {}),
    ("prod", mx.sym.prod(D, axis=0), {"data": arr(2, 3)}, {}),
    ("argmax", mx.sym.argmax(D, axis=1), {"data": arr(2, 5)}, {}),
    ("argmin_keep", mx.sym.argmin(D, axis=0, keepdims=True), {"data": arr(4, 3)}, {}),
    ("norm", mx.sym.norm(D, axis=1), {"data": arr(2, 5)}, {}),
    ("lrn", mx.sym.LRN(D, nsize=3, alpha=1e-3, beta=0.75, knorm=2.0), {"data": arr(1, 5, 3, 3)}, {}),
    ("embedding", mx.sym.Embedding(D, input_dim=6, output_dim=3, name="emb"),
     {"data": np.array([[0, 5, 2], [1, 1, 3]], "float32")}, {"emb_weight": nd(6, 3)}),
    ("pad_constant", mx.sym.Pad(D, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5),
     {"data": arr(1, 2, 3, 3)}, {}),
    ("pad_edge", mx.sym.Pad(D, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)), {"data": arr(1, 2, 3, 3)}, {}),
    ("pad_reflect", mx.sym.Pad(D, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
     {"data": arr(1, 2, 3, 4)}, {}),
    ("upsampling", mx.sym.UpSampling(D, scale=2, sample_type="nearest"), {"data": arr(1, 2, 3, 3)}, {}),
    ("expand_dims", mx.sym.expand_dims(D, axis=1), {"data": arr(2, 3)}, {}),
    ("squeeze", mx.sym.squeeze(D, axis=1), {"data": arr(2, 1, 3)}, {}),
    ("squeeze_all", mx.sym.squeeze(D), {"data": arr(2, 1, 3, 1)}, {}),
    ("squeeze_to_scalar", mx.sym.squeeze(D), {"data": arr(1, 1)}, {}),
    ("where", mx.sym.where(D, E, E * 2), {"data": np.array([[1, 0], [0, 1]], "float32"), "other": arr(2, 2)},
     {}),
    ("where_rows", mx.sym.where(D, E, E * 2), {"data": np.array([1, 0, 1], "float32"), "other": arr(3, 2)},
     {}),
    ("dot", mx.sym.dot(D, E), {"data": arr(2, 3), "other": arr(3, 4)}, {}),
    ("dot_transpose", mx.sym.dot(D, E, transpose_a=True, transpose_b=True),
     {"data": arr(3, 2), "other": arr(4, 3)}, {}),
    ("dot_nd", mx.sym.dot(D, E), {"data": arr(2, 3), "other": arr(3, 2, 2)}, {}),
    ("batch_dot", mx.sym.batch_dot(D, E, transpose_b=True), {"data": arr(2, 3, 4), "other": arr(2, 5, 4)}, {}),
    ("cast", mx.sym.Cast(D, dtype="int32"), {"data": arr(2, 3, low=-5, high=5)}, {}),
    ("tile", mx.sym.tile(D, reps=(2, 1, 2)), {"data": arr(2, 3)}, {}),
    ("broadcast_to", mx.sym.broadcast_to(D, shape=(2, 3, 4)), {"data": arr(1, 3, 1)}, {}),
    ("broadcast_like", mx.sym.broadcast_like(D, E), {"data": arr(1, 3), "other": arr(4, 3)}, {}),
    ("stack", mx.sym.stack(D, E, axis=1), {"data": arr(2, 3), "other": arr(2, 3)}, {}),
    ("split", mx.sym.split(D, num_outputs=3, axis=1), {"data": arr(2, 6)}, {}),
    ("split_squeeze", mx.sym.split(D, num_outputs=2, axis=0, squeeze_axis=True), {"data": arr(2, 3)}, {}),
    ("zeros_like", mx.sym.zeros_like(D), {"data": arr(2, 3)}, {}),
    ("ones_like", mx.sym.ones_like(D), {"data": arr(2, 3)}, {}),
    ("reshape_like", mx.sym.reshape_like(D, E), {"data": arr(2, 6), "other": arr(3, 4)}, {}),
    ("slice_like", mx.sym.slice_like(D, E, axes=(1,)), {"data": arr(3, 6), "other": arr(2, 4)}, {}),
    ("shape_array", mx.sym.shape_array(D), {"data": arr(2, 3)}, {}),
]

NP_CASES = [
    ("np_reshape", lambda d, e: mx.sym.np.reshape(d, (3, -1)), (2, 3, 2), None),
    ("npx_reshape", lambda d, e: mx.sym.npx.reshape(d, (-2, -1)), (2, 3, 2), None),
    ("npx_reshape_codes", lambda d, e: mx.sym.npx.reshape(d, (-5, -3, -6, 2, -1)), (2, 3, 1, 4), None),
    ("np_sum", lambda d, e: mx.sym.np.sum(d, axis=1), (2, 3, 4), None),
    ("np_mean", lambda d, e: mx.sym.np.mean(d, axis=(0, 1)), (2, 3, 4), None),
    ("np_max", lambda d, e: mx.sym.np.max(d, axis=1, keepdims=True), (2, 3), None),
    ("np_squeeze", lambda d, e: mx.sym.np.squeeze(d), (2, 1, 3), None),
    ("np_expand_dims", lambda d, e: mx.sym.np.expand_dims(d, -1), (2, 3), None),
    ("np_transpose", lambda d, e: mx.sym.np.transpose(d), (2, 3, 4), None),
    ("np_concatenate", lambda d, e: mx.sym.np.concatenate([d, e], axis=1), (2, 3), (2, 3)),
    ("np_stack", lambda d, e: mx.sym.np.stack([d, e]), (2, 3), (2, 3)),
    ("npx_relu", lambda d, e: mx.sym.npx.relu(d), (2, 3), None),
    ("npx_sigmoid", lambda d, e: mx.sym.npx.sigmoid(d), (2, 3), None),
    ("npx_softmax", lambda d, e: mx.sym.npx.softmax(d), (2, 3), None),
    ("npx_log_softmax", lambda d, e: mx.sym.npx.log_softmax(d, axis=0), (2, 3), None),
    ("np_where", lambda d, e: mx.sym.np.where(d > 0, d, e), (2, 3), (2, 3)),
    ("np_clip", lambda d, e: mx.sym.np.clip(d, -0.2, 0.3), (2, 3), None),
    ("np_exp", lambda d, e: mx.sym.np.exp(d), (2, 3), None),
    ("np_abs", lambda d, e: mx.sym.np.abs(d), (2, 3), None),
    ("np_maximum", lambda d, e: mx.sym.np.maximum(d, e), (2, 3), (2, 3)),
    ("np_maximum_scalar", lambda d, e: mx.sym.np.maximum(d, 0), (2, 3), None),
    ("np_argmax", lambda d, e: mx.sym.np.argmax(d, axis=1), (2, 3), None),
    ("np_matmul", lambda d, e: mx.sym.np.matmul(d, e), (2, 3), (3, 2)),
    ("np_dot", lambda d, e: mx.sym.np.dot(d, e), (2, 3), (3, 2)),
    ("np_tile", lambda d, e: mx.sym.np.tile(d, (2, 1)), (2, 3), None),
    ("np_broadcast_to", lambda d, e: mx.sym.np.broadcast_to(d, (2, 3)), (1, 3), None),
    ("np_square", lambda d, e: mx.sym.np.square(d), (2, 3), None),
    ("np_round", lambda d, e: mx.sym.np.round(d * 3), (2, 3), None),
    ("np_zeros_like", lambda d, e: mx.sym.np.zeros_like(d), (2, 3), None),
    ("np_ones_like", lambda d, e: mx.sym.np.ones_like(d), (2, 3), None),
    ("np_swapaxes", lambda d, e: mx.sym.np.swapaxes(d, 0, 1), (2, 3), None),
    ("np_log", lambda d, e: mx.sym.np.log(d * d + 1), (2, 3), None),
    ("npx_erf", lambda d, e: mx.sym.npx.erf(d), (2, 3), None),
    ("np_tanh", lambda d, e: mx.sym.np.tanh(d), (2, 3), None),
    ("np_sqrt", lambda d, e: mx.sym.np.sqrt(d * d), (2, 3), None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_mxjax(tmp_path, case):
    _, sym, feeds, params = case
    labels = None
    if "softmax_label" in sym.list_inputs():  # the loss label: fed to mxjax, not an ONNX input
        shapes = dict(zip(sym.list_arguments(), sym.infer_shape(**{k: v.shape for k, v in feeds.items()})[0]))
        labels = {"softmax_label": mx.nd.zeros(shapes["softmax_label"])}
    model = roundtrip(tmp_path, sym, feeds, params, labels=labels)
    assert "softmax_label" not in [i.name for i in model.graph.input]


@pytest.mark.parametrize("case", NP_CASES, ids=[c[0] for c in NP_CASES])
def test_np_op_matches_mxjax(tmp_path, case):
    _, build, shape_d, shape_e = case
    d, e = mx.sym.var("data").as_np_ndarray(), mx.sym.var("other").as_np_ndarray()
    sym = build(d, e).as_nd_ndarray()
    feeds = {"data": arr(*shape_d)}
    if shape_e is not None:
        feeds["other"] = arr(*shape_e)
    roundtrip(tmp_path, sym, feeds)


def test_converters_cover_the_case_ops(tmp_path):
    """Every converter function is exercised by some case above (aliases share one)."""
    import json

    from mxjax.onnx.mx2onnx._registry import CONVERTERS
    used = set()
    for _, sym, _, _ in CASES:
        used.update(n["op"] for n in json.loads(sym.tojson())["nodes"])
    for _, build, _, _ in NP_CASES:
        d, e = mx.sym.var("data").as_np_ndarray(), mx.sym.var("other").as_np_ndarray()
        used.update(n["op"] for n in json.loads(build(d, e).tojson())["nodes"])
    covered = {CONVERTERS[op] for op in used if op in CONVERTERS}
    missing = sorted({fn.__name__ for fn in CONVERTERS.values()} - {fn.__name__ for fn in covered})
    assert not missing


# -- the exporter's interface ------------------------------------------------------------------
def _mlp():
    x = mx.sym.FullyConnected(D, num_hidden=4, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.FullyConnected(x, num_hidden=3, name="fc2")
    return mx.sym.softmax(x, name="out")


def _mlp_params():
    return {"fc1_weight": nd(4, 5), "fc1_bias": nd(4), "fc2_weight": nd(3, 4), "fc2_bias": nd(3)}


def test_model_structure_names_and_opset(tmp_path):
    model = roundtrip(tmp_path, _mlp(), {"data": arr(2, 5)}, _mlp_params())
    assert [i.name for i in model.graph.input] == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert sorted(i.name for i in model.graph.initializer) == sorted(_mlp_params())
    assert [o.name for o in model.graph.output] == ["out"]
    assert [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == [2, 3]
    assert {o.domain: o.version for o in model.opset_import} == {"": 13}
    assert op_types(model) == ["Gemm", "Relu", "Gemm", "Softmax"]


def test_files_and_arg_aux_list(tmp_path):
    sym = mx.sym.BatchNorm(mx.sym.Convolution(D, kernel=(1, 1), num_filter=3, name="c"), name="bn")
    params = {"c_weight": nd(3, 2, 1, 1), "c_bias": nd(3), **_bn_params("bn", 3)}
    aux = {k: v for k, v in params.items() if "moving" in k}
    args = {k: v for k, v in params.items() if k not in aux}
    mx.nd.save(str(tmp_path / "net-0000.params"), {**{f"arg:{k}": v for k, v in args.items()},
                                                    **{f"aux:{k}": v for k, v in aux.items()}})
    sym.save(str(tmp_path / "net-symbol.json"))
    x = arr(1, 2, 3, 3)
    want = mx_forward(sym, {"data": x}, params)[0]
    from_files = mxonnx.export_model(str(tmp_path / "net-symbol.json"), str(tmp_path / "net-0000.params"),
                                     [(1, 2, 3, 3)], onnx_file_path=str(tmp_path / "a.onnx"))
    from_list = mxonnx.export_model(sym, [args, aux], input_shape=[(1, 2, 3, 3)], input_type=np.float32,
                                    onnx_file_path=tmp_path / "b.onnx")
    assert from_list == str(tmp_path / "b.onnx")
    for path in (from_files, from_list):
        np.testing.assert_allclose(run_onnx(onnx.load(path), {"data": x})[0], want, rtol=1e-5, atol=1e-5)


DYNAMIC_CASES = [
    # (id, symbol, feed shape without the batch axis, params)
    ("reshape_merge_batch", mx.sym.Reshape(mx.sym.Reshape(
        mx.sym.FullyConnected(mx.sym.Flatten(D), num_hidden=4, name="fc1"), shape=(0, 2, -1)), shape=(-3, -2)),
     (2, 3), {"fc1_weight": nd(4, 6), "fc1_bias": nd(4)}),
    ("npx_reshape", mx.sym.npx.reshape(D.as_np_ndarray(), (-2, -1)).as_nd_ndarray(), (2, 3), {}),
    ("dot_nd", mx.sym.dot(D, mx.sym.var("w")), (3,), {"w": nd(3, 2, 2)}),
    ("broadcast_to", mx.sym.broadcast_to(D, shape=(0, 4, 3)), (1, 3), {}),
    ("softmax_instance", mx.sym.SoftmaxActivation(D), (2, 3), {}),
    ("conv_pool_fc", mx.sym.FullyConnected(mx.sym.Pooling(mx.sym.Convolution(
        D, kernel=(3, 3), num_filter=2, name="c"), kernel=(2, 2), stride=(2, 2)), num_hidden=3, name="f"),
     (1, 6, 6), {"c_weight": nd(2, 1, 3, 3), "c_bias": nd(2), "f_weight": nd(3, 8), "f_bias": nd(3)}),
]


@pytest.mark.parametrize("case", DYNAMIC_CASES, ids=[c[0] for c in DYNAMIC_CASES])
def test_dynamic_batch(tmp_path, case):
    _, sym, shape, params = case
    path = mxonnx.export_model(sym, params, [(2,) + shape], dynamic=True, onnx_file_path=str(tmp_path / "d.onnx"))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.HasField("dim_value") for d in dims] == [False] * (len(shape) + 1)
    for batch in (1, 5):
        x = arr(batch, *shape)
        np.testing.assert_allclose(run_onnx(model, {"data": x})[0], mx_forward(sym, {"data": x}, params)[0],
                                   rtol=1e-5, atol=1e-5)


def test_dynamic_input_shapes(tmp_path):
    path = mxonnx.export_model(_mlp(), _mlp_params(), [(2, 5)], dynamic=True,
                               dynamic_input_shapes=[("batch", 5)], onnx_file_path=str(tmp_path / "d.onnx"))
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert (dims[0].dim_param, dims[1].dim_value) == ("batch", 5)
    with pytest.raises(ValueError, match="dynamic_input_shapes"):
        mxonnx.export_model(_mlp(), _mlp_params(), [(2, 5)], dynamic_input_shapes=[(None, 5)],
                            onnx_file_path=str(tmp_path / "e.onnx"))


def test_large_model_and_shape_inference(tmp_path, caplog):
    sym = mx.sym.FullyConnected(D, num_hidden=300, name="fc1")
    params = {"fc1_weight": nd(300, 5), "fc1_bias": nd(300)}  # over ONNX's 1 KB external-data threshold
    with caplog.at_level("INFO"):
        path = mxonnx.export_model(sym, params, [(2, 5)], onnx_file_path=str(tmp_path / "big.onnx"),
                                   large_model=True, run_shape_inference=True, verbose=True)
    assert "'fc1' (op FullyConnected)" in caplog.text  # verbose logs each node
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.onnx", "fc1_bias", "fc1_weight"]
    stored = onnx.load(path, load_external_data=False)
    assert {i.data_location for i in stored.graph.initializer} == {onnx.TensorProto.EXTERNAL}
    model = onnx.load(path)
    x = arr(2, 5)
    np.testing.assert_allclose(run_onnx(model, {"data": x})[0], mx_forward(sym, {"data": x}, params)[0],
                               rtol=1e-5, atol=1e-5)


def test_bad_inputs(tmp_path):
    out = str(tmp_path / "x.onnx")
    with pytest.raises(ValueError, match="Symbol and a dict"):
        mxonnx.export_model(_mlp(), "weights.params", [(2, 5)], onnx_file_path=out)
    with pytest.raises(ValueError, match="not a file"):
        mxonnx.export_model(str(tmp_path / "no-symbol.json"), str(tmp_path / "no.params"), [(2, 5)],
                            onnx_file_path=out)
    with pytest.raises(ValueError, match="1 data input"):
        mxonnx.export_model(_mlp(), _mlp_params(), [(2, 5), (2, 5)], onnx_file_path=out)
    with pytest.raises(ValueError, match="in_shapes"):
        mxonnx.export_model(_mlp(), _mlp_params(), onnx_file_path=out)


def test_unsupported_op_names_op_and_node(tmp_path):
    sym = mx.sym.sort(D, name="my_sort")
    with pytest.raises(MXNetError, match=r"op 'sort'.*node 'my_sort'"):
        mxonnx.export_model(sym, {}, [(2, 3)], onnx_file_path=str(tmp_path / "s.onnx"))
    with pytest.raises(MXNetError, match="'my_pool'.*pooling_convention='full' with padding"):
        mxonnx.export_model(mx.sym.Pooling(D, kernel=(2, 2), pad=(1, 1), pool_type="avg",
                                           pooling_convention="full", name="my_pool"),
                            {}, [(1, 1, 4, 4)], onnx_file_path=str(tmp_path / "p.onnx"))
    with pytest.raises(MXNetError, match="my_up.*bilinear|my_up.*nearest"):
        mxonnx.export_model(mx.sym.UpSampling(D, scale=2, sample_type="bilinear", num_filter=2, name="my_up"),
                            {"my_up_weight": nd(2, 1, 4, 4)}, [(1, 2, 3, 3)],
                            onnx_file_path=str(tmp_path / "u.onnx"))


def test_get_operator_support():
    from mxjax.onnx.mx2onnx._registry import CONVERTERS
    ops = mxonnx.get_operator_support()
    assert ops == sorted(CONVERTERS)
    assert {"Convolution", "BatchNorm", "FullyConnected", "Pooling", "_npi_add", "Reshape"} <= set(ops)
    assert mxonnx.get_operator_support(13) == ops
    assert mxonnx.get_operator_support(12) == []  # every converter here writes opset 13


def test_subpackage_names_and_registered_ops_exist():
    from mxjax.onnx import mx2onnx
    from mxjax.onnx.mx2onnx._registry import CONVERTERS
    from mxjax.operator.naming import op_for_json_name
    assert mx2onnx.export_model is mxonnx.export_model
    assert mx2onnx.get_operator_support is mxonnx.get_operator_support
    for name in CONVERTERS:  # each key is an op name a symbol JSON can hold
        op_for_json_name(name)


def test_import_without_onnx_and_clear_error():
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import mxjax.onnx as o\n"
            "try:\n    o.get_operator_support()\nexcept ImportError as e:\n    print('ERR', e)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ERR" in result.stdout and "mxjax[onnx]" in result.stdout


# -- against real MXNet 2.0 ------------------------------------------------------------------------
def test_matches_mxnet_and_its_exporter(tmp_path):
    io = np.load(FIXTURES / "small_cnn_io.npz")
    path = mxonnx.export_model(str(FIXTURES / "small_cnn-symbol.json"), str(FIXTURES / "small_cnn-0000.params"),
                               [io["x"].shape], onnx_file_path=str(tmp_path / "cnn.onnx"))
    ours = onnx.load(path)
    theirs = onnx.load(str(FIXTURES / "small_cnn_mxnet.onnx"))
    np.testing.assert_allclose(run_onnx(ours, {"data": io["x"]})[0], io["y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run_onnx(theirs, {"data": io["x"]})[0], io["y"], rtol=1e-5, atol=1e-6)
    compute = {"Conv", "BatchNormalization", "Relu", "MaxPool", "Gemm", "Softmax"}
    assert [t for t in op_types(ours) if t in compute] == [t for t in op_types(theirs) if t in compute]
    assert set(op_types(ours)) <= set(op_types(theirs))
    assert [i.name for i in ours.graph.input] == [i.name for i in theirs.graph.input]
    assert [o.name for o in ours.graph.output] == [o.name for o in theirs.graph.output]
    assert {i.name for i in ours.graph.initializer} <= {i.name for i in theirs.graph.initializer}


def test_mxnet2_numpy_block(tmp_path):
    """A NumPy-mode Gluon block exported by MXNet 2.0: its _npi_/_npx_ op names convert
    and the ONNX model reproduces MXNet's two outputs."""
    io = np.load(FIXTURES / "np_block_io.npz")
    path = mxonnx.export_model(str(FIXTURES / "np_block-symbol.json"), str(FIXTURES / "np_block-0000.params"),
                               [io["x"].shape, io["idx"].shape], onnx_file_path=str(tmp_path / "np.onnx"))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    weights = {i.name for i in model.graph.initializer}
    assert [i.name for i in model.graph.input if i.name not in weights] == ["data0", "data1"]
    assert len(model.graph.output) == 2
    out, aux = run_onnx(model, {"data0": io["x"], "data1": io["idx"]})
    np.testing.assert_allclose(out, io["out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(aux, io["aux"], rtol=1e-5, atol=1e-6)


# -- model zoo -------------------------------------------------------------------------------------------
def _randomize_norm_stats(net):
    """Freshly initialized BatchNorm layers are identities; give them real statistics."""
    for name, param in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            param.set_data(mx.np.array(RNG.uniform(0.5, 1.5, param.shape).astype("float32")))
        elif name.endswith(("running_mean", "beta")):
            param.set_data(mx.np.array(RNG.uniform(-0.2, 0.2, param.shape).astype("float32")))


@pytest.mark.parametrize("name,size", [("resnet18_v1", 32), ("mobilenet0.25", 32)])
def test_model_zoo(tmp_path, name, size):
    from mxjax.gluon.model_zoo import vision
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    x = arr(1, 3, size, size)
    net(mx.np.array(x))  # settles the deferred parameter shapes (eagerly: quicker than compiling twice)
    _randomize_norm_stats(net)
    net.hybridize()
    want = net(mx.np.array(x)).asnumpy()
    net.export(str(tmp_path / name))
    path = mxonnx.export_model(str(tmp_path / f"{name}-symbol.json"), str(tmp_path / f"{name}-0000.params"),
                               [x.shape], onnx_file_path=str(tmp_path / f"{name}.onnx"))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    got = run_onnx(model, {"data": x})[0]
    assert np.abs(want).max() > 1e-3
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
