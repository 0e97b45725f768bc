"""An executor's arrays: its outputs (allocated at bind and written by each forward, as MXNet 1.x's;
new at each forward for MXNet 2.0's) and ``reshape`` (a new executor sharing the arrays whose shapes
stay).  Oracles: NumPy, and MXNet 1.9.1's behaviour checked there."""
from __future__ import annotations

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetValueError


# ----------------------------------------------------------------------------- output arrays

def test_outputs_are_allocated_at_bind_and_written_by_each_forward():
    """MXNet 1.9.1's executor (checked there): ``outputs`` exist after bind with the inferred shapes, and
    each forward writes into them, so ``out = ex.outputs[0]`` held across forwards shows the latest."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    ex = mx.sym.Group([a * 2 + b, mx.sym.sum(a - b, axis=0, keepdims=True)]).simple_bind(mx.cpu(), a=(2, 3), b=(2, 3))
    held = ex.outputs
    assert [o.shape for o in held] == [(2, 3), (1, 3)] and all(o.dtype == onp.float32 for o in held)
    rs = onp.random.RandomState(0)
    for _ in range(3):
        x, y = rs.rand(2, 3).astype(onp.float32), rs.rand(2, 3).astype(onp.float32)
        ex.arg_dict["a"][:] = mx.nd.array(x)
        returned = ex.forward(b=mx.nd.array(y))
        onp.testing.assert_allclose(held[0].asnumpy(), x * 2 + y, rtol=1e-6)
        onp.testing.assert_allclose(held[1].asnumpy(), (x - y).sum(0, keepdims=True), rtol=1e-6)
        assert [o.asnumpy().tolist() for o in returned] == [o.asnumpy().tolist() for o in held]


def test_numpy_symbols_and_underscore_bind_give_new_outputs_each_forward():
    """MXNet 2.0's executors (``_bind``, NumPy symbols) give new arrays: an output kept from one forward
    keeps its values."""
    a = mx.sym.var("a")
    for ex in ((a * 2)._bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0])}),
               (a.as_np_ndarray() * 2).bind(mx.cpu(), {"a": mx.np.array([1.0, 2.0])})):
        assert ex.outputs == []
        first = ex.forward()[0]
        ex.forward(a=mx.nd.array([5.0, 5.0]))
        assert first.asnumpy().tolist() == [2.0, 4.0] and ex.outputs[0].asnumpy().tolist() == [10.0, 10.0]


def _softmax_executor():
    data = mx.sym.var("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="softmax")
    ex = net.simple_bind(mx.cpu(), data=(4, 5))
    ex.arg_dict["fc_weight"][:] = mx.nd.array(onp.random.RandomState(0).rand(3, 5))
    return ex


def test_reshape_shares_parameters_and_gradients():
    """A smaller batch through the reshaped executor: the same weights, and its backward writes the
    gradient the original executor holds (MXNet 1.9.1 shares them the same way)."""
    ex = _softmax_executor()
    small = ex.reshape(data=(2, 5), softmax_label=(2,))
    assert small.arg_dict["fc_weight"] is ex.arg_dict["fc_weight"] and small.arg_dict["data"].shape == (2, 5)
    x, label = onp.random.RandomState(1).rand(2, 5).astype(onp.float32), onp.array([0, 2], onp.float32)
    out = small.forward(is_train=True, data=mx.nd.array(x), softmax_label=mx.nd.array(label))[0].asnumpy()
    w = ex.arg_dict["fc_weight"].asnumpy()
    logits = x @ w.T
    prob = onp.exp(logits - logits.max(1, keepdims=True))
    prob /= prob.sum(1, keepdims=True)
    onp.testing.assert_allclose(out, prob, rtol=1e-5)
    small.backward()
    onp.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), (prob - onp.eye(3)[[0, 2]]).T @ x, rtol=1e-5)
    assert ex.reshape(partial_shaping=True, data=(3, 5)).arg_dict["softmax_label"].shape == (3,)
    assert ex.reshape(allow_up_sizing=True, data=(8, 5), softmax_label=(8,)).outputs[0].shape == (8, 3)
    assert ex.get_optimized_symbol().list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]


@pytest.mark.parametrize("kwargs,match", [({"data": (2, 5)}, "partial_shaping"),
                                          ({"data": (8, 5), "softmax_label": (8,)}, "allow_up_sizing"),
                                          ({"nope": (1,)}, "not an argument")])
def test_reshape_refuses_what_mxnet_refuses(kwargs, match):
    with pytest.raises(MXNetValueError, match=match):
        _softmax_executor().reshape(**kwargs)
