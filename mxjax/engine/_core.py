"""Types and bookkeeping shared by both engines: variables, operators, failure records.

An engine schedules opaque Python callables over read (``const``) and write
(``mutate``) sets of :class:`Var`.  Everything here is engine-agnostic; the
scheduling state a :class:`Var` carries (``_queue``, ``_nreaders``,
``_writer``) is only touched by the threaded engine, under its lock.

Failure rules (identical in both engines):

* an exception raised by an op (or passed to ``on_complete``) is stored on the
  op's mutate vars; an op without mutate vars keeps it as a *global* failure;
* an op that reads or writes a var carrying an exception does not run; it
  inherits the exception (earliest in push order if several) onto its own
  mutate vars;
* the exception stays on a var until a wait reports it; a reported exception
  is cleared everywhere (``wait_for_variable`` clears it from every var that
  inherited it as well, ``wait_for_all`` clears every stored failure), so each
  failure is raised once, as in MXNet 1.9.1 and 2.0.
"""
from __future__ import annotations

import itertools
import os
import threading
from typing import Any, Callable, Iterable

from ..base import MXNetError

__all__ = ["EngineError", "Var", "Operator", "Engine", "default_num_workers"]


class EngineError(MXNetError):
    """Misuse of the engine: a deleted var or operator, double completion, a stopped engine."""


class Var:
    """An engine variable: the unit of dependency tracking (one per NDArray buffer).

    Public, lock-free readable attributes:

    * ``pending``: number of pushed ops using this var that have not completed
      (0 means the data is settled; the NDArray hot path checks ``var.pending``);
    * ``exception``: the stored failure, or ``None``;
    * ``version``: number of completed write ops;
    * ``deleted``: whether :meth:`Engine.delete_variable` was called.
    """

    __slots__ = ("pending", "exception", "version", "name", "_exc_seq", "_deleted",
                 "_queue", "_nreaders", "_writer", "__weakref__")

    def __init__(self, name: str | None = None) -> None:
        self.pending = 0
        self.exception: BaseException | None = None
        self.version = 0
        self.name = name
        self._exc_seq = 0          # push sequence of the op that first raised `exception`
        self._deleted = False
        self._queue = None         # deque of blocked (op, is_write), created lazily
        self._nreaders = 0         # granted, not yet completed readers
        self._writer = False       # a granted writer is running

    @property
    def deleted(self) -> bool:
        return self._deleted

    def __repr__(self) -> str:
        state = "deleted" if self._deleted else f"pending={self.pending}"
        exc = f", exception={self.exception!r}" if self.exception is not None else ""
        return f"<Var {self.name or hex(id(self))} {state}{exc}>"


class Operator:
    """A reusable op template (``new_operator``): fn plus normalized var sets."""

    __slots__ = ("fn", "const_vars", "mutate_vars", "is_async", "name", "_deleted")

    def __init__(self, fn: Callable, const_vars: tuple[Var, ...], mutate_vars: tuple[Var, ...],
                 is_async: bool = False, name: str | None = None) -> None:
        self.fn = fn
        self.const_vars = const_vars
        self.mutate_vars = mutate_vars
        self.is_async = bool(is_async)
        self.name = name
        self._deleted = False

    @property
    def deleted(self) -> bool:
        return self._deleted

    def __repr__(self) -> str:
        return f"<Operator {self.name or getattr(self.fn, '__name__', '?')}>"


# Kinds of scheduled units.  WAIT never reaches a worker (finished inline under the lock).
SYNC, ASYNC, BULK, DELETE, WAIT = 0, 1, 2, 3, 4


class _Op:
    """One pushed unit (MXNet's OprBlock).  ``wait`` counts unmet dependencies."""

    __slots__ = ("fn", "const", "mutate", "kind", "priority", "name", "seq", "wait",
                 "state", "result")

    def __init__(self, fn: Any, const: tuple, mutate: tuple, kind: int, priority: int,
                 name: str | None) -> None:
        self.fn = fn
        self.const = const
        self.mutate = mutate
        self.kind = kind
        self.priority = priority
        self.name = name
        self.seq = 0
        self.wait = 0
        self.state = 0             # 0: pending, 1: completed
        self.result = None         # WAIT: the exception handed to the waiter


def _as_tuple(vs: Iterable[Var] | Var | None) -> tuple:
    if not vs:
        return ()
    if isinstance(vs, Var):
        return (vs,)
    return tuple(vs)


def normalize_vars(const_vars: Iterable[Var] | Var | None,
                   mutate_vars: Iterable[Var] | Var | None) -> tuple[tuple[Var, ...], tuple[Var, ...]]:
    """Dedupe both sets and drop const vars that are also mutated (a write implies the read)."""
    mutate = _as_tuple(mutate_vars)
    if len(mutate) > 1:
        mutate = tuple(dict.fromkeys(mutate))
    const = _as_tuple(const_vars)
    if const:
        if len(const) > 1:
            const = tuple(dict.fromkeys(const))
        if mutate:
            const = tuple([v for v in const if v not in mutate])
    for v in const:
        if not isinstance(v, Var):
            raise TypeError(f"engine const_vars must be Var, got {type(v).__name__}")
    for v in mutate:
        if not isinstance(v, Var):
            raise TypeError(f"engine mutate_vars must be Var, got {type(v).__name__}")
    return const, mutate


def check_not_deleted(const: tuple, mutate: tuple) -> None:
    for v in const:
        if v._deleted:
            raise EngineError(f"engine: {v!r} was deleted (delete_variable) and cannot be used")
    for v in mutate:
        if v._deleted:
            raise EngineError(f"engine: {v!r} was deleted (delete_variable) and cannot be used")


def inherited(const: tuple, mutate: tuple) -> tuple[BaseException, int] | None:
    """The earliest-pushed exception carried by any var the op uses, with its sequence."""
    best = None
    for v in const:
        if v.exception is not None and (best is None or v._exc_seq < best[1]):
            best = (v.exception, v._exc_seq)
    for v in mutate:
        if v.exception is not None and (best is None or v._exc_seq < best[1]):
            best = (v.exception, v._exc_seq)
    return best


def default_num_workers() -> int:
    """``MXNET_CPU_WORKER_NTHREADS`` or max(2, min(4, cpu_count))."""
    env = os.environ.get("MXNET_CPU_WORKER_NTHREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"MXNET_CPU_WORKER_NTHREADS must be an integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"MXNET_CPU_WORKER_NTHREADS must be >= 1, got {n}")
        return n
    return max(2, min(4, os.cpu_count() or 2))


class _ThreadState(threading.local):
    """Per-thread bulk state: bulk size and the buffer of not-yet-scheduled sync ops."""

    size = 0
    buf: list | None = None
    prio = 0


class Engine:
    """Interface and failure bookkeeping common to both engines.

    Subclasses provide ``_lock`` (held while touching failure records) and the
    push/wait methods.  ``_seq`` gives every push a global sequence number,
    used to report failures in push order.
    """

    kind = "Engine"
    _lock: Any

    def __init__(self) -> None:
        self._seq = itertools.count(1)
        self._failed: dict[Var, None] = {}      # vars holding an exception (ordered set)
        self._global_errors: list[tuple[int, BaseException]] = []
        self._tls = _ThreadState()

    # -- variables and operators ------------------------------------------------------
    def new_variable(self, name: str | None = None) -> Var:
        """A fresh variable with no pending ops."""
        return Var(name)

    def new_operator(self, fn: Callable, const_vars: Iterable[Var] = (),
                     mutate_vars: Iterable[Var] = (), is_async: bool = False,
                     name: str | None = None) -> Operator:
        """Pre-normalize an op so it can be pushed repeatedly with :meth:`push`."""
        const, mutate = normalize_vars(const_vars, mutate_vars)
        return Operator(fn, const, mutate, is_async, name)

    def delete_operator(self, op: Operator) -> None:
        """Forbid further pushes of ``op``; already-pushed instances still run."""
        if op._deleted:
            raise EngineError(f"engine: {op!r} was already deleted")
        op._deleted = True

    def push(self, op: Operator, priority: int = 0) -> None:
        """Schedule one instance of an :class:`Operator`."""
        if op._deleted:
            raise EngineError(f"engine: {op!r} was deleted (delete_operator) and cannot be pushed")
        if op.is_async:
            self.push_async(op.fn, op.const_vars, op.mutate_vars, priority, op.name)
        else:
            self.push_sync(op.fn, op.const_vars, op.mutate_vars, priority, op.name)

    # -- bulk ---------------------------------------------------------------------------
    def set_bulk_size(self, size: int) -> int:
        """Set this thread's bulk size (0/1 disables), flush buffered ops, return the old size."""
        size = int(size)
        if size < 0:
            raise ValueError(f"bulk size must be >= 0, got {size}")
        tls = self._tls
        prev = tls.size
        self._flush_bulk()
        tls.size = size
        return prev

    def _flush_bulk(self) -> None:
        """Schedule this thread's buffered ops (no-op for engines that never buffer)."""

    # -- failures (caller holds self._lock) --------------------------------------------
    def _store_failure(self, mutate: tuple, exc: BaseException, seq: int, originated: bool) -> None:
        """Record ``exc`` on the op's mutate vars, or globally when it has none.

        Inherited failures on an op without mutate vars are not re-recorded: they
        still sit on the var they came from.
        """
        if mutate:
            failed = self._failed
            for v in mutate:
                v.exception = exc
                v._exc_seq = seq
                failed[v] = None
        elif originated:
            self._global_errors.append((seq, exc))

    def _take_var_failure(self, var: Var) -> BaseException | None:
        """Pop the exception stored on one var (the wait on it reports it).

        As in MXNet, a failure is reported once: the same exception inherited by
        other vars (ops that read the failed one) or kept globally is cleared too.
        """
        exc = var.exception
        if exc is not None:
            failed = self._failed
            for v in [v for v in failed if v.exception is exc] + [var]:
                v.exception = None
                failed.pop(v, None)
            self._global_errors[:] = [e for e in self._global_errors if e[1] is not exc]
        return exc

    def _take_all_failures(self) -> BaseException | None:
        """Clear every stored failure; return the earliest-pushed one (others noted on it)."""
        entries = [(v._exc_seq, v.exception) for v in self._failed if v.exception is not None]
        entries += self._global_errors
        for v in self._failed:
            v.exception = None
        self._failed.clear()
        self._global_errors.clear()
        if not entries:
            return None
        entries.sort(key=lambda e: e[0])
        first = entries[0][1]
        others: dict[int, BaseException] = {}
        for _, e in entries[1:]:
            if e is not first:
                others.setdefault(id(e), e)
        if others:
            shown = "; ".join(f"{type(e).__name__}: {e}" for e in list(others.values())[:5])
            first.add_note(f"mxjax.engine.wait_for_all: {len(others)} other failure(s) were "
                           f"also cleared: {shown}")
        return first

    @property
    def pending(self) -> int:
        """Number of scheduled, incomplete ops (always 0 for an inline engine)."""
        return 0

    # -- lifecycle ------------------------------------------------------------------------
    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """Release engine resources (threads).  The naive engine has none."""

    def __repr__(self) -> str:
        return f"<{self.kind}>"
