"""The DataLoader worker process's side: rebuild the dataset, then build batches on request.

Runs in a child forked by ``_zygote``'s server; batches go back through ``_shared_batch``.
"""
from __future__ import annotations

import os
import pickle
import random
import signal
import socket
import traceback
from multiprocessing.connection import Connection
from multiprocessing.reduction import sendfds

from . import _shared_batch


def _seed_worker(seed: int) -> None:
    import numpy as onp
    random.seed(seed)
    onp.random.seed(seed % (2 ** 32))
    from ... import random as mx_random
    mx_random.seed(seed % (2 ** 31))


def worker_main(fd: int) -> None:
    """Serve tasks on socket ``fd`` until told to stop or the training process goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    conn = Connection(fd)
    sock = socket.socket(fileno=os.dup(fd))
    server = os.getppid()
    import sys
    from ... import _config
    sys_path, payload, seed, index = conn.recv()
    sys.path[:] = sys_path
    try:
        _seed_worker(seed)
        dataset, batchify_fn = pickle.loads(payload)
        del payload
    except BaseException as err:  # noqa: BLE001
        conn.send(('fatal', None, f"{type(err).__name__}: {err}", traceback.format_exc()))
        return
    conn.send(('ready', None))
    while True:
        if not conn.poll(1.0):
            if os.getppid() != server:
                return
            continue
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == 'stop':
            return
        _, task, indices, np_flags = message
        try:
            _config.set_np(*np_flags)
            batch = batchify_fn([dataset[i] for i in indices])
            reply, batch_fd = _shared_batch.pack(batch)
            del batch
        except BaseException as err:  # noqa: BLE001  (reported to the training loop)
            text = traceback.format_exc()
            try:
                blob = pickle.dumps(err, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.loads(blob)
            except Exception:  # noqa: BLE001
                blob = None
            conn.send(('error', task, (type(err).__name__, str(err), text, blob)))
            continue
        conn.send(('batch', task, reply, batch_fd is not None))
        if batch_fd is not None:
            sendfds(sock, [batch_fd])
            os.close(batch_fd)
