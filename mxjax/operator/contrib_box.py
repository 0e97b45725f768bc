"""MXNet's bounding-box contrib ops: box_iou, box_encode, box_decode, bipartite_matching and
MultiBoxPrior.

Boxes are 4-vectors on the last axis, 'corner' (xmin, ymin, xmax, ymax) or 'center'
(x, y, width, height).  Overlaps use continuous coordinates (no +1 pixel), as MXNet.  Like MXNet's, these ops
pass zero gradients back: they build targets and decode
predictions, outside the differentiated loss.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax

from .nn_index import _as_index
from .nn_util import check_choice, fail
from .registry import defop

_FORMATS = ("center", "corner")


def _boxes(op: str, what: str, x):
    if x.ndim < 1 or x.shape[-1] != 4:
        fail(op, f"{what} has shape {tuple(x.shape)} but boxes of 4 values on the last axis are expected")
    return x


def _to_corner(box):
    x, y, w, h = (box[..., i] for i in range(4))
    return jnp.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2], -1)


def _to_center(box):
    w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    return box[..., 0] + w / 2, box[..., 1] + h / 2, w, h


@defop("_contrib_box_iou", aliases=("box_iou", "_npx_box_iou"))
def box_iou(lhs, rhs, *, format: str = "corner"):
    """Intersection over union of every lhs box with every rhs box: shape
    ``lhs.shape[:-1] + rhs.shape[:-1]``."""
    op = "box_iou"
    check_choice(op, "format", format, _FORMATS)
    lhs, rhs = _boxes(op, "lhs", lhs), _boxes(op, "rhs", rhs)
    lhs, rhs = lax.stop_gradient(lhs), lax.stop_gradient(rhs)  # MXNet's backward is zero
    if format == "center":
        lhs, rhs = _to_corner(lhs), _to_corner(rhs)
    extra = (None,) * (rhs.ndim - 1)
    left = lhs[(Ellipsis, *extra, slice(None))]
    lo = jnp.maximum(left[..., :2], rhs[..., :2])
    hi = jnp.minimum(left[..., 2:], rhs[..., 2:])
    wh = jnp.maximum(hi - lo, 0)
    inter = wh[..., 0] * wh[..., 1]

    def area(b):
        return (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return inter / (area(left) + area(rhs) - inter)


@defop("_contrib_box_encode", aliases=("box_encode", "_npx_box_encode"), num_outputs=2, differentiable=False)
def box_encode(samples, matches, anchors, refs, means, stds):
    """Regression targets of the positive samples (``samples > 0.5``): each anchor's matched reference
    box as normalized center offsets and log size ratios, ``(t - means) / stds``; returns
    ``(targets, masks)``, both (B, N, 4), zero for the other samples."""
    op = "box_encode"
    if samples.ndim != 2 or tuple(matches.shape) != tuple(samples.shape):
        fail(op, f"samples {tuple(samples.shape)} and matches {tuple(matches.shape)} must both be (B, N)")
    batch, count = samples.shape
    if tuple(anchors.shape) != (batch, count, 4):
        fail(op, f"anchors has shape {tuple(anchors.shape)} but ({batch}, {count}, 4) is expected")
    if refs.ndim != 3 or refs.shape[0] != batch or refs.shape[2] != 4:
        fail(op, f"refs has shape {tuple(refs.shape)} but ({batch}, M, 4) is expected")
    if tuple(means.shape) != (4,) or tuple(stds.shape) != (4,):
        fail(op, f"means {tuple(means.shape)} and stds {tuple(stds.shape)} must both be (4,)")
    idx = jnp.clip(_as_index(matches), 0, refs.shape[1] - 1)
    ref = jnp.take_along_axis(refs, idx[..., None], axis=1)
    ax, ay, aw, ah = _to_center(anchors)
    gx, gy, gw, gh = _to_center(ref)
    raw = jnp.stack([(gx - ax) / aw, (gy - ay) / ah, jnp.log(gw / aw), jnp.log(gh / ah)], -1)
    targets = (raw - means.astype(raw.dtype)) / stds.astype(raw.dtype)
    positive = (samples > 0.5)[..., None]
    zero = jnp.zeros((), anchors.dtype)
    return (jnp.where(positive, targets.astype(anchors.dtype), zero),
            jnp.broadcast_to(jnp.where(positive, jnp.ones((), anchors.dtype), zero), anchors.shape))


@defop("_contrib_box_decode", aliases=("box_decode", "_npx_box_decode"))
def box_decode(data, anchors, *, std0: float = 1.0, std1: float = 1.0, std2: float = 1.0, std3: float = 1.0,
               clip: float = -1.0, format: str = "center"):
    """Corner boxes from predicted offsets ``data`` (B, N, 4) relative to ``anchors`` (1, N, 4) in
    ``format``: centers ``d * std * size + anchor center``, sizes ``exp(d * std) * anchor size``
    (the log ratio capped at ``clip`` when ``clip > 0``)."""
    op = "box_decode"
    check_choice(op, "format", format, _FORMATS)
    if data.ndim != 3 or data.shape[2] != 4:
        fail(op, f"data has shape {tuple(data.shape)} but (B, N, 4) is expected")
    if anchors.ndim != 3 or anchors.shape[0] not in (1, data.shape[0]) or tuple(anchors.shape[1:]) != \
            tuple(data.shape[1:]):
        fail(op, f"anchors has shape {tuple(anchors.shape)} but (1, {data.shape[1]}, 4) is expected "
                 f"for data {tuple(data.shape)}")
    data, anchors = lax.stop_gradient(data), lax.stop_gradient(anchors)  # MXNet's backward is zero
    if format == "corner":
        ax, ay, aw, ah = _to_center(anchors)
    else:
        ax, ay, aw, ah = (anchors[..., i] for i in range(4))
    dt = data.dtype
    x = data[..., 0] * jnp.asarray(std0, dt) * aw + ax
    y = data[..., 1] * jnp.asarray(std1, dt) * ah + ay
    dw, dh = data[..., 2] * jnp.asarray(std2, dt), data[..., 3] * jnp.asarray(std3, dt)
    if clip > 0:
        dw, dh = jnp.minimum(dw, jnp.asarray(clip, dt)), jnp.minimum(dh, jnp.asarray(clip, dt))
    half_w, half_h = jnp.exp(dw) * aw / 2, jnp.exp(dh) * ah / 2
    return jnp.stack([x - half_w, y - half_h, x + half_w, y + half_h], -1)


def _match_one(scores, is_ascend, threshold, topk):
    """Greedy matching of one (N, M) score matrix: best remaining score first."""
    rows, cols = scores.shape
    flat = scores.reshape(-1)
    order = jnp.argsort(flat if is_ascend else -flat, stable=True)
    # MXNet stops once a match makes the count exceed topk: topk + 1 matches at most (copied)
    limit = rows * cols if topk < 0 else topk

    def step(i, carry):
        row_mark, col_mark, count, done = carry
        k = order[i]
        r, c, s = (k // cols).astype(jnp.int32), (k % cols).astype(jnp.int32), flat[k]
        passes = (s < threshold) if is_ascend else (s > threshold)
        done = done | ~passes | (count > limit)
        take = ~done & (row_mark[r] < 0) & (col_mark[c] < 0)
        row_mark = row_mark.at[r].set(jnp.where(take, c, row_mark[r]))
        col_mark = col_mark.at[c].set(jnp.where(take, r, col_mark[c]))
        return row_mark, col_mark, count + take.astype(count.dtype), done

    init = (jnp.full((rows,), -1, jnp.int32), jnp.full((cols,), -1, jnp.int32), jnp.int32(0), jnp.bool_(False))
    row_mark, col_mark, _, _ = lax.fori_loop(0, rows * cols, step, init)
    return row_mark, col_mark


@defop("_contrib_bipartite_matching", aliases=("bipartite_matching", "_npx_bipartite_matching"),
       num_outputs=2, differentiable=False)
def bipartite_matching(data, *, is_ascend: bool = False, threshold: float | None = None, topk: int = -1):
    """Greedy bipartite matching of score matrices ``data`` (..., N, M), highest score first (lowest with
    ``is_ascend``), stopping at the first score not beyond ``threshold`` or once the matches exceed ``topk`` (as
    MXNet does: at most topk + 1).
    Returns (row -> matched column, column -> matched row), -1 where unmatched, in data's dtype."""
    op = "bipartite_matching"
    if threshold is None:
        fail(op, "threshold is required")
    if data.ndim < 2:
        fail(op, f"data must be at least 2-D (..., N, M), got shape {tuple(data.shape)}")
    lead, (rows, cols) = data.shape[:-2], data.shape[-2:]
    flat = data.reshape(-1, rows, cols)
    match = jax.vmap(lambda s: _match_one(s, bool(is_ascend), jnp.asarray(threshold, s.dtype), int(topk)))
    row_mark, col_mark = match(flat)
    return (row_mark.reshape(*lead, rows).astype(data.dtype), col_mark.reshape(*lead, cols).astype(data.dtype))


@defop("_contrib_MultiBoxPrior", aliases=("MultiBoxPrior", "_npx_multibox_prior"), differentiable=False)
def multibox_prior(data, *, sizes: tuple = (1.0,), ratios: tuple = (1.0,), clip: bool = False,
                   steps: tuple = (-1.0, -1.0), offsets: tuple = (0.5, 0.5)):
    """SSD anchor boxes for the (H, W) feature map of NCHW ``data``: per cell, one box per size at
    ratio 1, then one per further ratio at ``sizes[0]``; shape (1, H*W*(len(sizes)+len(ratios)-1), 4),
    corner format in [0, 1] image units (clipped with ``clip``)."""
    op = "MultiBoxPrior"
    if data.ndim != 4:
        fail(op, f"data must be 4-D (N, C, H, W), got shape {tuple(data.shape)}")
    sizes, ratios = tuple(float(s) for s in sizes), tuple(float(r) for r in ratios)
    if not sizes or not ratios or min(sizes) <= 0 or min(ratios) <= 0:
        fail(op, f"sizes {sizes} and ratios {ratios} must be non-empty and positive")
    if len(steps) != 2 or len(offsets) != 2:
        fail(op, f"steps {tuple(steps)} and offsets {tuple(offsets)} must have two values (y, x)")
    height, width = data.shape[2], data.shape[3]
    step_y = steps[0] if steps[0] > 0 else 1.0 / height
    step_x = steps[1] if steps[1] > 0 else 1.0 / width
    half = [(s * height / width / 2, s / 2) for s in sizes]
    half += [(sizes[0] * height / width * math.sqrt(r) / 2, sizes[0] / math.sqrt(r) / 2) for r in ratios[1:]]
    hw = jnp.asarray(half, jnp.float32)                                     # (A, 2): half width, height
    cy = (jnp.arange(height, dtype=jnp.float32) + offsets[0]) * step_y
    cx = (jnp.arange(width, dtype=jnp.float32) + offsets[1]) * step_x
    cy, cx = jnp.meshgrid(cy, cx, indexing="ij")
    centers = jnp.stack([cx, cy], -1).reshape(-1, 1, 2)                      # (H*W, 1, 2) as (x, y)
    out = jnp.concatenate([centers - hw, centers + hw], -1).reshape(1, -1, 4)
    if clip:
        out = jnp.clip(out, 0.0, 1.0)
    return out.astype(data.dtype)
