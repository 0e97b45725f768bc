"""gluon.nn activation layers and Concatenate containers against NumPy, hybridized == imperative."""
import functools
import math

import numpy as onp
import pytest
from oracle import check_hybrid as oracle_check_hybrid

import mxjax as mx
from mxjax import autograd, initializer
from mxjax.gluon import nn

RNG = onp.random.default_rng(2)
X = RNG.normal(size=(3, 4)).astype(onp.float32) * 2
ERF = onp.vectorize(math.erf)


check_hybrid = functools.partial(oracle_check_hybrid, rtol=1e-05, atol=1e-06)


def _sigmoid(x):
    return 1 / (1 + onp.exp(-x))


_SELU_A, _SELU_L = 1.6732632423543772, 1.0507009873554805

ACTIVATIONS = [  # (block factory, NumPy reference)
    (lambda: nn.LeakyReLU(0.1), lambda x: onp.where(x > 0, x, 0.1 * x)),
    (lambda: nn.ELU(), lambda x: onp.where(x > 0, x, onp.expm1(x))),
    (lambda: nn.ELU(alpha=0.5), lambda x: onp.where(x > 0, x, 0.5 * onp.expm1(x))),
    (lambda: nn.SELU(), lambda x: _SELU_L * onp.where(x > 0, x, _SELU_A * onp.expm1(x))),
    (lambda: nn.GELU(), lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2)))),
    (lambda: nn.GELU(approximation="tanh"),
     lambda x: 0.5 * x * (1 + onp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (lambda: nn.Swish(), lambda x: x * _sigmoid(x)),
    (lambda: nn.Swish(beta=2.0), lambda x: x * _sigmoid(2 * x)),
    (lambda: nn.SiLU(), lambda x: x * _sigmoid(x)),
    (lambda: nn.PReLU(), lambda x: onp.where(x > 0, x, 0.25 * x)),
]


@pytest.mark.parametrize("make, ref", ACTIVATIONS)
def test_activation_matches_numpy_and_hybrid(make, ref):
    block = make()
    block.initialize()
    out = check_hybrid(block, X)
    assert out.dtype == onp.float32
    onp.testing.assert_allclose(out, ref(X.astype(onp.float64)), rtol=1e-5, atol=1e-6)


def test_prelu_per_channel_and_gradient():
    prelu = nn.PReLU(alpha_initializer=initializer.Constant(0.1), in_channels=4)
    prelu.initialize()
    assert prelu.alpha.shape == (4,)
    alpha = onp.array([0.1, 0.2, 0.3, 0.4], onp.float32)
    prelu.alpha.set_data(mx.np.array(alpha))
    x = RNG.normal(size=(2, 4, 3)).astype(onp.float32)
    out = check_hybrid(prelu, x)
    onp.testing.assert_allclose(out, onp.where(x > 0, x, alpha[:, None] * x), rtol=1e-6)
    with autograd.record():
        loss = prelu(mx.np.array(x)).sum()
    loss.backward()
    onp.testing.assert_allclose(prelu.alpha.grad().asnumpy(), onp.where(x > 0, 0, x).sum(axis=(0, 2)), rtol=1e-5)


def test_activation_errors():
    with pytest.raises(mx.MXNetError, match="GELU: approximation must be 'erf' or 'tanh'"):
        nn.GELU(approximation="fast")
    with pytest.raises(mx.MXNetError, match="LeakyReLU: alpha must be non-negative"):
        nn.LeakyReLU(-1)
    prelu = nn.PReLU(in_channels=3)
    prelu.initialize()
    with pytest.raises(mx.MXNetError, match=r"LeakyReLU.*gamma of shape \(3,\).*\(2, 4\)"):
        prelu(mx.np.ones((2, 4)))


@pytest.mark.parametrize("cls", [nn.Concatenate, nn.HybridConcatenate])
def test_concatenate(cls):
    net = cls(axis=1)
    net.add(nn.Dense(3), nn.Identity(), nn.Dense(2, activation="relu"))
    net.initialize()
    out = net(mx.np.array(X)).asnumpy()
    w0, b0, w1, b1 = [p.data().asnumpy() for p in net.collect_params().values()]
    want = onp.concatenate([X @ w0.T + b0, X, onp.maximum(X @ w1.T + b1, 0)], axis=1)
    assert out.shape == (3, 9)
    onp.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert list(net.collect_params()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(net) == 3 and isinstance(net[0], nn.Dense) and len(net[1:]) == 2 and net[1:]._axis == 1
    if cls is nn.HybridConcatenate:
        check_hybrid(net, X)
    default = cls()
    default.add(nn.Identity(), nn.Identity())
    assert default(mx.np.array(X)).shape == (3, 8)
