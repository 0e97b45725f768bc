"""Bounding-box arithmetic on NumPy arrays for the detection transforms (MXNet 2.0's
``gluon.contrib.data.vision.transforms.bbox.utils``).

Boxes are rows ``(xmin, ymin, xmax, ymax, extra...)``; the extra columns (class id, difficulty)
ride along untouched.  Everything here works on host NumPy arrays and returns new arrays: the
draws of ``bbox_random_crop_with_constraints`` use Python's ``random`` and NumPy's global
stream in the same order as MXNet, so a seeded run picks the same crop.
"""
from __future__ import annotations

import random
from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["bbox_crop", "bbox_flip", "bbox_resize", "bbox_translate", "bbox_iou", "bbox_xywh_to_xyxy",
           "bbox_xyxy_to_xywh", "bbox_clip_xyxy", "bbox_random_crop_with_constraints"]

_DEFAULT_CONSTRAINTS = ((0.1, None), (0.3, None), (0.5, None), (0.7, None), (0.9, None), (None, 1))


def _check_bbox_shape(bbox: Any) -> None:
    """Raise unless ``bbox`` is (N, 4+) (an AssertionError, as MXNet's assert)."""
    if len(bbox.shape) != 2 or bbox.shape[1] < 4:
        raise _BoxShapeError(f"bbox must have shape (N, 4+) (xmin, ymin, xmax, ymax, ...), got {tuple(bbox.shape)}")


class _BoxShapeError(ValueError, AssertionError):
    """A box array of the wrong shape (MXNet 2.0 asserts: also an AssertionError)."""


def bbox_crop(bbox: np.ndarray, crop_box: Sequence | None = None, allow_outside_center: bool = True) -> np.ndarray:
    """Boxes clipped to ``crop_box`` = (x, y, width, height) and shifted to its origin; boxes left
    empty are dropped, and so are boxes whose centre lies outside unless ``allow_outside_center``.
    A ``None`` in ``crop_box`` leaves that side open."""
    out = np.array(bbox, copy=True)
    if crop_box is None:
        return out
    if len(crop_box) != 4:
        raise ValueError(f"bbox_crop: crop_box must be (x, y, width, height), got {crop_box!r}")
    if all(c is None for c in crop_box):
        return out
    x, y, w, h = crop_box
    left, top = (x or 0), (y or 0)
    window = np.array((left, top, left + (w if w else np.inf), top + (h if h else np.inf)))
    keep = np.ones(len(out), dtype=bool)
    if not allow_outside_center:
        centre = (out[:, 0:2] + out[:, 2:4]) / 2
        keep = np.all((centre >= window[:2]) & (centre < window[2:]), axis=1)
    out[:, 0:2] = np.maximum(out[:, 0:2], window[:2]) - window[:2]
    out[:, 2:4] = np.minimum(out[:, 2:4], window[2:]) - window[:2]
    keep &= np.all(out[:, 0:2] < out[:, 2:4], axis=1)
    return out[keep]


def bbox_flip(bbox: np.ndarray, size: Sequence, flip_x: bool = False, flip_y: bool = False) -> np.ndarray:
    """Boxes mirrored with an image of ``size`` = (width, height), horizontally and/or vertically."""
    if len(size) != 2:
        raise ValueError(f"bbox_flip: size must be (width, height), got {size!r}")
    width, height = size
    out = np.array(bbox, copy=True)
    if flip_y:
        out[:, [1, 3]] = height - bbox[:, [3, 1]]
    if flip_x:
        out[:, [0, 2]] = width - bbox[:, [2, 0]]
    return out


def bbox_resize(bbox: np.ndarray, in_size: Sequence, out_size: Sequence) -> np.ndarray:
    """Boxes scaled from an image of ``in_size`` to one of ``out_size`` (both (width, height));
    the result is float64."""
    if len(in_size) != 2:
        raise ValueError(f"bbox_resize: in_size must be (width, height), got {in_size!r}")
    if len(out_size) != 2:
        raise ValueError(f"bbox_resize: out_size must be (width, height), got {out_size!r}")
    out = np.array(bbox, dtype=float)
    out[:, [0, 2]] *= out_size[0] / in_size[0]
    out[:, [1, 3]] *= out_size[1] / in_size[1]
    return out


def bbox_translate(bbox: np.ndarray, x_offset: float = 0, y_offset: float = 0) -> np.ndarray:
    """Boxes moved by (``x_offset``, ``y_offset``)."""
    out = np.array(bbox, copy=True)
    out[:, [0, 2]] += x_offset
    out[:, [1, 3]] += y_offset
    return out


def bbox_iou(bbox_a: np.ndarray, bbox_b: np.ndarray, offset: float = 0) -> np.ndarray:
    """(N, M) intersection over union of the boxes of ``bbox_a`` (N, 4+) and ``bbox_b`` (M, 4+);
    ``offset`` is added to each width and height (1 for inclusive pixel boxes)."""
    if bbox_a.shape[1] < 4 or bbox_b.shape[1] < 4:
        raise IndexError(f"bbox_iou: boxes need at least 4 columns, got {bbox_a.shape} and {bbox_b.shape}")
    lo = np.maximum(bbox_a[:, None, 0:2], bbox_b[None, :, 0:2])
    hi = np.minimum(bbox_a[:, None, 2:4], bbox_b[None, :, 2:4])
    inter = np.prod(hi - lo + offset, axis=2) * np.all(lo < hi, axis=2)
    area_a = np.prod(bbox_a[:, 2:4] - bbox_a[:, 0:2] + offset, axis=1)
    area_b = np.prod(bbox_b[:, 2:4] - bbox_b[:, 0:2] + offset, axis=1)
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def _convert(name: str, boxes: Any, one: Any, many: Any) -> Any:
    if isinstance(boxes, (tuple, list)):
        if len(boxes) != 4:
            raise IndexError(f"{name}: a box has 4 elements, got {len(boxes)}")
        return one(boxes)
    if isinstance(boxes, np.ndarray):
        if boxes.size % 4:
            raise IndexError(f"{name}: expected n * 4 elements, got shape {boxes.shape}")
        return many(boxes)
    raise TypeError(f"{name}: expected a list, tuple or numpy.ndarray, got {type(boxes).__name__}")


def bbox_xywh_to_xyxy(xywh: Any) -> Any:
    """(x, y, w, h) -> (xmin, ymin, xmax, ymax) with inclusive pixel corners (xmax = x + w - 1)."""
    return _convert("bbox_xywh_to_xyxy", xywh,
                    lambda b: (b[0], b[1], b[0] + np.maximum(b[2] - 1, 0), b[1] + np.maximum(b[3] - 1, 0)),
                    lambda a: np.hstack((a[:, 0:2], a[:, 0:2] + np.maximum(0, a[:, 2:4] - 1))))


def bbox_xyxy_to_xywh(xyxy: Any) -> Any:
    """(xmin, ymin, xmax, ymax) with inclusive corners -> (x, y, w, h)."""
    return _convert("bbox_xyxy_to_xywh", xyxy,
                    lambda b: (b[0], b[1], b[2] - b[0] + 1, b[3] - b[1] + 1),
                    lambda a: np.hstack((a[:, 0:2], a[:, 2:4] - a[:, 0:2] + 1)))


def bbox_clip_xyxy(xyxy: Any, width: float, height: float) -> Any:
    """Corners clipped into the pixel range [0, width - 1] x [0, height - 1].

    An array input gives MXNet's layout: the clipped x1, y1, x2 and y2 columns concatenated
    into one flat array."""
    def clip(v: Any, limit: float) -> Any:
        return np.minimum(limit - 1, np.maximum(0, v))
    return _convert("bbox_clip_xyxy", xyxy,
                    lambda b: (clip(b[0], width), clip(b[1], height), clip(b[2], width), clip(b[3], height)),
                    lambda a: np.hstack((clip(a[:, 0], width), clip(a[:, 1], height),
                                         clip(a[:, 2], width), clip(a[:, 3], height))))


def _offset(span: int) -> int:
    # Python's randrange(0) raises; a crop as large as the image has one position
    return random.randrange(span) if span > 0 else 0


def bbox_random_crop_with_constraints(bbox: np.ndarray, size: Sequence, min_scale: float = 0.3,
                                      max_scale: float = 1, max_aspect_ratio: float = 2,
                                      constraints: Iterable | None = None, max_trial: int = 50) -> tuple:
    """SSD-style random crop of an image of ``size`` = (width, height): for each (min_iou, max_iou)
    constraint (None: unbounded) up to ``max_trial`` random windows are tried and the first whose
    IoU with every box lies in range becomes a candidate; one candidate (or the whole image) that
    keeps a box centre is picked.  Returns (cropped boxes, (x, y, width, height))."""
    width, height = size
    candidates = [(0, 0, width, height)]
    for min_iou, max_iou in (_DEFAULT_CONSTRAINTS if constraints is None else constraints):
        low = -np.inf if min_iou is None else min_iou
        high = np.inf if max_iou is None else max_iou
        for _ in range(max_trial):
            scale = random.uniform(min_scale, max_scale)
            ratio = random.uniform(max(1 / max_aspect_ratio, scale * scale),
                                   min(max_aspect_ratio, 1 / (scale * scale)))
            crop_h = int(height * scale / np.sqrt(ratio))
            crop_w = int(width * scale * np.sqrt(ratio))
            top = _offset(height - crop_h)
            left = _offset(width - crop_w)
            window = (left, top, crop_w, crop_h)
            if len(bbox) == 0:
                return bbox, window
            iou = bbox_iou(bbox, np.array([[left, top, left + crop_w, top + crop_h]]))
            if low <= iou.min() and iou.max() <= high:
                candidates.append(window)
                break
    while candidates:
        window = candidates.pop(np.random.randint(0, len(candidates)))
        kept = bbox_crop(bbox, window, allow_outside_center=False)
        if kept.size:
            return kept, window
    return bbox, (0, 0, width, height)
