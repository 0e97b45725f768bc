"""MXNet's ``ROIAlign``: average of bilinearly sampled points in each bin of each region.

Bilinear weights and the in-image test separate into a y part and an x part, so
each region's bin average is ``Ay @ feature_map @ Ax^T`` with per-bin row and column
weight matrices -- no per-sample gathers.  With ``sample_ratio <= 0`` the number of
samples per bin follows each region's size (``ceil(roi_size / pooled_size)``), which
needs the rois' values: the op then runs eagerly (it is registered dynamic-shape,
though its output shape is static).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
from jax import lax

from .nn_util import fail
from .registry import defop, dynamic_shape_error


def _weights(start, bin_size, grid, samples, size, pooled):
    """(R, pooled, size) summed bilinear weights of ``samples`` (static) points per bin along one axis;
    points past each region's own ``grid`` count are masked off."""
    idx = jnp.arange(samples, dtype=start.dtype)
    pos = (start[:, None, None] + jnp.arange(pooled, dtype=start.dtype)[None, :, None] * bin_size[:, None, None]
           + (idx[None, None, :] + 0.5) * (bin_size / grid)[:, None, None])          # (R, pooled, samples)
    used = (idx[None, None, :] < grid[:, None, None]) & (pos >= -1.0) & (pos <= size)
    pos = jnp.maximum(pos, 0.0)
    low = jnp.floor(pos)
    at_end = low >= size - 1
    low = jnp.where(at_end, size - 1, low)
    high = jnp.where(at_end, low, low + 1)
    pos = jnp.where(at_end, low, pos)
    frac = pos - low
    cells = jnp.arange(size, dtype=start.dtype)
    w = ((cells == low[..., None]) * (1 - frac)[..., None] + (cells == high[..., None]) * frac[..., None])
    return jnp.sum(w * used[..., None], axis=2)


@defop("_contrib_ROIAlign", aliases=("ROIAlign",), dynamic_shape=True,
       infer=lambda data, rois, **p: _infer(data, rois, **p))
def roi_align(data, rois, *, pooled_size: shape | None = None, spatial_scale: float | None = None,
              sample_ratio: int = -1, position_sensitive: bool = False, aligned: bool = False):
    """Pool each region ``rois[r] = (batch_index, x1, y1, x2, y2)`` (image coordinates, times
    ``spatial_scale``) of NCHW ``data`` to ``pooled_size`` bins, each the mean of a grid of
    bilinear samples; ``aligned`` shifts by half a pixel; ``position_sensitive`` reads bin (i, j) of
    output channel c from input channel ``(c * ph + i) * pw + j``.  Gradients reach ``data`` only."""
    ph, pw, channels = _check(data, rois, pooled_size, spatial_scale, position_sensitive)
    rois = lax.stop_gradient(rois).astype(data.dtype)
    offset = 0.5 if aligned else 0.0
    x1, y1 = rois[:, 1] * spatial_scale - offset, rois[:, 2] * spatial_scale - offset
    roi_w, roi_h = rois[:, 3] * spatial_scale - offset - x1, rois[:, 4] * spatial_scale - offset - y1
    if not aligned:
        roi_w, roi_h = jnp.maximum(roi_w, 1.0), jnp.maximum(roi_h, 1.0)
    bin_h, bin_w = roi_h / ph, roi_w / pw
    if sample_ratio > 0:
        grid_h = grid_w = jnp.full(rois.shape[:1], float(sample_ratio), data.dtype)
        max_h = max_w = sample_ratio
    else:
        if isinstance(rois, jax.core.Tracer):
            raise dynamic_shape_error("_contrib_ROIAlign", "rois (sample_ratio <= 0 sizes each bin's grid)")
        grid_h, grid_w = jnp.ceil(bin_h), jnp.ceil(bin_w)
        max_h = max(int(onp.max(onp.asarray(grid_h), initial=1)), 1)
        max_w = max(int(onp.max(onp.asarray(grid_w), initial=1)), 1)
    height, width = data.shape[2], data.shape[3]
    wy = _weights(y1, bin_h, grid_h, max_h, height, ph)                   # (R, ph, H)
    wx = _weights(x1, bin_w, grid_w, max_w, width, pw)                    # (R, pw, W)
    count = jnp.maximum(grid_h * grid_w, 1.0)
    maps = data[jnp.clip(rois[:, 0].astype(jnp.int32), 0, data.shape[0] - 1)]  # (R, C, H, W)
    out = jnp.einsum("rph,rchw,rqw->rcpq", wy, maps, wx) / count[:, None, None, None]
    if position_sensitive:
        chan = (jnp.arange(channels)[:, None, None] * ph + jnp.arange(ph)[None, :, None]) * pw \
            + jnp.arange(pw)[None, None, :]
        out = jnp.take_along_axis(out, jnp.broadcast_to(chan, (out.shape[0], channels, ph, pw)), axis=1)
    return out


def _check(data, rois, pooled_size, spatial_scale, position_sensitive):
    op = "ROIAlign"
    if data.ndim != 4:
        fail(op, f"data must be 4-D (N, C, H, W), got shape {tuple(data.shape)}")
    if rois.ndim != 2 or rois.shape[1] != 5:
        fail(op, f"rois has shape {tuple(rois.shape)} but (num_rois, 5) is expected "
                 "(batch_index, x1, y1, x2, y2)")
    if pooled_size is None or spatial_scale is None:
        fail(op, "pooled_size and spatial_scale are required")
    size = tuple(pooled_size) if isinstance(pooled_size, (tuple, list)) else (int(pooled_size),) * 2
    if len(size) != 2 or min(size) < 1:
        fail(op, f"pooled_size={pooled_size!r} must be two positive integers (height, width)")
    channels = data.shape[1]
    if position_sensitive:
        if channels % (size[0] * size[1]):
            fail(op, f"position_sensitive needs data channels ({channels}) divisible by "
                     f"pooled_size product {size[0] * size[1]}")
        channels //= size[0] * size[1]
    return size[0], size[1], channels


def _infer(data, rois, *, pooled_size=None, spatial_scale=None, sample_ratio=-1, position_sensitive=False,
           aligned=False):
    ph, pw, channels = _check(data, rois, pooled_size, spatial_scale, position_sensitive)
    return jax.ShapeDtypeStruct((rois.shape[0], channels, ph, pw), data.dtype)
