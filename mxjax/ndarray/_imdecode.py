"""``mx.nd.imdecode``: MXNet 1.x's deprecated decoder into a (C, H, W) float array."""
from __future__ import annotations

from typing import Any

import numpy as onp

from .. import _image_codec
from .._frontend import store_out
from .._ndarray import NDArray, array
from ..base import MXNetValueError


def imdecode(str_img: Any, clip_rect: tuple = (0, 0, 0, 0), out: NDArray | None = None, index: int = 0,
             channels: int = 3, mean: NDArray | None = None) -> NDArray:
    """Decode image bytes to a (channels, H, W) float32 NDArray in OpenCV's channel order (BGR; gray
    for ``channels=1``), cropped to ``clip_rect`` = (x0, y0, x1, y1) (x1/y1 of 0: the image edge)
    and less ``mean`` (C, H, W) when given.  With a 4-D ``out`` the image goes to ``out[index]``.
    Deprecated in MXNet: use ``mx.image.imdecode``."""
    if channels not in (1, 3):
        raise MXNetValueError(f"imdecode: channels must be 1 or 3, got {channels}")
    pixels = _image_codec.decode(str_img, "imdecode", flag=1 if channels == 3 else 0, to_rgb=False)
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    height, width = pixels.shape[:2]
    x1, y1 = x1 or width, y1 or height
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise MXNetValueError(f"imdecode: clip_rect {tuple(clip_rect)} is outside the {width}x{height} image")
    chw = onp.ascontiguousarray(pixels[y0:y1, x0:x1].transpose(2, 0, 1))
    dtype = onp.float32 if mean is None else mean.dtype
    values = chw.astype(dtype)
    if mean is not None:
        mean_np = mean.asnumpy()
        if mean_np.shape != values.shape:
            raise MXNetValueError(f"imdecode: mean has shape {mean_np.shape} but the decoded image is {values.shape}")
        values = values - mean_np
    result = array(values, dtype=dtype, cls=NDArray)
    if out is None:
        return result
    if out.ndim == 4:
        out[index] = result
        return out
    return store_out(out, result, "imdecode")
