"""Random-DAG stress: concurrent pushes must equal a serial execution in push order."""
from __future__ import annotations

import queue
import random
import threading
import time

import pytest

pytestmark = pytest.mark.timeout(120)

NVARS = 24


class Spec:
    """One random op: what it reads/writes and how it behaves."""

    __slots__ = ("op_id", "reads", "writes", "is_async", "fails", "priority", "sleep")

    def __init__(self, rng: random.Random, op_id: int, fail_rate: float) -> None:
        self.op_id = op_id
        k = rng.randint(0, 3)
        self.writes = rng.sample(range(NVARS), rng.choice([0, 1, 1, 1, 2]))
        self.reads = [v for v in rng.sample(range(NVARS), k) if v not in self.writes]
        self.is_async = rng.random() < 0.1
        self.fails = rng.random() < fail_rate
        self.priority = rng.choice([0, 0, 0, 1, -1])
        self.sleep = rng.random() < 0.05


class Harness:
    """Shared state the ops mutate, plus the logs compared against the serial model."""

    def __init__(self, eng):
        self.eng = eng
        self.vars = [eng.new_variable(f"v{i}") for i in range(NVARS)]
        self.state = [0] * NVARS
        self.write_log = [[] for _ in range(NVARS)]
        self.seen = {}
        self.errors = {}
        self.order = []                   # specs in push order
        self.push_lock = threading.Lock()
        self.completions: queue.SimpleQueue = queue.SimpleQueue()
        self.completer = threading.Thread(target=self._complete_loop, daemon=True)
        self.completer.start()

    def _complete_loop(self):
        while True:
            item = self.completions.get()
            if item is None:
                return
            item()

    def body(self, spec: Spec):
        state = self.state

        def run():
            vals = tuple(state[r] for r in spec.reads) + tuple(state[w] for w in spec.writes)
            self.seen[spec.op_id] = vals
            if spec.sleep:
                time.sleep(0.001)
            if spec.fails:
                err = ValueError(f"op {spec.op_id}")
                self.errors[spec.op_id] = err
                raise err
            h = hash((spec.op_id,) + vals) & 0xFFFFFFF
            for w in spec.writes:
                state[w] = h
                self.write_log[w].append(spec.op_id)

        if not spec.is_async:
            return run

        def fn(on_complete):
            def finish():
                try:
                    run()
                except ValueError as e:
                    on_complete(e)
                else:
                    on_complete()
            self.completions.put(finish)     # completed from another thread
        return fn

    def push(self, spec: Spec):
        reads = [self.vars[i] for i in spec.reads]
        writes = [self.vars[i] for i in spec.writes]
        fn = self.body(spec)
        # The lock makes the recorded order the engine's push order.
        with self.push_lock:
            self.order.append(spec)
            if spec.is_async:
                self.eng.push_async(fn, reads, writes, priority=spec.priority)
            else:
                self.eng.push_sync(fn, reads, writes, priority=spec.priority)

    def close(self):
        self.completions.put(None)
        self.completer.join(5)

    def check(self):
        """Replay serially in push order and compare everything observable."""
        state = [0] * NVARS
        log = [[] for _ in range(NVARS)]
        exc = [None] * NVARS            # (seq, op_id of origin)
        seen, globals_ = {}, []
        for seq, spec in enumerate(self.order):
            used = [exc[i] for i in spec.reads + spec.writes if exc[i] is not None]
            if used:
                origin = min(used)
                for w in spec.writes:
                    exc[w] = origin
                continue
            vals = tuple(state[r] for r in spec.reads) + tuple(state[w] for w in spec.writes)
            seen[spec.op_id] = vals
            if spec.fails:
                if spec.writes:
                    for w in spec.writes:
                        exc[w] = (seq, spec.op_id)
                else:
                    globals_.append((seq, spec.op_id))
                continue
            h = hash((spec.op_id,) + vals) & 0xFFFFFFF
            for w in spec.writes:
                state[w] = h
                log[w].append(spec.op_id)
        assert self.seen == seen
        assert self.state == state
        assert self.write_log == log
        for i, v in enumerate(self.vars):
            expected = None if exc[i] is None else self.errors[exc[i][1]]
            assert v.exception is expected, f"var {i}"
        return sorted([e for e in exc if e is not None] + globals_)


def _wait_settled(eng, vs, timeout=30.0):
    """Wait for completion without consuming stored failures (waits would clear them)."""
    deadline = time.monotonic() + timeout
    while eng.get_engine().pending or any(v.pending for v in vs):
        assert time.monotonic() < deadline, "engine did not settle (deadlock?)"
        time.sleep(0.005)


def _run_threads(h: Harness, nthreads: int, per_thread: int, seed: int, fail_rate: float):
    ids = iter(range(10**9))
    id_lock = threading.Lock()

    def worker(tid):
        rng = random.Random(seed * 100 + tid)
        for _ in range(per_thread):
            with id_lock:
                op_id = next(ids)
            h.push(Spec(rng, op_id, fail_rate))
            if rng.random() < 0.01:
                time.sleep(0.001)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "pusher thread hung"


@pytest.mark.parametrize("seed", [0, 1])
def test_random_dag_multithreaded(eng, seed):
    h = Harness(eng)
    try:
        _run_threads(h, nthreads=4, per_thread=800, seed=seed, fail_rate=0.0)
        eng.wait_for_all()
        h.check()
    finally:
        h.close()


def test_random_dag_with_failures(eng):
    h = Harness(eng)
    try:
        _run_threads(h, nthreads=3, per_thread=600, seed=7, fail_rate=0.01)
        _wait_settled(eng, h.vars)
        failures = h.check()
        if failures:
            first_seq, first_id = failures[0]
            with pytest.raises(ValueError) as info:
                eng.wait_for_all()
            assert info.value is h.errors[first_id]
        eng.wait_for_all()                 # all cleared
        assert all(v.exception is None for v in h.vars)
    finally:
        h.close()


@pytest.mark.parametrize("size", [2, 7, 32])
def test_random_dag_bulk(eng, size):
    """Single-threaded (bulk buffers are per thread, flushed in this thread's order)."""
    h = Harness(eng)
    rng = random.Random(size)
    try:
        with eng.bulk(size):
            for op_id in range(1500):
                h.push(Spec(rng, op_id, 0.005))
        _wait_settled(eng, h.vars)
        h.check()
    finally:
        h.close()
        try:
            eng.wait_for_all()
        except ValueError:
            pass
