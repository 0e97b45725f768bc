"""The ``mx.nd.contrib`` front-end (and the npx bindings of the same ops): MXNet's names, 1.x argument
names, output classes and dtypes, and the ops inside a hybridized block."""
import numpy as onp
import pytest
from oracle import check_hybrid

import mxjax as mx
import mxjax.numpy_extension as npx
from mxjax.gluon import HybridBlock

RNG = onp.random.default_rng(11)

# name -> keyword arguments MXNet 2.0's mx.nd.contrib function accepts (from its signature)
ND_NAMES = {
    "quadratic": ("data", "a", "b", "c"), "gradientmultiplier": ("data", "scalar", "is_int"),
    "div_sqrt_dim": ("data",), "round_ste": ("data",), "sign_ste": ("data",),
    "allclose": ("a", "b", "rtol", "atol", "equal_nan"),
    "index_copy": ("old_tensor", "index_vector", "new_tensor"), "AdaptiveAvgPooling2D": ("data", "output_size"),
    "interleaved_matmul_selfatt_qk": ("queries_keys_values", "heads"),
    "interleaved_matmul_selfatt_valatt": ("queries_keys_values", "attention", "heads"),
    "interleaved_matmul_encdec_qk": ("queries", "keys_values", "heads"),
    "interleaved_matmul_encdec_valatt": ("keys_values", "attention", "heads"),
    "box_iou": ("lhs", "rhs", "format"), "box_encode": ("samples", "matches", "anchors", "refs", "means", "stds"),
    "box_decode": ("data", "anchors", "std0", "std1", "std2", "std3", "clip", "format"),
    "bipartite_matching": ("data", "is_ascend", "threshold", "topk"),
    "MultiBoxPrior": ("data", "sizes", "ratios", "clip", "steps", "offsets"),
    "box_nms": ("data", "overlap_thresh", "valid_thresh", "topk", "coord_start", "score_index", "id_index",
                "background_id", "force_suppress", "in_format", "out_format"),
    "box_non_maximum_suppression": ("data", "overlap_thresh"),
    "ROIAlign": ("data", "rois", "pooled_size", "spatial_scale", "sample_ratio", "position_sensitive", "aligned"),
    "dynamic_reshape": ("data", "shape"), "isfinite": ("data",), "isinf": ("data",), "isnan": ("data",),
    "fft": ("data", "compute_size"), "count_sketch": ("data", "h", "s", "out_dim", "processing_batch_size"),
    "sldwin_atten_score": ("query", "key", "dilation", "w", "symmetric"),
    "sldwin_atten_mask_like": ("score", "dilation", "valid_length", "w", "symmetric"),
    "sldwin_atten_context": ("score", "value", "dilation", "w", "symmetric"),
    "MultiBoxDetection": ("cls_prob", "loc_pred", "anchor", "clip", "threshold", "background_id", "nms_threshold",
                          "force_suppress", "variances", "nms_topk"),
    "MultiBoxTarget": ("anchor", "label", "cls_pred", "overlap_threshold", "ignore_label", "negative_mining_ratio",
                       "negative_mining_thresh", "minimum_negative_samples", "variances"),
}
NPX_NAMES = ["sync_batch_norm", "box_nms", "box_iou", "box_encode", "box_decode", "bipartite_matching", "multibox_prior",
             "multibox_detection", "multibox_target",
             "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk",
             "interleaved_matmul_encdec_valatt", "round_ste", "sign_ste", "sldwin_atten_score",
             "sldwin_atten_mask_like", "sldwin_atten_context"]


def _nd(*shape, low=-1.0, high=1.0):
    return mx.nd.array(RNG.uniform(low, high, shape).astype("float32"))


@pytest.mark.parametrize("name", sorted(ND_NAMES))
def test_nd_contrib_names(name):
    fn = getattr(mx.nd.contrib, name)
    assert fn.__name__ == name and fn.__module__ == "mxjax.ndarray.contrib"
    assert name in mx.nd.contrib.__all__


@pytest.mark.parametrize("name", NPX_NAMES)
def test_npx_names(name):
    assert getattr(npx, name).__module__ == "mxjax.numpy_extension" and name in npx.__all__


def test_keyword_arguments_and_dtypes():
    """Every op called with MXNet's argument names only; NDArray out, the dtypes MXNet 1.x gives."""
    c = mx.nd.contrib
    x, qkv = _nd(2, 3), _nd(3, 2, 12)
    att = _nd(4, 3, 3)
    dil = mx.nd.array([1, 2], dtype="int32")
    boxes = mx.nd.array([[[0.1, 0.1, 0.5, 0.6], [0.2, 0.3, 0.9, 0.8]]])
    calls = {
        "quadratic": c.quadratic(data=x, a=1.0, b=2.0, c=3.0),
        "gradientmultiplier": c.gradientmultiplier(data=x, scalar=2.0, is_int=False),
        "div_sqrt_dim": c.div_sqrt_dim(data=x), "round_ste": c.round_ste(data=x), "sign_ste": c.sign_ste(data=x),
        "allclose": c.allclose(a=x, b=x, rtol=1e-5, atol=1e-8, equal_nan=True),
        "index_copy": c.index_copy(old_tensor=x, index_vector=mx.nd.array([1]), new_tensor=_nd(1, 3)),
        "AdaptiveAvgPooling2D": c.AdaptiveAvgPooling2D(data=_nd(1, 1, 4, 4), output_size=2),
        "interleaved_matmul_selfatt_qk": c.interleaved_matmul_selfatt_qk(queries_keys_values=qkv, heads=2),
        "interleaved_matmul_selfatt_valatt": c.interleaved_matmul_selfatt_valatt(
            queries_keys_values=qkv, attention=att, heads=2),
        "interleaved_matmul_encdec_qk": c.interleaved_matmul_encdec_qk(queries=_nd(3, 2, 4),
                                                                       keys_values=_nd(5, 2, 8), heads=2),
        "interleaved_matmul_encdec_valatt": c.interleaved_matmul_encdec_valatt(
            keys_values=_nd(5, 2, 8), attention=_nd(4, 3, 5), heads=2),
        "box_iou": c.box_iou(lhs=boxes, rhs=boxes, format="corner"),
        "box_encode": c.box_encode(samples=mx.nd.array([[1, 0]]), matches=mx.nd.array([[1, 0]]), anchors=boxes,
                                   refs=boxes, means=mx.nd.zeros(4), stds=mx.nd.ones(4)),
        "box_decode": c.box_decode(data=_nd(1, 2, 4), anchors=boxes, std0=1.0, std1=1.0, std2=1.0, std3=1.0,
                                   clip=-1.0, format="corner"),
        "bipartite_matching": c.bipartite_matching(
            data=mx.nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]), is_ascend=False, threshold=1e-12, topk=-1),
        "MultiBoxPrior": c.MultiBoxPrior(data=_nd(1, 1, 2, 3), sizes=(0.5,), ratios=(1, 2), clip=True,
                                         steps=(-1, -1), offsets=(0.5, 0.5)),
        "box_nms": c.box_nms(data=_nd(2, 6, 6, low=0.0), overlap_thresh=0.5, valid_thresh=0.0, topk=-1,
                             coord_start=2, score_index=1, id_index=0, background_id=-1, force_suppress=False,
                             in_format="corner", out_format="corner"),
        "box_non_maximum_suppression": c.box_non_maximum_suppression(data=_nd(6, 6, low=0.0), overlap_thresh=0.5),
        "ROIAlign": c.ROIAlign(data=_nd(1, 2, 6, 6), rois=mx.nd.array([[0, 0, 0, 4, 4]]), pooled_size=(3, 3),
                               spatial_scale=1.0, sample_ratio=-1, position_sensitive=False, aligned=False),
        "dynamic_reshape": c.dynamic_reshape(data=x, shape=mx.nd.array([3, -1])),
        "fft": c.fft(data=x, compute_size=128),
        "count_sketch": c.count_sketch(data=x, h=mx.nd.array([[0, 1, 1]]), s=mx.nd.array([[1, -1, 1]]), out_dim=2,
                                       processing_batch_size=32),
        "sldwin_atten_score": c.sldwin_atten_score(query=_nd(1, 4, 2, 3), key=_nd(1, 4, 2, 3), dilation=dil,
                                                   w=1, symmetric=True),
        "sldwin_atten_mask_like": c.sldwin_atten_mask_like(score=_nd(1, 4, 2, 3), dilation=dil,
                                                           valid_length=mx.nd.array([3], dtype="int32"), w=1,
                                                           symmetric=True),
        "sldwin_atten_context": c.sldwin_atten_context(score=_nd(1, 4, 2, 2), value=_nd(1, 4, 2, 3), dilation=dil,
                                                       w=1, symmetric=False),
        "MultiBoxDetection": c.MultiBoxDetection(
            cls_prob=mx.nd.array([[[0.2, 0.9], [0.8, 0.1]]]), loc_pred=mx.nd.zeros((1, 8)), anchor=boxes, clip=True,
            threshold=0.01, background_id=0, nms_threshold=0.5, force_suppress=False,
            variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1),
        "MultiBoxTarget": c.MultiBoxTarget(
            anchor=boxes, label=mx.nd.array([[[0, 0.1, 0.1, 0.5, 0.6], [-1, -1, -1, -1, -1]]]),
            cls_pred=_nd(1, 3, 2), overlap_threshold=0.5, ignore_label=-1, negative_mining_ratio=-1,
            negative_mining_thresh=0.5, minimum_negative_samples=0, variances=(0.1, 0.1, 0.2, 0.2)),
        "isfinite": c.isfinite(data=x), "isinf": c.isinf(data=x), "isnan": c.isnan(data=x),
    }
    shapes = {"allclose": (), "index_copy": (2, 3), "AdaptiveAvgPooling2D": (1, 1, 2, 2),
              "interleaved_matmul_selfatt_qk": (4, 3, 3), "interleaved_matmul_selfatt_valatt": (3, 2, 4),
              "interleaved_matmul_encdec_qk": (4, 3, 5), "interleaved_matmul_encdec_valatt": (3, 2, 4),
              "box_iou": (1, 2, 1, 2), "box_decode": (1, 2, 4), "MultiBoxPrior": (1, 12, 4),
              "box_nms": (2, 6, 6), "ROIAlign": (1, 2, 3, 3), "dynamic_reshape": (3, 2), "fft": (2, 6),
              "count_sketch": (2, 2), "sldwin_atten_score": (1, 4, 2, 3), "sldwin_atten_context": (1, 4, 2, 3),
              "MultiBoxDetection": (1, 2, 6), "MultiBoxTarget": (1, 8)}
    assert set(calls) == set(ND_NAMES)
    for name, result in calls.items():
        outs = result if isinstance(result, (list, tuple)) else [result]
        for out in outs:
            assert type(out) is mx.nd.NDArray, name
            assert out.dtype == (onp.uint8 if name == "allclose" else onp.float32), (name, out.dtype)
        if name in shapes:
            assert outs[0].shape == shapes[name], (name, outs[0].shape)
    assert mx.nd.contrib.isnan(mx.nd.array([1, 2], dtype="int32")).dtype == onp.int32  # dtype kept, as MXNet
    rows, cols = calls["bipartite_matching"]
    assert rows.asnumpy().tolist() == [1.0, -1.0, 0.0] and cols.asnumpy().tolist() == [2.0, 0.0]


def test_positional_order_and_unknown_keyword():
    x = mx.nd.array([[1.0, 2.0]])
    onp.testing.assert_allclose(mx.nd.contrib.quadratic(x, 1.0, 0.0, 1.0).asnumpy(), [[2.0, 5.0]])
    with pytest.raises(TypeError, match="quadratic"):
        mx.nd.contrib.quadratic(x, d=1.0)


def test_npx_calls_match_nd_contrib():
    mx.npx.set_np()
    try:
        qkv = RNG.uniform(-1, 1, (3, 2, 12)).astype("float32")
        got = npx.interleaved_matmul_selfatt_qk(mx.np.array(qkv), heads=2)
        assert type(got) is mx.np.ndarray
        want = mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(qkv), heads=2)
        onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)
        prior = npx.multibox_prior(mx.np.zeros((1, 1, 2, 2)))
        assert prior.shape == (1, 4, 4) and prior.dtype == onp.float32
    finally:
        mx.npx.reset_np()


class _SelfAttention(HybridBlock):
    """Interleaved self-attention over packed projections (two contrib ops and a softmax)."""

    def forward(self, qkv):
        scores = npx.interleaved_matmul_selfatt_qk(qkv, heads=2)
        return npx.interleaved_matmul_selfatt_valatt(qkv, npx.softmax(scores, axis=-1), heads=2)


def test_contrib_ops_under_hybridize():
    mx.npx.set_np()
    try:
        x = RNG.uniform(-1, 1, (4, 2, 12)).astype("float32")
        out = check_hybrid(_SelfAttention(), x)
        assert out.shape == (4, 2, 4)
    finally:
        mx.npx.reset_np()


@pytest.mark.parametrize("rescale,clip,hist_shape", [(1.0, -1.0, (3, 1)), (2.0, 1.5, (3,))])
def test_group_adagrad_update(rescale, clip, hist_shape):
    """The documented update against NumPy; history is written in place, weight through out=."""
    w0 = RNG.standard_normal((3, 2, 2)).astype("float32")
    g0 = RNG.standard_normal((3, 2, 2)).astype("float32")
    h0 = RNG.uniform(0.1, 1.0, hist_shape).astype("float32")
    g = g0 * rescale
    if clip > 0:
        g = onp.clip(g, -clip, clip)
    h = h0 + (g * g).reshape(3, -1).mean(axis=1).reshape(hist_shape)
    want = w0 - 0.1 * g / (onp.sqrt(h).reshape(3, 1, 1) + 1e-5)
    w, hist = mx.nd.array(w0), mx.nd.array(h0)
    res = mx.nd.contrib.group_adagrad_update(w, mx.nd.array(g0), hist, lr=0.1, rescale_grad=rescale,
                                             clip_gradient=clip, out=w)
    assert res is w
    onp.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(hist.asnumpy(), h, rtol=1e-5)
    with pytest.raises(mx.base.MXNetError, match=r"group_adagrad_update: history has shape \(2,\)"):
        mx.nd.contrib.group_adagrad_update(w, w, mx.nd.ones(2), lr=0.1)
    with pytest.raises(mx.base.MXNetError, match="group_adagrad_update: lr is required"):
        mx.nd.contrib.group_adagrad_update(w, w, hist)


class _Quantize(HybridBlock):
    """Straight-through estimators: rounded/sign values forward, identity gradients backward."""

    def forward(self, x):
        return npx.round_ste(x * 3.0) + npx.sign_ste(x)


def test_straight_through_ops_under_hybridize():
    mx.npx.set_np()
    try:
        x = onp.array([[0.1, -0.45, 0.8], [-0.9, 0.3, 0.05]], "float32")
        block = _Quantize()
        out = check_hybrid(block, x)
        onp.testing.assert_allclose(out, onp.sign(x * 3) * onp.floor(onp.abs(x * 3) + 0.5) + onp.sign(x))
        xs = mx.np.array(x)
        xs.attach_grad()
        block.hybridize()
        with mx.autograd.record():
            block(xs).sum().backward()
        onp.testing.assert_allclose(xs.grad.asnumpy(), onp.full(x.shape, 4.0))  # 3 (round) + 1 (sign)
    finally:
        mx.npx.reset_np()


def test_sync_batch_norm_is_batch_norm_on_one_device():
    """Inference uses the moving statistics (and gamma unless fix_gamma); training normalizes with the
    batch statistics and updates the moving ones in place -- NumPy's arithmetic."""
    x = RNG.standard_normal((4, 3, 2)).astype("float32")
    gamma, beta = onp.array([2.0, 0.5, -1.0], "float32"), onp.array([0.1, 0.2, 0.3], "float32")
    mean0, var0 = onp.array([0.1, -0.2, 0.0], "float32"), onp.array([1.5, 0.5, 2.0], "float32")
    mm, mv = mx.nd.array(mean0), mx.nd.array(var0)
    args = (mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(beta), mm, mv)
    shape = (1, 3, 1)
    out = mx.nd.contrib.SyncBatchNorm(*args, eps=1e-3, fix_gamma=False, ndev=2, key="bn0")
    assert type(out) is mx.nd.NDArray
    want = (x - mean0.reshape(shape)) / onp.sqrt(var0.reshape(shape) + 1e-3) * gamma.reshape(shape) \
        + beta.reshape(shape)
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-5)
    with mx.autograd.record():
        out = mx.nd.contrib.SyncBatchNorm(*args, momentum=0.8, key="bn0")
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    want = (x - mean.reshape(shape)) / onp.sqrt(var.reshape(shape) + 1e-3) + beta.reshape(shape)  # fix_gamma
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(mm.asnumpy(), 0.8 * mean0 + 0.2 * mean, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(mv.asnumpy(), 0.8 * var0 + 0.2 * var, rtol=1e-5, atol=1e-6)
    np_out = npx.sync_batch_norm(mx.np.array(x), mx.np.array(gamma), mx.np.array(beta), mx.np.array(mean0),
                                 mx.np.array(var0), fix_gamma=False, key="bn0")
    assert type(np_out) is mx.np.ndarray and np_out.shape == x.shape
    with pytest.raises(ValueError, match="sync_batch_norm: ndev must be a positive device count"):
        npx.sync_batch_norm(*args, ndev=0)


def test_graph_ops_on_dense_adjacency_match_mxnet_on_its_csr_form():
    """_contrib_getnnz / _contrib_edge_id / _contrib_dgl_adjacency: MXNet 2.0 gave these values for the
    CSR form of the same matrix (getnnz [4] and per row [1 2 1]; edge_id [2 3 4 5 -1])."""
    dense = onp.array([[0, 2, 0], [3, 0, 4], [0, 0, 5]], dtype="float32")
    x = mx.nd.array(dense)
    total = mx.nd.contrib.getnnz(x)
    assert total.dtype == onp.int64 and total.asnumpy().tolist() == [4]
    assert mx.nd.contrib.getnnz(x, axis=1).asnumpy().tolist() == [1, 2, 1]
    assert mx.nd.contrib.getnnz(x, axis=0).asnumpy().tolist() == (dense != 0).sum(axis=0).tolist()
    ids = mx.nd.contrib.edge_id(x, mx.nd.array([0, 1, 1, 2, 0]), mx.nd.array([1, 0, 2, 2, 0]))
    assert ids.dtype == onp.float32 and ids.asnumpy().tolist() == [2, 3, 4, 5, -1]
    adjacency = mx.nd.contrib.dgl_adjacency(mx.nd.array(dense, dtype="int64"))
    assert adjacency.dtype == onp.float32
    onp.testing.assert_array_equal(adjacency.asnumpy(), (dense != 0).astype("float32"))
    with pytest.raises(mx.MXNetError, match="getnnz: expects a 2-D adjacency matrix"):
        mx.nd.contrib.getnnz(mx.nd.ones((2, 2, 2)))
    with pytest.raises(mx.MXNetError, match="edge_id: u and v must be 1-D of the same length"):
        mx.nd.contrib.edge_id(x, mx.nd.array([0, 1]), mx.nd.array([1]))
