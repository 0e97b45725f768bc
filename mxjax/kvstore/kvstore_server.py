"""``KVStoreServer``: the server node of MXNet's distributed kvstore.

In MXNet, importing this module in a process launched as a server or scheduler
(``DMLC_ROLE``) turns that process into one and exits it.  mxjax has no parameter server: a
worker (no ``DMLC_ROLE``, or ``'worker'``) imports it as MXNet does, and a server or scheduler
process gets an ``MXNetError`` saying so instead of running the training script as one more
worker.
"""
from __future__ import annotations

import logging
import os
import pickle
from typing import Any, Callable

from ..base import MXNetError
from .base import create  # noqa: F401  (MXNet's module namespace has it)

__all__ = ["KVStoreServer"]


class KVStoreServer:
    """The key-value store server."""

    def __init__(self, kvstore: Any) -> None:
        self.kvstore = kvstore
        self.handle = kvstore.handle
        self.init_logginig = False  # (MXNet's spelling)

    def _controller(self) -> Callable[[int, Any, Any], None]:
        """The server's command handler: command 0 sets the pickled optimizer on the store."""

        def server_controller(cmd_id: int, cmd_body: Any, _: Any) -> None:
            if not self.init_logginig:
                head = "%(asctime)-15s Server[" + str(self.kvstore.rank) + "] %(message)s"
                logging.basicConfig(level=logging.DEBUG, format=head)
                self.init_logginig = True
            if cmd_id == 0:
                self.kvstore.set_optimizer(pickle.loads(cmd_body))
            else:
                print(f"server {self.kvstore.rank}, unknown command ({cmd_id}, {cmd_body})")

        return server_controller

    def run(self) -> None:
        """Serve commands until stopped.  Only a distributed store has a server loop; for the
        single-process stores (all mxjax has) it returns at once, as MXNet's local store does."""
        return None


def _init_kvstore_server_module() -> None:
    """MXNet starts the server here when this process is not a worker."""
    role = os.environ.get("DMLC_ROLE", "worker")
    if role != "worker":
        raise MXNetError(f"this process was launched as a kvstore {role} (DMLC_ROLE={role!r}), but mxjax has "
                         "no distributed kvstore to serve: launch mxjax training as a single process, "
                         "with kvstore 'local' or 'device'")


_init_kvstore_server_module()
