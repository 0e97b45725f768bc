"""``mx.model``: MXNet 2.0's checkpoint helpers (``save_checkpoint``/``load_checkpoint``) and ``BatchEndParam``.

A checkpoint is ``prefix-symbol.json`` (the graph, MXNet's JSON) plus ``prefix-EPOCH.params``
(an ``nd.save`` dict whose keys are ``arg:<name>`` and ``aux:<name>``), the format MXNet
writes, so checkpoints move between MXNet and mxjax in both directions.  The 1.x training
API (``FeedForward``) is gone in MXNet 2.0: use ``gluon`` with a ``Trainer``.
"""
from __future__ import annotations

import logging
from collections import namedtuple
from typing import Any

from . import ndarray as nd
from . import symbol as sym
from .base import RemovedAPIError
from .device import cpu

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def _params_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{int(epoch):04d}.params"


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: dict, aux_params: dict,
                    remove_amp_cast: bool = True) -> None:
    """Write ``prefix-symbol.json`` (unless ``symbol`` is None) and ``prefix-%04d.params`` % epoch."""
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = _params_file(prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix: str, epoch: int) -> tuple[dict, dict]:
    """Read ``prefix-%04d.params`` % epoch into ``(arg_params, aux_params)``."""
    save_dict = nd.load(_params_file(prefix, epoch))
    arg_params: dict = {}
    aux_params: dict = {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", _params_file(prefix, epoch))
        return arg_params, aux_params
    for key, value in save_dict.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict, dict]:
    """Read a checkpoint: ``(symbol, arg_params, aux_params)``."""
    symbol = sym.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


_REMOVED = {
    "FeedForward": "mx.model.FeedForward was removed in MXNet 2.0: build a gluon.HybridBlock and train it "
                   "with gluon.Trainer (gluon.SymbolBlock.imports loads a saved symbol and params)",
    "DataParallelExecutorManager": "mx.model.DataParallelExecutorManager was removed in MXNet 2.0: "
                                   "use gluon.Trainer with a list of devices",
}


def __getattr__(name: str) -> Any:
    if name in _REMOVED:
        raise RemovedAPIError(_REMOVED[name])
    raise AttributeError(f"module 'mxjax.model' has no attribute {name!r}")
