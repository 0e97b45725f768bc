"""MXNet's ``box_nms`` (``box_non_maximum_suppression``): greedy non-maximum suppression.

Each row of ``data`` (..., N, K) is one box record: a score at ``score_index``, four
coordinates from ``coord_start`` and optionally a class id at ``id_index``.  The
output keeps data's shape: the surviving records sorted by descending score, then
rows of -1.  The gradient flows back to the input rows that survive.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .nn_util import check_choice, fail
from .registry import defop

_FORMATS = ("center", "corner")


def _corner(box, fmt):
    if fmt == "corner":
        return box
    x, y, w, h = (box[..., i] for i in range(4))
    return jnp.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2], -1)


def _center(box):
    w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    return jnp.stack([box[..., 0] + w / 2, box[..., 1] + h / 2, w, h], -1)


def _pairwise_iou(box):
    lo = jnp.maximum(box[:, None, :2], box[None, :, :2])
    hi = jnp.minimum(box[:, None, 2:], box[None, :, 2:])
    wh = jnp.maximum(hi - lo, 0)
    inter = wh[..., 0] * wh[..., 1]
    area = (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])
    union = area[:, None] + area[None, :] - inter
    return jnp.where(union > 0, inter / jnp.where(union > 0, union, 1), 0)


def _nms_one(x, p):
    """NMS of one (N, K) record matrix."""
    n = x.shape[0]
    score = x[:, p["score_index"]]
    valid = score > p["valid_thresh"]
    id_index = p["id_index"]
    if id_index >= 0 and p["background_id"] >= 0:
        valid = valid & (x[:, id_index] != p["background_id"])
    order = jnp.argsort(jnp.where(valid, -score, jnp.inf), stable=True)
    sx, keep = x[order], valid[order]
    if p["topk"] > 0:
        keep = keep & (jnp.arange(n) < p["topk"])
    start = p["coord_start"]
    boxes = _corner(lax.stop_gradient(sx[:, start:start + 4]), p["in_format"])
    suppress = _pairwise_iou(boxes) > p["overlap_thresh"]
    if id_index >= 0 and not p["force_suppress"]:
        suppress = suppress & (sx[:, None, id_index] == sx[None, :, id_index])
    suppress = suppress & (jnp.arange(n)[None, :] > jnp.arange(n)[:, None])

    def step(i, keep):
        return jnp.where(keep[i], keep & ~suppress[i], keep)
    keep = lax.fori_loop(0, n, step, keep)
    if p["in_format"] != p["out_format"]:
        coords = sx[:, start:start + 4]
        coords = _center(coords) if p["out_format"] == "center" else _corner(coords, "center")
        sx = sx.at[:, start:start + 4].set(coords)
    dest = jnp.where(keep, jnp.cumsum(keep) - 1, n)
    out = jnp.full((n + 1, x.shape[1]), -1, x.dtype).at[dest].set(sx)
    return out[:n]


@defop("_contrib_box_nms", aliases=("box_nms", "_contrib_box_non_maximum_suppression", "_npx_box_nms"))
def box_nms(data, *, overlap_thresh: float = 0.5, valid_thresh: float = 0.0, topk: int = -1,
            coord_start: int = 2, score_index: int = 1, id_index: int = -1, background_id: int = -1,
            force_suppress: bool = False, in_format: str = "corner", out_format: str = "corner"):
    """Keep the records with score > ``valid_thresh`` (not of class ``background_id``), take the
    ``topk`` best, and drop each one whose IoU with a better kept box of the same class (any class
    with ``force_suppress`` or no ``id_index``) exceeds ``overlap_thresh``."""
    op = "box_nms"
    check_choice(op, "in_format", in_format, _FORMATS)
    check_choice(op, "out_format", out_format, _FORMATS)
    if data.ndim < 2:
        fail(op, f"data must be at least 2-D (..., num_boxes, record), got shape {tuple(data.shape)}")
    width = data.shape[-1]
    if not 0 <= coord_start <= width - 4:
        fail(op, f"coord_start={coord_start} leaves no 4 coordinates in records of width {width}")
    if not 0 <= score_index < width or id_index >= width:
        fail(op, f"score_index={score_index} / id_index={id_index} out of range for records of width {width}")
    params = dict(overlap_thresh=overlap_thresh, valid_thresh=valid_thresh, topk=topk, coord_start=coord_start,
                  score_index=score_index, id_index=id_index, background_id=background_id,
                  force_suppress=force_suppress, in_format=in_format, out_format=out_format)
    flat = data.reshape(-1, *data.shape[-2:])
    return jax.vmap(lambda x: _nms_one(x, params))(flat).reshape(data.shape)


def _decode(loc, anchor, variances, clip):
    """SSD box decoding of (N, 4) offsets against (N, 4) corner anchors."""
    aw, ah = anchor[:, 2] - anchor[:, 0], anchor[:, 3] - anchor[:, 1]
    ax, ay = (anchor[:, 0] + anchor[:, 2]) / 2, (anchor[:, 1] + anchor[:, 3]) / 2
    vx, vy, vw, vh = variances
    x, y = loc[:, 0] * vx * aw + ax, loc[:, 1] * vy * ah + ay
    hw, hh = jnp.exp(loc[:, 2] * vw) * aw / 2, jnp.exp(loc[:, 3] * vh) * ah / 2
    out = jnp.stack([x - hw, y - hh, x + hw, y + hh], -1)
    return jnp.clip(out, 0.0, 1.0) if clip else out


def _detect_one(prob, loc, anchor, p):
    classes, n = prob.shape
    bg = p["background_id"]
    scores = jnp.where((jnp.arange(classes) == bg)[:, None], -jnp.inf, prob)
    best = jnp.argmax(scores, axis=0)
    score = jnp.max(scores, axis=0)
    valid = score >= p["threshold"]
    cls = (best - (best > bg)).astype(prob.dtype) if bg >= 0 else best.astype(prob.dtype)
    boxes = _decode(loc.reshape(n, 4), anchor, p["variances"], p["clip"])
    order = jnp.argsort(jnp.where(valid, -score, jnp.inf), stable=True)
    cls, score, boxes, valid = cls[order], score[order], boxes[order], valid[order]
    rank = jnp.arange(n)
    active = valid & (rank < p["nms_topk"]) if p["nms_topk"] > 0 else valid
    suppress = (_pairwise_iou(boxes) > p["nms_threshold"]) & (rank[None, :] > rank[:, None])
    if not p["force_suppress"]:
        suppress = suppress & (cls[:, None] == cls[None, :])

    def step(i, keep):
        return jnp.where(keep[i], keep & ~suppress[i], keep)
    keep = lax.fori_loop(0, n, step, active)
    rows = jnp.concatenate([jnp.where(keep, cls, -1.0)[:, None], score[:, None], boxes], -1)
    return jnp.where(valid[:, None], rows, jnp.full_like(rows, -1.0))


@defop("_contrib_MultiBoxDetection", aliases=("MultiBoxDetection", "_npx_multibox_detection"))
def multibox_detection(cls_prob, loc_pred, anchor, *, clip: bool = True, threshold: float = 0.01,
                       background_id: int = 0, nms_threshold: float = 0.5, force_suppress: bool = False,
                       variances: tuple = (0.1, 0.1, 0.2, 0.2), nms_topk: int = -1):
    """SSD detections (B, N, 6) of ``[class_id, score, xmin, ymin, xmax, ymax]``: each anchor's best
    non-background class (ids counted without the background), its box decoded from ``loc_pred``
    with ``variances``; rows sorted by score, those below ``threshold`` all -1, and ``class_id`` -1
    for the rows non-maximum suppression (same class unless ``force_suppress``) or ``nms_topk``
    drops.  No gradient flows back (as MXNet's)."""
    op = "MultiBoxDetection"
    if cls_prob.ndim != 3:
        fail(op, f"cls_prob must be 3-D (batch, num_classes, num_anchors), got shape {tuple(cls_prob.shape)}")
    batch, classes, n = cls_prob.shape
    if classes < 2:
        fail(op, f"cls_prob has {classes} classes; at least 2 (background and one object class) are expected")
    if tuple(loc_pred.shape) != (batch, n * 4):
        fail(op, f"loc_pred has shape {tuple(loc_pred.shape)} but ({batch}, {n * 4}) is expected")
    if anchor.ndim != 3 or anchor.shape[1:] != (n, 4) or anchor.shape[0] not in (1, batch):
        fail(op, f"anchor has shape {tuple(anchor.shape)} but (1, {n}, 4) is expected")
    if len(variances) != 4:
        fail(op, f"variances must have 4 values, got {tuple(variances)}")
    params = dict(clip=clip, threshold=threshold, background_id=background_id, nms_threshold=nms_threshold,
                  force_suppress=force_suppress, variances=tuple(float(v) for v in variances), nms_topk=nms_topk)
    prob, loc = lax.stop_gradient(cls_prob), lax.stop_gradient(loc_pred).astype(cls_prob.dtype)
    anchors = jnp.broadcast_to(lax.stop_gradient(anchor).astype(cls_prob.dtype), (batch, n, 4))
    return jax.vmap(lambda a, b, c: _detect_one(a, b, c, params))(prob, loc, anchors)
