"""Samplers: iterables of dataset indices (or of index batches) that a DataLoader walks.

``RandomSampler`` shuffles with NumPy's global generator, as MXNet does, so ``np.random.seed``
makes its order reproducible.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as onp

from ._errors import require

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'FilterSampler',
           'BatchSampler', 'IntervalSampler']

_LAST_BATCH_MODES = ('keep', 'discard', 'rollover')


def _check_count(who: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, onp.integer)):
        raise TypeError(f"{who}: {name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{who}: {name} must be >= {minimum}, got {value}")
    return int(value)


class Sampler:
    """Base class: subclasses yield indices from ``__iter__`` and report their count in ``__len__``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Yields ``start, start + 1, ..., start + length - 1`` in order."""

    def __init__(self, length: int, start: int = 0):
        self._length = _check_count('SequentialSampler', 'length', length, 0)
        first = _check_count('SequentialSampler', 'start', start, 0)
        self._span = range(first, first + self._length)

    def __iter__(self) -> Iterator[int]:
        return iter(self._span)

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """Yields a fresh permutation of ``range(length)`` every epoch (NumPy's global RNG)."""

    def __init__(self, length: int):
        self._length = _check_count('RandomSampler', 'length', length, 0)

    def __iter__(self) -> Iterator[Any]:
        order = onp.arange(self._length)
        onp.random.shuffle(order)
        return iter(order)

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """Yields the indices of the samples of ``dataset`` for which ``fn(sample)`` is true.

    The dataset is scanned once, when the sampler is built.
    """

    def __init__(self, fn: Callable[[Any], bool], dataset: Any):
        self._fn = fn
        self._dataset = dataset
        self._chosen = [pos for pos, item in enumerate(dataset) if fn(item)]

    def __iter__(self) -> Iterator[int]:
        return iter(self._chosen)

    def __len__(self) -> int:
        return len(self._chosen)


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    ``last_batch`` says what happens to a final short batch: ``'keep'`` yields it, ``'discard'``
    drops it, ``'rollover'`` holds it back and puts it at the front of the next epoch.
    """

    def __init__(self, sampler: Any, batch_size: int, last_batch: str = 'keep'):
        self._batch_size = _check_count('BatchSampler', 'batch_size', batch_size, 1)
        # MXNet only notices a bad mode when a short batch turns up; checking here is kinder.
        if last_batch not in _LAST_BATCH_MODES:
            raise ValueError("BatchSampler: last_batch must be one of 'keep', 'discard', or "
                             f"'rollover', but got {last_batch!r}")
        self._sampler = sampler
        self._mode = last_batch
        self._carry: list = []

    def __iter__(self) -> Iterator[list]:
        pending, self._carry = self._carry, []
        for index in self._sampler:
            pending.append(index)
            if len(pending) == self._batch_size:
                yield pending
                pending = []
        if not pending:
            return
        if self._mode == 'rollover':
            self._carry = pending
        elif self._mode != 'discard':
            yield pending

    def __len__(self) -> int:
        total = len(self._sampler)
        if self._mode == 'rollover':
            return (len(self._carry) + total) // self._batch_size
        full, rest = divmod(total, self._batch_size)
        return full + (1 if rest and self._mode == 'keep' else 0)


class IntervalSampler(Sampler):
    """Yields ``0, interval, 2*interval, ...``; with ``rollover`` then ``1, 1+interval, ...`` and
    so on until every index in ``range(length)`` was visited once.
    """

    def __init__(self, length: int, interval: int, rollover: bool = True):
        length = _check_count('IntervalSampler', 'length', length, 0)
        interval = _check_count('IntervalSampler', 'interval', interval, 1)
        require(interval <= length,
                f"IntervalSampler: interval {interval} must be smaller than or equal to length {length}")
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self) -> Iterator[int]:
        offsets = range(self._interval) if self._rollover else range(1)
        for offset in offsets:
            yield from range(offset, self._length, self._interval)

    def __len__(self) -> int:
        # MXNet reports ``length`` even when rollover=False yields fewer; report what is yielded.
        if self._rollover:
            return self._length
        return -(-self._length // self._interval)
