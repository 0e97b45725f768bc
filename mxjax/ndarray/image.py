"""``mx.nd.image``: MXNet's image operators (``_image_*``) on legacy NDArrays, one binding each."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from .._ndarray import NDArray

_MODULE = "mxjax.ndarray.image"

__all__ = ["to_tensor", "normalize", "resize", "crop", "random_crop", "random_resized_crop", "flip_left_right",
           "flip_top_bottom", "random_flip_left_right", "random_flip_top_bottom", "random_brightness",
           "random_contrast", "random_saturation", "random_hue", "random_color_jitter", "adjust_lighting",
           "random_lighting"]


def _nd(name: str) -> Callable[..., Any]:
    return make_function(f"_image_{name}", name=name, out_cls=NDArray, legacy=True, module=_MODULE)


to_tensor = _nd("to_tensor")
normalize = _nd("normalize")
resize = _nd("resize")
crop = _nd("crop")
random_crop = _nd("random_crop")
random_resized_crop = _nd("random_resized_crop")
flip_left_right = _nd("flip_left_right")
flip_top_bottom = _nd("flip_top_bottom")
random_flip_left_right = _nd("random_flip_left_right")
random_flip_top_bottom = _nd("random_flip_top_bottom")
random_brightness = _nd("random_brightness")
random_contrast = _nd("random_contrast")
random_saturation = _nd("random_saturation")
random_hue = _nd("random_hue")
random_color_jitter = _nd("random_color_jitter")
adjust_lighting = _nd("adjust_lighting")
random_lighting = _nd("random_lighting")
