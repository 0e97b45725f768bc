"""MobileNet (Howard et al., arXiv:1704.04861) and MobileNetV2 (Sandler et al., arXiv:1801.04381)."""
__all__ = ['MobileNet', 'MobileNetV2', 'mobilenet1_0', 'mobilenet_v2_1_0', 'mobilenet0_75',
           'mobilenet_v2_0_75', 'mobilenet0_5', 'mobilenet_v2_0_5', 'mobilenet0_25',
           'mobilenet_v2_0_25', 'get_mobilenet', 'get_mobilenet_v2']

from ....device import cpu
from ....util import use_np, wrap_ctx_to_device_func
from .... import numpy as np
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained

# MobileNet: (output channels, stride) of each depthwise-separable layer after the 32-channel stem.
_V1_LAYERS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 \
    + [(1024, 2), (1024, 1)]
# MobileNetV2: (expansion t, output channels c, repeats n, first stride s) per stage, as in the paper.
_V2_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
              (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


@use_np
class RELU6(nn.HybridBlock):
    """``min(max(x, 0), 6)``, MobileNetV2's activation."""

    def forward(self, x):
        return np.clip(x, 0, 6)


def _conv_bn(seq, channels, kernel=1, stride=1, groups=1, act='relu'):
    """Append a bias-free conv ('same' padding), BatchNorm and ``act`` ('relu', 'relu6' or None)."""
    seq.add(nn.Conv2D(channels, kernel, stride, kernel // 2, groups=groups, use_bias=False),
            nn.BatchNorm(scale=True))
    if act:
        seq.add(RELU6() if act == 'relu6' else nn.Activation('relu'))


@use_np
class LinearBottleneck(nn.HybridBlock):
    """MobileNetV2's inverted residual: 1x1 expand by ``t``, 3x3 depthwise (``stride``), linear 1x1 project.

    The input is added back when the shape is unchanged (stride 1, ``in_channels == channels``).
    """

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        wide = in_channels * t
        self.out = nn.HybridSequential()
        _conv_bn(self.out, wide, act='relu6')
        _conv_bn(self.out, wide, 3, stride, groups=wide, act='relu6')
        _conv_bn(self.out, channels, act=None)

    def forward(self, x):
        y = self.out(x)
        return y + x if self.use_shortcut else y


@use_np
class MobileNet(Classifier):
    """MobileNet: a 3x3/2 stem, then depthwise 3x3 + pointwise 1x1 pairs, global pooling, ``classes`` logits.

    ``multiplier`` (0.25 and up) scales every layer's width.
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        prev = 32
        _conv_bn(f, int(prev * multiplier), 3, 2)
        for width, stride in _V1_LAYERS:
            depthwise = int(prev * multiplier)
            _conv_bn(f, depthwise, 3, stride, groups=depthwise)
            _conv_bn(f, int(width * multiplier))
            prev = width
        f.add(nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes)


@use_np
class MobileNetV2(Classifier):
    """MobileNetV2: stacked ``LinearBottleneck`` stages, a 1x1 conv to 1280 channels, and a 1x1 conv head.

    ``multiplier`` scales the widths; the 1280-channel layer only grows, never shrinks.
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        prev = 32
        _conv_bn(f, int(prev * multiplier), 3, 2, act='relu6')
        for t, width, repeats, first_stride in _V2_STAGES:
            for i in range(repeats):
                f.add(LinearBottleneck(int(prev * multiplier), int(width * multiplier), t,
                                       first_stride if i == 0 else 1))
                prev = width
        _conv_bn(f, int(1280 * multiplier) if multiplier > 1.0 else 1280, act='relu6')
        f.add(nn.GlobalAvgPool2D())
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, 1, use_bias=False), nn.Flatten())


def _suffix(multiplier):
    """How MXNet's weight files spell a multiplier: 1.0, 0.75, 0.5, 0.25."""
    text = f'{multiplier:.2f}'
    return text[:-1] if text in ('1.00', '0.50') else text


@wrap_ctx_to_device_func
def get_mobilenet(multiplier, pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """MobileNet of width ``multiplier``; ``pretrained`` loads MXNet's weights (1.0, 0.75, 0.5, 0.25)."""
    net = MobileNet(multiplier, **kwargs)
    return load_pretrained(net, f'mobilenet{_suffix(multiplier)}', root, device) if pretrained else net


@wrap_ctx_to_device_func
def get_mobilenet_v2(multiplier, pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """MobileNetV2 of width ``multiplier``; ``pretrained`` loads MXNet's weights (1.0, 0.75, 0.5, 0.25)."""
    net = MobileNetV2(multiplier, **kwargs)
    return load_pretrained(net, f'mobilenetv2_{_suffix(multiplier)}', root, device) if pretrained else net


@wrap_ctx_to_device_func
def mobilenet1_0(**kwargs):
    """MobileNet, width 1.0 (see ``get_mobilenet``)."""
    return get_mobilenet(1.0, **kwargs)


@wrap_ctx_to_device_func
def mobilenet0_75(**kwargs):
    """MobileNet, width 0.75 (see ``get_mobilenet``)."""
    return get_mobilenet(0.75, **kwargs)


@wrap_ctx_to_device_func
def mobilenet0_5(**kwargs):
    """MobileNet, width 0.5 (see ``get_mobilenet``)."""
    return get_mobilenet(0.5, **kwargs)


@wrap_ctx_to_device_func
def mobilenet0_25(**kwargs):
    """MobileNet, width 0.25 (see ``get_mobilenet``)."""
    return get_mobilenet(0.25, **kwargs)


@wrap_ctx_to_device_func
def mobilenet_v2_1_0(**kwargs):
    """MobileNetV2, width 1.0 (see ``get_mobilenet_v2``)."""
    return get_mobilenet_v2(1.0, **kwargs)


@wrap_ctx_to_device_func
def mobilenet_v2_0_75(**kwargs):
    """MobileNetV2, width 0.75 (see ``get_mobilenet_v2``)."""
    return get_mobilenet_v2(0.75, **kwargs)


@wrap_ctx_to_device_func
def mobilenet_v2_0_5(**kwargs):
    """MobileNetV2, width 0.5 (see ``get_mobilenet_v2``)."""
    return get_mobilenet_v2(0.5, **kwargs)


@wrap_ctx_to_device_func
def mobilenet_v2_0_25(**kwargs):
    """MobileNetV2, width 0.25 (see ``get_mobilenet_v2``)."""
    return get_mobilenet_v2(0.25, **kwargs)
