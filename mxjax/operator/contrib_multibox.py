"""MXNet's ``MultiBoxTarget``: SSD training targets for anchors given ground-truth labels.

Per image: every ground-truth box first claims its best-overlapping free anchor
(greedy bipartite matching, best pair first), then each remaining anchor takes its
best ground truth if their IoU exceeds ``overlap_threshold``.  Matched anchors get
the class ``id + 1`` and SSD-encoded offsets; the rest are background (0), or, with
hard negative mining, background only for the ``floor(ratio * positives)`` anchors whose
predicted background probability is lowest (among those overlapping every ground
truth by less than ``negative_mining_thresh``) and ``ignore_label`` otherwise.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .nn_util import fail
from .registry import defop


def _cross_iou(a, b):
    lo = jnp.maximum(a[:, None, :2], b[None, :, :2])
    hi = jnp.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = jnp.maximum(hi - lo, 0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return jnp.where(union > 0, inter / jnp.where(union > 0, union, 1), 0)


def _target_one(anchor, label, pred, p):
    n, m = anchor.shape[0], label.shape[0]
    valid_gt = jnp.cumprod(label[:, 0] != -1).astype(bool)
    iou = jnp.where(valid_gt[None, :], _cross_iou(anchor, label[:, 1:5]), -1.0)

    def claim(_, carry):
        match, gt_done = carry
        free = jnp.where((match < 0)[:, None] & ~gt_done[None, :], iou, -1.0)
        k = jnp.argmax(free.reshape(-1))
        a, g = k // m, k % m
        ok = free.reshape(-1)[k] > 1e-6
        match = match.at[a].set(jnp.where(ok, g, match[a]).astype(match.dtype))
        gt_done = gt_done.at[g].set(gt_done[g] | ok)
        return match, gt_done
    match, _ = lax.fori_loop(0, m, claim, (jnp.full((n,), -1, jnp.int32), jnp.zeros((m,), bool)))
    best_gt = jnp.argmax(iou, axis=1).astype(jnp.int32)
    best_iou = jnp.max(iou, axis=1)
    if p["overlap_threshold"] > 0:
        match = jnp.where((match < 0) & (best_iou > p["overlap_threshold"]), best_gt, match)
    positive = match >= 0
    gt = label[jnp.clip(match, 0, m - 1)]
    cls_target = jnp.where(positive, gt[:, 0] + 1, 0.0)
    if p["negative_mining_ratio"] > 0:
        shifted = pred - jnp.max(pred, axis=0, keepdims=True)
        background = jnp.exp(shifted[0]) / jnp.sum(jnp.exp(shifted), axis=0)
        candidate = ~positive & (best_iou < p["negative_mining_thresh"])
        # MXNet 2.0 truncates positives * ratio and ignores minimum_negative_samples (copied)
        wanted = jnp.floor(jnp.sum(positive) * p["negative_mining_ratio"])
        order = jnp.argsort(jnp.where(candidate, background, jnp.inf), stable=True)
        rank = jnp.zeros((n,), jnp.int32).at[order].set(jnp.arange(n, dtype=jnp.int32))
        negative = candidate & (rank < wanted.astype(jnp.int32))
        cls_target = jnp.where(positive, cls_target, jnp.where(negative, 0.0, float(p["ignore_label"])))
    aw, ah = anchor[:, 2] - anchor[:, 0], anchor[:, 3] - anchor[:, 1]
    ax, ay = anchor[:, 0] + aw / 2, anchor[:, 1] + ah / 2
    gw, gh = gt[:, 3] - gt[:, 1], gt[:, 4] - gt[:, 2]
    gx, gy = gt[:, 1] + gw / 2, gt[:, 2] + gh / 2
    vx, vy, vw, vh = p["variances"]
    loc = jnp.stack([(gx - ax) / aw / vx, (gy - ay) / ah / vy, jnp.log(gw / aw) / vw, jnp.log(gh / ah) / vh], -1)
    mask = jnp.broadcast_to(positive[:, None], (n, 4))
    return (jnp.where(mask, loc, 0.0).reshape(-1), mask.astype(anchor.dtype).reshape(-1),
            cls_target.astype(anchor.dtype))


@defop("_contrib_MultiBoxTarget", aliases=("MultiBoxTarget", "_npx_multibox_target"), num_outputs=3)
def multibox_target(anchor, label, cls_pred, *, overlap_threshold: float = 0.5, ignore_label: float = -1.0,
                    negative_mining_ratio: float = -1.0, negative_mining_thresh: float = 0.5,
                    minimum_negative_samples: int = 0, variances: tuple = (0.1, 0.1, 0.2, 0.2)):
    """``(loc_target (B, N*4), loc_mask (B, N*4), cls_target (B, N))`` for corner anchors (1, N, 4),
    labels (B, M, >=5) of ``[class_id, xmin, ymin, xmax, ymax]`` padded with rows of -1, and class
    predictions (B, num_classes, N) (read only for hard negative mining).  No gradient flows back."""
    op = "MultiBoxTarget"
    if anchor.ndim != 3 or anchor.shape[0] != 1 or anchor.shape[2] != 4:
        fail(op, f"anchor has shape {tuple(anchor.shape)} but (1, num_anchors, 4) is expected")
    n = anchor.shape[1]
    if label.ndim != 3 or label.shape[2] < 5:
        fail(op, f"label has shape {tuple(label.shape)} but (batch, num_labels, >=5) is expected")
    batch = label.shape[0]
    if cls_pred.ndim != 3 or cls_pred.shape[0] != batch or cls_pred.shape[2] != n:
        fail(op, f"cls_pred has shape {tuple(cls_pred.shape)} but ({batch}, num_classes, {n}) is expected")
    if len(variances) != 4:
        fail(op, f"variances must have 4 values, got {tuple(variances)}")
    params = dict(overlap_threshold=overlap_threshold, ignore_label=ignore_label,
                  negative_mining_ratio=negative_mining_ratio, negative_mining_thresh=negative_mining_thresh,
                  minimum_negative_samples=minimum_negative_samples,
                  variances=tuple(float(v) for v in variances))
    anchors = lax.stop_gradient(anchor[0])
    label, pred = lax.stop_gradient(label).astype(anchor.dtype), lax.stop_gradient(cls_pred)
    return jax.vmap(lambda lab, pr: _target_one(anchors, lab, pr, params))(label, pred)
