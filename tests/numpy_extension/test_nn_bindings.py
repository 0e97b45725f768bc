"""npx bindings with npx's own argument spellings (x=, data= for one_hot) and instance_norm."""
import numpy as onp

import mxjax as mx
from mxjax import npx


def test_npx_keyword_spellings():
    x, w = mx.np.ones((2, 3)), mx.np.ones((4, 3))
    onp.testing.assert_array_equal(npx.fully_connected(x=x, weight=w, num_hidden=4).asnumpy(), onp.full((2, 4), 3.0))
    onp.testing.assert_array_equal(npx.one_hot(data=mx.np.array([0, 2]), depth=3).asnumpy(), onp.eye(3)[[0, 2]])
    a, b = mx.np.ones((2, 3, 4)), mx.np.ones((2, 4, 5))
    assert npx.batch_dot(a=a, b=b).shape == (2, 3, 5)


def test_instance_norm_matches_numpy():
    rng = onp.random.default_rng(0)
    data = rng.normal(size=(2, 3, 5)).astype(onp.float32)
    gamma, beta = rng.normal(size=3).astype(onp.float32), rng.normal(size=3).astype(onp.float32)
    mean = data.mean(axis=2, keepdims=True)
    var = data.var(axis=2, keepdims=True)
    want = (data - mean) / onp.sqrt(var + 1e-3) * gamma[:, None] + beta[:, None]
    got = npx.instance_norm(mx.np.array(data), mx.np.array(gamma), mx.np.array(beta))
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
