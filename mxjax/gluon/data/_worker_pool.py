"""The pool that drives the DataLoader's worker processes (their loop is ``_worker``).

Each worker owns a Unix socket to the training process.  The training process sends the
pickled dataset and batchify function once, then ``(task id, indices)`` requests; the worker
answers each with a batch (see ``_shared_batch``) or with the exception and its traceback.
The pool hands a task to the least busy worker, notices a dead worker at once (its socket
closes) and reports the exit status the fork server saw.
"""
from __future__ import annotations

import os
import pickle
import signal
import socket
import threading
import time
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import recvfds
from typing import Any, Sequence

from ...base import MXNetError
from . import _shared_batch, _zygote

try:  # pickles lambdas and classes of the user's main script by value
    import cloudpickle as _payload_pickler
except ImportError:  # pragma: no cover - cloudpickle is optional
    _payload_pickler = pickle


class WorkerTimeoutError(MXNetError, TimeoutError):
    """A batch did not arrive within the DataLoader's ``timeout``."""


PENDING = object()  # ``poll``'s answer while a batch is still being built


class _RemoteTraceback(Exception):
    """Carries the traceback text of an exception raised in a worker process."""

    def __str__(self) -> str:
        return self.args[0]


def dump_payload(dataset: Any, batchify_fn: Any) -> bytes:
    try:
        return _payload_pickler.dumps((dataset, batchify_fn), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as err:
        raise MXNetError(
            f"DataLoader(num_workers>0): cannot send the dataset {type(dataset).__name__} or "
            f"batchify_fn {batchify_fn!r} to worker processes, they failed to pickle: "
            f"{type(err).__name__}: {err}. Make them picklable (e.g. close open handles in "
            "__getstate__), or use thread_pool=True or num_workers=0.") from err


# ----------------------------------------------------------------------------- training side

class _Worker:
    def __init__(self, index: int, pid: int, sock: socket.socket):
        self.index, self.pid, self.sock = index, pid, sock
        self.conn = Connection(os.dup(sock.fileno()))
        self.tasks: set[int] = set()
        self.ready = False

    def name(self) -> str:
        return f"DataLoader worker {self.index} (pid {self.pid})"

    def close(self) -> None:
        self.conn.close()
        self.sock.close()


class ProcessPool:
    """``num_workers`` worker processes serving one dataset; results are matched by task id."""

    def __init__(self, num_workers: int, payload: bytes, seed: int, timeout: float = 120):
        import sys
        self._server = _zygote.server()
        self._workers: list[_Worker] = []
        self.pids: list[int] = []  # every worker this pool started
        self._done: dict[int, tuple] = {}
        self._owner: dict[int, _Worker] = {}
        self._cancelled: set[int] = set()
        self._next_task = 0
        self.broken: str | None = None
        # the loader's receiving thread and the training thread (close, a new epoch) share
        # the pool: every public call holds this lock
        self.lock = threading.RLock()
        try:
            for index in range(num_workers):
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    pid = self._server.fork(theirs, timeout)
                finally:
                    theirs.close()
                self.pids.append(pid)
                worker = _Worker(index, pid, ours)
                self._workers.append(worker)
                worker.conn.send((list(sys.path), payload, seed + index, index))
        except BaseException:
            self.terminate()
            raise

    def submit(self, indices: Sequence[Any], np_flags: tuple) -> int:
        with self.lock:
            if self.broken:
                raise MXNetError(f"DataLoader: the worker pool is unusable: {self.broken}")
            worker = min(self._workers, key=lambda w: len(w.tasks))
            task = self._next_task
            self._next_task += 1
            try:
                worker.conn.send(('task', task, list(indices), np_flags))
            except OSError:
                self._fail(worker, task)
            worker.tasks.add(task)
            self._owner[task] = worker
            return task

    def cancel(self, tasks: Sequence[int]) -> None:
        """Forget tasks whose results nobody will read (their memory is freed on arrival)."""
        with self.lock:
            for task in tasks:
                done = self._done.pop(task, None)
                if done is not None:
                    if done[0] == 'batch':
                        _shared_batch.discard(done[2])
                elif task in self._owner:
                    self._cancelled.add(task)

    def poll(self, task: int, wait: float) -> Any:
        """The batch of ``task`` if it arrives within ``wait`` s (re-raising a worker's
        exception), else ``PENDING``.  Short waits let the caller notice it should stop."""
        with self.lock:
            if task not in self._done:
                self._pump(wait)
                if task not in self._done:
                    return PENDING
            kind, payload, extra = self._done.pop(task)
        if kind == 'batch':
            return _shared_batch.unpack(payload, extra)
        raise _rebuild_error(payload, extra)

    def timed_out(self, task: int, timeout: float) -> None:
        """Stop the workers and raise: ``task`` took longer than ``timeout`` s."""
        with self.lock:
            worker = self._owner.get(task)
            who = worker.name() if worker else 'a DataLoader worker'
            self.terminate(f"a batch timed out after {timeout} s")
        raise WorkerTimeoutError(
            f"DataLoader: {who} did not deliver a batch within timeout={timeout} s. "
            "A slow transform needs a larger timeout; a worker stuck in a dead lock "
            "or waiting on a lock shared with the training process never finishes. "
            "The workers were stopped; the next epoch starts new ones.")

    def _pump(self, timeout: float) -> None:
        busy = {w.conn: w for w in self._workers if w.tasks or not w.ready}
        if not busy:
            raise MXNetError("DataLoader: waiting for a batch no worker is building; the worker "
                             f"pool was stopped ({self.broken or 'no task pending'})")
        for conn in wait(list(busy), timeout):
            worker = busy[conn]
            try:
                message = conn.recv()
                batch_fd = recvfds(worker.sock, 1)[0] if message[0] == 'batch' and message[3] else None
            except (EOFError, OSError):
                self._fail(worker, None)
            kind, task = message[0], message[1]
            if kind == 'ready':
                worker.ready = True
                continue
            if kind == 'fatal':
                self.terminate(f"{worker.name()} could not load the dataset")
                raise MXNetError(f"{worker.name()} could not rebuild the dataset and batchify_fn "
                                 f"it was sent: {message[2]}\n{message[3]}")
            worker.ready = True
            worker.tasks.discard(task)
            self._owner.pop(task, None)
            if task in self._cancelled:
                self._cancelled.discard(task)
                if batch_fd is not None:
                    _shared_batch.discard(batch_fd)
                continue
            if kind == 'batch':
                self._done[task] = ('batch', message[2], batch_fd)
            else:
                self._done[task] = ('error', worker.name(), message[2])

    def _fail(self, worker: _Worker, task: int | None) -> None:
        status = None
        for _ in range(50):  # the server reaps the child within a poll interval
            status = self._server.exit_status(worker.pid) if self._server.alive() else None
            if status is not None:
                break
            time.sleep(0.02)
        reason = f"{worker.name()} exited unexpectedly ({_zygote.describe_status(status)})"
        self.terminate(reason)
        raise MXNetError(f"DataLoader: {reason} while building a batch. If it was killed for "
                         "memory, lower num_workers, prefetch or batch_size. The workers were "
                         "stopped; the next epoch starts new ones.")

    def terminate(self, reason: str = 'shut down') -> None:
        """Stop all workers now and free every batch not yet read."""
        with self.lock:
            if self.broken is None:
                self.broken = reason
            for _, (kind, _, extra) in list(self._done.items()):
                if kind == 'batch':
                    _shared_batch.discard(extra)
            self._done.clear()
            workers, self._workers = self._workers, []
            for worker in workers:
                try:
                    worker.conn.send(('stop',))
                except OSError:
                    pass
            for worker in workers:
                worker.close()
            deadline = time.monotonic() + 2.0
            for worker in workers:
                while _pid_alive(worker.pid) and time.monotonic() < deadline:
                    time.sleep(0.005)
                if _pid_alive(worker.pid):
                    try:
                        os.kill(worker.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            killed_by = time.monotonic() + 2.0  # SIGKILL is delivered asynchronously: wait until it took effect
            for worker in workers:
                while _pid_alive(worker.pid) and time.monotonic() < killed_by:
                    time.sleep(0.005)


def _pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as f:
            state = f.read().rsplit(b')', 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in (b'Z', b'X')


def _rebuild_error(where: str, info: tuple) -> BaseException:
    type_name, text, tb_text, blob = info
    note = f"raised in {where}; its traceback:\n{tb_text}"
    if blob is not None:
        try:
            err = pickle.loads(blob)
        except Exception:  # noqa: BLE001
            err = None
        if isinstance(err, BaseException):
            err.__cause__ = _RemoteTraceback(note)  # printed above the error, as Pool does
            return err
    return MXNetError(f"{where} raised {type_name}: {text}\n{tb_text}")
