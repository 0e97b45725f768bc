"""``gluon.Trainer``: applies an optimizer to a set of Parameters after ``backward``.

All parameters are updated by one compiled call (``Optimizer.update_all`` through the
Updater), which donates the old weight and state buffers.  A gradient that no
backward has written since the last ``step`` is stale (MXNet's ``_fresh_grad``: setting
or zeroing a gradient by hand does not make it fresh): MXNet's error unless
``ignore_stale_grad``, in which case that parameter is skipped.
"""
from __future__ import annotations

from typing import Any

from .. import optimizer as opt
from ..base import MXNetError, MXNetValueError
from .parameter import Parameter

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
        self._kvstore = kvstore

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
        self.allreduce_grads()
        self.update(batch_size, ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum gradients across devices; with one device per parameter there is nothing to sum."""

    def update(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """The update half of ``step`` (after ``allreduce_grads``)."""
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

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
            self._updater(indices, grads, weights)
        for leaf in leaves:
            leaf.fresh = False

    def save_states(self, fname: str) -> None:
        """Save the optimizer's per-parameter states (and the optimizer) to a file."""
        with open(fname, "wb") as f:
            f.write(self._updater.get_states(dump_optimizer=True))

    def load_states(self, fname: str) -> None:
        """Load states saved by ``save_states``."""
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())
        self._optimizer = self._updater.optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
