"""``mx.image.ImageIter``: a Python ``DataIter`` over images in a RecordIO file, an image list
file or an in-memory list, decoding and augmenting each image and batching them as (N, C, H, W).

Batches are assembled in host NumPy buffers and handed out as one array each (``mx.np`` arrays,
or legacy NDArrays when NumPy semantics are off), which avoids one device update per image.
"""
from __future__ import annotations

import logging
import numbers
import os
import random
from typing import Any

import numpy as onp

from .. import _config
from .. import ndarray as _legacy
from .. import numpy as _mx_np
from .._ndarray import NDArray
from ..io import DataBatch, DataIter
from ._augmenters import CreateAugmenter
from ._functions import ImageArgumentError, imdecode

__all__ = ["ImageIter"]

_LAST_BATCH_MODES = ("pad", "discard", "roll_over")


def to_host(value: Any, dtype: Any = onp.float32) -> onp.ndarray:
    """An MXNet array, NumPy array, list or number as a NumPy array of ``dtype``."""
    if isinstance(value, NDArray):
        value = value.asnumpy()
    return onp.asarray(value, dtype=dtype)


def wrap_batch(values: onp.ndarray) -> Any:
    """A host batch buffer as the array kind of the current mode (copied)."""
    return (_mx_np.array if _config.is_np_array() else _legacy.array)(values.copy(), dtype=values.dtype)


class ImageIter(DataIter):
    """Iterate over images with labels, read from ``path_imgrec`` (RecordIO, indexed with
    ``path_imgidx``), ``path_imglist`` (tab-separated ``index, label(s)..., path`` lines, files
    under ``path_root``) or ``imglist`` (a list of ``[label(s)..., path]``).

    Each image is decoded, passed through ``aug_list`` (default: ``CreateAugmenter(data_shape,
    **kwargs)``) and transposed to (C, H, W); batches hold ``batch_size`` images of
    ``data_shape`` and float32 labels ((N,) or (N, label_width)).  ``last_batch_handle``: 'pad'
    (fill the last batch from the start, ``pad`` says how many), 'discard', or 'roll_over'
    (carry the remainder into the next epoch)."""

    def __init__(self, batch_size: int, data_shape: tuple, label_width: int = 1, path_imgrec: str | None = None,
                 path_imglist: str | None = None, path_root: str | None = None, path_imgidx: str | None = None,
                 shuffle: bool = False, part_index: int = 0, num_parts: int = 1, aug_list: list | None = None,
                 imglist: list | None = None, data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32", last_batch_handle: str = "pad", **kwargs: Any) -> None:
        super().__init__()
        name = type(self).__name__
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ImageArgumentError(f"{name}: give path_imgrec, path_imglist or an imglist list")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise ImageArgumentError(f"{name}: label dtype {dtype!r} is not supported; expected int32, "
                                     "float32, int64 or float64")
        if last_batch_handle not in _LAST_BATCH_MODES:
            raise ValueError(f"{name}: last_batch_handle must be one of {_LAST_BATCH_MODES}, "
                             f"got {last_batch_handle!r}")
        if not 0 <= part_index < num_parts:
            raise ImageArgumentError(f"{name}: part_index={part_index} must be in [0, num_parts={num_parts})")
        self.imgrec, self.imgidx = self._open_record(path_imgrec, path_imgidx)
        self.imglist, keys = self._load_list(path_imglist, imglist, dtype)
        self.check_data_shape(data_shape)
        data_shape = tuple(data_shape)
        self.provide_data = [(data_name, (batch_size, *data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [(label_name, label_shape)]
        self.path_root, self.batch_size, self.data_shape = path_root, batch_size, data_shape
        self.label_width, self.shuffle = label_width, shuffle
        if self.imgrec is None:
            self.seq = keys
        elif path_imgidx or shuffle or num_parts > 1:
            if self.imgidx is None:
                raise ImageArgumentError(f"{name}: shuffle and num_parts > 1 need path_imgidx "
                                         "(an indexed RecordIO file)")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            per_part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * per_part:(part_index + 1) * per_part]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = None if self.seq is None else len(self.seq)
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None
        self.reset()

    # ------------------------------------------------------------------ sources

    def _open_record(self, path_imgrec: str | None, path_imgidx: str | None) -> tuple[Any, list | None]:
        if not path_imgrec:
            return None, None
        from .. import recordio
        logging.info("%s: loading recordio %s...", type(self).__name__, path_imgrec)
        if path_imgidx:
            record = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
            return record, list(record.keys)
        return recordio.MXRecordIO(path_imgrec, "r"), None

    def _load_list(self, path_imglist: str | None, imglist: list | None, dtype: str) -> tuple[dict | None, list]:
        make = _mx_np.array if _config.is_np_array() else _legacy.array
        entries: dict = {}
        keys: list = []
        if path_imglist:
            logging.info("%s: loading image list %s...", type(self).__name__, path_imglist)
            with open(path_imglist, encoding="utf-8") as fin:
                for lineno, line in enumerate(fin, 1):
                    if not line.strip():
                        continue
                    fields = line.strip().split("\t")
                    if len(fields) < 3:
                        raise ValueError(f"{type(self).__name__}: line {lineno} of {path_imglist!r} needs "
                                         f"'index<TAB>label(s)<TAB>path', got {line.strip()!r}")
                    key = int(fields[0])
                    entries[key] = (make(onp.asarray(fields[1:-1], dtype=onp.float64), dtype=dtype), fields[-1])
                    keys.append(key)
            return entries, keys
        if isinstance(imglist, list):
            logging.info("%s: loading image list...", type(self).__name__)
            for number, item in enumerate(imglist, 1):
                if len(item) > 2:
                    label = item[:-1]
                elif isinstance(item[0], numbers.Number):
                    label = [item[0]]
                else:
                    label = item[0]
                key = str(number)
                entries[key] = (make(to_host(label, onp.float64), dtype=dtype), item[-1])
                keys.append(key)
            return entries, keys
        return None, keys

    # ------------------------------------------------------------------ epoch control

    def reset(self) -> None:
        """Start a new epoch (reshuffling when ``shuffle``); with 'roll_over', a pending partial
        batch is kept for the next ``next()``."""
        self._shuffle_epoch()
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            self._rewind()

    def hard_reset(self) -> None:
        """Start a new epoch and drop any rolled-over partial batch."""
        self._shuffle_epoch()
        self._rewind()
        self._cache_data = self._cache_label = self._cache_idx = None

    def _shuffle_epoch(self) -> None:
        if self.shuffle and self.seq is not None:
            random.shuffle(self.seq)

    def _rewind(self) -> None:
        record_io = self.imgrec
        if record_io is not None:
            record_io.reset()
        self.cur = 0
        self._allow_read = True

    # ------------------------------------------------------------------ reading

    def next_sample(self) -> tuple[Any, Any]:
        """(label, encoded image bytes) of the next image; StopIteration at the end of the epoch."""
        from .. import recordio
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            record = self.imgrec.read()
            if record is None:
                if self.last_batch_handle != "discard":
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(record)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        record_io = self.imgrec
        if record_io is None:
            label, path = self.imglist[idx]
            return label, self.read_image(path)
        header, img = recordio.unpack(record_io.read_idx(idx))
        return (header.label if self.imglist is None else self.imglist[idx][0]), img

    def read_image(self, fname: str) -> bytes:
        """The bytes of image file ``fname`` (under ``path_root`` when given)."""
        path = os.path.join(self.path_root, fname) if self.path_root is not None else fname
        with open(path, "rb") as fin:
            return fin.read()

    def _locate(self) -> str:
        if self.num_image:
            position = (self.cur % self.num_image) - 1
            idx = self.seq[position] if self.seq is not None else position
        else:
            idx = self.cur - 1
        if self.imglist is not None and idx in self.imglist:
            return f"Broken image filename: {self.imglist[idx][1]}"
        return f"Broken image index: {idx}"

    def imdecode(self, s: Any) -> Any:
        """Decode one image; a RuntimeError naming the image if it is broken."""
        try:
            return imdecode(s)
        except Exception as err:
            raise RuntimeError(f"{self._locate()}, {err}") from None

    def check_data_shape(self, data_shape: tuple) -> None:
        """``data_shape`` must be (3, H, W)."""
        if len(data_shape) != 3:
            raise ValueError(f"{type(self).__name__}: data_shape should have length 3 (C, H, W), got {data_shape}")
        if data_shape[0] != 3:
            raise ValueError(f"{type(self).__name__}: expects 3-channel inputs, got data_shape {data_shape}")

    def check_valid_image(self, data: Any) -> None:
        """Raise RuntimeError when ``data[0]`` has no shape (``data`` is a list, or an image that
        is not at least 2-D).  Indexing an array here would compile a slice per image shape."""
        first_ndim = len(data[0].shape) if isinstance(data, (list, tuple)) else len(data.shape) - 1
        if first_ndim <= 0:
            raise RuntimeError("Data shape is wrong")

    def augmentation_transform(self, data: Any) -> Any:
        """Apply the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum: Any) -> Any:
        """(H, W, C) -> (C, H, W)."""
        return datum.transpose((2, 0, 1))

    # ------------------------------------------------------------------ batching

    def _store_label(self, labels: onp.ndarray, i: int, label: Any) -> None:
        values = to_host(label)
        if values.size != int(onp.prod(labels.shape[1:], dtype=onp.int64)):
            raise ValueError(f"{type(self).__name__}: a label of {values.size} values does not fit "
                             f"label_width={self.label_width}")
        labels[i] = values.reshape(labels.shape[1:])

    def _batchify(self, batch_data: onp.ndarray, batch_label: onp.ndarray, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                label, raw = self.next_sample()
                img = self.imdecode(raw)
                try:
                    self.check_valid_image(img)
                except RuntimeError as err:
                    logging.debug("Invalid image, skipping: %s", err)
                    continue
                img = self.augmentation_transform(img)
                batch_data[i] = to_host(self.postprocess_data(img))
                self._store_label(batch_label, i, label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_buffers(self) -> tuple[onp.ndarray, onp.ndarray]:
        return (onp.zeros((self.batch_size,) + tuple(self.data_shape), onp.float32),
                onp.zeros(self.provide_label[0][1], onp.float32))

    def next(self) -> DataBatch:
        """The next batch; StopIteration at the end of the epoch."""
        if self._cache_data is None:
            batch_data, batch_label = self._new_buffers()
            i = self._batchify(batch_data, batch_label, 0)
        else:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([wrap_batch(batch_data)], [wrap_batch(batch_label)], pad=pad)
