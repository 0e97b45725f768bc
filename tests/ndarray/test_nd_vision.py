"""mx.nd's vision layers, im2col/col2im, moments and the LQ / eigen routines against MXNet's own
results and gradients (tests/fixtures/npx, written by tools/make_npx_fixtures.py)."""
import json
import os

import numpy as onp
import pytest

import mxjax as mx
from mxjax import nd

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "npx")
with open(os.path.join(HERE, "cases.json")) as _f:
    CASES = json.load(_f)
ARRAYS = onp.load(os.path.join(HERE, "cases.npz"))


def _function(path):
    function = mx if path.startswith("npx.") else nd
    for part in path.split("."):
        function = getattr(function, part)
    return function


def _run(name):
    meta = CASES[name]
    cls = mx.np.array if meta["fn"].startswith("npx.") else nd.array
    inputs = [cls(ARRAYS[f"{name}/in/{i}"]) for i in range(meta["n_in"])]
    for i in meta["grads"]:
        inputs[i].attach_grad()
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in meta["kwargs"].items()}
    with mx.autograd.record():
        out = _function(meta["fn"])(*inputs, **kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        loss = (outs[0] * cls(ARRAYS[f"{name}/head"])).sum() if meta["grads"] else None
    if loss is not None:
        loss.backward()
    return meta, inputs, outs


def test_fixture_covers_the_ops():
    assert {case["fn"] for case in CASES.values()} >= {
        "ROIPooling", "GridGenerator", "BilinearSampler", "SpatialTransformer", "Correlation", "Crop", "im2col",
        "col2im", "moments", "khatri_rao", "linalg_gelqf", "linalg.syevd", "SVMOutput",
        "npx.deformable_convolution"}


def test_modulated_deformable_convolution_weights_the_samples():
    # MXNet runs the modulated op on GPUs only: with zero offsets and a unit mask it is a grouped
    # convolution, and it is linear in the mask
    rng = onp.random.default_rng(1)
    shapes = ((2, 4, 6, 7), (6, 2, 3, 3), (6,))
    data, weight, bias = (mx.np.array(rng.normal(size=s).astype("float32")) for s in shapes)
    kwargs = dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2)
    offset, mask = mx.np.zeros((2, 2 * 9 * 2, 6, 7)), mx.np.ones((2, 9 * 2, 6, 7))
    full = mx.npx.modulated_deformable_convolution(data, offset, mask, weight, bias, num_deformable_group=2,
                                                   **kwargs)
    conv = mx.npx.convolution(data, weight, bias, **kwargs)
    onp.testing.assert_allclose(full.asnumpy(), conv.asnumpy(), rtol=1e-4, atol=1e-4)
    half = mx.npx.modulated_deformable_convolution(data, offset, 0.5 * mask, weight, no_bias=True,
                                                   num_deformable_group=2, **kwargs)
    onp.testing.assert_allclose(2 * half.asnumpy(), full.asnumpy() - bias.asnumpy()[:, None, None],
                                rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", [n for n in CASES if n not in ("gelqf", "syevd")])
def test_forward_and_gradient_match_mxnet(name):
    meta, inputs, outs = _run(name)
    assert len(outs) == meta["n_out"]
    for k, out in enumerate(outs):
        assert type(out) is (mx.np.ndarray if meta["fn"].startswith("npx.") else nd.NDArray)
        onp.testing.assert_allclose(out.asnumpy(), ARRAYS[f"{name}/out/{k}"], rtol=1e-4, atol=1e-5)
    for i in meta["grads"]:
        onp.testing.assert_allclose(inputs[i].grad.asnumpy(), ARRAYS[f"{name}/grad/{i}"], rtol=1e-4, atol=1e-5)


def test_gelqf_matches_mxnet_and_reconstructs():
    _, (a,), (q, l) = _run("gelqf")
    onp.testing.assert_allclose(q.asnumpy(), ARRAYS["gelqf/out/0"], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(l.asnumpy(), ARRAYS["gelqf/out/1"], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose((l.asnumpy() @ q.asnumpy()), a.asnumpy(), rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(q.asnumpy() @ q.asnumpy().T, onp.eye(3), atol=1e-5)


def test_syevd_matches_mxnet_and_reconstructs():
    _, (a,), (u, lam) = _run("syevd")
    onp.testing.assert_allclose(lam.asnumpy(), ARRAYS["syevd/out/1"], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(u.asnumpy(), ARRAYS["syevd/out/0"], rtol=1e-4, atol=1e-4)
    rebuilt = onp.einsum("bki,bk,bkj->bij", u.asnumpy(), lam.asnumpy(), u.asnumpy())
    onp.testing.assert_allclose(rebuilt, a.asnumpy(), atol=1e-4)


def test_packed_triangles_round_trip():
    a = onp.arange(1, 10, dtype=onp.float32).reshape(3, 3)
    cases = {(0, True): [1, 4, 5, 7, 8, 9], (0, False): [1, 2, 5, 3, 6, 9], (1, True): [2, 3, 6],
             (-1, False): [4, 7, 8]}
    for (offset, lower), want in cases.items():
        packed = nd.linalg.extracttrian(nd.array(a), offset=offset, lower=lower)
        onp.testing.assert_array_equal(packed.asnumpy(), want)
        full = nd.linalg.maketrian(packed, offset=offset, lower=lower).asnumpy()
        mask = onp.tril(onp.ones((3, 3)), offset) if offset < 0 or (offset == 0 and lower) \
            else onp.triu(onp.ones((3, 3)), offset)
        onp.testing.assert_array_equal(full, a * mask)
    assert nd.linalg_extracttrian is not None and nd.linalg_gelqf is not None


def test_vision_errors_name_the_op():
    with pytest.raises(mx.base.MXNetError, match=r"ROIPooling: expected data \(N, C, H, W\) and rois \(R, 5\)"):
        nd.ROIPooling(nd.ones((1, 1, 4, 4)), nd.ones((2, 4)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(mx.base.MXNetError, match="Crop: a \\(5, 5\\) window"):
        nd.Crop(nd.ones((1, 1, 4, 4)), h_w=(5, 5))
    with pytest.raises(mx.base.MXNetError, match="GridGenerator: transform_type"):
        nd.GridGenerator(nd.ones((1, 6)), transform_type="perspective", target_shape=(2, 2))


def test_vision_ops_under_hybridize():
    class Net(mx.gluon.HybridBlock):
        def forward(self, x, rois):
            return mx.npx.roi_pooling(x, rois, pooled_size=(2, 2), spatial_scale=1.0)

    net = Net()
    x = mx.np.array(onp.arange(16, dtype=onp.float32).reshape(1, 1, 4, 4))
    rois = mx.np.array([[0, 0, 0, 3, 3]])
    eager = net(x, rois)
    net.hybridize()
    onp.testing.assert_array_equal(net(x, rois).asnumpy(), eager.asnumpy())
    onp.testing.assert_array_equal(eager.asnumpy().reshape(2, 2), [[5, 7], [13, 15]])
