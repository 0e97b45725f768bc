"""Two-stage detection ops of MXNet's contrib: region proposals and position-sensitive / rotated RoI pooling.

``Proposal``/``MultiProposal`` (Faster R-CNN's RPN layer): anchors on a ``feature_stride`` grid, decoded
by ``bbox_pred``, clipped, small boxes scored -1, sorted, greedy NMS, padded by repeating the kept boxes
-- all fixed shapes, so one XLA program.  ``PSROIPooling``/``DeformablePSROIPooling`` (R-FCN) follow
MXNet's CUDA kernels (its CPU kernels are empty stubs).  ``RROIAlign`` pools rotated boxes like
ROIAlign; with ``sampling_ratio <= 0`` its sample grid depends on the rois' values (dynamic-shape op).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
from jax import lax

from .nn_util import fail
from .registry import defop, dynamic_shape_error


def _round(x):
    """C's ``round``: halves away from zero (``jnp.round`` rounds halves to even)."""
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)


def _check_rois(op, data, rois, width=5):
    if data.ndim != 4:
        fail(op, f"data must be 4-D (N, C, H, W), got shape {tuple(data.shape)}")
    if rois.ndim != 2 or rois.shape[1] != width:
        fail(op, f"rois has shape {tuple(rois.shape)} but (num_rois, {width}) is expected")


# ----- PSROIPooling ---------------------------------------------------------------------------------------

def _ps_channels(output_dim, group, ph, pw):
    """Input channel of output (ctop, i, j): ``(ctop * group + gh) * group + gw``, (output_dim, ph, pw)."""
    gh = onp.clip(onp.floor(onp.arange(ph) * group / ph), 0, group - 1).astype(int)
    gw = onp.clip(onp.floor(onp.arange(pw) * group / pw), 0, group - 1).astype(int)
    return (onp.arange(output_dim)[:, None, None] * group + gh[None, :, None]) * group + gw[None, None, :]


def _psroi_check(op, data, rois, output_dim, group):
    _check_rois(op, data, rois)
    if data.shape[1] != output_dim * group * group:
        fail(op, f"data has {data.shape[1]} channels but output_dim * group_size^2 = "
                 f"{output_dim} * {group}^2 = {output_dim * group * group} are expected (data {tuple(data.shape)})")


@defop("_contrib_PSROIPooling", aliases=("PSROIPooling",))
def psroi_pooling(data, rois, *, spatial_scale: float | None = None, output_dim: int | None = None,
                  pooled_size: int | None = None, group_size: int = 0):
    """Position-sensitive RoI average pooling (R-FCN): bin (i, j) of output channel ``ctop`` averages input
    channel ``(ctop * group + gh) * group + gw`` over the bin's integer cells; rois are
    ``(batch_index, x1, y1, x2, y2)``, rounded, times ``spatial_scale``.  Gradients reach ``data`` only."""
    if spatial_scale is None or output_dim is None or pooled_size is None:
        fail("PSROIPooling", "spatial_scale, output_dim and pooled_size are required")
    size, group = int(pooled_size), int(group_size) or int(pooled_size)
    _psroi_check("PSROIPooling", data, rois, output_dim, group)
    height, width = data.shape[2], data.shape[3]
    rois = lax.stop_gradient(rois).astype(data.dtype)
    x1, y1 = _round(rois[:, 1]) * spatial_scale, _round(rois[:, 2]) * spatial_scale
    x2, y2 = (_round(rois[:, 3]) + 1) * spatial_scale, (_round(rois[:, 4]) + 1) * spatial_scale
    bin_w, bin_h = jnp.maximum(x2 - x1, 0.1) / size, jnp.maximum(y2 - y1, 0.1) / size

    def cells(start, bin_size, extent):  # (R, size, extent) indicator of each bin's cells, and its count
        k = jnp.arange(size, dtype=start.dtype)
        lo = jnp.clip(jnp.floor(k * bin_size[:, None] + start[:, None]), 0, extent)
        hi = jnp.clip(jnp.ceil((k + 1) * bin_size[:, None] + start[:, None]), 0, extent)
        grid = jnp.arange(extent, dtype=start.dtype)
        return ((grid >= lo[..., None]) & (grid < hi[..., None])).astype(data.dtype), jnp.maximum(hi - lo, 0)

    wy, ny = cells(y1, bin_h, height)
    wx, nx = cells(x1, bin_w, width)
    maps = data[jnp.clip(rois[:, 0].astype(jnp.int32), 0, data.shape[0] - 1)]
    sums = jnp.einsum("rph,rchw,rqw->rcpq", wy, maps, wx, precision=lax.Precision.HIGHEST)
    chan = jnp.asarray(_ps_channels(output_dim, group, size, size))
    sums = jnp.take_along_axis(sums, jnp.broadcast_to(chan, (sums.shape[0], *chan.shape)), axis=1)
    area = ny[:, None, :, None] * nx[:, None, None, :]
    return jnp.where(area > 0, sums / jnp.maximum(area, 1), 0).astype(data.dtype)


# ----- DeformablePSROIPooling -----------------------------------------------------------------------------

@defop("_contrib_DeformablePSROIPooling", aliases=("DeformablePSROIPooling",))
def deformable_psroi_pooling(data, rois, trans=None, *, spatial_scale: float | None = None,
                             output_dim: int | None = None, group_size: int | None = None,
                             pooled_size: int | None = None, part_size: int = 0, sample_per_part: int = 1,
                             trans_std: float = 0.0, no_trans: bool = False):
    """Deformable position-sensitive RoI pooling (Dai et al. 2017): each bin averages
    ``sample_per_part``^2 bilinear samples, shifted by ``trans[r, 2 * class + (0: x, 1: y), part_h, part_w]
    * trans_std * roi size``; samples outside the map are skipped.  Gradients reach ``data`` and ``trans``."""
    op = "DeformablePSROIPooling"
    if None in (spatial_scale, output_dim, group_size, pooled_size):
        fail(op, "spatial_scale, output_dim, group_size and pooled_size are required")
    size, group, samples = int(pooled_size), int(group_size), int(sample_per_part)
    part = int(part_size) or size
    _psroi_check(op, data, rois, output_dim, group)
    num_rois, channels, height, width = rois.shape[0], data.shape[1], data.shape[2], data.shape[3]
    if not no_trans:
        if trans is None or trans.ndim != 4 or trans.shape[0] != num_rois or trans.shape[1] % 2 \
                or trans.shape[2:] != (part, part) or output_dim % (trans.shape[1] // 2):
            fail(op, f"trans has shape {None if trans is None else tuple(trans.shape)} but (num_rois={num_rois}, "
                     f"2 * num_classes, part_size={part}, part_size={part}) with num_classes dividing "
                     f"output_dim={output_dim} is expected")
    dtype = data.dtype
    rois = lax.stop_gradient(rois).astype(dtype)
    x1, y1 = _round(rois[:, 1]) * spatial_scale - 0.5, _round(rois[:, 2]) * spatial_scale - 0.5
    x2, y2 = (_round(rois[:, 3]) + 1) * spatial_scale - 0.5, (_round(rois[:, 4]) + 1) * spatial_scale - 0.5
    roi_w, roi_h = jnp.maximum(x2 - x1, 0.1), jnp.maximum(y2 - y1, 0.1)
    bin_w, bin_h = roi_w / size, roi_h / size
    bins = jnp.arange(size, dtype=dtype)
    parts = onp.floor(onp.arange(size) / size * part).astype(int)
    if no_trans:
        tx = ty = jnp.zeros((num_rois, output_dim, size, size), dtype)
    else:
        per_class = output_dim // (trans.shape[1] // 2)
        cls = onp.arange(output_dim) // per_class
        shifts = trans.astype(dtype)[:, :, parts][:, :, :, parts] * trans_std  # (R, 2K, size, size)
        tx, ty = shifts[:, 2 * cls], shifts[:, 2 * cls + 1]                 # (R, output_dim, size, size)
    sub = jnp.arange(samples, dtype=dtype)
    # sample positions (R, output_dim, size(ph), size(pw), samples(ih), samples(iw))
    w = ((bins[None, None, None, :] * bin_w[:, None, None, None] + x1[:, None, None, None]
          + tx * roi_w[:, None, None, None])[..., None, None] + sub[None, None, None, None, None, :]
         * (bin_w / samples)[:, None, None, None, None, None])
    h = ((bins[None, None, :, None] * bin_h[:, None, None, None] + y1[:, None, None, None]
          + ty * roi_h[:, None, None, None])[..., None, None] + sub[None, None, None, None, :, None]
         * (bin_h / samples)[:, None, None, None, None, None])
    valid = (w >= -0.5) & (w <= width - 0.5) & (h >= -0.5) & (h <= height - 0.5)
    w, h = jnp.clip(w, 0.0, width - 1.0), jnp.clip(h, 0.0, height - 1.0)
    x0, y0 = jnp.floor(w), jnp.floor(h)
    xc, yc = jnp.ceil(w), jnp.ceil(h)
    dx, dy = w - x0, h - y0
    chan = jnp.asarray(_ps_channels(output_dim, group, size, size))[None, :, :, :, None, None]
    batch = jnp.clip(rois[:, 0].astype(jnp.int32), 0, data.shape[0] - 1)[:, None, None, None, None, None]
    flat = data.reshape(-1)

    def at(yy, xx):
        return flat[((batch * channels + chan) * height + yy.astype(jnp.int32)) * width + xx.astype(jnp.int32)]

    value = ((1 - dx) * (1 - dy) * at(y0, x0) + (1 - dx) * dy * at(yc, x0)
             + dx * (1 - dy) * at(y0, xc) + dx * dy * at(yc, xc))
    count = jnp.sum(valid, axis=(-2, -1))
    total = jnp.sum(jnp.where(valid, value, 0), axis=(-2, -1))
    return jnp.where(count > 0, total / jnp.maximum(count, 1), 0).astype(dtype)


# ----- Proposal / MultiProposal ---------------------------------------------------------------------------

def _anchors(stride, ratios, scales):
    """MXNet's base anchors (ratios outer, scales inner), (A, 4) in float32 as its C++."""
    f = onp.float32
    base_w = base_h = f(stride)
    ctr = f(0.5) * (base_w - f(1))
    out = []
    for ratio in ratios:
        for scale in scales:
            size_ratios = onp.floor(f(base_w * base_h) / f(ratio))
            new_w = onp.floor(onp.sqrt(size_ratios) + f(0.5)) * f(scale)
            new_h = onp.floor(new_w / f(scale) * f(ratio) + f(0.5)) * f(scale)
            out.append([ctr - f(0.5) * (new_w - 1), ctr - f(0.5) * (new_h - 1),
                        ctr + f(0.5) * (new_w - 1), ctr + f(0.5) * (new_h - 1)])
    return onp.asarray(out, onp.float32)


def _proposals_one(scores, deltas, info, *, anchors, stride, pre, post, threshold, min_size, iou_loss):
    """One image: scores (A, H, W), deltas (4A, H, W), info (3,) -> rois (post, 4), scores (post,)."""
    num_anchors, height, width = scores.shape
    # proposal index = (h * W + w) * A + a
    shift_x = jnp.broadcast_to(jnp.arange(width, dtype=jnp.float32)[None, :] * stride, (height, width))
    shift_y = jnp.broadcast_to(jnp.arange(height, dtype=jnp.float32)[:, None] * stride, (height, width))
    boxes = (jnp.asarray(anchors)[None, None, :, :]
             + jnp.stack([shift_x, shift_y, shift_x, shift_y], -1)[:, :, None, :])
    boxes = boxes.reshape(-1, 4)
    d = deltas.reshape(num_anchors, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)
    score = scores.transpose(1, 2, 0).reshape(-1)
    im_h, im_w = info[0], info[1]
    if iou_loss:
        pred = boxes + d
    else:
        bw, bh = boxes[:, 2] - boxes[:, 0] + 1, boxes[:, 3] - boxes[:, 1] + 1
        cx, cy = boxes[:, 0] + 0.5 * (bw - 1), boxes[:, 1] + 0.5 * (bh - 1)
        pcx, pcy = d[:, 0] * bw + cx, d[:, 1] * bh + cy
        pw, ph = jnp.exp(d[:, 2]) * bw, jnp.exp(d[:, 3]) * bh
        pred = jnp.stack([pcx - 0.5 * (pw - 1), pcy - 0.5 * (ph - 1), pcx + 0.5 * (pw - 1), pcy + 0.5 * (ph - 1)], 1)
    pred = jnp.stack([jnp.clip(pred[:, 0], 0, im_w - 1), jnp.clip(pred[:, 1], 0, im_h - 1),
                      jnp.clip(pred[:, 2], 0, im_w - 1), jnp.clip(pred[:, 3], 0, im_h - 1)], 1)
    real_h = jnp.floor(im_h / stride).astype(jnp.int32)
    real_w = jnp.floor(im_w / stride).astype(jnp.int32)
    cell_h = jnp.repeat(jnp.arange(height), width * num_anchors)
    cell_w = jnp.tile(jnp.repeat(jnp.arange(width), num_anchors), height)
    score = jnp.where((cell_h >= real_h) | (cell_w >= real_w), -1.0, score)
    min_size = min_size * info[2]
    small = ((pred[:, 2] - pred[:, 0] + 1) < min_size) | ((pred[:, 3] - pred[:, 1] + 1) < min_size)
    pred = jnp.where(small[:, None], pred + jnp.array([-0.5, -0.5, 0.5, 0.5]) * min_size, pred)
    score = jnp.where(small, -1.0, score)
    order = jnp.argsort(-score, stable=True)[:pre]
    dets, det_score = pred[order], score[order]
    area = (dets[:, 2] - dets[:, 0] + 1) * (dets[:, 3] - dets[:, 1] + 1)
    inter_w = jnp.maximum(0.0, jnp.minimum(dets[:, None, 2], dets[None, :, 2])
                          - jnp.maximum(dets[:, None, 0], dets[None, :, 0]) + 1)
    inter_h = jnp.maximum(0.0, jnp.minimum(dets[:, None, 3], dets[None, :, 3])
                          - jnp.maximum(dets[:, None, 1], dets[None, :, 1]) + 1)
    inter = inter_w * inter_h
    overlap = inter / (area[:, None] + area[None, :] - inter) > threshold
    later = jnp.arange(pre)[None, :] > jnp.arange(pre)[:, None]

    def step(i, carry):  # greedy NMS in score order, stopping after ``post`` kept boxes
        suppressed, kept = carry
        keep = ~suppressed[i] & (jnp.sum(kept) < post)
        return suppressed | (keep & overlap[i] & later[i]), kept.at[i].set(keep)

    _, kept = lax.fori_loop(0, pre, step, (jnp.zeros(pre, bool), jnp.zeros(pre, bool)))
    out_size = jnp.sum(kept)
    keep_idx = jnp.argsort(~kept, stable=True)  # kept positions first, in order
    pick = keep_idx[jnp.arange(post) % jnp.maximum(out_size, 1)]
    return dets[pick], det_score[pick]


def _proposal(op, cls_prob, bbox_pred, im_info, multi, rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold,
              rpn_min_size, scales, ratios, feature_stride, output_score, iou_loss):
    if cls_prob.ndim != 4 or bbox_pred.ndim != 4 or im_info.ndim != 2:
        fail(op, f"cls_prob (N, 2A, H, W), bbox_pred (N, 4A, H, W) and im_info (N, 3) are expected, got "
                 f"{tuple(cls_prob.shape)}, {tuple(bbox_pred.shape)} and {tuple(im_info.shape)}")
    batch, twice_a, height, width = cls_prob.shape
    num_anchors = twice_a // 2
    if num_anchors != len(scales) * len(ratios) or twice_a % 2:
        fail(op, f"cls_prob has {twice_a} channels but 2 * len(scales) * len(ratios) = "
                 f"{2 * len(scales) * len(ratios)} are expected")
    if bbox_pred.shape != (batch, 4 * num_anchors, height, width) or im_info.shape[0] != batch:
        fail(op, f"bbox_pred {tuple(bbox_pred.shape)} / im_info {tuple(im_info.shape)} do not match cls_prob "
                 f"{tuple(cls_prob.shape)}: ({batch}, {4 * num_anchors}, {height}, {width}) and ({batch}, 3) expected")
    if not multi and batch != 1:
        fail(op, f"takes one image (cls_prob batch 1, got {batch}); use MultiProposal for a batch")
    count = num_anchors * height * width
    pre = min(rpn_pre_nms_top_n if rpn_pre_nms_top_n > 0 else count, count)
    post = min(rpn_post_nms_top_n, pre)
    one = jax.vmap(lambda s, d, i: _proposals_one(
        s, d, i, anchors=_anchors(feature_stride, ratios, scales), stride=float(feature_stride), pre=pre, post=post,
        threshold=threshold, min_size=float(rpn_min_size), iou_loss=iou_loss))
    scores = lax.stop_gradient(cls_prob).astype(jnp.float32)[:, num_anchors:]
    boxes, box_scores = one(scores, lax.stop_gradient(bbox_pred).astype(jnp.float32),
                            lax.stop_gradient(im_info).astype(jnp.float32))
    if post < rpn_post_nms_top_n:  # MXNet fills rows past ``post`` by repeating the kept boxes too
        reps = jnp.arange(rpn_post_nms_top_n) % post
        boxes, box_scores = boxes[:, reps], box_scores[:, reps]
    index = jnp.broadcast_to(jnp.arange(batch, dtype=jnp.float32)[:, None, None], (*boxes.shape[:2], 1))
    rois = jnp.concatenate([index, boxes], -1).reshape(-1, 5).astype(cls_prob.dtype)
    box_scores = box_scores.reshape(-1, 1).astype(cls_prob.dtype)
    return (rois, box_scores) if output_score else rois


_PROPOSAL_OUTPUTS = lambda p: 2 if p.get("output_score") else 1  # noqa: E731


@defop("_contrib_Proposal", aliases=("Proposal",), num_outputs=_PROPOSAL_OUTPUTS)
def proposal(cls_prob, bbox_pred, im_info, *, rpn_pre_nms_top_n: int = 6000, rpn_post_nms_top_n: int = 300,
             threshold: float = 0.7, rpn_min_size: int = 16, scales: tuple = (4.0, 8.0, 16.0, 32.0),
             ratios: tuple = (0.5, 1.0, 2.0), feature_stride: int = 16, output_score: bool = False,
             iou_loss: bool = False):
    """Region proposals of one image (Faster R-CNN): ``(rpn_post_nms_top_n, 5)`` rois
    ``(0, x1, y1, x2, y2)`` (and their ``(rpn_post_nms_top_n, 1)`` scores with ``output_score``).
    Inputs get zero gradients, as in MXNet."""
    return _proposal("Proposal", cls_prob, bbox_pred, im_info, False, rpn_pre_nms_top_n, rpn_post_nms_top_n,
                     threshold, rpn_min_size, tuple(scales), tuple(ratios), feature_stride, output_score, iou_loss)


@defop("_contrib_MultiProposal", aliases=("MultiProposal",), num_outputs=_PROPOSAL_OUTPUTS)
def multi_proposal(cls_prob, bbox_pred, im_info, *, rpn_pre_nms_top_n: int = 6000, rpn_post_nms_top_n: int = 300,
                   threshold: float = 0.7, rpn_min_size: int = 16, scales: tuple = (4.0, 8.0, 16.0, 32.0),
                   ratios: tuple = (0.5, 1.0, 2.0), feature_stride: int = 16, output_score: bool = False,
                   iou_loss: bool = False):
    """``Proposal`` for a batch: ``(N * rpn_post_nms_top_n, 5)`` rois whose first column is the image index."""
    return _proposal("MultiProposal", cls_prob, bbox_pred, im_info, True, rpn_pre_nms_top_n, rpn_post_nms_top_n,
                     threshold, rpn_min_size, tuple(scales), tuple(ratios), feature_stride, output_score, iou_loss)


# ----- RROIAlign --------------------------------------------------------------------------------------------

def _rroi_check(data, rois, pooled_size, spatial_scale):
    _check_rois("RROIAlign", data, rois, 6)
    if pooled_size is None or spatial_scale is None:
        fail("RROIAlign", "pooled_size and spatial_scale are required")
    size = tuple(pooled_size) if isinstance(pooled_size, (tuple, list)) else (int(pooled_size),) * 2
    if len(size) != 2 or min(size) < 1:
        fail("RROIAlign", f"pooled_size={pooled_size!r} must be two positive integers (height, width)")
    return size


@defop("_contrib_RROIAlign", aliases=("RROIAlign",), dynamic_shape=True,
       infer=lambda data, rois, **p: jax.ShapeDtypeStruct(
           (rois.shape[0], data.shape[1], *_rroi_check(data, rois, p.get("pooled_size"), p.get("spatial_scale"))),
           data.dtype))
def rroi_align(data, rois, *, pooled_size: shape | None = None, spatial_scale: float | None = None,
               sampling_ratio: int = -1):
    """Rotated RoI Align: rois ``(batch_index, center_x, center_y, width, height, angle_degrees)``; each bin
    averages a grid of bilinear samples of the box rotated by the angle around its center.  (MXNet has no
    gradient for this op; here gradients reach ``data``.)"""
    ph, pw = _rroi_check(data, rois, pooled_size, spatial_scale)
    dtype = data.dtype
    rois = lax.stop_gradient(rois).astype(dtype)
    cx, cy = rois[:, 1] * spatial_scale, rois[:, 2] * spatial_scale
    roi_w = jnp.maximum(rois[:, 3] * spatial_scale, 1.0)
    roi_h = jnp.maximum(rois[:, 4] * spatial_scale, 1.0)
    theta = rois[:, 5] * (onp.pi / 180.0)
    bin_h, bin_w = roi_h / ph, roi_w / pw
    if sampling_ratio > 0:
        grid_h = grid_w = jnp.full(rois.shape[:1], sampling_ratio, jnp.int32)
        max_h = max_w = sampling_ratio
    else:
        if isinstance(rois, jax.core.Tracer):
            raise dynamic_shape_error("_contrib_RROIAlign", "rois (sampling_ratio <= 0 sizes each bin's grid)")
        grid_h, grid_w = jnp.ceil(roi_h / ph).astype(jnp.int32), jnp.ceil(roi_w / pw).astype(jnp.int32)
        max_h = max(int(onp.max(onp.asarray(grid_h), initial=1)), 1)
        max_w = max(int(onp.max(onp.asarray(grid_w), initial=1)), 1)
    iy, ix = jnp.arange(max_h), jnp.arange(max_w)
    r = (slice(None),) + (None,) * 4  # (R, ph, pw, gy, gx) broadcasting
    yy = (-roi_h / 2)[r] + jnp.arange(ph)[None, :, None, None, None] * bin_h[r] \
        + (iy[None, None, None, :, None] + 0.5) * (bin_h / grid_h)[r]
    xx = (-roi_w / 2)[r] + jnp.arange(pw)[None, None, :, None, None] * bin_w[r] \
        + (ix[None, None, None, None, :] + 0.5) * (bin_w / grid_w)[r]
    cos, sin = jnp.cos(theta)[r], jnp.sin(theta)[r]
    x = xx * cos + yy * sin + cx[r]
    y = yy * cos - xx * sin + cy[r]
    height, width = data.shape[2], data.shape[3]
    used = (iy[None, None, None, :, None] < grid_h[r]) & (ix[None, None, None, None, :] < grid_w[r])
    used = used & ~((y < -1.0) | (y > height) | (x < -1.0) | (x > width))
    y, x = jnp.maximum(y, 0.0), jnp.maximum(x, 0.0)
    y_low, x_low = jnp.floor(y), jnp.floor(x)
    y_end, x_end = y_low >= height - 1, x_low >= width - 1
    y_low, x_low = jnp.where(y_end, height - 1, y_low), jnp.where(x_end, width - 1, x_low)
    y, x = jnp.where(y_end, y_low, y), jnp.where(x_end, x_low, x)
    y_high, x_high = jnp.where(y_end, y_low, y_low + 1), jnp.where(x_end, x_low, x_low + 1)
    ly, lx = y - y_low, x - x_low
    maps = data[jnp.clip(rois[:, 0].astype(jnp.int32), 0, data.shape[0] - 1)].reshape(
        rois.shape[0], data.shape[1], -1)                                               # (R, C, H*W)

    def at(yi, xi, weight):  # (R, C, ph, pw, gy, gx) weighted corner values
        idx = (yi * width + xi).astype(jnp.int32).reshape(rois.shape[0], 1, -1)
        vals = jnp.take_along_axis(maps, jnp.broadcast_to(idx, (maps.shape[0], maps.shape[1], idx.shape[2])), 2)
        return vals.reshape(maps.shape[0], maps.shape[1], *weight.shape[1:]) * (weight * used)[:, None]

    total = (at(y_low, x_low, (1 - ly) * (1 - lx)) + at(y_low, x_high, (1 - ly) * lx)
             + at(y_high, x_low, ly * (1 - lx)) + at(y_high, x_high, ly * lx))
    count = (grid_h * grid_w).astype(dtype)[:, None, None, None]
    return (jnp.sum(total, axis=(-2, -1)) / count).astype(dtype)
