"""gluon.loss: every loss against a NumPy reference, hybridized == imperative, bad input."""
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd
from mxjax.gluon import loss as gloss

RNG = onp.random.default_rng(0)
PRED = RNG.normal(size=(4, 3)).astype(onp.float32)
TARGET = RNG.normal(size=(4, 3)).astype(onp.float32)
SIGNED = onp.where(RNG.random((4, 3)) > 0.5, 1.0, -1.0).astype(onp.float32)
BINARY = (RNG.random((4, 3)) > 0.5).astype(onp.float32)
PROB = RNG.random((4, 3)).astype(onp.float32)
DIST = (PROB / PROB.sum(-1, keepdims=True)).astype(onp.float32)
SPARSE = onp.array([0, 2, 1, 2], dtype=onp.int32)
COUNTS = onp.array(RNG.integers(0, 5, size=(4, 3)), dtype=onp.float32)
SW = RNG.random((4, 1)).astype(onp.float32)
POS_WEIGHT = onp.array([[0.5, 2.0, 3.0]], dtype=onp.float32)


def _mean_except(x, batch_axis=0):
    axes = tuple(i for i in range(x.ndim) if i != batch_axis)
    return x.mean(axis=axes) if axes else x


def _softplus(x):
    return onp.log1p(onp.exp(-onp.abs(x))) + onp.maximum(x, 0)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - onp.log(onp.exp(x - m).sum(axis=axis, keepdims=True))


def _weighted(loss, weight, sw):
    if sw is not None:
        loss = loss * sw
    return loss * weight if weight is not None else loss


def ref_l2(p, l, w=1.0, sw=None, ba=0):
    return _mean_except(_weighted((l.reshape(p.shape) - p) ** 2, w / 2, sw), ba)


def ref_l1(p, l, w=None, sw=None, ba=0):
    return _mean_except(_weighted(onp.abs(l.reshape(p.shape) - p), w, sw), ba)


def ref_bce(p, l, w=None, sw=None, from_sigmoid=False, pos_weight=None):
    pw = 1.0 if pos_weight is None else pos_weight
    prob = p if from_sigmoid else 1 / (1 + onp.exp(-p.astype(onp.float64)))
    loss = -(onp.log(prob + 1e-12) * l * pw + onp.log(1 - prob + 1e-12) * (1 - l))
    return _mean_except(_weighted(loss, w, sw))


def ref_softmax_ce(p, l, w=None, sw=None, sparse=True, from_logits=False, axis=-1, ba=0):
    logp = p if from_logits else _log_softmax(p, axis)
    if sparse:
        loss = -onp.take_along_axis(logp, onp.expand_dims(l.astype(onp.int64), axis), axis=axis)
    else:
        loss = -(logp * l).sum(axis=axis, keepdims=True)
    return _mean_except(_weighted(loss, w, sw), ba)


def ref_kl(p, l, w=None, sw=None, from_logits=True):
    logp = p if from_logits else _log_softmax(p)
    return _mean_except(_weighted(l * (onp.log(l + 1e-12) - logp), w, sw))


def ref_huber(p, l, w=None, sw=None, rho=1.0):
    err = onp.abs(l - p)
    return _mean_except(_weighted(onp.where(err > rho, err - 0.5 * rho, 0.5 / rho * err ** 2), w, sw))


def ref_hinge(p, l, w=None, sw=None, margin=1.0, squared=False):
    loss = onp.maximum(0, margin - p * l)
    return _mean_except(_weighted(loss ** 2 if squared else loss, w, sw))


def ref_logistic(p, l, w=None, sw=None, label_format="signed"):
    z = (l + 1) / 2 if label_format == "signed" else l
    return _mean_except(_weighted(_softplus(p) - p * z, w, sw))


def ref_poisson(p, t, w=None, sw=None, from_logits=True, compute_full=False):
    loss = onp.exp(p) - t * p if from_logits else p - t * onp.log(p + 1e-8)
    if compute_full:
        safe = onp.where(t > 1, t, 1.0)
        loss = loss + onp.where(t > 1, safe * onp.log(safe) - safe + 0.5 * onp.log(2 * onp.pi * safe), 0)
    return _weighted(loss, w, sw).mean(axis=tuple(range(1, loss.ndim)))  # per sample, as MXNet 2.0 (1.x: one mean)


# (name, loss block, NumPy reference, inputs, sample_weight)
CASES = [
    ("l2", lambda: gloss.L2Loss(), ref_l2, (PRED, TARGET), None),
    ("l2_w_sw", lambda: gloss.L2Loss(weight=3.0), lambda p, l, sw: ref_l2(p, l, 3.0, sw), (PRED, TARGET), SW),
    ("l2_label_flat", lambda: gloss.L2Loss(), ref_l2, (PRED, TARGET.reshape(-1)), None),
    ("l1_batch_axis1", lambda: gloss.L1Loss(batch_axis=1), lambda p, l: ref_l1(p, l, ba=1), (PRED, TARGET), None),
    ("l1_sw", lambda: gloss.L1Loss(weight=0.5), lambda p, l, sw: ref_l1(p, l, 0.5, sw), (PRED, TARGET), SW),
    ("bce", lambda: gloss.SigmoidBCELoss(), ref_bce, (PRED, BINARY), None),
    # MXNet's argument order (1.x and 2.0): (pred, label, sample_weight, pos_weight)
    ("bce_sw", lambda: gloss.SigmoidBinaryCrossEntropyLoss(weight=2.0),
     lambda p, l, sw: ref_bce(p, l, 2.0, sw), (PRED, BINARY), SW),
    ("bce_from_sigmoid", lambda: gloss.SigmoidBCELoss(from_sigmoid=True),
     lambda p, l: ref_bce(p, l, from_sigmoid=True), (PROB, BINARY), None),
    ("softmax_ce_sparse", lambda: gloss.SoftmaxCrossEntropyLoss(), ref_softmax_ce, (PRED, SPARSE), None),
    ("softmax_ce_sparse_sw", lambda: gloss.SoftmaxCELoss(weight=1.5),
     lambda p, l, sw: ref_softmax_ce(p, l, 1.5, sw), (PRED, SPARSE), SW),
    ("softmax_ce_dense", lambda: gloss.SoftmaxCELoss(sparse_label=False),
     lambda p, l: ref_softmax_ce(p, l, sparse=False), (PRED, DIST), None),
    ("softmax_ce_from_logits", lambda: gloss.SoftmaxCELoss(from_logits=True),
     lambda p, l: ref_softmax_ce(p, l, from_logits=True), (_log_softmax(PRED), SPARSE), None),
    ("softmax_ce_axis0", lambda: gloss.SoftmaxCELoss(axis=0, batch_axis=1),
     lambda p, l: ref_softmax_ce(p, l, axis=0, ba=1), (PRED, onp.array([1, 3, 0])), None),
    ("kl", lambda: gloss.KLDivLoss(), ref_kl, (_log_softmax(PRED), DIST), None),
    ("kl_not_logits_sw", lambda: gloss.KLDivLoss(from_logits=False, weight=2.0),
     lambda p, l, sw: ref_kl(p, l, 2.0, sw, from_logits=False), (PRED, DIST), SW),
    ("huber", lambda: gloss.HuberLoss(), ref_huber, (PRED, TARGET), None),
    ("huber_rho", lambda: gloss.HuberLoss(rho=0.5, weight=2.0),
     lambda p, l, sw: ref_huber(p, l, 2.0, sw, rho=0.5), (PRED, TARGET), SW),
    ("hinge", lambda: gloss.HingeLoss(), ref_hinge, (PRED, SIGNED), None),
    ("hinge_margin_sw", lambda: gloss.HingeLoss(margin=0.5),
     lambda p, l, sw: ref_hinge(p, l, None, sw, margin=0.5), (PRED, SIGNED), SW),
    ("squared_hinge", lambda: gloss.SquaredHingeLoss(), lambda p, l: ref_hinge(p, l, squared=True),
     (PRED, SIGNED), None),
    ("logistic", lambda: gloss.LogisticLoss(), ref_logistic, (PRED, SIGNED), None),
    ("logistic_binary_sw", lambda: gloss.LogisticLoss(label_format="binary", weight=0.5),
     lambda p, l, sw: ref_logistic(p, l, 0.5, sw, "binary"), (PRED, BINARY), SW),
    ("poisson", lambda: gloss.PoissonNLLLoss(), ref_poisson, (PRED, COUNTS), None),
    ("poisson_full", lambda: gloss.PoissonNLLLoss(from_logits=False, compute_full=True),
     lambda p, l: ref_poisson(p, l, from_logits=False, compute_full=True), (PROB + 0.1, COUNTS), None),
    ("poisson_sw", lambda: gloss.PoissonNLLLoss(weight=2.0), lambda p, l, sw: ref_poisson(p, l, 2.0, sw),
     (PRED, COUNTS), SW),
]


def _call(block, inputs, sw):
    args = [mx.np.array(x) for x in inputs]
    if sw is not None:
        args.append(mx.np.array(sw))
    return block(*args)


@pytest.mark.parametrize("name,make,ref,inputs,sw", CASES, ids=[c[0] for c in CASES])
def test_loss_matches_numpy(name, make, ref, inputs, sw):
    out = _call(make(), inputs, sw)
    expected = ref(*inputs, sw) if sw is not None else ref(*inputs)
    assert out.dtype == onp.float32
    assert out.shape == onp.shape(expected)
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def _value_and_grad(block, inputs, sw):
    pred = mx.np.array(inputs[0])
    pred.attach_grad()
    rest = [mx.np.array(x) for x in inputs[1:]] + ([mx.np.array(sw)] if sw is not None else [])
    with autograd.record():
        out = block(pred, *rest)
    out.backward()
    return out.asnumpy(), pred.grad.asnumpy()


@pytest.mark.parametrize("name,make,ref,inputs,sw", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_hybridized_matches_imperative(name, make, ref, inputs, sw):
    block = make()
    value, grad = _value_and_grad(block, inputs, sw)
    block.hybridize()
    value_h, grad_h = _value_and_grad(block, inputs, sw)
    onp.testing.assert_allclose(value_h, value, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(grad_h, grad, rtol=1e-5, atol=1e-6)
    assert onp.abs(grad).sum() > 0


def test_bce_pos_weight():
    pos_weight = onp.array([[0.5, 2.0, 3.0]], dtype=onp.float32)
    for from_sigmoid, pred in ((False, PRED), (True, PROB)):
        block = gloss.SigmoidBCELoss(from_sigmoid=from_sigmoid)
        expected = ref_bce(pred, BINARY, None, SW, from_sigmoid=from_sigmoid, pos_weight=pos_weight)
        args = [mx.np.array(v) for v in (pred, BINARY, SW, pos_weight)]
        onp.testing.assert_allclose(block(*args).asnumpy(), expected, rtol=1e-5, atol=1e-6)  # MXNet's order
        out = block(*args[:2], pos_weight=args[3], sample_weight=args[2])
        onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_triplet_loss():
    pos, neg = TARGET, RNG.normal(size=(4, 3)).astype(onp.float32)
    block = gloss.TripletLoss(margin=0.5, weight=2.0)
    expected = 2.0 * onp.maximum(((pos - PRED) ** 2 - (neg - PRED) ** 2).sum(1) + 0.5, 0)
    out = block(mx.np.array(PRED), mx.np.array(pos), mx.np.array(neg))
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    block.hybridize()
    out_h = block(mx.np.array(PRED), mx.np.array(pos.reshape(-1)), mx.np.array(neg))
    onp.testing.assert_allclose(out_h.asnumpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_cosine_embedding_loss(margin):
    x1, x2 = PRED, TARGET
    label = onp.array([1, -1, 1, -1], dtype=onp.float32)
    cos = (x1 * x2).sum(1) / onp.maximum(onp.linalg.norm(x1, axis=1) * onp.linalg.norm(x2, axis=1), 1e-12)
    expected = onp.where(label == 1, 1 - cos, onp.maximum(cos - margin, 0)) * SW[:, 0]
    block = gloss.CosineEmbeddingLoss(margin=margin)
    args = [mx.np.array(x1), mx.np.array(x2), mx.np.array(label), mx.np.array(SW)]
    out = block(*args)
    assert out.shape == (4,)
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    block.hybridize()
    onp.testing.assert_allclose(block(*args).asnumpy(), expected, rtol=1e-5, atol=1e-6)


def _optax_ctc(logits_ntc, labels, label_lengths, blank):
    import jax.numpy as jnp
    import optax
    n, t, _ = logits_ntc.shape
    label_pad = (onp.arange(labels.shape[1])[None] >= onp.asarray(label_lengths)[:, None]).astype(onp.float32)
    return onp.asarray(optax.ctc_loss(jnp.asarray(logits_ntc), jnp.zeros((n, t)),
                                      jnp.asarray(onp.where(label_pad > 0, 0, labels)), jnp.asarray(label_pad),
                                      blank_id=blank))


def test_ctc_loss_matches_optax():
    logits = RNG.normal(size=(2, 5, 4)).astype(onp.float32)        # NTC, blank = 3
    labels = onp.array([[1, 0, -1], [2, 2, 1]], dtype=onp.int32)   # padded with -1
    expected = _optax_ctc(logits, labels, [2, 3], blank=3)
    block = gloss.CTCLoss()
    out = block(mx.np.array(logits), mx.np.array(labels))
    assert out.shape == (2,)
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-4, atol=1e-5)
    # TNC / TN layouts, explicit label lengths (padding value ignored), weight and sample_weight
    block = gloss.CTCLoss(layout="TNC", label_layout="TN", weight=2.0)
    labels0 = onp.where(labels < 0, 0, labels)
    sw = onp.array([0.5, 1.0], dtype=onp.float32)
    out = block(mx.np.array(logits.transpose(1, 0, 2)), mx.np.array(labels0.T), None,
                mx.np.array([2, 3]), mx.np.array(sw))
    onp.testing.assert_allclose(out.asnumpy(), 2.0 * sw * expected, rtol=1e-4, atol=1e-5)
    block = gloss.CTCLoss()
    block.hybridize()
    out = block(mx.np.array(logits), mx.np.array(labels))
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_weighting_and_repr():
    assert repr(gloss.L1Loss(weight=2.0)) == "L1Loss(batch_axis=0, w=2.0)"
    assert mx.gluon.loss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    with pytest.raises(ValueError, match="weight must be a number"):
        gloss.L1Loss(weight="x")(mx.np.array(PRED), mx.np.array(TARGET))


BAD = [
    (lambda: gloss.L2Loss(), (PRED, onp.zeros((4, 2), onp.float32)), "L2Loss.*label of shape \\(4, 2\\)"),
    (lambda: gloss.L1Loss(), (PRED, onp.zeros((5,), onp.float32)), "L1Loss.*same number of elements"),
    (lambda: gloss.SoftmaxCELoss(), (PRED, onp.zeros((3,), onp.int32)), "sparse label of shape \\(3,\\)"),
    (lambda: gloss.SoftmaxCELoss(sparse_label=False), (PRED, onp.zeros((4,), onp.float32)),
     "SoftmaxCrossEntropyLoss.*pred's shape \\(4, 3\\)"),
    (lambda: gloss.TripletLoss(), (PRED, TARGET, onp.zeros((2,), onp.float32)), "TripletLoss: negative"),
    (lambda: gloss.CTCLoss(), (onp.zeros((2, 5, 4), onp.float32), onp.zeros((3, 2), onp.int32)), "CTCLoss"),
]


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("make,inputs,match", BAD)
def test_bad_input(make, inputs, match, hybrid):
    block = make()
    if hybrid:
        block.hybridize()
    with pytest.raises(mx.MXNetError, match=match):
        block(*[mx.np.array(x) for x in inputs])


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="label_format"):
        gloss.LogisticLoss(label_format="x")
    with pytest.raises(ValueError, match="layout"):
        gloss.CTCLoss(layout="NCT")


def _sdml_numpy(x1, x2, smoothing):
    batch = x1.shape[0]
    labels = onp.where(onp.eye(batch) > 0, 1 - smoothing, smoothing / (batch - 1))
    logits = -((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=2)
    logp = logits - onp.log(onp.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    return (labels * (onp.log(labels + 1e-12) - logp)).mean(axis=1)


def test_sdml_loss_matches_mxnet20_and_numpy():
    ref = onp.load(pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gluon_api" / "block_api_mxnet20.npz")
    x1, x2 = mx.np.array(ref["sdml_x1"]), mx.np.array(ref["sdml_x2"])
    onp.testing.assert_allclose(gloss.SDMLLoss()(x1, x2).asnumpy(), ref["sdml"], rtol=1e-5, atol=1e-6)
    smooth = gloss.SDMLLoss(smoothing_parameter=0.1, weight=2.0)  # MXNet 2.0 does not apply weight here
    onp.testing.assert_allclose(smooth(x1, x2).asnumpy(), ref["sdml_smooth"], rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(ref["sdml"], _sdml_numpy(ref["sdml_x1"], ref["sdml_x2"], 0.3), rtol=1e-4)
    smooth.hybridize()
    onp.testing.assert_allclose(smooth(x1, x2).asnumpy(), ref["sdml_smooth"], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"SDMLLoss: x1 \(4, 6\) and x2 \(3, 6\) must be"):
        gloss.SDMLLoss()(x1, x2[:3])
