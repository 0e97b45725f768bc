"""Handlers driven by a monitored metric: ``CheckpointHandler`` (periodic, best and resumable
checkpoints) and ``EarlyStoppingHandler``, with the shared choice of what counts as an improvement.

Kept apart from the counting, logging and validation handlers in ``event_handler.py``, which
re-exports these.
"""
from __future__ import annotations

import math
import os
import re
import warnings

from ...metric import CompositeEvalMetric, EvalMetric
from ._event_base import BatchEnd, EpochEnd, TrainBegin, TrainEnd


_HIGHER_IS_BETTER = ("acc", "f1", "mcc", "auc", "pearson", "similarity", "precision", "recall")


def _improvement(handler: str, monitor: EvalMetric, mode: str):
    """(better(a, b), initial best) for ``mode``; 'auto' picks max for accuracy-like metrics, else min.

    MXNet 2.0's 'auto' always picks max (its test ``'acc' or 'f1' in name`` is always true), so a
    monitored loss counts as improving when it grows; mxjax decides by the metric's name instead.
    """
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{handler}: mode {mode!r} is unknown, falling back to 'auto'", RuntimeWarning)
        mode = "auto"
    if mode == "auto":
        name = str(monitor.get()[0]).lower()
        mode = "max" if any(key in name for key in _HIGHER_IS_BETTER) else "min"
    if mode == "max":
        return (lambda a, b: a > b), -math.inf
    return (lambda a, b: a < b), math.inf


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves parameters (``.params``) and trainer states (``.states``) every ``epoch_period`` epochs or
    ``batch_period`` batches as ``{model_prefix}-epoch{E}batch{B}``, keeps the last ``max_checkpoints``,
    optionally the best by ``monitor`` (``{model_prefix}-best``), the hybridized graph
    (``{model_prefix}-symbol.json``), and resumes from the latest checkpoint in ``model_dir``."""

    def __init__(self, model_dir: str, model_prefix: str = "model", monitor: EvalMetric | None = None,
                 verbose: int = 0, save_best: bool = False, mode: str = "auto", epoch_period: int | None = 1,
                 batch_period: int | None = None, max_checkpoints: int = 5, resume_from_checkpoint: bool = False):
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("CheckpointHandler: save_best=True needs a monitor, one of the metric objects in "
                             "estimator.train_metrics or estimator.val_metrics")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir, self.model_prefix = model_dir, model_prefix
        self.monitor, self.verbose, self.save_best = monitor, verbose, save_best
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints: list[str] = []
        self.current_epoch = self.current_batch = 0
        self.trained_epoch = self.trained_batch = -1
        if save_best:
            self.monitor_op, self.best = _improvement("CheckpointHandler", monitor, mode)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = self.current_batch = 0
        if self.save_best:
            self.best = -math.inf if self.monitor_op(1, 0) else math.inf
        if self.resume_from_checkpoint:
            by_epochs = bool(estimator.max_epoch)
            if by_epochs != bool(self.epoch_period) or by_epochs == bool(self.batch_period):
                raise ValueError("CheckpointHandler: to resume, save with the same kind of period the training "
                                 "uses (epoch_period for fit(epochs=...), batch_period for fit(batches=...)), "
                                 "and set the other to None")
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1
        return False

    def _save_checkpoint(self, estimator) -> None:
        epoch, batch = self.current_epoch, self.current_batch
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            epoch += self.trained_epoch + 1
            batch += self.trained_batch + (0 if estimator.max_epoch else 1)
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save(estimator, prefix)
        self.saved_checkpoints.append(prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            self._remove(self.saved_checkpoints.pop(0))
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, saving model at %s "
                                  "with prefix: %s", self.current_epoch, self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            name, value = self.monitor.get()
            if isinstance(value, float) and math.isnan(value):
                warnings.warn(f"CheckpointHandler: skipping save_best because {name} has no value yet; monitor "
                              "one of estimator.train_metrics or estimator.val_metrics", RuntimeWarning)
            elif self.monitor_op(value, self.best):
                if self.verbose > 0:
                    estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to %0.5f, "
                                          "updating best model", self.current_epoch, name, self.best, value)
                self.best = value
                self._save(estimator, f"{self.model_prefix}-best")

    def _save(self, estimator, prefix: str) -> None:
        base = os.path.join(self.model_dir, prefix)
        estimator.net.save_parameters(base + ".params")
        estimator.trainer.save_states(base + ".states")

    def _remove(self, prefix: str) -> None:
        for suffix in (".params", ".states"):
            path = os.path.join(self.model_dir, prefix + suffix)
            if os.path.exists(path):
                os.remove(path)

    def _save_symbol(self, estimator) -> None:
        path = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        traced = getattr(estimator.net, "_traced_graph", None)
        graph = traced() if traced is not None else None
        if graph is not None:
            graph.symbol.save(path)
        else:
            estimator.logger.info("CheckpointHandler: the model graph is not saved to %s; build the model from "
                                  "HybridBlocks and call net.hybridize() to save it", path)

    def _resume(self, estimator) -> None:
        found = _checkpoints(self.model_dir, self.model_prefix)
        if not found:
            estimator.logger.info("CheckpointHandler: no checkpoint found, training from scratch for %s",
                                  f"{estimator.max_epoch} epochs" if estimator.max_epoch
                                  else f"{estimator.max_batch} batches")
            return
        self.trained_epoch = max(epoch for epoch, _ in found)
        self.trained_batch = max(batch for epoch, batch in found if epoch == self.trained_epoch)
        self.saved_checkpoints = [f"{self.model_prefix}-epoch{e}batch{b}" for e, b in sorted(found)]
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(f"CheckpointHandler: the checkpoint in {self.model_dir} already reached epoch "
                                 f"{estimator.max_epoch}; use resume_from_checkpoint=False to train from scratch")
            estimator.max_epoch -= self.trained_epoch + 1
            left = f"{estimator.max_epoch} epochs"
        else:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(f"CheckpointHandler: the checkpoint in {self.model_dir} already reached batch "
                                 f"{estimator.max_batch}; use resume_from_checkpoint=False to train from scratch")
            estimator.max_batch -= self.trained_batch + 1
            left = f"{estimator.max_batch} batches"
        base = os.path.join(self.model_dir, f"{self.model_prefix}-epoch{self.trained_epoch}batch{self.trained_batch}")
        for suffix in (".params", ".states"):
            if not os.path.exists(base + suffix):
                raise FileNotFoundError(f"CheckpointHandler: cannot resume, {base + suffix} does not exist")
        estimator.net.load_parameters(base + ".params", device=estimator.device)
        estimator.trainer.load_states(base + ".states")
        estimator.logger.warning("CheckpointHandler: resumed from epoch %d batch %d, training %s more",
                                 self.trained_epoch, self.trained_batch, left)


def _checkpoints(model_dir: str, prefix: str) -> list[tuple[int, int]]:
    pattern = re.compile(re.escape(prefix) + r"-epoch(\d+)batch(\d+)\.params$")
    found = []
    for name in os.listdir(model_dir):
        match = pattern.match(name)
        if match:
            found.append((int(match.group(1)), int(match.group(2))))
    return found


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    epochs (compared with ``baseline`` first, when given)."""

    def __init__(self, monitor: EvalMetric, min_delta: float = 0, patience: int = 0, mode: str = "auto",
                 baseline: float | None = None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("EarlyStoppingHandler: monitor must be one of the metric objects in "
                             "estimator.train_metrics or estimator.val_metrics")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("EarlyStoppingHandler: a CompositeEvalMetric cannot be monitored; pick one metric")
        self.monitor, self.patience, self.baseline = monitor, patience, baseline
        self.monitor_op, _ = _improvement("EarlyStoppingHandler", monitor, mode)
        self.min_delta = abs(min_delta) if self.monitor_op(1, 0) else -abs(min_delta)
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = -math.inf if self.monitor_op(1, 0) else math.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if isinstance(value, float) and math.isnan(value):
            warnings.warn(f"EarlyStoppingHandler: {name} has no value; monitor one of estimator.train_metrics "
                          "or estimator.val_metrics", RuntimeWarning)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best, self.wait = value, 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch, self.stop_training = self.current_epoch, True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stop_training:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping because %s is not improving",
                                  self.stopped_epoch, self.monitor.get()[0])
