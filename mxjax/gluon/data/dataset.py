"""Datasets: indexable collections of samples, plus lazy views (transform, filter, shard, take).

A view keeps a reference to its source and maps indices; nothing is copied unless asked
(``transform(..., lazy=False)``). ``RecordFileDataset`` reads one record per index from an indexed
RecordIO file and reopens the file in a new process, so it can be sent to DataLoader workers.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from ._errors import require
from .sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ['Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset']


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` and ``__len__``.

    MXNet and NumPy arrays can be used directly wherever a dataset is expected.
    """

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def filter(self, fn: Callable[[Any], bool]) -> 'Dataset':
        """A view holding only the samples for which ``fn(sample)`` is true (scanned now)."""
        return _IndexedView(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> 'Dataset':
        """Part ``index`` of ``num_shards`` contiguous parts; the first ``len % num_shards`` parts
        hold one extra sample. Shard before shuffling so workers see disjoint samples.
        """
        require(index < num_shards, f'Dataset.shard: Shard index of out bound: {index} out of {num_shards}')
        require(num_shards > 0, f'Dataset.shard: Number of shards must be greater than 0, got {num_shards}')
        require(index >= 0, f'Dataset.shard: Index must be non-negative, got {index}')
        base, extra = divmod(len(self), num_shards)
        begin = index * base + min(index, extra)
        size = base + (1 if index < extra else 0)
        return _IndexedView(self, SequentialSampler(size, begin))

    def take(self, count: int | None) -> 'Dataset':
        """A view of the first ``count`` samples (all of them when ``count`` is None or too big)."""
        total = len(self)
        if count is None or count > total:
            count = total
        if count < 0:
            raise ValueError(f'Dataset.take: count must be >= 0 or None, got {count}')
        return _IndexedView(self, SequentialSampler(count))

    def sample(self, sampler: Sampler) -> 'Dataset':
        """A view whose i-th sample is the one at the i-th index ``sampler`` yields (drawn now)."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f'Invalid sampler type: {type(sampler)}. '
                            'Expected gluon.data.Sampler instead.')
        return _IndexedView(self, sampler)

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> 'Dataset':
        """Samples passed through ``fn`` (a tuple sample is unpacked into arguments).

        ``lazy=False`` applies ``fn`` to every sample now and keeps the results; keep the default
        for random augmentations, which must be redrawn each epoch.
        """
        view = _LazyTransformDataset(self, fn)
        if lazy:
            return view
        return SimpleDataset(list(view))

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> 'Dataset':
        """Like ``transform`` but ``fn`` sees only the first field (e.g. the image of (image, label))."""
        return self.transform(_FirstFieldFn(fn), lazy)


class SimpleDataset(Dataset):
    """Wraps anything with ``len()`` and ``[]`` (a list, an array) as a Dataset."""

    def __init__(self, data: Any):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """Applies ``fn`` to each sample when it is read."""

    def __init__(self, data: Any, fn: Callable[..., Any]):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        sample = self._data[idx]
        return self._fn(*sample) if isinstance(sample, tuple) else self._fn(sample)


class _FirstFieldFn:
    """Applies ``fn`` to the first argument and passes the rest through (a class, so it pickles)."""

    def __init__(self, fn: Callable[[Any], Any]):
        self._fn = fn

    def __call__(self, first: Any, *rest: Any) -> Any:
        if not rest:
            return self._fn(first)
        return (self._fn(first),) + rest


class _IndexedView(Dataset):
    """The samples of ``dataset`` at the indices ``sampler`` yields (listed once, at construction)."""

    def __init__(self, dataset: Any, sampler: Any):
        self._source = dataset
        self._sampler = sampler
        self._positions = list(sampler)

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, idx: int) -> Any:
        return self._source[self._positions[idx]]


class ArrayDataset(Dataset):
    """Zips several equally long dataset-like objects: sample i is ``(a[i], b[i], ...)``.

    With a single argument sample i is ``a[i]`` itself. One-dimensional MXNet arrays are turned
    into NumPy arrays first, so their elements come back as NumPy scalars (as in MXNet).
    """

    def __init__(self, *args: Any):
        require(len(args) > 0, 'ArrayDataset: Needs at least 1 arrays')
        self._size = len(args[0])
        self._data = []
        from ...ndarray import NDArray
        for pos, data in enumerate(args):
            require(len(data) == self._size,
                    'ArrayDataset: All arrays must have the same length; array[0] has length '
                    f'{self._size} while array[{pos}] has {len(data)}.')
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(column[idx] for column in self._data)

    def __len__(self) -> int:
        return self._size


class RecordFileDataset(Dataset):
    """The raw records (bytes) of an indexed RecordIO file; the index is ``<name>.idx`` next to it.

    The reader is reopened after pickling and after ``fork``, so each worker has its own file
    position instead of sharing one.
    """

    def __init__(self, filename: str):
        self.idx_file = os.path.splitext(filename)[0] + '.idx'
        self.filename = filename
        self._open()

    def _open(self) -> None:
        from ... import recordio
        for path in (self.filename, self.idx_file):
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"RecordFileDataset: {path!r} does not exist (the record file "
                    f"{self.filename!r} needs its index {self.idx_file!r} beside it)")
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, 'r')
        self._pid = os.getpid()

    def _reader(self) -> Any:
        if self._pid != os.getpid():
            self._open()
        return self._record

    def __getitem__(self, idx: int) -> bytes:
        reader = self._reader()
        return reader.read_idx(reader.keys[idx])

    def __len__(self) -> int:
        return len(self._reader().keys)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop('_record', None)
        state.pop('_pid', None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._open()
