"""``Horovod``: the KVStore backend that hands communication to Horovod (``create('horovod')``).

As in MXNet, creating it imports ``horovod.mxnet`` and calls ``hvd.init()``: without Horovod
installed that raises ``ModuleNotFoundError`` ("No module named 'horovod'").
"""
from __future__ import annotations

from typing import Any

from .base import KVStoreBase

__all__ = ["Horovod"]


@KVStoreBase.register
class Horovod(KVStoreBase):
    """A communication backend using Horovod."""

    def __init__(self) -> None:
        import horovod.mxnet as hvd  # noqa: PLC0415  (optional dependency, imported on use as in MXNet)

        hvd.init()

    @property
    def type(self) -> str:
        return "horovod"

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Broadcast ``value`` from rank 0 into each array of ``out`` (``key`` names the tensor)."""
        import horovod.mxnet as hvd  # noqa: PLC0415

        out = out if isinstance(out, list) else [out]
        for o in out:
            o[:] = hvd.broadcast(tensor=value, root_rank=0, name=str(key), priority=priority)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Allreduce (sum) ``value`` over all processes, in place or into ``out``."""
        import horovod.mxnet as hvd  # noqa: PLC0415

        if out is None:
            value = value if isinstance(value, list) else [value]
            for v in value:
                hvd.allreduce_(v, average=False, name=str(key), priority=priority)
        else:
            out = out if isinstance(out, list) else [out]
            value = value if isinstance(value, list) else [value]
            for o, v in zip(out, value):
                o[:] = hvd.allreduce(v, average=False, name=str(key), priority=priority)

    def set_optimizer(self, optimizer: Any) -> None:
        """Horovod stores no weights: the optimizer runs in the trainer, so this does nothing."""
        return None

    @staticmethod
    def is_capable(capability: str) -> bool:
        """No capability (no optimizer on the store)."""
        return False

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Nothing to save: the store holds no optimizer."""
        return None

    def load_optimizer_states(self, fname: str) -> None:
        """Nothing to load: the store holds no optimizer."""
        return None

    @property
    def rank(self) -> int:
        import horovod.mxnet as hvd  # noqa: PLC0415

        return hvd.rank()

    @property
    def local_rank(self) -> int:
        import horovod.mxnet as hvd  # noqa: PLC0415

        return hvd.local_rank()

    @property
    def num_workers(self) -> int:
        import horovod.mxnet as hvd  # noqa: PLC0415

        return hvd.size()
