"""Detection augmenters for ``mx.image.detection``: the ``DetAugmenter`` classes that transform
an image together with its object boxes (borrowed plain augmenters, random choice, flip, crop, pad).

Kept apart from ``detection.py``, which builds the standard augmenter lists from these classes and
holds ``ImageDetIter``; the classes here depend only on the plain image augmenters and functions.
"""
from __future__ import annotations

import json
import logging
import math
import numbers
import random
import warnings
from typing import Any

import numpy as onp

from .. import ndarray as _legacy
from .. import numpy as _mx_np
from ._augmenters import Augmenter, _plain
from ._functions import ImageArgumentError, copyMakeBorder, fixed_crop, uses_np


def _box_areas(boxes: onp.ndarray) -> onp.ndarray:
    """Areas of ``[xmin, ymin, xmax, ymax, ...]`` rows (0 for inverted boxes)."""
    return onp.maximum(0, boxes[:, 2] - boxes[:, 0]) * onp.maximum(0, boxes[:, 3] - boxes[:, 1])


def _as_range(value: Any, name: str, owner: str) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if not isinstance(value, numbers.Number):
        raise ImageArgumentError(f"{owner}: {name} must be a number or a (min, max) pair, got {value!r}")
    logging.info("%s: using the fixed %s %s", owner, name, value)
    return (value, value)


class DetAugmenter:
    """Base class: a detection augmenter maps ``(image, label)`` to ``(image, label)``."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = {k: _plain(v) for k, v in kwargs.items()}

    def dumps(self) -> str:
        """JSON ``[lower-cased class name, constructor arguments]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")


class DetBorrowAug(DetAugmenter):
    """Apply an image-only ``Augmenter`` and keep the label (only for label-preserving ones)."""

    def __init__(self, augmenter: Augmenter) -> None:
        if not isinstance(augmenter, Augmenter):
            raise TypeError(f"DetBorrowAug: expected an mx.image.Augmenter, got {type(augmenter).__name__}")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self) -> list:  # a list, as MXNet's
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """With probability ``skip_prob`` do nothing, else apply one of ``aug_list`` chosen at random."""

    def __init__(self, aug_list: Any, skip_prob: float = 0) -> None:
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError(f"DetRandomSelectAug: aug_list may hold DetAugmenters only, got "
                                 f"{type(aug).__name__}")
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self) -> list:
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.aug_list]]

    def __call__(self, src: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:
        if self.skip_prob > random.random():
            return src, label
        random.shuffle(self.aug_list)  # in place, as MXNet: the order carries over
        chosen = self.aug_list[0]
        return chosen(src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """With probability ``p``, mirror the image and the boxes left-right (label updated in place)."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:
        if self.p > random.random():
            src = (_mx_np.flip if uses_np(src) else _legacy.flip)(src, axis=1)
            self._flip_label(label)
        return src, label

    def _flip_label(self, label: onp.ndarray) -> None:
        new_xmin = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = new_xmin


class DetRandomCropAug(DetAugmenter):
    """Crop a random window (area fraction in ``area_range``, aspect ratio in
    ``aspect_ratio_range``) in which every object it touches keeps more than
    ``min_object_covered`` of its area; objects left with at most ``min_eject_coverage`` are
    dropped.  Gives up (image unchanged) after ``max_attempts`` draws."""

    def __init__(self, min_object_covered: float = 0.1, aspect_ratio_range: Any = (0.75, 1.33),
                 area_range: Any = (0.05, 1.0), min_eject_coverage: float = 0.3, max_attempts: int = 50) -> None:
        name = type(self).__name__
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect_ratio_range", name)
        area_range = _as_range(area_range, "area_range", name)
        super().__init__(min_object_covered=min_object_covered, aspect_ratio_range=aspect_ratio_range,
                         area_range=area_range, min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered, self.min_eject_coverage = min_object_covered, min_eject_coverage
        self.aspect_ratio_range, self.area_range, self.max_attempts = aspect_ratio_range, area_range, max_attempts
        self.enabled = False
        # MXNet passes the range as warnings.warn's category here, which itself raises; warn properly
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn(f"{name}: disabled, invalid area_range {area_range}")
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn(f"{name}: disabled, invalid aspect_ratio_range {aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:
        proposal = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if proposal:
            left, top, crop_w, crop_h, label = proposal
            src = fixed_crop(src, left, top, crop_w, crop_h)
        return src, label

    def _covers_objects(self, label: onp.ndarray, window: tuple, width: int, height: int) -> bool:
        x0, y0, x1, y1 = window
        if (x1 - x0) * (y1 - y0) < 2:
            return False
        left, top, right, bottom = x0 / width, y0 / height, x1 / width, y1 / height
        boxes = label[:, 1:]
        areas = _box_areas(boxes)
        sizable = onp.flatnonzero(areas * width * height > 2)
        if sizable.size == 0:
            return False
        boxes, areas = boxes[sizable], areas[sizable]
        inter = onp.stack([onp.maximum(boxes[:, 0], left), onp.maximum(boxes[:, 1], top),
                           onp.minimum(boxes[:, 2], right), onp.minimum(boxes[:, 3], bottom)], axis=1)
        empty = (inter[:, 0] >= inter[:, 2]) | (inter[:, 1] >= inter[:, 3])
        coverage = onp.where(empty, 0.0, _box_areas(inter)) / areas
        touched = coverage[coverage > 0]
        return touched.size > 0 and touched.min() > self.min_object_covered

    def _crop_labels(self, label: onp.ndarray, window: tuple, height: int, width: int) -> onp.ndarray | None:
        x0, y0, w, h = (window[0] / width, window[1] / height, window[2] / width, window[3] / height)
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x0) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - y0) / h
        out[:, 1:5] = onp.clip(out[:, 1:5], 0, 1)
        kept_share = _box_areas(out[:, 1:]) * w * h / _box_areas(label[:, 1:])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & (kept_share > self.min_eject_coverage)
        return out[keep] if keep.any() else None

    def _random_crop_proposal(self, label: onp.ndarray, height: int, width: int) -> tuple:
        if not (self.enabled and height > 0 and width > 0):
            return ()
        lo_area, hi_area = (share * height * width for share in self.area_range)
        for _attempt in range(self.max_attempts):
            ratio = random.uniform(self.aspect_ratio_range[0], self.aspect_ratio_range[1])
            if ratio <= 0:
                continue
            crop_h = int(round(math.sqrt(lo_area / ratio)))
            top_h = int(round(math.sqrt(hi_area / ratio)))
            if round(top_h * ratio) > width:  # keep the width within the image
                top_h = int((width + 0.4999999) / ratio)
            top_h = min(top_h, height)
            crop_h = min(crop_h, top_h)
            if crop_h < top_h:
                crop_h = random.randint(crop_h, top_h)
            crop_w = int(round(crop_h * ratio))
            if crop_w * crop_h < lo_area:  # one row more or less to land inside the area range
                crop_h += 1
                crop_w = int(round(crop_h * ratio))
            if crop_w * crop_h > hi_area:
                crop_h -= 1
                crop_w = int(round(crop_h * ratio))
            fits = 0 <= crop_w <= width and 0 <= crop_h <= height
            if not (fits and lo_area <= crop_w * crop_h <= hi_area):
                continue
            top = random.randint(0, max(0, height - crop_h))
            left = random.randint(0, max(0, width - crop_w))
            if self._covers_objects(label, (left, top, left + crop_w, top + crop_h), width, height):
                new_label = self._crop_labels(label, (left, top, crop_w, crop_h), height, width)
                if new_label is not None:
                    return left, top, crop_w, crop_h, new_label
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas (area ``area_range`` times the image,
    aspect ratio in ``aspect_ratio_range``) filled with ``pad_val``, rescaling the boxes."""

    def __init__(self, aspect_ratio_range: Any = (0.75, 1.33), area_range: Any = (1.0, 3.0),
                 max_attempts: int = 50, pad_val: Any = (128, 128, 128)) -> None:
        name = type(self).__name__
        if not isinstance(pad_val, (list, tuple)):
            if not isinstance(pad_val, numbers.Number):
                raise ImageArgumentError(f"{name}: pad_val must be a number or per-channel values, got {pad_val!r}")
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect_ratio_range", name)
        area_range = _as_range(area_range, "area_range", name)
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range, self.area_range, self.max_attempts = aspect_ratio_range, area_range, max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn(f"{name}: disabled, invalid area_range {area_range}")
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn(f"{name}: disabled, invalid aspect_ratio_range {aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:
        height, width = src.shape[0], src.shape[1]
        proposal = self._random_pad_proposal(label, height, width)
        if proposal:
            left, top, canvas_w, canvas_h, label = proposal
            # a single pad value fills every channel (MXNet's scalar case fails in OpenCV)
            fill = tuple(self.pad_val) if isinstance(self.pad_val, (list, tuple)) else (self.pad_val,) * src.shape[2]
            src = copyMakeBorder(src, top, canvas_h - top - height, left, canvas_w - left - width, 16, values=fill)
        return src, label

    def _pad_labels(self, label: onp.ndarray, canvas: tuple, height: int, width: int) -> onp.ndarray:
        x, y, w, h = canvas
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + x) / w
        out[:, (2, 4)] = (out[:, (2, 4)] * height + y) / h
        return out

    def _random_pad_proposal(self, label: onp.ndarray, height: int, width: int) -> tuple:
        if not (self.enabled and height > 0 and width > 0):
            return ()
        lo_area, hi_area = (share * height * width for share in self.area_range)
        for _attempt in range(self.max_attempts):
            ratio = random.uniform(self.aspect_ratio_range[0], self.aspect_ratio_range[1])
            if ratio <= 0:
                continue
            canvas_h = int(round(math.sqrt(lo_area / ratio)))
            top_h = int(round(math.sqrt(hi_area / ratio)))
            if round(canvas_h * ratio) < width:  # the canvas must be at least as wide as the image
                canvas_h = int((width + 0.499999) / ratio)
            canvas_h = min(max(canvas_h, height), top_h)
            if canvas_h < top_h:
                canvas_h = random.randint(canvas_h, top_h)
            canvas_w = int(round(canvas_h * ratio))
            if min(canvas_h - height, canvas_w - width) < 2:
                continue  # a margin this thin is no augmentation
            top = random.randint(0, max(0, canvas_h - height))
            left = random.randint(0, max(0, canvas_w - width))
            canvas = (left, top, canvas_w, canvas_h)
            return (*canvas, self._pad_labels(label, canvas, height, width))
        return ()
