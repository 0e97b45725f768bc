"""The contrib ops (contrib_math, contrib_attention, contrib_box) against values, gradients and errors
written by MXNet 2.0 (tests/fixtures/contrib, from tools/make_contrib_fixtures.py), and their
gradients against central finite differences."""
import json
import pathlib

import numpy as onp
import pytest
from oracle import run_op

import mxjax as mx
from mxjax import autograd
from mxjax.base import MXNetError

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "contrib"
CASES = sorted(p.stem for p in FIXTURES.glob("*.npz"))
RNG = onp.random.default_rng(7)


def _load(name):
    data = onp.load(FIXTURES / f"{name}.npz")
    params = json.loads(str(data["params"]))
    op = params.pop("op")
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    inputs = [data[f"in_{i}"] for i in range(sum(k.startswith("in_") for k in data.files))]
    outs = [data[f"out_{i}"] for i in range(sum(k.startswith("out_") for k in data.files))]
    grads = [data[f"grad_{i}"] for i in range(len(inputs))] if "head" in data.files else None
    return op, params, inputs, outs, data["head"] if grads else None, grads


def test_fixtures_present():
    assert len(CASES) >= 20
    assert sum(p.stat().st_size for p in FIXTURES.glob("*.npz")) < 300_000


@pytest.mark.parametrize("name", CASES)
def test_values_match_mxnet(name):
    op, params, inputs, outs, _, _ = _load(name)
    got = run_op(f"_contrib_{op}", inputs, **params)
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(outs)
    for g, want in zip(got, outs):
        g = g.asnumpy()
        assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
        onp.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", [c for c in CASES if _load(c)[4] is not None])
def test_gradients_match_mxnet(name):
    op, params, inputs, _, head, grads = _load(name)
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = getattr(mx.nd.contrib, op)(*arrays, **params)
        out = out[0] if isinstance(out, (list, tuple)) else out
        loss = (out * mx.nd.array(head)).sum()
    loss.backward()
    for a, want in zip(arrays, grads):
        onp.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-4, atol=1e-5)


def _numeric_grad(op, inputs, params, head, which, eps=1e-6):
    def loss(xs):
        return float((run_op(op, xs, **params).asnumpy() * head).sum())
    x = inputs[which]
    grad = onp.zeros_like(x)
    for idx in onp.ndindex(x.shape):
        plus, minus = [a.copy() for a in inputs], [a.copy() for a in inputs]
        plus[which][idx] += eps
        minus[which][idx] -= eps
        grad[idx] = (loss(plus) - loss(minus)) / (2 * eps)
    return grad


FD_CASES = [
    ("_contrib_quadratic", [(2, 3)], {"a": 1.5, "b": -0.5, "c": 2.0}),
    ("_contrib_div_sqrt_dim", [(2, 4)], {}),
    ("_contrib_AdaptiveAvgPooling2D", [(1, 2, 5, 4)], {"output_size": (2, 3)}),
    ("_contrib_interleaved_matmul_selfatt_qk", [(3, 2, 12)], {"heads": 2}),
    ("_contrib_interleaved_matmul_encdec_valatt", [(4, 1, 8), (2, 3, 4)], {"heads": 2}),
    ("_contrib_index_copy", [(4, 3), (2,), (2, 3)], {}),
    ("_contrib_fft", [(2, 5)], {}),
    ("_contrib_sldwin_atten_context", [(1, 5, 2, 3), (1, 5, 2, 2), (2,)], {"w": 1, "symmetric": True}),
    ("_contrib_count_sketch", [(2, 4), (1, 4), (1, 4)], {"out_dim": 3}),
    ("_contrib_box_nms", [(1, 5, 6)], {"overlap_thresh": 0.3, "valid_thresh": 0.9}),
    ("_contrib_ROIAlign", [(1, 2, 5, 6), (2, 5)], {"pooled_size": (2, 2), "spatial_scale": 0.5, "sample_ratio": 2}),
]


@pytest.mark.parametrize("op,shapes,params", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_gradients_match_finite_differences(op, shapes, params):
    inputs = [RNG.uniform(0.5, 1.5, s) for s in shapes]
    if op == "_contrib_index_copy":
        inputs[1] = onp.array([3.0, 1.0])
    if op == "_contrib_sldwin_atten_context":
        inputs[2] = onp.array([1, 2], "int32")
    if op == "_contrib_count_sketch":
        inputs[1:] = [onp.array([[2.0, 0.0, 2.0, 1.0]]), onp.array([[1.0, -1.0, -1.0, 1.0]])]
    if op == "_contrib_ROIAlign":
        inputs[1] = onp.array([[0, 1.0, 2.0, 9.0, 7.0], [0, 3.0, 0.5, 6.0, 8.5]])
    which = [0] if op in ("_contrib_ROIAlign", "_contrib_box_nms", "_contrib_count_sketch") else \
        [0, 1] if op == "_contrib_sldwin_atten_context" else [i for i in range(len(shapes)) if i != 1] \
        if op == "_contrib_index_copy" else range(len(shapes))
    out = run_op(op, inputs, **params).asnumpy()
    head = RNG.standard_normal(out.shape)
    arrays = [mx.nd.array(a, dtype=a.dtype if a.dtype.kind in "iu" else "float64") for a in inputs]
    for i in which:
        arrays[i].attach_grad()
    with autograd.record():
        loss = (run_op(op, arrays, **params) * mx.nd.array(head, dtype="float64")).sum()
    loss.backward()
    for i in which:
        onp.testing.assert_allclose(arrays[i].grad.asnumpy(), _numeric_grad(op, inputs, params, head, i),
                                    rtol=1e-5, atol=1e-6)


def test_gradientmultiplier_scales_only_the_gradient():
    x = mx.nd.array([[1.0, -2.0]])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.contrib.gradientmultiplier(x, scalar=3.0)
        (y * y).sum().backward()
    onp.testing.assert_array_equal(y.asnumpy(), [[1.0, -2.0]])
    onp.testing.assert_allclose(x.grad.asnumpy(), [[6.0, -12.0]])


@pytest.mark.parametrize("call,message", [
    (lambda: run_op("_contrib_index_copy", [onp.zeros((4, 2)), onp.array([0, 1]), onp.zeros((3, 2))]),
     r"index_copy: new_tensor has shape \(3, 2\) but \(2, 2\) is expected"),
    (lambda: run_op("_contrib_index_copy", [onp.zeros((4, 2)), onp.zeros((2, 1)), onp.zeros((2, 2))]),
     r"index_copy: index_vector must be 1-D"),
    (lambda: run_op("_contrib_allclose", [onp.zeros((2,)), onp.zeros((3,))]),
     r"allclose: a has shape \(2,\) and b has shape \(3,\)"),
    (lambda: run_op("_contrib_AdaptiveAvgPooling2D", [onp.zeros((2, 3, 4))]),
     r"AdaptiveAvgPooling2D: data must be 4-D"),
    (lambda: run_op("_contrib_interleaved_matmul_selfatt_qk", [onp.zeros((2, 1, 10))], heads=2),
     r"interleaved_matmul_selfatt_qk: queries_keys_values has 10 features"),
    (lambda: run_op("_contrib_interleaved_matmul_selfatt_valatt", [onp.zeros((2, 1, 12)), onp.zeros((2, 2, 3))],
                    heads=2), r"interleaved_matmul_selfatt_valatt: attention has shape \(2, 2, 3\)"),
    (lambda: run_op("_contrib_interleaved_matmul_encdec_qk", [onp.zeros((2, 1, 4)), onp.zeros((3, 1, 4))],
                    heads=2), r"interleaved_matmul_encdec_qk: queries \(2, 1, 4\) and keys_values"),
    (lambda: run_op("_contrib_box_iou", [onp.zeros((2, 3)), onp.zeros((2, 4))]), r"box_iou: lhs has shape"),
    (lambda: run_op("_contrib_box_iou", [onp.zeros((2, 4)), onp.zeros((2, 4))], format="xywh"),
     r"box_iou: format='xywh' is not supported"),
    (lambda: run_op("_contrib_box_decode", [onp.zeros((1, 3, 4)), onp.zeros((1, 2, 4))]),
     r"box_decode: anchors has shape \(1, 2, 4\) but \(1, 3, 4\) is expected"),
    (lambda: run_op("_contrib_box_encode", [onp.zeros((1, 2)), onp.zeros((1, 2)), onp.zeros((1, 3, 4)),
                                            onp.zeros((1, 2, 4)), onp.zeros(4), onp.ones(4)]),
     r"box_encode: anchors has shape \(1, 3, 4\) but \(1, 2, 4\) is expected"),
    (lambda: run_op("_contrib_bipartite_matching", [onp.zeros((3, 2))]), r"bipartite_matching: threshold"),
    (lambda: run_op("_contrib_bipartite_matching", [onp.zeros(3)], threshold=0.1),
     r"bipartite_matching: data must be at least 2-D"),
    (lambda: run_op("_contrib_MultiBoxPrior", [onp.zeros((1, 2, 3))]), r"MultiBoxPrior: data must be 4-D"),
    (lambda: run_op("_contrib_ROIAlign", [onp.zeros((1, 2, 4, 4)), onp.zeros((2, 4))], pooled_size=(2, 2),
                    spatial_scale=1.0), r"ROIAlign: rois has shape \(2, 4\) but \(num_rois, 5\)"),
    (lambda: run_op("_contrib_ROIAlign", [onp.zeros((1, 2, 4, 4)), onp.zeros((2, 5))], spatial_scale=1.0),
     r"ROIAlign: pooled_size and spatial_scale are required"),
    (lambda: run_op("_contrib_ROIAlign", [onp.zeros((1, 3, 4, 4)), onp.zeros((2, 5))], pooled_size=(2, 2),
                    spatial_scale=1.0, position_sensitive=True), r"ROIAlign: position_sensitive needs"),
    (lambda: run_op("_contrib_box_nms", [onp.zeros((4, 6))], coord_start=3), r"box_nms: coord_start=3"),
    (lambda: run_op("_contrib_box_nms", [onp.zeros((4, 6))], in_format="xyxy"), r"box_nms: in_format='xyxy'"),
    (lambda: run_op("_contrib_box_nms", [onp.zeros(6)]), r"box_nms: data must be at least 2-D"),
    (lambda: run_op("_contrib_MultiBoxDetection", [onp.zeros((1, 3, 4)), onp.zeros((1, 12)), onp.zeros((1, 4, 4))]),
     r"MultiBoxDetection: loc_pred has shape \(1, 12\) but \(1, 16\) is expected"),
    (lambda: run_op("_contrib_MultiBoxDetection", [onp.zeros((1, 3, 4)), onp.zeros((1, 16)), onp.zeros((1, 3, 4))]),
     r"MultiBoxDetection: anchor has shape \(1, 3, 4\) but \(1, 4, 4\) is expected"),
    (lambda: run_op("_contrib_MultiBoxTarget", [onp.zeros((1, 4, 4)), onp.zeros((2, 3, 5)), onp.zeros((2, 3, 5))]),
     r"MultiBoxTarget: cls_pred has shape \(2, 3, 5\) but \(2, num_classes, 4\) is expected"),
    (lambda: run_op("_contrib_MultiBoxTarget", [onp.zeros((1, 4, 4)), onp.zeros((2, 3, 4)), onp.zeros((2, 3, 4))]),
     r"MultiBoxTarget: label has shape \(2, 3, 4\)"),
    (lambda: run_op("_contrib_MultiBoxTarget", [onp.zeros((2, 4, 4)), onp.zeros((2, 3, 5)), onp.zeros((2, 3, 4))]),
     r"MultiBoxTarget: anchor has shape \(2, 4, 4\)"),
    (lambda: run_op("_contrib_MultiBoxDetection", [onp.zeros((3, 4)), onp.zeros((1, 16)), onp.zeros((1, 4, 4))]),
     r"MultiBoxDetection: cls_prob must be 3-D"),
    (lambda: run_op("_contrib_sldwin_atten_score", [onp.zeros((1, 4, 2, 3)), onp.zeros((1, 4, 2, 3)),
                                                    onp.array([1.0, 1.0])], w=1, symmetric=True),
     r"sldwin_atten_score: dilation must be an integer array"),
    (lambda: run_op("_contrib_sldwin_atten_score", [onp.zeros((1, 4, 2, 3)), onp.zeros((1, 4, 2, 3)),
                                                    onp.array([1, 1, 1], "int32")], w=1, symmetric=True),
     r"sldwin_atten_score: dilation has shape \(3,\) but \(2,\) is expected"),
    (lambda: run_op("_contrib_sldwin_atten_score", [onp.zeros((1, 4, 2, 3)), onp.zeros((1, 4, 2, 3)),
                                                    onp.array([1, 1], "int32")], symmetric=True),
     r"sldwin_atten_score: w \(a non-negative int\) and symmetric are required"),
    (lambda: run_op("_contrib_sldwin_atten_context", [onp.zeros((1, 4, 2, 4)), onp.zeros((1, 4, 2, 3)),
                                                      onp.array([1, 1], "int32")], w=1, symmetric=True),
     r"sldwin_atten_context: score has 4 window slots but w=1, symmetric=True gives 3"),
    (lambda: run_op("_contrib_sldwin_atten_mask_like", [onp.zeros((2, 4, 2, 3)), onp.array([1, 1], "int32"),
                                                        onp.array([3], "int32")], w=1, symmetric=True),
     r"sldwin_atten_mask_like: valid_length has shape \(1,\) but \(2,\) is expected"),
    (lambda: run_op("_contrib_MultiBoxPrior", [onp.zeros((1, 1, 2, 2))], sizes=(0.5, -1.0)),
     r"MultiBoxPrior: sizes"),
])
def test_bad_input_raises_naming_the_op(call, message):
    with pytest.raises(MXNetError, match=message):
        call()


def test_adaptive_pool_default_is_global_average():
    x = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    got = run_op("_contrib_AdaptiveAvgPooling2D", [x]).asnumpy()
    onp.testing.assert_allclose(got, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec,want", [([4, 0, 2], (4, 3, 2)), ([-3, 4], (6, 4)), ([2, -4, -1, 3, -2], (2, 1, 3, 4)),
                                       ([-1], (24,)), ([6.0, -1.0], (6, 4))])
def test_dynamic_reshape(spec, want):
    """Shapes as MXNet 2.0 gives them for a (2, 3, 4) input; the gradient reshapes back."""
    x = mx.nd.array(onp.arange(24.0).reshape(2, 3, 4))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.contrib.dynamic_reshape(x, mx.nd.array(spec))
        (y * y).sum().backward()
    assert y.shape == want
    onp.testing.assert_array_equal(y.asnumpy(), onp.arange(24.0).reshape(want))
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * onp.arange(24.0).reshape(2, 3, 4))


def test_dynamic_reshape_errors():
    x = mx.nd.ones((2, 3, 4))
    with pytest.raises(MXNetError, match=r"dynamic_reshape: .*\(5, 5\)"):
        mx.nd.contrib.dynamic_reshape(x, mx.nd.array([5, 5]))
    with pytest.raises(MXNetError, match=r"dynamic_reshape: shape must be a 1-D array"):
        mx.nd.contrib.dynamic_reshape(x, mx.nd.array([[6, 4]]))


@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 2, 5)])
def test_fft_against_numpy(shape):
    """MXNet's layout: real and imaginary parts interleaved on the last axis (MXNet has fft on GPU only)."""
    x = RNG.standard_normal(shape).astype("float32")
    spectrum = onp.fft.fft(x.astype("float64"), axis=-1)
    want = onp.stack([spectrum.real, spectrum.imag], -1).reshape(*shape[:-1], 2 * shape[-1])
    got = mx.nd.contrib.fft(mx.nd.array(x))
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(MXNetError, match=r"fft: data must be 2-D"):
        mx.nd.contrib.fft(mx.nd.ones((2, 2, 2)))


def test_count_sketch_against_docs_example():
    """MXNet's documented example (its op runs on GPU only)."""
    x = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    got = mx.nd.contrib.count_sketch(x, mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]]), out_dim=5)
    onp.testing.assert_allclose(got.asnumpy(), [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]], rtol=1e-6)
    with pytest.raises(MXNetError, match=r"count_sketch: h has shape \(1, 2\) but \(1, 3\) is expected"):
        mx.nd.contrib.count_sketch(x, mx.nd.array([[0, 3]]), mx.nd.array([[1, -1, 1]]), out_dim=5)
    with pytest.raises(MXNetError, match=r"count_sketch: out_dim must be a positive integer"):
        mx.nd.contrib.count_sketch(x, mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]]))
