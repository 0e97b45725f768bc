"""MXNet's dependency engine (``mx.engine``): schedule Python callables over read/write vars.

Usage::

    from mxjax import engine
    a, b = engine.new_variable(), engine.new_variable()
    engine.push_sync(lambda: fill(a_buf), mutate_vars=[a])
    engine.push_sync(lambda: copy(a_buf, b_buf), const_vars=[a], mutate_vars=[b])
    engine.wait_for_variable(b)          # re-raises a failure of either op

The engine is chosen from ``MXNET_ENGINE_TYPE`` at first use: ``NaiveEngine``
runs ops inline (and, named when mxjax is imported, makes XLA:CPU run programs on the calling
thread: :func:`naive.synchronous_xla`); ``ThreadedEngine``/``ThreadedEnginePerDevice``/
``ThreadedEnginePooled`` (the default) use ``MXNET_CPU_WORKER_NTHREADS``
workers.  Module functions delegate to the current engine (:func:`get_engine`).

Hot-path contract for NDArray: ``if var.pending: wait_for_variable(var)``;
``var.pending`` is the count of incomplete ops using the var (read without
locking).  Stored failures stay on a var until a wait reports them:
``wait_for_variable(var)`` clears that var's, ``wait_for_all()`` clears all.

Caveats: ``wait_for_all`` waits until *no* op is pending (like MXNet), so
pushes from other threads can prolong it; an op's fn may push, but waiting
inside a fn on a var that fn itself holds deadlocks (``wait_for_all`` inside
a worker raises :class:`EngineError` instead).  Bulk buffers are per thread:
buffered ops count in ``var.pending`` at once but are scheduled only when the
buffer fills, the ``bulk`` block exits, or this thread waits/deletes/pushes
async, so other threads' waits do not see them until then.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import threading
from typing import Callable, Iterable, Iterator

from ._core import Engine, EngineError, Operator, Var
from ..base import check_call  # noqa: F401  (MXNet's engine module carries it)
from .naive import NaiveEngine, synchronous_xla
from ..graph import bulk as _bulk
from .threaded import ThreadedEngine

__all__ = [
    "Engine", "EngineError", "NaiveEngine", "Operator", "ThreadedEngine", "Var",
    "bulk", "delete_operator", "delete_variable", "engine_type", "get_engine",
    "new_operator", "new_variable", "push", "push_async", "push_sync", "set_bulk_size",
    "set_engine", "set_imperative_bulk", "wait_for_all", "wait_for_variable",
]

_THREADED_NAMES = ("ThreadedEngine", "ThreadedEnginePerDevice", "ThreadedEnginePooled",
                   "threaded")
_NAIVE_NAMES = ("NaiveEngine", "naive")
_EXIT_WAIT_S = 5.0          # at exit, give pending ops this long to finish

_engine: Engine | None = None
_engine_lock = threading.Lock()
# Set by ``mxjax.profiler`` while it records: ``hook(fn, name, is_async)`` returns ``fn`` wrapped so
# that its run on the engine is timed.  ``None`` (one global test per push) when off.
_profile_hook: Callable | None = None


def _create(kind: str, num_workers: int | None = None) -> Engine:
    if kind in _NAIVE_NAMES:
        return NaiveEngine()
    if kind in _THREADED_NAMES:
        return ThreadedEngine(num_workers)
    raise ValueError(f"unknown engine type {kind!r}; expected one of "
                     f"{_NAIVE_NAMES[0]}, {', '.join(_THREADED_NAMES[:3])}")


def get_engine() -> Engine:
    """The current engine, created from ``MXNET_ENGINE_TYPE`` on first use."""
    eng = _engine
    if eng is not None:
        return eng
    return _init_default()


def _init_default() -> Engine:
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _create(os.environ.get("MXNET_ENGINE_TYPE") or "ThreadedEnginePerDevice")
        return _engine


def set_engine(kind: str | Engine, num_workers: int | None = None) -> Engine:
    """Replace the current engine, after its pending ops finish; its stored failures carry over.

    ``kind`` is an engine name (``"NaiveEngine"``, ``"ThreadedEngine"``, ...) or an
    :class:`Engine` instance.  Meant for tests and start-up configuration.
    """
    global _engine
    new = kind if isinstance(kind, Engine) else _create(kind, num_workers)
    with _engine_lock:
        old, _engine = _engine, new
    if old is not None and old is not new:
        old.shutdown(wait=True)
        with old._lock, new._lock:
            new._failed.update(old._failed)
            new._global_errors.extend(old._global_errors)
    return new


def engine_type() -> str:
    """``"NaiveEngine"`` or ``"ThreadedEngine"``."""
    return get_engine().kind


def new_variable(name: str | None = None) -> Var:
    """A new engine variable."""
    return Var(name)


def push_sync(fn: Callable[[], object], const_vars: Iterable[Var] = (),
              mutate_vars: Iterable[Var] = (), priority: int = 0, name: str | None = None) -> None:
    """Run ``fn()`` after earlier writes of const_vars and earlier uses of mutate_vars."""
    if _profile_hook is not None:
        fn = _profile_hook(fn, name, False)
    (_engine or get_engine()).push_sync(fn, const_vars, mutate_vars, priority, name)


def push_async(fn: Callable[[Callable[..., None]], object], const_vars: Iterable[Var] = (),
               mutate_vars: Iterable[Var] = (), priority: int = 0, name: str | None = None) -> None:
    """Run ``fn(on_complete)``; the op is pending until ``on_complete([exc])`` is called."""
    if _profile_hook is not None:
        fn = _profile_hook(fn, name, True)
    (_engine or get_engine()).push_async(fn, const_vars, mutate_vars, priority, name)


def new_operator(fn: Callable, const_vars: Iterable[Var] = (), mutate_vars: Iterable[Var] = (),
                 is_async: bool = False, name: str | None = None) -> Operator:
    """A reusable operator for :func:`push`."""
    return (_engine or get_engine()).new_operator(fn, const_vars, mutate_vars, is_async, name)


def push(op: Operator, priority: int = 0) -> None:
    """Schedule one run of ``op``."""
    if _profile_hook is not None and not op.deleted:
        op = Operator(_profile_hook(op.fn, op.name, op.is_async), op.const_vars, op.mutate_vars,
                      op.is_async, op.name)
    (_engine or get_engine()).push(op, priority)


def delete_operator(op: Operator) -> None:
    """Forbid further pushes of ``op`` (pushed runs still complete)."""
    (_engine or get_engine()).delete_operator(op)


def delete_variable(var: Var, fn: Callable[[], object] | None = None) -> None:
    """Delete ``var`` after its pending ops (running ``fn`` then); later pushes using it raise."""
    (_engine or get_engine()).delete_variable(var, fn)


def wait_for_variable(var: Var) -> None:
    """Wait for every op pushed so far that uses ``var``; re-raise (and clear) its failure."""
    (_engine or get_engine()).wait_for_variable(var)


def wait_for_all() -> None:
    """Wait for all pushed ops; raise the earliest stored failure and clear all of them."""
    (_engine or get_engine()).wait_for_all()


def set_bulk_size(size: int) -> int:
    """Set this thread's bulk size (ops fused per scheduled unit); return the previous one."""
    return (_engine or get_engine()).set_bulk_size(size)


@contextlib.contextmanager
def bulk(size: int) -> Iterator[None]:
    """Batch up to ``size`` consecutive push_sync ops of this thread, and run this thread's
    imperative ops as programs of up to ``size`` ops (``graph.bulk``); flush both on exit."""
    eng = _engine or get_engine()
    prev = eng.set_bulk_size(size)
    cap = _bulk.set_cap(size)
    try:
        yield
    finally:
        _bulk.set_cap(cap)
        eng.set_bulk_size(prev)


def set_imperative_bulk(enabled: bool | None = None, max_nodes: int | None = None,
                        compile_after: int | None = None) -> dict:
    """Bulk execution of imperative ops (mxjax's; on by default): whether ops are held back and run
    as one program at a read (``MXNET_EXEC_BULK_EXEC_IMPERATIVE``), the most ops held per thread
    (``MXNET_EXEC_BULK_EXEC_MAX_NODE_IMPERATIVE``, default 64), and after how many sightings a
    sequence of ops compiles into one program (``MXNET_EXEC_BULK_EXEC_COMPILE_AFTER``, default 2).
    None keeps a setting; ops held so far run first.  Returns the previous settings as a dict."""
    return _bulk.settings(enabled, max_nodes, compile_after)


if os.environ.get("MXNET_ENGINE_TYPE") in _NAIVE_NAMES:
    synchronous_xla()


@atexit.register
def _shutdown_at_exit() -> None:
    # Workers are daemons, so exit never hangs on them; still let queued work finish briefly.
    eng = _engine
    if eng is not None:
        eng.shutdown(wait=True, timeout=_EXIT_WAIT_S)
