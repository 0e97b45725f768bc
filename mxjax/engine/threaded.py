"""ThreadedEngine: MXNet's dependency engine (src/engine/threaded_engine.cc) in Python.

Each :class:`Var` keeps a FIFO of blocked ops, a count of running readers and a
running-writer flag.  A push registers the op on each of its vars; the op's
``wait`` counter counts vars that did not grant access at once.  When it
reaches zero the op enters the ready queue (highest priority first, then
FIFO), served by a pool of daemon worker threads.  Readers share a var,
writers are exclusive, and the FIFO keeps every var's accesses in push order.

One engine-wide lock guards all scheduling state: with the GIL, finer locks
would only add overhead.  User fns always run without the lock held.  The queues' bookkeeping
(push, grant, complete) is in ``_threaded_sched``; this module holds the workers and the API.
"""
from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from typing import Callable, Iterable

from ._core import (ASYNC, BULK, DELETE, SYNC, WAIT, EngineError, Var, _Op, check_not_deleted,
                    default_num_workers, inherited, normalize_vars)
from ._threaded_sched import _Scheduler

__all__ = ["ThreadedEngine"]


class _AsyncCallback:
    """The ``on_complete`` handed to a push_async fn; may be called from any thread."""

    __slots__ = ("_engine", "_op")

    def __init__(self, engine: ThreadedEngine, op: _Op) -> None:
        self._engine = engine
        self._op = op

    def __call__(self, exc: BaseException | None = None) -> None:
        if exc is not None and not isinstance(exc, BaseException):
            raise TypeError(f"on_complete expects an exception or None, got {type(exc).__name__}")
        op = self._op
        if not self._engine._complete(op, exc, op.seq, True, False):
            raise EngineError("engine: on_complete called twice for one push_async op")


class ThreadedEngine(_Scheduler):
    """Worker-pool engine with per-variable read/write dependency queues (kept by ``_Scheduler``)."""

    kind = "ThreadedEngine"

    def __init__(self, num_workers: int | None = None) -> None:
        super().__init__()
        self.num_workers = int(num_workers) if num_workers else default_num_workers()
        self._lock = threading.Lock()
        self._work_cond = threading.Condition(self._lock)   # workers sleep here
        self._all_cond = threading.Condition(self._lock)    # wait_for_all sleeps here
        self._ready: deque[_Op] = deque()                   # priority-0 ready ops, FIFO
        self._heap: list[tuple[int, int, _Op]] = []         # other priorities
        self._idle = 0            # workers waiting on _work_cond and not yet notified
        self._npending = 0        # scheduled, not completed units
        self._all_waiters = 0
        self._stopping = False
        self._worker_ids: set[int] = set()
        self._threads = []
        for i in range(self.num_workers):
            t = threading.Thread(target=self._worker_loop, name=f"mxjax-engine-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    # -- workers ----------------------------------------------------------------------------
    def _worker_loop(self) -> None:
        self._worker_ids.add(threading.get_ident())
        lock = self._lock
        cond = self._work_cond
        ready = self._ready
        heap = self._heap
        while True:
            with lock:
                while True:
                    # Positive priorities beat the FIFO, negative ones come after it.
                    if heap and (heap[0][0] < 0 or not ready):
                        op = heapq.heappop(heap)[2]
                        break
                    if ready:
                        op = ready.popleft()
                        break
                    if self._stopping:
                        return
                    self._idle += 1
                    cond.wait()
            kind = op.kind
            if kind == SYNC:
                inh = inherited(op.const, op.mutate)
                if inh is not None:
                    self._complete(op, inh[0], inh[1], False, True)
                    continue
                try:
                    op.fn()
                except BaseException as e:  # stored on the op's vars, never kills a worker
                    self._complete(op, e, op.seq, True, True)
                    continue
                self._complete(op, None, 0, False, True)
            elif kind == BULK:
                self._run_bulk(op)
            elif kind == ASYNC:
                self._run_async(op)
            else:
                self._run_delete(op)

    def _run_bulk(self, op: _Op) -> None:
        """Run buffered sub-ops in order; the unit holds all their vars exclusively or shared."""
        for fn, const, mutate, seq in op.fn:
            inh = inherited(const, mutate)
            if inh is None:
                try:
                    fn()
                    continue
                except BaseException as e:
                    exc, exc_seq, originated = e, seq, True
            else:
                exc, exc_seq, originated = inh[0], inh[1], False
            with self._lock:   # later sub-ops must see it, so store now
                self._store_failure(mutate, exc, exc_seq, originated)
        self._complete(op, None, 0, False, True)

    def _run_async(self, op: _Op) -> None:
        inh = inherited(op.const, op.mutate)
        if inh is not None:
            self._complete(op, inh[0], inh[1], False, True)
            return
        try:
            op.fn(_AsyncCallback(self, op))
        except BaseException as e:
            # If on_complete was already called the op is done and its vars may be
            # reused: the failure can only be reported globally (wait_for_all).
            if not self._complete(op, e, op.seq, True, True):
                with self._lock:
                    self._global_errors.append((op.seq, e))

    def _run_delete(self, op: _Op) -> None:
        if op.fn is not None:
            try:
                op.fn()
            except BaseException as e:
                with self._lock:
                    self._global_errors.append((op.seq, e))
        self._complete(op, None, 0, False, True)

    # -- public API --------------------------------------------------------------------------
    def push_sync(self, fn: Callable[[], object], const_vars: Iterable[Var] = (),
                  mutate_vars: Iterable[Var] = (), priority: int = 0,
                  name: str | None = None) -> None:
        """Schedule ``fn()`` after earlier writes of const_vars and earlier uses of mutate_vars."""
        const, mutate = normalize_vars(const_vars, mutate_vars)
        if self._tls.size > 1:
            self._bulk_append(fn, const, mutate, priority)
            return
        self._schedule(_Op(fn, const, mutate, SYNC, priority, name), True, True)

    def push_async(self, fn: Callable[[Callable[..., None]], object],
                   const_vars: Iterable[Var] = (), mutate_vars: Iterable[Var] = (),
                   priority: int = 0, name: str | None = None) -> None:
        """Schedule ``fn(on_complete)``; the op runs until ``on_complete([exc])`` is called."""
        const, mutate = normalize_vars(const_vars, mutate_vars)
        if self._tls.buf:
            self._flush_bulk()
        self._schedule(_Op(fn, const, mutate, ASYNC, priority, name), True, True)

    def push(self, op, priority: int = 0) -> None:
        if op._deleted:
            raise EngineError(f"engine: {op!r} was deleted (delete_operator) and cannot be pushed")
        if not op.is_async and self._tls.size > 1:
            self._bulk_append(op.fn, op.const_vars, op.mutate_vars, priority)
            return
        if self._tls.buf:
            self._flush_bulk()
        kind = ASYNC if op.is_async else SYNC
        self._schedule(_Op(op.fn, op.const_vars, op.mutate_vars, kind, priority, op.name),
                       True, True)

    def delete_variable(self, var: Var, fn: Callable[[], object] | None = None) -> None:
        """Delete ``var`` once its pending ops finish: a write op that runs ``fn`` (if any)."""
        if self._tls.buf:
            self._flush_bulk()
        with self._lock:
            if var._deleted:
                raise EngineError(f"engine: {var!r} was already deleted")
            var._deleted = True   # from here on, pushes using var raise
        self._schedule(_Op(fn, (), (var,), DELETE, 0, "DeleteVariable"), False, True)

    def wait_for_variable(self, var: Var) -> None:
        """Block until every op pushed so far that uses ``var`` completed; re-raise its failure."""
        if self._tls.buf:
            self._flush_bulk()
        if not var.pending:
            if var.exception is None:
                return
            with self._lock:
                exc = self._take_var_failure(var)
        else:
            # A wait is a write-like unit on var: it is granted only after all earlier
            # readers and writers, and is finished inline (no worker round-trip).
            signal = threading.Lock()
            signal.acquire()
            op = _Op(signal, (), (var,), WAIT, 0, "WaitForVar")
            self._schedule(op, False, True)
            signal.acquire()
            exc = op.result
        if exc is not None:
            raise exc

    def wait_for_all(self) -> None:
        """Block until no op is pending, then raise (and clear) the earliest stored failure."""
        if self._tls.buf:
            self._flush_bulk()
        if threading.get_ident() in self._worker_ids:
            raise EngineError("engine: wait_for_all inside an engine op would deadlock")
        with self._lock:
            while self._npending:
                self._all_waiters += 1
                self._all_cond.wait()
                self._all_waiters -= 1
            exc = self._take_all_failures()
        if exc is not None:
            raise exc

    # -- bulk ----------------------------------------------------------------------------------
    def _bulk_append(self, fn: Callable, const: tuple, mutate: tuple, priority: int) -> None:
        """Buffer a sync op; ``pending`` counts it at once so NDArray waits see it."""
        tls = self._tls
        with self._lock:
            if self._stopping:
                raise EngineError("engine: push after shutdown")
            check_not_deleted(const, mutate)
            for v in const:
                v.pending += 1
            for v in mutate:
                v.pending += 1
            seq = next(self._seq)
        buf = tls.buf
        if buf is None:
            buf = tls.buf = []
            tls.prio = priority
        elif priority > tls.prio:
            tls.prio = priority
        buf.append((fn, const, mutate, seq))
        if len(buf) >= tls.size:
            self._flush_bulk()

    def _flush_bulk(self) -> None:
        """Schedule this thread's buffered ops as one unit over the union of their vars."""
        tls = self._tls
        buf = tls.buf
        if not buf:
            return
        tls.buf = None
        if len(buf) == 1:
            fn, const, mutate, _seq = buf[0]
            self._schedule(_Op(fn, const, mutate, SYNC, tls.prio, None), False, False)
            return
        reads: dict[Var, None] = {}
        writes: dict[Var, None] = {}
        for _fn, const, mutate, _seq in buf:
            reads.update(dict.fromkeys(const))
            writes.update(dict.fromkeys(mutate))
        const = tuple([v for v in reads if v not in writes])
        self._schedule(_Op(buf, const, tuple(writes), BULK, tls.prio, "bulk"), False, False)

    # -- lifecycle --------------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Number of scheduled, incomplete units (a bulk counts once; buffered ones not at all)."""
        return self._npending

    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stop the workers, after pending ops finish if ``wait`` (bounded by ``timeout``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while wait and self._npending:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._all_waiters += 1
                self._all_cond.wait(left)
                self._all_waiters -= 1
            self._stopping = True
            self._idle = 0
            self._work_cond.notify_all()
        # join the workers: at interpreter exit a daemon thread still unwinding when finalization starts
        # is killed mid-way, which can abort the whole process (exit status 134)
        me = threading.current_thread()
        for t in self._threads:
            if t is not me:
                t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
