"""``KVStoreBase``: the key-value store interface for data-parallel training, its registry, and
``create``.

``create(name)`` first looks ``name`` up in the registry that :meth:`KVStoreBase.register` fills
(``'teststore'``, ``'horovod'``, ``'byteps'`` and user classes, keyed by the lower-cased class
name); otherwise it builds the native :class:`~mxjax.kvstore.KVStore` of that type.
"""
from __future__ import annotations

import warnings
from typing import Any

from .._ndarray import NDArray
from ..base import string_types
from ..profiler import set_kvstore_handle

__all__ = ["create", "KVStoreBase"]


class KVStoreBase:
    """An abstract key-value store interface for data parallel training."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Broadcast ``value`` (of rank 0) to every rank and store it in ``out``."""
        raise NotImplementedError()

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Push ``value`` (summed over its list) and pull the result into ``out`` (or ``value``)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer: Any) -> None:
        """Register an optimizer with the store."""
        raise NotImplementedError()

    OPTIMIZER = "optimizer"

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports ``capability`` (such as ``'optimizer'``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the optimizer (updater) states to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname: str) -> None:
        """Load the optimizer (updater) states from ``fname``."""
        raise NotImplementedError()

    @property
    def type(self) -> str:
        """The type of this kvstore backend."""
        raise NotImplementedError()

    @property
    def rank(self) -> int:
        """The rank of this worker node, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self) -> int:
        """The number of worker nodes."""
        raise NotImplementedError()

    kv_registry: dict[str, type] = {}

    @staticmethod
    def register(klass: type) -> type:
        """Register a KVStore class (a class decorator); ``create(klass.__name__.lower())`` then
        builds it.  Registering a name again warns and replaces the earlier class.

        >>> @mx.kvstore.KVStoreBase.register
        ... class MyKVStore(mx.kvstore.KVStoreBase):
        ...     pass
        >>> type(mx.kv.create('MyKVStore')).__name__
        'MyKVStore'
        """
        assert isinstance(klass, type), f"register expects a class, got {type(klass).__name__}"
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is overriding "
                          f"existing kvstore {old.__module__}.{old.__name__}")
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A key-value store for testing: one worker, no server, no optimizer."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Copy ``value`` into every array of ``out``."""
        out = out if isinstance(out, list) else [out]
        for o in out:
            o[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum a list ``value`` into each of them (or into ``out``); a single array is copied to ``out``."""
        ctx = value[0].context  # as MXNet: for a single array this is its first row's device
        if isinstance(value, NDArray):
            if out is not None:
                out = out if isinstance(out, list) else [out]
                for o in out:
                    o[:] = value
        else:
            reduced_value = sum([val.as_in_context(ctx) for val in value])
            if out is None:
                for v in value:
                    v[:] = reduced_value
            else:
                out = out if isinstance(out, list) else [out]
                for o in out:
                    o[:] = reduced_value

    @staticmethod
    def is_capable(capability: str) -> bool:
        """No optimizer runs in this store: ``'optimizer'`` is False; other capabilities are unknown."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self) -> str:
        return "teststore"

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1


def create(name: str = "local") -> KVStoreBase:
    """Create a KVStore.

    Single process: ``'local'`` and ``'device'`` (and MXNet's ``'local_allreduce_cpu'``,
    ``'local_allreduce_device'``, ``'local_update_cpu'``): values pushed as a list (one per
    device) are summed; with an optimizer set, the store updates its weights.  Registered
    classes (``'teststore'``, ``'horovod'``, ``'byteps'``, your own) are looked up first.
    The distributed types (``'dist_sync'``, ``'dist_device_sync'``, ``'dist_async'``) and
    ``'nccl'`` raise ``MXNetError``: mxjax runs one process and has no parameter server.

    >>> kv = mx.kv.create('local')
    >>> kv.type
    'local'
    """
    if not isinstance(name, string_types):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    kv = _native[0](name)
    set_kvstore_handle(kv.handle)
    return kv


# The native KVStore class; kvstore.py (which builds on this module) registers it on import.
_native: list[type] = []
