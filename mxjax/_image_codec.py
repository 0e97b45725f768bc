"""Image decoding for ``mx.nd.imdecode`` and ``mx.npx.image.imdecode``/``imread``, with Pillow.

MXNet decodes with OpenCV; PNG and other lossless formats give the same pixels here, JPEG
may differ by a level or two (another IDCT).  Grayscale (``flag=0``) applies libpng's
fixed-point BT.601 weights to the decoded RGB pixels (exact for PNG; OpenCV reads a JPEG's
luma plane instead, which can differ by a level).
"""
from __future__ import annotations

import io
from typing import Any

import numpy as onp

from .base import MXNetError

try:
    from PIL import Image
except ImportError:  # Pillow is a declared dependency; without it only decoding fails
    Image = None


def _to_bytes(buf: Any) -> bytes:
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return bytes(buf)
    if isinstance(buf, str):
        return buf.encode("latin-1")
    if hasattr(buf, "asnumpy"):
        buf = buf.asnumpy()
    return onp.asarray(buf, dtype=onp.uint8).tobytes()


def gray(rgb: onp.ndarray) -> onp.ndarray:
    """RGB -> gray as OpenCV's PNG reader (libpng's 15-bit BT.601 weights, truncated)."""
    rgb = rgb.astype(onp.int32)
    return ((rgb[..., 0] * 9797 + rgb[..., 1] * 19234 + rgb[..., 2] * 3737) >> 15).astype(onp.uint8)


def decode(buf: Any, op: str = "imdecode", flag: int = 1, to_rgb: bool = True) -> onp.ndarray:
    """Encoded image bytes -> uint8 HWC pixels: 3 channels (RGB, or BGR with ``to_rgb=False``)
    for ``flag=1``, one gray channel for ``flag=0``."""
    if Image is None:
        raise MXNetError(f"{op}: decoding images needs Pillow (pip install Pillow)")
    data = _to_bytes(buf)
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            pixels = onp.asarray(image.convert("RGB"))
    except Exception as err:  # Pillow raises several kinds (UnidentifiedImageError, OSError, ...)
        raise MXNetError(f"{op}: decoding failed, {len(data)} bytes are not a valid image file "
                         f"({type(err).__name__}: {err})") from None
    if not flag:
        return gray(pixels)[..., None]
    return pixels if to_rgb else pixels[..., ::-1].copy()


def read(filename: str, op: str = "imread", flag: int = 1, to_rgb: bool = True) -> onp.ndarray:
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as err:
        raise MXNetError(f"{op}: cannot read image file {filename!r}: {err}") from None
    return decode(data, op, flag, to_rgb)
