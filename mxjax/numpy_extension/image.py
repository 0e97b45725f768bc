"""``mx.npx.image``: MXNet's image operators on ``mx.np`` arrays, and ``imdecode``/``imread``.

MXNet 2 files these ops as ``_npx__image_*``; its ``npx.image`` also re-exports the Python
``mx.image`` module (augmenters, iterators), which lives elsewhere.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp

from .. import _config, _image_codec
from .._frontend import make_function, store_out
from .._ndarray import NDArray, array
from ..numpy.multiarray import ndarray

_MODULE = "mxjax.numpy_extension.image"

__all__ = ["to_tensor", "normalize", "resize", "crop", "random_crop", "random_resized_crop", "flip_left_right",
           "flip_top_bottom", "random_flip_left_right", "random_flip_top_bottom", "random_brightness",
           "random_contrast", "random_saturation", "random_hue", "random_color_jitter", "adjust_lighting",
           "random_lighting", "imdecode", "imread"]


def _npx(name: str) -> Callable[..., Any]:
    return make_function(f"_image_{name}", name=name, out_cls=ndarray, legacy=True, module=_MODULE)


to_tensor = _npx("to_tensor")
normalize = _npx("normalize")
resize = _npx("resize")
crop = _npx("crop")
random_crop = _npx("random_crop")
random_resized_crop = _npx("random_resized_crop")
flip_left_right = _npx("flip_left_right")
flip_top_bottom = _npx("flip_top_bottom")
random_flip_left_right = _npx("random_flip_left_right")
random_flip_top_bottom = _npx("random_flip_top_bottom")
random_brightness = _npx("random_brightness")
random_contrast = _npx("random_contrast")
random_saturation = _npx("random_saturation")
random_hue = _npx("random_hue")
random_color_jitter = _npx("random_color_jitter")
adjust_lighting = _npx("adjust_lighting")
random_lighting = _npx("random_lighting")


def _wrap(pixels: Any, out: Any, name: str) -> Any:
    cls = ndarray if _config.is_np_array() else NDArray
    result = array(pixels, dtype=jnp.uint8, cls=cls)
    return store_out(out, result, name) if out is not None else result


def imdecode(buf: Any, flag: int = 1, to_rgb: bool = True, out: Any = None) -> Any:
    """Decode an encoded image (bytes, bytearray or a uint8 array) to an (H, W, C) uint8 array:
    RGB (BGR with ``to_rgb=False``) for ``flag=1``, one gray channel for ``flag=0``."""
    return _wrap(_image_codec.decode(buf, "imdecode", flag, to_rgb), out, "imdecode")


def imread(filename: str, flag: int = 1, to_rgb: bool = True, out: Any = None) -> Any:
    """Read and decode an image file, as ``imdecode``."""
    return _wrap(_image_codec.read(filename, "imread", flag, to_rgb), out, "imread")
