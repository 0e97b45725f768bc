"""Detection-side ``mx.nd.contrib`` ops, hawkesll, BatchNormWithReLU, rand_zipfian and the exposed
``backward_*`` ops against MXNet 2.0 (fixtures from tools/make_detection_fixtures.py).

PSROIPooling and DeformablePSROIPooling have empty CPU kernels in MXNet (their CPU output is
uninitialised memory), so they are checked against NumPy loops transcribed from MXNet's CUDA kernels.
"""
from __future__ import annotations

import json
import math
import pathlib

import numpy as onp
import pytest

import mxjax as mx

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "detection"


def load(name):
    data = onp.load(FIXTURES / f"{name}.npz")
    params = json.loads(str(data["params"]))
    op = params.pop("op")
    inputs = [data[f"in_{i}"] for i in range(sum(k.startswith("in_") for k in data.files))]
    return data, op, params, inputs


def run(op, inputs, params, grad_inputs=(), head=None):
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for i in grad_inputs:
        arrays[i].attach_grad()
    with mx.autograd.record():
        outs = getattr(mx.nd.contrib, op)(*arrays, **params)
        first = outs[0] if isinstance(outs, (list, tuple)) else outs
        loss = (first * mx.nd.array(head)).sum() if head is not None else first.sum()
    if grad_inputs:
        loss.backward()
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return [o.asnumpy() for o in outs], {i: arrays[i].grad.asnumpy() for i in grad_inputs}


FORWARD_CASES = {"proposal": "Proposal", "proposal_noscore": "Proposal", "proposal_iou": "Proposal",
                 "multi_proposal": "MultiProposal", "rroi_align": "RROIAlign", "rroi_align_ratio": "RROIAlign",
                 "bn_relu": "BatchNormWithReLU"}


@pytest.mark.parametrize("name", sorted(FORWARD_CASES))
def test_forward_matches_mxnet(name):
    data, op, params, inputs = load(name)
    assert op == FORWARD_CASES[name]
    outs, _ = run(op, inputs, params)
    expected = [data[k] for k in sorted(k for k in data.files if k.startswith("out_"))]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert got.shape == want.shape
        onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["proposal", "multi_proposal"])
def test_proposal_gradients_are_zero(name):
    data, op, params, inputs = load(name)
    _, grads = run(op, inputs, params, grad_inputs=(0, 1, 2), head=data["head"])
    for i in range(3):
        onp.testing.assert_array_equal(grads[i], data[f"grad_{i}"])


def test_proposal_rejects_a_batch():
    _, _, params, inputs = load("multi_proposal")
    with pytest.raises(mx.MXNetError, match="Proposal.*batch"):
        mx.nd.contrib.Proposal(*[mx.nd.array(a) for a in inputs], **params)


def test_hawkesll_forward_and_gradient():
    data, op, params, inputs = load("hawkesll")
    outs, grads = run(op, inputs, params, grad_inputs=(0, 1, 2, 3), head=data["head"])
    onp.testing.assert_allclose(outs[0], data["out_0"], rtol=1e-5, atol=1e-5)
    onp.testing.assert_allclose(outs[1], data["out_1"], rtol=1e-5, atol=1e-6)
    for i in range(4):  # MXNet: gradients of the log-likelihood only; zero for the state
        onp.testing.assert_allclose(grads[i], data[f"grad_{i}"], rtol=1e-4, atol=1e-5)


def test_hawkesll_shape_error():
    _, _, _, inputs = load("hawkesll")
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    arrays[1] = mx.nd.ones((7,))
    with pytest.raises(mx.MXNetError, match=r"hawkesll.*alpha"):
        mx.nd.contrib.hawkesll(*arrays)


def test_backward_hawkesll_is_hawkesll_gradient():
    data, _, _, inputs = load("hawkesll")
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    head_states = mx.nd.ones(inputs[3].shape)
    grads = mx.nd.contrib.backward_hawkesll(mx.nd.array(data["head"]), head_states, *arrays)
    assert len(grads) == 8
    for i in range(4):
        onp.testing.assert_allclose(grads[i].asnumpy(), data[f"grad_{i}"], rtol=1e-4, atol=1e-5)
    for i in range(4, 8):
        assert not grads[i].asnumpy().any()


@pytest.mark.parametrize("name", ["backward_quadratic", "backward_gradientmultiplier", "backward_index_copy"])
def test_backward_ops_match_mxnet(name):
    data, op, params, inputs = load(name)
    outs = getattr(mx.nd.contrib, op.replace("_contrib_", ""))(*[mx.nd.array(a, dtype=a.dtype) for a in inputs],
                                                              **params)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    expected = [data[k] for k in sorted(k for k in data.files if k.startswith("out_"))]
    if name == "backward_index_copy":  # MXNet leaves index_vector's gradient unwritten; ours is zero
        expected[1] = onp.zeros_like(expected[1])
    for got, want in zip(outs, expected, strict=True):
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_backward_ops_agree_with_autograd():
    x = mx.nd.array(onp.linspace(-2, 2, 6, dtype="float32").reshape(2, 3))
    head = mx.nd.array(onp.arange(6, dtype="float32").reshape(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        loss = (mx.nd.contrib.quadratic(x, a=0.5, b=-1.0, c=2.0) * head).sum()
    loss.backward()
    onp.testing.assert_allclose(mx.nd.contrib.backward_quadratic(head, x, a=0.5, b=-1.0, c=2.0).asnumpy(),
                                x.grad.asnumpy(), rtol=1e-6)
    with mx.autograd.record():
        loss = (mx.nd.contrib.gradientmultiplier(x, scalar=-3.0) * head).sum()
    loss.backward()
    onp.testing.assert_allclose(mx.nd.contrib.backward_gradientmultiplier(head, scalar=-3.0).asnumpy(),
                                x.grad.asnumpy())


def test_rand_zipfian_expected_counts_and_distribution():
    data = onp.load(FIXTURES / "rand_zipfian.npz")
    true = mx.nd.array(data["true"])
    samples, count_true, count_sampled = mx.nd.contrib.rand_zipfian(true, 64, 10)
    assert samples.dtype == onp.int64 and count_true.dtype == onp.float64 and count_sampled.dtype == onp.float64
    assert samples.shape == (64,) and count_true.shape == (5,) and count_sampled.shape == (64,)
    onp.testing.assert_allclose(count_true.asnumpy(), data["count_true"], rtol=1e-12)
    # MXNet's formula for the samples' expected counts, applied to the samples MXNet drew and to ours
    formula = lambda c: onp.log((c + 2.0) / (c + 1.0)) / math.log(11) * 64  # noqa: E731
    onp.testing.assert_allclose(data["count_sampled"], formula(data["samples"]), rtol=1e-12)
    onp.testing.assert_allclose(count_sampled.asnumpy(), formula(samples.asnumpy()), rtol=1e-12)
    mx.random.seed(5)
    draws = mx.nd.contrib.rand_zipfian(true, 40000, 10)[0].asnumpy()
    assert draws.min() >= 0 and draws.max() < 10
    freq = onp.bincount(draws, minlength=10) / draws.size
    prob = onp.log((onp.arange(10) + 2.0) / (onp.arange(10) + 1.0)) / math.log(11)
    onp.testing.assert_allclose(freq, prob, atol=0.01)


def test_reexported_names():
    assert mx.nd.contrib.current_device is mx.device.current_device
    assert mx.nd.contrib.current_device() == mx.current_device()
    assert mx.nd.contrib.uniform is mx.nd.random.uniform
    assert isinstance(mx.nd.contrib.uniform(0, 1, shape=(2,)), mx.nd.NDArray)
    # of these ops MXNet 2.0's npx has batch_norm_with_relu and current_device only
    assert mx.npx.current_device is mx.device.current_device
    assert callable(mx.npx.batch_norm_with_relu)


# ----- PSROIPooling / DeformablePSROIPooling: NumPy transcriptions of MXNet's CUDA kernels ----------------

def _c_round(x):
    return onp.sign(x) * onp.floor(onp.abs(x) + 0.5)


def psroi_oracle(data, rois, scale, output_dim, size, group):
    n_rois, (_, channels, height, width) = rois.shape[0], data.shape
    out = onp.zeros((n_rois, output_dim, size, size), "float32")
    grad_weights = onp.zeros((n_rois, output_dim, size, size) + data.shape, "float32")
    for n in range(n_rois):
        b = int(rois[n, 0])
        sw, sh = _c_round(rois[n, 1]) * scale, _c_round(rois[n, 2]) * scale
        ew, eh = (_c_round(rois[n, 3]) + 1) * scale, (_c_round(rois[n, 4]) + 1) * scale
        bh, bw = max(eh - sh, 0.1) / size, max(ew - sw, 0.1) / size
        for c in range(output_dim):
            for ph in range(size):
                for pw in range(size):
                    hs = min(max(int(onp.floor(ph * bh + sh)), 0), height)
                    he = min(max(int(onp.ceil((ph + 1) * bh + sh)), 0), height)
                    ws = min(max(int(onp.floor(pw * bw + sw)), 0), width)
                    we = min(max(int(onp.ceil((pw + 1) * bw + sw)), 0), width)
                    gw = min(max(int(onp.floor(pw * group / size)), 0), group - 1)
                    gh = min(max(int(onp.floor(ph * group / size)), 0), group - 1)
                    cin = (c * group + gh) * group + gw
                    if he <= hs or we <= ws:
                        continue
                    area = (he - hs) * (we - ws)
                    out[n, c, ph, pw] = data[b, cin, hs:he, ws:we].sum() / area
                    grad_weights[n, c, ph, pw, b, cin, hs:he, ws:we] = 1.0 / area
    return out, grad_weights


def test_psroi_pooling_against_cuda_kernel():
    rng = onp.random.default_rng(0)
    output_dim, size, group = 2, 3, 3
    data = rng.uniform(-1, 1, (2, output_dim * group * group, 12, 10)).astype("float32")
    rois = onp.array([[0, 1.4, 2.6, 8.2, 9.0], [1, 0, 0, 9, 11], [1, 5, 3, 5.4, 3.2], [0, -3, 4, 30, 7]], "float32")
    params = {"spatial_scale": 0.8, "output_dim": output_dim, "pooled_size": size}
    want, weights = psroi_oracle(data, rois, 0.8, output_dim, size, group)
    head = rng.uniform(-1, 1, want.shape).astype("float32")
    outs, grads = run("PSROIPooling", [data, rois], params, grad_inputs=(0, 1), head=head)
    onp.testing.assert_allclose(outs[0], want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(grads[0], onp.einsum("rcpq,rcpq...->...", head, weights), rtol=1e-5, atol=1e-6)
    assert not grads[1].any()
    with pytest.raises(mx.MXNetError, match="PSROIPooling.*channels"):
        mx.nd.contrib.PSROIPooling(mx.nd.array(data[:, :5]), mx.nd.array(rois), **params)


def _bilinear(plane, w, h):
    x1, x2, y1, y2 = int(onp.floor(w)), int(onp.ceil(w)), int(onp.floor(h)), int(onp.ceil(h))
    dx, dy = w - x1, h - y1
    return ((1 - dx) * (1 - dy) * plane[y1, x1] + (1 - dx) * dy * plane[y2, x1]
            + dx * (1 - dy) * plane[y1, x2] + dx * dy * plane[y2, x2])


def deformable_psroi_oracle(data, rois, trans, scale, output_dim, group, size, part, samples, std):
    """Forward, and the data/trans gradients of sum(out * head) as the CUDA backward kernel computes them."""
    _, channels, height, width = data.shape
    no_trans = trans is None
    classes = 1 if no_trans else trans.shape[1] // 2
    per_class = output_dim // classes
    out = onp.zeros((rois.shape[0], output_dim, size, size), "float32")
    terms = []  # (n, c, ph, pw, b, cin, w, h, roi_w, roi_h, class, part_h, part_w, count)
    for n in range(rois.shape[0]):
        b = int(rois[n, 0])
        sw, sh = _c_round(rois[n, 1]) * scale - 0.5, _c_round(rois[n, 2]) * scale - 0.5
        ew, eh = (_c_round(rois[n, 3]) + 1) * scale - 0.5, (_c_round(rois[n, 4]) + 1) * scale - 0.5
        rw, rh = max(ew - sw, 0.1), max(eh - sh, 0.1)
        bw, bh = rw / size, rh / size
        for c in range(output_dim):
            for ph in range(size):
                for pw in range(size):
                    part_h, part_w = int(onp.floor(ph / size * part)), int(onp.floor(pw / size * part))
                    cls = c // per_class
                    tx = 0.0 if no_trans else trans[n, 2 * cls, part_h, part_w] * std
                    ty = 0.0 if no_trans else trans[n, 2 * cls + 1, part_h, part_w] * std
                    ws, hs = pw * bw + sw + tx * rw, ph * bh + sh + ty * rh
                    gw = min(max(int(onp.floor(pw * group / size)), 0), group - 1)
                    gh = min(max(int(onp.floor(ph * group / size)), 0), group - 1)
                    cin = (c * group + gh) * group + gw
                    total, count, points = 0.0, 0, []
                    for ih in range(samples):
                        for iw in range(samples):
                            w, h = ws + iw * bw / samples, hs + ih * bh / samples
                            if w < -0.5 or w > width - 0.5 or h < -0.5 or h > height - 0.5:
                                continue
                            w, h = min(max(w, 0.0), width - 1.0), min(max(h, 0.0), height - 1.0)
                            total += _bilinear(data[b, cin], w, h)
                            count += 1
                            points.append((w, h))
                    out[n, c, ph, pw] = total / count if count else 0.0
                    terms.extend((n, c, ph, pw, b, cin, w, h, rw, rh, cls, part_h, part_w, count) for w, h in points)
    return out, terms


def deformable_psroi_grads(data, trans, terms, head, std):
    gdata = onp.zeros_like(data)
    gtrans = None if trans is None else onp.zeros_like(trans)
    for n, c, ph, pw, b, cin, w, h, rw, rh, cls, part_h, part_w, count in terms:
        diff = head[n, c, ph, pw] / count
        x0, x1, y0, y1 = int(onp.floor(w)), int(onp.ceil(w)), int(onp.floor(h)), int(onp.ceil(h))
        dx, dy = w - x0, h - y0
        for yy, xx, q in ((y0, x0, (1 - dx) * (1 - dy)), (y1, x0, (1 - dx) * dy), (y0, x1, dx * (1 - dy)),
                          (y1, x1, dx * dy)):
            gdata[b, cin, yy, xx] += q * diff
        if gtrans is not None:
            u = data[b, cin]
            gx = (u[y1, x1] * dy + u[y0, x1] * (1 - dy) - u[y1, x0] * dy - u[y0, x0] * (1 - dy)) * std * diff * rw
            gy = (u[y1, x1] * dx + u[y1, x0] * (1 - dx) - u[y0, x1] * dx - u[y0, x0] * (1 - dx)) * std * diff * rh
            gtrans[n, 2 * cls, part_h, part_w] += gx
            gtrans[n, 2 * cls + 1, part_h, part_w] += gy
    return gdata, gtrans


@pytest.mark.parametrize("no_trans", [True, False])
def test_deformable_psroi_pooling_against_cuda_kernel(no_trans):
    rng = onp.random.default_rng(1)
    output_dim, group, size, part, samples, std = 4, 2, 2, 2, 2, 0.1
    data = rng.uniform(-1, 1, (2, output_dim * group * group, 11, 12)).astype("float32")
    # rois inside the map, so no sample is clamped (MXNet's trans gradient ignores the clamp)
    rois = onp.array([[0, 2.2, 2.7, 8.4, 7.1], [1, 3, 2, 6, 8], [1, 4.6, 3.3, 9.2, 6.4]], "float32")
    trans = None if no_trans else rng.uniform(-1, 1, (3, 4, part, part)).astype("float32")  # 2 classes
    params = {"spatial_scale": 1.0, "output_dim": output_dim, "group_size": group, "pooled_size": size,
              "part_size": part, "sample_per_part": samples, "trans_std": std, "no_trans": no_trans}
    want, terms = deformable_psroi_oracle(data, rois, trans, 1.0, output_dim, group, size, part, samples, std)
    head = rng.uniform(-1, 1, want.shape).astype("float32")
    inputs = [data, rois] + ([] if no_trans else [trans])
    outs, grads = run("DeformablePSROIPooling", inputs, params, grad_inputs=(0,) if no_trans else (0, 2),
                      head=head)
    onp.testing.assert_allclose(outs[0], want, rtol=1e-5, atol=1e-5)
    gdata, gtrans = deformable_psroi_grads(data, trans, terms, head, std)
    onp.testing.assert_allclose(grads[0], gdata, rtol=1e-4, atol=1e-5)
    if not no_trans:
        onp.testing.assert_allclose(grads[2], gtrans, rtol=1e-4, atol=1e-5)


def test_rroi_align_dynamic_grid_under_jit_is_refused():
    data, op, params, inputs = load("rroi_align")
    with pytest.raises(mx.MXNetError, match="dynamic-shape"):
        import jax
        jax.jit(lambda d, r: mx.operator.get_op("_contrib_RROIAlign").compute(d, r, pooled_size=(2, 2),
                                                                              spatial_scale=1.0))(*inputs)
