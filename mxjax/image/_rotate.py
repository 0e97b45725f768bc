"""``mx.image.imrotate`` and ``random_rotate``: rotate float32 CHW images (or NCHW batches) about
their centre with bilinear sampling, zero outside the source, optionally zoomed so that no
border shows (``zoom_in``) or the whole source stays visible (``zoom_out``).

The sampling grid is built on the host and sampled by the ``BilinearSampler`` operator, as MXNet.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as onp

from .. import ndarray as _legacy
from .._ndarray import NDArray
from ._functions import array_like

__all__ = ["imrotate", "random_rotate"]


def _grid(angles: onp.ndarray, height: int, width: int, zoom_in: bool, zoom_out: bool) -> onp.ndarray:
    """(N, 2, H, W) sampling grid in [-1, 1] coordinates: x then y, for each angle in radians."""
    half_h, half_w = (height - 1) / 2.0, (width - 1) / 2.0
    ys = onp.arange(height, dtype=onp.float32)[:, None] - half_h
    xs = onp.arange(width, dtype=onp.float32)[None, :] - half_w
    cos = onp.cos(angles).astype(onp.float32)[:, None, None]
    sin = onp.sin(angles).astype(onp.float32)[:, None, None]
    grid_x = (xs * cos - ys * sin) / onp.float32(half_w)
    grid_y = (xs * sin + ys * cos) / onp.float32(half_h)
    grid = onp.stack([grid_x, grid_y], axis=1)
    if zoom_in or zoom_out:
        # the rotated image's bounding box, from its two corner directions
        radius, corner = onp.hypot(height, width), onp.arctan(height / width)
        turn = onp.abs(angles)
        span_x = onp.maximum(onp.abs(radius * onp.cos(corner + turn)), onp.abs(radius * onp.cos(corner - turn)))
        span_y = onp.maximum(onp.abs(radius * onp.sin(corner + turn)), onp.abs(radius * onp.sin(corner - turn)))
        if zoom_out:
            scale = onp.maximum(span_x / width, span_y / height)
        else:
            scale = onp.minimum(width / span_x, height / span_y)
        grid = grid * scale.astype(onp.float32)[:, None, None, None]
    return grid.astype(onp.float32)


def imrotate(src: Any, rotation_degrees: Any, zoom_in: bool = False, zoom_out: bool = False) -> Any:
    """Rotate a float32 (C, H, W) image by ``rotation_degrees`` (a number), or an (N, C, H, W)
    batch by one angle or one per image, counter-clockwise about the centre."""
    if zoom_in and zoom_out:
        raise ValueError("imrotate: zoom_in and zoom_out cannot both be True")
    if onp.dtype(src.dtype) != onp.float32:
        raise TypeError(f"imrotate: only float32 images are supported, got {onp.dtype(src.dtype).name}")
    single = src.ndim == 3
    if single and not isinstance(rotation_degrees, numbers.Number):
        raise TypeError("imrotate: a single (C, H, W) image takes a scalar rotation angle, got "
                        f"{type(rotation_degrees).__name__}")
    if src.ndim not in (3, 4):
        raise ValueError(f"imrotate: expected a (C, H, W) image or an (N, C, H, W) batch, got shape {tuple(src.shape)}")
    pixels = src.asnumpy() if isinstance(src, NDArray) else onp.asarray(src)
    if single:
        pixels = pixels[None]
    count, _, height, width = pixels.shape
    if isinstance(rotation_degrees, numbers.Number):
        degrees = onp.full((count,), float(rotation_degrees))
    else:
        degrees = (rotation_degrees.asnumpy() if isinstance(rotation_degrees, NDArray)
                   else onp.asarray(rotation_degrees)).astype(onp.float64).ravel()
    if degrees.shape[0] != count:
        raise ValueError(f"imrotate: {count} images but {degrees.shape[0]} rotation angles")
    grid = _grid(onp.deg2rad(degrees.astype(onp.float32)), height, width, zoom_in, zoom_out)
    rotated = _legacy.BilinearSampler(_legacy.array(pixels, dtype=onp.float32),
                                      _legacy.array(grid, dtype=onp.float32)).asnumpy()
    return array_like(rotated[0] if single else rotated, src, dtype=onp.float32)


def random_rotate(src: Any, angle_limits: tuple, zoom_in: bool = False, zoom_out: bool = False) -> Any:
    """``imrotate`` by an angle drawn uniformly from ``angle_limits`` (degrees; one per image of
    a batch) with ``numpy.random``."""
    if src.ndim == 3:
        angles: Any = onp.random.uniform(*angle_limits)
    else:
        angles = onp.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, angles if src.ndim != 3 else float(angles), zoom_in=zoom_in, zoom_out=zoom_out)

