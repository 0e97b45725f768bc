"""MXNet's colour augmentation operators on HWC images: brightness, contrast, saturation, hue,
colour jitter and AlexNet-style PCA lighting.

Each computes in float32 and casts back with MXNet's ``saturate_cast``: uint8 results are
clamped to [0, 255] and truncated, other dtypes are plain casts.  The random ones draw their
factors from the op's PRNG key (the seeded ``mx.random`` stream).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .image import check_channels, check_image
from .nn_util import fail
from .registry import defop

_GRAY = (0.299, 0.587, 0.114)
# AlexNet's RGB eigenvectors scaled by their eigenvalues (rows r, g, b; columns: components)
_EIG = ((55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009),
        (55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140),
        (55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203))


def _saturate(values, dtype):
    dtype = jnp.dtype(dtype)
    if dtype == jnp.uint8:
        values = jnp.clip(values, 0.0, 255.0)
    return values.astype(dtype)


def _check(op: str, data) -> None:
    check_image(op, data, ndims=(3,))
    check_channels(op, data)


def _gray(image):
    return image[..., 0] * _GRAY[0] + image[..., 1] * _GRAY[1] + image[..., 2] * _GRAY[2]


def adjust_brightness(data, alpha):
    return _saturate(data.astype(jnp.float32) * alpha, data.dtype)


def adjust_contrast(data, alpha):
    image = data.astype(jnp.float32)
    mean = jnp.mean(_gray(image) if image.shape[-1] == 3 else image)
    return _saturate(image * alpha + (1 - alpha) * mean, data.dtype)


def adjust_saturation(data, alpha):
    if data.shape[-1] == 1:
        return data
    image = data.astype(jnp.float32)
    # MXNet 2.0's kernel assigns rather than accumulates its gray sum (``gray = x[c] * coef[c]``),
    # so the "gray" level it blends towards is 0.114 * blue; matched here for identical outputs
    gray = image[..., 2] * _GRAY[2]
    return _saturate(image * alpha + ((1 - alpha) * gray)[..., None], data.dtype)


def _rgb_to_hls(r, g, b):
    vmax = jnp.maximum(jnp.maximum(r, g), b)
    vmin = jnp.minimum(jnp.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    colored = diff > jnp.finfo(jnp.float32).eps
    safe = jnp.where(colored, diff, 1.0)
    sat = jnp.where(light < 0.5, safe / jnp.where(colored, vmax + vmin, 1.0),
                    safe / jnp.where(colored, 2.0 - vmax - vmin, 1.0))
    scale = 60.0 / safe
    hue = jnp.where(vmax == r, (g - b) * scale,
                    jnp.where(vmax == g, (b - r) * scale + 120.0, (r - g) * scale + 240.0))
    hue = jnp.where(hue < 0, hue + 360.0, hue)
    return jnp.where(colored, hue, 0.0), light, jnp.where(colored, sat, 0.0)


def _hls_to_rgb(h, light, sat):
    p2 = jnp.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    h = jnp.mod(h * jnp.float32(1.0 / 60.0), 6.0)  # OpenCV multiplies by the reciprocal
    sector = jnp.clip(jnp.floor(h).astype(jnp.int32), 0, 5)
    frac = h - sector
    tab = jnp.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac])
    # OpenCV's sector table: which tab entry is b, g, r in each 60-degree sector
    sectors = jnp.asarray([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])
    pick = sectors[sector]  # (..., 3): b, g, r
    b, g, r = (jnp.take_along_axis(tab, pick[None, ..., k], axis=0)[0] for k in range(3))
    gray = sat == 0
    return (jnp.where(gray, light, r), jnp.where(gray, light, g), jnp.where(gray, light, b))


def adjust_hue(data, alpha):
    if data.shape[-1] == 1:
        return data
    image = data.astype(jnp.float32) / 255.0
    h, light, sat = _rgb_to_hls(image[..., 0], image[..., 1], image[..., 2])
    r, g, b = _hls_to_rgb(h + alpha * 360.0, light, sat)
    return _saturate(jnp.stack([r, g, b], axis=-1) * 255.0, data.dtype)


def adjust_lighting_by(data, alpha):
    if data.shape[-1] == 1:
        return data
    pca = jnp.asarray(_EIG, jnp.float32) @ alpha.astype(jnp.float32)
    return _saturate(data.astype(jnp.float32) + pca, data.dtype)


def _factor(key, low, high):
    return jax.random.uniform(key, (), jnp.float32, low, high)


def _enhance_check(op: str, data, min_factor, max_factor) -> None:
    _check(op, data)
    if min_factor is None or max_factor is None:
        fail(op, "min_factor and max_factor are required")
    if min_factor < 0 or max_factor < min_factor:
        fail(op, f"expected 0 <= min_factor <= max_factor, got min_factor={min_factor}, max_factor={max_factor}")


@defop("_image_random_brightness", aliases=("_npx__image_random_brightness",), needs_key=True)
def random_brightness(key, data, *, min_factor: float = None, max_factor: float = None):
    """Scale an HWC image by a factor drawn from [min_factor, max_factor]."""
    _enhance_check("random_brightness", data, min_factor, max_factor)
    return adjust_brightness(data, _factor(key, min_factor, max_factor))


@defop("_image_random_contrast", aliases=("_npx__image_random_contrast",), needs_key=True)
def random_contrast(key, data, *, min_factor: float = None, max_factor: float = None):
    """Blend an HWC image with its mean gray level: ``alpha * x + (1 - alpha) * mean``."""
    _enhance_check("random_contrast", data, min_factor, max_factor)
    return adjust_contrast(data, _factor(key, min_factor, max_factor))


@defop("_image_random_saturation", aliases=("_npx__image_random_saturation",), needs_key=True)
def random_saturation(key, data, *, min_factor: float = None, max_factor: float = None):
    """Blend each pixel with a gray level: ``alpha * x + (1 - alpha) * gray``, where MXNet's gray is
    ``0.114 * blue`` (its kernel overwrites the weighted sum; kept for identical results)."""
    _enhance_check("random_saturation", data, min_factor, max_factor)
    return adjust_saturation(data, _factor(key, min_factor, max_factor))


@defop("_image_random_hue", aliases=("_npx__image_random_hue",), needs_key=True)
def random_hue(key, data, *, min_factor: float = None, max_factor: float = None):
    """Rotate the hue (HLS space) of an RGB image by ``alpha * 360`` degrees."""
    _enhance_check("random_hue", data, min_factor, max_factor)
    return adjust_hue(data, _factor(key, min_factor, max_factor))


@defop("_image_random_color_jitter", aliases=("_npx__image_random_color_jitter",), needs_key=True)
def random_color_jitter(key, data, *, brightness: float = None, contrast: float = None, saturation: float = None,
                        hue: float = None):
    """Brightness, contrast, saturation (factors ``1 + U(-v, v)``) and hue (``U(-hue, hue)``) changes in
    a random order; a zero amount skips that change."""
    op = "random_color_jitter"
    _check(op, data)
    amounts = (brightness, contrast, saturation, hue)
    if any(v is None for v in amounts):
        fail(op, "brightness, contrast, saturation and hue are required")
    if any(v < 0 for v in amounts):
        fail(op, f"the jitter amounts must be non-negative, got {amounts}")
    korder, *keys = jax.random.split(key, 5)
    order = jax.random.permutation(korder, 4)
    steps = (lambda x, k: adjust_brightness(x, 1.0 + _factor(k, -brightness, brightness)),
             lambda x, k: adjust_contrast(x, 1.0 + _factor(k, -contrast, contrast)),
             lambda x, k: adjust_saturation(x, 1.0 + _factor(k, -saturation, saturation)),
             lambda x, k: adjust_hue(x, _factor(k, -hue, hue)))
    branches = [step if amount > 0 else (lambda x, k: x) for step, amount in zip(steps, amounts)]
    image = data
    for i in range(4):
        image = lax.switch(order[i], branches, image, keys[i])
    return image


@defop("_image_adjust_lighting", aliases=("_npx__image_adjust_lighting",))
def adjust_lighting(data, *, alpha: tuple = None):
    """Add AlexNet's PCA lighting noise with the given per-component ``alpha`` (3 values)."""
    op = "adjust_lighting"
    _check(op, data)
    if alpha is None or len(tuple(alpha)) != 3:
        fail(op, f"alpha must hold 3 values (one per RGB principal component), got {alpha!r}")
    return adjust_lighting_by(data, jnp.asarray(tuple(float(a) for a in alpha), jnp.float32))


@defop("_image_random_lighting", aliases=("_npx__image_random_lighting",), needs_key=True)
def random_lighting(key, data, *, alpha_std: float = 0.05):
    """``adjust_lighting`` with alphas drawn from N(0, alpha_std)."""
    _check("random_lighting", data)
    return adjust_lighting_by(data, jax.random.normal(key, (3,), jnp.float32) * alpha_std)
