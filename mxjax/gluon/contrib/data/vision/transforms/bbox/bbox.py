"""Detection transforms: an HWC image and its (N, 4+) boxes change together (MXNet 2.0's
``gluon.contrib.data.vision.transforms.bbox``).

Each block takes ``(img, bbox)`` and returns the new pair.  Images go through the ``mx.npx.image``
operators; boxes are small, so their arithmetic runs in NumPy on the host (``_bbox_utils``) and
comes back as an array of the input's kind.  The random choices use Python's ``random`` module,
as MXNet does, so ``random.seed`` reproduces them.
"""
from __future__ import annotations

import random
from typing import Any, Sequence

import numpy as onp

from ....... import ndarray as nd
from ....... import numpy as np
from ....... import numpy_extension as npx
from ......._ndarray import NDArray
from .......base import MXNetValueError, numeric_types
from ......block import Block
from .utils import (_BoxShapeError, _check_bbox_shape, bbox_crop, bbox_random_crop_with_constraints,
                          bbox_resize, bbox_translate)

__all__ = ["ImageBboxRandomFlipLeftRight", "ImageBboxCrop", "ImageBboxRandomCropWithConstraints",
           "ImageBboxRandomExpand", "ImageBboxResize"]


def _host(bbox: Any) -> onp.ndarray:
    return bbox.asnumpy() if isinstance(bbox, NDArray) else onp.asarray(bbox)


def _like(bbox: Any, values: onp.ndarray) -> Any:
    """``values`` as an array of ``bbox``'s kind: legacy NDArray for one, else mx.np (float32 by
    default, as MXNet's ``np.array`` of host data)."""
    if type(bbox) is NDArray:
        return nd.array(values)
    return np.array(values)


def _check_image(name: str, img: Any) -> None:
    if len(img.shape) != 3:
        raise NotImplementedError(f"{name} only supports (H, W, C) images, got shape {tuple(img.shape)}")


class ImageBboxRandomFlipLeftRight(Block):
    """Mirror the image and its boxes horizontally with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any, bbox: Any) -> tuple:
        _check_bbox_shape(bbox)
        if self.p <= 0 or (self.p < 1 and self.p < random.random()):
            return img, bbox
        width = img.shape[-2]
        boxes = _host(bbox).copy()
        # MXNet 2.0 writes the flipped corners into the caller's bbox array; a dataset that hands
        # out its stored labels would then flip them again every epoch.  A new array is returned.
        boxes[:, [0, 2]] = width - boxes[:, [2, 0]]
        flipped = nd.image.flip_left_right(img) if type(img) is NDArray else npx.image.flip_left_right(img)
        return flipped, _like(bbox, boxes).astype(bbox.dtype)


class ImageBboxCrop(Block):
    """Crop the image to ``crop`` = (x, y, width, height) and clip its boxes to it; boxes whose
    centre falls outside are dropped unless ``allow_outside_center``.  A window reaching past
    the image leaves both unchanged."""

    def __init__(self, crop: Sequence, allow_outside_center: bool = False) -> None:
        super().__init__()
        if len(crop) != 4:
            raise _BoxShapeError(f"ImageBboxCrop: crop must be (x, y, width, height), got {crop!r}")
        self.xmin, self.ymin, self.width, self.height = crop
        if self.xmin < 0 or self.ymin < 0 or self.width <= 0 or self.height <= 0:
            raise _BoxShapeError(f"ImageBboxCrop: crop needs x, y >= 0 and width, height > 0, got {tuple(crop)}")
        self.xmax = self.xmin + self.width
        self.ymax = self.ymin + self.height
        self._allow_outside_center = allow_outside_center

    def forward(self, img: Any, bbox: Any) -> tuple:
        # MXNet 2.0 also skips a window that ends exactly on the image border (>=); such a window
        # fits, so it is cropped here
        if self.xmax > img.shape[-2] or self.ymax > img.shape[-3]:
            return img, bbox
        window = (self.xmin, self.ymin, self.width, self.height)
        crop = nd.image.crop if type(img) is NDArray else npx.image.crop
        boxes = bbox_crop(_host(bbox), window, self._allow_outside_center)
        return crop(img, *window), _like(bbox, boxes)


class ImageBboxRandomCropWithConstraints(Block):
    """With probability ``p``, an SSD-style random crop that keeps the boxes' IoU with the window
    within one of ``constraints`` (see ``bbox_random_crop_with_constraints``)."""

    def __init__(self, p: float = 0.5, min_scale: float = 0.3, max_scale: float = 1, max_aspect_ratio: float = 2,
                 constraints: Any = None, max_trial: int = 50) -> None:
        super().__init__()
        self.p = p
        self._args = {"min_scale": min_scale, "max_scale": max_scale, "max_aspect_ratio": max_aspect_ratio,
                      "constraints": constraints, "max_trial": max_trial}

    def forward(self, img: Any, bbox: Any) -> tuple:
        if random.random() > self.p:
            return img, bbox
        size = (img.shape[-2], img.shape[-3])
        boxes, window = bbox_random_crop_with_constraints(_host(bbox), size, **self._args)
        if tuple(window) == (0, 0) + size:
            return img, bbox
        crop = nd.image.crop if type(img) is NDArray else npx.image.crop
        return crop(img, x=window[0], y=window[1], width=window[2], height=window[3]), _like(bbox, boxes)


class ImageBboxRandomExpand(Block):
    """With probability ``p``, place the image at a random spot of a canvas up to ``max_ratio``
    times larger (same ratio on both axes if ``keep_ratio``) filled with ``fill`` (a value, or
    one per channel), and move the boxes with it."""

    def __init__(self, p: float = 0.5, max_ratio: float = 4, fill: Any = 0, keep_ratio: bool = True) -> None:
        super().__init__()
        self.p = p
        self._max_ratio = max_ratio
        self._fill = fill
        self._keep_ratio = keep_ratio

    def forward(self, img: Any, bbox: Any) -> tuple:
        if self._max_ratio <= 1 or random.random() > self.p:
            return img, bbox
        _check_image("ImageBboxRandomExpand", img)
        height, width, channels = img.shape
        ratio_x = random.uniform(1, self._max_ratio)
        ratio_y = ratio_x if self._keep_ratio else random.uniform(1, self._max_ratio)
        out_h, out_w = int(height * ratio_y), int(width * ratio_x)
        top = random.randint(0, out_h - height)
        left = random.randint(0, out_w - width)
        legacy = type(img) is NDArray
        image = img.as_np_ndarray() if legacy else img
        if isinstance(self._fill, numeric_types):
            canvas = np.full((out_h, out_w, channels), self._fill, dtype=image.dtype)
        else:
            fill = onp.asarray(self._fill).ravel()
            if fill.size != channels:
                raise ValueError(f"ImageBboxRandomExpand: fill has {fill.size} values for {channels} channels")
            canvas = np.tile(np.array(fill, dtype=image.dtype).reshape((1, channels)), reps=(out_h * out_w, 1))
            canvas = canvas.reshape((out_h, out_w, channels))
        canvas[top:top + height, left:left + width, :] = image
        canvas = canvas.as_nd_ndarray() if legacy else canvas
        return canvas, _like(bbox, bbox_translate(_host(bbox), left, top))


class ImageBboxResize(Block):
    """Resize the image to ``width`` x ``height`` (``interp``: OpenCV's mode; -1 picks one at
    random) and scale its boxes to match."""

    def __init__(self, width: int, height: int, interp: int = 1) -> None:
        super().__init__()
        if width <= 0 or height <= 0:
            raise MXNetValueError(f"ImageBboxResize: width and height must be positive, got {width}x{height}")
        self._size = (width, height)
        self._interp = interp

    def forward(self, img: Any, bbox: Any) -> tuple:
        _check_image("ImageBboxResize", img)
        # MXNet draws from randint(0, 5), whose 5 is no resize mode; the draw stays in 0..4 here
        interp = random.randint(0, 4) if self._interp == -1 else self._interp
        resize = nd.image.resize if type(img) is NDArray else npx.image.resize
        boxes = bbox_resize(_host(bbox), (img.shape[-2], img.shape[-3]), self._size)
        return resize(img, self._size, False, interp), _like(bbox, boxes)
