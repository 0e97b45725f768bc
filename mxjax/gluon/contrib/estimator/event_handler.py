"""Event handlers: the pieces of the Estimator's loop that count, update, log, validate and save.

The Estimator calls, for every handler that subclasses the matching event class, ``train_begin``,
``epoch_begin``, ``batch_begin``, ``batch_end``, ``epoch_end`` and ``train_end``, in ascending
``priority``.  A ``batch_end``/``epoch_end`` returning True stops training.  The event classes
live in ``_event_base`` and the metric-monitoring handlers (checkpoints, early stopping) in
``_monitor_handlers``; both are re-exported here.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Any

from ...metric import Loss as LossMetric
from ._event_base import BatchBegin, BatchEnd, EpochBegin, EpochEnd, EventHandler, TrainBegin, TrainEnd
from ._event_base import _check_event_handlers  # noqa: F401  (estimator.py imports it from here)
from ._monitor_handlers import CheckpointHandler, EarlyStoppingHandler
from .utils import _check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler", "CheckpointHandler",
           "EarlyStoppingHandler", "GradientUpdateHandler"]

for _cls in (EventHandler, TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd, CheckpointHandler,
             EarlyStoppingHandler):
    _cls.__module__ = __name__  # public MXNet home of the classes moved to _event_base / _monitor_handlers
del _cls


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``max_epoch`` epochs or ``max_batch`` batches (the estimator's, at train begin)."""

    def __init__(self, max_epoch: int | None = None, max_batch: int | None = None):
        self.max_epoch, self.max_batch = max_epoch, max_batch
        self.current_epoch = self.current_batch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch, self.max_batch = estimator.max_epoch, estimator.max_batch
        self.current_epoch = self.current_batch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        self.stop_training = self.stop_training or self.current_batch == self.max_batch
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        self.stop_training = self.stop_training or self.current_epoch == self.max_epoch
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` every epoch and updates them after every batch (loss metrics with the loss)."""

    def __init__(self, metrics: Any, priority: float = -1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            if isinstance(metric, LossMetric):
                metric.update(0, kwargs["loss"])
            else:
                metric.update(kwargs["label"], kwargs["pred"])
        return False


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` every ``epoch_period`` epochs
    and/or every ``batch_period`` batches."""

    def __init__(self, val_data: Any, eval_fn: Any, epoch_period: int | None = 1, batch_period: int | None = None,
                 priority: float = -1000, event_handlers: Any = None):
        self.val_data, self.eval_fn = val_data, eval_fn
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.priority, self.event_handlers = priority, event_handlers
        self.current_epoch = self.current_batch = 0

    def _validate(self, estimator) -> None:
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis, event_handlers=self.event_handlers)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = self.current_batch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)
        return False


def _metric_text(metrics: list) -> str:
    parts = []
    for metric in metrics:
        names, values = metric.get()
        for name, value in zip(*((names, values) if isinstance(names, list) else ([names], [values]))):
            parts.append(f"{name}: {value:.4f}")
    return ", ".join(parts)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer, per-epoch (``log_interval='epoch'``) or every-k-batch metrics and timings.

    On a terminal (or with ``progress_bar=True``) training epochs also show a tqdm progress bar with
    the loss, the metrics and samples/s; elsewhere (files, CI logs) only the log lines are written.
    ``progress_bar`` is mxjax's addition; MXNet has no bar.
    """

    def __init__(self, log_interval: int | str = "epoch", metrics: Any = None, priority: float = math.inf,
                 progress_bar: bool | None = None):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError(f"LoggingHandler: log_interval must be an integer or 'epoch', got {log_interval!r}")
        self.log_interval = log_interval
        self.metrics = _check_metrics(metrics)
        self.priority = priority
        self.progress_bar = progress_bar
        self.current_epoch = self.batch_index = self.processed_samples = 0
        self.log_interval_time = 0.0
        self._bar = None

    def _training(self) -> bool:
        return any("training" in m.name for m in self.metrics)

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate %.4f ",
                              type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = self.batch_index = self.processed_samples = 0
        self.log_interval_time = 0.0

    def train_end(self, estimator, *args, **kwargs):
        self._close_bar()
        text = _metric_text(self.metrics)
        estimator.logger.info("Train finished using total %ds with %d epochs. %s",
                              time.time() - self.train_start, self.current_epoch, text)

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        self.epoch_samples = 0
        if self._training():
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
            self._open_bar(estimator)
        else:
            estimator.logger.info("Validation Begin")

    def batch_begin(self, estimator, *args, **kwargs):
        self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        samples = _batch_size(kwargs.get("batch"))
        self.processed_samples += samples
        self.epoch_samples += samples
        if self._bar is not None:
            elapsed = max(time.time() - self.epoch_start, 1e-9)
            self._bar.set_postfix_str(f"{_metric_text(self.metrics)}, {self.epoch_samples / elapsed:.1f} samples/s",
                                      refresh=False)
            self._bar.update(1)
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            if self.batch_index % self.log_interval == 0:
                estimator.logger.info("[Epoch %d][Batch %d][Samples %d] time/interval: %.3fs %s",
                                      self.current_epoch, self.batch_index, self.processed_samples,
                                      self.log_interval_time, _metric_text(self.metrics))
                self.log_interval_time = 0.0
        self.batch_index += 1
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        self._close_bar()
        elapsed = time.time() - self.epoch_start
        rate = self.epoch_samples / elapsed if elapsed > 0 else 0.0
        estimator.logger.info("[Epoch %d] Finished in %.3fs, %.1f samples/s, %s",
                              self.current_epoch, elapsed, rate, _metric_text(self.metrics))
        self.current_epoch += 1
        self.batch_index = 0
        return False

    def _open_bar(self, estimator) -> None:
        show = self.progress_bar if self.progress_bar is not None else _is_terminal()
        if not show:
            return
        from tqdm.auto import tqdm
        self._bar = tqdm(total=getattr(estimator, "_batches_per_epoch", None), unit="batch", leave=True,
                         desc=f"Epoch {self.current_epoch}", file=sys.stdout, dynamic_ncols=True)

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _batch_size(batch: Any) -> int:
    if batch is None:
        return 0
    first = batch[0] if isinstance(batch, (list, tuple)) else batch
    shape = getattr(first, "shape", None)
    return int(shape[0]) if shape else 0


class GradientUpdateHandler(BatchEnd):
    """Calls ``trainer.step(batch size)`` after each batch (the batch size summed over devices' losses)."""

    def __init__(self, priority: float = -2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(int(value.shape[0]) for value in losses))
        return False
