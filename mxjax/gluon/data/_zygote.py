"""A clean fork server for DataLoader worker processes.

Why not fork the training process: once JAX has run, the process has XLA's thread pools, and
a forked child that compiles or runs anything new dead-locks or aborts (measured with jaxlib
0.10: an op needing a fresh compile hung in every forked child; recreating the backend in the
child aborted on an absl mutex left held by a thread that no longer exists).  Dataset
transforms often call mx ops (``ToTensor``, ``Normalize``, a HybridBlock), so fork is out.

Why not spawn each worker: a fresh interpreter pays the ``import mxjax`` (seconds) per worker
and per DataLoader, and ``multiprocessing``'s spawn/forkserver re-run the user's main script,
which breaks scripts written for Linux's fork without an ``if __name__ == '__main__'`` guard.

So: one server per training process, started on first need with ``python -c`` (never running
``__main__``), imports mxjax (JAX imported, its backend never initialised, no extra threads),
then forks one child per worker on request.  Children start in milliseconds and initialise
their own CPU-only JAX backend on first use.  The server reaps its children, reports their
exit status, and kills them and exits when the training process goes away.
"""
from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from multiprocessing.reduction import recvfds, sendfds
from typing import Any

_lock = threading.Lock()
_server: "_ServerHandle | None" = None


class _ServerHandle:
    """The training process's end of the fork server."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ)
        env['JAX_PLATFORMS'] = 'cpu'  # workers never claim accelerators
        code = 'import sys; from mxjax.gluon.data._zygote import serve; serve(int(sys.argv[1]))'
        self.process = subprocess.Popen(
            [sys.executable, '-c', code, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
            env=env, stdin=subprocess.DEVNULL, start_new_session=False)
        theirs.close()
        self._sock = ours
        self._conn = Connection(os.dup(ours.fileno()))
        self._conn.send(list(sys.path))

    def close(self) -> None:
        """Ask the server to stop (it kills any worker still running) and wait for it."""
        self._conn.close()
        self._sock.close()
        try:
            self.process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self, worker_sock: socket.socket, timeout: float) -> int:
        """Fork a worker that serves on ``worker_sock``; returns its pid."""
        try:
            self._conn.send(('fork',))
            sendfds(self._sock, [worker_sock.fileno()])
            if not self._conn.poll(max(timeout, 60.0)):  # the first answer waits for `import mxjax`
                raise RuntimeError(f"DataLoader: the worker fork server (pid {self.process.pid}) "
                                   f"did not answer within {max(timeout, 60.0)} s")
            reply = self._conn.recv()
        except (EOFError, OSError) as err:
            code = self.process.poll()
            raise RuntimeError(f"DataLoader: the worker fork server (pid {self.process.pid}) is gone "
                               f"(exit status {code}); see its error output above") from err
        if reply[0] != 'forked':
            raise RuntimeError(f"DataLoader: the worker fork server failed: {reply[1]}")
        return reply[1]

    def exit_status(self, pid: int) -> int | None:
        """The wait status of a finished worker, or None while it runs (or is unknown)."""
        self._conn.send(('status', pid))
        return self._conn.recv()[1] if self._conn.poll(5.0) else None


def server() -> _ServerHandle:
    """The fork server, started on first use (and again if it died)."""
    global _server
    with _lock:
        if _server is None or not _server.alive():
            _server = _ServerHandle()
        return _server


@atexit.register
def _stop_server() -> None:
    global _server
    with _lock:
        handle, _server = _server, None
    if handle is not None:
        handle.close()


def describe_status(status: int | None) -> str:
    if status is None:
        return 'exit status unknown'
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f'killed by signal {name}' + (' (out of memory?)' if sig == signal.SIGKILL else '')
    return f'exit code {os.WEXITSTATUS(status)}'


# ----------------------------------------------------------------------------- server process

def serve(fd: int) -> None:
    """Entry point of the fork server process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the training process's business
    sock = socket.socket(fileno=fd)
    conn = Connection(os.dup(fd))
    sys.path[:] = conn.recv()
    import mxjax  # noqa: F401  (the point of the server: children start with it imported)
    from jax._src import xla_bridge
    if getattr(xla_bridge, '_backends', None):  # forking would hand children XLA's threads
        raise RuntimeError("DataLoader fork server: importing mxjax initialised a JAX backend, "
                           "so worker processes could not be forked safely")

    children: dict[int, int | None] = {}
    parent = os.getppid()

    def reap(*_: Any) -> None:
        for pid, status in list(children.items()):
            if status is None:
                try:
                    done, code = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done, code = pid, None
                if done:
                    children[pid] = code

    while True:
        if not conn.poll(1.0):
            reap()
            if os.getppid() != parent:
                break
            continue
        try:
            request = conn.recv()
        except (EOFError, OSError):
            break
        reap()
        if request[0] == 'fork':
            worker_fd = recvfds(sock, 1)[0]
            try:
                pid = os.fork()
            except OSError as err:
                os.close(worker_fd)
                conn.send(('error', str(err)))
                continue
            if pid == 0:
                conn.close()
                sock.close()
                _run_worker(worker_fd)
            os.close(worker_fd)
            children[pid] = None
            conn.send(('forked', pid))
        elif request[0] == 'status':
            reap()
            conn.send(('status', children.get(request[1])))
    for pid, status in children.items():
        if status is None:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    os._exit(0)


def _run_worker(fd: int) -> None:
    from ._worker import worker_main
    code = 0
    try:
        worker_main(fd)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass  # the training process went away mid-reply: nothing left to do
    except BaseException:  # noqa: BLE001  (a worker must never unwind into the server's loop)
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)
