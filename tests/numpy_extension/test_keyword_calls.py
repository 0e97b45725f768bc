"""Front-end calls with parameters by keyword (``npx.activation(x, act_type="relu")``): their bound
parameters are kept per set of keyword values, so each call must still get exactly its own."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import npx

X = onp.array([-2.0, -0.5, 0.0, 1.5], onp.float32)


def _leaky(x, slope):
    return onp.where(x > 0, x, slope * x)


def test_each_call_gets_its_own_keyword_values():
    x = mx.np.array(X)
    for _ in range(2):  # the second round reads what the first kept
        for slope in (0.25, 0.5, 0.25, 2.0):
            onp.testing.assert_allclose(npx.leaky_relu(x, act_type="leaky", slope=slope).asnumpy(), _leaky(X, slope))
        for act, ref in (("relu", onp.maximum(X, 0)), ("tanh", onp.tanh(X)), ("relu", onp.maximum(X, 0))):
            onp.testing.assert_allclose(npx.activation(x, act_type=act).asnumpy(), ref, rtol=1e-6)


def test_errors_and_positional_parameters_after_keyword_calls():
    x = mx.np.array(X)
    npx.activation(x, act_type="relu")
    with pytest.raises(TypeError, match="unexpected keyword argument 'act'"):
        npx.activation(x, act="relu")
    onp.testing.assert_allclose(npx.activation(x, "tanh").asnumpy(), onp.tanh(X), rtol=1e-6)
    # legacy names ride along and change nothing
    a = mx.nd.array(X)
    for name in ("a1", "a2", "a1"):
        onp.testing.assert_allclose(mx.nd.Activation(a, act_type="sigmoid", name=name).asnumpy(),
                                    1 / (1 + onp.exp(-X)), rtol=1e-6)
