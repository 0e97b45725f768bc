"""Image datasets: MNIST, Fashion-MNIST, CIFAR-10/100 from their files, and images from a
RecordIO file, a folder tree or a list.

The benchmark datasets read the files MXNet keeps under ``$MXNET_HOME/datasets/<name>``. Nothing
is ever downloaded: a missing file raises ``FileNotFoundError`` naming the file, the folder to put
it in and where to get it. A CIFAR ``*.tar.gz`` archive found in the folder is unpacked.
"""
from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings
from typing import Any, Callable

import numpy as onp

from .... import base, recordio
from .... import ndarray as _nd
from .... import numpy as _mxnp
from ....base import MXNetError
from ....util import is_np_array
from .. import dataset
from .._errors import require

__all__ = ['MNIST', 'FashionMNIST', 'CIFAR10', 'CIFAR100',
           'ImageRecordDataset', 'ImageFolderDataset', 'ImageListDataset']

_DEPRECATED_TRANSFORM = ('Directly apply transform to dataset is deprecated. '
                         'Please use dataset.transform() or dataset.transform_first() instead...')


def _reject_transform(transform: Any) -> None:
    # MXNet raises (not warns) DeprecationWarning for the old ``transform`` argument.
    if transform is not None:
        raise DeprecationWarning(_DEPRECATED_TRANSFORM)


def _mirror_url(namespace: str, filename: str) -> str:
    repo = os.environ.get('MXNET_GLUON_REPO', 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/')
    if not repo.endswith('/'):
        repo += '/'
    return f'{repo}gluon/dataset/{namespace}/{filename}'


def _image_module() -> Any:
    from .... import image
    return image


class _FileDataset(dataset.Dataset):
    """An in-memory (images, labels) dataset filled from files under ``root`` by ``_load``.

    The pixels and labels stay in host NumPy arrays and each sample is wrapped on access; the
    array kind (mx.np or mx.nd with NumPy labels) is the one active at construction, as in MXNet.
    Wrapping a host slice is much cheaper here than indexing one big device array per sample.
    """

    def __init__(self, root: str, transform: Callable | None):
        _reject_transform(transform)
        self._transform = transform
        self._root = os.path.expanduser(root)
        self._np_mode = is_np_array()
        self._images, self._labels = self._load()

    def _load(self) -> tuple[onp.ndarray, onp.ndarray]:
        raise NotImplementedError

    def __getitem__(self, idx: Any) -> tuple[Any, Any]:
        image, label = self._images[idx], self._labels[idx]
        if self._np_mode:
            return (_mxnp.array(image, dtype=image.dtype),
                    _mxnp.array(label, dtype=self._labels.dtype))
        return _nd.array(image, dtype=image.dtype), label

    def __len__(self) -> int:
        return len(self._labels)

    def _missing(self, filename: str, how: str) -> FileNotFoundError:
        return FileNotFoundError(
            f"{type(self).__name__}: {os.path.join(self._root, filename)!r} not found. mxjax does not "
            f"download datasets: {how} (or pass root=<folder that has it>).")


def _read_maybe_gzipped(path: str) -> bytes:
    if path.endswith('.gz') and not os.path.isfile(path) and os.path.isfile(path[:-3]):
        path = path[:-3]
    if path.endswith('.gz'):
        with gzip.open(path, 'rb') as fin:
            return fin.read()
    with open(path, 'rb') as fin:
        return fin.read()


def _parse_idx(raw: bytes, path: str, magic: int) -> tuple[tuple[int, ...], onp.ndarray]:
    """An IDX file's dimensions and its uint8 payload, checked against the header."""
    ndim = magic & 0xFF
    head = 4 + 4 * ndim
    if len(raw) < head or struct.unpack('>I', raw[:4])[0] != magic:
        raise ValueError(f'MNIST: {path!r} is not an IDX file with magic number {magic}')
    dims = struct.unpack(f'>{ndim}I', raw[4:head])
    payload = onp.frombuffer(raw, dtype=onp.uint8, offset=head)
    expected = int(onp.prod(dims))
    if payload.size != expected:
        raise ValueError(f'MNIST: {path!r} holds {payload.size} bytes of data, its header '
                         f'{dims} promises {expected}')
    return dims, payload


class MNIST(_FileDataset):
    """The MNIST digits: (image, label) with a (28, 28, 1) uint8 image and an int32 label.

    Reads ``train-images-idx3-ubyte.gz`` / ``train-labels-idx1-ubyte.gz`` (or the ``t10k-*``
    pair when ``train=False``) from ``root``; the ``transform`` argument is deprecated.
    """

    _namespace = 'mnist'
    _source = 'http://yann.lecun.com/exdb/mnist/'

    def __init__(self, root: str = os.path.join(base.data_dir(), 'datasets', 'mnist'),
                 train: bool = True, transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _load(self) -> tuple[onp.ndarray, onp.ndarray]:
        prefix = 'train' if self._train else 't10k'
        images_name = f'{prefix}-images-idx3-ubyte.gz'
        labels_name = f'{prefix}-labels-idx1-ubyte.gz'
        paths = []
        for name in (images_name, labels_name):
            path = os.path.join(self._root, name)
            if not (os.path.isfile(path) or os.path.isfile(path[:-3])):
                raise self._missing(name, f'get {name} from {_mirror_url(self._namespace, name)} '
                                          f'(or {self._source}) and put it in {self._root!r}')
            paths.append(path)
        (count,), labels = _parse_idx(_read_maybe_gzipped(paths[1]), paths[1], 0x0801)
        dims, pixels = _parse_idx(_read_maybe_gzipped(paths[0]), paths[0], 0x0803)
        if dims[0] != count:
            raise ValueError(f'{type(self).__name__}: {paths[0]!r} has {dims[0]} images but '
                             f'{paths[1]!r} has {count} labels')
        return pixels.reshape(count, dims[1], dims[2], 1), labels.astype(onp.int32)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, a drop-in for MNIST with the same files and sample layout."""

    _namespace = 'fashion-mnist'
    _source = 'https://github.com/zalandoresearch/fashion-mnist'

    def __init__(self, root: str = os.path.join(base.data_dir(), 'datasets', 'fashion-mnist'),
                 train: bool = True, transform: Callable | None = None):
        super().__init__(root, train, transform)


class CIFAR10(_FileDataset):
    """CIFAR-10: (image, label) with a (32, 32, 3) uint8 HWC image and an int32 label.

    Reads the binary version's ``data_batch_1.bin`` ... ``data_batch_5.bin`` (or ``test_batch.bin``
    when ``train=False``) from ``root`` or ``root/cifar-10-batches-bin``.
    """

    _archive = 'cifar-10-binary.tar.gz'
    _subdir = 'cifar-10-batches-bin'
    _namespace = 'cifar10'
    _label_bytes = 1
    _train_files = tuple(f'data_batch_{i}.bin' for i in range(1, 6))
    _test_files = ('test_batch.bin',)

    def __init__(self, root: str = os.path.join(base.data_dir(), 'datasets', 'cifar10'),
                 train: bool = True, transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self) -> int:
        return 0

    def _find(self, name: str) -> str | None:
        for folder in (self._root, os.path.join(self._root, self._subdir)):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return path
        return None

    def _unpack_archive(self) -> None:
        archive = os.path.join(self._root, self._archive)
        if not os.path.isfile(archive):
            return
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, 'data_filter'):
                tar.extractall(self._root, filter='data')
            else:  # Python without extraction filters: refuse members that would leave root
                root = os.path.realpath(self._root)
                for member in tar.getmembers():
                    target = os.path.realpath(os.path.join(root, member.name))
                    if os.path.commonpath([root, target]) != root:
                        raise ValueError(f'{type(self).__name__}: unsafe path {member.name!r} in {archive!r}')
                tar.extractall(self._root)

    def _read_file(self, path: str) -> tuple[onp.ndarray, onp.ndarray]:
        with open(path, 'rb') as fin:
            raw = onp.frombuffer(fin.read(), dtype=onp.uint8)
        width = self._label_bytes + 3072
        if raw.size % width:
            raise ValueError(f'{type(self).__name__}: {path!r} has {raw.size} bytes, not a multiple '
                             f'of the {width}-byte record size')
        rows = raw.reshape(-1, width)
        images = rows[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, rows[:, self._label_column()].astype(onp.int32)

    def _load(self) -> tuple[onp.ndarray, onp.ndarray]:
        names = self._train_files if self._train else self._test_files
        if any(self._find(name) is None for name in names):
            self._unpack_archive()
        paths = []
        for name in names:
            path = self._find(name)
            if path is None:
                raise self._missing(name, (
                    f'put {self._archive} (from {_mirror_url(self._namespace, self._archive)}, or the '
                    'binary version from https://www.cs.toronto.edu/~kriz/cifar.html) or the '
                    f'{name} it holds in {self._root!r}'))
            paths.append(path)
        parts = [self._read_file(path) for path in paths]
        return onp.concatenate([p[0] for p in parts]), onp.concatenate([p[1] for p in parts])


class CIFAR100(CIFAR10):
    """CIFAR-100: like CIFAR10; the label is the fine class (0-99) when ``fine_label`` is true,
    else the coarse super-class (0-19). Reads ``train.bin`` / ``test.bin``.
    """

    _archive = 'cifar-100-binary.tar.gz'
    _subdir = 'cifar-100-binary'
    _namespace = 'cifar100'
    _label_bytes = 2
    _train_files = ('train.bin',)
    _test_files = ('test.bin',)

    def __init__(self, root: str = os.path.join(base.data_dir(), 'datasets', 'cifar100'),
                 fine_label: bool = False, train: bool = True, transform: Callable | None = None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self) -> int:
        return 1 if self._fine_label else 0


class ImageRecordDataset(dataset.RecordFileDataset):
    """(image, label) pairs from a RecordIO file of packed images (``recordio.pack_img``).

    ``flag=1`` decodes to 3-channel RGB, ``flag=0`` to 1-channel grayscale. The label is the
    record header's: a float, or a NumPy array for multi-value labels.
    """

    def __init__(self, filename: str, flag: int = 1, transform: Callable | None = None):
        _reject_transform(transform)
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        header, payload = recordio.unpack(super().__getitem__(idx))
        try:
            return _image_module().imdecode(payload, self._flag), header.label
        except MXNetError as err:
            raise MXNetError(f"ImageRecordDataset: record {idx} of {self.filename!r} holds no readable image: "
                             f"{err}") from None


class ImageFolderDataset(dataset.Dataset):
    """Images stored as ``root/<class name>/<image file>``: (image, label) pairs.

    Class folders are taken in sorted order and numbered from 0 (``synsets[label]`` is the folder
    name); ``items`` lists every (path, label). Only .jpg, .jpeg and .png files are read; other
    entries are skipped with a warning.
    """

    def __init__(self, root: str, flag: int = 1, transform: Callable | None = None):
        _reject_transform(transform)
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = ['.jpg', '.jpeg', '.png']
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f'ImageFolderDataset: root {self._root!r} is not a directory')
        self._list_images(self._root)

    def _list_images(self, root: str) -> None:
        self.synsets: list[str] = []
        self.items: list[tuple[str, int]] = []
        for folder in sorted(os.listdir(root)):
            folder_path = os.path.join(root, folder)
            if not os.path.isdir(folder_path):
                warnings.warn(f'Ignoring {folder_path}, which is not a directory.', stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(folder_path)):
                path = os.path.join(folder_path, name)
                ext = os.path.splitext(path)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {path} of type {ext}. Only support {', '.join(self._exts)}",
                                  stacklevel=3)
                    continue
                self.items.append((path, label))

    def __getitem__(self, idx: int) -> tuple[Any, int]:
        path, label = self.items[idx]
        return _image_module().imread(path, self._flag), label

    def __len__(self) -> int:
        return len(self.items)


class ImageListDataset(dataset.Dataset):
    """Images named by a list: (image, label array) pairs.

    ``imglist`` is either a ``.lst`` file under ``root`` (tab-separated lines
    ``index<TAB>label...<TAB>path``) or a Python list of entries ``[label..., path]`` where a
    single label may itself be a list. Labels come back as float32 arrays; paths are relative to
    ``root``.
    """

    def __init__(self, root: str = '.', imglist: Any = None, flag: int = 1):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._imglist: dict = {}
        self._imgkeys: list = []
        if isinstance(imglist, str):
            self._read_list_file(os.path.join(self._root, imglist))
        elif isinstance(imglist, list):
            self._read_entries(imglist)
        else:
            raise ValueError(
                f'imglist must be filename or list of valid entries, given {type(imglist)}')

    def _label(self, values: Any) -> Any:
        values = onp.asarray(values, dtype=onp.float32)
        return _mxnp.array(values) if is_np_array() else _nd.array(values)

    def _read_list_file(self, fname: str) -> None:
        with open(fname, 'rt') as fin:
            for lineno, line in enumerate(fin, 1):
                if not line.strip():
                    continue  # MXNet fails on a blank line (often the last one); skip it
                fields = line.strip().split('\t')
                if len(fields) < 2:
                    raise ValueError(f'ImageListDataset: line {lineno} of {fname!r} needs '
                                     f'index<TAB>label...<TAB>path, got {line.strip()!r}')
                key = int(fields[0])
                label = self._label([float(v) for v in fields[1:-1]])
                self._imglist[key] = (label, os.path.join(self._root, fields[-1]))
                self._imgkeys.append(key)

    def _read_entries(self, entries: list) -> None:
        for number, entry in enumerate(entries, 1):
            path = entry[-1]
            require(isinstance(path, str),
                    f'ImageListDataset: the last field of entry {number - 1} must be the image '
                    f'path (a str), got {type(path).__name__}')
            if len(entry) > 2:
                label = self._label(entry[:-1])
            elif isinstance(entry[0], (int, float, onp.number)):
                label = self._label([entry[0]])
            else:
                label = self._label(entry[0])
            key = str(number)
            self._imglist[key] = (label, os.path.join(self._root, path))
            self._imgkeys.append(key)

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        label, path = self._imglist[self._imgkeys[idx]]
        return _image_module().imread(path, self._flag), label

    def __len__(self) -> int:
        return len(self._imgkeys)
