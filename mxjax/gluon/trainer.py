"""``gluon.Trainer``: applies an optimizer to a set of Parameters after ``backward``.

All parameters are updated by one compiled call (``Optimizer.update_all`` through the
Updater), which donates the old weight and state buffers -- unless another live thread has
read those parameters (inference while training: see ``optimizer/_donation.py``).  A gradient that no
backward has written since the last ``step`` is stale (MXNet's ``_fresh_grad``: setting
or zeroing a gradient by hand does not make it fresh): MXNet's error unless
``ignore_stale_grad``, in which case that parameter is skipped.

``kvstore`` given as a type name changes nothing on one process (MXNet uses no kvstore for one
device either).  A KVStore object is used as MXNet uses it: at the first step the parameters are
broadcast into it; when it can run the optimizer (``update_on_kvstore``, default True then), each
step pushes the gradients and pulls the updated weights (one ``pushpull`` of all keys, which a
KVStore turns into one fused update), otherwise the gradients are push-pulled (summed over
workers) before the Trainer's own update.
"""
from __future__ import annotations

import os
from typing import Any

from .. import kvstore as kvs
from .. import optimizer as opt
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from .parameter import Parameter
from .._atomic import atomic_write

__all__ = ["Trainer"]


class Trainer:
    """``Trainer(params, optimizer, optimizer_params=None, kvstore='device', ...)``."""

    def __init__(self, params: Any, optimizer: Any, optimizer_params: dict | None = None,
                 kvstore: Any = "device", compression_params: Any = None,
                 update_on_kvstore: Any = None) -> None:
        if isinstance(params, dict):
            named = list(params.items())
        elif isinstance(params, (list, tuple)):
            named = [(p.name, p) for p in params]
        else:
            named = None
        if named is None or not all(isinstance(p, Parameter) for _, p in named):
            raise MXNetValueError("Trainer: params must be a dict (collect_params()) or a list of Parameters")
        named = [(n, p) for n, p in named if p.grad_req != "null"]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        optimizer_params = dict(optimizer_params or {})
        self._scale = float(optimizer_params.get("rescale_grad", 1.0))
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise MXNetValueError("Trainer: optimizer_params must be None when optimizer is an Optimizer")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updater = opt.get_updater(self._optimizer)
        if kvstore is not None and not isinstance(kvstore, (str, kvs.KVStoreBase)):
            raise MXNetTypeError(f"Trainer: kvstore must be KVStore, str or None, got {type(kvstore).__name__}")
        self._kvstore = kvstore
        self._compression_params = compression_params
        self._update_on_kvstore = update_on_kvstore  # the choice is made at the first step (a KVStore object)
        self._kv_initialized = False  # becomes True once a KVStore object holds the parameters

    @property
    def optimizer(self) -> opt.Optimizer:
        return self._optimizer

    @property
    def learning_rate(self) -> float:
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr: float) -> None:
        self._optimizer.set_learning_rate(lr)

    def step(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """One update: gradients are divided by ``batch_size`` (times ``rescale_grad``)."""
        self._init_kvstore()
        self._allreduce_grads()
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum gradients across devices and workers: through a KVStore object's ``pushpull``; with a
        type name there is one device per parameter and nothing to sum."""
        self._init_kvstore()
        self._check_not_on_kvstore("allreduce_grads")
        self._allreduce_grads()

    def update(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """The update half of ``step`` (after ``allreduce_grads``)."""
        self._init_kvstore()
        self._check_not_on_kvstore("update")
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    def _init_kvstore(self) -> None:
        """For a KVStore object, once: MXNet's ``update_on_kvstore`` choice, then the compression,
        the optimizer (when the store updates) and the parameters (broadcast) go into the store."""
        kv = self._kvstore
        if self._kv_initialized or not isinstance(kv, kvs.KVStoreBase):
            return
        update = self._update_on_kvstore
        if update is None:
            update = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
        if update and not kv.is_capable(kvs.KVStoreBase.OPTIMIZER):
            if self._update_on_kvstore:
                raise MXNetValueError(f"Please set update_on_kvstore=False when training with {type(kv)}")
            update = False
        if self._compression_params:
            kv.set_gradient_compression(self._compression_params)
        if update:
            kv.set_optimizer(self._optimizer)
        for i, param in enumerate(self._params):
            data = param._check()
            kv.broadcast(i, data, out=data)
        self._update_on_kvstore = update
        self._kv_initialized = True

    def _check_not_on_kvstore(self, where: str) -> None:
        if self._kv_initialized and self._update_on_kvstore:
            raise MXNetError(f"{where}() when parameters are updated on kvstore is not supported. Try setting "
                             "`update_on_kvstore` to False when creating trainer.")

    def _allreduce_grads(self) -> None:
        if self._kv_initialized and not self._update_on_kvstore:
            for i, param in enumerate(self._params):
                self._kvstore.pushpull(i, param.grad(), priority=-i)

    def _update(self, ignore_stale_grad: bool) -> None:
        indices, weights, grads, leaves, stale = [], [], [], [], []
        for i, param in enumerate(self._params):
            data = param._check()
            leaf = data._ag  # the variable's autograd entry: its gradient buffer, and was it written since?
            grad = param.grad() if leaf is None or leaf.grad is None else leaf.grad  # (the error when null)
            if not leaf.fresh:
                stale.append(self._names[i])
                continue
            indices.append(i)
            weights.append(data)
            grads.append(grad)
            leaves.append(leaf)
        if stale and not ignore_stale_grad:
            raise MXNetError(
                f"Gradient of Parameter(s) {stale} has not been updated by backward since the last step. This "
                "could mean a bug in your model that made it only use a subset of the Parameters for this "
                "iteration. If you are intentionally only using a subset, call step with "
                "ignore_stale_grad=True to suppress this warning and skip updating these Parameters")
        if indices:
            if self._kv_initialized and self._update_on_kvstore:
                self._kvstore.pushpull(indices, grads, out=weights)
            else:
                self._updater(indices, grads, weights)
        for leaf in leaves:
            leaf.fresh = False

    def save_states(self, fname: str) -> None:
        """Save the optimizer's per-parameter states (and the optimizer) to a file."""
        self._init_kvstore()
        if self._kv_initialized and self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        states = self._updater.get_states(dump_optimizer=True)
        with atomic_write(fname, "wb") as f:
            f.write(states)

    def load_states(self, fname: str) -> None:
        """Load states saved by ``save_states``."""
        self._init_kvstore()
        if self._kv_initialized and self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            self._updater.load_states_file(fname, "Trainer.load_states")
            self._optimizer = self._updater.optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
