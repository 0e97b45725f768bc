"""``mx.kvstore`` (also ``mx.kv``): key-value stores for data-parallel training.

``create('local')`` / ``create('device')`` give the single-process :class:`KVStore`;
``KVStoreBase.register`` adds new kinds (``Horovod``, ``BytePS`` and ``TestStore`` are
registered).  Distributed types need MXNet's parameter server, which mxjax does not have:
``create('dist_sync')`` raises ``MXNetError`` saying so.
"""
from .kvstore import *  # noqa: F403
from .base import *  # noqa: F403
from .kvstore_server import *  # noqa: F403
from .byteps import *  # noqa: F403
from .horovod import *  # noqa: F403
from . import base, byteps, horovod, kvstore, kvstore_server  # noqa: F401
