"""VGG (Simonyan & Zisserman, arXiv:1409.1556), optionally with BatchNorm after every conv."""
__all__ = ['VGG',
           'vgg11', 'vgg13', 'vgg16', 'vgg19',
           'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
           'get_vgg']

from ....device import cpu
from ....initializer import Xavier
from ....util import use_np, wrap_ctx_to_device_func
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained

# depth: 3x3 convs in each of the five stages (64, 128, 256, 512, 512 filters)
_VGG_STAGES = {11: (1, 1, 2, 2, 2), 13: (2, 2, 2, 2, 2), 16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}
_VGG_FILTERS = (64, 128, 256, 512, 512)


def _dense(units, **kwargs):
    return nn.Dense(units, weight_initializer='normal', bias_initializer='zeros', **kwargs)


@use_np
class VGG(Classifier):
    """VGG with ``layers[i]`` 3x3 convs of ``filters[i]`` channels per stage, each stage ending in a 2x2 max-pool.

    ``batch_norm=True`` puts a BatchNorm between each conv and its ReLU. Two 4096-unit layers with
    dropout finish ``features``; ``output`` gives ``classes`` logits.
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        f = self.features = nn.HybridSequential()
        for count, width in zip(layers, filters):
            for _ in range(count):
                f.add(nn.Conv2D(width, kernel_size=3, padding=1, bias_initializer='zeros',
                                weight_initializer=Xavier(rnd_type='gaussian', factor_type='out', magnitude=2)))
                if batch_norm:
                    f.add(nn.BatchNorm())
                f.add(nn.Activation('relu'))
            f.add(nn.MaxPool2D(strides=2))
        for _ in range(2):
            f.add(_dense(4096, activation='relu'), nn.Dropout(rate=0.5))
        self.output = _dense(classes)


@wrap_ctx_to_device_func
def get_vgg(num_layers, pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """VGG of depth ``num_layers`` (11, 13, 16 or 19); ``pretrained`` loads MXNet's weights from ``root``."""
    net = VGG(list(_VGG_STAGES[num_layers]), list(_VGG_FILTERS), **kwargs)
    if not pretrained:
        return net
    return load_pretrained(net, f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}", root, device)


@wrap_ctx_to_device_func
def vgg11(**kwargs):
    """VGG-11 (see ``get_vgg``)."""
    return get_vgg(11, **kwargs)


@wrap_ctx_to_device_func
def vgg13(**kwargs):
    """VGG-13 (see ``get_vgg``)."""
    return get_vgg(13, **kwargs)


@wrap_ctx_to_device_func
def vgg16(**kwargs):
    """VGG-16 (see ``get_vgg``)."""
    return get_vgg(16, **kwargs)


@wrap_ctx_to_device_func
def vgg19(**kwargs):
    """VGG-19 (see ``get_vgg``)."""
    return get_vgg(19, **kwargs)


@wrap_ctx_to_device_func
def vgg11_bn(**kwargs):
    """VGG-11 with BatchNorm (see ``get_vgg``)."""
    return get_vgg(11, **{**kwargs, 'batch_norm': True})


@wrap_ctx_to_device_func
def vgg13_bn(**kwargs):
    """VGG-13 with BatchNorm (see ``get_vgg``)."""
    return get_vgg(13, **{**kwargs, 'batch_norm': True})


@wrap_ctx_to_device_func
def vgg16_bn(**kwargs):
    """VGG-16 with BatchNorm (see ``get_vgg``)."""
    return get_vgg(16, **{**kwargs, 'batch_norm': True})


@wrap_ctx_to_device_func
def vgg19_bn(**kwargs):
    """VGG-19 with BatchNorm (see ``get_vgg``)."""
    return get_vgg(19, **{**kwargs, 'batch_norm': True})
