"""``mx.image``'s stand-alone functions: decoding, OpenCV-style resizing and padding, crops and
colour normalization of (H, W, C) images.

MXNet calls OpenCV for decoding, resizing and padding.  Here decoding is Pillow
(``mxjax._image_codec``) and resizing is ``_resize`` (NumPy, ``cv::resize``'s per-axis weights):
against OpenCV 3.4 (as built into MXNet 2.0.0b1) uint8 results differ by at most 1 grey level for
every ``interp`` (measured on the test fixtures; OpenCV rounds in fixed point, this in float32),
float32 results by < 1e-3.

Every function keeps the array kind it is given: ``mx.np.ndarray`` in, ``mx.np.ndarray`` out;
legacy ``mx.nd.NDArray`` in, ``NDArray`` out (MXNet 2.0 raises for some of these combinations).
The random ones draw from Python's ``random`` module in the same order as MXNet, so a seeded
``random`` gives the same crops.
"""
from __future__ import annotations

import math
import random
import warnings
from numbers import Number
from typing import Any, Sequence

import jax
import numpy as onp

from .. import _config, _image_codec
from .._ndarray import NDArray, from_jax
from ..base import MXNetError
from ..numpy.multiarray import ndarray as _NpArray
from ..numpy_extension import image as _npx_image
from .. import _image_resize as _resize

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop"]

_INTERPS = (0, 1, 2, 3, 4)


class ImageArgumentError(ValueError, AssertionError):
    """A bad argument that MXNet rejects with ``assert``: catchable as either class."""


class ImageKeywordError(TypeError, AssertionError):
    """An unexpected keyword argument that MXNet rejects with ``assert``."""


# ----------------------------------------------------------------------------- array kinds

def uses_np(src: Any) -> bool:
    """Whether results for ``src`` should be ``mx.np`` arrays (else legacy NDArrays)."""
    if isinstance(src, _NpArray):
        return True
    if isinstance(src, NDArray):
        return False
    return _config.is_np_array()


def array_like(values: Any, like: Any, dtype: Any = None) -> Any:
    """``values`` as an array of the same kind as ``like`` (``mx.np`` or ``mx.nd``)."""
    from .. import ndarray as nd
    from .. import numpy as mnp
    if isinstance(values, NDArray):
        if uses_np(like) == isinstance(values, _NpArray) and (dtype is None or values.dtype == dtype):
            return values
        values = values.asnumpy()
    values = onp.asarray(values, dtype=dtype)
    if dtype is None and values.dtype == onp.float64:
        values = values.astype(onp.float32)
    cls = _NpArray if uses_np(like) else NDArray
    if values.ndim >= 2:
        # ``array()`` goes through jnp.array, which compiles a conversion for every new shape
        # (~0.1 s per differently sized image); a plain device_put does not.  Images live on
        # the CPU, as MXNet's decoded images do.
        with _config.x64():
            return from_jax(jax.device_put(onp.ascontiguousarray(values), _cpu()), cls)
    return (mnp.array if cls is _NpArray else nd.array)(values, dtype=values.dtype)


def _cpu() -> Any:
    return jax.local_devices(backend="cpu")[0]


def image_shape(src: Any, op: str) -> tuple[int, int, int]:
    """(height, width, channels) of an HWC image; raises naming ``op`` otherwise."""
    shape = tuple(getattr(src, "shape", ()))
    if len(shape) != 3:
        raise MXNetError(f"{op}: expected an (H, W, C) image, got "
                         f"{type(src).__name__} of shape {shape}")
    return shape  # type: ignore[return-value]


# ----------------------------------------------------------------------------- decoding

def imread(filename: str, flag: int = 1, to_rgb: bool = True, out: Any = None) -> Any:
    """Read and decode an image file to a uint8 (H, W, C) array: RGB (BGR with ``to_rgb=False``)
    for ``flag=1``, one grey channel for ``flag=0``."""
    if out is not None:
        return _npx_image.imread(filename, flag=flag, to_rgb=to_rgb, out=out)
    return array_like(_image_codec.read(filename, "imread", flag, to_rgb), None, dtype=onp.uint8)


def imdecode(buf: Any, flag: int = 1, to_rgb: bool = True, out: Any = None) -> Any:
    """Decode encoded image bytes (bytes, bytearray, a NumPy uint8 array or an MXNet array of
    bytes) to a uint8 (H, W, C) array, as ``imread``."""
    if isinstance(buf, NDArray):
        buf = buf.asnumpy().astype(onp.uint8)
    elif not isinstance(buf, (bytes, bytearray, onp.ndarray)):
        raise ValueError(f"imdecode: buf must be bytes, bytearray or numpy.ndarray, got "
                         f"{type(buf).__name__} (encode a str to bytes first)")
    if out is not None:
        return _npx_image.imdecode(buf, flag=flag, to_rgb=to_rgb, out=out)
    return array_like(_image_codec.decode(buf, "imdecode", flag, to_rgb), None, dtype=onp.uint8)


# ----------------------------------------------------------------------------- resize and pad

def resize_pixels(pixels: onp.ndarray, w: int, h: int, interp: int, op: str) -> onp.ndarray:
    """Checked host resize of an (H, W, C) NumPy image (``interp`` 0-4, or 5 as 1)."""
    w, h = int(w), int(h)
    if w <= 0 or h <= 0:
        raise MXNetError(f"{op}: the target size must be positive, got w={w}, h={h}")
    code = 1 if int(interp) == 5 else int(interp)
    if code not in _INTERPS:
        raise MXNetError(f"{op}: unknown interp={interp}; expected 0 (nearest), 1 (bilinear), "
                         "2 (bicubic), 3 (area) or 4 (lanczos)")
    if pixels.dtype.name not in _resize.DTYPES:
        raise MXNetError(f"{op}: cannot resize a {pixels.dtype.name} image (OpenCV's resize takes "
                         f"{', '.join(_resize.DTYPES)})")
    return _resize.resize(pixels, w, h, code)


def imresize(src: Any, w: int, h: int, interp: int = 1, out: Any = None) -> Any:
    """Resize an (H, W, C) image to width ``w`` and height ``h`` as OpenCV's ``cv::resize``.

    ``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (8x8); 5 (OpenCV's exact
    bilinear) is treated as 1.  The "auto" codes 9 and 10 belong to ``resize_short`` and the crop
    functions; here, as in MXNet, they are an error.  uint8 results are within 1 level of OpenCV's.
    """
    image_shape(src, "imresize")
    pixels = src.asnumpy() if isinstance(src, NDArray) else onp.asarray(src)
    result = array_like(resize_pixels(pixels, w, h, interp, "imresize"), src, dtype=pixels.dtype)
    if out is not None:
        out[:] = result
        return out
    return result


_BORDER_MODES = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}  # OpenCV's codes
_BORDER_ISOLATED = 16


def copyMakeBorder(src: Any, top: int, bot: int, left: int, right: int, type: int = 0,  # noqa: A002
                   value: float = 0.0, values: Sequence[float] = (), out: Any = None) -> Any:
    """Pad an (H, W, C) image as OpenCV's ``copyMakeBorder``.

    ``type`` is OpenCV's code (MXNet's docstring lists another order, its OpenCV call uses
    these): 0 constant (``values`` per channel, else ``value``), 1 replicate (``aaa|abc``),
    2 reflect (``cba|abc``), 3 wrap (``abc|abc``), 4 reflect-101 (``cb|abc``); the
    ``BORDER_ISOLATED`` flag (16) is accepted and changes nothing for a whole image.  MXNet 2.0
    accepts only legacy NDArrays here; both kinds work and the result has the kind of ``src``.
    """
    height, width, channels = image_shape(src, "copyMakeBorder")
    pads = [int(top), int(bot), int(left), int(right)]
    if min(pads) < 0:
        raise MXNetError(f"copyMakeBorder: margins must be >= 0, got top={top}, bot={bot}, "
                         f"left={left}, right={right}")
    mode = _BORDER_MODES.get(int(type) & ~_BORDER_ISOLATED)
    if mode is None:
        raise MXNetError(f"copyMakeBorder: unknown border type={type}; expected 0 (constant), "
                         "1 (replicate), 2 (reflect), 3 (wrap) or 4 (reflect_101)")
    pixels = src.asnumpy() if isinstance(src, NDArray) else onp.asarray(src)
    width_spec = ((pads[0], pads[1]), (pads[2], pads[3]), (0, 0))
    if mode == "constant":
        fill = [float(v) for v in values] if len(values) else [float(value)] * channels
        fill = onp.asarray((fill + [0.0] * channels)[:channels])  # cv::Scalar: missing entries are 0
        if not onp.issubdtype(pixels.dtype, onp.floating):
            info = onp.iinfo(pixels.dtype)
            fill = onp.clip(onp.round(fill), info.min, info.max)
        result = onp.empty((height + pads[0] + pads[1], width + pads[2] + pads[3], channels), pixels.dtype)
        result[...] = fill.astype(pixels.dtype)
        result[pads[0]:pads[0] + height, pads[2]:pads[2] + width] = pixels
    else:
        result = onp.pad(pixels, width_spec, mode=mode)
    result = array_like(result, src, dtype=result.dtype)
    if out is not None:
        out[:] = result
        return out
    return result


def _get_interp_method(interp: int, sizes: tuple = (), op: str = "resize") -> int:
    """Resolve ``interp`` 9 (cubic to enlarge, area to shrink, else bilinear; cubic without
    ``sizes`` = (old_h, old_w, new_h, new_w)) and 10 (a random code 0-4)."""
    if interp == 9:
        if not sizes:
            return 2
        old_h, old_w, new_h, new_w = sizes
        if new_h > old_h and new_w > old_w:
            return 2
        if new_h < old_h and new_w < old_w:
            return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in _INTERPS:
        raise ValueError(f"{op}: unknown interp method {interp}; expected 0-4, 9 (auto) or 10 (random)")
    return interp


def scale_down(src_size: tuple, size: tuple) -> tuple[int, int]:
    """Shrink a crop ``size`` (w, h) keeping its aspect ratio until it fits ``src_size`` (w, h)."""
    crop_w, crop_h = size
    img_w, img_h = src_size
    if img_h < crop_h:
        crop_w, crop_h = float(crop_w * img_h) / crop_h, img_h
    if img_w < crop_w:
        crop_w, crop_h = img_w, float(crop_h * img_w) / crop_w
    return int(crop_w), int(crop_h)


def resize_short(src: Any, size: int, interp: int = 2) -> Any:
    """Resize so the shorter edge is ``size`` pixels, the longer one scaled (rounded down)."""
    height, width, _ = image_shape(src, "resize_short")
    if int(size) <= 0:
        raise MXNetError(f"resize_short: size must be positive, got {size}")
    if height > width:
        new_h, new_w = size * height // width, size
    else:
        new_h, new_w = size, size * width // height
    code = _get_interp_method(interp, (height, width, new_h, new_w), "resize_short")
    return imresize(src, new_w, new_h, interp=code)


# ----------------------------------------------------------------------------- crops

def fixed_crop(src: Any, x0: int, y0: int, w: int, h: int, size: tuple | None = None, interp: int = 2) -> Any:
    """The ``w`` x ``h`` window at column ``x0``, row ``y0``, resized to ``size`` (w, h) if given.

    MXNet slices silently past the border (returning a smaller window); a window that does not
    fit the image raises here instead."""
    height, width, _ = image_shape(src, "fixed_crop")
    x0, y0, w, h = int(x0), int(y0), int(w), int(h)
    if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > width or y0 + h > height:
        raise ValueError(f"fixed_crop: a {w}x{h} (w x h) window at x0={x0}, y0={y0} does not fit the "
                         f"image of shape {tuple(src.shape)} ({width} wide, {height} high)")
    # slice on the host: eager JAX would compile a slice for every new image shape
    pixels = src.asnumpy() if isinstance(src, NDArray) else onp.asarray(src)
    window = pixels[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        code = _get_interp_method(interp, (h, w, size[1], size[0]), "fixed_crop")
        window = resize_pixels(window, size[0], size[1], code, "fixed_crop")
    return array_like(window, src, dtype=window.dtype)


def _check_size(size: Any, op: str) -> tuple[int, int]:
    try:
        crop_w, crop_h = (int(s) for s in size)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: size must be (width, height), got {size!r}") from None
    if crop_w <= 0 or crop_h <= 0:
        raise ValueError(f"{op}: size must be positive, got {size!r}")
    return crop_w, crop_h


def random_crop(src: Any, size: tuple, interp: int = 2) -> tuple[Any, tuple[int, int, int, int]]:
    """A random window of ``size`` (w, h), or the largest one of that aspect ratio resized up
    when the image is smaller; returns (image, (x0, y0, w, h) of the window)."""
    height, width, _ = image_shape(src, "random_crop")
    size = _check_size(size, "random_crop")
    new_w, new_h = scale_down((width, height), size)
    x0 = random.randint(0, width - new_w)
    y0 = random.randint(0, height - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src: Any, size: tuple, interp: int = 2) -> tuple[Any, tuple[int, int, int, int]]:
    """The centred window of ``size`` (w, h) (scaled down to fit, then resized up); returns
    (image, (x0, y0, w, h))."""
    height, width, _ = image_shape(src, "center_crop")
    size = _check_size(size, "center_crop")
    new_w, new_h = scale_down((width, height), size)
    x0 = int((width - new_w) / 2)
    y0 = int((height - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src: Any, mean: Any, std: Any = None) -> Any:
    """``(src - mean) / std`` per channel, in place on ``src`` (as MXNet), which is returned."""
    dtype = src.dtype if onp.issubdtype(onp.dtype(src.dtype), onp.floating) else None
    if mean is not None:
        src -= mean if isinstance(mean, Number) else array_like(mean, src, dtype)
    if std is not None:
        src /= std if isinstance(std, Number) else array_like(std, src, dtype)
    return src


def random_size_crop(src: Any, size: tuple, area: Any, ratio: tuple, interp: int = 2,
                     **kwargs: Any) -> tuple[Any, tuple[int, int, int, int]]:
    """A random window covering a fraction of the image drawn from ``area`` ((min, max), or a
    float min with max 1) with aspect ratio (w / h) log-uniform in ``ratio``, resized to ``size``;
    after 10 misses, ``center_crop``.  Returns (image, (x0, y0, w, h))."""
    height, width, _ = image_shape(src, "random_size_crop")
    if "min_area" in kwargs:
        warnings.warn("random_size_crop: `min_area` is deprecated, use `area`", DeprecationWarning)
        area = kwargs.pop("min_area")
    if kwargs:
        raise ImageKeywordError(f"random_size_crop: unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(area, Number):
        area = (area, 1.0)
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(10):
        target = random.uniform(area[0], area[1]) * height * width
        aspect = math.exp(random.uniform(log_lo, log_hi))
        new_w = int(round(math.sqrt(target * aspect)))
        new_h = int(round(math.sqrt(target / aspect)))
        if new_w <= width and new_h <= height:
            x0 = random.randint(0, width - new_w)
            y0 = random.randint(0, height - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)
