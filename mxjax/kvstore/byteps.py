"""``BytePS``: the KVStore backend that hands communication to BytePS (``create('byteps')``).

As in MXNet, creating it imports ``byteps.mxnet``: without BytePS installed it prints "Did not
find BytePS library. Please install BytePS first" and re-raises the ``ModuleNotFoundError``.
BytePS needs GPU arrays (asserted in ``broadcast`` and ``pushpull``).
"""
from __future__ import annotations

from typing import Any

from .._ndarray import NDArray
from .base import KVStoreBase

__all__ = ["BytePS"]


@KVStoreBase.register
class BytePS(KVStoreBase):
    """BytePS backend for the KVStore interface."""

    def __init__(self) -> None:
        try:
            import byteps.mxnet as bps  # noqa: PLC0415  (optional dependency, imported on use as in MXNet)

            self.handle = bps
        except ImportError:  # ModuleNotFoundError included
            print("Did not find BytePS library. Please install BytePS first")
            raise
        self.handle.init()

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Broadcast ``value`` of rank 0 into ``out`` (non-root ranks push zeros, then push-pull)."""
        assert isinstance(key, (str, int))
        value = value[0] if isinstance(value, list) and len(value) == 1 else value
        assert isinstance(value, NDArray), \
            "The type of value can only be NDArray or list of NDArray which has only one element."
        assert value.context.device_type == "gpu", "Byteps KVStore only support GPU context for broadcast value."
        inplace = value is out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else value is out
        broadcast_value = value if inplace else value.copy()
        root_rank = 0
        if self.rank != root_rank:
            broadcast_value.__imul__(0)
        self.handle.byteps_declare_tensor(str(key))
        self.handle.byteps_push_pull(broadcast_value, version=0, priority=priority, name=str(key),
                                     is_average=False)
        broadcast_value.wait_to_read()  # all workers are synced before training starts
        out = out if isinstance(out, list) else [out]
        for o in out:
            broadcast_value.copyto(o)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum ``value`` over all workers, in place or into ``out``."""
        assert isinstance(key, (str, int))
        value = value[0] if isinstance(value, list) and len(value) == 1 else value
        assert isinstance(value, NDArray), \
            "The type of value can only be NDArray or list of NDArray which has only one element."
        assert value.context.device_type == "gpu", "Byteps KVStore only support GPU context for pushpull value"
        inplace = value is out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else value is out
        pushpull_value = value if inplace else value.copy()
        self.handle.byteps_declare_tensor(str(key))
        self.handle.byteps_push_pull(pushpull_value, version=0, priority=priority, name=str(key),
                                     is_average=False)
        if out is not None:
            out = out if isinstance(out, list) else [out]
            for o in out:
                pushpull_value.copyto(o)

    @staticmethod
    def is_capable(capability: str) -> bool:
        """BytePS servers store no weights: False for every capability."""
        return False

    @property
    def type(self) -> str:
        return "byteps"

    @property
    def local_rank(self) -> int:
        return self.handle.local_rank()

    @property
    def rank(self) -> int:
        return self.handle.rank()

    @property
    def num_workers(self) -> int:
        return self.handle.size()
