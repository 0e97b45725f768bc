"""DenseNet-BC (Huang et al., arXiv:1608.06993): each layer's output is concatenated onto its input."""
__all__ = ['DenseNet', 'densenet121', 'densenet161', 'densenet169', 'densenet201']

from ....device import cpu
from ....util import use_np, wrap_ctx_to_device_func
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained

# depth: (stem channels, growth rate k, dense layers per block)
_DENSENETS = {
    121: (64, 32, (6, 12, 24, 16)),
    161: (96, 48, (6, 12, 36, 24)),
    169: (64, 32, (6, 12, 32, 32)),
    201: (64, 32, (6, 12, 48, 32)),
}


def _bn_relu_conv(seq, channels, kernel, padding=0):
    seq.add(nn.BatchNorm(), nn.Activation('relu'),
            nn.Conv2D(channels, kernel_size=kernel, padding=padding, use_bias=False))


def _dense_layer(growth_rate, bn_size, dropout):
    """``[x, f(x)]`` along channels, f a 1x1 bottleneck then a 3x3 conv adding ``growth_rate`` maps."""
    new = nn.HybridSequential()
    _bn_relu_conv(new, bn_size * growth_rate, 1)
    _bn_relu_conv(new, growth_rate, 3, padding=1)
    if dropout:
        new.add(nn.Dropout(dropout))
    both = nn.HybridConcatenate(axis=1)
    both.add(nn.Identity(), new)
    return both


@use_np
class DenseNet(Classifier):
    """DenseNet-BC: a 7x7 stem, dense blocks of ``block_config`` layers joined by halving transitions.

    ``bn_size * growth_rate`` is the bottleneck width inside each layer; ``dropout`` follows each layer.
    """

    def __init__(self, num_init_features, growth_rate, block_config,
                 bn_size=4, dropout=0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        f.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3, use_bias=False),
              nn.BatchNorm(), nn.Activation('relu'), nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        width = num_init_features
        for i, depth in enumerate(block_config):
            block = nn.HybridSequential()
            block.add(*[_dense_layer(growth_rate, bn_size, dropout) for _ in range(depth)])
            f.add(block)
            width += depth * growth_rate
            if i + 1 < len(block_config):  # transition: halve the channels and the resolution
                width //= 2
                transition = nn.HybridSequential()
                _bn_relu_conv(transition, width, 1)
                transition.add(nn.AvgPool2D(pool_size=2, strides=2))
                f.add(transition)
        f.add(nn.BatchNorm(), nn.Activation('relu'), nn.AvgPool2D(pool_size=7), nn.Flatten())
        self.output = nn.Dense(classes)


@wrap_ctx_to_device_func
def get_densenet(num_layers, pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """DenseNet-BC of depth ``num_layers`` (121, 161, 169 or 201); ``pretrained`` loads MXNet's weights."""
    net = DenseNet(*_DENSENETS[num_layers], **kwargs)
    return load_pretrained(net, f'densenet{num_layers}', root, device) if pretrained else net


def densenet121(**kwargs):
    """DenseNet-BC-121 (see ``get_densenet``)."""
    return get_densenet(121, **kwargs)


def densenet161(**kwargs):
    """DenseNet-BC-161 (see ``get_densenet``)."""
    return get_densenet(161, **kwargs)


def densenet169(**kwargs):
    """DenseNet-BC-169 (see ``get_densenet``)."""
    return get_densenet(169, **kwargs)


def densenet201(**kwargs):
    """DenseNet-BC-201 (see ``get_densenet``)."""
    return get_densenet(201, **kwargs)
