"""Image transforms of ``mx.gluon.data.vision.transforms``: Gluon blocks around the image operators.

Each transform changes its first input (an HWC / NHWC image, or a CHW / NCHW tensor for the
tensor-side ones) and hands any further inputs (labels, boxes) back unchanged, so one block serves
both ``dataset.transform_first(t)`` and ``dataset.transform(t)``.  The work is done by the
``mx.npx.image`` operators (OpenCV-compatible resizing, seeded random draws); the HybridBlocks
compile under ``hybridize()``, where only the image enters the compiled program.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..... import numpy as np
from ..... import numpy_extension as npx
from ..... import _deferred_compute as dc
from ....._ndarray import NDArray
from .....base import MXNetTypeError, MXNetValueError, numeric_types
from .....util import use_np
from ....block import Block, HybridBlock
from .....image import imrotate, random_rotate

__all__ = ["ToTensor", "Normalize", "Rotate", "RandomRotation", "RandomResizedCrop", "CropResize",
           "RandomCrop", "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue", "RandomColorJitter",
           "RandomLighting", "RandomGray"]

_HWC = ((3, 4), "(H, W, C) or (N, H, W, C)")
_HWC_ONLY = ((3,), "(H, W, C)")
_CHW = ((3, 4), "(C, H, W) or (N, C, H, W)")


def _append_return(*outputs: Any) -> Any:
    """One output as itself, several as a tuple (the transformed image first), none as None."""
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _check_input(name: str, x: Any, layout: tuple) -> None:
    """Raise naming the transform unless ``x`` is an array of one of the accepted ranks."""
    ndims, wanted = layout
    if not isinstance(x, NDArray):
        raise MXNetTypeError(f"{name}: expected an mx.np.ndarray image of shape {wanted}, "
                             f"got {type(x).__name__}")
    if x.ndim not in ndims:
        raise MXNetValueError(f"{name}: expected an image of shape {wanted}, got shape {tuple(x.shape)}")


def _width_height(name: str, size: Any, allow_single: bool = False) -> tuple:
    """``size`` (an int, or (width, height)) as a validated tuple; a bare int gives a square
    unless ``allow_single`` keeps it one element (Resize's short-edge mode)."""
    if isinstance(size, numeric_types):
        size = (size,) if allow_single else (size, size)
    try:
        dims = tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise MXNetValueError(f"{name}: size must be an int or a (width, height) tuple, got {size!r}") from None
    if len(dims) not in ((1, 2) if allow_single else (2,)) or any(d <= 0 for d in dims):
        raise MXNetValueError(f"{name}: size must be a positive int or a (width, height) tuple of "
                              f"positive ints, got {size!r}")
    return dims


class _ImageTransform(HybridBlock):
    """Base of the hybridizable transforms: ``forward(x, *extra)`` maps ``x`` with ``_apply`` and
    returns ``extra`` untouched.  Hybridized, only ``x`` goes through the compiled program, so
    extra inputs of any type (Python ints, strings) pass through; MXNet 2.0 rejects non-array
    extras of a hybridized block and re-traces when their number changes."""

    _layout = _HWC

    def _apply(self, x: Any) -> Any:
        raise NotImplementedError

    def forward(self, x: Any, *args: Any) -> Any:
        _check_input(type(self).__name__, x, self._layout)
        return _append_return(self._apply(x), *args)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) > 1 and self._active and not kwargs and not dc.is_deferred_compute():
            return _append_return(super()._call(args[0]), *args[1:])
        return super()._call(*args, **kwargs)


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
