"""``mx.image.detection``: augmenters that transform an image together with its object boxes,
and ``ImageDetIter``, an ``ImageIter`` for object-detection labels.

A label is a NumPy array with one row per object, ``[class, xmin, ymin, xmax, ymax, extra...]``,
coordinates as fractions of the image size.  Random choices come from Python's ``random`` in
MXNet's order, so a seeded ``random`` reproduces MXNet's crops and pads.  The augmenter classes
live in ``_det_augmenters`` and are re-exported here.
"""
from __future__ import annotations

import logging
import warnings
from typing import Any, Iterator

import numpy as onp

from .._ndarray import NDArray
from ._augmenters import (IMAGENET_EIGVAL, IMAGENET_EIGVEC, IMAGENET_MEAN, IMAGENET_STD, CastAug, ColorJitterAug,
                          ColorNormalizeAug, ForceResizeAug, HueJitterAug, LightingAug, RandomGrayAug, ResizeAug)
from ._det_augmenters import (DetAugmenter, DetBorrowAug, DetHorizontalFlipAug, DetRandomCropAug, DetRandomPadAug,
                              DetRandomSelectAug)
from ._functions import ImageArgumentError
from ._iter import ImageIter, to_host

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug",
           "DetRandomPadAug", "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]

for _cls in (DetAugmenter, DetBorrowAug, DetRandomSelectAug, DetHorizontalFlipAug, DetRandomCropAug, DetRandomPadAug):
    _cls.__module__ = __name__  # public MXNet home of the classes moved to _det_augmenters
del _cls


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

