"""``NDArrayIter``: batches over in-memory arrays, with MXNet's three last-batch policies.

The cursor is the start of the current batch.  'pad' fills the last batch from the start
of the data, 'discard' drops it, and 'roll_over' keeps the short tail and puts it in front
of the first batch of the next epoch (whose ``pad`` then reports the carried count).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as onp

from .. import ndarray as _nd
from .._ndarray import NDArray
from ._base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter"]

_POLICIES = ("pad", "discard", "roll_over")


def _named_arrays(source: Any, allow_empty: bool, default_name: str, what: str) -> list:
    """``(name, NDArray)`` pairs sorted by name from an array, a list or a dict of arrays."""
    if source is None:
        if not allow_empty:
            raise AssertionError(f"NDArrayIter: {what} must not be None")
        source = []
    if isinstance(source, (onp.ndarray, NDArray)):
        source = [source]
    if isinstance(source, (list, tuple)):
        if not source and not allow_empty:
            raise AssertionError(f"NDArrayIter: {what} must not be an empty list")
        if len(source) == 1:
            source = OrderedDict([(default_name, source[0])])
        else:
            source = OrderedDict((f"_{i}_{default_name}", arr) for i, arr in enumerate(source))
    if not isinstance(source, dict):
        raise TypeError(f"NDArrayIter: {what} must be an NDArray, a numpy.ndarray, a list of them or a dict "
                        f"with them as values, got {type(source).__name__}")
    pairs = []
    for name, arr in source.items():
        if not isinstance(arr, NDArray):
            try:
                # MXNet's nd.array makes float32 from anything that is not already an NDArray.
                arr = _nd.array(onp.asarray(arr), dtype=onp.float32)
            except Exception as err:
                raise TypeError(f"NDArrayIter: invalid type {type(arr).__name__} for {name!r}; expected an "
                                "NDArray or numpy.ndarray") from err
        if arr.ndim == 0:
            raise ValueError(f"NDArrayIter: {what} {name!r} is a scalar; it needs a leading batch axis")
        pairs.append((name, arr))
    return sorted(pairs, key=lambda pair: pair[0])


def _take(arr: NDArray, order: onp.ndarray) -> NDArray:
    """Rows ``order`` of ``arr``, keeping its array class and device."""
    return arr[order] if arr.shape[0] else arr


def _like(template: NDArray, arr: NDArray) -> NDArray:
    """``arr`` as the array class of ``template`` (legacy NDArray ops return legacy arrays)."""
    return arr if type(arr) is type(template) else arr.as_np_ndarray()


def _cat(first: list, second: list) -> list:
    if not first or not second:
        return first or second
    return [_like(a, _nd.concat(a, b, dim=0)) for a, b in zip(first, second)]


class NDArrayIter(DataIter):
    """Iterates over NDArrays / NumPy arrays (or lists / dicts of them) in batches.

    ``data`` and ``label`` given as one array are named ``data_name`` / ``label_name``; a list
    of arrays gets names ``_0_<name>``, ``_1_<name>``, ...; a dict gives its own names.  Arrays
    appear sorted by name.  ``shuffle`` permutes the examples (with ``numpy.random``) on every
    reset, the construction included.  ``last_batch_handle`` is 'pad', 'discard' or 'roll_over'.
    """

    def __init__(self, data: Any, label: Any = None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label") -> None:
        super().__init__(batch_size)
        if not isinstance(batch_size, (int, onp.integer)) or batch_size <= 0:
            raise ValueError(f"NDArrayIter: batch_size must be a positive integer, got {batch_size!r}")
        if last_batch_handle not in _POLICIES:
            raise ValueError(f"NDArrayIter: last_batch_handle must be one of {_POLICIES}, "
                             f"got {last_batch_handle!r}")
        self.data = _named_arrays(data, False, data_name, "data")
        self.label = _named_arrays(label, True, label_name, "label")
        num = self.data[0][1].shape[0]
        for name, arr in self.data + self.label:
            if arr.shape[0] != num:
                raise ValueError(f"NDArrayIter: {name!r} has {arr.shape[0]} examples (shape {arr.shape}) but "
                                 f"{self.data[0][0]!r} has {num}; all inputs need the same first dimension")
        self.idx = onp.arange(num)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.num_data = num
        self.cursor = -batch_size
        self._cache_data: list | None = None
        self._cache_label: list | None = None
        self.reset()
        self.data_list = [arr for _, arr in self.data] + [arr for _, arr in self.label]
        self.num_source = len(self.data_list)

    @property
    def provide_data(self) -> list:
        """``DataDesc`` of each data input, with the batch size as first dimension."""
        return [DataDesc(name, (self.batch_size,) + tuple(arr.shape[1:]), arr.dtype) for name, arr in self.data]

    @property
    def provide_label(self) -> list:
        """``DataDesc`` of each label input, with the batch size as first dimension."""
        return [DataDesc(name, (self.batch_size,) + tuple(arr.shape[1:]), arr.dtype) for name, arr in self.label]

    def _permute(self) -> None:
        # The permutation composes with the previous one, as MXNet's does.
        onp.random.shuffle(self.idx)
        self.data = [(name, _take(arr, self.idx)) for name, arr in self.data]
        self.label = [(name, _take(arr, self.idx)) for name, arr in self.label]

    def hard_reset(self) -> None:
        """Rewind to the start, dropping any rolled-over tail."""
        if self.shuffle:
            self._permute()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self) -> None:
        """Rewind; with 'roll_over' a short last batch is carried into the next epoch."""
        if self.shuffle:
            self._permute()
        tail_pending = self.num_data - self.batch_size < self.cursor < self.num_data
        if self.last_batch_handle == "roll_over" and tail_pending:
            # start before 0 by the size of the carried tail
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if data[0].shape[0] != self.batch_size:
            # short tail of 'roll_over' (or 'discard'): keep it for the next epoch, end this one
            self._cache_data, self._cache_label = data, label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _rows(self, source: list, start: int, stop: int) -> list:
        return [arr[start:stop] for _, arr in source]

    def _assemble(self, source: list) -> list:
        if self.cursor >= self.num_data:
            raise AssertionError("NDArrayIter: the epoch is over; call reset() first")
        b, n, cur = self.batch_size, self.num_data, self.cursor
        if self.last_batch_handle == "roll_over" and -b < cur < 0:
            carried = self._cache_data if self._cache_data is not None else self._cache_label
            if carried is None:
                raise AssertionError("NDArrayIter: no rolled-over data cached for this epoch")
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return _cat(carried, self._rows(source, 0, cur + b))
        if self.last_batch_handle == "pad" and cur + b > n:
            missing = cur + b - n
            whole, rest = divmod(missing, n)
            filler = []
            if missing > n:
                filler = [_like(arr, _nd.tile(arr, reps=(whole,) + (1,) * (arr.ndim - 1)))
                          for arr in self._rows(source, 0, n)]
                if rest:
                    filler = _cat(filler, self._rows(source, 0, rest))
            else:
                filler = self._rows(source, 0, missing)
            return _cat(self._rows(source, cur, n), filler)
        return self._rows(source, cur, min(cur + b, n))

    def getdata(self) -> list:
        return self._assemble(self.data)

    def getlabel(self) -> list:
        return self._assemble(self.label)

    def getpad(self) -> int:
        b, n, cur = self.batch_size, self.num_data, self.cursor
        if self.last_batch_handle == "pad" and cur + b > n:
            return cur + b - n
        if self.last_batch_handle == "roll_over" and -b < cur < 0:
            return -cur
        return 0
