"""Inception v3 (Szegedy et al., "Rethinking the Inception Architecture", arXiv:1512.00567)."""
__all__ = ['Inception3', 'inception_v3']

from ....device import cpu
from ....util import use_np, wrap_ctx_to_device_func
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained


def _conv(channels, kernel_size, strides=1, padding=0):
    """Conv (no bias) + BatchNorm(eps 1e-3) + ReLU, the unit every Inception branch is made of."""
    seq = nn.HybridSequential()
    seq.add(nn.Conv2D(channels, kernel_size=kernel_size, strides=strides, padding=padding, use_bias=False),
            nn.BatchNorm(epsilon=0.001), nn.Activation('relu'))
    return seq


def _branch(pool, *convs):
    """An optional 3x3 pool ('avg': stride 1, same size; 'max': stride 2), then ``_conv(*c)`` for each c."""
    seq = nn.HybridSequential()
    if pool == 'avg':
        seq.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == 'max':
        seq.add(nn.MaxPool2D(pool_size=3, strides=2))
    seq.add(*[_conv(*c) for c in convs])
    return seq


def _concat(*branches):
    out = nn.HybridConcatenate(axis=1)
    out.add(*branches)
    return out


def _seq(*blocks):
    out = nn.HybridSequential()
    out.add(*blocks)
    return out


def _block_35(pool_features):
    """35x35 module: 1x1, 5x5, double 3x3 and pooled branches."""
    return _concat(_branch(None, (64, 1)),
                   _branch(None, (48, 1), (64, 5, 1, 2)),
                   _branch(None, (64, 1), (96, 3, 1, 1), (96, 3, 1, 1)),
                   _branch('avg', (pool_features, 1)))


def _reduce_35():
    """35x35 -> 17x17 grid reduction."""
    return _concat(_branch(None, (384, 3, 2)),
                   _branch(None, (64, 1), (96, 3, 1, 1), (96, 3, 2)),
                   _branch('max'))


def _1x7(channels):
    return (channels, (1, 7), 1, (0, 3))


def _7x1(channels):
    return (channels, (7, 1), 1, (3, 0))


def _block_17(c7):
    """17x17 module: 7x7 convolutions factorised into 1x7 and 7x1, ``c7`` channels inside."""
    return _concat(_branch(None, (192, 1)),
                   _branch(None, (c7, 1), _1x7(c7), _7x1(192)),
                   _branch(None, (c7, 1), _7x1(c7), _1x7(c7), _7x1(c7), _1x7(192)),
                   _branch('avg', (192, 1)))


def _reduce_17():
    """17x17 -> 8x8 grid reduction."""
    return _concat(_branch(None, (192, 1), (320, 3, 2)),
                   _branch(None, (192, 1), _1x7(192), _7x1(192), (192, 3, 2)),
                   _branch('max'))


def _split_3():
    """A 1x3 and a 3x1 conv side by side, each to 384 channels."""
    return _concat(_branch(None, (384, (1, 3), 1, (0, 1))), _branch(None, (384, (3, 1), 1, (1, 0))))


def _block_8():
    """8x8 module with expanded (split 1x3 / 3x1) filter banks."""
    return _concat(_branch(None, (320, 1)),
                   _seq(_branch(None, (384, 1)), _split_3()),
                   _seq(_branch(None, (448, 1), (384, 3, 1, 1)), _split_3()),
                   _branch('avg', (192, 1)))


def make_aux(classes):
    """The auxiliary classifier head of the paper (built on request; ``Inception3`` does not use it)."""
    return _seq(nn.AvgPool2D(pool_size=5, strides=3), _conv(128, 1), _conv(768, 5),
                nn.Flatten(), nn.Dense(classes))


@use_np
class Inception3(Classifier):
    """Inception v3 for 299x299 inputs, without the auxiliary head; ``classes`` logits out."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        self.features = _seq(
            _conv(32, 3, 2), _conv(32, 3), _conv(64, 3, 1, 1), nn.MaxPool2D(pool_size=3, strides=2),
            _conv(80, 1), _conv(192, 3), nn.MaxPool2D(pool_size=3, strides=2),
            _block_35(32), _block_35(64), _block_35(64), _reduce_35(),
            _block_17(128), _block_17(160), _block_17(160), _block_17(192), _reduce_17(),
            _block_8(), _block_8(), nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
        self.output = nn.Dense(classes)


@wrap_ctx_to_device_func
def inception_v3(pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """Inception v3; ``pretrained=True`` loads MXNet's ImageNet weights from ``root`` onto ``device``."""
    net = Inception3(**kwargs)
    return load_pretrained(net, 'inceptionv3', root, device) if pretrained else net
