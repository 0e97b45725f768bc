"""Iterators that wrap other iterators: ``ResizeIter`` (fixed epoch length) and ``PrefetchingIter``.

``PrefetchingIter`` reads the next batch of each wrapped iterator on its own background
thread while the caller works on the current one, and joins the batches side by side.
"""
from __future__ import annotations

import threading
from typing import Any

from ._base import DataBatch, DataDesc, DataIter

__all__ = ["ResizeIter", "PrefetchingIter"]


class _HoldsBatch(DataIter):
    """An iterator whose ``get*`` methods read the fields of ``current_batch``."""

    current_batch: DataBatch | None = None

    def _field(self, name: str) -> Any:
        batch = self.current_batch
        if batch is None:
            raise RuntimeError(f"{type(self).__name__}: no current batch; call next() or iter_next() first")
        return getattr(batch, name)

    def getdata(self) -> Any:
        return self._field("data")

    def getlabel(self) -> Any:
        return self._field("label")

    def getindex(self) -> Any:
        return self._field("index")

    def getpad(self) -> Any:
        return self._field("pad")


class ResizeIter(_HoldsBatch):
    """Makes every epoch of ``data_iter`` exactly ``size`` batches long.

    When the wrapped iterator runs out early it is reset and reading goes on; with
    ``reset_internal`` (default) ``reset`` also resets the wrapped iterator.
    """

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True) -> None:
        super().__init__()
        self.data_iter, self.size, self.reset_internal = data_iter, size, reset_internal
        self.cur = 0
        self.current_batch = None
        # the wrapped iterator's description (and bucket key, for bucketing modules)
        for attr in ("provide_data", "provide_label", "batch_size", "default_bucket_key"):
            if hasattr(data_iter, attr):
                setattr(self, attr, getattr(data_iter, attr))

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            batch = self.data_iter.next()
        self.current_batch = batch
        self.cur += 1
        return True



class _Fetcher:
    """One background thread that fetches the next batch of one iterator on request.

    ``request()`` starts a fetch; ``take()`` waits for it and returns the batch (None at the
    end of the epoch) or re-raises what the iterator raised.
    """

    def __init__(self, source: DataIter) -> None:
        self.source = source
        self._go = threading.Event()
        self._done = threading.Event()
        self._stop = False
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="mxjax-io-prefetch", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            self._go.wait()
            self._go.clear()
            if self._stop:
                return
            try:
                self._result, self._error = self.source.next(), None
            except StopIteration:
                self._result, self._error = None, None
            except BaseException as err:  # handed to the consumer thread by take()
                self._result, self._error = None, err
            self._done.set()

    def request(self) -> None:
        self._done.clear()
        self._go.set()

    def wait(self) -> None:
        self._done.wait()

    def take(self) -> Any:
        self._done.wait()
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        return self._result

    def close(self) -> None:
        if self._thread.is_alive():
            self._done.wait()
            self._stop = True
            self._go.set()
            self._thread.join()


class PrefetchingIter(_HoldsBatch):
    """Prefetches batches of one or more iterators on background threads and joins them.

    ``iters`` is a ``DataIter`` or a list of them that yield the same number of batches;
    each batch of this iterator concatenates their data lists and label lists.
    ``rename_data`` / ``rename_label`` are lists (one per iterator) of ``{old: new}`` name maps
    applied to ``provide_data`` / ``provide_label``.
    """

    def __init__(self, iters: Any, rename_data: list | None = None, rename_label: list | None = None) -> None:
        super().__init__()
        iters = list(iters) if isinstance(iters, (list, tuple)) else [iters]
        if not iters:
            raise AssertionError("PrefetchingIter: iters must hold at least one DataIter")
        self.iters, self.n_iter = iters, len(iters)
        self.rename_data, self.rename_label = rename_data, rename_label
        _, first_shape = self.provide_data[0][:2]
        self.batch_size = first_shape[0]
        self.current_batch = None
        self._fetchers = [_Fetcher(it) for it in iters]
        for fetcher in self._fetchers:
            fetcher.request()

    @staticmethod
    def _renamed(descs_per_iter: list, renames: list | None) -> list:
        if renames is None:
            return [desc for descs in descs_per_iter for desc in descs]
        out = []
        for mapping, descs in zip(renames, descs_per_iter):
            for desc in descs:
                desc = desc if isinstance(desc, DataDesc) else DataDesc(*desc)
                out.append(DataDesc(mapping[desc.name], desc.shape, desc.dtype))
        return out

    @property
    def provide_data(self) -> list:
        return self._renamed([it.provide_data for it in self.iters], self.rename_data)

    @property
    def provide_label(self) -> list:
        return self._renamed([it.provide_label for it in self.iters], self.rename_label)

    def reset(self) -> None:
        for fetcher in self._fetchers:
            fetcher.wait()
        for it in self.iters:
            it.reset()
        for fetcher in self._fetchers:
            fetcher.request()

    def iter_next(self) -> bool:
        batches = [fetcher.take() for fetcher in self._fetchers]
        ended = [b is None for b in batches]
        if any(ended) and not all(ended):
            raise AssertionError("PrefetchingIter: the wrapped iterators yield different numbers of batches")
        if all(ended):
            return False
        if any(b.pad != batches[0].pad for b in batches):
            raise AssertionError(f"PrefetchingIter: the wrapped iterators disagree on the padding of a batch "
                                 f"({[b.pad for b in batches]})")
        self.current_batch = DataBatch([arr for b in batches for arr in b.data],
                                       [arr for b in batches for arr in b.label],
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data, provide_label=self.provide_label)
        for fetcher in self._fetchers:
            fetcher.request()
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        return self.current_batch


    def close(self) -> None:
        """Stop and join the prefetch threads (also done when the iterator is collected)."""
        for fetcher in getattr(self, "_fetchers", []):
            fetcher.close()

    def __del__(self) -> None:
        self.close()
