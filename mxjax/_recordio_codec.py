"""Image encoding and decoding for ``mx.recordio``'s ``pack_img``/``unpack_img`` (through Pillow),
in OpenCV's conventions as MXNet uses them: BGR(A) channel order and ``imdecode``'s ``iscolor``.

Separate from the record format so that the public helpers in ``recordio`` stay short; it is
also the decoder ``tools.im2rec`` reaches through ``recordio._imdecode``.
"""
from __future__ import annotations

import io
from typing import Any

import numpy as np

from .base import MXNetError, MXNetValueError


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:  # Pillow is a declared dependency; without it only the image helpers fail
        raise MXNetError("pack_img/unpack_img need Pillow (pip install Pillow)") from None
    return Image


def _encode(img: np.ndarray, quality: int, img_fmt: str) -> bytes:
    Image = _pillow()
    ext = img_fmt.lower() if img_fmt.startswith(".") else "." + img_fmt.lower()
    fmt = Image.registered_extensions().get(ext)
    if fmt is None:
        raise MXNetValueError(f"pack_img: unknown image format {img_fmt!r}, expected e.g. '.jpg' or '.png'")
    img = np.asarray(img)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 2 and img.dtype == np.uint16 and fmt == "PNG":
        pil = Image.fromarray(img)
    elif img.dtype != np.uint8:
        raise MXNetValueError(f"pack_img: expected a uint8 image (or uint16 gray for PNG), got {img.dtype}")
    elif img.ndim == 2:
        pil = Image.fromarray(img)
    elif img.ndim == 3 and img.shape[2] in (3, 4):
        # OpenCV's channel order, as MXNet's pack_img expects: BGR / BGRA.
        order = [2, 1, 0] if img.shape[2] == 3 else [2, 1, 0, 3]
        pil = Image.fromarray(np.ascontiguousarray(img[:, :, order]))
    else:
        raise MXNetValueError(f"pack_img: expected an HxW, HxWx3 (BGR) or HxWx4 (BGRA) image, "
                              f"got shape {img.shape}")
    options: dict = {}
    if fmt == "JPEG":
        if pil.mode == "RGBA":
            raise MXNetValueError("pack_img: JPEG cannot store an alpha channel; drop it or use '.png'")
        options["quality"] = int(quality)
    elif fmt == "PNG":
        options["compress_level"] = min(max(int(quality), 0), 9)
    out = io.BytesIO()
    pil.save(out, format=fmt, **options)
    return out.getvalue()


def _decode_unchanged(body: bytes) -> np.ndarray:
    Image = _pillow()
    try:
        with Image.open(io.BytesIO(body)) as pil:
            pil.load()
            mode = pil.mode
            if mode in ("I;16", "I;16B", "I;16L"):
                return np.asarray(pil, dtype=np.uint16).copy()
            if mode == "1":
                pil = pil.convert("L")
            elif mode == "P":
                pil = pil.convert("RGBA" if "transparency" in pil.info else "RGB")
            elif mode == "LA":
                pil = pil.convert("RGBA")
            elif mode not in ("L", "RGB", "RGBA"):
                pil = pil.convert("RGB")
            pixels = np.asarray(pil)
    except Exception as err:  # Pillow raises several kinds (UnidentifiedImageError, OSError, ...)
        raise MXNetError(f"unpack_img: {len(body)} bytes are not a valid image "
                         f"({type(err).__name__}: {err})") from None
    if pixels.ndim == 3:
        order = [2, 1, 0] if pixels.shape[2] == 3 else [2, 1, 0, 3]
        pixels = pixels[:, :, order]
    return np.ascontiguousarray(pixels)


def _imdecode(body: bytes, iscolor: int, op: str = "unpack_img") -> np.ndarray:
    """Encoded image bytes to pixels in OpenCV's ``imdecode`` layout (see ``unpack_img``)."""
    from ._image_codec import decode
    if iscolor < 0:
        return _decode_unchanged(body)
    if iscolor == 0:
        return decode(body, op, flag=0)[:, :, 0]
    return decode(body, op, flag=1, to_rgb=False)
