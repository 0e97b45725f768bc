"""``MXDataIter``: the common front of the iterators MXNet implements in C++ (CSV, MNIST, RecordIO).

A subclass supplies ``_produce()`` (the next batch as NumPy arrays, or None at the end of the
epoch) and ``_rewind()``.  This class runs the producer ``prefetch_buffer`` batches ahead on a
background thread, reads the first batch at construction to learn ``provide_data`` /
``provide_label``, and hands out ``mx.np`` arrays under NumPy semantics (MXNet 2.0's default)
or ``mx.nd`` arrays otherwise, as MXNet's wrapper does.

``_RoundBatcher`` is MXNet's batch loader over a stream of single examples: with
``round_batch`` the short last batch is completed from the start of the data and the next
epoch begins after the examples so borrowed; without it the padding rows keep what the
previous batch left there.
"""
from __future__ import annotations

import ast
import logging
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import numpy as onp

from .. import ndarray as _nd
from .. import numpy as _mx_np
from ..base import MXNetError
from ..util import is_np_array
from ._base import DataBatch, DataDesc, DataIter

__all__ = ["MXDataIter"]


@dataclass
class NativeBatch:
    """One produced batch: NumPy data and label, the padding count and the example indices."""
    data: onp.ndarray
    label: onp.ndarray
    pad: int
    index: onp.ndarray | None
    wrapped: bool = False  # some rows were borrowed from the start of the data (round_batch)


def warn_unknown(where: str, kwargs: dict) -> None:
    """Warn about arguments the iterator does not know.  MXNet's C++ iterators ignore them
    silently, so scripts may pass some; a warning keeps them running but shows typos."""
    if kwargs:
        warnings.warn(f"{where}: ignoring unknown arguments {sorted(kwargs)}", stacklevel=3)


def check_batch_size(where: str, batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, onp.integer)) or batch_size <= 0:
        raise MXNetError(f"{where}: batch_size must be a positive integer, got {batch_size!r}")
    return int(batch_size)


def check_shape(where: str, name: str, shape: Any) -> tuple:
    """``shape`` as a tuple of positive ints (an int means a 1-d shape)."""
    if isinstance(shape, (int, onp.integer)):
        shape = (int(shape),)
    elif isinstance(shape, str):
        # MXNet passes its arguments to C++ as strings, so "(3, 224, 224)" works there too
        try:
            shape = ast.literal_eval(shape.strip() or "()")
        except (ValueError, SyntaxError):
            raise MXNetError(f"{where}: {name} must be a tuple of positive ints, got {shape!r}") from None
        shape = (shape,) if isinstance(shape, int) else shape
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise MXNetError(f"{where}: {name} must be a tuple of positive ints, got {shape!r}") from None
    if not out or any(d <= 0 for d in out):
        raise MXNetError(f"{where}: {name} must be a non-empty tuple of positive ints, got {shape!r}")
    return out


_DTYPES = {None: None, "None": None, "float32": onp.float32, "float64": onp.float64, "float16": onp.float16,
           "int32": onp.int32, "int64": onp.int64, "int8": onp.int8, "uint8": onp.uint8}


def check_dtype(where: str, dtype: Any) -> Any:
    """The NumPy dtype named by MXNet's iterator ``dtype`` argument (None: keep the iterator's own)."""
    key = dtype if dtype is None or isinstance(dtype, str) else onp.dtype(dtype).name
    if key == "bfloat16":
        raise MXNetError(f"{where}: dtype 'bfloat16' is not supported for iterator output in mxjax; "
                         f"use one of {sorted(k for k in _DTYPES if k and k != 'None')}")
    if key not in _DTYPES:
        raise MXNetError(f"{where}: unknown dtype {dtype!r}; expected None or one of "
                         f"{sorted(k for k in _DTYPES if k and k != 'None')}")
    return _DTYPES[key]


class RoundBatcher:
    """Groups examples from ``next_example()`` (``(data, label, index)`` or None) into batches.

    ``rewind()`` restarts the example stream.  Batches reuse one buffer, so without
    ``round_batch`` the padding rows of a short batch hold the previous batch's rows (as in
    MXNet); callers copy what they hand out.
    """

    def __init__(self, next_example: Callable[[], Any], rewind: Callable[[], None], batch_size: int,
                 data_shape: tuple, label_shape: tuple, round_batch: bool, dtype: Any = onp.float32,
                 label_dtype: Any = onp.float32) -> None:
        self._next_example = next_example
        self._rewind = rewind
        self.batch_size = batch_size
        self.round_batch = bool(round_batch)
        self._data = onp.zeros((batch_size,) + tuple(data_shape), dtype)
        flat_label = tuple(label_shape) == (1,)
        self._label = onp.zeros((batch_size,) if flat_label else (batch_size,) + tuple(label_shape), label_dtype)
        self._index = onp.zeros(batch_size, onp.uint64)
        self._borrowed = 0

    def rewind(self, after_borrowed: bool = True) -> None:
        """Start the next epoch: after the examples the wrapped last batch borrowed when
        ``after_borrowed`` (MXNet's round_batch), else from the first example."""
        skip = self.round_batch and self._borrowed and after_borrowed
        self._borrowed = 0
        if not skip:
            self._rewind()

    def _put(self, row: int, example: Any) -> None:
        data, label, index = example
        self._data[row] = data
        self._label[row] = onp.reshape(label, self._label.shape[1:])
        self._index[row] = index

    def next_batch(self) -> NativeBatch | None:
        if self._borrowed:
            return None
        top = 0
        while top < self.batch_size:
            example = self._next_example()
            if example is None:
                break
            self._put(top, example)
            top += 1
        if top == 0:
            return None
        pad = self.batch_size - top
        if pad and self.round_batch:
            self._rewind()
            while top < self.batch_size:
                example = self._next_example()
                if example is None:
                    # MXNet stops with a failed check when the data is shorter than the padding;
                    # keep cycling over the data instead.
                    self._rewind()
                    example = self._next_example()
                    if example is None:
                        raise MXNetError("round_batch: the data source yielded no examples after a rewind")
                self._put(top, example)
                top += 1
                self._borrowed += 1
        return NativeBatch(self._data.copy(), self._label.copy(), pad, self._index.copy(), self._borrowed > 0)


class MXDataIter(DataIter):
    """Base of mxjax's built-in file iterators (``CSVIter``, ``MNISTIter``, ``ImageRecordIter``, ...).

    Subclasses call ``_start()`` at the end of their constructor after defining ``_produce``
    and ``_rewind``.
    """

    def __init__(self, data_name: str = "data", label_name: str = "softmax_label",
                 prefetch_buffer: int = 4, **kwargs: Any) -> None:
        super().__init__()
        self._data_name = data_name
        self._label_name = label_name
        self._kwargs = kwargs
        if isinstance(prefetch_buffer, bool) or not isinstance(prefetch_buffer, (int, onp.integer)) \
                or prefetch_buffer < 0:
            raise MXNetError(f"{type(self).__name__}: prefetch_buffer must be a non-negative int, "
                             f"got {prefetch_buffer!r}")
        self._capacity = int(prefetch_buffer)
        self._to_array = _mx_np.array if is_np_array() else _nd.array
        self._threaded: Any = None
        self._current: NativeBatch | None = None
        # whether the last batch handed out wrapped around (read by ``_rewind`` on the producer thread)
        self._after_wrap = False
        self._debug_skip_load = False
        self._debug_at_begin = True
        self.first_batch: DataBatch | None = None

    # -- subclass hooks
    def _produce(self) -> NativeBatch | None:
        raise NotImplementedError(f"{type(self).__name__} must define _produce")

    def _rewind(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _rewind")

    def _start(self) -> None:
        """Start prefetching and read the first batch (its shapes give ``provide_data``)."""
        if self._capacity > 0:
            from ._prefetch import ThreadedIter
            owner = weakref.ref(self)  # the thread must not keep the iterator alive

            def produce(recycled: Any) -> NativeBatch | None:
                it = owner()
                return None if it is None else it._produce()

            def rewind() -> None:
                it = owner()
                if it is not None:
                    it._rewind()

            self._threaded = ThreadedIter(produce, capacity=self._capacity, before_first=rewind)
        if self.iter_next():
            self.first_batch = self._batch()
            data, label = self.first_batch.data[0], self.first_batch.label[0]
            data_desc, label_desc = (data.shape, data.dtype), (label.shape, label.dtype)
        else:
            # an empty part (e.g. more parts than records): describe the batches it would have
            declared = self._declared_batch()
            if declared is None:
                raise MXNetError(f"{type(self).__name__}: the data source holds no examples")
            data_desc, label_desc = declared
        self.provide_data = [DataDesc(self._data_name, *data_desc)]
        self.provide_label = [DataDesc(self._label_name, *label_desc)]
        self.batch_size = data_desc[0][0]

    def _declared_batch(self) -> Any:
        """``((data shape, dtype), (label shape, dtype))`` of a batch, for sources that may be empty."""
        return None

    def _fetch(self) -> NativeBatch | None:
        if self._threaded is not None:
            return self._threaded.next()
        return self._produce()

    def debug_skip_load(self) -> None:
        """From now on return the first batch again and again (to time a model without I/O)."""
        self._debug_skip_load = True
        logging.info("Set debug_skip_load to be true, will simply return first batch")

    def reset(self) -> None:
        self._debug_at_begin = True
        self.first_batch = None
        # MXNet's prefetcher decides this by how far its thread has read ahead, so a reset in the
        # middle of an epoch may skip examples there; here only a consumed wrapped batch counts.
        self._after_wrap = self._current is not None and self._current.wrapped
        if self._threaded is not None:
            self._threaded.reset()
        else:
            self._rewind()

    def _batch(self) -> DataBatch:
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())

    def next(self) -> DataBatch:
        if self._debug_skip_load and not self._debug_at_begin:
            return self._batch()
        if self.first_batch is not None:
            batch, self.first_batch = self.first_batch, None
            return batch
        self._debug_at_begin = False
        if not self.iter_next():
            raise StopIteration
        return self._batch()

    def iter_next(self) -> bool:
        if self.first_batch is not None:
            # the batch read at construction is current; MXNet keeps returning True here, which
            # loops forever in ``while it.iter_next()`` code, so it is consumed instead
            self.first_batch = None
            return True
        batch = self._fetch()
        if batch is None:
            return False
        self._current = batch
        return True

    def getdata(self) -> Any:
        return self._to_array(self._current.data, dtype=self._current.data.dtype)

    def getlabel(self) -> Any:
        return self._to_array(self._current.label, dtype=self._current.label.dtype)

    def getindex(self) -> onp.ndarray | None:
        index = self._current.index
        return None if index is None or not len(index) else index.copy()

    def getpad(self) -> int:
        return int(self._current.pad)

    def getitems(self) -> tuple:
        """The current batch's arrays: ``(data, label)``."""
        return self.getdata(), self.getlabel()

    def __len__(self) -> int:
        # MXNet reports 0 when the iterator cannot tell its length in advance.
        return 0

    def close(self) -> None:
        """Stop the prefetch thread (also done when the iterator is collected)."""
        threaded, self._threaded = getattr(self, "_threaded", None), None
        if threaded is not None:
            threaded.close()

    def __del__(self) -> None:
        self.close()
