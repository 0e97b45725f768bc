"""Colour transforms of ``mx.gluon.data.vision.transforms``: random brightness, contrast,
saturation, hue, colour jitter, PCA lighting noise and random gray on HWC images.

Kept apart from the geometric transforms in ``image.py``, which re-exports them; both build on
``_transform_base``.
"""
from __future__ import annotations

from typing import Any

from ..... import numpy as np
from ..... import numpy_extension as npx
from .....base import MXNetValueError
from .....util import use_np
from ._transform_base import _HWC_ONLY, _ImageTransform


class _RandomFactor(_ImageTransform):
    """Colour jitter by a factor drawn from [max(0, 1 - amount), 1 + amount]."""

    _layout = _HWC_ONLY
    _op: Any = None

    def __init__(self, amount: float) -> None:
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def _apply(self, x: Any) -> Any:
        return type(self)._op(x, *self._args)


@use_np
class RandomBrightness(_RandomFactor):
    """Scale an HWC image's values by a factor drawn from [max(0, 1 - brightness), 1 + brightness]."""

    _op = staticmethod(npx.image.random_brightness)

    def __init__(self, brightness: float) -> None:
        super().__init__(brightness)


@use_np
class RandomContrast(_RandomFactor):
    """Blend an HWC image with its mean gray level by a factor drawn from
    [max(0, 1 - contrast), 1 + contrast]."""

    _op = staticmethod(npx.image.random_contrast)

    def __init__(self, contrast: float) -> None:
        super().__init__(contrast)


@use_np
class RandomSaturation(_RandomFactor):
    """Blend an HWC image with gray by a factor drawn from [max(0, 1 - saturation), 1 + saturation]."""

    _op = staticmethod(npx.image.random_saturation)

    def __init__(self, saturation: float) -> None:
        super().__init__(saturation)


@use_np
class RandomHue(_RandomFactor):
    """Shift an HWC image's hue by a factor drawn from [max(0, 1 - hue), 1 + hue]."""

    _op = staticmethod(npx.image.random_hue)

    def __init__(self, hue: float) -> None:
        super().__init__(hue)


@use_np
class RandomColorJitter(_ImageTransform):
    """Random brightness, contrast, saturation and hue changes of an HWC image, in random order;
    each factor is ``1 + U(-amount, amount)`` and an amount of 0 leaves that property alone."""

    _layout = _HWC_ONLY

    def __init__(self, brightness: float = 0, contrast: float = 0, saturation: float = 0, hue: float = 0) -> None:
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def _apply(self, x: Any) -> Any:
        return npx.image.random_color_jitter(x, *self._args)


@use_np
class RandomLighting(_ImageTransform):
    """AlexNet's PCA lighting noise on an HWC RGB image, component weights drawn from N(0, alpha)."""

    _layout = _HWC_ONLY

    def __init__(self, alpha: float) -> None:
        super().__init__()
        self._alpha = alpha

    def _apply(self, x: Any) -> Any:
        return npx.image.random_lighting(x, self._alpha)


# ITU-R 601 luma weights (the ones MXNet 2.0 uses)
_LUMA = (0.2989, 0.5870, 0.114)


@use_np
class RandomGray(_ImageTransform):
    """With probability ``p``, replace each RGB pixel (last axis, any leading axes) by its luma
    in all three channels; the output is float32 either way."""

    _layout = ((3, 4), "(H, W, 3) or (N, H, W, 3)")

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def _apply(self, x: Any) -> Any:
        if x.shape[-1] != 3:
            raise MXNetValueError(f"RandomGray: expected 3 (RGB) channels on the last axis, got shape "
                                  f"{tuple(x.shape)}")
        x = x.astype("float32")
        # MXNet 2.0 multiplies by a matrix whose rows (not columns) are the weights, which gives
        # channel c the value (R + G + B) * weight[c] instead of a gray level; the luma is used here
        luma = x[..., 0:1] * _LUMA[0] + x[..., 1:2] * _LUMA[1] + x[..., 2:3] * _LUMA[2]
        gray = np.broadcast_to(luma, x.shape)
        return np.where(np.random.uniform() < self.p, gray, x)
