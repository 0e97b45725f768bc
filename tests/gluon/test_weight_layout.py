"""Hybridized convolutions take their weights pre-transposed on CPU (see
mxjax/gluon/_weight_layout.py): the results must equal the imperative ones, and a weight that
changes (set_data, a Trainer step, a cast) must be seen by the next call."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn


def _net(dims, layout, groups=1):
    conv = {1: nn.Conv1D, 2: nn.Conv2D, 3: nn.Conv3D}[dims]
    net = nn.HybridSequential()
    net.add(conv(4, 3, padding=1, layout=layout, groups=groups, in_channels=4, activation='relu'),
            conv(2, 1, layout=layout, in_channels=4))
    net.initialize(mx.init.Uniform(0.5))
    return net


def _input(dims, layout, rng):
    spatial = (5,) * dims
    shape = (2,) + spatial + (4,) if layout.endswith('C') else (2, 4) + spatial
    return mx.np.array(rng.standard_normal(shape).astype(onp.float32))


@pytest.mark.parametrize('dims, layout, groups', [
    (1, 'NCW', 1), (2, 'NCHW', 1), (2, 'NCHW', 2), (2, 'NHWC', 1), (3, 'NCDHW', 1)])
def test_hybridized_conv_equals_imperative(dims, layout, groups):
    rng = onp.random.default_rng(0)
    net, x = _net(dims, layout, groups), _input(dims, layout, rng)
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)  # the kept copy


def test_changed_weights_are_seen_by_the_next_call():
    rng = onp.random.default_rng(1)
    net, x = _net(2, 'NCHW'), _input(2, 'NCHW', rng)
    net.hybridize()
    net(x)
    weight = net[0].weight
    weight.set_data(weight.data() * 2)
    net.hybridize(active=False)
    expected = net(x).asnumpy()
    net.hybridize()
    net(x)
    weight.set_data(weight.data() * 1)  # warm the cache with the new weight
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)

    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    for _ in range(2):  # recorded steps between inference calls
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(1)
        after = net(x).asnumpy()
        net.hybridize(active=False)
        onp.testing.assert_allclose(after, net(x).asnumpy(), rtol=1e-5, atol=1e-6)
        net.hybridize()


def test_a_weight_that_is_also_read_elsewhere_stays_as_it_is():
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 3, in_channels=2)

        def forward(self, x):
            return self.conv(x).sum() + self.conv.weight.data().sum()

    net = Net()
    net.initialize(mx.init.Uniform(0.5))
    x = mx.np.array(onp.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype(onp.float32))
    expected = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-5)
