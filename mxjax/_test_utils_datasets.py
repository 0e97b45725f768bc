"""Data sets and iterators for ``mx.test_utils`` (re-exported there): MNIST, CIFAR-10 and bz2 files,
``DummyIter`` and the ``im2rec.py`` path.

MXNet downloads these data sets; mxjax never touches the network here.  Each helper reads the
files from the place MXNet would download them to and says which file is missing otherwise.
Kept apart because only this part of ``test_utils`` reads files and builds ``mx.io`` iterators.
"""
from __future__ import annotations

import bz2 as _bz2
import gzip as _gzip
import os
import struct as _struct
import zipfile as _zipfile
from typing import Any

import numpy as onp

from .io import MNISTIter as _MNISTIter
from .io._base import DataIter as _DataIter

__all__ = ["DummyIter", "get_mnist", "get_mnist_ubyte", "get_mnist_iterator", "get_cifar10", "get_bz2_data",
           "get_im2rec_path"]

_MNIST_FILES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte"]
_CIFAR10_ZIP = "cifar10-b9ac2870.zip"


def _need_local(func: str, fname: str, what: str) -> None:
    if not os.path.isfile(fname):
        where = os.path.dirname(fname) or "."
        raise FileNotFoundError(f"{func}: {what} {os.path.basename(fname)!r} is not in {where!r} "
                                f"({os.path.abspath(fname)}); mxjax does not download data sets, so place the "
                                "file there first")


def get_mnist(path: str = "data") -> dict:
    """MNIST as NumPy arrays, read from the gzip files MXNet would download into ``path``.

    Returns ``train_data``/``test_data`` (float32, ``(N, 1, 28, 28)``, pixels / 255) and
    ``train_label``/``test_label`` (int8).
    """
    def load(label_name: str, image_name: str) -> tuple:
        label_file, image_file = os.path.join(path, label_name), os.path.join(path, image_name)
        _need_local("get_mnist", label_file, "MNIST file")
        _need_local("get_mnist", image_file, "MNIST file")
        with _gzip.open(label_file) as f:
            f.read(8)
            label = onp.frombuffer(f.read(), dtype=onp.int8)
        with _gzip.open(image_file) as f:
            _, _, rows, cols = _struct.unpack(">IIII", f.read(16))
            image = onp.frombuffer(f.read(), dtype=onp.uint8)
        image = image.reshape(len(label), 1, rows, cols).astype(onp.float32) / 255
        return label, image

    train_label, train_data = load("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz")
    test_label, test_data = load("t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")
    return {"train_data": train_data, "train_label": train_label, "test_data": test_data, "test_label": test_label}


def get_mnist_ubyte(path: str = "data") -> None:
    """Make sure the four raw MNIST idx-ubyte files are in ``path``, unpacking them from the
    ``.gz`` files there when needed (nothing is downloaded)."""
    os.makedirs(path, exist_ok=True)
    targets = [os.path.join(path, f) for f in _MNIST_FILES]
    if all(os.path.exists(t) for t in targets):
        return
    for target in targets:
        _need_local("get_mnist_ubyte", target + ".gz", "MNIST archive")
    for target in targets:
        with _gzip.open(target + ".gz") as src, open(target, "wb") as dst:
            dst.write(src.read())


def get_cifar10(path: str = "data") -> None:
    """Make sure ``path/cifar`` holds CIFAR-10's train/test ``.rec`` and ``.lst`` files, extracting
    them from MXNet's ``cifar10-b9ac2870.zip`` in ``path`` when needed (nothing is downloaded)."""
    os.makedirs(path, exist_ok=True)
    wanted = [os.path.join(path, "cifar", f) for f in ("train.rec", "test.rec", "train.lst", "test.lst")]
    if all(os.path.exists(f) for f in wanted):
        return
    archive = os.path.join(path, _CIFAR10_ZIP)
    _need_local("get_cifar10", archive, "CIFAR-10 archive")
    with _zipfile.ZipFile(archive) as zf:
        zf.extractall(path)
    missing = [f for f in wanted if not os.path.exists(f)]
    if missing:
        raise FileNotFoundError(f"get_cifar10: {archive!r} did not contain {missing}")


def get_mnist_iterator(batch_size: int, input_shape: tuple, num_parts: int = 1, part_index: int = 0,
                       path: str = "data") -> tuple:
    """``(train, validation)`` ``MNISTIter`` pair over the MNIST files in ``path``; flat images
    unless ``input_shape`` has three dimensions."""
    get_mnist_ubyte(path)
    flat = len(input_shape) != 3
    train = _MNISTIter(image=os.path.join(path, "train-images-idx3-ubyte"),
                       label=os.path.join(path, "train-labels-idx1-ubyte"), batch_size=batch_size,
                       shuffle=True, flat=flat, num_parts=num_parts, part_index=part_index)
    val = _MNISTIter(image=os.path.join(path, "t10k-images-idx3-ubyte"),
                     label=os.path.join(path, "t10k-labels-idx1-ubyte"), batch_size=batch_size,
                     flat=flat, num_parts=num_parts, part_index=part_index)
    return train, val


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """Decompress ``data_dir/data_origin_name`` (a .bz2 file) into ``data_dir/data_name`` unless the
    latter exists; the archive is removed afterwards, as MXNet does.  ``url`` is only named in
    the error when the archive is absent (nothing is downloaded)."""
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.isfile(archive):
        raise FileNotFoundError(f"get_bz2_data: neither {target!r} nor the archive {archive!r} exists; mxjax does "
                                f"not download {url}, so place the archive there first")
    with _bz2.BZ2File(archive, "rb") as src, open(target, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
    os.remove(archive)


class DummyIter(_DataIter):
    """Repeats the first batch of ``real_iter`` forever (for timing a model without data loading)."""

    def __init__(self, real_iter: Any) -> None:
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self) -> "DummyIter":
        return self

    def next(self) -> Any:
        """The stored batch (never raises ``StopIteration``)."""
        return self.the_batch


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """Path of the ``im2rec.py`` tool: under ``$MXNET_HOME/tools`` (or two levels above it) when that
    variable is set, else mxjax's own ``tools/im2rec.py``."""
    root = os.environ.get(home_env, os.path.dirname(os.path.abspath(__file__)))
    tried = [os.path.join(root, "tools", "im2rec.py"), os.path.join(root, "..", "..", "tools", "im2rec.py")]
    for candidate in tried:
        if os.path.isfile(candidate):
            return candidate
    raise IOError(f"get_im2rec_path: could not find tools/im2rec.py; looked at {tried}")
