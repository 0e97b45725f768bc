"""Deformable convolutions (MXNet 2's ``npx.deformable_convolution`` and
``npx.modulated_deformable_convolution``; v1 and v2 of Dai et al. / Zhu et al.).

Each kernel tap ``k = i * kw + j`` of each output position reads the input at its regular
position plus a learned offset, bilinearly interpolated (edge handling as MXNet's kernels:
see ``_bilinear``).  ``offset`` is (N, 2 * kh * kw * G, Ho, Wo) with channel
``g * 2 * kh * kw + 2 * k`` holding the y offset and ``+ 1`` the x offset for deformable
group ``g`` (whose input channels are the g-th of G equal blocks); the modulated variant
multiplies each sample by ``mask`` (N, kh * kw * G, Ho, Wo).  The sampled columns are then
contracted with ``weight`` (F, C / num_group, kh, kw) as a grouped convolution.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..base import MXNetValueError
from .registry import defop


def _pair(value, default):
    value = tuple(value) if value else ()
    return value if value else (default, default)


def _bilinear(image, y, x, clamp_edge):
    """``image`` (C, H, W) sampled at float positions ``y``/``x`` (...): (C, ...), zero outside.

    v1 (``clamp_edge``, MXNet's CPU kernel) samples only points in [0, H) x [0, W) and reads the
    last row/column for points past it; v2 samples points in (-1, H) x (-1, W), corners outside
    reading zero."""
    height, width = image.shape[1], image.shape[2]
    if clamp_edge:
        inside = (y >= 0) & (x >= 0) & (y < height) & (x < width)
        y, x = jnp.minimum(y, height - 1), jnp.minimum(x, width - 1)
    else:
        inside = (y > -1) & (x > -1) & (y < height) & (x < width)
    y0, x0 = jnp.floor(y), jnp.floor(x)

    def corner(yy, xx):
        valid = (yy >= 0) & (yy <= height - 1) & (xx >= 0) & (xx <= width - 1)
        values = image[:, jnp.clip(yy, 0, height - 1).astype(jnp.int32), jnp.clip(xx, 0, width - 1).astype(jnp.int32)]
        return jnp.where(valid & inside, values, 0)

    wy, wx = y - y0, x - x0
    return (corner(y0, x0) * ((1 - wy) * (1 - wx)) + corner(y0, x0 + 1) * ((1 - wy) * wx)
            + corner(y0 + 1, x0) * (wy * (1 - wx)) + corner(y0 + 1, x0 + 1) * (wy * wx))


def _deformable(op, data, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter, num_group,
                num_deformable_group, no_bias):
    if data.ndim != 4 or len(tuple(kernel)) != 2:
        raise MXNetValueError(f"{op}: only 2-D (N, C, H, W) data with a 2-D kernel is supported, got data "
                              f"{tuple(data.shape)} and kernel {tuple(kernel)}")
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = tuple(kernel), _pair(stride, 1), _pair(dilate, 1), _pair(pad, 0)
    n, channels, height, width = data.shape
    out_h = (height + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    out_w = (width + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    groups = num_deformable_group
    taps = kh * kw
    if offset.shape != (n, 2 * taps * groups, out_h, out_w) or channels % groups:
        raise MXNetValueError(f"{op}: offset must be {(n, 2 * taps * groups, out_h, out_w)} for data "
                              f"{tuple(data.shape)} and kernel {(kh, kw)}, got {tuple(offset.shape)}")
    base_y = (jnp.arange(out_h) * sh - ph)[None, :, None] + (jnp.arange(kh) * dh).repeat(kw)[:, None, None]
    base_x = (jnp.arange(out_w) * sw - pw)[None, None, :] + jnp.tile(jnp.arange(kw) * dw, kh)[:, None, None]
    off = offset.reshape(n, groups, taps, 2, out_h, out_w)
    ys = base_y[None, None] + off[:, :, :, 0]  # (N, G, taps, Ho, Wo)
    xs = base_x[None, None] + off[:, :, :, 1]
    images = data.reshape(n, groups, channels // groups, height, width)
    sample = jax.vmap(jax.vmap(lambda im, y, x: _bilinear(im, y, x, mask is None)))  # over batch, groups
    cols = sample(images, ys.astype(data.dtype), xs.astype(data.dtype))  # (N, G, C/G, taps, Ho, Wo)
    if mask is not None:
        cols = cols * mask.reshape(n, groups, 1, taps, out_h, out_w)
    cols = cols.reshape(n, num_group, channels // num_group, taps, out_h, out_w)
    w = weight.reshape(num_group, num_filter // num_group, channels // num_group, taps)
    out = jnp.einsum("ngctyx,gfct->ngfyx", cols, w, precision=jax.lax.Precision.HIGHEST)
    out = out.reshape(n, num_filter, out_h, out_w)
    if not no_bias and bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out.astype(data.dtype)


@defop("_npx_deformable_convolution", aliases=("_contrib_DeformableConvolution",))
def deformable_convolution(data, offset, weight, bias=None, *, kernel: shape = (), stride: shape = (),
                           dilate: shape = (), pad: shape = (), num_filter: int = 1, num_group: int = 1,
                           num_deformable_group: int = 1, workspace: int = 1024, no_bias: bool = False,
                           layout: str | None = None):
    """Deformable convolution (v1): each kernel tap samples the input at a learned offset."""
    return _deformable("deformable_convolution", data, offset, None, weight, bias, kernel, stride, dilate, pad,
                       num_filter, num_group, num_deformable_group, no_bias)


@defop("_npx_modulated_deformable_convolution", aliases=("_contrib_ModulatedDeformableConvolution",))
def modulated_deformable_convolution(data, offset, mask, weight, bias=None, *, kernel: shape = (),
                                     stride: shape = (), dilate: shape = (), pad: shape = (), num_filter: int = 1,
                                     num_group: int = 1, num_deformable_group: int = 1, workspace: int = 1024,
                                     no_bias: bool = False, im2col_step: int = 64, layout: str | None = None):
    """Modulated deformable convolution (v2): offset samples weighted by ``mask``."""
    return _deformable("modulated_deformable_convolution", data, offset, mask, weight, bias, kernel, stride,
                       dilate, pad, num_filter, num_group, num_deformable_group, no_bias)
