"""``mx.image``'s augmenters: callables mapping one (H, W, C) image to another, and
``CreateAugmenter``, which assembles the standard ImageNet-style list.

Randomness comes from Python's ``random`` (``LightingAug``: ``numpy.random``), drawn in MXNet's
order, so seeding those modules reproduces MXNet's choices.  Like MXNet, the colour augmenters
update float images in place.  Both array kinds work (MXNet 2.0's colour, grey and flip
augmenters fail on ``mx.np`` arrays).
"""
from __future__ import annotations

import json
import random
import warnings
from typing import Any, Sequence

import numpy as onp

from .. import ndarray as _legacy
from .. import numpy as _mx_np
from .._ndarray import NDArray
from ._functions import (ImageArgumentError, ImageKeywordError, _get_interp_method, array_like, center_crop,
                         color_normalize,
                         imresize, random_crop, random_size_crop, resize_short, uses_np)

__all__ = ["Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug",
           "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug",
           "HueJitterAug", "ColorJitterAug", "LightingAug", "ColorNormalizeAug", "RandomGrayAug",
           "HorizontalFlipAug", "CastAug", "CreateAugmenter"]

# ITU-R BT.601 luma weights, used by the contrast and saturation jitters
_LUMA = onp.array([0.299, 0.587, 0.114], dtype=onp.float32)
# RGB <-> YIQ matrices used by the hue jitter
_RGB_TO_YIQ = onp.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_YIQ_TO_RGB = onp.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
# ImageNet PCA of RGB pixel values (AlexNet's "lighting" noise) and its mean / std
IMAGENET_EIGVAL = onp.array([55.46, 4.794, 1.148])
IMAGENET_EIGVEC = onp.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
IMAGENET_MEAN = (123.68, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)


def _plain(value: Any) -> Any:
    """Arrays -> nested lists so the arguments serialize to JSON."""
    if isinstance(value, NDArray):
        value = value.asnumpy()
    return value.tolist() if isinstance(value, onp.ndarray) else value


def _dot(src: Any, matrix: onp.ndarray) -> Any:
    """(H, W, 3) @ (3, 3) in the array kind of ``src``."""
    mat = array_like(onp.asarray(matrix, dtype=onp.float32), src)
    return (_mx_np.dot if uses_np(src) else _legacy.dot)(src, mat)


class Augmenter:
    """Base class: an augmenter maps an image to an image; ``dumps()`` gives its JSON description."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = {k: _plain(v) for k, v in kwargs.items()}

    def dumps(self) -> str:
        """JSON ``[lower-cased class name, constructor arguments]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")


class SequentialAug(Augmenter):
    """Apply the augmenters ``ts`` one after another."""

    def __init__(self, ts: Sequence[Augmenter]) -> None:
        super().__init__()
        self.ts = ts

    def dumps(self) -> list:  # MXNet returns a list here, not a JSON string
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src: Any) -> Any:
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(Augmenter):
    """Apply the augmenters ``ts`` in a fresh random order each call (``ts`` is shuffled in place)."""

    def __init__(self, ts: list) -> None:
        super().__init__()
        self.ts = ts

    def dumps(self) -> list:  # a list, as SequentialAug's
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src: Any) -> Any:
        random.shuffle(self.ts)
        for aug in self.ts:
            src = aug(src)
        return src


class ResizeAug(Augmenter):
    """Resize the shorter edge to ``size`` (``resize_short``)."""

    def __init__(self, size: int, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        return resize_short(src, self.size, interp=self.interp)


class ForceResizeAug(Augmenter):
    """Resize to exactly ``size`` = (w, h), ignoring the aspect ratio."""

    def __init__(self, size: tuple, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        new_w, new_h = self.size
        code = _get_interp_method(self.interp, (src.shape[0], src.shape[1], new_h, new_w), "ForceResizeAug")
        return imresize(src, new_w, new_h, interp=code)


class RandomCropAug(Augmenter):
    """``random_crop`` to ``size`` = (w, h)."""

    def __init__(self, size: tuple, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        return random_crop(src, self.size, interp=self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """``random_size_crop``: a random area fraction and aspect ratio, resized to ``size``."""

    def __init__(self, size: tuple, area: Any, ratio: tuple, interp: int = 2, **kwargs: Any) -> None:
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        if "min_area" in kwargs:
            warnings.warn("RandomSizedCropAug: `min_area` is deprecated, use `area`", DeprecationWarning)
            area = kwargs.pop("min_area")
        if kwargs:
            raise ImageKeywordError(f"RandomSizedCropAug: unexpected keyword arguments {sorted(kwargs)}")
        self.size, self.area, self.ratio, self.interp = size, area, ratio, interp

    def __call__(self, src: Any) -> Any:
        return random_size_crop(src, self.size, self.area, self.ratio, interp=self.interp)[0]


class CenterCropAug(Augmenter):
    """``center_crop`` to ``size`` = (w, h)."""

    def __init__(self, size: tuple, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        return center_crop(src, self.size, interp=self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Scale pixel values by ``1 + U(-brightness, brightness)``."""

    def __init__(self, brightness: float) -> None:
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src: Any) -> Any:
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class ContrastJitterAug(Augmenter):
    """Blend with the image's mean luma: ``alpha * src + (1 - alpha) * mean_gray``,
    ``alpha = 1 + U(-contrast, contrast)``."""

    def __init__(self, contrast: float) -> None:
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src: Any) -> Any:
        alpha = random.uniform(-self.contrast, self.contrast) + 1.0
        weighted = src * array_like(_LUMA, src)
        # sum of the luma-weighted pixels / pixel count = mean luma (3 channels per pixel)
        shift = weighted.sum().asnumpy().item() * (3.0 * (1.0 - alpha) / weighted.size)
        src *= alpha
        src += shift
        return src


class SaturationJitterAug(Augmenter):
    """Blend each pixel with its own luma: ``alpha * src + (1 - alpha) * gray``."""

    def __init__(self, saturation: float) -> None:
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src: Any) -> Any:
        alpha = random.uniform(-self.saturation, self.saturation) + 1.0
        gray = (src * array_like(_LUMA, src)).sum(axis=2, keepdims=True)
        gray *= 1.0 - alpha
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotate the chroma plane in YIQ space by ``U(-hue, hue) * 180`` degrees."""

    def __init__(self, hue: float) -> None:
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = _RGB_TO_YIQ.copy()
        self.ityiq = _YIQ_TO_RGB.copy()

    def __call__(self, src: Any) -> Any:
        angle = random.uniform(-self.hue, self.hue) * onp.pi
        cos, sin = onp.cos(angle), onp.sin(angle)
        rotate = onp.array([[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]])
        return _dot(src, (self.ityiq @ rotate @ self.tyiq).T)


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those with magnitude > 0) in random order."""

    def __init__(self, brightness: float, contrast: float, saturation: float) -> None:
        parts: list[Augmenter] = []
        if brightness > 0:
            parts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            parts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            parts.append(SaturationJitterAug(saturation))
        super().__init__(parts)


class LightingAug(Augmenter):
    """AlexNet-style PCA noise: add ``eigvec @ (alpha * eigval)``, ``alpha ~ N(0, alphastd)``
    per component (drawn from ``numpy.random``)."""

    def __init__(self, alphastd: float, eigval: Any, eigvec: Any) -> None:
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd, self.eigval, self.eigvec = alphastd, eigval, eigvec

    def __call__(self, src: Any) -> Any:
        alpha = onp.random.normal(0, self.alphastd, size=(3,))
        shift = onp.dot(onp.asarray(self.eigvec) * alpha, onp.asarray(self.eigval))
        src += array_like(shift.astype(onp.float32), src)
        return src


class ColorNormalizeAug(Augmenter):
    """``color_normalize`` with a fixed ``mean`` and ``std`` (either may be None)."""

    def __init__(self, mean: Any, std: Any) -> None:
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else _legacy.array(onp.asarray(mean))
        self.std = std if std is None or isinstance(std, NDArray) else _legacy.array(onp.asarray(std))

    def __call__(self, src: Any) -> Any:
        return color_normalize(src, self.mean, std=self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace all three channels by ``0.21 R + 0.72 G + 0.07 B``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p
        self.mat = onp.array([[0.21] * 3, [0.72] * 3, [0.07] * 3], dtype=onp.float32)

    def __call__(self, src: Any) -> Any:
        if self.p > random.random():
            src = _dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """With probability ``p``, mirror the image left-right."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: Any) -> Any:
        if self.p > random.random():
            src = (_mx_np.flip if uses_np(src) else _legacy.flip)(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast to dtype ``typ`` (float32 by default)."""

    def __init__(self, typ: str = "float32") -> None:
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src: Any) -> Any:
        return src.astype(self.typ)


def _check_stat(value: Any, name: str, default: tuple) -> Any:
    if value is True:
        return _legacy.array(default)
    if value is not None and not (isinstance(value, (onp.ndarray, NDArray)) and value.shape[0] in (1, 3)):
        raise ImageArgumentError(f"CreateAugmenter: {name} must be True, None or an array of 1 or 3 "
                                 f"values, got {value!r}")
    return value


def CreateAugmenter(data_shape: tuple, resize: int = 0, rand_crop: bool = False, rand_resize: bool = False,
                    rand_mirror: bool = False, mean: Any = None, std: Any = None, brightness: float = 0,
                    contrast: float = 0, saturation: float = 0, hue: float = 0, pca_noise: float = 0,
                    rand_gray: float = 0, inter_method: int = 2) -> list:
    """The standard augmenter list for images of ``data_shape`` (C, H, W): optional short-edge
    resize; a random-sized, random or centre crop to (W, H); optional mirror; cast to float32;
    colour/hue jitter, PCA lighting noise, random grey; normalization (``mean``/``std`` True means
    the ImageNet statistics)."""
    augs: list[Augmenter] = []
    if resize > 0:
        augs.append(ResizeAug(resize, inter_method))
    crop_wh = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ImageArgumentError("CreateAugmenter: rand_resize=True needs rand_crop=True")
        augs.append(RandomSizedCropAug(crop_wh, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        augs.append(RandomCropAug(crop_wh, inter_method))
    else:
        augs.append(CenterCropAug(crop_wh, inter_method))
    if rand_mirror:
        augs.append(HorizontalFlipAug(0.5))
    augs.append(CastAug())
    if any((brightness, contrast, saturation)):
        augs.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        augs.append(HueJitterAug(hue))
    if pca_noise > 0:
        augs.append(LightingAug(pca_noise, IMAGENET_EIGVAL, IMAGENET_EIGVEC))
    if rand_gray > 0:
        augs.append(RandomGrayAug(rand_gray))
    mean = _check_stat(mean, "mean", IMAGENET_MEAN)
    std = _check_stat(std, "std", IMAGENET_STD)
    if not (mean is None and std is None):
        augs.append(ColorNormalizeAug(mean, std))
    return augs
