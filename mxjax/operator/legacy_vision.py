"""MXNet's region and sampling-grid vision ops: ``ROIPooling``, ``GridGenerator``, ``BilinearSampler``,
``SpatialTransformer`` and ``Crop``.

Conventions follow MXNet's kernels: ROI boxes are ``[batch_index, x1, y1, x2, y2]`` in
input-image coordinates, rounded after scaling by ``spatial_scale``; sampling grids hold
normalized ``(x, y)`` coordinates in ``[-1, 1]`` over the input's width and height, and
points outside the input read zeros.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..base import MXNetValueError
from .registry import defop


def _round_half_away(x):
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)


@defop("ROIPooling", aliases=("roi_pooling", "_npx_roi_pooling"))
def roi_pooling(data, rois, *, pooled_size: shape = (1, 1), spatial_scale: float = 1.0):
    """Max pooling of each region of interest into a ``pooled_size`` grid: ``data`` (N, C, H, W),
    ``rois`` (R, 5) rows ``[batch_index, x1, y1, x2, y2]`` → (R, C, ph, pw); empty bins give 0."""
    if data.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
        raise MXNetValueError(f"ROIPooling: expected data (N, C, H, W) and rois (R, 5), got {tuple(data.shape)} "
                              f"and {tuple(rois.shape)}")
    ph, pw = (pooled_size, pooled_size) if isinstance(pooled_size, int) else tuple(pooled_size)
    height, width = data.shape[2], data.shape[3]

    def bins(start, end, pooled, size):
        # bin k spans [floor(k * extent / pooled), ceil((k + 1) * extent / pooled)) from start; the
        # rounded box makes extent an integer, so integer division gives the bounds exactly
        start = start.astype(jnp.int32)
        extent = jnp.maximum(end.astype(jnp.int32) - start + 1, 1)
        k = jnp.arange(pooled, dtype=jnp.int32)
        lo = jnp.clip(k * extent // pooled + start, 0, size)
        hi = jnp.clip(-(-(k + 1) * extent // pooled) + start, 0, size)
        pos = jnp.arange(size)
        return (pos[None, :] >= lo[:, None]) & (pos[None, :] < hi[:, None])  # (pooled, size)

    def one(roi):
        box = _round_half_away(roi[1:].astype(jnp.float32) * spatial_scale)
        rows = bins(box[1], box[3], ph, height)
        cols = bins(box[0], box[2], pw, width)
        image = data[roi[0].astype(jnp.int32)]  # (C, H, W)
        low = jnp.asarray(-jnp.inf, data.dtype)
        by_col = jnp.max(jnp.where(cols[None, None], image[:, :, None, :], low), axis=-1)  # (C, H, pw)
        pooled = jnp.max(jnp.where(rows[None, :, :, None], by_col[:, None, :, :], low), axis=2)  # (C, ph, pw)
        return jnp.where(jnp.isneginf(pooled), jnp.zeros((), data.dtype), pooled)

    return jax.lax.map(one, rois)


# ----------------------------------------------------------------------------- sampling grids

def _affine_grid(theta, height: int, width: int):
    ys = jnp.linspace(-1.0, 1.0, height, dtype=theta.dtype)
    xs = jnp.linspace(-1.0, 1.0, width, dtype=theta.dtype)
    gy, gx = jnp.meshgrid(ys, xs, indexing="ij")
    points = jnp.stack([gx.ravel(), gy.ravel(), jnp.ones(height * width, theta.dtype)])  # (3, H*W)
    grid = theta.reshape(-1, 2, 3) @ points  # (N, 2, H*W): rows x, y
    return grid.reshape(-1, 2, height, width)


@defop("GridGenerator")
def grid_generator(data, *, transform_type: str = "affine", target_shape: shape = (0, 0)):
    """A sampling grid (N, 2, H, W) of normalized (x, y) input coordinates: from affine parameters
    ``data`` (N, 6) over a ``target_shape`` output, or from a pixel flow field ``data`` (N, 2, H, W)."""
    if transform_type == "affine":
        if data.ndim != 2 or data.shape[1] != 6:
            raise MXNetValueError(f"GridGenerator: affine parameters must be (N, 6), got {tuple(data.shape)}")
        height, width = tuple(target_shape)
        return _affine_grid(data, height, width)
    if transform_type == "warp":
        if data.ndim != 4 or data.shape[1] != 2:
            raise MXNetValueError(f"GridGenerator: a warp flow must be (N, 2, H, W), got {tuple(data.shape)}")
        height, width = data.shape[2], data.shape[3]
        xs = jnp.arange(width, dtype=data.dtype)[None, :]
        ys = jnp.arange(height, dtype=data.dtype)[:, None]
        gx = (data[:, 0] + xs) / ((width - 1) / 2.0) - 1.0
        gy = (data[:, 1] + ys) / ((height - 1) / 2.0) - 1.0
        return jnp.stack([gx, gy], axis=1)
    raise MXNetValueError(f"GridGenerator: transform_type must be 'affine' or 'warp', got {transform_type!r}")


def _bilinear_sample(data, grid):
    """Bilinear interpolation of ``data`` (N, C, H, W) at normalized ``grid`` (N, 2, Ho, Wo); zeros outside."""
    height, width = data.shape[2], data.shape[3]
    x = (grid[:, 0] + 1.0) * (width - 1) / 2.0
    y = (grid[:, 1] + 1.0) * (height - 1) / 2.0
    x0, y0 = jnp.floor(x), jnp.floor(y)

    def corner(image, yy, xx):  # image (C, H, W), yy/xx (Ho, Wo) -> (C, Ho, Wo), zero outside
        inside = (xx >= 0) & (xx <= width - 1) & (yy >= 0) & (yy <= height - 1)
        values = image[:, jnp.clip(yy, 0, height - 1).astype(jnp.int32), jnp.clip(xx, 0, width - 1).astype(jnp.int32)]
        return jnp.where(inside[None], values, 0)

    def one(image, x, y, x0, y0):
        wx, wy = x - x0, y - y0
        return (corner(image, y0, x0) * ((1 - wx) * (1 - wy))[None]
                + corner(image, y0, x0 + 1) * (wx * (1 - wy))[None]
                + corner(image, y0 + 1, x0) * ((1 - wx) * wy)[None]
                + corner(image, y0 + 1, x0 + 1) * (wx * wy)[None])

    return jax.vmap(one)(data, x, y, x0, y0).astype(data.dtype)


@defop("BilinearSampler")
def bilinear_sampler(data, grid, *, cudnn_off: bool | None = None):
    """Sample ``data`` (N, C, H, W) bilinearly at the normalized (x, y) points of ``grid`` (N, 2, Ho, Wo);
    points outside the input read zeros.  Output (N, C, Ho, Wo)."""
    if data.ndim != 4 or grid.ndim != 4 or grid.shape[1] != 2 or grid.shape[0] != data.shape[0]:
        raise MXNetValueError(f"BilinearSampler: expected data (N, C, H, W) and grid (N, 2, Ho, Wo), got "
                              f"{tuple(data.shape)} and {tuple(grid.shape)}")
    return _bilinear_sample(data, grid)


@defop("SpatialTransformer")
def spatial_transformer(data, loc, *, target_shape: shape = (0, 0), transform_type: str = "affine",
                        sampler_type: str = "bilinear", cudnn_off: bool | None = None):
    """Warp ``data`` (N, C, H, W) by the affine transforms ``loc`` (N, 6) into a ``target_shape`` output:
    ``BilinearSampler(data, GridGenerator(loc))``."""
    if transform_type != "affine" or sampler_type != "bilinear":
        raise MXNetValueError(f"SpatialTransformer: only transform_type='affine' and sampler_type='bilinear' "
                              f"exist, got {transform_type!r} and {sampler_type!r}")
    height, width = tuple(target_shape)
    return _bilinear_sample(data, _affine_grid(loc.reshape(loc.shape[0], 6), height, width))


@defop("Crop")
def crop(*data, num_args: int = 1, offset: shape = (0, 0), h_w: shape = (0, 0), center_crop: bool = False):
    """Crop the spatial axes of ``data[0]`` (N, C, H, W) to ``h_w`` or, with a second input, to that
    input's (H, W); at ``offset`` (y, x) or centred."""
    if not data or data[0].ndim != 4:
        raise MXNetValueError(f"Crop: expected a 4-D input, got {[tuple(d.shape) for d in data]}")
    image = data[0]
    height, width = (data[1].shape[2], data[1].shape[3]) if len(data) > 1 else tuple(h_w)
    if center_crop:
        top, left = (image.shape[2] - height) // 2, (image.shape[3] - width) // 2
    else:
        top, left = tuple(offset)
    if top < 0 or left < 0 or top + height > image.shape[2] or left + width > image.shape[3]:
        raise MXNetValueError(f"Crop: a ({height}, {width}) window at ({top}, {left}) does not fit the input "
                              f"{tuple(image.shape)}")
    return image[:, :, top:top + height, left:left + width]


@defop("Correlation")
def correlation(data1, data2, *, kernel_size: int = 1, max_displacement: int = 1, stride1: int = 1,
                stride2: int = 1, pad_size: int = 0, is_multiply: bool = True):
    """FlowNet's correlation of two feature maps (N, C, H, W): for each displacement (dy, dx) in steps
    of ``stride2`` up to ``max_displacement``, the mean over channels and a ``kernel_size`` window of
    ``data1 * data2`` shifted (``is_multiply=False``: ``|data1 - data2|``).  One output channel per
    displacement, row-major over (dy, dx)."""
    if data1.ndim != 4 or data1.shape != data2.shape:
        raise MXNetValueError(f"Correlation: expected two inputs of one (N, C, H, W) shape, got "
                              f"{tuple(data1.shape)} and {tuple(data2.shape)}")
    radius = (kernel_size - 1) // 2
    border = max_displacement + radius
    p1 = jnp.pad(data1, ((0, 0), (0, 0), (pad_size, pad_size), (pad_size, pad_size)))
    p2 = jnp.pad(data2, ((0, 0), (0, 0), (pad_size, pad_size), (pad_size, pad_size)))
    height, width = p1.shape[2], p1.shape[3]
    out_h = -(-(height - 2 * border) // stride1)
    out_w = -(-(width - 2 * border) // stride1)
    if out_h < 1 or out_w < 1:
        raise MXNetValueError(f"Correlation: the padded input {height}x{width} is too small for "
                              f"max_displacement {max_displacement} and kernel_size {kernel_size}")
    steps = max_displacement // stride2
    ys = max_displacement + stride1 * jnp.arange(out_h)  # window corners of data1 (top-left, padded coords)
    xs = max_displacement + stride1 * jnp.arange(out_w)
    norm = kernel_size * kernel_size * data1.shape[1]

    def window_sum(values):  # sum over the kernel window starting at each (ys, xs) corner
        total = 0
        for i in range(kernel_size):
            for j in range(kernel_size):
                total = total + values[:, :, (ys + i)[:, None], (xs + j)[None, :]]
        return total.sum(axis=1)

    channels = []
    for dy in range(-steps, steps + 1):
        for dx in range(-steps, steps + 1):
            shifted = jnp.roll(p2, (-dy * stride2, -dx * stride2), axis=(2, 3))
            pair = p1 * shifted if is_multiply else jnp.abs(p1 - shifted)
            channels.append(window_sum(pair))
    return (jnp.stack(channels, axis=1) / norm).astype(data1.dtype)
