"""MXNet's image operators (``mx.nd.image``, ``mx.npx.image``): layout conversion, normalization,
resizing, cropping and flips of HWC (or NHWC) images.

Resizing follows OpenCV's ``cv::resize`` (what MXNet calls on CPU): every mode is a separable
linear map, so each axis gets an (out, in) weight matrix built from OpenCV's source-coordinate
rules, and the image is ``Wy @ image @ Wx^T``.  Integer images are resampled in float32 and
rounded half to even (OpenCV's ``cvRound``), so uint8 results can differ from OpenCV's
fixed-point arithmetic by 1.  The window arguments (``start``, ``length``) may be traced, which
is how ``random_resized_crop`` resizes a crop whose size is drawn at run time.

The colour operators (brightness, contrast, saturation, hue, lighting) are in ``image_color.py``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .nn_util import fail
from .registry import defop

INTERP_MODES = {0: "nearest", 1: "bilinear", 2: "cubic", 3: "area", 4: "lanczos4"}
_RESIZE_DTYPES = ("uint8", "int8", "float32", "float64")


def check_image(op: str, data, ndims=(3, 4), layout: str = "HWC") -> None:
    """Raise unless ``data`` is a 3-D (HWC) or, where allowed, 4-D (NHWC) image."""
    if data.ndim not in ndims:
        wanted = " or ".join(("N" + layout if n == 4 else layout) + f" ({n}-D)" for n in ndims)
        fail(op, f"expected a {wanted} image, got shape {tuple(data.shape)}")


def check_channels(op: str, data) -> None:
    """MXNet's colour and flip ops take 1 or 3 channels (last axis)."""
    if data.shape[-1] not in (1, 3):
        fail(op, f"the last axis of the image must hold 1 or 3 channels, got shape {tuple(data.shape)}")


def _one_hot(index, size):
    return (index[:, None] == jnp.arange(size)[None, :]).astype(jnp.float32)


def _cubic_coeffs(t):
    a = -0.75  # OpenCV's bicubic constant
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _lanczos4_coeffs(t):
    taps = [t + 3 - i for i in range(8)]
    ws = [jnp.sinc(x) * jnp.sinc(x / 4) for x in taps]
    total = sum(ws)
    return [w / total for w in ws]


def axis_weights(mode: str, out_size: int, in_size: int, start=0, length=None, area_down=True):
    """(out_size, in_size) float32 weights resampling the window ``[start, start + length)`` of an
    axis of ``in_size`` pixels to ``out_size`` with OpenCV's rule for ``mode``; the window's edge
    pixels repeat past its border.  ``area_down``: OpenCV's box filter (both axes shrink),
    otherwise its INTER_AREA upsampling weights."""
    length = in_size if length is None else length
    start = jnp.asarray(start, jnp.int32)
    length_i = jnp.asarray(length, jnp.int32)
    inv_scale = jnp.float64(out_size) / jnp.asarray(length, jnp.float64)
    scale = 1.0 / inv_scale  # OpenCV: scale = 1 / (dsize / ssize), in double
    d = jnp.arange(out_size, dtype=jnp.float64)
    last = length_i - 1

    def at(offset):  # source index (window-relative, clamped) -> absolute one-hot rows
        return _one_hot(start + jnp.clip(offset, 0, last), in_size)

    if mode == "nearest":
        return at(jnp.floor(d * scale).astype(jnp.int32))
    if mode == "area":
        # OpenCV: a box filter when both axes shrink, else a bilinear-like rule with area coefficients
        lo = d * scale
        cells = jnp.arange(in_size, dtype=jnp.float64)[None, :] - start
        overlap = jnp.clip(jnp.minimum((lo + scale)[:, None], cells + 1) - jnp.maximum(lo[:, None], cells), 0.0, None)
        overlap = jnp.where((cells >= 0) & (cells < length_i), overlap, 0.0)
        box = (overlap / jnp.minimum(scale, length - lo)[:, None]).astype(jnp.float32)
        s = jnp.floor(d * scale)
        f = (d + 1) - (s + 1) * inv_scale
        f = jnp.where(f <= 0, 0.0, f - jnp.floor(f)).astype(jnp.float32)
    else:
        pos = ((d + 0.5) * scale - 0.5).astype(jnp.float32)
        s = jnp.floor(pos)
        f = pos - s
    s = s.astype(jnp.int32)
    if mode in ("bilinear", "area"):
        f = jnp.where((s < 0) | (s >= last), 0.0, f)
        s = jnp.clip(s, 0, last)
        linear = at(s) * (1 - f)[:, None] + at(s + 1) * f[:, None]
        return jnp.where(area_down, box, linear) if mode == "area" else linear
    coeffs, first = (_cubic_coeffs(f), -1) if mode == "cubic" else (_lanczos4_coeffs(f), -3)
    return sum(at(s + first + k) * c[:, None] for k, c in enumerate(coeffs))


def _cast_like(values, dtype):
    """Float results back to the image dtype: integers rounded half to even and saturated (cvRound)."""
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
        info = jnp.iinfo(dtype)
        return jnp.clip(jnp.round(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def resample(op: str, data, out_h: int, out_w: int, interp: int, y0=0, x0=0, crop_h=None, crop_w=None):
    """Resize the (possibly traced) window of an HWC/NHWC image to ``(out_h, out_w)`` as cv::resize."""
    mode = INTERP_MODES.get(int(interp))
    if mode is None:
        fail(op, f"interp={interp} is not supported; expected 0 (nearest), 1 (bilinear), 2 (cubic), "
                 "3 (area) or 4 (lanczos4)")
    if jnp.dtype(data.dtype).name not in _RESIZE_DTYPES:
        fail(op, f"cannot resize a {jnp.dtype(data.dtype).name} image (OpenCV's resize takes "
                 f"{', '.join(_RESIZE_DTYPES)})")
    height, width = data.shape[-3], data.shape[-2]
    crop_h = height if crop_h is None else crop_h
    crop_w = width if crop_w is None else crop_w
    area_down = (jnp.asarray(crop_h) >= out_h) & (jnp.asarray(crop_w) >= out_w)
    wy = axis_weights(mode, out_h, height, y0, crop_h, area_down)
    wx = axis_weights(mode, out_w, width, x0, crop_w, area_down)
    work = jnp.float64 if data.dtype == jnp.float64 else jnp.float32
    out = jnp.einsum("oh,...hwc,pw->...opc", wy.astype(work), data.astype(work), wx.astype(work),
                     precision=lax.Precision.HIGHEST)
    return _cast_like(out, data.dtype)


# ----------------------------------------------------------------------------- layout and values

@defop("_image_to_tensor", aliases=("_npx__image_to_tensor",))
def to_tensor(data):
    """HWC (or NHWC) image in [0, 255] → CHW (NCHW) float32 in [0, 1]."""
    check_image("to_tensor", data)
    return jnp.moveaxis(data.astype(jnp.float32) / jnp.float32(255.0), -1, -3)


def _per_channel(op: str, name: str, values, channels: int, shape):
    values = tuple(float(v) for v in (values if isinstance(values, (tuple, list)) else (values,)))
    if len(values) not in (1, channels):
        fail(op, f"{name} must have 1 or {channels} elements for an input of shape {tuple(shape)}, got {values}")
    return jnp.asarray(values * channels if len(values) == 1 else values, jnp.float32)


@defop("_image_normalize", aliases=("_npx__image_normalize",))
def normalize(data, *, mean: tuple = (0.0, 0.0, 0.0, 0.0), std: tuple = (1.0, 1.0, 1.0, 1.0)):
    """``(data - mean[c]) / std[c]`` per channel of a CHW (or NCHW) tensor; output keeps the input
    dtype (integer results truncated, as MXNet's cast)."""
    op = "normalize"
    check_image(op, data, layout="CHW")
    channels = data.shape[-3]
    if channels not in (1, 3):
        fail(op, f"the channel axis must hold 1 or 3 channels, got shape {tuple(data.shape)}")
    m = _per_channel(op, "mean", mean, channels, data.shape)[:, None, None]
    s = _per_channel(op, "std", std, channels, data.shape)[:, None, None]
    work = jnp.float64 if data.dtype == jnp.float64 else jnp.float32
    out = (data.astype(work) - m) / s
    if jnp.issubdtype(data.dtype, jnp.integer):  # C's float -> int conversion: truncate, then wrap
        out = out.astype(jnp.int32)
    return out.astype(data.dtype)


# ----------------------------------------------------------------------------- resize and crops

def _target_size(op: str, size, keep_ratio: bool, height: int, width: int) -> tuple[int, int]:
    size = tuple(int(s) for s in (size if isinstance(size, (tuple, list)) else (size,)))
    if len(size) not in (1, 2):
        fail(op, f"size must be (width, height) or one integer, got {size}")
    if min(size) <= 0:
        fail(op, f"size must be positive, got {size}")
    if len(size) == 2:
        return size[1], size[0]
    if not keep_ratio:
        return size[0], size[0]
    if height > width:  # the short edge becomes size, the long one scales (truncated)
        return height * size[0] // width, size[0]
    return size[0], width * size[0] // height


@defop("_image_resize", aliases=("_npx__image_resize",))
def resize(data, *, size: tuple = (), keep_ratio: bool = False, interp: int = 1):
    """Resize an HWC (or NHWC) image to ``size`` = (width, height), or to a square (or, with
    ``keep_ratio``, short edge) of ``size``; ``interp`` is OpenCV's mode (0 nearest, 1 bilinear,
    2 cubic, 3 area, 4 lanczos4)."""
    op = "resize"
    check_image(op, data)
    if data.dtype == jnp.float16:
        fail(op, "float16 images are not supported (OpenCV's resize has no fp16)")
    out_h, out_w = _target_size(op, size, keep_ratio, data.shape[-3], data.shape[-2])
    if (out_h, out_w) == tuple(data.shape[-3:-1]):
        return data  # cv::resize copies an image of the target size
    return resample(op, data, out_h, out_w, interp)


@defop("_image_crop", aliases=("_npx__image_crop",))
def crop(data, *, x: int = None, y: int = None, width: int = None, height: int = None):
    """The ``height`` x ``width`` window at column ``x``, row ``y`` of an HWC (or NHWC) image."""
    op = "crop"
    check_image(op, data)
    if None in (x, y, width, height):
        fail(op, "x, y, width and height are required")
    img_h, img_w = data.shape[-3], data.shape[-2]
    if x < 0 or y < 0 or width <= 0 or height <= 0 or x + width > img_w or y + height > img_h:
        fail(op, f"a {width}x{height} (width x height) window at x={x}, y={y} does not fit the image "
                 f"{tuple(data.shape)} ({img_w} wide, {img_h} high)")
    return data[..., y:y + height, x:x + width, :]


@defop("_image_random_crop", aliases=("_npx__image_random_crop",), needs_key=True, differentiable=False)
def random_crop(key, data, *, xrange: tuple = (0.0, 1.0), yrange: tuple = (0.0, 1.0), width: int = None,
                height: int = None, interp: int = 1):
    """A ``height`` x ``width`` window of an HWC (or NHWC: one window for the batch) image whose left
    and top edges sit at fractions drawn from ``xrange`` and ``yrange`` of the free space.  An image
    smaller than the window gives the largest window of that aspect ratio, resized up (``interp``)."""
    op = "random_crop"
    check_image(op, data)
    if width is None or height is None or width <= 0 or height <= 0:
        fail(op, f"width and height must be positive integers, got width={width}, height={height}")
    img_h, img_w = data.shape[-3], data.shape[-2]
    fit = min(1.0, img_w / width, img_h / height)
    crop_w, crop_h = max(int(width * fit), 1), max(int(height * fit), 1)
    kx, ky = jax.random.split(key)
    fx = jax.random.uniform(kx, (), jnp.float32, xrange[0], xrange[1])
    fy = jax.random.uniform(ky, (), jnp.float32, yrange[0], yrange[1])
    x0 = jnp.clip((fx * (img_w - crop_w)).astype(jnp.int32), 0, img_w - crop_w)
    y0 = jnp.clip((fy * (img_h - crop_h)).astype(jnp.int32), 0, img_h - crop_h)
    zero = jnp.int32(0)
    start = (zero,) * (data.ndim - 3) + (y0, x0, zero)
    window = lax.dynamic_slice(data, start, data.shape[:-3] + (crop_h, crop_w, data.shape[-1]))
    if (crop_h, crop_w) == (height, width):
        return window
    return resample(op, window, height, width, interp)


@defop("_image_random_resized_crop", aliases=("_npx__image_random_resized_crop",), needs_key=True,
       differentiable=False)
def random_resized_crop(key, data, *, width: int = None, height: int = None, area: tuple = (0.08, 1.0),
                        ratio: tuple = (0.75, 1.3333333333333333), interp: int = 1, max_trial: int = 10):
    """A random window covering a fraction of the image area drawn from ``area`` with an aspect
    ratio (width / height) drawn from ``ratio``, resized to ``height`` x ``width``; the first of
    ``max_trial`` draws that fits is used, else a centred window (one window for an NHWC batch)."""
    op = "random_resized_crop"
    check_image(op, data)
    if width is None or height is None or width <= 0 or height <= 0:
        fail(op, f"width and height must be positive integers, got width={width}, height={height}")
    area = tuple(area) if isinstance(area, (tuple, list)) else (float(area), 1.0)
    img_h, img_w = data.shape[-3], data.shape[-2]
    trials = max(int(max_trial), 1)
    ka, kr, kx, ky = jax.random.split(key, 4)
    target = jax.random.uniform(ka, (trials,), jnp.float32, area[0], area[1]) * (img_h * img_w)
    aspect = jax.random.uniform(kr, (trials,), jnp.float32, ratio[0], ratio[1])
    new_w = jnp.round(jnp.sqrt(target * aspect)).astype(jnp.int32)
    new_h = jnp.round(jnp.sqrt(target / aspect)).astype(jnp.int32)
    fits = (new_w <= img_w) & (new_h <= img_h) & (new_w > 0) & (new_h > 0)
    pick = jnp.argmax(fits)
    found = fits[pick]
    fallback_w, fallback_h = min(img_w, width), min(img_h, height)
    crop_w = jnp.where(found, new_w[pick], fallback_w)
    crop_h = jnp.where(found, new_h[pick], fallback_h)
    x0 = jnp.where(found, jax.random.randint(kx, (), 0, img_w - crop_w + 1), (img_w - fallback_w) // 2)
    y0 = jnp.where(found, jax.random.randint(ky, (), 0, img_h - crop_h + 1), (img_h - fallback_h) // 2)
    return resample(op, data, height, width, interp, y0, x0, crop_h, crop_w)


# ----------------------------------------------------------------------------- flips

def _flip_input(op: str, data) -> None:
    check_image(op, data, ndims=(3,))
    check_channels(op, data)


@defop("_image_flip_left_right", aliases=("_npx__image_flip_left_right",))
def flip_left_right(data):
    """Mirror an HWC image horizontally (reverse the width axis)."""
    _flip_input("flip_left_right", data)
    return data[:, ::-1]


@defop("_image_flip_top_bottom", aliases=("_npx__image_flip_top_bottom",))
def flip_top_bottom(data):
    """Mirror an HWC image vertically (reverse the height axis)."""
    _flip_input("flip_top_bottom", data)
    return data[::-1]


@defop("_image_random_flip_left_right", aliases=("_npx__image_random_flip_left_right",), needs_key=True)
def random_flip_left_right(key, data, *, p: float = 0.5):
    """``flip_left_right`` with probability ``p``, else the image unchanged."""
    _flip_input("random_flip_left_right", data)
    return jnp.where(jax.random.uniform(key) < p, data[:, ::-1], data)


@defop("_image_random_flip_top_bottom", aliases=("_npx__image_random_flip_top_bottom",), needs_key=True)
def random_flip_top_bottom(key, data, *, p: float = 0.5):
    """``flip_top_bottom`` with probability ``p``, else the image unchanged."""
    _flip_input("random_flip_top_bottom", data)
    return jnp.where(jax.random.uniform(key) < p, data[::-1], data)
