"""NaiveEngine: runs every op inline at push time (MXNet's ``MXNET_ENGINE_TYPE=NaiveEngine``).

Useful for debugging: a failing op's traceback points at the pushing code.
Failures are nevertheless *stored* (not raised at push), exactly like the
threaded engine, so both engines pass the same tests.  A re-entrant lock
serializes ops pushed from several threads, which makes their effect equal
to some serial order; ops may push further ops from inside their fn.  A
push_async blocks (holding that lock) until ``on_complete`` is called, so the
completing thread must not push to the engine first.

Chosen by ``MXNET_ENGINE_TYPE`` when mxjax is imported, it also makes XLA:CPU run each program
on the calling thread (:func:`synchronous_xla`), so imperative ops and compiled programs are
synchronous too, as everything is under MXNet's NaiveEngine.
"""
from __future__ import annotations

import threading
import warnings
from typing import Callable, Iterable

import jax

from ._core import (Engine, EngineError, Var, check_not_deleted, inherited,
                    normalize_vars)

__all__ = ["NaiveEngine", "synchronous_xla", "xla_synchronous"]

_ASYNC_FLAG = "jax_cpu_enable_async_dispatch"


def xla_synchronous() -> bool:
    """Whether XLA:CPU runs programs on the calling thread (JAX's ``jax_cpu_enable_async_dispatch`` off)."""
    return not jax.config.values.get(_ASYNC_FLAG, True)


def synchronous_xla() -> bool:
    """Make XLA:CPU run every program on the calling thread (JAX's ``jax_cpu_enable_async_dispatch``
    off), as MXNet's NaiveEngine runs each op at its push.  XLA reads the flag when JAX starts its
    CPU backend, so this works only before then: afterwards it warns and changes nothing.
    Returns whether XLA:CPU now runs programs synchronously.

    Besides debugging (an XLA failure surfaces at the call that made it), this suits code of many
    small ops: an asynchronous XLA:CPU program costs a hand-off to a worker thread and back (tens of
    microseconds on a busy or virtualised machine), while a training step of large programs
    loses the overlap of Python with computation that asynchronous dispatch gives."""
    if xla_synchronous():
        return True
    from jax._src import xla_bridge  # JAX has no public test of whether its backends have started
    started = getattr(xla_bridge, "backends_are_initialized", None)
    if started is None or started():
        warnings.warn("MXNET_ENGINE_TYPE=NaiveEngine: JAX's CPU backend started before mxjax was "
                      "imported, so XLA:CPU keeps dispatching programs asynchronously", RuntimeWarning,
                      stacklevel=2)
        return False
    jax.config.update(_ASYNC_FLAG, False)
    return True


class _NaiveCallback:
    """One-shot ``on_complete`` for push_async; the pusher blocks on ``_done``."""

    __slots__ = ("_guard", "_done", "called", "exc", "late")

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._done = threading.Lock()
        self._done.acquire()
        self.called = False
        self.exc: BaseException | None = None
        self.late: BaseException | None = None

    def __call__(self, exc: BaseException | None = None) -> None:
        if exc is not None and not isinstance(exc, BaseException):
            raise TypeError(f"on_complete expects an exception or None, got {type(exc).__name__}")
        with self._guard:
            if self.called:
                raise EngineError("engine: on_complete called twice for one push_async op")
            self.called = True
            self.exc = exc
        self._done.release()

    def raised(self, exc: BaseException) -> None:
        """fn raised: fail the op, or record a global failure if it already completed."""
        with self._guard:
            if self.called:
                self.late = exc
                return
            self.called = True
            self.exc = exc
        self._done.release()


class NaiveEngine(Engine):
    """Synchronous engine: each push runs to completion before returning."""

    kind = "NaiveEngine"

    def __init__(self) -> None:
        super().__init__()
        # Re-entrant: an op's fn may push (and wait) from inside the engine.
        self._lock = threading.RLock()

    def push_sync(self, fn: Callable[[], object], const_vars: Iterable[Var] = (),
                  mutate_vars: Iterable[Var] = (), priority: int = 0,
                  name: str | None = None) -> None:
        """Run ``fn()`` now; a raised exception is stored on ``mutate_vars``."""
        const, mutate = normalize_vars(const_vars, mutate_vars)
        with self._lock:
            check_not_deleted(const, mutate)
            seq = next(self._seq)
            inh = inherited(const, mutate)
            if inh is None:
                try:
                    fn()
                except BaseException as e:  # stored, not raised: same as threaded
                    self._store_failure(mutate, e, seq, True)
            else:
                self._store_failure(mutate, inh[0], inh[1], False)
            for v in mutate:
                v.version += 1

    def push_async(self, fn: Callable[[Callable[..., None]], object],
                   const_vars: Iterable[Var] = (), mutate_vars: Iterable[Var] = (),
                   priority: int = 0, name: str | None = None) -> None:
        """Call ``fn(on_complete)`` now and block until ``on_complete`` has been called."""
        const, mutate = normalize_vars(const_vars, mutate_vars)
        with self._lock:
            check_not_deleted(const, mutate)
            seq = next(self._seq)
            inh = inherited(const, mutate)
            if inh is not None:
                self._store_failure(mutate, inh[0], inh[1], False)
            else:
                cb = _NaiveCallback()
                try:
                    fn(cb)
                except BaseException as e:
                    cb.raised(e)
                # Holding the engine lock while blocked keeps other threads' ops
                # from overtaking this one (they would break push order).
                cb._done.acquire()
                if cb.exc is not None:
                    self._store_failure(mutate, cb.exc, seq, True)
                if cb.late is not None:  # raised after completing: nowhere else to put it
                    self._global_errors.append((seq, cb.late))
            for v in mutate:
                v.version += 1

    def delete_variable(self, var: Var, fn: Callable[[], object] | None = None) -> None:
        """Mark ``var`` deleted (after running ``fn``); its stored exception is kept for waits."""
        with self._lock:
            if var._deleted:
                raise EngineError(f"engine: {var!r} was already deleted")
            var._deleted = True
            if fn is not None:
                try:
                    fn()
                except BaseException as e:
                    self._global_errors.append((next(self._seq), e))

    def wait_for_variable(self, var: Var) -> None:
        """Nothing is ever pending; re-raise (and clear) the var's stored exception."""
        if var.exception is None:
            return
        with self._lock:
            exc = self._take_var_failure(var)
        if exc is not None:
            raise exc

    def wait_for_all(self) -> None:
        """Raise the earliest stored failure (clearing all of them), if any."""
        with self._lock:
            exc = self._take_all_failures()
        if exc is not None:
            raise exc
