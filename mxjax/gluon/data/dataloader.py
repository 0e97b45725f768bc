"""``gluon.data.DataLoader``: mini-batches from a dataset, built in-process, by threads or by
worker processes.

Worker processes (``num_workers > 0``, ``thread_pool=False``) are forked from a clean fork
server, not from the training process: forking a process where JAX has run leaves children
that hang or abort on their first new XLA compile, and transforms often call mx ops.  The
dataset and batchify function are therefore pickled once per worker (with cloudpickle when it
is installed, so lambdas and classes of the main script travel too).  See ``_zygote`` for the
measurements behind this, ``_shared_batch`` for how batches come back through shared memory
and ``_worker_pool`` for error, timeout and dead-worker handling.

MXNet 2.0 may route a loader through its C++ ``ThreadedDataLoader`` (``try_nopython``); mxjax
has one Python implementation, so ``try_nopython`` is accepted and changes nothing: the
batches always equal those of MXNet's Python path (a list of fields, dtypes kept).
"""
from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import contextvars
import hashlib
import threading
import time
import weakref
from typing import Any, Callable, Iterator

import numpy as onp

from ..._ndarray import NDArray
from ...device import cpu_pinned
from ...io._prefetch import ThreadedIter
from ...util import is_np_array, is_np_default_dtype, is_np_shape, np_array, np_shape
from . import batchify as _batchify
from . import sampler as _sampler
from ._shared_batch import HostStack
from ._worker_pool import PENDING, ProcessPool, WorkerTimeoutError, dump_payload
from ._zygote import server as _start_server
from .batchify import default_batchify_fn, default_mp_batchify_fn  # noqa: F401  (MXNet re-exports them here)

__all__ = ['DataLoader']


def _pin(batch: Any, device_id: int) -> Any:
    """Place a batch on ``cpu_pinned(device_id)``.  On mxjax that is host memory the batch
    already lives in, so arrays are returned as they are (no copy)."""
    if isinstance(batch, NDArray):
        target = cpu_pinned(device_id)
        if target.jax_device in batch.to_jax().devices():
            return batch
        return batch.as_in_context(target)
    if isinstance(batch, (list, tuple)):
        return [_pin(item, device_id) for item in batch]
    return batch


@contextlib.contextmanager
def _np_semantics(shape: bool, array: bool) -> Iterator[None]:
    """The training thread's NumPy-semantics flags, inside a worker thread."""
    with contextlib.ExitStack() as stack:
        if array:
            stack.enter_context(np_shape(shape))
            stack.enter_context(np_array(True))
        else:
            stack.enter_context(np_array(False))
            stack.enter_context(np_shape(shape))
        yield


class _ThreadPool:
    """Worker threads building batches; same interface as ``ProcessPool``."""

    broken = None

    def __init__(self, num_workers: int, dataset: Any, batchify_fn: Callable):
        self._dataset, self._batchify_fn = dataset, batchify_fn
        self._executor = concurrent.futures.ThreadPoolExecutor(
            num_workers, thread_name_prefix='DataLoader-worker')

    def _build(self, indices: list, np_flags: tuple) -> Any:
        with _np_semantics(np_flags[0], np_flags[1]):
            return self._batchify_fn([self._dataset[i] for i in indices])

    def submit(self, indices: Any, np_flags: tuple) -> concurrent.futures.Future:
        return self._executor.submit(self._build, list(indices), np_flags)

    def poll(self, future: concurrent.futures.Future, wait: float) -> Any:
        done, _ = concurrent.futures.wait([future], wait)
        return future.result() if done else PENDING

    def timed_out(self, future: concurrent.futures.Future, timeout: float) -> None:
        raise WorkerTimeoutError(
            f"DataLoader: a worker thread did not deliver a batch within timeout={timeout} s; "
            "a slow transform needs a larger timeout")

    def cancel(self, futures: Any) -> None:
        for future in futures:
            future.cancel()

    def terminate(self, reason: str = 'shut down') -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class _Receiver:
    """The loader's receiving side, run by a ``ThreadedIter`` thread: submits the index lists
    the training thread hands over, then waits for, unpacks and places the batches in order.
    Taking that work (about a millisecond a batch) off the training thread lets it spend its
    time in the step.  Waits are sliced so that ``stop`` is noticed within ``_SLICE`` s."""

    def __init__(self, pool: Any, timeout: float, pin_device_id: int | None, flags: tuple):
        self.pool, self.timeout, self.pin, self.flags = pool, timeout, pin_device_id, flags
        self.inbox: collections.deque = collections.deque()  # index lists, then _END
        self.wake = threading.Event()
        self.stop = False
        self.pending: collections.deque = collections.deque()  # submitted, in sampler order
        self.ended = False

    def _take_inbox(self) -> None:
        while self.inbox:
            indices = self.inbox.popleft()
            if indices is _END:
                self.ended = True
            else:
                self.pending.append(self.pool.submit(indices, self.flags))

    def __call__(self, _recycled: Any) -> Any:
        while True:
            self._take_inbox()
            if self.pending or self.ended or self.stop:
                break
            self.wake.wait(_SLICE)
            self.wake.clear()
        if not self.pending:
            return None
        handle = self.pending[0]
        deadline = time.monotonic() + self.timeout
        while not self.stop:
            batch = self.pool.poll(handle, max(min(_SLICE, deadline - time.monotonic()), 0.0))
            if batch is not PENDING:
                self.pending.popleft()
                return batch if self.pin is None else _pin(batch, self.pin)
            if time.monotonic() >= deadline:
                self.pool.timed_out(handle, self.timeout)
            self._take_inbox()
        return None


_END = object()
_SLICE = 0.01


def _stop_receiving(receiver: _Receiver, thread: ThreadedIter) -> None:
    receiver.stop = True
    receiver.wake.set()
    thread.close()  # joins: the receiver returns within one slice
    pending = list(receiver.pending)
    receiver.pending.clear()
    if pending and receiver.pool.broken is None:
        receiver.pool.cancel(pending)


class _MultiWorkerIter:
    """Yields batches in sampler order while up to ``prefetch`` more are being built.

    The sampler runs on the training thread (its random draws stay where the user made
    them); a background thread receives the batches (see ``_Receiver``)."""

    def __init__(self, loader: "DataLoader", pool: Any, batch_sampler: Any, prefetch: int,
                 timeout: float, pin_memory: bool, pin_device_id: int):
        self._loader = loader  # `for b in DataLoader(...)` must not stop the workers mid-epoch
        self._batches = iter(batch_sampler)
        self._length = len(batch_sampler)
        flags = (is_np_shape(), is_np_array(), is_np_default_dtype())
        self._receiver = _Receiver(pool, timeout, pin_device_id if pin_memory else None, flags)
        for _ in range(max(prefetch, 1)):
            if not self._push():
                break
        # the thread runs in a copy of this thread's context (NumPy-semantics flags, device scope)
        context = contextvars.copy_context()
        receive = self._receiver
        self._thread = ThreadedIter(lambda recycled: context.run(receive, recycled), capacity=1)
        self._closer = weakref.finalize(self, _stop_receiving, self._receiver, self._thread)

    def _push(self) -> bool:
        indices = next(self._batches, None)
        self._receiver.inbox.append(_END if indices is None else indices)
        self._receiver.wake.set()
        if indices is None:
            self._batches = iter(())
        return indices is not None

    def __next__(self) -> Any:
        try:
            self._push()
            batch = self._thread.next()
        except BaseException:
            self.close()
            raise
        if batch is None:
            self.close()
            raise StopIteration
        return batch

    def __iter__(self) -> "_MultiWorkerIter":
        return self

    def __len__(self) -> int:
        return self._length

    def close(self) -> None:
        """Stop early: batches still being built are dropped as they arrive."""
        self._batches = iter(())
        self._closer()


def _worker_seed() -> int:
    """A base seed for worker RNGs that follows ``numpy.random.seed`` without drawing from it."""
    state = onp.random.get_state()
    digest = hashlib.blake2b(onp.asarray(state[1]).tobytes() + bytes([state[2] % 256]),
                             digest_size=8).digest()
    return int.from_bytes(digest, 'little') % (2 ** 31)


def _shutdown(box: list) -> None:
    pool, box[0] = box[0], None
    if pool is not None:
        pool.terminate()


class DataLoader:
    """Loads a dataset and yields mini-batches of it.

    Indices come from ``batch_sampler``, or from ``sampler``/``shuffle`` grouped by
    ``batch_size`` and ``last_batch`` ('keep', 'discard' or 'rollover').  ``batchify_fn`` turns a
    list of samples into a batch (default: ``batchify.Stack``).  ``num_workers > 0`` builds
    batches in worker processes (or threads with ``thread_pool=True``), keeping up to
    ``prefetch`` (default ``2 * num_workers``) batches in flight and returning them in sampler
    order; a batch that takes longer than ``timeout`` seconds raises.  ``pin_memory`` places
    batches on ``cpu_pinned(pin_device_id)``.  ``try_nopython`` is accepted for compatibility.
    """

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False,
                 sampler: Any = None, last_batch: str | None = None, batch_sampler: Any = None,
                 batchify_fn: Callable | None = None, num_workers: int = 0, pin_memory: bool = False,
                 pin_device_id: int = 0, prefetch: int | None = None, thread_pool: bool = False,
                 timeout: float = 120, try_nopython: bool | None = None):
        self._pool_box: list = [None]
        self._finalizer = weakref.finalize(self, _shutdown, self._pool_box)
        if not timeout > 0:
            raise AssertionError(f"DataLoader: timeout must be positive, given {timeout}")
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("DataLoader: batch_size must be specified unless batch_sampler "
                                 "is specified")
            if sampler is None:
                sampler = (_sampler.RandomSampler if shuffle else _sampler.SequentialSampler)(len(dataset))
            elif shuffle:
                raise ValueError("DataLoader: shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch or 'keep')
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("DataLoader: batch_size, shuffle, sampler and last_batch must not be "
                             "specified if batch_sampler is specified.")
        self._dataset = dataset
        self._batch_sampler = batch_sampler
        self._num_workers = max(int(num_workers), 0)
        self._prefetch = 2 * self._num_workers if prefetch is None else max(0, int(prefetch))
        self._pin_memory, self._pin_device_id = pin_memory, pin_device_id
        self._thread_pool, self._timeout = thread_pool, timeout
        self._try_nopython = try_nopython
        default_fn = batchify_fn is None
        if default_fn:
            batchify_fn = _batchify.Stack(use_shared_mem=self._num_workers > 0)
        self._batchify_fn = batchify_fn
        self._payload = None
        if self._num_workers > 0:
            if thread_pool:
                self._pool_box[0] = _ThreadPool(self._num_workers, dataset, batchify_fn)
            else:
                worker_fn = HostStack(batchify_fn) if default_fn else batchify_fn
                self._payload = dump_payload(dataset, worker_fn)  # fail early on unpicklables
                _start_server()

    def _process_pool(self) -> ProcessPool:
        pool = self._pool_box[0]
        if pool is None or pool.broken:
            if pool is not None:
                pool.terminate()
            pool = self._pool_box[0] = ProcessPool(self._num_workers, self._payload, _worker_seed(),
                                                        self._timeout)
        return pool

    def __iter__(self) -> Iterator[Any]:
        if self._num_workers == 0:
            return self._same_process_iter()
        if self._thread_pool:
            pool = self._pool_box[0]
            if pool is None:  # closed earlier: start new threads
                pool = self._pool_box[0] = _ThreadPool(self._num_workers, self._dataset,
                                                       self._batchify_fn)
        else:
            pool = self._process_pool()
        return _MultiWorkerIter(self, pool, self._batch_sampler, self._prefetch, self._timeout,
                                self._pin_memory, self._pin_device_id)

    def _same_process_iter(self) -> Iterator[Any]:
        for indices in self._batch_sampler:
            batch = self._batchify_fn([self._dataset[i] for i in indices])
            yield _pin(batch, self._pin_device_id) if self._pin_memory else batch

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def close(self) -> None:
        """Stop the worker processes or threads now (otherwise they stop with the loader)."""
        _shutdown(self._pool_box)

    def __del__(self) -> None:
        finalizer = getattr(self, '_finalizer', None)
        if finalizer is not None:
            finalizer()
