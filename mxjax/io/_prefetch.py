"""A bounded producer/consumer prefetcher on one background thread (dmlc's ``ThreadedIter``).

The thread calls ``produce(recycled)`` to make the next item while the consumer works on the
previous ones; at most ``capacity`` finished items wait in the queue. Buffers handed back
with ``recycle`` are passed to ``produce`` again, so a producer can fill arrays in place.

Every wait is on one condition variable that ``close``, ``reset`` and garbage collection
notify, so none of them can hang on a full or empty queue. The thread holds no reference to
the ``ThreadedIter`` itself, which lets an abandoned iterator be collected and its thread stop.
"""
from __future__ import annotations

import threading
import weakref
from collections import deque
from typing import Any, Callable, Optional

__all__ = ["ThreadedIter"]

_END = object()


class _Failure:
    """A producer exception travelling through the queue to the consumer."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Shared:
    """State shared by the consumer side and the producer thread, guarded by ``cond``."""

    def __init__(self, produce: Callable, capacity: int, before_first: Optional[Callable]) -> None:
        self.produce = produce
        self.before_first = before_first
        self.capacity = capacity
        self.cond = threading.Condition()
        self.queue: deque = deque()
        self.free: deque = deque()
        self.ended = False          # the producer returned None or failed this epoch
        self.stop = False
        self.epoch = 0              # bumped by reset(); the producer answers with ``done_epoch``
        self.done_epoch = 0
        self.reset_error: Optional[BaseException] = None

    def give_back(self, item: Any) -> None:
        if item is not None and not isinstance(item, _Failure) and len(self.free) < 2 * self.capacity + 2:
            self.free.append(item)


def _run(state: _Shared) -> None:
    cond = state.cond
    epoch = 0
    while True:
        with cond:
            while not (state.stop or state.epoch != epoch
                       or (not state.ended and len(state.queue) < state.capacity)):
                cond.wait()
            if state.stop:
                return
            rewind = state.epoch != epoch
            epoch = state.epoch
            recycled = None if rewind or not state.free else state.free.popleft()
        if rewind:
            # Outside the lock, so that close() never waits on a slow before_first.
            error = None
            if state.before_first is not None:
                try:
                    state.before_first()
                except BaseException as err:  # handed to the consumer's reset()
                    error = err
            with cond:
                if state.epoch == epoch:
                    state.reset_error = error
                    state.ended = error is not None   # no producing after a failed rewind
                    state.done_epoch = epoch
                    cond.notify_all()
            continue
        try:
            item = state.produce(recycled)
            failure = None
        except BaseException as err:  # re-raised in the consumer with its traceback
            item, failure = None, _Failure(err)
        with cond:
            if state.stop:
                return
            if state.epoch != epoch:      # made for an epoch the consumer has left behind
                state.give_back(item)
                continue
            if failure is not None:
                state.queue.append(failure)
                state.ended = True
            elif item is None:
                state.ended = True
            else:
                state.queue.append(item)
            cond.notify_all()


def _shutdown(state: _Shared, thread: threading.Thread) -> None:
    with state.cond:
        state.stop = True
        state.queue.clear()
        state.free.clear()
        state.cond.notify_all()
    if thread.is_alive() and thread is not threading.current_thread():
        thread.join(timeout=5.0)


class ThreadedIter:
    """Prefetch items made by ``produce(recycled)`` on a background thread.

    ``produce`` gets a buffer given back through ``recycle`` (or None) and returns the next
    item, or None at the end. ``next()`` returns items in order and None at the end, and raises
    a producer exception (with its original traceback) at the read where it would have come;
    after that the iterator is at its end until ``reset()``. ``reset()`` calls ``before_first``
    on the thread and starts again; ``close()`` stops the thread (also on garbage collection).
    """

    def __init__(self, produce: Callable[[Any], Any], capacity: int = 4,
                 before_first: Optional[Callable[[], Any]] = None) -> None:
        if not callable(produce):
            raise TypeError(f"ThreadedIter: produce must be callable, got {type(produce).__name__}")
        if int(capacity) < 1:
            raise ValueError(f"ThreadedIter: capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self._state = _Shared(produce, self.capacity, before_first)
        self._thread = threading.Thread(target=_run, args=(self._state,), daemon=True,
                                        name="mxjax-ThreadedIter")
        self._thread.start()
        self._finalizer = weakref.finalize(self, _shutdown, self._state, self._thread)

    def _check_open(self, op: str) -> None:
        if self._state.stop:
            raise RuntimeError(f"ThreadedIter.{op}: the iterator is closed")

    def next(self) -> Any:
        """The next item, or None once the producer has finished."""
        self._check_open("next")
        state = self._state
        with state.cond:
            while not state.queue and not state.ended and not state.stop:
                if not self._thread.is_alive():
                    raise RuntimeError("ThreadedIter.next: the producer thread has died")
                state.cond.wait(timeout=1.0)
            if not state.queue:
                return None
            item = state.queue.popleft()
            state.cond.notify_all()
        if isinstance(item, _Failure):
            raise item.error
        return item

    def __iter__(self) -> "ThreadedIter":
        return self

    def __next__(self) -> Any:
        item = self.next()
        if item is None:
            raise StopIteration
        return item

    def recycle(self, item: Any) -> None:
        """Hand a consumed item back so ``produce`` can reuse it."""
        state = self._state
        with state.cond:
            if not state.stop:
                state.give_back(item)

    def reset(self) -> None:
        """Drop what is queued, call ``before_first`` on the thread and produce from the start."""
        self._check_open("reset")
        state = self._state
        with state.cond:
            while state.queue:
                state.give_back(state.queue.popleft())
            state.ended = False
            state.epoch += 1
            target = state.epoch
            state.cond.notify_all()
            while state.done_epoch != target and not state.stop:
                if not self._thread.is_alive():
                    raise RuntimeError("ThreadedIter.reset: the producer thread has died")
                state.cond.wait(timeout=1.0)
            error, state.reset_error = state.reset_error, None
        if error is not None:
            raise error

    def close(self) -> None:
        """Stop and join the thread; further calls do nothing."""
        self._finalizer()

    def __enter__(self) -> "ThreadedIter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
