"""Image transforms of ``mx.gluon.data.vision.transforms``: Gluon blocks around the image operators.

Each transform changes its first input (an HWC / NHWC image, or a CHW / NCHW tensor for the
tensor-side ones) and hands any further inputs (labels, boxes) back unchanged, so one block serves
both ``dataset.transform_first(t)`` and ``dataset.transform(t)``.  The work is done by the
``mx.npx.image`` operators (OpenCV-compatible resizing, seeded random draws); the HybridBlocks
compile under ``hybridize()``, where only the image enters the compiled program.  The colour
transforms live in ``_color_transforms`` and the shared base in ``_transform_base``; both are
re-exported here.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..... import numpy as np
from ..... import numpy_extension as npx
from .....base import MXNetValueError, numeric_types
from .....util import use_np
from ....block import Block
from .....image import imrotate, random_rotate
from ._color_transforms import (RandomBrightness, RandomColorJitter, RandomContrast, RandomGray, RandomHue,
                                RandomLighting, RandomSaturation)
from ._transform_base import _CHW, _HWC_ONLY, _ImageTransform, _append_return, _check_input, _width_height

__all__ = ["ToTensor", "Normalize", "Rotate", "RandomRotation", "RandomResizedCrop", "CropResize",
           "RandomCrop", "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue", "RandomColorJitter",
           "RandomLighting", "RandomGray"]

for _cls in (RandomBrightness, RandomContrast, RandomSaturation, RandomHue, RandomColorJitter, RandomLighting,
             RandomGray):
    _cls.__module__ = __name__  # public MXNet home of the classes moved to _color_transforms
del _cls


@use_np
class ToTensor(_ImageTransform):
    """HWC (or NHWC) image with values in [0, 255] -> CHW (NCHW) float32 tensor in [0, 1]."""

    def _apply(self, x: Any) -> Any:
        return npx.image.to_tensor(x)


@use_np
class Normalize(_ImageTransform):
    """``(x[c] - mean[c]) / std[c]`` for each channel of a CHW (or NCHW) tensor.

    ``mean`` and ``std`` are one value for every channel or one per channel (1 or 3 channels).
    """

    _layout = _CHW

    def __init__(self, mean: Any = 0.0, std: Any = 1.0) -> None:
        super().__init__()
        self._mean = mean
        self._std = std

    def _apply(self, x: Any) -> Any:
        if x.shape[-3] not in (1, 3):
            raise MXNetValueError(f"Normalize: expected a (C, H, W) or (N, C, H, W) tensor with 1 or 3 "
                                  f"channels (apply it after ToTensor), got shape {tuple(x.shape)}")
        return npx.image.normalize(x, self._mean, self._std)


def _rotation_input(name: str, x: Any) -> None:
    _check_input(name, x, _CHW)
    if x.dtype != np.float32:
        raise TypeError(f"{name} only supports float32 tensors (apply it after ToTensor), got {x.dtype}")


@use_np
class Rotate(Block):
    """Rotate a float32 CHW tensor (or NCHW batch) by ``rotation_degrees``, keeping its shape.

    ``zoom_in`` scales so that no padding shows; ``zoom_out`` so that all of the image stays in view.
    """

    def __init__(self, rotation_degrees: float, zoom_in: bool = False, zoom_out: bool = False) -> None:
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x: Any, *args: Any) -> Any:
        _rotation_input("Rotate", x)
        return _append_return(imrotate(x, *self._args), *args)


@use_np
class RandomRotation(Block):
    """Rotate a float32 CHW tensor (or NCHW batch) by an angle drawn from ``angle_limits``
    (lower, upper) degrees, with probability ``rotate_with_proba``."""

    def __init__(self, angle_limits: tuple, zoom_in: bool = False, zoom_out: bool = False,
                 rotate_with_proba: float = 1.0) -> None:
        super().__init__()
        low, high = angle_limits
        if low >= high:
            raise ValueError(f"RandomRotation: angle_limits must be (lower, upper) with lower < upper, "
                             f"got {tuple(angle_limits)}")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError(f"RandomRotation: rotate_with_proba must lie in [0, 1], got {rotate_with_proba}")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x: Any, *args: Any) -> Any:
        # MXNet draws from NumPy's global stream here, and drops the extra inputs when it skips
        # the rotation; they are kept in both cases
        if onp.random.random() > self._rotate_with_proba:
            return _append_return(x, *args)
        _rotation_input("RandomRotation", x)
        return _append_return(random_rotate(x, *self._args), *args)


@use_np
class RandomResizedCrop(_ImageTransform):
    """A random window (area fraction from ``scale``, aspect ratio width/height from ``ratio``)
    resized to ``size`` = (width, height), or a square for an int; ``interpolation`` is OpenCV's
    mode.  A batch (NHWC) shares one window."""

    def __init__(self, size: Any, scale: Any = (0.08, 1.0), ratio: tuple = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: int = 1) -> None:
        super().__init__()
        width, height = _width_height("RandomResizedCrop", size)
        if isinstance(scale, numeric_types):
            scale = (scale, 1.0)
        self._kwargs = {"width": width, "height": height, "area": scale, "ratio": ratio,
                        "interp": interpolation, "max_trial": 10}

    def _apply(self, x: Any) -> Any:
        return npx.image.random_resized_crop(x, **self._kwargs)


@use_np
class CropResize(_ImageTransform):
    """The ``width`` x ``height`` window whose top-left corner is at column ``x``, row ``y``;
    resized to ``size`` (an int: a square; (width, height)) when ``size`` is given."""

    def __init__(self, x: int, y: int, width: int, height: int, size: Any = None,
                 interpolation: int | None = None) -> None:
        super().__init__()
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = None if not size else _width_height("CropResize", size, allow_single=True)
        # MXNet 2.0 hands interpolation=None to the resize op, which rejects it; None means bilinear
        self._interpolation = 1 if interpolation is None else interpolation

    def _apply(self, x: Any) -> Any:
        height, width = x.shape[-3], x.shape[-2]
        if self._x + self._width > width or self._y + self._height > height:
            raise MXNetValueError(f"CropResize: the {self._width}x{self._height} window at x={self._x}, "
                                  f"y={self._y} does not fit an image of shape {tuple(x.shape)} "
                                  f"({width} wide, {height} high)")
        out = npx.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            out = npx.image.resize(out, self._size, False, self._interpolation)
        return out


def _pad_widths(pad: Any) -> tuple | None:
    """RandomCrop's ``pad``: an int for every side, or (top, bottom, left, right, ...) ->
    ((top, bottom), (left, right)) for the height and width axes."""
    if pad is None:
        return None
    if isinstance(pad, int):
        return ((pad, pad), (pad, pad))
    pad = tuple(pad)
    if len(pad) < 4:
        raise _PadError(f"RandomCrop: pad must be an int or hold at least 4 values "
                        f"(top, bottom, left, right), got {pad}")
    return ((pad[0], pad[1]), (pad[2], pad[3]))


class _PadError(ValueError, AssertionError):
    """A bad ``pad`` argument (MXNet 2.0 asserts, so this is also an AssertionError)."""


@use_np
class RandomCrop(_ImageTransform):
    """A ``size`` (an int: square; (width, height)) window at a random position, after optional
    constant padding (``pad``, filled with ``pad_value``); an image smaller than the window gives
    its largest window of that shape, resized up with ``interpolation``."""

    def __init__(self, size: Any, pad: Any = None, pad_value: float = 0, interpolation: int = 1) -> None:
        super().__init__()
        width, height = _width_height("RandomCrop", size)
        self._args = ((0, 1), (0, 1), width, height, interpolation)
        self._pad_value = pad_value
        self._pad = _pad_widths(pad)

    def _apply(self, x: Any) -> Any:
        if self._pad:
            # MXNet 2.0 builds a 3-D pad_width and fails on a batch; the batch axis is not padded here
            widths = ((0, 0),) * (x.ndim - 3) + self._pad + ((0, 0),)
            x = np.pad(x, pad_width=widths, mode="constant", constant_values=self._pad_value)
        return npx.image.random_crop(x, *self._args)


@use_np
class CenterCrop(_ImageTransform):
    """The centred ``size`` (an int: square; (width, height)) window of an image; an image smaller
    than the window gives its largest centred window of that shape, resized up."""

    def __init__(self, size: Any, interpolation: int = 1) -> None:
        super().__init__()
        width, height = _width_height("CenterCrop", size)
        self._args = (width, height, interpolation)

    def _apply(self, x: Any) -> Any:
        return npx.image.random_crop(x, (0.5, 0.5), (0.5, 0.5), *self._args)


@use_np
class Resize(_ImageTransform):
    """Resize to ``size`` = (width, height); an int gives a square, or with ``keep_ratio`` sets the
    short edge and scales the long one.  ``interpolation`` is OpenCV's mode (1: bilinear)."""

    def __init__(self, size: Any, keep_ratio: bool = False, interpolation: int = 1) -> None:
        super().__init__()
        _width_height("Resize", size, allow_single=True)
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def _apply(self, x: Any) -> Any:
        return npx.image.resize(x, self._size, self._keep, self._interpolation)


class _RandomFlip(_ImageTransform):
    _layout = _HWC_ONLY
    _always: Any = None
    _sometimes: Any = None

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def _apply(self, x: Any) -> Any:
        if self.p <= 0:
            return x
        if self.p >= 1:
            return type(self)._always(x)
        return type(self)._sometimes(x, p=self.p)


@use_np
class RandomFlipLeftRight(_RandomFlip):
    """Mirror an HWC image horizontally with probability ``p``."""

    _always = staticmethod(npx.image.flip_left_right)
    _sometimes = staticmethod(npx.image.random_flip_left_right)


@use_np
class RandomFlipTopBottom(_RandomFlip):
    """Mirror an HWC image vertically with probability ``p``."""

    _always = staticmethod(npx.image.flip_top_bottom)
    _sometimes = staticmethod(npx.image.random_flip_top_bottom)
