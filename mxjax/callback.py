"""``mx.callback``: training callbacks that log speed, metrics and progress, and save checkpoints.

Batch-end callbacks receive an ``mx.model.BatchEndParam`` (``epoch``, ``nbatch``,
``eval_metric``, ``locals``); ``eval_metric`` is anything with ``get_name_value()`` and
``reset()`` (``mx.gluon.metric`` metrics).  Messages go to the ``logging`` root logger at
INFO level, worded as MXNet's so log parsers keep working.
"""
from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable

from .model import save_checkpoint

__all__ = ["do_checkpoint", "log_train_metric", "Speedometer", "ProgressBar",
           "LogValidationMetricsCallback", "save_checkpoint"]


def do_checkpoint(prefix: str, period: int = 1) -> Callable:
    """Epoch-end callback ``f(iter_no, sym, arg, aux)`` saving a checkpoint every ``period`` epochs."""
    period = int(max(1, period))

    def callback(iter_no: int, sym: Any, arg: dict, aux: dict) -> None:
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable:
    """Batch-end callback logging the training metric every ``period`` batches."""
    def callback(param: Any) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset()
    return callback


class Speedometer:
    """Batch-end callback logging samples/sec (and the metric) every ``frequent`` batches."""

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        if self.last_count > count:  # a new epoch started
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        if param.eval_metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        else:
            name_value = param.eval_metric.get_name_value()
            values = [item for pair in name_value for item in pair]
            if self.auto_reset:
                param.eval_metric.reset()
                msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(name_value)
                logging.info(msg, param.epoch, count - self.frequent, count, speed, *values)
            else:
                msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(name_value)
                logging.info(msg, param.epoch, count, speed, *values)
        self.tic = time.time()


class ProgressBar:
    """Batch-end callback logging ``[====----] 50%`` for ``nbatch`` out of ``total``."""

    def __init__(self, total: int, length: int = 80) -> None:
        self.bar_len = length
        self.total = total

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        logging.info("[%s] %s%s\r", "=" * filled + "-" * (self.bar_len - filled), percents, "%")


class LogValidationMetricsCallback:
    """Epoch-end callback logging each validation metric."""

    def __call__(self, param: Any) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
