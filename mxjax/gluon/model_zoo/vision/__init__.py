"""Image classification networks with MXNet 2.0's architectures and parameter names.

Each constructor (``resnet18_v1()``, ``alexnet()``, ...) returns a randomly initialised network;
``pretrained=True`` loads the ImageNet weights MXNet published (see ``model_store``). Those weights
expect NCHW RGB batches, at least 224x224 (299x299 for Inception v3), scaled to [0, 1] and then
normalised with mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225) per channel.
"""
# pylint: disable=wildcard-import
from .alexnet import *
from .densenet import *
from .inception import *
from .resnet import *
from .squeezenet import *
from .vgg import *
from .mobilenet import *

_MODELS = {
    **{f'resnet{d}_v{v}': globals()[f'resnet{d}_v{v}'] for v in (1, 2) for d in (18, 34, 50, 101, 152)},
    **{f'vgg{d}{bn}': globals()[f'vgg{d}{bn}'] for bn in ('', '_bn') for d in (11, 13, 16, 19)},
    **{f'densenet{d}': globals()[f'densenet{d}'] for d in (121, 161, 169, 201)},
    'alexnet': alexnet,
    'squeezenet1.0': squeezenet1_0,
    'squeezenet1.1': squeezenet1_1,
    'inceptionv3': inception_v3,
    **{f'mobilenet{w}': globals()[f"mobilenet{w.replace('.', '_')}"] for w in ('1.0', '0.75', '0.5', '0.25')},
    **{f'mobilenetv2_{w}': globals()[f"mobilenet_v2_{w.replace('.', '_')}"]
       for w in ('1.0', '0.75', '0.5', '0.25')},
}


def get_model(name, **kwargs):
    """The network called ``name`` (case-insensitive, e.g. 'resnet50_v1', 'mobilenetv2_0.5').

    ``kwargs`` go to its constructor: ``classes``, ``pretrained``, ``device`` (or ``ctx``), ``root``, ...
    """
    key = name.lower()
    if key not in _MODELS:
        raise ValueError('Model %s is not supported. Available options are\n\t%s'
                         % (key, '\n\t'.join(sorted(_MODELS))))
    return _MODELS[key](**kwargs)
