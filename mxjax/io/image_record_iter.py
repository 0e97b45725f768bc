"""``ImageRecordIter`` and its uint8/int8 variants: image batches from RecordIO (.rec) files.

Records of part ``part_index`` of ``num_parts`` come from ``RecordSplit`` (byte-range split,
or the .idx file's offsets when ``path_imgidx`` is given).  A batch's images are decoded
with Pillow on ``preprocess_threads`` threads, then, as MXNet's default augmenter does:
optional shorter-side ``resize``, enlargement when the image is smaller than the crop,
a center (or random) crop of ``data_shape``, mirroring, and ``(pixel - mean) / std * scale``.
Resizing reproduces OpenCV's fixed-point bilinear arithmetic, so batches match MXNet's.
Batches are assembled ``prefetch_buffer`` ahead on a background thread.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as onp

from .. import recordio
from .._image_codec import decode
from ..base import MXNetError
from . import _pixel_ops
from .. import _image_resize
from ._native import (MXDataIter, NativeBatch, RoundBatcher, check_batch_size, check_dtype, check_shape,
                      warn_unknown)
from ._split import RecordSplit

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter", "ImageRecordIter_v1",
           "ImageRecordUInt8Iter_v1"]

# MXNet augmentation arguments mxjax does not implement, with the default each must keep.
_UNSUPPORTED_DEFAULTS = {
    "aug_seq": "aug_default", "shuffle_chunk_size": 0, "shuffle_chunk_seed": 0, "random_resized_crop": False,
    "max_rotate_angle": 0, "max_aspect_ratio": 0, "min_aspect_ratio": None, "max_shear_ratio": 0,
    "max_crop_size": -1, "min_crop_size": -1, "max_random_scale": 1, "min_random_scale": 1,
    "max_random_area": 1, "min_random_area": 1, "max_img_size": 1e10, "min_img_size": 0, "brightness": 0,
    "contrast": 0, "saturation": 0, "pca_noise": 0, "random_h": 0, "random_s": 0, "random_l": 0, "rotate": -1,
    "fill_value": 255, "pad": 0, "max_random_contrast": 0, "max_random_illumination": 0, "mean_img": "",
}


def _read_imglist(where: str, path: str, label_width: int) -> dict:
    """``{image index: labels}`` from an image list file (``index<TAB>label...<TAB>path`` lines)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}: image list file {path!r} does not exist")
    labels = {}
    with open(path, "r", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.strip().split("\t")
            if fields == [""]:
                continue
            if len(fields) < label_width + 2:
                raise MXNetError(f"{where}: line {lineno} of {path!r} has {len(fields)} fields; with "
                                 f"label_width={label_width} it needs index, {label_width} label(s) and a path")
            labels[int(float(fields[0]))] = onp.asarray(fields[1:1 + label_width], dtype=onp.float32)
    return labels


class ImageRecordIter(MXDataIter):
    """Batches of images ``(batch, C, H, W)`` and labels from a RecordIO file (MXNet's ``ImageRecordIter``).

    Required: ``path_imgrec``, ``data_shape`` ``(C, H, W)`` with C 1 or 3, and ``batch_size``.
    Labels are ``(batch,)`` for ``label_width`` 1, else ``(batch, label_width)``.  With
    ``round_batch`` (default) the last batch is completed from the start of the part and the
    next epoch continues after the borrowed records; ``pad`` counts the filler examples.
    ``dtype`` 'uint8'/'int8' skips normalisation (as the UInt8/Int8 iterators do).
    """

    _default_dtype: Any = None

    def __init__(self, path_imgrec: str = "", data_shape: Any = None, batch_size: Any = None,
                 path_imglist: str = "", path_imgidx: str = "", label_width: int = 1, shuffle: bool = False,
                 seed: int = 0, rand_crop: bool = False, rand_mirror: bool = False, mirror: bool = False,
                 resize: int = -1, mean_r: float = 0.0, mean_g: float = 0.0, mean_b: float = 0.0,
                 mean_a: float = 0.0, std_r: float = 1.0, std_g: float = 1.0, std_b: float = 1.0,
                 std_a: float = 1.0, scale: float = 1.0, preprocess_threads: int = 4, prefetch_buffer: int = 4,
                 num_parts: int = 1, part_index: int = 0, round_batch: bool = True, inter_method: int = 1,
                 seed_aug: Any = None, verbose: bool = True, ctx: str = "gpu", device_id: int = 0,
                 dtype: Any = None, data_name: str = "data", label_name: str = "softmax_label",
                 **kwargs: Any) -> None:
        where = type(self).__name__
        augment = {k: kwargs.pop(k) for k in list(kwargs) if k in _UNSUPPORTED_DEFAULTS}
        super().__init__(data_name, label_name, prefetch_buffer, **kwargs)
        warn_unknown(where, kwargs)
        for name, value in augment.items():
            if value != _UNSUPPORTED_DEFAULTS[name]:
                raise MXNetError(f"{where}: argument {name}={value!r} is not supported by mxjax (only its default "
                                 f"{_UNSUPPORTED_DEFAULTS[name]!r}); apply such augmentation with mx.image or "
                                 "gluon.data.vision.transforms instead")
        if data_shape is None:
            raise MXNetError(f"{where}: the required argument data_shape (C, H, W) is missing")
        if batch_size is None:
            raise MXNetError(f"{where}: the required argument batch_size is missing")
        shape = check_shape(where, "data_shape", data_shape)
        if len(shape) != 3 or shape[0] not in (1, 3):
            raise MXNetError(f"{where}: data_shape must be (channels, height, width) with 1 or 3 channels, "
                             f"got {data_shape!r}")
        size = check_batch_size(where, batch_size)
        if not path_imgrec:
            raise MXNetError(f"{where}: path_imgrec is required (reading a raw image list is not supported)")
        if isinstance(label_width, bool) or int(label_width) < 1:
            raise MXNetError(f"{where}: label_width must be a positive int, got {label_width!r}")
        if inter_method not in (0, 1):
            raise MXNetError(f"{where}: inter_method={inter_method} is not supported; use 1 (bilinear, the "
                             "default) or 0 (nearest)")
        if int(preprocess_threads) < 1:
            raise MXNetError(f"{where}: preprocess_threads must be >= 1, got {preprocess_threads}")
        self._out_dtype = check_dtype(where, dtype if dtype is not None else self._default_dtype)
        if self._out_dtype not in (None, onp.float32, onp.float16, onp.float64, onp.uint8, onp.int8):
            raise MXNetError(f"{where}: dtype {dtype!r} is not supported; use float32, float16, float64, uint8 "
                             "or int8")
        self._shape = shape
        self._label_width = int(label_width)
        self._rand_crop, self._rand_mirror, self._mirror = bool(rand_crop), bool(rand_mirror), bool(mirror)
        self._resize = int(resize)
        self._nearest = inter_method == 0
        # per-channel constants (a gray image uses the red ones)
        self._mean = onp.asarray([mean_r, mean_g, mean_b][:shape[0]], onp.float32).reshape(-1, 1, 1)
        self._std = onp.asarray([std_r, std_g, std_b][:shape[0]], onp.float32).reshape(-1, 1, 1)
        if onp.any(self._std == 0):
            raise MXNetError(f"{where}: std_r/std_g/std_b must be non-zero, got {self._std.ravel().tolist()}")
        self._scale = onp.float32(scale)
        self._imglist = _read_imglist(where, path_imglist, self._label_width) if path_imglist else None
        self._aug_rng = onp.random.RandomState(seed if seed_aug is None else seed_aug)
        self._where = where
        self._path_imgrec = path_imgrec
        self._split = RecordSplit(path_imgrec, part_index=part_index, num_parts=num_parts,
                                  index_path=path_imgidx or None, shuffle=bool(shuffle), seed=seed)
        self._pool = ThreadPoolExecutor(max_workers=int(preprocess_threads), thread_name_prefix="mxjax-imgrec")
        label_shape = (self._label_width,)
        self._batcher = RoundBatcher(self._next_record, self._split.reset, size, (), label_shape, round_batch,
                                     object, onp.float32)
        self._start()

    def _declared_batch(self) -> Any:
        size = self._batcher.batch_size
        label_shape = (size,) if self._label_width == 1 else (size, self._label_width)
        dtype = onp.dtype(self._out_dtype or onp.float32)
        return ((size,) + self._shape, dtype), (label_shape, onp.dtype(onp.float32))

    # -- records
    def _labels_of(self, header: Any) -> onp.ndarray:
        if self._imglist is not None:
            if int(header.id) not in self._imglist:
                raise MXNetError(f"{self._where}: record id {header.id} is not listed in the image list file")
            return self._imglist[int(header.id)]
        if self._label_width == 1:
            first = header.label if onp.ndim(header.label) == 0 else onp.ravel(header.label)[0]
            return onp.asarray([first], onp.float32)
        found = onp.ravel(onp.asarray(header.label, onp.float32))
        if found.size != self._label_width:
            raise MXNetError(f"{self._where}: record id {header.id} stores {found.size} label(s) but "
                             f"label_width={self._label_width}")
        return found

    def _next_record(self) -> Any:
        payload = self._split.next()
        if payload is None:
            return None
        header, image = recordio.unpack(payload)
        return image, self._labels_of(header), int(header.id)

    # -- images
    def _process(self, encoded: bytes, draw: onp.ndarray, record_id: int) -> onp.ndarray:
        channels, height, width = self._shape
        try:
            img = decode(encoded, self._where, 1)
        except MXNetError as err:
            raise MXNetError(f"{self._where}: the image of record id {record_id} in {self._path_imgrec!r} "
                             f"cannot be read: {err}") from None
        if channels == 1:
            img = _pixel_ops.rgb_to_gray(img)
        interp = 0 if self._nearest else 1
        if self._resize > 0:
            new_h, new_w = _pixel_ops.short_side_size(img.shape[0], img.shape[1], self._resize)
            img = _image_resize.resize(img, new_w, new_h, interp)
        cover = _pixel_ops.cover_size(img.shape[0], img.shape[1], height, width)
        if cover != img.shape[:2]:
            img = _image_resize.resize(img, cover[1], cover[0], interp)
        spare_y, spare_x = img.shape[0] - height, img.shape[1] - width
        if self._rand_crop:
            y, x = int(draw[0] * (spare_y + 1)), int(draw[1] * (spare_x + 1))
        else:
            y, x = spare_y // 2, spare_x // 2
        img = img[y:y + height, x:x + width]
        if self._mirror or (self._rand_mirror and draw[2] < 0.5):
            img = img[:, ::-1]
        chw = onp.ascontiguousarray(img.transpose(2, 0, 1))
        if self._out_dtype == onp.uint8:
            return chw
        if self._out_dtype == onp.int8:
            return onp.minimum(chw, 127).astype(onp.int8)
        out = (chw.astype(onp.float32) - self._mean) / self._std * self._scale
        return out.astype(self._out_dtype or onp.float32, copy=False)

    def _produce(self) -> NativeBatch | None:
        batch = self._batcher.next_batch()
        if batch is None:
            return None
        filled = self._batcher.batch_size if self._batcher.round_batch else self._batcher.batch_size - batch.pad
        draws = self._aug_rng.random_sample((filled, 3))
        images = list(self._pool.map(self._process, batch.data[:filled], draws, batch.index[:filled]))
        dtype = self._out_dtype or onp.float32
        data = onp.zeros((self._batcher.batch_size,) + self._shape, dtype)
        data[:filled] = onp.stack(images)
        label = batch.label
        # MXNet leaves stale rows behind the pad (and reports pad=0); here they are zero and counted.
        label[filled:] = 0
        index = batch.index
        index[filled:] = 0
        return NativeBatch(data, label, batch.pad, index, batch.wrapped)

    def _rewind(self) -> None:
        self._batcher.rewind(self._after_wrap)

    def close(self) -> None:
        super().close()
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=True)


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` yielding raw uint8 pixels (no mean/std/scale normalisation)."""

    _default_dtype = "uint8"


class ImageRecordInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` yielding int8 pixels (values above 127 saturate to 127; no normalisation)."""

    _default_dtype = "int8"


class ImageRecordIter_v1(ImageRecordIter):  # noqa: N801  (MXNet's name)
    """MXNet's first-generation record iterator; its batches equal ``ImageRecordIter``'s here (MXNet's
    own two versions differ only in the index array and the padding count, which mxjax reports as
    the first version did: record ids and the true number of filler rows)."""


class ImageRecordUInt8Iter_v1(ImageRecordUInt8Iter):  # noqa: N801  (MXNet's name)
    """First-generation ``ImageRecordUInt8Iter``: raw uint8 pixels, as ``ImageRecordUInt8Iter``."""
