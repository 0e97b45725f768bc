"""The digits: from scikit-learn into RecordIO files, and back through ``gluon.data``."""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as onp

import mxjax as mx
from mxjax import gluon
from mxjax.gluon.data.vision import transforms

from .options import INSTALL_HINT, DemoError

TEST_FRACTION = 0.2
SPLIT_SEED = 0  # the split stays fixed whatever --seed is, so accuracies compare across runs


class Split(NamedTuple):
    images: onp.ndarray  # (n, 8, 8) uint8, 0..255
    labels: onp.ndarray  # (n,) int64, 0..9


def load_digits() -> tuple[Split, Split]:
    """scikit-learn's bundled digits as (train, test), pixels scaled from 0..16 to 0..255."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise DemoError(f"the demo reads scikit-learn's digits, and scikit-learn is not installed: "
                        f"{INSTALL_HINT}") from None
    digits = sklearn_digits()
    images = onp.round(digits.images * (255.0 / 16.0)).astype(onp.uint8)
    labels = digits.target.astype(onp.int64)
    order = onp.random.RandomState(SPLIT_SEED).permutation(len(labels))
    n_test = int(round(len(labels) * TEST_FRACTION))
    test, train = order[:n_test], order[n_test:]
    return Split(images[train], labels[train]), Split(images[test], labels[test])


def write_records(split: Split, out_dir: str, name: str) -> tuple[str, str]:
    """Pack ``split`` as PNG records into ``<name>.rec`` with its index ``<name>.idx``."""
    rec, idx = os.path.join(out_dir, f"{name}.rec"), os.path.join(out_dir, f"{name}.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    try:
        for i, (image, label) in enumerate(zip(split.images, split.labels, strict=True)):
            header = mx.recordio.IRHeader(0, float(label), i, 0)
            writer.write_idx(i, mx.recordio.pack_img(header, image, img_fmt=".png"))
    finally:
        writer.close()
    return rec, idx


def pixel_stats(split: Split) -> tuple[float, float]:
    """Mean and standard deviation of ``split``'s pixels on ToTensor's [0, 1] scale."""
    pixels = split.images.astype(onp.float64) / 255.0
    return float(pixels.mean()), float(pixels.std())


def record_dataset(rec: str, mean: float, std: float) -> gluon.data.Dataset:
    """(image, label) pairs of a record file: a (1, 8, 8) float32 image normalized with
    ``mean`` and ``std``, and the label."""
    # flag=0 decodes to one gray channel (8, 8, 1); ToTensor makes it (1, 8, 8) in [0, 1]
    to_input = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    return gluon.data.vision.ImageRecordDataset(rec, flag=0).transform_first(to_input)


def loaders(train_rec: str, test_rec: str, batch_size: int,
            stats: tuple[float, float]) -> tuple[gluon.data.DataLoader, gluon.data.DataLoader]:
    """A shuffling, prefetching loader for training and a sequential one for testing; both
    normalize with the training images' ``stats`` (mean, std)."""
    # one worker thread decodes the next batches while the current one trains; 'rollover'
    # keeps every training batch the same shape, so the training step compiles once
    train = gluon.data.DataLoader(record_dataset(train_rec, *stats), batch_size=batch_size, shuffle=True,
                                  last_batch="rollover", num_workers=1, thread_pool=True, prefetch=4)
    test = gluon.data.DataLoader(record_dataset(test_rec, *stats), batch_size=batch_size, shuffle=False)
    return train, test
