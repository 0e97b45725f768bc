"""ThreadedIter: ordering, the capacity bound, buffer recycling, errors, reset and shutdown."""
import gc
import threading
import time
import traceback

import numpy as np
import pytest

from mxjax.io._prefetch import ThreadedIter


class Counter:
    """produce(): 1, 2, ..., limit, then None; records how far it ran ahead."""

    def __init__(self, limit):
        self.limit = limit
        self.made = 0
        self.lock = threading.Lock()

    def __call__(self, recycled):
        with self.lock:
            if self.made >= self.limit:
                return None
            self.made += 1
            return self.made

    def rewind(self):
        self.made = 0


def test_order_end_and_iteration():
    it = ThreadedIter(Counter(50), capacity=3)
    assert [it.next() for _ in range(10)] == list(range(1, 11))
    assert list(it) == list(range(11, 51))
    assert it.next() is None and it.next() is None
    it.close()


@pytest.mark.parametrize("capacity", [1, 2, 5])
def test_producer_never_more_than_capacity_ahead(capacity):
    produce = Counter(40)
    with ThreadedIter(produce, capacity=capacity) as it:
        consumed = 0
        for _ in range(40):
            time.sleep(0.002)             # give the producer every chance to run ahead
            assert produce.made - consumed <= capacity
            assert it.next() == consumed + 1
            consumed += 1
        time.sleep(0.01)
        assert it.next() is None


def test_recycled_buffers_are_reused():
    seen = []
    count = [0]

    def produce(recycled):
        seen.append(recycled)
        if count[0] == 30:
            return None
        count[0] += 1
        buf = recycled if recycled is not None else np.empty(4)
        buf[:] = count[0]
        return buf

    it = ThreadedIter(produce, capacity=2)
    given_back = []
    values = []
    while True:
        buf = it.next()
        if buf is None:
            break
        values.append(buf[0])
        it.recycle(buf)
        given_back.append(buf)
        time.sleep(0.001)
    it.close()
    assert values == list(range(1, 31))
    reused = [r for r in seen if r is not None]
    assert all(any(r is g for g in given_back) for r in reused)   # only what was handed back
    assert len(reused) >= 10
    assert len({id(b) for b in given_back}) <= 4                  # a handful went round and round


def test_producer_exception_reaches_consumer_with_traceback():
    def produce(recycled, state=[0]):
        state[0] += 1
        if state[0] == 3:
            return failing_helper()
        return state[0]

    def failing_helper():
        raise KeyError("broken record")

    it = ThreadedIter(produce)
    assert it.next() == 1 and it.next() == 2
    with pytest.raises(KeyError, match="broken record") as info:
        it.next()
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "failing_helper" in frames and "produce" in frames
    assert it.next() is None               # at its end after the error
    it.close()


def test_reset_rewinds_and_calls_before_first():
    produce = Counter(5)
    calls = []

    def before_first():
        calls.append(threading.current_thread().name)
        produce.rewind()

    it = ThreadedIter(produce, capacity=2, before_first=before_first)
    assert it.next() == 1
    it.reset()
    assert list(it) == [1, 2, 3, 4, 5]
    it.reset()
    assert list(it) == [1, 2, 3, 4, 5]
    assert calls == ["mxjax-ThreadedIter"] * 2   # run on the producer thread
    it.close()


def test_reset_reports_before_first_error():
    def before_first():
        raise OSError("cannot rewind")

    it = ThreadedIter(Counter(3), before_first=before_first)
    with pytest.raises(OSError, match="cannot rewind"):
        it.reset()
    assert it.next() is None
    it.close()


def test_close_with_producer_blocked_on_full_queue_is_prompt():
    it = ThreadedIter(lambda recycled: np.zeros(1), capacity=2)
    time.sleep(0.05)                       # the queue is full; the producer waits
    thread = it._thread
    start = time.monotonic()
    it.close()
    assert time.monotonic() - start < 1.0
    assert not thread.is_alive()
    it.close()                             # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        it.next()


def test_close_while_consumer_waits_on_slow_producer():
    release = threading.Event()

    def produce(recycled):
        release.wait(5)
        return None

    it = ThreadedIter(produce)
    results = []
    waiter = threading.Thread(target=lambda: results.append(it.next()))
    waiter.start()
    time.sleep(0.05)
    release.set()
    it.close()
    waiter.join(2)
    assert not waiter.is_alive() and results == [None]


def test_garbage_collection_stops_the_thread():
    it = ThreadedIter(Counter(10 ** 9), capacity=2)
    assert it.next() == 1
    thread = it._thread
    del it
    gc.collect()
    thread.join(2)
    assert not thread.is_alive()


def test_bad_arguments():
    with pytest.raises(TypeError, match="callable"):
        ThreadedIter(5)
    with pytest.raises(ValueError, match="capacity must be >= 1, got 0"):
        ThreadedIter(Counter(1), capacity=0)
