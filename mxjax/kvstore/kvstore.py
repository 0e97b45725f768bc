"""``KVStore``: MXNet's native key-value store for one process ('local', 'device', ...).

The store maps int or str keys (one kind per store, as in MXNet) to arrays.  ``push`` sums the
values given for a key (a list: one per device) and, with an updater (``set_optimizer``,
``_set_updater``), calls ``updater(key, merged, stored)`` to update the stored array in place;
without one, the sum replaces the stored value.  ``pull`` copies the stored value into ``out``.

Stored arrays live on the device of the value the key was initialized with (MXNet's 'local'
keeps them in CPU memory; on one process the difference is only where the update runs).
JAX dispatch is already asynchronous, so operations run at once; ``priority`` is accepted and
has nothing to order.
"""
from __future__ import annotations

import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config
from .. import optimizer as opt
from .._atomic import atomic_write
from .._ndarray import NDArray
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from ..ndarray._extra import sparse_error
from . import _compression, base
from .base import KVStoreBase

__all__ = ["KVStore"]

# the single-process types MXNet's KVStoreLocal serves ('device' in the name: reduce on devices)
LOCAL_TYPES = ("local", "device", "local_allreduce_cpu", "local_allreduce_device", "local_update_cpu")

MSG_DIST = (
    "kvstore {name!r} is MXNet's distributed parameter server: it needs processes started by MXNet's "
    "launcher (tools/launch.py, which sets DMLC_ROLE, DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT, "
    "DMLC_NUM_WORKER and DMLC_NUM_SERVER) and an MXNet built with USE_DIST_KVSTORE=1. mxjax runs in "
    "one process and has no parameter server: use 'local' or 'device' on one machine")
MSG_NCCL = ("kvstore {name!r} needs MXNet built with USE_NCCL=1 (multi-GPU NCCL communication), which mxjax "
            "does not have: use 'device', which sums the values of all devices on the first one's device")


def _get_kvstore_server_command_type(command: str) -> int:
    command_types = {"kController": 0, "kSetMultiPrecision": 1, "kStopServer": 2, "kSyncMode": 3,
                     "kSetGradientCompression": 4, "kSetProfilerParams": 5}
    assert command in command_types, "Unknown command type to send to server"
    return command_types[command]


class _UsageError(MXNetError, AssertionError):
    """A misuse MXNet reports with ``assert``: catchable as ``AssertionError`` as there."""


class KVStoreHandle:
    """What MXNet's C handle stands for: the store's type (the store itself lives in Python)."""

    __slots__ = ("type",)

    def __init__(self, type: str) -> None:  # noqa: A002
        self.type = type

    def __repr__(self) -> str:
        return f"KVStoreHandle({self.type!r})"


def _key_kind(where: str, key: Any) -> Any:
    if isinstance(key, str):
        return key
    if isinstance(key, (int, onp.integer)):
        return int(key)
    raise _UsageError(f"{where}: unexpected type for keys: {type(key)} (keys are int or str)")


def _flatten(where: str, key: Any, value: Any, arg: str) -> list[tuple[Any, NDArray]]:
    """``(key, array)`` pairs from MXNet's argument forms: one key with an array or a list of
    arrays (one per device), or a list of keys with one such value each."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            got = f"{len(value)} {arg}s" if isinstance(value, (list, tuple)) else type(value).__name__
            raise _UsageError(f"{where}: {len(key)} keys need a list of {len(key)} {arg}s (one per key), "
                              f"got {got}")
        pairs: list[tuple[Any, NDArray]] = []
        for k, v in zip(key, value, strict=True):
            pairs += _flatten(where, k, v, arg)
        return pairs
    key = _key_kind(where, key)
    if isinstance(value, NDArray):
        return [(key, value)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, NDArray) for v in value):
        return [(key, v) for v in value]
    raise MXNetTypeError(f"{where}: {arg} for key {key!r} must be an NDArray or a list of NDArrays (one per "
                         f"device), got {type(value).__name__}")


def _copy_into(out: NDArray, data: Any) -> None:
    """Write ``data`` into ``out`` as a fresh buffer in ``out``'s dtype and on its device."""
    target = out.to_jax()
    data = jnp.array(data, dtype=target.dtype, copy=True)  # never share the store's buffer
    out._write(jax.device_put(data, next(iter(target.devices()))))


class KVStore(KVStoreBase):
    """A key-value store for synchronization of values over multiple devices (one process)."""

    def __init__(self, handle: KVStoreHandle | str) -> None:
        if isinstance(handle, str):
            handle = KVStoreHandle(handle.lower())
        if not isinstance(handle, KVStoreHandle):
            raise MXNetTypeError(f"KVStore: expected a KVStoreHandle or a type name, got {type(handle).__name__}")
        name = handle.type
        if name not in LOCAL_TYPES:
            if "dist" in name:
                raise MXNetError(MSG_DIST.format(name=name))
            if "nccl" in name:
                raise MXNetError(MSG_NCCL.format(name=name))
            registered = ", ".join(map(repr, KVStoreBase.kv_registry))
            raise MXNetValueError(f"create: unknown kvstore type {name!r}; expected one of "
                                  f"{', '.join(map(repr, LOCAL_TYPES))} or a name registered with "
                                  f"KVStoreBase.register ({registered})")
        self.handle = handle
        self._updater: Any = None
        self._store: dict[Any, Any] = {}      # key -> jax.Array
        self._key_type: type | None = None    # int or str, fixed by the first key used
        self._compression: tuple[str, float] | None = None
        self._residuals: dict[tuple[Any, int], Any] = {}
        self._is_p3 = os.getenv("DMLC_PS_VAN_TYPE", "") == "p3"

    # ------------------------------------------------------------------ keys and values

    def _pairs(self, where: str, key: Any, value: Any, arg: str = "value") -> list[tuple[Any, NDArray]]:
        pairs = _flatten(where, key, value, arg)
        kinds = {type(k) for k, _ in pairs}
        if len(kinds) > 1:
            raise _UsageError(f"{where}: inconsistent types of keys detected (int and str keys in one call)")
        kind = kinds.pop()
        if self._key_type is None:
            self._key_type = kind
        elif kind is not self._key_type:
            raise MXNetTypeError(f"{where}: Mixed key types are not allowed: this store uses "
                                 f"{self._key_type.__name__} keys, got {kind.__name__} key {pairs[0][0]!r}")
        return pairs

    def _stored(self, where: str, key: Any) -> Any:
        stored = self._store.get(key)
        if stored is None:
            raise MXNetError(f"{where}: key {key!r} has not been inited; call kv.init(key, value) first")
        return stored

    def _check_shape(self, where: str, key: Any, array: NDArray, stored: Any, arg: str) -> None:
        if array.shape != tuple(stored.shape):
            raise MXNetValueError(f"{where}: {arg} for key {key!r} has shape {array.shape}, but the stored "
                                  f"value has shape {tuple(stored.shape)}")

    def _merge(self, key: Any, arrays: list[NDArray]) -> Any:
        """Sum the values pushed for ``key`` on the stored value's device (compressing each first)."""
        stored = self._stored("push", key)
        device = next(iter(stored.devices()))
        total = None
        for i, array in enumerate(arrays):
            self._check_shape("push", key, array, stored, "value")
            data = array.to_jax()
            if self._compression is not None:
                kind, threshold = self._compression
                data, self._residuals[key, i] = _compression.quantize(
                    kind, threshold, self._residuals.get((key, i)), data)
            data = jax.device_put(data, device)
            total = data if total is None else total + data
        if total.dtype != stored.dtype:
            total = total.astype(stored.dtype)
        return total

    # ------------------------------------------------------------------ operations

    @_config.with_x64
    def init(self, key: Any, value: Any) -> None:
        """Initialize one key (or a list of keys) with a value each; every key once.

        >>> kv = mx.kv.create('local')
        >>> kv.init('3', mx.nd.ones((2, 3)) * 2)
        >>> a = mx.nd.zeros((2, 3))
        >>> kv.pull('3', out=a)
        >>> a.asnumpy()[0]
        array([2., 2., 2.], dtype=float32)
        """
        for k, array in self._pairs("init", key, value):
            if k in self._store:
                raise MXNetError(f"init: duplicate init of key {k!r}. Please double check if you called "
                                 "kv.init or kv.broadcast with this key multiple times")
            self._store[k] = jnp.array(array.to_jax(), copy=True)

    @_config.with_x64
    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Push values: those of one key (a list, one per device) are summed; with an updater,
        ``updater(key, merged, stored)`` updates the stored value, else the sum replaces it.

        >>> kv.push('3', [mx.nd.ones((2, 3)), mx.nd.ones((2, 3))])
        >>> kv.pull('3', out=a)
        >>> a.asnumpy()[0]
        array([2., 2., 2.], dtype=float32)
        """
        grouped: dict[Any, list[NDArray]] = {}
        for k, array in self._pairs("push", key, value):
            grouped.setdefault(k, []).append(array)
        keys = list(grouped)
        for k in keys:
            self._stored("push", k)
        # MXNet applies int keys in ascending order, str keys in the order they were inited
        if self._key_type is int:
            keys.sort()
        else:
            order = {k: i for i, k in enumerate(self._store)}
            keys.sort(key=order.__getitem__)
        merged = [self._merge(k, grouped[k]) for k in keys]
        if self._updater is None:
            for k, data in zip(keys, merged, strict=True):
                self._store[k] = data if all(a._data is not data for a in grouped[k]) else jnp.array(data, copy=True)
            return
        self._apply_updater(keys, merged)

    def _apply_updater(self, keys: list, merged: list) -> None:
        # the updater sees legacy NDArrays (as MXNet's C callback wraps them) and str keys as bytes
        names = [k.encode() if isinstance(k, str) else k for k in keys]
        grads = [NDArray._wrap(m) for m in merged]
        weights = [NDArray._wrap(self._store[k]) for k in keys]
        if isinstance(self._updater, opt.Updater):  # takes lists: one fused update for all keys
            self._updater(names, grads, weights)
        else:
            for name, grad, weight in zip(names, grads, weights, strict=True):
                self._updater(name, grad, weight)
        for k, weight in zip(keys, weights, strict=True):
            self._store[k] = weight.to_jax()

    @_config.with_x64
    def pull(self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy the stored value of each key into ``out`` (an array, or a list: one per device)."""
        if out is None:
            raise _UsageError("pull: out is required (the array, or list of arrays, to copy the value into)")
        for k, array in self._pairs("pull", key, out, "out"):
            stored = self._stored("pull", k)
            self._check_shape("pull", k, array, stored, "out")
            _copy_into(array, stored)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """``push(key, value)`` then ``pull(key, out)``; without ``out`` the result is written into
        ``value``."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Initialize ``key`` with ``value`` and pull it into ``out`` (each key can be broadcast once)."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None) -> None:
        """MXNet pulls rows of a row_sparse value here; mxjax has dense storage only, so this raises."""
        if out is None or row_ids is None:
            raise _UsageError("row_sparse_pull: out and row_ids are required")
        raise sparse_error("row_sparse_pull", "row_sparse")

    # ------------------------------------------------------------------ optimizer and updater

    def is_capable(self, capability: str) -> bool:
        """``'optimizer'``: whether the store can run an optimizer (True, as MXNet's local store)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return not self._is_p3
        raise ValueError(f"Unknown capability: {capability}")

    def set_optimizer(self, optimizer: opt.Optimizer) -> None:
        """Update stored values with ``optimizer`` on push (``_set_updater(get_updater(optimizer))``).

        >>> kv = mx.kv.create()
        >>> kv.init(3, mx.nd.zeros((2, 2)))
        >>> kv.set_optimizer(mx.optimizer.SGD())
        >>> kv.push(3, mx.nd.ones((2, 2)))
        >>> w = mx.nd.zeros((2, 2)); kv.pull(3, out=w)
        >>> w.asnumpy()[0]
        array([-0.01, -0.01], dtype=float32)
        """
        if not isinstance(optimizer, opt.Optimizer):
            raise MXNetTypeError(f"set_optimizer: expected an mx.optimizer.Optimizer, got {type(optimizer).__name__}")
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater: Any) -> None:
        """Set ``updater(key, input, stored)``, called on push to update ``stored`` in place.

        >>> def update(key, input, stored):
        ...     stored += input * 2
        >>> kv._set_updater(update)
        """
        if not callable(updater):
            raise MXNetTypeError(f"_set_updater: the updater must be callable, got {type(updater).__name__}")
        self._updater = updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the updater's states (and the optimizer, with ``dump_optimizer``) to ``fname``."""
        if self._updater is None:
            raise _UsageError("save_optimizer_states: this kvstore has no optimizer; call set_optimizer first")
        states = self._updater.get_states(dump_optimizer)
        with atomic_write(fname, "wb") as fout:  # a failed save keeps the previous file
            fout.write(states)

    def load_optimizer_states(self, fname: str) -> None:
        """Load states written by :meth:`save_optimizer_states` into the updater."""
        if self._updater is None:
            raise _UsageError("load_optimizer_states: this kvstore has no optimizer; call set_optimizer first")
        self._updater.load_states_file(fname, "KVStore.load_optimizer_states")

    def set_gradient_compression(self, compression_params: dict) -> None:
        """Compress pushed values: ``{'type': '2bit', 'threshold': 0.5}`` or ``{'type': '1bit'}``
        (see ``mxjax.kvstore._compression``).  Only for types with 'device' (or 'dist') in the name."""
        if not isinstance(compression_params, dict):
            raise _UsageError(f"set_gradient_compression: unexpected type for param_dict: "
                              f"{type(compression_params)} (expected a dict such as {{'type': '2bit'}})")
        if "device" not in self.type and "dist" not in self.type:
            raise MXNetError("Gradient compression is not supported for this type of kvstore "
                             f"({self.type!r}); use a 'device' kvstore")
        self._compression = _compression.parse_params(compression_params)
        self._residuals.clear()

    # ------------------------------------------------------------------ one worker

    @property
    def type(self) -> str:
        """The type this store was created with (lower case)."""
        return self.handle.type

    @property
    def rank(self) -> int:
        """This worker's rank: 0, the only worker."""
        return 0

    @property
    def num_workers(self) -> int:
        """The number of workers: 1."""
        return 1

    def _barrier(self) -> None:
        """Wait for all workers: with one worker there is no one to wait for."""

    def _send_command_to_servers(self, head: int, body: str) -> None:
        """Send a command to the server nodes; a local store has none, so (as MXNet's) it does nothing."""
        if not isinstance(head, (int, onp.integer)):
            raise MXNetTypeError(f"_send_command_to_servers: head must be an int command id, got {head!r}")


base._native[:] = [KVStore]  # what create() builds for a name the registry does not know
