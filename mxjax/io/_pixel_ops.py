"""Pixel helpers of MXNet's image record reader on NumPy uint8 images: grayscale as MXNet's
decoder makes it and the sizes its resize and crop steps pick (the resizing itself is
``mxjax._image_resize``, bit-exact to OpenCV for bilinear uint8).
"""
from __future__ import annotations

import numpy as onp

from .. import _image_codec

__all__ = ["rgb_to_gray", "short_side_size", "cover_size"]


def rgb_to_gray(rgb: onp.ndarray) -> onp.ndarray:
    """uint8 RGB (HWC) -> uint8 gray (HW1), as MXNet's decoder makes it (``_image_codec.gray``)."""
    return _image_codec.gray(rgb)[..., None]


def short_side_size(height: int, width: int, short: int) -> tuple:
    """Size with the shorter side ``short`` and the longer one scaled to match (truncated)."""
    if height > width:
        return short * height // width, short
    return short, short * width // height


def cover_size(height: int, width: int, crop_h: int, crop_w: int) -> tuple:
    """The smallest aspect-keeping (truncated) size that a ``crop_h`` x ``crop_w`` crop fits in."""
    if height >= crop_h and width >= crop_w:
        return height, width
    scale = max(crop_h / height, crop_w / width)
    return max(crop_h, int(height * scale)), max(crop_w, int(width * scale))
