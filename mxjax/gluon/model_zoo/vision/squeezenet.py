"""SqueezeNet 1.0 (Iandola et al., arXiv:1602.07360) and 1.1 (DeepScale's cheaper revision)."""
__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1']

from ....device import cpu
from ....util import use_np, wrap_ctx_to_device_func
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained

# version: (stem conv channels, kernel), then the body: a number s is a fire module squeezing to s
# channels and expanding to 4s + 4s; 'pool' is a 3x3/2 max-pool.
_SQUEEZENETS = {
    '1.0': ((96, 7), (16, 16, 32, 'pool', 32, 48, 48, 64, 'pool', 64)),
    '1.1': ((64, 3), (16, 16, 'pool', 32, 32, 'pool', 48, 48, 64, 64)),
}


def _conv_relu(channels, kernel, padding=0):
    seq = nn.HybridSequential()
    seq.add(nn.Conv2D(channels, kernel, padding=padding), nn.Activation('relu'))
    return seq


def _fire(squeeze):
    """A 1x1 squeeze, then 1x1 and 3x3 expansions (4x wider each) concatenated."""
    expand = nn.HybridConcatenate(axis=1)
    expand.add(_conv_relu(4 * squeeze, 1), _conv_relu(4 * squeeze, 3, padding=1))
    fire = nn.HybridSequential()
    fire.add(_conv_relu(squeeze, 1), expand)
    return fire


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


@use_np
class SqueezeNet(Classifier):
    """SqueezeNet ``version`` '1.0' or '1.1' (1.1: same accuracy, about 2.4x less compute).

    The head is a 1x1 conv to ``classes`` maps, averaged over the 13x13 grid of a 224x224 input.
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in _SQUEEZENETS, \
            f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 expected"
        (stem, kernel), body = _SQUEEZENETS[version]
        f = self.features = nn.HybridSequential()
        f.add(nn.Conv2D(stem, kernel_size=kernel, strides=2), nn.Activation('relu'), _pool())
        f.add(*[_pool() if step == 'pool' else _fire(step) for step in body])
        f.add(nn.Dropout(0.5))
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation('relu'),
                        nn.AvgPool2D(13), nn.Flatten())


@wrap_ctx_to_device_func
def get_squeezenet(version, pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1'); ``pretrained`` loads MXNet's weights from ``root``."""
    net = SqueezeNet(version, **kwargs)
    return load_pretrained(net, f'squeezenet{version}', root, device) if pretrained else net


@wrap_ctx_to_device_func
def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (see ``get_squeezenet``)."""
    return get_squeezenet('1.0', **kwargs)


@wrap_ctx_to_device_func
def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1 (see ``get_squeezenet``)."""
    return get_squeezenet('1.1', **kwargs)
