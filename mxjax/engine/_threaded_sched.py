"""The dependency bookkeeping of :class:`ThreadedEngine`: registering an op on its vars in push
order, granting vars to the ops queued behind them, and completing ops (failures stored, waiters woken).

Kept apart from the engine's worker pool and public API (``threaded``) because it is the part
that decides *when* an op may run; the workers only run what it makes ready.
"""
from __future__ import annotations

import heapq
from collections import deque

from ._core import BULK, WAIT, Engine, EngineError, Var, _Op, check_not_deleted


class _Scheduler(Engine):
    """Per-variable read/write queues and the ready queue.  The state (``_lock``, ``_work_cond``,
    ``_all_cond``, ``_ready``, ``_heap``, ``_idle``, ``_npending``, ``_all_waiters``, ``_stopping``)
    is set up by :class:`~mxjax.engine.threaded.ThreadedEngine`, whose workers serve ``_ready``."""

    # -- scheduling (all under self._lock) ------------------------------------------------
    def _schedule(self, op: _Op, check_deleted: bool, count_pending: bool) -> None:
        """Register ``op`` on its vars in push order; make it ready if nothing blocks it."""
        const = op.const
        mutate = op.mutate
        with self._lock:
            if self._stopping:
                raise EngineError("engine: push after shutdown")
            if check_deleted:
                check_not_deleted(const, mutate)
            op.seq = next(self._seq)
            wait = 0
            for v in const:
                if count_pending:
                    v.pending += 1
                # A read waits behind a running writer or anything already queued
                # (the queue head is always a blocked writer or reads behind one).
                if v._writer or v._queue:
                    if v._queue is None:
                        v._queue = deque()
                    v._queue.append((op, False))
                    wait += 1
                else:
                    v._nreaders += 1
            for v in mutate:
                if count_pending:
                    v.pending += 1
                if v._writer or v._nreaders or v._queue:
                    if v._queue is None:
                        v._queue = deque()
                    v._queue.append((op, True))
                    wait += 1
                else:
                    v._writer = True
            op.wait = wait
            self._npending += 1
            if not wait:
                self._make_ready(op)
                if self._idle and op.kind != WAIT:
                    self._idle -= 1
                    self._work_cond.notify()

    def _make_ready(self, op: _Op) -> None:
        if op.kind == WAIT:
            self._finish_wait(op)
        elif op.priority:
            heapq.heappush(self._heap, (-op.priority, op.seq, op))
        else:
            self._ready.append(op)

    def _release(self, v: Var) -> None:
        """Grant ``v`` to the ops at the head of its queue that may now run."""
        q = v._queue
        while q:
            op, is_write = q[0]
            if is_write:
                if v._writer or v._nreaders:
                    return
                q.popleft()
                v._writer = True
                op.wait -= 1
                if not op.wait:
                    self._make_ready(op)
                return                      # a writer is exclusive: stop here
            if v._writer:
                return
            q.popleft()
            v._nreaders += 1
            op.wait -= 1
            if not op.wait:
                self._make_ready(op)

    def _finish(self, op: _Op, exc: BaseException | None, exc_seq: int, originated: bool) -> bool:
        """Complete ``op``: store its failure, release its vars.  False if already completed."""
        if op.state:
            return False
        op.state = 1
        if exc is not None:
            self._store_failure(op.mutate, exc, exc_seq, originated)
        # Bulk units had pending counted per sub-op when buffered.
        count = op.kind != BULK
        for v in op.const:
            if count:
                v.pending -= 1
            v._nreaders -= 1
            if v._queue and not v._nreaders:
                self._release(v)
        bump = op.kind != WAIT
        for v in op.mutate:
            if count:
                v.pending -= 1
            if bump:
                v.version += 1
            v._writer = False
            if v._queue:
                self._release(v)
        if not count:
            for _fn, c, m, _seq in op.fn:
                for v in c:
                    v.pending -= 1
                for v in m:
                    v.pending -= 1
        self._npending -= 1
        if not self._npending and self._all_waiters:
            self._all_cond.notify_all()
        return True

    def _finish_wait(self, op: _Op) -> None:
        """A granted wait op: hand the var's exception to the waiter (clearing it), wake it."""
        op.result = self._take_var_failure(op.mutate[0])
        self._finish(op, None, 0, False)
        op.fn.release()

    def _complete(self, op: _Op, exc: BaseException | None, exc_seq: int, originated: bool,
                  from_worker: bool) -> bool:
        """Lock-taking completion; wakes idle workers for ops it made ready."""
        with self._lock:
            before = len(self._ready) + len(self._heap)
            ok = self._finish(op, exc, exc_seq, originated)
            # A worker completing an op picks up one ready op itself on its next loop.
            extra = len(self._ready) + len(self._heap) - before - from_worker
            if extra > 0 and self._idle:
                n = min(extra, self._idle)
                self._idle -= n
                self._work_cond.notify(n)
        return ok
