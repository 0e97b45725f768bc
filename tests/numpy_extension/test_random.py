"""mx.npx.random (bernoulli, uniform_n, normal_n) and mx.nd.contrib bindings."""
import numpy as onp
import pytest

import mxjax as mx


def test_bernoulli_rate_and_seed():
    mx.random.seed(3)
    draws = mx.npx.random.bernoulli(0.3, size=(4000,))
    assert draws.dtype == onp.float32 and set(onp.unique(draws.asnumpy())) <= {0.0, 1.0}
    assert abs(draws.asnumpy().mean() - 0.3) < 0.03
    mx.random.seed(3)
    onp.testing.assert_array_equal(mx.npx.random.bernoulli(0.3, size=(4000,)).asnumpy(), draws.asnumpy())
    logits = mx.npx.random.bernoulli(logit=mx.np.array([-50.0, 50.0]))
    assert logits.tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="exactly one of prob and logit"):
        mx.npx.random.bernoulli(0.3, 0.1)


def test_uniform_n_and_normal_n_prepend_batch_shape():
    low, high = mx.np.array([0.0, 10.0]), mx.np.array([1.0, 11.0])
    u = mx.npx.random.uniform_n(low, high, batch_shape=(500,)).asnumpy()
    assert u.shape == (500, 2)
    assert (u[:, 0] >= 0).all() and (u[:, 0] < 1).all() and (u[:, 1] >= 10).all() and (u[:, 1] < 11).all()
    n = mx.npx.random.normal_n(mx.np.array([0.0, 5.0]), 1.0, batch_shape=(4000,)).asnumpy()
    assert n.shape == (4000, 2)
    onp.testing.assert_allclose(n.mean(axis=0), [0.0, 5.0], atol=0.1)


def test_nd_contrib_bindings():
    x = mx.nd.ones((2, 3))
    assert mx.nd.contrib.arange_like(x, axis=1).asnumpy().tolist() == [0.0, 1.0, 2.0]
    img = mx.nd.array(onp.arange(16, dtype=onp.float32).reshape(1, 1, 4, 4))
    out = mx.nd.contrib.BilinearResize2D(img, height=2, width=2)
    assert type(out) is mx.nd.NDArray and out.shape == (1, 1, 2, 2)
    onp.testing.assert_allclose(out.asnumpy()[0, 0], [[0.0, 3.0], [12.0, 15.0]])  # align_corners=True
