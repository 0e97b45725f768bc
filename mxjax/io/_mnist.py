"""``MNISTIter``: batches from MNIST's idx-ubyte image and label files, held in memory.

Like MXNet's iterator it scales pixels by 1/256, keeps only full batches (no padding), shuffles
once at construction when asked, and gives part ``part_index`` of ``num_parts`` the contiguous
slice ``[n * part_index // num_parts, n * (part_index + 1) // num_parts)`` of the examples.
"""
from __future__ import annotations

import logging
import os
import struct
from typing import Any

import numpy as onp

from ..base import MXNetError
from ._native import MXDataIter, NativeBatch, check_batch_size, check_dtype, warn_unknown

__all__ = ["MNISTIter", "read_idx_ubyte"]

_IMAGE_MAGIC, _LABEL_MAGIC = 2051, 2049


def read_idx_ubyte(path: str, where: str = "MNISTIter") -> onp.ndarray:
    """The uint8 array stored in an idx1/idx3-ubyte file (MNIST's format: big-endian header)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}: MNIST file {path!r} does not exist")
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise MXNetError(f"{where}: {path!r} is too short to be an idx-ubyte file ({len(raw)} bytes)")
    magic, count = struct.unpack(">ii", raw[:8])
    if magic == _IMAGE_MAGIC:
        if len(raw) < 16:
            raise MXNetError(f"{where}: {path!r} has a truncated idx3 header")
        rows, cols = struct.unpack(">ii", raw[8:16])
        shape, offset = (count, rows, cols), 16
    elif magic == _LABEL_MAGIC:
        shape, offset = (count,), 8
    else:
        raise MXNetError(f"{where}: {path!r} is not an MNIST idx-ubyte file (magic number {magic}, expected "
                         f"{_IMAGE_MAGIC} for images or {_LABEL_MAGIC} for labels)")
    need = int(onp.prod(shape))
    if len(raw) - offset < need:
        raise MXNetError(f"{where}: {path!r} is truncated: the header promises {need} bytes of data, "
                         f"the file has {len(raw) - offset}")
    return onp.frombuffer(raw, onp.uint8, need, offset).reshape(shape)


class MNISTIter(MXDataIter):
    """Batches of MNIST images ``(batch, 1, rows, cols)`` (``(batch, rows*cols)`` when ``flat``) and labels.

    Pixels are float32 in [0, 1) (value / 256, as MXNet).  ``shuffle`` (default True) permutes
    the examples once with ``seed``; the last incomplete batch is dropped.
    """

    def __init__(self, image: str = "./train-images-idx3-ubyte", label: str = "./train-labels-idx1-ubyte",
                 batch_size: int = 128, shuffle: bool = True, flat: bool = False, seed: int = 0,
                 silent: bool = False, num_parts: int = 1, part_index: int = 0, prefetch_buffer: int = 4,
                 ctx: str = "gpu", device_id: int = -1, dtype: Any = None, data_name: str = "data",
                 label_name: str = "softmax_label", **kwargs: Any) -> None:
        super().__init__(data_name, label_name, prefetch_buffer, **kwargs)
        where = "MNISTIter"
        kwargs.pop("input_shape", None)  # passed by MXNet's own helpers; MXNet ignores it too
        warn_unknown(where, kwargs)
        self._size = check_batch_size(where, batch_size)
        if num_parts < 1 or not 0 <= part_index < num_parts:
            raise MXNetError(f"{where}: part_index={part_index} must lie in [0, num_parts={num_parts})")
        out_dtype = check_dtype(where, dtype) or onp.float32
        images = read_idx_ubyte(image, where)
        labels = read_idx_ubyte(label, where)
        if images.ndim != 3:
            raise MXNetError(f"{where}: image file {image!r} holds labels (idx1), not images (idx3)")
        if labels.ndim != 1:
            raise MXNetError(f"{where}: label file {label!r} holds images (idx3), not labels (idx1)")
        if len(labels) < len(images):
            raise MXNetError(f"{where}: label file {label!r} has {len(labels)} labels for {len(images)} images "
                             f"in {image!r}")
        total = len(images)
        lo, hi = total * part_index // num_parts, total * (part_index + 1) // num_parts
        order = onp.arange(lo, hi)
        if shuffle:
            # MXNet shuffles with its own C++ generator; the permutation here differs but is
            # equally fixed by ``seed``.
            order = onp.random.RandomState(seed).permutation(order)
        rows, cols = images.shape[1:]
        pixels = images[order].astype(onp.float32) / onp.float32(256.0)
        self._images = pixels.reshape(len(order), rows * cols) if flat else pixels.reshape(len(order), 1, rows, cols)
        self._images = self._images.astype(out_dtype)
        self._labels = labels[order].astype(out_dtype)
        self._index = order.astype(onp.uint64)
        self._loc = 0
        if not silent:
            logging.info("MNISTIter: load %d images, shuffle=%d, shape=%s", len(order), int(bool(shuffle)),
                         (self._size,) + self._images.shape[1:])
        if len(order) < self._size:
            raise MXNetError(f"{where}: part {part_index} of {num_parts} holds {len(order)} images, fewer than "
                             f"batch_size={self._size}; no full batch can be formed")
        self._start()

    def _produce(self) -> NativeBatch | None:
        lo, hi = self._loc, self._loc + self._size
        if hi > len(self._labels):
            return None
        self._loc = hi
        return NativeBatch(self._images[lo:hi], self._labels[lo:hi], 0, self._index[lo:hi])

    def _rewind(self) -> None:
        self._loc = 0
