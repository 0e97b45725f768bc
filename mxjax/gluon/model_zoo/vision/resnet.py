"""ResNet V1 (He et al., arXiv:1512.03385) and V2, with pre-activation blocks (arXiv:1603.05027)."""
__all__ = ['ResNetV1', 'ResNetV2',
           'BasicBlockV1', 'BasicBlockV2',
           'BottleneckV1', 'BottleneckV2',
           'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
           'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
           'get_resnet']

from ....device import cpu
from ....util import use_np, wrap_ctx_to_device_func
from .... import numpy_extension as npx
from ...block import HybridBlock
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained

# depth: (uses bottleneck blocks, residual blocks per stage). Stage widths are 64/128/256/512,
# times 4 for bottleneck nets; the stem always has 64 channels.
_RESNETS = {
    18: (False, (2, 2, 2, 2)),
    34: (False, (3, 4, 6, 3)),
    50: (True, (3, 4, 6, 3)),
    101: (True, (3, 4, 23, 3)),
    152: (True, (3, 8, 36, 3)),
}


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _conv1x1(channels, stride, in_channels=0, use_bias=False):
    return nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=use_bias, in_channels=in_channels)


# -- V1: conv-BN-ReLU body, the shortcut added before the last ReLU -----------------------------------

@use_np
class _BlockV1(HybridBlock):
    """``relu(body(x) + shortcut(x))``; the shortcut is a strided 1x1 conv + BN when ``downsample``."""

    def __init__(self, body, channels, stride, downsample, in_channels, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential()
        self.body.add(*body)
        self.downsample = None
        if downsample:
            self.downsample = nn.HybridSequential()
            self.downsample.add(_conv1x1(channels, stride, in_channels), nn.BatchNorm())

    def forward(self, x):
        shortcut = self.downsample(x) if self.downsample else x
        return npx.activation(self.body(x) + shortcut, act_type='relu')


class BasicBlockV1(_BlockV1):
    """Two 3x3 convs (ResNet-18/34 V1). ``in_channels=0`` leaves the input width to be inferred."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        body = [_conv3x3(channels, stride, in_channels), nn.BatchNorm(), nn.Activation('relu'),
                _conv3x3(channels, 1, channels), nn.BatchNorm()]
        super().__init__(body, channels, stride, downsample, in_channels, **kwargs)


class BottleneckV1(_BlockV1):
    """1x1 reduce to ``channels // 4`` (strided), 3x3, 1x1 expand (ResNet-50/101/152 V1)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        mid = channels // 4
        body = [_conv1x1(mid, stride, use_bias=True), nn.BatchNorm(), nn.Activation('relu'),
                _conv3x3(mid, 1, mid), nn.BatchNorm(), nn.Activation('relu'),
                _conv1x1(channels, 1, use_bias=True), nn.BatchNorm()]
        super().__init__(body, channels, stride, downsample, in_channels, **kwargs)


# -- V2: BN-ReLU-conv units; the shortcut taps the first pre-activation -----------------------------

@use_np
class _BlockV2(HybridBlock):
    """Children ``bn1, conv1, bn2, conv2, ...`` from ``convs``; returns ``convs(x) + shortcut``."""

    def __init__(self, convs, channels, stride, downsample, in_channels, **kwargs):
        super().__init__(**kwargs)
        self._depth = len(convs)
        for i, conv in enumerate(convs, 1):
            setattr(self, f'bn{i}', nn.BatchNorm())
            setattr(self, f'conv{i}', conv)
        self.downsample = _conv1x1(channels, stride, in_channels) if downsample else None

    def forward(self, x):
        x = npx.activation(self.bn1(x), act_type='relu')
        shortcut = self.downsample(x) if self.downsample else x
        x = self.conv1(x)
        for i in range(2, self._depth + 1):
            x = getattr(self, f'conv{i}')(npx.activation(getattr(self, f'bn{i}')(x), act_type='relu'))
        return x + shortcut


class BasicBlockV2(_BlockV2):
    """Two pre-activated 3x3 convs (ResNet-18/34 V2)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        convs = [_conv3x3(channels, stride, in_channels), _conv3x3(channels, 1, channels)]
        super().__init__(convs, channels, stride, downsample, in_channels, **kwargs)


class BottleneckV2(_BlockV2):
    """Pre-activated 1x1, strided 3x3, 1x1 (ResNet-50/101/152 V2)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        mid = channels // 4
        convs = [_conv1x1(mid, 1), _conv3x3(mid, stride, mid), _conv1x1(channels, 1)]
        super().__init__(convs, channels, stride, downsample, in_channels, **kwargs)


# -- networks ---------------------------------------------------------------------------------------

def _add_stem_and_stages(features, block, layers, channels, thumbnail):
    """The stem (a 3x3 conv for small ``thumbnail`` inputs, else 7x7/2 conv + BN + ReLU + max-pool),
    then one stage per ``layers`` entry; every stage after the first halves the resolution."""
    assert len(layers) == len(channels) - 1
    if thumbnail:
        features.add(_conv3x3(channels[0], 1, 0))
    else:
        features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False), nn.BatchNorm(),
                     nn.Activation('relu'), nn.MaxPool2D(3, 2, 1))
    for i, depth in enumerate(layers):
        c_in, c_out, stride = channels[i], channels[i + 1], 1 if i == 0 else 2
        stage = nn.HybridSequential()
        stage.add(block(c_out, stride, c_out != c_in, in_channels=c_in),
                  *[block(c_out, 1, False, in_channels=c_out) for _ in range(depth - 1)])
        features.add(stage)


@use_np
class ResNetV1(Classifier):
    """ResNet V1 from residual ``block`` (``BasicBlockV1``/``BottleneckV1``).

    ``layers[i]`` blocks in stage i with ``channels[i + 1]`` outputs; ``channels[0]`` is the stem
    width. ``thumbnail=True`` swaps the downsampling stem for one 3x3 conv (for e.g. 32x32 images).
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        _add_stem_and_stages(self.features, block, layers, channels, thumbnail)
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.Dense(classes, in_units=channels[-1])


@use_np
class ResNetV2(Classifier):
    """ResNet V2 (pre-activation) from ``BasicBlockV2``/``BottleneckV2``; arguments as ``ResNetV1``.

    The input passes a BatchNorm without scale or shift first, and a final BN + ReLU precedes pooling.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        self.features.add(nn.BatchNorm(scale=False, center=False))
        _add_stem_and_stages(self.features, block, layers, channels, thumbnail)
        self.features.add(nn.BatchNorm(), nn.Activation('relu'), nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes, in_units=channels[-1])


@wrap_ctx_to_device_func
def get_resnet(version, num_layers, pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """ResNet ``version`` 1 or 2 with ``num_layers`` 18, 34, 50, 101 or 152.

    ``pretrained=True`` loads MXNet's ImageNet weights from ``root`` onto ``device``.
    """
    assert num_layers in _RESNETS, \
        f"Invalid number of layers: {num_layers}. Options are {sorted(_RESNETS)}"
    assert version in (1, 2), f"Invalid resnet version: {version}. Options are 1 and 2."
    bottleneck, layers = _RESNETS[num_layers]
    widths = [64] + [w * (4 if bottleneck else 1) for w in (64, 128, 256, 512)]
    net_class, block = {(1, False): (ResNetV1, BasicBlockV1), (1, True): (ResNetV1, BottleneckV1),
                        (2, False): (ResNetV2, BasicBlockV2), (2, True): (ResNetV2, BottleneckV2)}[
                            version, bottleneck]
    net = net_class(block, list(layers), widths, **kwargs)
    return load_pretrained(net, f'resnet{num_layers}_v{version}', root, device) if pretrained else net


@wrap_ctx_to_device_func
def resnet18_v1(**kwargs):
    """ResNet-18 V1 (see ``get_resnet``)."""
    return get_resnet(1, 18, **kwargs)


@wrap_ctx_to_device_func
def resnet34_v1(**kwargs):
    """ResNet-34 V1 (see ``get_resnet``)."""
    return get_resnet(1, 34, **kwargs)


@wrap_ctx_to_device_func
def resnet50_v1(**kwargs):
    """ResNet-50 V1 (see ``get_resnet``)."""
    return get_resnet(1, 50, **kwargs)


@wrap_ctx_to_device_func
def resnet101_v1(**kwargs):
    """ResNet-101 V1 (see ``get_resnet``)."""
    return get_resnet(1, 101, **kwargs)


@wrap_ctx_to_device_func
def resnet152_v1(**kwargs):
    """ResNet-152 V1 (see ``get_resnet``)."""
    return get_resnet(1, 152, **kwargs)


@wrap_ctx_to_device_func
def resnet18_v2(**kwargs):
    """ResNet-18 V2 (see ``get_resnet``)."""
    return get_resnet(2, 18, **kwargs)


@wrap_ctx_to_device_func
def resnet34_v2(**kwargs):
    """ResNet-34 V2 (see ``get_resnet``)."""
    return get_resnet(2, 34, **kwargs)


@wrap_ctx_to_device_func
def resnet50_v2(**kwargs):
    """ResNet-50 V2 (see ``get_resnet``)."""
    return get_resnet(2, 50, **kwargs)


@wrap_ctx_to_device_func
def resnet101_v2(**kwargs):
    """ResNet-101 V2 (see ``get_resnet``)."""
    return get_resnet(2, 101, **kwargs)


@wrap_ctx_to_device_func
def resnet152_v2(**kwargs):
    """ResNet-152 V2 (see ``get_resnet``)."""
    return get_resnet(2, 152, **kwargs)
