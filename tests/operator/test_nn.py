"""Activations, the softmax family, dropout and special functions (``mx.npx`` and the registered ops)
against NumPy/SciPy references; legacy attribute decoding and the train-mode flag."""
import functools
import math

import jax
import numpy as onp
import pytest
from oracle import check, run_op
from scipy import special

import mxjax as mx
from mxjax import _config
import mxjax.numpy_extension as npx
from mxjax.base import MXNetError
from mxjax._ndarray import invoke
from mxjax.operator import get_op

_run = run_op
_check = functools.partial(check, rtol=1e-05, atol=1e-06)
RNG = onp.random.default_rng(0)


def _x(*shape, low=-3.0, high=3.0, dtype="float32"):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def _softrelu(x):
    return onp.where(x > 20, x, onp.log1p(onp.exp(onp.minimum(x, 20))))


def _sigmoid(x):
    return 1 / (1 + onp.exp(-x))


SELU_L, SELU_A = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717

# (act_type, NumPy reference) for Activation
ACTIVATIONS = [
    ("relu", lambda x: onp.maximum(x, 0)),
    ("sigmoid", _sigmoid),
    ("log_sigmoid", lambda x: onp.log(_sigmoid(x))),
    ("tanh", onp.tanh),
    ("softrelu", _softrelu),
    ("softsign", lambda x: x / (1 + onp.abs(x))),
    ("mish", lambda x: x * onp.tanh(_softrelu(x))),
]


@pytest.mark.parametrize("act_type,ref", ACTIVATIONS, ids=[a for a, _ in ACTIVATIONS])
def test_activation(act_type, ref):
    x = _x(2, 3, 4)
    x[0, 0, 0] = 25.0  # softrelu's identity branch
    _check(npx.activation(mx.np.array(x), act_type=act_type), ref(x.astype(onp.float64)))
    _check(npx.activation(mx.np.array(x), act_type), ref(x.astype(onp.float64)))


# standalone activation functions: (npx function, reference)
UNARY = [
    (npx.relu, lambda x: onp.maximum(x, 0)),
    (npx.sigmoid, _sigmoid),
    (npx.log_sigmoid, lambda x: onp.log(_sigmoid(x))),
    (npx.softsign, lambda x: x / (1 + onp.abs(x))),
    (npx.mish, lambda x: x * onp.tanh(_softrelu(x))),
    (npx.erf, special.erf),
    (npx.gammaln, special.gammaln),
    (npx.digamma, special.digamma),
]


@pytest.mark.parametrize("fn,ref", UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary_functions(fn, ref):
    x = _x(3, 4, low=0.2, high=3.0)
    _check(fn(mx.np.array(x)), ref(x.astype(onp.float64)), rtol=2e-5)


def test_special_functions_dtypes_and_domains():
    x = _x(5, low=-0.9, high=0.9)
    _check(npx.erfinv(mx.np.array(x)), special.erfinv(x.astype(onp.float64)), rtol=1e-4)
    g = _x(5, low=0.5, high=5.0)
    _check(npx.gamma(mx.np.array(g)), special.gamma(g.astype(onp.float64)), rtol=2e-5)
    # integer input gives MXNet's default float32; float64 stays float64
    _check(npx.gamma(mx.np.array(onp.array([1, 2, 5]))), [1.0, 1.0, 24.0], rtol=1e-5)
    _check(npx.erf(mx.np.array(x, dtype="float64")), special.erf(x.astype(onp.float64)), dtype="float64")
    # the special function is 'gamma'; random gamma sampling is a different op
    assert get_op("gamma").name == "gamma" and get_op("_npx_gamma") is get_op("gamma")


def test_relu_keeps_integer_dtype_and_zero_gradient():
    got = npx.relu(mx.np.array(onp.array([-2, 0, 3], dtype="int32")))
    _check(got, [0, 0, 3], dtype="int32")
    grad = jax.grad(lambda v: get_op("relu").compute(v).sum())(onp.array([-1.0, 0.0, 2.0]))
    onp.testing.assert_array_equal(grad, [0.0, 0.0, 1.0])


def test_activation_bad_type():
    with pytest.raises(ValueError, match="Activation: act_type='swish' is not supported"):
        npx.activation(mx.np.ones((2,)), act_type="swish")


LEAKY = [
    ("leaky", {"slope": 0.1}, lambda x: onp.where(x > 0, x, 0.1 * x)),
    ("leaky", {}, lambda x: onp.where(x > 0, x, 0.25 * x)),  # MXNet's default slope
    ("elu", {"slope": 0.5}, lambda x: onp.where(x > 0, x, 0.5 * onp.expm1(x))),
    ("selu", {}, lambda x: SELU_L * onp.where(x > 0, x, SELU_A * onp.expm1(x))),
    ("gelu", {}, lambda x: 0.5 * x * (1 + special.erf(x / math.sqrt(2)))),
    ("gelu_tanh", {}, lambda x: 0.5 * x * (1 + onp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("rrelu", {"lower_bound": 0.1, "upper_bound": 0.3}, lambda x: onp.where(x > 0, x, 0.2 * x)),
]


@pytest.mark.parametrize("act_type,params,ref", LEAKY, ids=[f"{a}-{len(p)}" for a, p, _ in LEAKY])
def test_leaky_relu(act_type, params, ref):
    x = _x(2, 3, 4)
    _check(npx.leaky_relu(mx.np.array(x), act_type=act_type, **params), ref(x.astype(onp.float64)), rtol=2e-5)


def test_prelu_gamma_broadcasts_on_channel_axis():
    x = _x(2, 3, 4)
    gamma = onp.array([0.1, 0.2, 0.3], dtype="float32")
    want = onp.where(x > 0, x, x * gamma[None, :, None])
    _check(npx.leaky_relu(mx.np.array(x), mx.np.array(gamma), act_type="prelu"), want)
    _check(npx.leaky_relu(mx.np.array(x), mx.np.array(gamma[:1]), act_type="prelu"),
           onp.where(x > 0, x, 0.1 * x))
    with pytest.raises(ValueError, match=r"LeakyReLU: gamma of shape \(2,\) does not broadcast.*\(2, 3, 4\)"):
        npx.leaky_relu(mx.np.array(x), mx.np.ones(2), act_type="prelu")
    with pytest.raises(ValueError, match="LeakyReLU: act_type='prelu' needs the gamma input"):
        _run("LeakyReLU", [x], act_type="prelu")


def _np_softmax(x, axis, log=False):
    e = x - x.max(axis=axis, keepdims=True)
    lse = onp.log(onp.exp(e).sum(axis=axis, keepdims=True))
    return e - lse if log else onp.exp(e - lse)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("axis,temperature", [(-1, None), (0, 2.0), (1, 0.5)])
def test_softmax(log, axis, temperature):
    x = _x(3, 4, 5)
    fn = npx.log_softmax if log else npx.softmax
    want = _np_softmax(x.astype(onp.float64) / (temperature or 1.0), axis, log)
    _check(fn(mx.np.array(x), axis=axis, temperature=temperature), want, rtol=2e-5)


def test_softmax_with_length_and_dtype():
    x = _x(2, 4)
    length = onp.array([2, 4])
    want = onp.zeros((2, 4))
    want[0, :2] = _np_softmax(x[0, :2].astype(onp.float64), -1)
    want[1] = _np_softmax(x[1].astype(onp.float64), -1)
    _check(npx.softmax(mx.np.array(x), length=mx.np.array(length), use_length=True), want)
    log_want = onp.where(want > 0, onp.log(onp.where(want > 0, want, 1)), 0.0)
    _check(npx.log_softmax(mx.np.array(x), -1, mx.np.array(length), None, True), log_want, rtol=2e-5)
    _check(npx.softmax(mx.np.array(x), dtype="float64"), _np_softmax(x.astype(onp.float64), -1), dtype="float64")
    # integer input: MXNet's float32 default
    _check(npx.softmax(mx.np.array(onp.array([[1, 2]]))), _np_softmax(onp.array([[1.0, 2.0]]), -1))
    _check(_run("softmin", [x], axis=1), _np_softmax(-x.astype(onp.float64), 1))
    with pytest.raises(ValueError, match=r"softmax: length has shape \(3,\) but \(2,\) is expected"):
        npx.softmax(mx.np.array(x), length=mx.np.ones(3), use_length=True)
    with pytest.raises(ValueError, match="softmax: use_length=True needs the length input"):
        npx.softmax(mx.np.array(x), use_length=True)
    with pytest.raises(ValueError, match="softmax: axis 2 is out of bounds"):
        npx.softmax(mx.np.array(x), axis=2)


def test_masked_softmax():
    x = onp.arange(10, dtype="float32").reshape(2, 5)
    mask = onp.array([1, 0, 1, 0, 1], dtype=bool)
    got = npx.masked_softmax(mx.np.array(x), mx.np.array(mask))
    want = onp.where(mask, onp.exp(x - x.max(1, keepdims=True)), 0)
    want = want / want.sum(1, keepdims=True)
    _check(got, want)
    # MXNet's documented example (axis 0, mask broadcast over rows)
    _check(npx.masked_softmax(mx.np.array(x), mx.np.array(mask), axis=0)[:, 0], [0.00669285, 0.9933072])
    logs = npx.masked_log_softmax(mx.np.array(onp.arange(5, dtype="float32")), mx.np.array(mask))
    onp.testing.assert_allclose(logs.asnumpy(), [-4.1429286, -onp.inf, -2.1429286, -onp.inf, -0.14292854],
                                rtol=5e-5)
    _check(npx.masked_softmax(mx.np.array(x), mx.np.array(mask), temperature=2.0)[0, 4],
           1 / (1 + math.exp(-1) + math.exp(-2)))
    with pytest.raises(ValueError, match=r"masked_softmax: mask of shape \(3,\) does not broadcast"):
        npx.masked_softmax(mx.np.array(x), mx.np.ones(3))


def test_softmax_activation_modes():
    x = _x(2, 3, 2)
    _check(_run("SoftmaxActivation", [x]), _np_softmax(x.reshape(2, -1).astype(onp.float64), 1).reshape(x.shape))
    _check(_run("SoftmaxActivation", [x], mode="channel"), _np_softmax(x.astype(onp.float64), 1))
    with pytest.raises(ValueError, match="SoftmaxActivation: mode='pixel' is not supported"):
        _run("SoftmaxActivation", [x], mode="pixel")


def test_dropout_inference_is_identity_and_always_scales():
    x = onp.ones((20, 30), dtype="float32")
    onp.testing.assert_array_equal(npx.dropout(mx.np.array(x), p=0.5).asnumpy(), x)  # not training
    got = npx.dropout(mx.np.array(x), p=0.25, mode="always").asnumpy()
    assert set(onp.unique(got)) <= {0.0, onp.float32(1 / 0.75)}
    assert 0.6 < (got != 0).mean() < 0.9
    shared = npx.dropout(mx.np.array(x), p=0.5, mode="always", axes=(0,)).asnumpy()
    assert (shared == shared[:1]).all()  # one mask value per column
    assert (npx.dropout(mx.np.array(x), p=1.0, mode="always").asnumpy() == 0).all()
    with pytest.raises(ValueError, match=r"Dropout: p=1.5 must lie in \[0, 1\]"):
        npx.dropout(mx.np.array(x), p=1.5, mode="always")
    with pytest.raises(ValueError, match="Dropout: mode='sometimes' is not supported"):
        npx.dropout(mx.np.array(x), mode="sometimes")


def test_dropout_follows_the_training_flag():
    with _config.training(True):  # what autograd.record(train_mode=True) sets
        x = mx.np.ones((50, 40))
        got = npx.dropout(x, p=0.5).asnumpy()
        assert 0.3 < (got == 0).mean() < 0.7 and set(onp.unique(got)) == {0.0, 2.0}
        # the op itself: _train is an ordinary (non-MXNet-attribute) parameter with default False
        key = onp.array([0, 7], dtype="uint32")
        onp.testing.assert_array_equal(_run("Dropout", [key, mx.np.ones((4, 4))], p=0.5).asnumpy(), onp.ones((4, 4)))
        trained = _run("Dropout", [key, mx.np.ones((4, 4))], p=0.5, _train=True).asnumpy()
        assert set(onp.unique(trained)) <= {0.0, 2.0}
        # rrelu draws slopes in [lower, upper) in training
        neg = -onp.ones((200,), dtype="float32")
        slopes = -npx.leaky_relu(mx.np.array(neg), act_type="rrelu", lower_bound=0.1, upper_bound=0.3).asnumpy()
        assert slopes.min() >= 0.1 and slopes.max() < 0.3 and slopes.std() > 0.01
        drawn = _run("_rrelu_train", [key, neg], lower_bound=0.5, upper_bound=0.5).asnumpy()
        onp.testing.assert_allclose(drawn, neg * 0.5)


def test_legacy_attribute_strings_decode():
    op = get_op("Activation")
    assert op.decode_params({"act_type": "relu"}) == {"act_type": "relu"}
    leaky = get_op("LeakyReLU").decode_params({"act_type": "elu", "slope": "0.3"})
    assert leaky == {"act_type": "elu", "slope": 0.3}
    soft = get_op("softmax").decode_params({"axis": "-1", "temperature": "None", "use_length": "False"})
    assert soft == {"axis": -1, "temperature": None, "use_length": False}
    drop = get_op("Dropout").decode_params({"p": "0.5", "mode": "training", "axes": "()"})
    assert drop == {"p": 0.5, "mode": "training", "axes": ()}
    with pytest.raises(MXNetError, match="Activation: unknown parameter"):
        op.decode_params({"act": "relu"})


def test_npx_reshape_binds_the_npx_reshape_op():
    x = mx.np.array(onp.arange(24, dtype="float32").reshape(2, 3, 4))
    assert npx.reshape.op is get_op("_npx_reshape")
    assert npx.reshape(x, (-2, -1)).shape == (2, 12)
    assert npx.reshape(x, (-1, 4), reverse=True).shape == (6, 4)
    _check(npx.reshape(x, newshape=(6, -1)), onp.arange(24).reshape(6, 4))


def test_npx_names_and_aliases():
    for name in ("_npx_activation", "_npx_leaky_relu", "_npx_softmax", "_npx_dropout", "_npx_relu"):
        assert get_op(name).name in ("Activation", "LeakyReLU", "softmax", "Dropout", "relu")
    assert npx.softmax.__module__ == "mxjax.numpy_extension"
    assert "softmax" in npx.__all__ and "set_np" in npx.__all__
    # MXNet 2's npx functions accept (and ignore) Gluon's name= argument
    _check(npx.activation(mx.np.array([-1.0, 2.0]), act_type="relu", name="fwd"), [0.0, 2.0])
    out = mx.np.zeros((2,))
    npx.sigmoid(mx.np.array([0.0, 0.0]), out=out)
    _check(out, [0.5, 0.5])
