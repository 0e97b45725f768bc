"""Hybridized convolutions take their weights in the layout they are read in, kept from call
to call (mxjax/gluon/_weight_layout.py): pre-transposed for XLA's CPU convolution, packed
once for oneDNN's.  Results must equal the imperative ones, a weight that changes (set_data,
a Trainer step) must be seen by the next call, and an unchanged weight is packed only once."""
import numpy as onp
import pytest

import mxjax as mx
import mxjax._onednn as onednn
from mxjax import autograd, gluon
from mxjax._onednn import ops, packing
from mxjax.gluon import nn
from onednn_support import BFLOAT16_REASON, takes_bfloat16

BACKENDS = ["xla", pytest.param("onednn", marks=pytest.mark.skipif(
    not onednn.available(), reason=f"oneDNN extension not built: {onednn.load_error()}"))]


@pytest.fixture(params=BACKENDS)
def channels(request, monkeypatch):
    """The convolutions' width: 4 on XLA (oneDNN switched off), 40 on oneDNN (thinner inputs
    run their inference on XLA's convolution, see ops.INFER_XLA_MAX_CHANNELS)."""
    if request.param == "xla":
        monkeypatch.setattr(onednn, "enabled", lambda: False)
        monkeypatch.setattr(ops, "enabled", lambda: False)
        return 4
    return 40


def _net(dims, layout, channels, groups=1):
    conv = {1: nn.Conv1D, 2: nn.Conv2D, 3: nn.Conv3D}[dims]
    net = nn.HybridSequential()
    net.add(conv(channels, 3, padding=1, layout=layout, groups=groups, in_channels=channels, activation='relu'),
            conv(2, 1, layout=layout, in_channels=channels))
    net.initialize(mx.init.Uniform(0.5))
    return net


def _input(dims, layout, channels, rng, batch=2):
    spatial = (5,) * dims
    shape = (batch,) + spatial + (channels,) if layout.endswith('C') else (batch, channels) + spatial
    return mx.np.array(rng.standard_normal(shape).astype(onp.float32))


@pytest.mark.parametrize('dims, layout, groups', [
    (1, 'NCW', 1), (2, 'NCHW', 1), (2, 'NCHW', 2), (2, 'NHWC', 1), (3, 'NCDHW', 1)])
def test_hybridized_conv_equals_imperative(channels, dims, layout, groups):
    rng = onp.random.default_rng(0)
    net, x = _net(dims, layout, channels, groups), _input(dims, layout, channels, rng)
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)  # the kept copy


def test_changed_weights_are_seen_by_the_next_call(channels):
    rng = onp.random.default_rng(1)
    net, x = _net(2, 'NCHW', channels), _input(2, 'NCHW', channels, rng)
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


def test_a_weight_that_is_also_read_elsewhere_stays_as_it_is(channels):
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 3, in_channels=channels)

        def forward(self, x):
            return self.conv(x).sum() + self.conv.weight.data().sum()

    net = Net()
    net.initialize(mx.init.Uniform(0.5))
    x = mx.np.array(onp.random.default_rng(2).standard_normal((1, channels, 4, 4)).astype(onp.float32))
    expected = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-4)


onednn_only = pytest.mark.skipif(not onednn.available(), reason=f"oneDNN extension not built: {onednn.load_error()}")


@pytest.fixture
def packs(monkeypatch):
    """The (weight shape, configuration) of every weight packed from here on."""
    seen, real = [], packing.pack
    monkeypatch.setattr(packing, "pack", lambda w, flat: seen.append((tuple(w.shape), flat)) or real(w, flat))
    return seen


@onednn_only
def test_weights_are_packed_once_until_they_change(packs):
    rng = onp.random.default_rng(3)
    net, x = _net(2, 'NCHW', 40), _input(2, 'NCHW', 40, rng)
    expected = net(x).asnumpy()
    net.hybridize()
    for _ in range(4):
        onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert sorted(shape for shape, _ in packs) == [(2, 40, 1, 1), (40, 40, 3, 3)]
    net[1].weight.set_data(net[1].weight.data() * 3)
    got = net(x).asnumpy()
    assert [shape for shape, _ in packs[2:]] == [(2, 40, 1, 1)]  # only the changed weight again
    net.hybridize(active=False)
    onp.testing.assert_allclose(got, net(x).asnumpy(), rtol=1e-5, atol=1e-5)
    with autograd.record():  # a recorded call differentiates the weights as they are: no packing
        net.hybridize()
        net(x).sum().backward()
    assert len(packs) == 3


@onednn_only
def test_new_input_shape_packs_for_its_own_configuration(packs):
    rng = onp.random.default_rng(4)
    net = _net(2, 'NHWC', 40)
    small, large = _input(2, 'NHWC', 40, rng, batch=1), _input(2, 'NHWC', 40, rng, batch=3)
    expected = {1: net(small).asnumpy(), 3: net(large).asnumpy()}
    net.hybridize()
    for x in (small, large, small, large):
        onp.testing.assert_allclose(net(x).asnumpy(), expected[x.shape[0]], rtol=1e-5, atol=1e-5)
    assert len(packs) == 4 and len({flat for _, flat in packs}) == 4  # two weights, two batch sizes


@onednn_only
def test_a_weight_used_at_two_shapes_stays_unpacked(packs):
    class Twice(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(6, 3, in_channels=40)

        def forward(self, a, b):
            return self.conv(a).sum() + self.conv(b).sum()

    net = Twice()
    net.initialize(mx.init.Uniform(0.5))
    rng = onp.random.default_rng(5)
    a, b = (mx.np.array(rng.standard_normal(s).astype(onp.float32)) for s in ((1, 40, 5, 5), (2, 40, 7, 6)))
    expected = net(a, b).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(a, b).asnumpy(), expected, rtol=1e-5, atol=1e-3)
    assert packs == []


@onednn_only
@pytest.mark.skipif(not takes_bfloat16(), reason=BFLOAT16_REASON)
def test_bfloat16_weights_packed():
    rng = onp.random.default_rng(6)
    net, x = _net(2, 'NCHW', 40), _input(2, 'NCHW', 40, rng)
    net.cast('bfloat16')
    x = x.astype('bfloat16')
    expected = net(x).astype('float32').asnumpy()
    before = ops.stats["onednn_packed"]
    net.hybridize()
    got = net(x).astype('float32').asnumpy()
    assert ops.stats["onednn_packed"] - before == 2
    onp.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2)
