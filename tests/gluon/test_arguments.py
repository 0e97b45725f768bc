"""Misspelled keyword arguments and missing inputs are errors, as in MXNet 2.0 (which raises
TypeError from HybridBlock.__init__ and ValueError for a call with no array), here with the
closest accepted names in the message."""
import inspect

import numpy as onp
import pytest

import mxjax as mx
from mxjax.gluon import loss, model_zoo, nn, rnn


@pytest.mark.parametrize('make, wrong, suggestion', [
    (lambda **kw: nn.Dense(4, **kw), 'actvation', 'activation'),
    (lambda **kw: nn.Conv2D(4, 3, **kw), 'stride', 'strides'),
    (lambda **kw: nn.Conv1DTranspose(4, 3, **kw), 'output_pading', 'output_padding'),
    (lambda **kw: nn.BatchNorm(**kw), 'momentun', 'momentum'),
    (lambda **kw: nn.LayerNorm(**kw), 'epsilom', 'epsilon'),
    (lambda **kw: nn.SyncBatchNorm(**kw), 'num_device', 'num_devices'),
    (lambda **kw: nn.MaxPool2D(2, **kw), 'strids', 'strides'),
    (lambda **kw: nn.AvgPool1D(**kw), 'pool_siz', 'pool_size'),
    (lambda **kw: nn.Dropout(0.5, **kw), 'axis', 'axes'),
    (lambda **kw: nn.LeakyReLU(0.1, **kw), 'alpah', 'alpha'),
    (lambda **kw: nn.Embedding(10, 4, **kw), 'sparse_gard', 'sparse_grad'),
    (lambda **kw: loss.L2Loss(**kw), 'wieght', 'weight'),
    (lambda **kw: loss.SoftmaxCrossEntropyLoss(**kw), 'sparse_labels', 'sparse_label'),
    (lambda **kw: rnn.LSTM(8, **kw), 'num_layer', 'num_layers'),
    (lambda **kw: model_zoo.vision.resnet18_v1(**kw), 'clases', 'classes'),
])
def test_misspelled_keyword_is_a_type_error_with_the_close_match(make, wrong, suggestion):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{wrong}'.*'{suggestion}'"):
        make(**{wrong: 1})
    make()  # the same constructor without it works


def test_removed_1x_keywords_say_what_to_do():
    with pytest.raises(TypeError, match="'prefix'.*removed block prefixes"):
        nn.Dense(4, prefix='fc_')
    with pytest.raises(TypeError, match="'params'.*share_parameters"):
        nn.Dense(4, params=None)


def test_user_block_forwarding_kwargs_is_checked_too():
    class Net(mx.gluon.HybridBlock):
        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.fc = nn.Dense(units)

        def forward(self, x):
            return self.fc(x)

    with pytest.raises(TypeError, match="Net\\(\\) got an unexpected keyword argument 'unit'; did you mean 'units'"):
        Net(unit=4)
    assert Net(units=4).fc._units == 4


@pytest.mark.parametrize('hybridize', [False, True])
def test_layer_called_without_an_array(hybridize):
    net = nn.Dense(4, in_units=3)
    net.initialize()
    if hybridize:
        net.hybridize()
    with pytest.raises(ValueError, match="Dense: a HybridBlock needs at least one array.*NoneType"):
        net(None)
    x = onp.ones((2, 3), dtype=onp.float32)
    onp.testing.assert_allclose(net(mx.np.array(x)).asnumpy(), x @ net.weight.data().asnumpy().T, rtol=1e-6)


def test_hybridize_rejects_unknown_options():
    net = nn.HybridSequential()
    net.add(nn.Dense(2))
    with pytest.raises(TypeError, match="hybridize\\(\\) got an unexpected keyword argument 'static_aloc'; "
                                        "did you mean 'static_alloc'"):
        net.hybridize(static_aloc=True)
    plain = mx.gluon.Block()
    with pytest.raises(TypeError, match="'inline_limt'"):
        plain.hybridize(inline_limit=2, inline_limt=3)
    net.hybridize(static_alloc=True, static_shape=True, inline_limit=2, forward_bulk_size=15,
                  backward_bulk_size=15, partition_if_dynamic=False)


# MXNet 2.0.0b1's positional orders (inspect.signature there): they differ between the pooling layers
POOL_ORDERS = [
    (nn.MaxPool1D, ("pool_size", "strides", "padding", "layout", "ceil_mode"), (2, 7)),
    (nn.MaxPool2D, ("pool_size", "strides", "padding", "layout", "ceil_mode"), (2, 7, 7)),
    (nn.MaxPool3D, ("pool_size", "strides", "padding", "ceil_mode", "layout"), (2, 5, 5, 5)),
    (nn.AvgPool1D, ("pool_size", "strides", "padding", "layout", "ceil_mode", "count_include_pad"), (2, 7)),
    (nn.AvgPool2D, ("pool_size", "strides", "padding", "ceil_mode", "layout", "count_include_pad"), (2, 7, 7)),
    (nn.AvgPool3D, ("pool_size", "strides", "padding", "ceil_mode", "layout", "count_include_pad"), (2, 5, 5, 5)),
]


@pytest.mark.parametrize("cls, order, shape", POOL_ORDERS, ids=[c[0].__name__ for c in POOL_ORDERS])
def test_pooling_takes_mxnet_positional_order(cls, order, shape):
    """A pooling layer built positionally in MXNet's order equals the one built by keywords (ceil_mode
    and count_include_pad set away from their defaults, so a swapped position shows)."""
    values = {"pool_size": 3, "strides": 2, "padding": 1, "ceil_mode": True,
              "layout": {1: "NCW", 2: "NCHW", 3: "NCDHW"}[len(shape) - 1], "count_include_pad": False}
    x = mx.np.array(onp.random.RandomState(0).rand(1, *shape).astype(onp.float32))
    positional, keyword = cls(*[values[name] for name in order]), cls(**{name: values[name] for name in order})
    assert list(inspect.signature(cls).parameters)[:len(order)] == list(order)
    onp.testing.assert_array_equal(positional(x).asnumpy(), keyword(x).asnumpy())
    assert positional(x).shape == keyword(x).shape
    assert nn.GlobalAvgPool2D("NHWC")(mx.np.ones((1, 3, 3, 2))).shape == (1, 1, 1, 2)
