"""``mx.image.detection``: augmenters that transform an image together with its object boxes,
and ``ImageDetIter``, an ``ImageIter`` for object-detection labels.

A label is a NumPy array with one row per object, ``[class, xmin, ymin, xmax, ymax, extra...]``,
coordinates as fractions of the image size.  Random choices come from Python's ``random`` in
MXNet's order, so a seeded ``random`` reproduces MXNet's crops and pads.
"""
from __future__ import annotations

import json
import logging
import math
import numbers
import random
import warnings
from typing import Any, Iterator

import numpy as onp

from .. import ndarray as _legacy
from .. import numpy as _mx_np
from .._ndarray import NDArray
from ._augmenters import (IMAGENET_EIGVAL, IMAGENET_EIGVEC, IMAGENET_MEAN, IMAGENET_STD, Augmenter, CastAug,
                          ColorJitterAug, ColorNormalizeAug, ForceResizeAug, HueJitterAug, LightingAug, RandomGrayAug,
                          ResizeAug, _plain)
from ._functions import ImageArgumentError, copyMakeBorder, fixed_crop, uses_np
from ._iter import ImageIter, to_host

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug",
           "DetRandomPadAug", "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]


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


def CreateMultiRandCropAugmenter(min_object_covered: Any = 0.1, aspect_ratio_range: Any = (0.75, 1.33),
                                 area_range: Any = (0.05, 1.0), min_eject_coverage: Any = 0.3,
                                 max_attempts: Any = 50, skip_prob: float = 0) -> DetRandomSelectAug:
    """A ``DetRandomSelectAug`` over several ``DetRandomCropAug``: any argument given as a list
    makes one crop augmenter per entry (the other arguments are repeated to match)."""
    params = [p if isinstance(p, list) else [p]
              for p in (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts)]
    count = max(len(p) for p in params)
    for k, p in enumerate(params):
        if len(p) not in (1, count):
            raise ImageArgumentError(f"CreateMultiRandCropAugmenter: list arguments must all have length {count} "
                                     f"(or 1), got {p!r}")
        params[k] = p * count if len(p) == 1 else p
    crops = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                              min_eject_coverage=mec, max_attempts=ma) for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(crops, skip_prob=skip_prob)


def _check_stat(value: Any, name: str, default: tuple) -> Any:
    if value is True:
        return onp.array(default)
    if value is not None and not (isinstance(value, onp.ndarray) and value.shape[0] in (1, 3)):
        raise ImageArgumentError(f"CreateDetAugmenter: {name} must be True, None or a NumPy array of 1 or 3 "
                                 f"values, got {value!r}")
    return value


def CreateDetAugmenter(data_shape: tuple, resize: int = 0, rand_crop: float = 0, rand_pad: float = 0,
                       rand_gray: float = 0, rand_mirror: bool = False, mean: Any = None, std: Any = None,
                       brightness: float = 0, contrast: float = 0, saturation: float = 0, pca_noise: float = 0,
                       hue: float = 0, inter_method: int = 2, min_object_covered: Any = 0.1,
                       aspect_ratio_range: Any = (0.75, 1.33), area_range: Any = (0.05, 3.0),
                       min_eject_coverage: Any = 0.3, max_attempts: Any = 50,
                       pad_val: Any = (127, 127, 127)) -> list:
    """The standard detection augmenter list for ``data_shape`` (C, H, W): optional short-edge
    resize; random crops (probability ``rand_crop``), mirror, random pad (``rand_pad``); a forced
    resize to (W, H); cast to float32; colour/hue jitter, PCA noise, random grey; normalization."""
    augs: list[DetAugmenter] = []
    if resize > 0:
        augs.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        augs.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range, area_range,
                                                 min_eject_coverage, max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        augs.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        augs.append(DetRandomSelectAug([pad], 1 - rand_pad))
    augs.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    augs.append(DetBorrowAug(CastAug()))
    if any((brightness, contrast, saturation)):
        augs.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        augs.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        augs.append(DetBorrowAug(LightingAug(pca_noise, IMAGENET_EIGVAL, IMAGENET_EIGVEC)))
    if rand_gray > 0:
        augs.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = _check_stat(mean, "mean", IMAGENET_MEAN)
    std = _check_stat(std, "std", IMAGENET_STD)
    if not (mean is None and std is None):
        augs.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return augs


class ImageDetIter(ImageIter):
    """``ImageIter`` for object detection.  Raw labels are ``[header_width, object_width,
    header..., objects...]``; batches carry labels of shape (N, max objects, object_width) padded
    with -1.  ``kwargs`` go to ``CreateDetAugmenter`` when ``aug_list`` is None."""

    def __init__(self, batch_size: int, data_shape: tuple, path_imgrec: str | None = None,
                 path_imglist: str | None = None, path_root: str | None = None, path_imgidx: str | None = None,
                 shuffle: bool = False, part_index: int = 0, num_parts: int = 1, aug_list: list | None = None,
                 imglist: list | None = None, data_name: str = "data", label_name: str = "label",
                 last_batch_handle: str = "pad", **kwargs: Any) -> None:
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name, last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size, *shape))]
        self.label_shape = shape

    def _check_valid_label(self, label: onp.ndarray) -> None:
        if label.ndim != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label} received.")
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self) -> tuple[int, int]:
        most, width = 0, 5
        self.reset()
        try:
            while True:
                label = self._parse_label(self.next_sample()[0])
                most, width = max(most, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        return most, width

    def _parse_label(self, label: Any) -> onp.ndarray:
        """Raw label -> (objects, object_width) rows of the valid boxes."""
        raw = (label.asnumpy() if isinstance(label, NDArray) else onp.asarray(label)).ravel()
        if raw.size < 7:
            raise RuntimeError(f"Label shape is invalid: {raw.shape}")
        header_width, obj_width = int(raw[0]), int(raw[1])
        if obj_width <= 0 or (raw.size - header_width) % obj_width != 0:
            raise RuntimeError(f"Label shape {raw.shape} inconsistent with annotation width {obj_width}.")
        objects = raw[header_width:].reshape(-1, obj_width)
        valid = (objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])
        if not valid.any():
            raise RuntimeError("Encounter sample with no valid label.")
        return objects[valid]

    def reshape(self, data_shape: tuple | None = None, label_shape: tuple | None = None) -> None:
        """Change the data shape (C, H, W) and/or the label shape (objects, width) of later batches."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [(self.provide_label[0][0], (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def check_label_shape(self, label_shape: tuple) -> None:
        """A new label shape may add object slots but not drop any, nor change the object width."""
        if len(label_shape) != 2:
            raise ValueError(f"{type(self).__name__}: label_shape should have length 2, got {label_shape}")
        if self.label_shape[0] > label_shape[0]:
            raise ValueError(f"{type(self).__name__}: cannot reduce the label count from {self.label_shape[0]} "
                             f"to {label_shape[0]}")
        if self.provide_label[0][1][2] != label_shape[1]:
            raise ValueError(f"{type(self).__name__}: label_shape object width {label_shape[1]} differs from "
                             f"{self.provide_label[0][1][2]}")

    def augmentation_transform(self, img: Any, label: onp.ndarray) -> tuple[Any, onp.ndarray]:  # type: ignore[override]
        """Apply the detection augmenters in order."""
        for aug in self.auglist:
            img, label = aug(img, label)
        return img, label

    def _new_buffers(self) -> tuple[onp.ndarray, onp.ndarray]:
        data, label = super()._new_buffers()
        label[...] = -1
        return data, label

    def _batchify(self, batch_data: onp.ndarray, batch_label: onp.ndarray, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                raw_label, raw = self.next_sample()
                img = self.imdecode(raw)
                try:
                    self.check_valid_image([img])
                    label = self._parse_label(raw_label)
                    img, label = self.augmentation_transform(img, label)
                    self._check_valid_label(label)
                except RuntimeError as err:
                    logging.debug("Invalid image, skipping: %s", err)
                    continue
                slots, width = batch_label.shape[1:]
                if label.shape[0] > slots or label.shape[1] != width:
                    raise ValueError(f"{type(self).__name__}: a label of shape {label.shape} does not fit the "
                                     f"label shape {(slots, width)}; call reshape() or sync_label_shape()")
                batch_data[i] = to_host(self.postprocess_data(img))
                batch_label[i] = -1
                batch_label[i, :label.shape[0]] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def draw_next(self, color: Any = None, thickness: int = 2, mean: Any = None, std: Any = None,
                  clip: bool = True, waitKey: Any = None, window_name: str = "draw_next",
                  id2labels: dict | None = None) -> Iterator[onp.ndarray]:
        """Yield the next augmented images as BGR uint8 (H, W, 3) NumPy arrays with their boxes
        drawn, for checking the augmentation visually.

        ``mean``/``std`` (True: the ImageNet values) undo the normalization; ``color`` is an RGB
        triple (default: a random colour per box); ``id2labels`` maps class ids to captions.
        Drawing uses Pillow (MXNet uses OpenCV; line pixels can differ at the corners).
        ``waitKey``/``window_name`` ask MXNet to show an OpenCV window, which needs a display and
        OpenCV: here they only warn.  Unlike MXNet, ``color`` is reversed to BGR once, not again
        for every image."""
        from PIL import Image, ImageDraw
        if waitKey is not None:
            warnings.warn(f"draw_next: cannot show the window {window_name!r} (no OpenCV GUI); "
                          "the images are only yielded")
        std = onp.array(IMAGENET_STD) if std is True else std
        mean = onp.array(IMAGENET_MEAN) if mean is True else mean
        for name, value in (("std", std), ("mean", mean)):
            if value is not None and not (isinstance(value, onp.ndarray) and value.shape[0] in (1, 3)):
                raise ImageArgumentError(f"draw_next: {name} must be True, None or a NumPy array of 1 or 3 values")
        bgr_color = tuple(int(c) for c in color[::-1]) if color else None
        while True:
            try:
                raw_label, raw = self.next_sample()
            except StopIteration:
                return
            img = self.imdecode(raw)
            try:
                self.check_valid_image([img])
                label = self._parse_label(raw_label)
            except RuntimeError as err:
                logging.debug("Invalid image, skipping: %s", err)
                continue
            img, label = self.augmentation_transform(img, label)
            pixels = to_host(img, onp.float64)
            if std is not None:
                pixels = pixels * std
            if mean is not None:
                pixels = pixels + mean
            pixels = pixels[:, :, ::-1]  # RGB -> BGR, as OpenCV draws
            if clip:
                pixels = onp.clip(pixels, 0, 255)
            canvas = Image.fromarray(onp.ascontiguousarray(pixels.astype(onp.uint8)))
            draw = ImageDraw.Draw(canvas)
            height, width = pixels.shape[:2]
            for row in label:
                x1 = int(row[1] * width)
                if x1 < 0:
                    continue
                y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
                box_color = bgr_color or tuple(int(c) for c in onp.random.rand(3) * 255)
                draw.rectangle([x1, y1, x2, y2], outline=box_color, width=thickness)
                if id2labels is not None and int(row[0]) in id2labels:
                    draw.text((x1 + 5, y1 + 5), str(id2labels[int(row[0])]), fill=(255, 255, 255))
            yield onp.asarray(canvas)

    def sync_label_shape(self, it: "ImageDetIter", verbose: bool = False) -> "ImageDetIter":
        """Give this iterator and ``it`` the same (largest) label shape; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise ImageArgumentError(f"sync_label_shape: expected an ImageDetIter, got {type(it).__name__}")
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise ImageArgumentError(f"sync_label_shape: object widths differ, {mine[1]} vs {theirs[1]}")
        most = max(mine[0], theirs[0])
        if most > mine[0]:
            self.reshape(None, (most, mine[1]))
        if most > theirs[0]:
            it.reshape(None, (most, theirs[1]))
        if verbose and most > min(mine[0], theirs[0]):
            logging.info("Resized label_shape to (%d, %d).", most, mine[1])
        return it

