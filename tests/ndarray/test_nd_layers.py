"""mx.nd output/loss layers (forward and their fixed gradients), linalg_*, NN bindings, fluent helpers."""
import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax.ndarray as nd
import mxjax.numpy_extension as npx
from mxjax._ndarray import NDArray
from mxjax.operator import get_op

RNG = onp.random.default_rng(2)


def _arr(*shape, low=-2.0, high=2.0, dtype="float32"):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def _check(got, want, dtype="float32", rtol=1e-5, atol=1e-5):
    assert type(got) is NDArray
    want = onp.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert onp.dtype(got.dtype) == onp.dtype(dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol)


def _softmax(x, axis):
    e = onp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _grad(op_name, data, label, head=None, **params):
    """d(sum(out * head))/d(data) through the op's compute (the custom VJP under test)."""
    compute = get_op(op_name).compute
    head = onp.ones_like(data) if head is None else head
    with jax.enable_x64(True):  # as mxjax runs every op (its int64 label indices)
        return onp.asarray(jax.grad(lambda d: jnp.sum(compute(d, jnp.asarray(label), **params) * head))(
            jnp.asarray(data)))


# ----------------------------------------------------------------------------- SoftmaxOutput

def test_softmax_output_forward_and_gradient():
    x, label = _arr(4, 3), onp.array([0, 2, 1, 2], "float32")
    _check(nd.SoftmaxOutput(nd.array(x), nd.array(label)), _softmax(x, 1))
    onehot = onp.eye(3, dtype="float32")[label.astype(int)]
    head = _arr(4, 3)  # ignored: SoftmaxOutput ends the network
    onp.testing.assert_allclose(_grad("SoftmaxOutput", x, label, head), _softmax(x, 1) - onehot, rtol=1e-5)
    onp.testing.assert_allclose(_grad("SoftmaxOutput", x, label, grad_scale=2.0, normalization="batch"),
                                (_softmax(x, 1) - onehot) * 2 / 4, rtol=1e-5)
    got = _grad("SoftmaxOutput", x, label, head, out_grad=True)
    onp.testing.assert_allclose(got, (_softmax(x, 1) - onehot) * head, rtol=1e-5)


def test_softmax_output_ignore_label_and_valid_normalization():
    x, label = _arr(4, 3), onp.array([0, -1, 1, -1], "float32")
    onehot = onp.eye(3, dtype="float32")[onp.maximum(label, 0).astype(int)]
    want = _softmax(x, 1) - onehot
    want[label == -1] = 0
    got = _grad("SoftmaxOutput", x, label, use_ignore=True, ignore_label=-1.0, normalization="valid")
    onp.testing.assert_allclose(got, want / 2, rtol=1e-5, atol=1e-7)


def test_softmax_output_multi_output_and_preserve_shape():
    x = _arr(2, 3, 4)  # (batch, classes, positions)
    label = RNG.integers(0, 3, (2, 4)).astype("float32")
    _check(nd.SoftmaxOutput(nd.array(x), nd.array(label), multi_output=True), _softmax(x, 1))
    onehot = onp.moveaxis(onp.eye(3, dtype="float32")[label.astype(int)], -1, 1)
    onp.testing.assert_allclose(_grad("SoftmaxOutput", x, label, multi_output=True),
                                (_softmax(x, 1) - onehot) / 4, rtol=1e-5)  # 'null' divides by positions
    label_p = RNG.integers(0, 4, (2, 3)).astype("float32")
    _check(nd.SoftmaxOutput(nd.array(x), nd.array(label_p), preserve_shape=True), _softmax(x, -1))
    onehot_p = onp.eye(4, dtype="float32")[label_p.astype(int)]
    onp.testing.assert_allclose(_grad("SoftmaxOutput", x, label_p, preserve_shape=True),
                                _softmax(x, -1) - onehot_p, rtol=1e-5)
    # default mode flattens all axes after the first into one softmax
    _check(nd.SoftmaxOutput(nd.array(x), nd.array([1.0, 5.0])), _softmax(x.reshape(2, 12), 1).reshape(2, 3, 4))


def test_softmax_output_smoothing_and_probability_labels():
    x, label = _arr(2, 4), onp.array([1, 3], "float32")
    target = onp.full((2, 4), 0.1 / 3, "float32")
    target[[0, 1], [1, 3]] = 0.9
    onp.testing.assert_allclose(_grad("SoftmaxOutput", x, label, smooth_alpha=0.1), _softmax(x, 1) - target,
                                rtol=1e-5)
    probs = _softmax(_arr(2, 4), 1)
    onp.testing.assert_allclose(_grad("SoftmaxOutput", x, probs), _softmax(x, 1) - probs, rtol=1e-5)


def test_softmax_output_bad_input():
    with pytest.raises(ValueError, match="SoftmaxOutput: label shape"):
        nd.SoftmaxOutput(nd.zeros((2, 3, 4)), nd.zeros((5,)), multi_output=True)
    with pytest.raises(ValueError, match="normalization"):
        nd.SoftmaxOutput(nd.zeros((2, 3)), nd.zeros((2,)), normalization="mean")
    assert get_op("Softmax") is get_op("SoftmaxOutput")


def test_softmax_cross_entropy():
    x, label = _arr(3, 4), onp.array([0, 3, 1], "float32")
    logp = onp.log(_softmax(x.astype(onp.float64), 1))
    _check(nd.softmax_cross_entropy(nd.array(x), nd.array(label)), [-logp[[0, 1, 2], [0, 3, 1]].sum()])
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        nd.softmax_cross_entropy(nd.array(x), nd.zeros((2,)))


# ----------------------------------------------------------------------------- regression outputs, MakeLoss

REGRESSION = [
    ("LinearRegressionOutput", lambda x: x, lambda out, lab: out - lab),
    ("LogisticRegressionOutput", lambda x: 1 / (1 + onp.exp(-x)), lambda out, lab: out - lab),
    ("MAERegressionOutput", lambda x: x, lambda out, lab: onp.sign(out - lab)),
]


@pytest.mark.parametrize("name,forward,backward", REGRESSION, ids=[r[0] for r in REGRESSION])
def test_regression_outputs(name, forward, backward):
    x, label = _arr(4, 3), _arr(4, 3)
    _check(getattr(nd, name)(nd.array(x), nd.array(label)), forward(x))
    want = backward(forward(x), label) * 0.5 / 3  # grad_scale / outputs per example
    onp.testing.assert_allclose(_grad(name, x, label, _arr(4, 3), grad_scale=0.5), want, rtol=1e-5)
    column = _arr(4, 1)
    onp.testing.assert_allclose(_grad(name, column, label[:, 0]), backward(forward(column), label[:, :1]),
                                rtol=1e-5)
    with pytest.raises(ValueError, match=f"{name}: label shape"):
        getattr(nd, name)(nd.array(x), nd.zeros((4, 2)))


def test_make_loss():
    x = _arr(4, 2)
    _check(nd.MakeLoss(nd.array(x)), x)
    _check(nd.make_loss(nd.array(x)), x)
    ones = onp.ones_like(x)
    onp.testing.assert_allclose(_grad_make_loss(x, _arr(4, 2)), ones)
    onp.testing.assert_allclose(_grad_make_loss(x, None, grad_scale=2.0, normalization="batch"), ones / 2)
    valid = max((x > 0.5).sum(), 1)
    onp.testing.assert_allclose(_grad_make_loss(x, None, normalization="valid", valid_thresh=0.5),
                                ones / valid, rtol=1e-6)
    with pytest.raises(ValueError, match="MakeLoss: normalization"):
        nd.MakeLoss(nd.array(x), normalization="x")


def _grad_make_loss(x, head, **params):
    compute = get_op("MakeLoss").compute
    head = onp.ones_like(x) if head is None else head
    return onp.asarray(jax.grad(lambda d: jnp.sum(compute(d, **params) * head))(jnp.asarray(x)))


# ----------------------------------------------------------------------------- linalg

def _spd(n, batch=()):
    a = _arr(*batch, n, n)
    return (a @ onp.swapaxes(a, -1, -2) + n * onp.eye(n)).astype("float32")


def test_gemm_family():
    a, b, c = _arr(2, 3, 4), _arr(2, 4, 5), _arr(2, 3, 5)
    _check(nd.linalg.gemm(nd.array(a), nd.array(b), nd.array(c), alpha=2.0, beta=0.5), 2 * a @ b + 0.5 * c)
    _check(nd.linalg_gemm(nd.array(onp.swapaxes(a, 1, 2)), nd.array(b), nd.array(c), transpose_a=True),
           a @ b + c)
    _check(nd.linalg.gemm2(nd.array(a), nd.array(onp.swapaxes(b, 1, 2)), transpose_b=True, alpha=3.0), 3 * a @ b)
    rows_first = onp.moveaxis(a, 1, 0)  # matrices with rows on axis 0 (axis=0), columns last
    _check(nd.linalg.gemm2(nd.array(rows_first), nd.array(onp.moveaxis(b, 1, 0)), axis=0),
           onp.moveaxis(a @ b, 1, 0))
    _check(nd.linalg.syrk(nd.array(a), alpha=2.0), 2 * a @ onp.swapaxes(a, 1, 2))
    _check(nd.linalg.syrk(nd.array(a), transpose=True), onp.swapaxes(a, 1, 2) @ a)
    with pytest.raises(ValueError, match="linalg_gemm2: cannot multiply"):
        nd.linalg.gemm2(nd.array(a), nd.array(a))
    with pytest.raises(ValueError, match="linalg_gemm: C has shape"):
        nd.linalg.gemm(nd.array(a), nd.array(b), nd.array(a))


def test_cholesky_family():
    spd = _spd(3, (2,))
    L = onp.linalg.cholesky(spd.astype(onp.float64))
    _check(nd.linalg.potrf(nd.array(spd)), L, rtol=1e-4)
    _check(nd.linalg.potrf(nd.array(spd), lower=False), onp.swapaxes(L, 1, 2), rtol=1e-4)
    _check(nd.linalg.potri(nd.array(L.astype("float32"))), onp.linalg.inv(spd), rtol=1e-3, atol=1e-5)
    _check(nd.linalg.sumlogdiag(nd.array(L.astype("float32"))), onp.log(onp.diagonal(L, 0, 1, 2)).sum(-1), rtol=1e-4)
    _check(nd.linalg.sumlogdiag(nd.array(spd[0])), [onp.log(onp.diag(spd[0])).sum()], rtol=1e-5)
    with pytest.raises(ValueError, match="linalg_potrf: expected square"):
        nd.linalg.potrf(nd.zeros((2, 3)))


def test_triangular_family():
    A = onp.tril(_arr(3, 3)) + 3 * onp.eye(3, dtype="float32")
    B = _arr(3, 2)
    _check(nd.linalg.trsm(nd.array(A), nd.array(B), alpha=2.0), onp.linalg.solve(A, 2 * B), rtol=1e-4)
    _check(nd.linalg.trsm(nd.array(A), nd.array(B), transpose=True), onp.linalg.solve(A.T, B), rtol=1e-4)
    _check(nd.linalg.trsm(nd.array(A), nd.array(B.T), rightside=True), B.T @ onp.linalg.inv(A), rtol=1e-4)
    _check(nd.linalg.trsm(nd.array(A.T), nd.array(B), lower=False), onp.linalg.solve(A.T, B), rtol=1e-4)
    full = _arr(3, 3)
    _check(nd.linalg.trmm(nd.array(full), nd.array(B)), onp.tril(full) @ B, rtol=1e-5)
    _check(nd.linalg.trmm(nd.array(full), nd.array(B.T), rightside=True, transpose=True, lower=False, alpha=2.0),
           2 * B.T @ onp.triu(full).T, rtol=1e-5)
    with pytest.raises(ValueError, match="linalg_trsm: B of shape"):
        nd.linalg.trsm(nd.array(A), nd.zeros((2, 2)))


def test_inverse_det_diag():
    spd = _spd(3, (2,))
    _check(nd.linalg.inverse(nd.array(spd)), onp.linalg.inv(spd), rtol=1e-4, atol=1e-6)
    _check(nd.linalg.det(nd.array(spd)), onp.linalg.det(spd), rtol=1e-4)
    _check(nd.linalg_det(nd.array(spd[0])), [onp.linalg.det(spd[0])], rtol=1e-4)
    sign, logdet = nd.linalg.slogdet(nd.array(-spd))
    want_sign, want_log = onp.linalg.slogdet(-spd)
    _check(sign, want_sign)
    _check(logdet, want_log, rtol=1e-4)
    m = _arr(2, 3, 3)
    _check(nd.linalg.extractdiag(nd.array(m), offset=1), onp.diagonal(m, 1, 1, 2))
    v = _arr(2, 3)
    want = onp.stack([onp.diag(r, -1) for r in v])
    _check(nd.linalg.makediag(nd.array(v), offset=-1), want)
    assert get_op("linalg_gemm2") is get_op("_linalg_gemm2")


# ----------------------------------------------------------------------------- NN ops through mx.nd

def test_nn_bindings_match_npx():
    x, w, b = _arr(2, 5), _arr(3, 5), _arr(3)
    _check(nd.FullyConnected(nd.array(x), nd.array(w), nd.array(b), num_hidden=3), x @ w.T + b)
    _check(nd.FullyConnected(data=nd.array(x), weight=nd.array(w), no_bias=True, num_hidden=3), x @ w.T)
    img, k = _arr(1, 2, 5, 5), _arr(4, 2, 3, 3)
    want = npx.convolution(npx_array(img), npx_array(k), kernel=(3, 3), num_filter=4, no_bias=True)
    _check(nd.Convolution(nd.array(img), nd.array(k), kernel=(3, 3), num_filter=4, no_bias=True), want.asnumpy())
    _check(nd.Pooling(nd.array(img), kernel=(2, 2), stride=(2, 2), pool_type="max"),
           img[:, :, :4, :4].reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)))
    _check(nd.Activation(nd.array(x), act_type="tanh"), onp.tanh(x), rtol=1e-5)
    _check(nd.relu(nd.array(x)), onp.maximum(x, 0))
    _check(nd.softmax(nd.array(x), axis=0), _softmax(x, 0))
    _check(nd.LeakyReLU(nd.array(x), slope=0.1), onp.where(x > 0, x, 0.1 * x))
    _check(nd.one_hot(nd.array([0.0, 2.0]), 3), onp.eye(3, dtype="float32")[[0, 2]])
    _check(nd.pick(nd.array(x), nd.array([1.0, 4.0]), 1), x[[0, 1], [1, 4]])
    _check(nd.topk(nd.array(x), k=2), onp.argsort(-x, axis=-1)[:, :2].astype("float32"))
    _check(nd.batch_dot(nd.array(_arr(2, 3, 4) * 0 + 1), nd.array(onp.ones((2, 4, 2), "float32"))),
           onp.full((2, 3, 2), 4.0, "float32"))
    _check(nd.BlockGrad(nd.array(x)), x)
    _check(nd.Embedding(nd.array([1.0, 0.0]), nd.array(w), input_dim=3, output_dim=5), w[[1, 0]])


def npx_array(values):
    import mxjax.numpy as mnp
    return mnp.array(values)


def test_training_mode_layers_return_ndarray():
    x = _arr(3, 4)
    _check(nd.Dropout(nd.array(x), p=0.5), x)  # not training: the identity
    dropped = nd.Dropout(nd.array(onp.ones((50,), "float32")), p=0.5, mode="always").asnumpy()
    assert set(onp.unique(dropped)) <= {0.0, 2.0}
    gamma, beta = onp.ones(4, "float32"), onp.zeros(4, "float32")
    mean, var = onp.zeros(4, "float32"), onp.ones(4, "float32")
    out = nd.BatchNorm(nd.array(x), nd.array(gamma), nd.array(beta), moving_mean=nd.array(mean),
                       moving_var=nd.array(var), axis=1, eps=1e-5)
    _check(out, x / onp.sqrt(1 + 1e-5), rtol=1e-5)
    with pytest.raises(ValueError, match="Dropout"):
        nd.Dropout(nd.array(x), p=2.0, mode="always")


# ----------------------------------------------------------------------------- fluent methods, random

def test_fluent_methods():
    x = nd.array(_arr(2, 3, low=0.5))
    values = x.asnumpy()
    _check(x.sum(axis=1, exclude=True), values.sum(axis=0))
    _check(x.argmax(axis=1), values.argmax(1).astype("float32"))
    _check(x.clip(0.7, 1.0), onp.clip(values, 0.7, 1.0))
    _check(x.expand_dims(0), values[None])
    _check(x.swapaxes(0, 1), values.T)
    _check(x.sqrt(), onp.sqrt(values), rtol=1e-6)
    _check(nd.array(values[:1]).broadcast_to((4, 0)), onp.broadcast_to(values[:1], (4, 3)))
    _check(x.zeros_like(), onp.zeros_like(values))
    assert [p.shape for p in x.split(3)] == [(2, 1)] * 3
    assert x.tostype("default") is x
    with pytest.raises(ValueError, match="tostype"):
        x.tostype("csr")
    for name in ("sum", "relu", "softmax", "one_hot", "pick", "topk", "norm", "slice_axis"):
        assert callable(getattr(x, name)), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_method'"):
        x.no_such_method
    # mx.np.ndarray has NumPy's methods, not the 1.x fluent ones
    with pytest.raises(AttributeError):
        x.as_np_ndarray().relu
    # 1.x comparisons give 0/1 in the operand dtype; NumPy's give bool
    assert (x > 0.7).dtype == onp.float32 and (x.as_np_ndarray() > 0.7).dtype == onp.bool_
    _check(x > 0.7, (values > 0.7).astype("float32"))


def test_nd_random_gives_ndarray():
    nd.random.seed(7)
    first = nd.random.uniform(0, 1, shape=(3,))
    nd.random.seed(7)
    again = nd.random.uniform(low=0, high=1, shape=(3,))
    assert type(first) is NDArray and first.shape == (3,)
    onp.testing.assert_array_equal(first.asnumpy(), again.asnumpy())
    assert type(nd.random.normal(shape=(2, 2))) is NDArray
    assert nd.random.randint(0, 5, shape=(4,)).dtype == onp.int32
